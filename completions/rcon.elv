
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
            cand -H 'Server host name or address; HOST:PORT and [IPv6]:PORT are accepted'
            cand --host 'Server host name or address; HOST:PORT and [IPv6]:PORT are accepted'
            cand -P 'RCON port [default: 25575]'
            cand --port 'RCON port [default: 25575]'
            cand -p 'RCON password. Warning: arguments are visible to other users of this machine (ps); prefer RCON_PASSWORD or a password file'
            cand --password 'RCON password. Warning: arguments are visible to other users of this machine (ps); prefer RCON_PASSWORD or a password file'
            cand --password-file 'Read the password from the first line of FILE (Docker secrets style; later lines are ignored, as in `pass` files)'
            cand -s 'Use the server profile NAME from the config file (without -s, the `default` profile applies if there is one). Several names separated by commas, or a profile that lists `servers = [...]`, run the commands on all of them at once'
            cand --server 'Use the server profile NAME from the config file (without -s, the `default` profile applies if there is one). Several names separated by commas, or a profile that lists `servers = [...]`, run the commands on all of them at once'
            cand --config 'Read the config file at PATH instead of the default one (see --print-config)'
            cand --compat 'Read the rest of the command line as that program''s, as when rcon runs under its name (see --install-links): mcrcon 0.7.2 (each argument one command, -H -P -p -c -r -s -t -w, MCRCON_HOST/PORT/PASS) or itzg''s rcon-cli (--host --port --password --config, the words one command, RCON_HOST/PORT/PASSWORD, ~/.rcon-cli.yaml). Any failure then exits 1, as theirs do. Must be the first argument'
            cand --install-links 'Create `mcrcon` and `rcon-cli` in DIR, which run rcon with those programs'' command lines (symbolic links; on Windows hard links named mcrcon.exe and rcon-cli.exe, or copies across volumes), and exit. An existing file of that name is never replaced'
            cand -t 'Time limit for connecting, logging in, and the whole wait for each command''s output, e.g. 5s, 500ms [default: 10s]'
            cand --timeout 'Time limit for connecting, logging in, and the whole wait for each command''s output, e.g. 5s, 500ms [default: 10s]'
            cand --wait 'Wait up to DURATION (e.g. 60s, 2m) for the server to come up: a refused or closed connection and a login that gets no answer are tried again, with a short back-off and a progress line on a terminal, until the login is accepted; then the commands run. A refused password is final at once (exit 5); past DURATION the exit status is the last attempt''s (4, 6...). One server only'
            cand -c 'A command to run (repeatable; run in order, before any trailing COMMAND)'
            cand --command 'A command to run (repeatable; run in order, before any trailing COMMAND)'
            cand --sentinel 'How the end of each command''s output is found [default: detect]'
            cand --idle-gap 'A fixed quiet gap that ends an answer when nothing marks its end (--sentinel idle, or a server that answers no sentinel) [default: adaptive: eight round trips or four times the slowest recent answer, at least 50ms (100ms until the server has answered three commands)]'
            cand --dialect 'The server family [default: minecraft]; it also picks the default port (25575, or 2306 for battleye, 28016 for webrcon, 8081 for telnet). --sentinel, when given, overrides an RCON dialect''s end-of-output method'
            cand --ssh 'Reach the server through an SSH tunnel: runs `ssh -W HOST:PORT DEST` (the system OpenSSH client, no remote shell), so the RCON password never crosses the network in clear text. --host is then resolved on the SSH server (default localhost). DEST is SSHHOST, USER@SSHHOST or USER@SSHHOST:SSHPORT. ssh runs with BatchMode=yes: it never prompts'
            cand --ssh-option 'An ssh_config option for --ssh, e.g. IdentityFile=~/.ssh/mc or BatchMode=no (repeatable; passed as `ssh -o OPTION` before rcon''s own defaults, so it wins)'
            cand --proxy-command 'Reach the server through any command that connects its stdin/stdout to it, as OpenSSH''s ProxyCommand: %h is the RCON host, %p the port, %% a percent sign. Runs under `sh -c` (`cmd /C` on Windows)'
            cand --remote-rcon 'The program --remote runs on the SSH host [default: rcon, on the remote PATH]'
            cand --target 'Run the commands on several servers at once: NAME=HOST or NAME=HOST:PORT (repeatable). Output lines are prefixed with the name in brackets; the exit status is the worst of all servers. A target is reached directly unless --ssh or --proxy-command is given (the default profile''s tunnel does not apply)'
            cand --targets 'Read the servers to run on from FILE (`-` for stdin): NDJSON (one JSON object per line, or one JSON array of them) or CSV with a header row. Columns: name, host, port, dialect, password_env, password_file, password_command, ssh, tags. Passwords are never inline. See docs/fleet.md'
            cand --where 'Keep only the --targets rows that match KEY=VALUE: tag, name, host, dialect or ssh; VALUE may list alternatives separated by commas. Repeatable: every one must match'
            cand --parallel 'With several servers: at most N connections open at once [default: 10000]. Each needs a file descriptor; rcon raises its soft limit as far as the hard limit allows'
            cand --retry 'Try a failed first connect again up to N times (each server''s, with several), waiting 200ms, then 400ms, 800ms... (a refused login or a timeout after connecting is not retried). With --remote and -f files, also reconnect after a lost connection, tunnel or remote side, up to N times each, and go on after the last answered line (the line in doubt needs --resend-in-doubt)'
            cand --practice-server 'Run the practice server in the foreground on ADDR (default 127.0.0.1:25575; port 0 picks a free one) and print its address; for trying other clients and for benchmarks. Its password is `practice` unless --practice-password sets one'
            cand --practice-mode 'The practice server''s dialect: vanilla, source, mirror, mirror-trailer8, reject-sentinel, close-nonpositive, factorio, palworld; or another console: battleye, battleye-lossy (drops, duplicates, reorders and corrupts datagrams on a seeded pattern), battleye-reforger, webrcon, telnet'
            cand --practice-password 'The practice server''s password (--practice-server; --demo makes its own)'
            cand --practice-read-delay 'Delay before each read of the practice server (vanilla mode), to catch clients that send two packets back to back'
            cand --ping 'Show a Minecraft server''s status with the Server List Ping (game port, default 25565; no password needed): version, players, MOTD, latency. HOST defaults to the host of --host, else localhost. Servers older than 1.7 are asked with the legacy FE 01 ping'
            cand --query 'Ask a server over UDP Query (needs enable-query=true; query.port, default 25565; no password needed): MOTD, map, players. HOST defaults as for --ping'
            cand -f 'Run the commands in PATH, one per line, mcfunction rules (repeatable, in order; `-` is stdin). Every file is opened before anything is sent. Without any command or file and with stdin not a terminal, stdin is read'
            cand --file 'Run the commands in PATH, one per line, mcfunction rules (repeatable, in order; `-` is stdin). Every file is opened before anything is sent. Without any command or file and with stdin not a terminal, stdin is read'
            cand --delay 'Wait this long between commands (-c ones, files and stdin, on each server), e.g. 50ms'
            cand --macro 'Fill `$(NAME)` in mcfunction macro lines (`$...`) with VALUE (repeatable)'
            cand --color 'When to render § colour codes as ANSI colours: auto (stdout is a terminal, TERM is not dumb, NO_COLOR and CLICOLOR=0 are unset; CLICOLOR_FORCE=1 colours a pipe), always, never'
            cand --mgmt 'Talk to the Minecraft Server Management Protocol (1.21.9+; JSON-RPC over WebSocket) at URL (wss://HOST:PORT, or ws:// for a server without TLS) instead of RCON; without URL, the profile''s mgmt_url. COMMAND words name a method and its arguments: `players`, `allowlist add Steve`, `server save`; `methods` lists what the server offers. The secret comes from RCON_MGMT_SECRET, --mgmt-secret-file, the profile''s mgmt_secret_file or mgmt_secret_command, else the password sources (never from argv)'
            cand --practice-mgmt 'Run the practice management server (the documented methods and notifications on in-memory state) in the foreground on ADDR (default 127.0.0.1:25585; port 0 picks a free one) and print its URL; the secret is --practice-password. ws:// unless --practice-cert and --practice-key give a PEM certificate and key for wss://'
            cand --practice-cert 'With --practice-mgmt: the PEM certificate (chain) to serve wss:// with'
            cand --practice-key 'With --practice-mgmt: the PEM private key of --practice-cert'
            cand --mgmt-cert 'With --mgmt: trust this PEM certificate (the server''s self-signed one, or its CA) instead of the system''s trust store. The host name is still checked'
            cand --mgmt-fingerprint 'With --mgmt: accept only the server certificate with this SHA-256 fingerprint (64 hex digits, colons allowed), e.g. from `keytool -list` or `openssl x509 -fingerprint -sha256`'
            cand --mgmt-origin 'With --mgmt: send this Origin header, for a proxy that checks it (vanilla checks the Origin of browsers only, never of a client sending its secret as a Bearer token, as rcon does)'
            cand --mgmt-secret-file 'With --mgmt: read the secret from FILE (trailing newline stripped)'
            cand --poll 'With --follow over RCON: how often `list` is asked [default: 5s]'
            cand --exec 'With --follow: run CMD for each event (`sh -c`, `cmd /C` on Windows) with the event in RCON_EVENT, RCON_EVENT_PLAYER, RCON_EVENT_SERVER, RCON_EVENT_TEXT, RCON_EVENT_JSON and as one JSON line on stdin; events wait for it in order'
            cand --countdown 'Count down DURATION (e.g. 10m), saying --announce at the announcement times, then run --then (and any COMMAND/-c). Ctrl-C cancels: nothing more is sent but --cancel-announce'
            cand --announce 'With --countdown: the command that announces the time left; {left} becomes e.g. `5 minutes`, {seconds} the seconds'
            cand --at 'With --countdown: the announcement times, e.g. 5m,1m,10s [default: those of 1h, 30m, 15m, 10m, 5m, 2m, 1m, 30s, 10s, 5s, 4s, 3s, 2s, 1s within the countdown, and its start]'
            cand --then 'With --countdown: the command to run when it ends (repeatable, in order)'
            cand --cancel-announce 'With --countdown: the command that announces a cancellation (Ctrl-C)'
            cand --every 'Run the commands (or the countdown) again every DURATION until interrupted'
            cand --if 'Run only if the condition holds, e.g. ''players < 5'' (from `list`, or the management protocol''s players); with --every, checked before each run. Operators: < <= > >= == !='
            cand --all 'Run the commands on every server profile in the config file at once'
            cand --no-config 'Ignore the config file (the default one and any --config or RCON_CONFIG)'
            cand --list-servers 'List the server profiles in the config file (names and addresses, no secrets) and exit'
            cand --print-config 'Print the resolved settings and where each value came from (password masked) and exit; with management settings, those too (URL, TLS, trust, Origin, where the secret comes from)'
            cand --forget 'Forget what was learned about the server (how its answers end) and probe it again'
            cand --remote 'With --ssh: run `rcon` on the SSH host itself (over the same ssh, BatchMode=yes) and stream the commands to it, so a file costs one round trip per window of commands, not one per line (docs/remote.md). The password travels only inside the SSH channel'
            cand --remote-serve 'Serve the remote protocol on stdin/stdout (what --remote runs on the SSH host; an editor can drive it too: docs/remote.md)'
            cand --resume 'Run the same -f file(s) again from after the last line the server answered, as kept in the journal of the run that stopped (docs/remote.md). A line sent but never answered is refused unless --resend-in-doubt'
            cand --resend-in-doubt 'With --resume or --retry: send the line in doubt (sent, never answered) again'
            cand --group 'With several servers: print each server''s output as one block under a line with its name in brackets, when that server is done, instead of prefixing every line'
            cand --demo 'Run against a built-in practice server (strict vanilla, or the --dialect''s console) instead of a real one: no server or password needed. Try `rcon --demo help`'
            cand --messages 'Also show the messages a BattlEye, WebRCON or telnet server sends on its own (chat, log lines) while commands run: on stderr as `[server] TEXT`, or with --json as records with "type":"message" on stdout. The console always shows them; with several servers at once they are not shown'
            cand --legacy 'With --ping: send only the legacy (pre-1.7) FE 01 ping'
            cand --full 'With --query: the full stat (version, software, plugins, player names)'
            cand --json 'Print JSON instead of text: one object per command and line (command, response, ok, error, elapsed_ms; file and line for batch input; server with several servers); --ping: the server''s status JSON with address and latency; --query: the stat'
            cand -v 'Print every packet sent and received to stderr: a hex dump under its decoded header (size, id, type) and the time since start (--mgmt: every JSON-RPC message). The password is never shown. One server only'
            cand --trace 'Print every packet sent and received to stderr: a hex dump under its decoded header (size, id, type) and the time since start (--mgmt: every JSON-RPC message). The password is never shown. One server only'
            cand -i 'Open the interactive console after the commands and files have run'
            cand --interactive 'Open the interactive console after the commands and files have run'
            cand --keep-going 'Keep going after a failed command (-c, a file or stdin line, on each server) and exit non-zero at the end; without it the first failure stops the run and nothing later is sent'
            cand --echo 'Print each command (`> COMMAND`) before its output, for logs'
            cand --raw 'Print output bytes exactly as received (no colour handling, no decoding); one server only'
            cand --fix-newlines 'Restore line breaks vanilla drops (MC-7569) where the output''s shape makes them certain: `help` listings (a break before each `/` that starts a command right after other text) and parse errors. On by default when stdout is a terminal; piped output is left exactly as received unless this is given'
            cand --no-fix-newlines 'Never restore line breaks, not even on a terminal'
            cand --follow 'Print server events as they happen until interrupted, one line each (`--json`: NDJSON). With --mgmt: the server''s notifications. With RCON: `list` polled every --poll, diffed into joined/left events. With BattlEye/WebRCON/telnet: the messages the server pushes (joins and leaves as joined/left, the rest as message events). A lost connection is retried (said on stderr) and the follow goes on'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
