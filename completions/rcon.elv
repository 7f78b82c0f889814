
use builtin;
use str;

set edit:completion:arg-completer[rcon] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'rcon'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'rcon'= {
            cand -H 'Server host name or address (HOST:PORT too)'
            cand --host 'Server host name or address (HOST:PORT too)'
            cand -P 'RCON port [default: 25575]'
            cand --port 'RCON port [default: 25575]'
            cand -p 'RCON password (ps shows it: prefer the env)'
            cand --password 'RCON password (ps shows it: prefer the env)'
            cand --password-file 'Read the password from FILE''s first line'
            cand -s 'Use config profile NAME (NAME,NAME: several)'
            cand --server 'Use config profile NAME (NAME,NAME: several)'
            cand --config 'Read this config file instead of the default'
            cand --compat 'Read the rest of the command line as mcrcon''s or rcon-cli''s'
            cand --install-links 'Create mcrcon and rcon-cli in DIR, running rcon, and exit'
            cand -t 'Limit for login and each answer [default: 10s]'
            cand --timeout 'Limit for login and each answer [default: 10s]'
            cand --wait 'Wait up to DURATION for the server to come up, then run the commands'
            cand --sentinel 'How the end of each answer is found [default: detect]'
            cand --idle-gap 'A fixed quiet gap that ends an answer [default: adaptive]'
            cand --dialect 'The server family [default: minecraft]'
            cand --ssh 'Reach the server through an SSH tunnel (ssh -W HOST:PORT DEST)'
            cand --ssh-option 'An ssh_config option for --ssh (repeatable)'
            cand --proxy-command 'Reach the server through a command, as OpenSSH''s ProxyCommand'
            cand --remote-rcon 'The program --remote runs on the SSH host [default: rcon]'
            cand --retry 'Try a failed connect again up to N times (files: reconnect mid-way)'
            cand -c 'A command to run (repeatable, in order, before COMMAND)'
            cand --command 'A command to run (repeatable, in order, before COMMAND)'
            cand -f 'Run the commands in PATH, one per line (repeatable; - is stdin)'
            cand --file 'Run the commands in PATH, one per line (repeatable; - is stdin)'
            cand --delay 'Wait this long between commands, e.g. 50ms'
            cand --macro 'Fill $(NAME) in mcfunction macro lines with VALUE (repeatable)'
            cand --color 'When to render § colour codes as ANSI colours'
            cand --target 'Run on several servers: NAME=HOST or NAME=HOST:PORT (repeatable)'
            cand --targets 'Read the servers to run on from FILE (NDJSON or CSV; - is stdin)'
            cand --where 'Keep only the --targets rows that match KEY=VALUE'
            cand --parallel 'At most N connections open at once [default: 10000]'
            cand --poll 'With --follow over RCON: how often `list` is asked [default: 5s]'
            cand --exec 'With --follow: run CMD for each event'
            cand --countdown 'Count down DURATION with announcements, then run --then'
            cand --announce 'With --countdown: the command that announces the time left'
            cand --at 'With --countdown: the announcement times, e.g. 5m,1m,10s'
            cand --then 'With --countdown: the command to run when it ends (repeatable)'
            cand --cancel-announce 'With --countdown: the command that announces a cancellation'
            cand --every 'Run the commands again every DURATION until interrupted'
            cand --if 'Run only if the condition holds, e.g. ''players < 5'''
            cand --mgmt 'Talk to the Minecraft Server Management Protocol at URL'
            cand --mgmt-cert 'With --mgmt: trust this PEM certificate'
            cand --mgmt-fingerprint 'With --mgmt: accept only this SHA-256 certificate'
            cand --mgmt-origin 'With --mgmt: send this Origin header'
            cand --mgmt-secret-file 'With --mgmt: the secret''s file'
            cand --practice-server 'Run the practice server in the foreground on ADDR'
            cand --practice-mode 'The practice server''s mode (see --help)'
            cand --practice-password 'The practice server''s password'
            cand --practice-read-delay 'Delay before each read of the practice server'
            cand --practice-mgmt 'Run the practice management server on ADDR'
            cand --practice-cert 'With --practice-mgmt: PEM certificate for wss://'
            cand --practice-key 'With --practice-mgmt: the PEM private key of --practice-cert'
            cand --ping 'Show a Minecraft server''s status (Server List Ping; no password)'
            cand --query 'Ask a server over UDP Query (no password)'
            cand --no-config 'Ignore the config file'
            cand --list-servers 'List the config file''s server profiles and exit'
            cand --print-config 'Print the resolved settings and where each came from, and exit'
            cand --forget 'Forget what was learned about the server and probe it again'
            cand --remote 'With --ssh: run rcon on the SSH host and stream the commands to it'
            cand --remote-install 'With --remote: copy this rcon to the SSH host when it has none usable'
            cand --remote-serve 'Serve the remote protocol on stdin/stdout (what --remote runs on the SSH host; an editor can drive it too: docs/remote.md)'
            cand --resume 'Run the same -f file (or stdin) again from after its last answered line'
            cand --resend-in-doubt 'With --resume or --retry: send the line in doubt again'
            cand -i 'Open the interactive console after the commands and files'
            cand --interactive 'Open the interactive console after the commands and files'
            cand --keep-going 'Keep going after a failed command; exit non-zero at the end'
            cand --echo 'Print each command (> COMMAND) before its output'
            cand --messages 'Also show what a BattlEye, WebRCON or telnet server sends on its own'
            cand --json 'Print JSON instead of text: one object per command (NDJSON)'
            cand -v 'Print every packet sent and received to stderr'
            cand --trace 'Print every packet sent and received to stderr'
            cand --raw 'Print output bytes exactly as received'
            cand --fix-newlines 'Restore line breaks vanilla drops (default on a terminal)'
            cand --no-fix-newlines 'Never restore line breaks, not even on a terminal'
            cand --all 'Run the commands on every server profile at once'
            cand --group 'Print each server''s output as one block, not as prefixed lines'
            cand --follow 'Print server events as they happen until interrupted'
            cand --demo 'Use a built-in practice server (try: rcon --demo help)'
            cand --legacy 'With --ping: send only the legacy (pre-1.7) ping'
            cand --full 'With --query: the full stat'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
