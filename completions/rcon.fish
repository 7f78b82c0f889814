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
complete -c rcon -s t -l timeout -d 'Limit for login and each answer [default: 10s]' -r
complete -c rcon -l wait -d 'Wait up to DURATION for the server to come up' -r
complete -c rcon -l sentinel -d 'How an answer\'s end is found [default: detect]' -r -f -a "detect\t'Use what was learned about the server, else probe it once after login: vanilla\'s split rule, id -2, a positive id, the server\'s own end marker, else a quiet gap'
negative\t'Always an id -2 sentinel, no probe'
positive\t'A positive-id sentinel, for servers that close on ids <= 0'
idle\t'No sentinel: an answer ends after a quiet gap from the command on (--idle-gap)'
auto\t'Vanilla\'s split rule without a probe: no sentinel when the first fragment is under 4096 bytes (one round trip per command)'"
complete -c rcon -l idle-gap -d 'Quiet gap that ends an answer [default: adaptive]' -r
complete -c rcon -l dialect -d 'The server family [default: minecraft]' -r -f -a "minecraft\t'Vanilla Minecraft, Paper, Spigot, Forge: probed end-of-output marker, 1446-byte commands'
source\t'Source engine (CS2, TF2, GMod...): mirrored end-of-output marker, 4086-byte commands'
factorio\t'Factorio: one packet per answer'
palworld\t'Palworld: replies matched whatever their id; output ends after --idle-gap of silence'
battleye\t'BattlEye RCon over UDP (DayZ, Arma 2/3, Arma Reforger); default port 2306'
webrcon\t'Rust\'s WebRCON (JSON over WebSocket); default port 28016'
telnet\t'7 Days to Die\'s telnet console; answers end after --idle-gap; default port 8081'"
complete -c rcon -l ssh -d 'Reach the server through ssh -W HOST:PORT DEST' -r
complete -c rcon -l ssh-option -d 'An ssh_config option for --ssh (repeatable)' -r
complete -c rcon -l proxy-command -d 'Reach the server through a ProxyCommand' -r
complete -c rcon -l remote-rcon -d 'The program --remote runs there [default: rcon]' -r
complete -c rcon -l retry -d 'Retry a failed connect N times (files: mid-way)' -r
complete -c rcon -s c -l command -d 'A command to run (repeatable, before COMMAND)' -r
complete -c rcon -s f -l file -d 'Run the commands in PATH (repeatable; - is stdin)' -r
complete -c rcon -l delay -d 'Wait this long between commands, e.g. 50ms' -r
complete -c rcon -l macro -d 'Fill $(NAME) in macro lines (repeatable)' -r
complete -c rcon -l compat -d 'Read the rest of the line as mcrcon\'s or rcon-cli\'s' -r -f -a "mcrcon\t'Tiiffi\'s mcrcon 0.7.2: every argument is one command, -H -P -p -c -r -s -t -w'
rcon-cli\t'itzg\'s rcon-cli: --host --port --password --config, the words joined into one command'"
complete -c rcon -l install-links -d 'Create mcrcon and rcon-cli in DIR, running rcon' -r -F
complete -c rcon -l color -d 'When to render § colour codes as ANSI colours' -r -f -a "auto\t'When stdout is a terminal that shows colour, unless NO_COLOR is set, CLICOLOR=0 or TERM=dumb (CLICOLOR_FORCE colours a pipe too)'
always\t'Always'
never\t'Never: codes are stripped'"
complete -c rcon -l target -d 'Run on NAME=HOST[:PORT] too (repeatable)' -r
complete -c rcon -l targets -d 'Run on the servers in FILE (NDJSON, CSV; - stdin)' -r
complete -c rcon -l where -d 'Keep only the --targets rows that match KEY=VALUE' -r
complete -c rcon -l parallel -d 'At most N connections open at once [default: 10000]' -r
complete -c rcon -l poll -d 'With --follow over RCON: `list` every DURATION' -r
complete -c rcon -l exec -d 'With --follow: run CMD for each event' -r
complete -c rcon -l log-level -d 'With --follow --mgmt: log lines at LEVEL or above' -r -f -a "trace\t'Everything'
debug\t'Debugging detail'
info\t'The usual lines'
warn\t'Warnings'
error\t'Errors'
fatal\t'Fatal errors only'"
complete -c rcon -l countdown -d 'Count down DURATION, then run --then' -r
complete -c rcon -l announce -d 'With --countdown: the announcement command' -r
complete -c rcon -l at -d 'With --countdown: announce at, e.g. 5m,1m,10s' -r
complete -c rcon -l then -d 'With --countdown: run at the end (repeatable)' -r
complete -c rcon -l cancel-announce -d 'With --countdown: announce a cancellation' -r
complete -c rcon -l every -d 'Run the commands again every DURATION' -r
complete -c rcon -l if -d 'Run only if the condition holds: \'players < 5\'' -r
complete -c rcon -l mgmt -d 'Use the Management Protocol at URL' -r
complete -c rcon -l mgmt-cert -d 'With --mgmt: trust this PEM certificate' -r -F
complete -c rcon -l mgmt-fingerprint -d 'With --mgmt: accept only this SHA-256 cert' -r
complete -c rcon -l mgmt-origin -d 'With --mgmt: send this Origin header' -r
complete -c rcon -l mgmt-secret-file -d 'With --mgmt: the secret\'s file' -r -F
complete -c rcon -l practice-server -d 'Serve the practice server on ADDR' -r
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
complete -c rcon -l practice-read-delay -d 'Delay before each practice server read' -r
complete -c rcon -l practice-mgmt -d 'Serve the practice management server' -r
complete -c rcon -l practice-mods -d 'Mods it plays: enhanced, console' -r
complete -c rcon -l practice-cert -d '--practice-mgmt\'s wss:// certificate' -r -F
complete -c rcon -l practice-key -d 'The private key of --practice-cert' -r -F
complete -c rcon -l ping -d 'Show a Minecraft server\'s status (no password)' -r
complete -c rcon -l query -d 'Ask a server over UDP Query (no password)' -r
complete -c rcon -l no-config -d 'Ignore the config file'
complete -c rcon -l list-servers -d 'List the config file\'s server profiles and exit'
complete -c rcon -l print-config -d 'Print the settings in effect and their sources'
complete -c rcon -l forget -d 'Forget what was learned about the server'
complete -c rcon -l learned -d 'List what is remembered about servers and exit'
complete -c rcon -l no-ssh-reuse -d 'Do not share SSH connections across runs'
complete -c rcon -l remote -d 'With --ssh: run rcon on the SSH host'
complete -c rcon -l remote-install -d 'With --remote: copy this rcon there if needed'
complete -c rcon -l remote-serve -d 'Serve the remote protocol on stdin/stdout (what --remote runs on the SSH host; an editor can drive it too: docs/remote.md)'
complete -c rcon -l resume -d 'Rerun -f FILE or stdin from after its last answer'
complete -c rcon -l resend-in-doubt -d 'With --resume or --retry: resend the line in doubt'
complete -c rcon -l skip-in-doubt -d 'With --resume: take the line in doubt as run'
complete -c rcon -s i -l interactive -d 'Open the console after the commands and files'
complete -c rcon -l keep-going -d 'Go on past a failed command; fail at the end'
complete -c rcon -l echo -d 'Print each command (> COMMAND) before its output'
complete -c rcon -l messages -d 'Also show what BattlEye, WebRCON, telnet send'
complete -c rcon -l json -d 'Print JSON: one object per command (NDJSON)'
complete -c rcon -s v -l trace -d 'Print every packet sent and received to stderr'
complete -c rcon -l raw -d 'Print output bytes exactly as received'
complete -c rcon -l fix-newlines -d 'Restore dropped line breaks (default on a terminal)'
complete -c rcon -l no-fix-newlines -d 'Never restore line breaks, not even on a terminal'
complete -c rcon -l all -d 'Run the commands on every server profile at once'
complete -c rcon -l group -d 'Print each server\'s output as one block'
complete -c rcon -l follow -d 'Print server events as they happen'
complete -c rcon -l demo -d 'Use a practice server (rcon --demo help)'
complete -c rcon -l legacy -d 'With --ping: send only the legacy (pre-1.7) ping'
complete -c rcon -l full -d 'With --query: the full stat'
complete -c rcon -s h -l help -d 'Print this list (--help: with the long texts)'
complete -c rcon -s V -l version -d 'Print rcon\'s version'
