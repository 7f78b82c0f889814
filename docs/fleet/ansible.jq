# An Ansible inventory as rcon --targets rows. Feed it `ansible-inventory --list`.
#
# Every host of every group becomes one row, its groups (but "all" and "ungrouped") its tags.
# Host variables used: ansible_host (else the inventory name), rcon_port (else 25575),
# rcon_password_file, rcon_password_env (a variable's name; never the password itself),
# rcon_dialect, and rcon_ssh (an SSH destination to tunnel through, e.g. admin@bastion).
(._meta.hostvars // {}) as $vars
| [to_entries[]
    | select(.key != "_meta")
    | .key as $group
    | (.value.hosts // [])[]
    | {host: ., group: $group}] as $members
| ([$members[].host] + ($vars | keys) | unique)[] as $h
| ($vars[$h] // {}) as $v
| {
    name: $h,
    host: ($v.ansible_host // $h),
    port: ($v.rcon_port // 25575),
    tags: [$members[] | select(.host == $h) | .group | select(. != "all" and . != "ungrouped")]
  }
  + (if $v.rcon_password_file then {password_file: $v.rcon_password_file} else {} end)
  + (if $v.rcon_password_env then {password_env: $v.rcon_password_env} else {} end)
  + (if $v.rcon_dialect then {dialect: $v.rcon_dialect} else {} end)
  + (if $v.rcon_ssh then {ssh: $v.rcon_ssh} else {} end)
