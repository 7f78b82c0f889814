
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
            [CompletionResult]::new('-H', '-H ', [CompletionResultType]::ParameterName, 'Server host name or address (HOST:PORT too)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Server host name or address (HOST:PORT too)')
            [CompletionResult]::new('-P', '-P ', [CompletionResultType]::ParameterName, 'RCON port [default: 25575]')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'RCON port [default: 25575]')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'RCON password (ps shows it: prefer the env)')
            [CompletionResult]::new('--password', '--password', [CompletionResultType]::ParameterName, 'RCON password (ps shows it: prefer the env)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from FILE''s first line')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Use config profile NAME (NAME,NAME: several)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Use config profile NAME (NAME,NAME: several)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this config file instead of the default')
            [CompletionResult]::new('--compat', '--compat', [CompletionResultType]::ParameterName, 'Read the rest of the command line as mcrcon''s or rcon-cli''s')
            [CompletionResult]::new('--install-links', '--install-links', [CompletionResultType]::ParameterName, 'Create mcrcon and rcon-cli in DIR, running rcon, and exit')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Limit for login and each answer [default: 10s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Limit for login and each answer [default: 10s]')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait up to DURATION for the server to come up, then run the commands')
            [CompletionResult]::new('--sentinel', '--sentinel', [CompletionResultType]::ParameterName, 'How the end of each answer is found [default: detect]')
            [CompletionResult]::new('--idle-gap', '--idle-gap', [CompletionResultType]::ParameterName, 'A fixed quiet gap that ends an answer [default: adaptive]')
            [CompletionResult]::new('--dialect', '--dialect', [CompletionResultType]::ParameterName, 'The server family [default: minecraft]')
            [CompletionResult]::new('--ssh', '--ssh', [CompletionResultType]::ParameterName, 'Reach the server through an SSH tunnel (ssh -W HOST:PORT DEST)')
            [CompletionResult]::new('--ssh-option', '--ssh-option', [CompletionResultType]::ParameterName, 'An ssh_config option for --ssh (repeatable)')
            [CompletionResult]::new('--proxy-command', '--proxy-command', [CompletionResultType]::ParameterName, 'Reach the server through a command, as OpenSSH''s ProxyCommand')
            [CompletionResult]::new('--remote-rcon', '--remote-rcon', [CompletionResultType]::ParameterName, 'The program --remote runs on the SSH host [default: rcon]')
            [CompletionResult]::new('--retry', '--retry', [CompletionResultType]::ParameterName, 'Try a failed connect again up to N times (files: reconnect mid-way)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'A command to run (repeatable, in order, before COMMAND)')
            [CompletionResult]::new('--command', '--command', [CompletionResultType]::ParameterName, 'A command to run (repeatable, in order, before COMMAND)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Run the commands in PATH, one per line (repeatable; - is stdin)')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Run the commands in PATH, one per line (repeatable; - is stdin)')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'Wait this long between commands, e.g. 50ms')
            [CompletionResult]::new('--macro', '--macro', [CompletionResultType]::ParameterName, 'Fill $(NAME) in mcfunction macro lines with VALUE (repeatable)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to render § colour codes as ANSI colours')
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'Run on several servers: NAME=HOST or NAME=HOST:PORT (repeatable)')
            [CompletionResult]::new('--targets', '--targets', [CompletionResultType]::ParameterName, 'Read the servers to run on from FILE (NDJSON or CSV; - is stdin)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Keep only the --targets rows that match KEY=VALUE')
            [CompletionResult]::new('--parallel', '--parallel', [CompletionResultType]::ParameterName, 'At most N connections open at once [default: 10000]')
            [CompletionResult]::new('--poll', '--poll', [CompletionResultType]::ParameterName, 'With --follow over RCON: how often `list` is asked [default: 5s]')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'With --follow: run CMD for each event')
            [CompletionResult]::new('--countdown', '--countdown', [CompletionResultType]::ParameterName, 'Count down DURATION with announcements, then run --then')
            [CompletionResult]::new('--announce', '--announce', [CompletionResultType]::ParameterName, 'With --countdown: the command that announces the time left')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'With --countdown: the announcement times, e.g. 5m,1m,10s')
            [CompletionResult]::new('--then', '--then', [CompletionResultType]::ParameterName, 'With --countdown: the command to run when it ends (repeatable)')
            [CompletionResult]::new('--cancel-announce', '--cancel-announce', [CompletionResultType]::ParameterName, 'With --countdown: the command that announces a cancellation')
            [CompletionResult]::new('--every', '--every', [CompletionResultType]::ParameterName, 'Run the commands again every DURATION until interrupted')
            [CompletionResult]::new('--if', '--if', [CompletionResultType]::ParameterName, 'Run only if the condition holds, e.g. ''players < 5''')
            [CompletionResult]::new('--mgmt', '--mgmt', [CompletionResultType]::ParameterName, 'Talk to the Minecraft Server Management Protocol at URL')
            [CompletionResult]::new('--mgmt-cert', '--mgmt-cert', [CompletionResultType]::ParameterName, 'With --mgmt: trust this PEM certificate')
            [CompletionResult]::new('--mgmt-fingerprint', '--mgmt-fingerprint', [CompletionResultType]::ParameterName, 'With --mgmt: accept only this SHA-256 certificate')
            [CompletionResult]::new('--mgmt-origin', '--mgmt-origin', [CompletionResultType]::ParameterName, 'With --mgmt: send this Origin header')
            [CompletionResult]::new('--mgmt-secret-file', '--mgmt-secret-file', [CompletionResultType]::ParameterName, 'With --mgmt: the secret''s file')
            [CompletionResult]::new('--practice-server', '--practice-server', [CompletionResultType]::ParameterName, 'Run the practice server in the foreground on ADDR')
            [CompletionResult]::new('--practice-mode', '--practice-mode', [CompletionResultType]::ParameterName, 'The practice server''s mode (see --help)')
            [CompletionResult]::new('--practice-password', '--practice-password', [CompletionResultType]::ParameterName, 'The practice server''s password')
            [CompletionResult]::new('--practice-read-delay', '--practice-read-delay', [CompletionResultType]::ParameterName, 'Delay before each read of the practice server')
            [CompletionResult]::new('--practice-mgmt', '--practice-mgmt', [CompletionResultType]::ParameterName, 'Run the practice management server on ADDR')
            [CompletionResult]::new('--practice-cert', '--practice-cert', [CompletionResultType]::ParameterName, 'With --practice-mgmt: PEM certificate for wss://')
            [CompletionResult]::new('--practice-key', '--practice-key', [CompletionResultType]::ParameterName, 'With --practice-mgmt: the PEM private key of --practice-cert')
            [CompletionResult]::new('--ping', '--ping', [CompletionResultType]::ParameterName, 'Show a Minecraft server''s status (Server List Ping; no password)')
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'Ask a server over UDP Query (no password)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Ignore the config file')
            [CompletionResult]::new('--list-servers', '--list-servers', [CompletionResultType]::ParameterName, 'List the config file''s server profiles and exit')
            [CompletionResult]::new('--print-config', '--print-config', [CompletionResultType]::ParameterName, 'Print the resolved settings and where each came from, and exit')
            [CompletionResult]::new('--forget', '--forget', [CompletionResultType]::ParameterName, 'Forget what was learned about the server and probe it again')
            [CompletionResult]::new('--remote', '--remote', [CompletionResultType]::ParameterName, 'With --ssh: run rcon on the SSH host and stream the commands to it')
            [CompletionResult]::new('--remote-install', '--remote-install', [CompletionResultType]::ParameterName, 'With --remote: copy this rcon to the SSH host when it has none usable')
            [CompletionResult]::new('--remote-serve', '--remote-serve', [CompletionResultType]::ParameterName, 'Serve the remote protocol on stdin/stdout (what --remote runs on the SSH host; an editor can drive it too: docs/remote.md)')
            [CompletionResult]::new('--resume', '--resume', [CompletionResultType]::ParameterName, 'Run the same -f file (or stdin) again from after its last answered line')
            [CompletionResult]::new('--resend-in-doubt', '--resend-in-doubt', [CompletionResultType]::ParameterName, 'With --resume or --retry: send the line in doubt again')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'Open the interactive console after the commands and files')
            [CompletionResult]::new('--interactive', '--interactive', [CompletionResultType]::ParameterName, 'Open the interactive console after the commands and files')
            [CompletionResult]::new('--keep-going', '--keep-going', [CompletionResultType]::ParameterName, 'Keep going after a failed command; exit non-zero at the end')
            [CompletionResult]::new('--echo', '--echo', [CompletionResultType]::ParameterName, 'Print each command (> COMMAND) before its output')
            [CompletionResult]::new('--messages', '--messages', [CompletionResultType]::ParameterName, 'Also show what a BattlEye, WebRCON or telnet server sends on its own')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of text: one object per command (NDJSON)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print every packet sent and received to stderr')
            [CompletionResult]::new('--trace', '--trace', [CompletionResultType]::ParameterName, 'Print every packet sent and received to stderr')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Print output bytes exactly as received')
            [CompletionResult]::new('--fix-newlines', '--fix-newlines', [CompletionResultType]::ParameterName, 'Restore line breaks vanilla drops (default on a terminal)')
            [CompletionResult]::new('--no-fix-newlines', '--no-fix-newlines', [CompletionResultType]::ParameterName, 'Never restore line breaks, not even on a terminal')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Run the commands on every server profile at once')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'Print each server''s output as one block, not as prefixed lines')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Print server events as they happen until interrupted')
            [CompletionResult]::new('--demo', '--demo', [CompletionResultType]::ParameterName, 'Use a built-in practice server (try: rcon --demo help)')
            [CompletionResult]::new('--legacy', '--legacy', [CompletionResultType]::ParameterName, 'With --ping: send only the legacy (pre-1.7) ping')
            [CompletionResult]::new('--full', '--full', [CompletionResultType]::ParameterName, 'With --query: the full stat')
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
