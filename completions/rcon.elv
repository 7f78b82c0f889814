
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
            cand -t 'Limit for login and each answer [default: 10s]'
            cand --timeout 'Limit for login and each answer [default: 10s]'
            cand --wait 'Wait up to DURATION for the server to come up'
            cand --sentinel 'How an answer''s end is found [default: detect]'
            cand --idle-gap 'Quiet gap that ends an answer [default: adaptive]'
            cand --dialect 'The server family [default: minecraft]'
            cand --ssh 'Reach the server through ssh -W HOST:PORT DEST'
            cand --ssh-option 'An ssh_config option for --ssh (repeatable)'
            cand --proxy-command 'Reach the server through a ProxyCommand'
            cand --remote-rcon 'The program --remote runs there [default: rcon]'
            cand --retry 'Retry a failed connect N times (files: mid-way)'
            cand -c 'A command to run (repeatable, before COMMAND)'
            cand --command 'A command to run (repeatable, before COMMAND)'
            cand -f 'Run the commands in PATH (repeatable; - is stdin)'
            cand --file 'Run the commands in PATH (repeatable; - is stdin)'
            cand --delay 'Wait this long between commands, e.g. 50ms'
            cand --macro 'Fill $(NAME) in macro lines (repeatable)'
            cand --compat 'Read the rest of the line as mcrcon''s or rcon-cli''s'
            cand --install-links 'Create mcrcon and rcon-cli in DIR, running rcon'
            cand --color 'When to render § colour codes as ANSI colours'
            cand --target 'Run on NAME=HOST[:PORT] too (repeatable)'
            cand --targets 'Run on the servers in FILE (NDJSON, CSV; - stdin)'
            cand --where 'Keep only the --targets rows that match KEY=VALUE'
            cand --parallel 'At most N connections open at once [default: 10000]'
            cand --poll 'With --follow over RCON: `list` every DURATION'
            cand --exec 'With --follow: run CMD for each event'
            cand --countdown 'Count down DURATION, then run --then'
            cand --announce 'With --countdown: the announcement command'
            cand --at 'With --countdown: announce at, e.g. 5m,1m,10s'
            cand --then 'With --countdown: run at the end (repeatable)'
            cand --cancel-announce 'With --countdown: announce a cancellation'
            cand --every 'Run the commands again every DURATION'
            cand --if 'Run only if the condition holds: ''players < 5'''
            cand --mgmt 'Use the Management Protocol at URL'
            cand --mgmt-cert 'With --mgmt: trust this PEM certificate'
            cand --mgmt-fingerprint 'With --mgmt: accept only this SHA-256 cert'
            cand --mgmt-origin 'With --mgmt: send this Origin header'
            cand --mgmt-secret-file 'With --mgmt: the secret''s file'
            cand --practice-server 'Serve the practice server on ADDR'
            cand --practice-mode 'The practice server''s mode (see --help)'
            cand --practice-password 'The practice server''s password'
            cand --practice-read-delay 'Delay before each practice server read'
            cand --practice-mgmt 'Serve the practice management server'
            cand --practice-cert '--practice-mgmt''s wss:// certificate'
            cand --practice-key 'The private key of --practice-cert'
            cand --ping 'Show a Minecraft server''s status (no password)'
            cand --query 'Ask a server over UDP Query (no password)'
            cand --no-config 'Ignore the config file'
            cand --list-servers 'List the config file''s server profiles and exit'
            cand --print-config 'Print the settings in effect and their sources'
            cand --forget 'Forget what was learned about the server'
            cand --learned 'List what is remembered about servers and exit'
            cand --no-ssh-reuse 'Do not share SSH connections across runs'
            cand --remote 'With --ssh: run rcon on the SSH host'
            cand --remote-install 'With --remote: copy this rcon there if needed'
            cand --remote-serve 'Serve the remote protocol on stdin/stdout (what --remote runs on the SSH host; an editor can drive it too: docs/remote.md)'
            cand --resume 'Rerun -f FILE or stdin from after its last answer'
            cand --resend-in-doubt 'With --resume or --retry: resend the line in doubt'
            cand --skip-in-doubt 'With --resume: take the line in doubt as run'
            cand -i 'Open the console after the commands and files'
            cand --interactive 'Open the console after the commands and files'
            cand --keep-going 'Go on past a failed command; fail at the end'
            cand --echo 'Print each command (> COMMAND) before its output'
            cand --messages 'Also show what BattlEye, WebRCON, telnet send'
            cand --json 'Print JSON: one object per command (NDJSON)'
            cand -v 'Print every packet sent and received to stderr'
            cand --trace 'Print every packet sent and received to stderr'
            cand --raw 'Print output bytes exactly as received'
            cand --fix-newlines 'Restore dropped line breaks (default on a terminal)'
            cand --no-fix-newlines 'Never restore line breaks, not even on a terminal'
            cand --all 'Run the commands on every server profile at once'
            cand --group 'Print each server''s output as one block'
            cand --follow 'Print server events as they happen'
            cand --demo 'Use a practice server (rcon --demo help)'
            cand --legacy 'With --ping: send only the legacy (pre-1.7) ping'
            cand --full 'With --query: the full stat'
            cand -h 'Print this list (--help: with the long texts)'
            cand --help 'Print this list (--help: with the long texts)'
            cand -V 'Print rcon''s version'
            cand --version 'Print rcon''s version'
        }
    ]
    $completions[$command]
}
