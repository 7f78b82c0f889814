
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
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Limit for login and each answer [default: 10s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Limit for login and each answer [default: 10s]')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait up to DURATION for the server to come up')
            [CompletionResult]::new('--sentinel', '--sentinel', [CompletionResultType]::ParameterName, 'How an answer''s end is found [default: detect]')
            [CompletionResult]::new('--idle-gap', '--idle-gap', [CompletionResultType]::ParameterName, 'Quiet gap that ends an answer [default: adaptive]')
            [CompletionResult]::new('--dialect', '--dialect', [CompletionResultType]::ParameterName, 'The server family [default: minecraft]')
            [CompletionResult]::new('--ssh', '--ssh', [CompletionResultType]::ParameterName, 'Reach the server through ssh -W HOST:PORT DEST')
            [CompletionResult]::new('--ssh-option', '--ssh-option', [CompletionResultType]::ParameterName, 'An ssh_config option for --ssh (repeatable)')
            [CompletionResult]::new('--proxy-command', '--proxy-command', [CompletionResultType]::ParameterName, 'Reach the server through a ProxyCommand')
            [CompletionResult]::new('--remote-rcon', '--remote-rcon', [CompletionResultType]::ParameterName, 'The program --remote runs there [default: rcon]')
            [CompletionResult]::new('--retry', '--retry', [CompletionResultType]::ParameterName, 'Retry a failed connect N times (files: mid-way)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'A command to run (repeatable, before COMMAND)')
            [CompletionResult]::new('--command', '--command', [CompletionResultType]::ParameterName, 'A command to run (repeatable, before COMMAND)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Run the commands in PATH (repeatable; - is stdin)')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Run the commands in PATH (repeatable; - is stdin)')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'Wait this long between commands, e.g. 50ms')
            [CompletionResult]::new('--macro', '--macro', [CompletionResultType]::ParameterName, 'Fill $(NAME) in macro lines (repeatable)')
            [CompletionResult]::new('--compat', '--compat', [CompletionResultType]::ParameterName, 'Read the rest of the line as mcrcon''s or rcon-cli''s')
            [CompletionResult]::new('--install-links', '--install-links', [CompletionResultType]::ParameterName, 'Create mcrcon and rcon-cli in DIR, running rcon')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to render § colour codes as ANSI colours')
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'Run on NAME=HOST[:PORT] too (repeatable)')
            [CompletionResult]::new('--targets', '--targets', [CompletionResultType]::ParameterName, 'Run on the servers in FILE (NDJSON, CSV; - stdin)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Keep only the --targets rows that match KEY=VALUE')
            [CompletionResult]::new('--parallel', '--parallel', [CompletionResultType]::ParameterName, 'At most N connections open at once [default: 10000]')
            [CompletionResult]::new('--poll', '--poll', [CompletionResultType]::ParameterName, 'With --follow over RCON: `list` every DURATION')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'With --follow: run CMD for each event')
            [CompletionResult]::new('--log-level', '--log-level', [CompletionResultType]::ParameterName, 'With --follow --mgmt: log lines at LEVEL or above')
            [CompletionResult]::new('--countdown', '--countdown', [CompletionResultType]::ParameterName, 'Count down DURATION, then run --then')
            [CompletionResult]::new('--announce', '--announce', [CompletionResultType]::ParameterName, 'With --countdown: the announcement command')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'With --countdown: announce at, e.g. 5m,1m,10s')
            [CompletionResult]::new('--then', '--then', [CompletionResultType]::ParameterName, 'With --countdown: run at the end (repeatable)')
            [CompletionResult]::new('--cancel-announce', '--cancel-announce', [CompletionResultType]::ParameterName, 'With --countdown: announce a cancellation')
            [CompletionResult]::new('--every', '--every', [CompletionResultType]::ParameterName, 'Run the commands again every DURATION')
            [CompletionResult]::new('--if', '--if', [CompletionResultType]::ParameterName, 'Run only if the condition holds: ''players < 5''')
            [CompletionResult]::new('--mgmt', '--mgmt', [CompletionResultType]::ParameterName, 'Use the Management Protocol at URL')
            [CompletionResult]::new('--mgmt-cert', '--mgmt-cert', [CompletionResultType]::ParameterName, 'With --mgmt: trust this PEM certificate')
            [CompletionResult]::new('--mgmt-fingerprint', '--mgmt-fingerprint', [CompletionResultType]::ParameterName, 'With --mgmt: accept only this SHA-256 cert')
            [CompletionResult]::new('--mgmt-origin', '--mgmt-origin', [CompletionResultType]::ParameterName, 'With --mgmt: send this Origin header')
            [CompletionResult]::new('--mgmt-secret-file', '--mgmt-secret-file', [CompletionResultType]::ParameterName, 'With --mgmt: the secret''s file')
            [CompletionResult]::new('--practice-server', '--practice-server', [CompletionResultType]::ParameterName, 'Serve the practice server on ADDR')
            [CompletionResult]::new('--practice-mode', '--practice-mode', [CompletionResultType]::ParameterName, 'The practice server''s mode (see --help)')
            [CompletionResult]::new('--practice-password', '--practice-password', [CompletionResultType]::ParameterName, 'The practice server''s password')
            [CompletionResult]::new('--practice-read-delay', '--practice-read-delay', [CompletionResultType]::ParameterName, 'Delay before each practice server read')
            [CompletionResult]::new('--practice-mgmt', '--practice-mgmt', [CompletionResultType]::ParameterName, 'Serve the practice management server')
            [CompletionResult]::new('--practice-mods', '--practice-mods', [CompletionResultType]::ParameterName, 'Mods it plays: enhanced, console')
            [CompletionResult]::new('--practice-cert', '--practice-cert', [CompletionResultType]::ParameterName, '--practice-mgmt''s wss:// certificate')
            [CompletionResult]::new('--practice-key', '--practice-key', [CompletionResultType]::ParameterName, 'The private key of --practice-cert')
            [CompletionResult]::new('--ping', '--ping', [CompletionResultType]::ParameterName, 'Show a Minecraft server''s status (no password)')
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'Ask a server over UDP Query (no password)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Ignore the config file')
            [CompletionResult]::new('--list-servers', '--list-servers', [CompletionResultType]::ParameterName, 'List the config file''s server profiles and exit')
            [CompletionResult]::new('--print-config', '--print-config', [CompletionResultType]::ParameterName, 'Print the settings in effect and their sources')
            [CompletionResult]::new('--forget', '--forget', [CompletionResultType]::ParameterName, 'Forget what was learned about the server')
            [CompletionResult]::new('--learned', '--learned', [CompletionResultType]::ParameterName, 'List what is remembered about servers and exit')
            [CompletionResult]::new('--no-ssh-reuse', '--no-ssh-reuse', [CompletionResultType]::ParameterName, 'Do not share SSH connections across runs')
            [CompletionResult]::new('--remote', '--remote', [CompletionResultType]::ParameterName, 'With --ssh: run rcon on the SSH host')
            [CompletionResult]::new('--remote-install', '--remote-install', [CompletionResultType]::ParameterName, 'With --remote: copy this rcon there if needed')
            [CompletionResult]::new('--remote-serve', '--remote-serve', [CompletionResultType]::ParameterName, 'Serve the remote protocol on stdin/stdout (what --remote runs on the SSH host; an editor can drive it too: docs/remote.md)')
            [CompletionResult]::new('--resume', '--resume', [CompletionResultType]::ParameterName, 'Rerun -f FILE or stdin from after its last answer')
            [CompletionResult]::new('--resend-in-doubt', '--resend-in-doubt', [CompletionResultType]::ParameterName, 'With --resume or --retry: resend the line in doubt')
            [CompletionResult]::new('--skip-in-doubt', '--skip-in-doubt', [CompletionResultType]::ParameterName, 'With --resume: take the line in doubt as run')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'Open the console after the commands and files')
            [CompletionResult]::new('--interactive', '--interactive', [CompletionResultType]::ParameterName, 'Open the console after the commands and files')
            [CompletionResult]::new('--keep-going', '--keep-going', [CompletionResultType]::ParameterName, 'Go on past a failed command; fail at the end')
            [CompletionResult]::new('--echo', '--echo', [CompletionResultType]::ParameterName, 'Print each command (> COMMAND) before its output')
            [CompletionResult]::new('--messages', '--messages', [CompletionResultType]::ParameterName, 'Also show what BattlEye, WebRCON, telnet send')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON: one object per command (NDJSON)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print every packet sent and received to stderr')
            [CompletionResult]::new('--trace', '--trace', [CompletionResultType]::ParameterName, 'Print every packet sent and received to stderr')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Print output bytes exactly as received')
            [CompletionResult]::new('--fix-newlines', '--fix-newlines', [CompletionResultType]::ParameterName, 'Restore dropped line breaks (default on a terminal)')
            [CompletionResult]::new('--no-fix-newlines', '--no-fix-newlines', [CompletionResultType]::ParameterName, 'Never restore line breaks, not even on a terminal')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Run the commands on every server profile at once')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'Print each server''s output as one block')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Print server events as they happen')
            [CompletionResult]::new('--demo', '--demo', [CompletionResultType]::ParameterName, 'Use a practice server (rcon --demo help)')
            [CompletionResult]::new('--legacy', '--legacy', [CompletionResultType]::ParameterName, 'With --ping: send only the legacy (pre-1.7) ping')
            [CompletionResult]::new('--full', '--full', [CompletionResultType]::ParameterName, 'With --query: the full stat')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print this list (--help: with the long texts)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print this list (--help: with the long texts)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print rcon''s version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print rcon''s version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
