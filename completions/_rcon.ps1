
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'rcon' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'rcon'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'rcon' {
            [CompletionResult]::new('-H', '-H ', [CompletionResultType]::ParameterName, 'Server host name or address; HOST:PORT and [IPv6]:PORT are accepted')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Server host name or address; HOST:PORT and [IPv6]:PORT are accepted')
            [CompletionResult]::new('-P', '-P ', [CompletionResultType]::ParameterName, 'RCON port [default: 25575]')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'RCON port [default: 25575]')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'RCON password. Warning: arguments are visible to other users of this machine (ps); prefer RCON_PASSWORD or a password file')
            [CompletionResult]::new('--password', '--password', [CompletionResultType]::ParameterName, 'RCON password. Warning: arguments are visible to other users of this machine (ps); prefer RCON_PASSWORD or a password file')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of FILE (Docker secrets style; later lines are ignored, as in `pass` files)')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Use the server profile NAME from the config file (without -s, the `default` profile applies if there is one). Several names separated by commas, or a profile that lists `servers = [...]`, run the commands on all of them at once')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Use the server profile NAME from the config file (without -s, the `default` profile applies if there is one). Several names separated by commas, or a profile that lists `servers = [...]`, run the commands on all of them at once')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read the config file at PATH instead of the default one (see --print-config)')
            [CompletionResult]::new('--compat', '--compat', [CompletionResultType]::ParameterName, 'Read the rest of the command line as that program''s, as when rcon runs under its name (see --install-links): mcrcon 0.7.2 (each argument one command, -H -P -p -c -r -s -t -w, MCRCON_HOST/PORT/PASS) or itzg''s rcon-cli (--host --port --password --config, the words one command, RCON_HOST/PORT/PASSWORD, ~/.rcon-cli.yaml). Any failure then exits 1, as theirs do. Must be the first argument')
            [CompletionResult]::new('--install-links', '--install-links', [CompletionResultType]::ParameterName, 'Create `mcrcon` and `rcon-cli` in DIR, which run rcon with those programs'' command lines (symbolic links; on Windows hard links named mcrcon.exe and rcon-cli.exe, or copies across volumes), and exit. An existing file of that name is never replaced')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Time limit for connecting, logging in, and the whole wait for each command''s output, e.g. 5s, 500ms [default: 10s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Time limit for connecting, logging in, and the whole wait for each command''s output, e.g. 5s, 500ms [default: 10s]')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait up to DURATION (e.g. 60s, 2m) for the server to come up: a refused or closed connection and a login that gets no answer are tried again, with a short back-off and a progress line on a terminal, until the login is accepted; then the commands run. A refused password is final at once (exit 5); past DURATION the exit status is the last attempt''s (4, 6...). One server only')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'A command to run (repeatable; run in order, before any trailing COMMAND)')
            [CompletionResult]::new('--command', '--command', [CompletionResultType]::ParameterName, 'A command to run (repeatable; run in order, before any trailing COMMAND)')
            [CompletionResult]::new('--sentinel', '--sentinel', [CompletionResultType]::ParameterName, 'How the end of each command''s output is found [default: detect]')
            [CompletionResult]::new('--idle-gap', '--idle-gap', [CompletionResultType]::ParameterName, 'A fixed quiet gap that ends an answer when nothing marks its end (--sentinel idle, or a server that answers no sentinel) [default: adaptive: eight round trips or four times the slowest recent answer, at least 50ms (100ms until the server has answered three commands)]')
            [CompletionResult]::new('--dialect', '--dialect', [CompletionResultType]::ParameterName, 'The server family [default: minecraft]; it also picks the default port (25575, or 2306 for battleye, 28016 for webrcon, 8081 for telnet). --sentinel, when given, overrides an RCON dialect''s end-of-output method')
            [CompletionResult]::new('--ssh', '--ssh', [CompletionResultType]::ParameterName, 'Reach the server through an SSH tunnel: runs `ssh -W HOST:PORT DEST` (the system OpenSSH client, no remote shell), so the RCON password never crosses the network in clear text. --host is then resolved on the SSH server (default localhost). DEST is SSHHOST, USER@SSHHOST or USER@SSHHOST:SSHPORT. ssh runs with BatchMode=yes: it never prompts')
            [CompletionResult]::new('--ssh-option', '--ssh-option', [CompletionResultType]::ParameterName, 'An ssh_config option for --ssh, e.g. IdentityFile=~/.ssh/mc or BatchMode=no (repeatable; passed as `ssh -o OPTION` before rcon''s own defaults, so it wins)')
            [CompletionResult]::new('--proxy-command', '--proxy-command', [CompletionResultType]::ParameterName, 'Reach the server through any command that connects its stdin/stdout to it, as OpenSSH''s ProxyCommand: %h is the RCON host, %p the port, %% a percent sign. Runs under `sh -c` (`cmd /C` on Windows)')
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'Run the commands on several servers at once: NAME=HOST or NAME=HOST:PORT (repeatable). Output lines are prefixed with the name in brackets; the exit status is the worst of all servers. A target is reached directly unless --ssh or --proxy-command is given (the default profile''s tunnel does not apply)')
            [CompletionResult]::new('--targets', '--targets', [CompletionResultType]::ParameterName, 'Read the servers to run on from FILE (`-` for stdin): NDJSON (one JSON object per line, or one JSON array of them) or CSV with a header row. Columns: name, host, port, dialect, password_env, password_file, password_command, ssh, tags. Passwords are never inline. See docs/fleet.md')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Keep only the --targets rows that match KEY=VALUE: tag, name, host, dialect or ssh; VALUE may list alternatives separated by commas. Repeatable: every one must match')
            [CompletionResult]::new('--parallel', '--parallel', [CompletionResultType]::ParameterName, 'With several servers: at most N connections open at once [default: 10000]. Each needs a file descriptor; rcon raises its soft limit as far as the hard limit allows')
            [CompletionResult]::new('--retry', '--retry', [CompletionResultType]::ParameterName, 'With several servers: try a failed connect again up to N times, waiting 200ms, then 400ms, 800ms... (a refused login or a timeout after connecting is not retried)')
            [CompletionResult]::new('--practice-server', '--practice-server', [CompletionResultType]::ParameterName, 'Run the practice server in the foreground on ADDR (default 127.0.0.1:25575; port 0 picks a free one) and print its address; for trying other clients and for benchmarks. Its password is `practice` unless --practice-password sets one')
            [CompletionResult]::new('--practice-mode', '--practice-mode', [CompletionResultType]::ParameterName, 'The practice server''s dialect: vanilla, source, mirror, mirror-trailer8, reject-sentinel, close-nonpositive, factorio, palworld; or another console: battleye, battleye-lossy (drops, duplicates, reorders and corrupts datagrams on a seeded pattern), battleye-reforger, webrcon, telnet')
            [CompletionResult]::new('--practice-password', '--practice-password', [CompletionResultType]::ParameterName, 'The practice server''s password (--practice-server; --demo makes its own)')
            [CompletionResult]::new('--practice-read-delay', '--practice-read-delay', [CompletionResultType]::ParameterName, 'Delay before each read of the practice server (vanilla mode), to catch clients that send two packets back to back')
            [CompletionResult]::new('--ping', '--ping', [CompletionResultType]::ParameterName, 'Show a Minecraft server''s status with the Server List Ping (game port, default 25565; no password needed): version, players, MOTD, latency. HOST defaults to the host of --host, else localhost. Servers older than 1.7 are asked with the legacy FE 01 ping')
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'Ask a server over UDP Query (needs enable-query=true; query.port, default 25565; no password needed): MOTD, map, players. HOST defaults as for --ping')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Run the commands in PATH, one per line, mcfunction rules (repeatable, in order; `-` is stdin). Every file is opened before anything is sent. Without any command or file and with stdin not a terminal, stdin is read')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Run the commands in PATH, one per line, mcfunction rules (repeatable, in order; `-` is stdin). Every file is opened before anything is sent. Without any command or file and with stdin not a terminal, stdin is read')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'Wait this long between commands (-c ones, files and stdin, on each server), e.g. 50ms')
            [CompletionResult]::new('--macro', '--macro', [CompletionResultType]::ParameterName, 'Fill `$(NAME)` in mcfunction macro lines (`$...`) with VALUE (repeatable)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to render § colour codes as ANSI colours: auto (stdout is a terminal, TERM is not dumb, NO_COLOR and CLICOLOR=0 are unset; CLICOLOR_FORCE=1 colours a pipe), always, never')
            [CompletionResult]::new('--mgmt', '--mgmt', [CompletionResultType]::ParameterName, 'Talk to the Minecraft Server Management Protocol (1.21.9+; JSON-RPC over WebSocket) at URL (wss://HOST:PORT, or ws:// for a server without TLS) instead of RCON; without URL, the profile''s mgmt_url. COMMAND words name a method and its arguments: `players`, `allowlist add Steve`, `server save`; `methods` lists what the server offers. The secret comes from RCON_MGMT_SECRET, --mgmt-secret-file, the profile''s mgmt_secret_file or mgmt_secret_command, else the password sources (never from argv). Runs the rcon-mgmt program installed next to rcon, which holds the TLS and WebSocket code')
            [CompletionResult]::new('--practice-mgmt', '--practice-mgmt', [CompletionResultType]::ParameterName, 'Run the practice management server (the documented methods and notifications on in-memory state) in the foreground on ADDR (default 127.0.0.1:25585; port 0 picks a free one) and print its URL; the secret is --practice-password. ws:// unless --practice-cert and --practice-key give a PEM certificate and key for wss://')
            [CompletionResult]::new('--practice-cert', '--practice-cert', [CompletionResultType]::ParameterName, 'With --practice-mgmt: the PEM certificate (chain) to serve wss:// with')
            [CompletionResult]::new('--practice-key', '--practice-key', [CompletionResultType]::ParameterName, 'With --practice-mgmt: the PEM private key of --practice-cert')
            [CompletionResult]::new('--mgmt-cert', '--mgmt-cert', [CompletionResultType]::ParameterName, 'With --mgmt: trust this PEM certificate (the server''s self-signed one, or its CA) instead of the system''s trust store. The host name is still checked')
            [CompletionResult]::new('--mgmt-fingerprint', '--mgmt-fingerprint', [CompletionResultType]::ParameterName, 'With --mgmt: accept only the server certificate with this SHA-256 fingerprint (64 hex digits, colons allowed), e.g. from `keytool -list` or `openssl x509 -fingerprint -sha256`')
            [CompletionResult]::new('--mgmt-origin', '--mgmt-origin', [CompletionResultType]::ParameterName, 'With --mgmt: send this Origin header, for a proxy that checks it (vanilla checks the Origin of browsers only, never of a client sending its secret as a Bearer token, as rcon does)')
            [CompletionResult]::new('--mgmt-secret-file', '--mgmt-secret-file', [CompletionResultType]::ParameterName, 'With --mgmt: read the secret from FILE (trailing newline stripped)')
            [CompletionResult]::new('--poll', '--poll', [CompletionResultType]::ParameterName, 'With --follow over RCON: how often `list` is asked [default: 5s]')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'With --follow: run CMD for each event (`sh -c`, `cmd /C` on Windows) with the event in RCON_EVENT, RCON_EVENT_PLAYER, RCON_EVENT_SERVER, RCON_EVENT_TEXT, RCON_EVENT_JSON and as one JSON line on stdin; events wait for it in order')
            [CompletionResult]::new('--countdown', '--countdown', [CompletionResultType]::ParameterName, 'Count down DURATION (e.g. 10m), saying --announce at the announcement times, then run --then (and any COMMAND/-c). Ctrl-C cancels: nothing more is sent but --cancel-announce')
            [CompletionResult]::new('--announce', '--announce', [CompletionResultType]::ParameterName, 'With --countdown: the command that announces the time left; {left} becomes e.g. `5 minutes`, {seconds} the seconds')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'With --countdown: the announcement times, e.g. 5m,1m,10s [default: those of 1h, 30m, 15m, 10m, 5m, 2m, 1m, 30s, 10s, 5s, 4s, 3s, 2s, 1s within the countdown, and its start]')
            [CompletionResult]::new('--then', '--then', [CompletionResultType]::ParameterName, 'With --countdown: the command to run when it ends (repeatable, in order)')
            [CompletionResult]::new('--cancel-announce', '--cancel-announce', [CompletionResultType]::ParameterName, 'With --countdown: the command that announces a cancellation (Ctrl-C)')
            [CompletionResult]::new('--every', '--every', [CompletionResultType]::ParameterName, 'Run the commands (or the countdown) again every DURATION until interrupted')
            [CompletionResult]::new('--if', '--if', [CompletionResultType]::ParameterName, 'Run only if the condition holds, e.g. ''players < 5'' (from `list`, or the management protocol''s players); with --every, checked before each run. Operators: < <= > >= == !=')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Run the commands on every server profile in the config file at once')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Ignore the config file (the default one and any --config or RCON_CONFIG)')
            [CompletionResult]::new('--list-servers', '--list-servers', [CompletionResultType]::ParameterName, 'List the server profiles in the config file (names and addresses, no secrets) and exit')
            [CompletionResult]::new('--print-config', '--print-config', [CompletionResultType]::ParameterName, 'Print the resolved settings and where each value came from (password masked) and exit; with management settings, those too (URL, TLS, trust, Origin, where the secret comes from)')
            [CompletionResult]::new('--forget', '--forget', [CompletionResultType]::ParameterName, 'Forget what was learned about the server (how its answers end) and probe it again')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'With several servers: print each server''s output as one block under a line with its name in brackets, when that server is done, instead of prefixing every line')
            [CompletionResult]::new('--demo', '--demo', [CompletionResultType]::ParameterName, 'Run against a built-in practice server (strict vanilla, or the --dialect''s console) instead of a real one: no server or password needed. Try `rcon --demo help`')
            [CompletionResult]::new('--messages', '--messages', [CompletionResultType]::ParameterName, 'Also show the messages a BattlEye, WebRCON or telnet server sends on its own (chat, log lines) while commands run: on stderr as `[server] TEXT`, or with --json as records with "type":"message" on stdout. The console always shows them; with several servers at once they are not shown')
            [CompletionResult]::new('--legacy', '--legacy', [CompletionResultType]::ParameterName, 'With --ping: send only the legacy (pre-1.7) FE 01 ping')
            [CompletionResult]::new('--full', '--full', [CompletionResultType]::ParameterName, 'With --query: the full stat (version, software, plugins, player names)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of text: one object per command and line (command, response, ok, error, elapsed_ms; file and line for batch input; server with several servers); --ping: the server''s status JSON with address and latency; --query: the stat')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print every packet sent and received to stderr: a hex dump under its decoded header (size, id, type) and the time since start (--mgmt: every JSON-RPC message). The password is never shown. One server only')
            [CompletionResult]::new('--trace', '--trace', [CompletionResultType]::ParameterName, 'Print every packet sent and received to stderr: a hex dump under its decoded header (size, id, type) and the time since start (--mgmt: every JSON-RPC message). The password is never shown. One server only')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'Open the interactive console after the commands and files have run')
            [CompletionResult]::new('--interactive', '--interactive', [CompletionResultType]::ParameterName, 'Open the interactive console after the commands and files have run')
            [CompletionResult]::new('--keep-going', '--keep-going', [CompletionResultType]::ParameterName, 'Keep going after a failed command (-c, a file or stdin line, on each server) and exit non-zero at the end; without it the first failure stops the run and nothing later is sent')
            [CompletionResult]::new('--echo', '--echo', [CompletionResultType]::ParameterName, 'Print each command (`> COMMAND`) before its output, for logs')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Print output bytes exactly as received (no colour handling, no decoding); one server only')
            [CompletionResult]::new('--fix-newlines', '--fix-newlines', [CompletionResultType]::ParameterName, 'Restore line breaks vanilla drops (MC-7569) where the output''s shape makes them certain: `help` listings (a break before each `/` that starts a command right after other text) and parse errors. On by default when stdout is a terminal; piped output is left exactly as received unless this is given')
            [CompletionResult]::new('--no-fix-newlines', '--no-fix-newlines', [CompletionResultType]::ParameterName, 'Never restore line breaks, not even on a terminal')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Print server events as they happen until interrupted, one line each (`--json`: NDJSON). With --mgmt: the server''s notifications. With RCON: `list` polled every --poll, diffed into joined/left events. With BattlEye/WebRCON/telnet: the messages the server pushes (joins and leaves as joined/left, the rest as message events). A lost connection is retried (said on stderr) and the follow goes on')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
