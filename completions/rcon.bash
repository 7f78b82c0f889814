# Profile names from the config file for -s/--server (the first column of `rcon --list-servers`);
# after a comma, the next name of the list, without the names already given.
_rcon_servers() {
    local cur="$1" prefix="" name names=()
    if [[ "${cur}" == *,* ]]; then
        prefix="${cur%,*},"
        cur="${cur##*,}"
    fi
    while read -r name _; do
        if [[ -n "${name}" && ",${prefix}" != *",${name},"* ]]; then
            names+=("${name}")
        fi
    done < <(rcon --list-servers 2>/dev/null)
    COMPREPLY=($(compgen -P "${prefix}" -W "${names[*]}" -- "${cur}"))
}

_rcon() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="rcon"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        rcon)
            opts="-H -P -p -s -t -c -f -i -v -h -V --host --port --password --password-file --server --config --no-config --list-servers --print-config --timeout --wait --sentinel --idle-gap --forget --learned --dialect --ssh --ssh-option --no-ssh-reuse --proxy-command --remote --remote-rcon --remote-install --remote-serve --retry --command --resume --resend-in-doubt --skip-in-doubt --file --interactive --keep-going --delay --echo --macro --compat --install-links --messages --json --trace --color --raw --fix-newlines --no-fix-newlines --all --target --group --targets --where --parallel --follow --poll --exec --log-level --countdown --announce --at --then --cancel-announce --every --if --mgmt --mgmt-cert --mgmt-fingerprint --mgmt-origin --mgmt-secret-file --demo --practice-server --practice-mode --practice-password --practice-read-delay --practice-mgmt --practice-mods --practice-cert --practice-key --ping --legacy --query --full --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -P)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server)
                    _rcon_servers "${cur}"
                    return 0
                    ;;
                -s)
                    _rcon_servers "${cur}"
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sentinel)
                    COMPREPLY=($(compgen -W "detect negative positive idle auto" -- "${cur}"))
                    return 0
                    ;;
                --idle-gap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dialect)
                    COMPREPLY=($(compgen -W "minecraft source factorio palworld battleye webrcon telnet" -- "${cur}"))
                    return 0
                    ;;
                --ssh)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-option)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --proxy-command)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-rcon)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -f)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --macro)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --compat)
                    COMPREPLY=($(compgen -W "mcrcon rcon-cli" -- "${cur}"))
                    return 0
                    ;;
                --install-links)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --target)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --targets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --where)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-level)
                    COMPREPLY=($(compgen -W "trace debug info warn error fatal" -- "${cur}"))
                    return 0
                    ;;
                --countdown)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --announce)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --at)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --then)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cancel-announce)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --every)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --if)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mgmt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mgmt-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mgmt-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mgmt-origin)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mgmt-secret-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --practice-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --practice-mode)
                    COMPREPLY=($(compgen -W "vanilla source mirror mirror-trailer8 reject-sentinel close-nonpositive factorio palworld end-marker silent-empty battleye battleye-lossy battleye-reforger webrcon telnet" -- "${cur}"))
                    return 0
                    ;;
                --practice-password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --practice-read-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --practice-mgmt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --practice-mods)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --practice-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --practice-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ping)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --query)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _rcon -o nosort -o bashdefault -o default rcon
else
    complete -F _rcon -o bashdefault -o default rcon
fi
