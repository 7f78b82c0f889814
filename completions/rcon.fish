# Profile names from the config file for -s/--server (the first column of `rcon --list-servers`);
# after a comma, the next name of the list, without the names already given.
function __rcon_servers
    set -l value (commandline -ct | string replace -r -- '^(--server=|-s)' '')
    set -l prefix (string match -r -- '^.*,' $value)
    set -l given (string split -- , "$prefix")
    for name in (rcon --list-servers 2>/dev/null | string replace -r '\s.*' '')
        if test -n "$name"; and not contains -- $name $given
            printf '%s\n' "$prefix$name"
        end
    end
end

complete -c rcon -s H -l host -d 'Server host name or address (HOST:PORT too)' -r
complete -c rcon -s P -l port -d 'RCON port [default: 25575]' -r
complete -c rcon -s p -l password -d 'RCON password (ps shows it: prefer the env)' -r
complete -c rcon -l password-file -d 'Read the password from FILE\'s first line' -r -F
complete -c rcon -s s -l server -d 'Use config profile NAME (NAME,NAME: several)' -r -f -a "(__rcon_servers)"
complete -c rcon -l config -d 'Read this config file instead of the default' -r -F
complete -c rcon -l compat -d 'Read the rest of the command line as mcrcon\'s or rcon-cli\'s' -r -f -a "mcrcon\t'Tiiffi\'s mcrcon 0.7.2: every argument is one command, -H -P -p -c -r -s -t -w'
rcon-cli\t'itzg\'s rcon-cli: --host --port --password --config, the words joined into one command'"
complete -c rcon -l install-links -d 'Create mcrcon and rcon-cli in DIR, running rcon, and exit' -r -F
complete -c rcon -s t -l timeout -d 'Limit for login and each answer [default: 10s]' -r
complete -c rcon -l wait -d 'Wait up to DURATION for the server to come up, then run the commands' -r
complete -c rcon -l sentinel -d 'How the end of each answer is found [default: detect]' -r -f -a "detect\t'Use what was learned about the server, else probe it once after login: vanilla\'s split rule, id -2, a positive id, the server\'s own end marker, else a quiet gap'
negative\t'Always an id -2 sentinel, no probe'
positive\t'A positive-id sentinel, for servers that close on ids <= 0'
idle\t'No sentinel: an answer ends after a quiet gap from the command on (--idle-gap)'
auto\t'Vanilla\'s split rule without a probe: no sentinel when the first fragment is under 4096 bytes (one round trip per command)'"
complete -c rcon -l idle-gap -d 'A fixed quiet gap that ends an answer [default: adaptive]' -r
complete -c rcon -l dialect -d 'The server family [default: minecraft]' -r -f -a "minecraft\t'Vanilla Minecraft, Paper, Spigot, Forge: probed end-of-output marker, 1446-byte commands'
source\t'Source engine (CS2, TF2, GMod...): mirrored end-of-output marker, 4086-byte commands'
factorio\t'Factorio: one packet per answer'
palworld\t'Palworld: replies matched whatever their id; output ends after --idle-gap of silence'
battleye\t'BattlEye RCon over UDP (DayZ, Arma 2/3, Arma Reforger); default port 2306'
webrcon\t'Rust\'s WebRCON (JSON over WebSocket); default port 28016'
telnet\t'7 Days to Die\'s telnet console; answers end after --idle-gap; default port 8081'"
complete -c rcon -l ssh -d 'Reach the server through an SSH tunnel (ssh -W HOST:PORT DEST)' -r
complete -c rcon -l ssh-option -d 'An ssh_config option for --ssh (repeatable)' -r
complete -c rcon -l proxy-command -d 'Reach the server through a command, as OpenSSH\'s ProxyCommand' -r
complete -c rcon -l remote-rcon -d 'The program --remote runs on the SSH host [default: rcon]' -r
complete -c rcon -l retry -d 'Try a failed connect again up to N times (files: reconnect mid-way)' -r
complete -c rcon -s c -l command -d 'A command to run (repeatable, in order, before COMMAND)' -r
complete -c rcon -s f -l file -d 'Run the commands in PATH, one per line (repeatable; - is stdin)' -r
complete -c rcon -l delay -d 'Wait this long between commands, e.g. 50ms' -r
complete -c rcon -l macro -d 'Fill $(NAME) in mcfunction macro lines with VALUE (repeatable)' -r
complete -c rcon -l color -d 'When to render § colour codes as ANSI colours' -r -f -a "auto\t'When stdout is a terminal that shows colour, unless NO_COLOR is set, CLICOLOR=0 or TERM=dumb (CLICOLOR_FORCE colours a pipe too)'
always\t'Always'
never\t'Never: codes are stripped'"
complete -c rcon -l target -d 'Run on several servers: NAME=HOST or NAME=HOST:PORT (repeatable)' -r
complete -c rcon -l targets -d 'Read the servers to run on from FILE (NDJSON or CSV; - is stdin)' -r
complete -c rcon -l where -d 'Keep only the --targets rows that match KEY=VALUE' -r
complete -c rcon -l parallel -d 'At most N connections open at once [default: 10000]' -r
complete -c rcon -l poll -d 'With --follow over RCON: how often `list` is asked [default: 5s]' -r
complete -c rcon -l exec -d 'With --follow: run CMD for each event' -r
complete -c rcon -l countdown -d 'Count down DURATION with announcements, then run --then' -r
complete -c rcon -l announce -d 'With --countdown: the command that announces the time left' -r
complete -c rcon -l at -d 'With --countdown: the announcement times, e.g. 5m,1m,10s' -r
complete -c rcon -l then -d 'With --countdown: the command to run when it ends (repeatable)' -r
complete -c rcon -l cancel-announce -d 'With --countdown: the command that announces a cancellation' -r
complete -c rcon -l every -d 'Run the commands again every DURATION until interrupted' -r
complete -c rcon -l if -d 'Run only if the condition holds, e.g. \'players < 5\'' -r
complete -c rcon -l mgmt -d 'Talk to the Minecraft Server Management Protocol at URL' -r
complete -c rcon -l mgmt-cert -d 'With --mgmt: trust this PEM certificate' -r -F
complete -c rcon -l mgmt-fingerprint -d 'With --mgmt: accept only this SHA-256 certificate' -r
complete -c rcon -l mgmt-origin -d 'With --mgmt: send this Origin header' -r
complete -c rcon -l mgmt-secret-file -d 'With --mgmt: the secret\'s file' -r -F
complete -c rcon -l practice-server -d 'Run the practice server in the foreground on ADDR' -r
complete -c rcon -l practice-mode -d 'The practice server\'s mode (see --help)' -r -f -a "vanilla\t''
source\t''
mirror\t''
mirror-trailer8\t''
reject-sentinel\t''
close-nonpositive\t''
factorio\t''
palworld\t''
end-marker\t''
silent-empty\t''
battleye\t''
battleye-lossy\t''
battleye-reforger\t''
webrcon\t''
telnet\t''"
complete -c rcon -l practice-password -d 'The practice server\'s password' -r
complete -c rcon -l practice-read-delay -d 'Delay before each read of the practice server' -r
complete -c rcon -l practice-mgmt -d 'Run the practice management server on ADDR' -r
complete -c rcon -l practice-cert -d 'With --practice-mgmt: PEM certificate for wss://' -r -F
complete -c rcon -l practice-key -d 'With --practice-mgmt: the PEM private key of --practice-cert' -r -F
complete -c rcon -l ping -d 'Show a Minecraft server\'s status (Server List Ping; no password)' -r
complete -c rcon -l query -d 'Ask a server over UDP Query (no password)' -r
complete -c rcon -l no-config -d 'Ignore the config file'
complete -c rcon -l list-servers -d 'List the config file\'s server profiles and exit'
complete -c rcon -l print-config -d 'Print the resolved settings and where each came from, and exit'
complete -c rcon -l forget -d 'Forget what was learned about the server and probe it again'
complete -c rcon -l remote -d 'With --ssh: run rcon on the SSH host and stream the commands to it'
complete -c rcon -l remote-install -d 'With --remote: copy this rcon to the SSH host when it has none usable'
complete -c rcon -l remote-serve -d 'Serve the remote protocol on stdin/stdout (what --remote runs on the SSH host; an editor can drive it too: docs/remote.md)'
complete -c rcon -l resume -d 'Run the same -f file (or stdin) again from after its last answered line'
complete -c rcon -l resend-in-doubt -d 'With --resume or --retry: send the line in doubt again'
complete -c rcon -s i -l interactive -d 'Open the interactive console after the commands and files'
complete -c rcon -l keep-going -d 'Keep going after a failed command; exit non-zero at the end'
complete -c rcon -l echo -d 'Print each command (> COMMAND) before its output'
complete -c rcon -l messages -d 'Also show what a BattlEye, WebRCON or telnet server sends on its own'
complete -c rcon -l json -d 'Print JSON instead of text: one object per command (NDJSON)'
complete -c rcon -s v -l trace -d 'Print every packet sent and received to stderr'
complete -c rcon -l raw -d 'Print output bytes exactly as received'
complete -c rcon -l fix-newlines -d 'Restore line breaks vanilla drops (default on a terminal)'
complete -c rcon -l no-fix-newlines -d 'Never restore line breaks, not even on a terminal'
complete -c rcon -l all -d 'Run the commands on every server profile at once'
complete -c rcon -l group -d 'Print each server\'s output as one block, not as prefixed lines'
complete -c rcon -l follow -d 'Print server events as they happen until interrupted'
complete -c rcon -l demo -d 'Use a built-in practice server (try: rcon --demo help)'
complete -c rcon -l legacy -d 'With --ping: send only the legacy (pre-1.7) ping'
complete -c rcon -l full -d 'With --query: the full stat'
complete -c rcon -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rcon -s V -l version -d 'Print version'
