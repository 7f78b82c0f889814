
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
            cand --password-file 'Read the password from FILE (trailing newline stripped; Docker secrets style)'
            cand -s 'Use the server profile NAME from the config file (without -s, the `default` profile applies if there is one)'
            cand --server 'Use the server profile NAME from the config file (without -s, the `default` profile applies if there is one)'
            cand --config 'Read the config file at PATH instead of the default one (see --print-config)'
            cand -t 'Time limit for connecting, logging in, and the whole wait for each command''s output, e.g. 5s, 500ms [default: 10s]'
            cand --timeout 'Time limit for connecting, logging in, and the whole wait for each command''s output, e.g. 5s, 500ms [default: 10s]'
            cand -c 'A command to run (repeatable; run in order, before any trailing COMMAND)'
            cand --command 'A command to run (repeatable; run in order, before any trailing COMMAND)'
            cand --sentinel 'How the end of each command''s output is found [default: detect]'
            cand --idle-gap 'With --sentinel idle (or when a server answers no sentinel): the silence that ends an output [default: 250ms]'
            cand --practice-server 'Run the practice server in the foreground on ADDR (default 127.0.0.1:25575; port 0 picks a free one) and print its address; for trying other clients and for benchmarks'
            cand --practice-mode 'The practice server''s dialect: vanilla, source, mirror, mirror-trailer8, reject-sentinel, close-nonpositive, factorio, palworld'
            cand --practice-password 'The practice server''s password (--practice-server; --demo makes its own)'
            cand --practice-read-delay 'Delay before each read of the practice server (vanilla mode), to catch clients that send two packets back to back'
            cand --no-config 'Ignore the config file (the default one and any --config or RCON_CONFIG)'
            cand --list-servers 'List the server profiles in the config file (names and addresses, no secrets) and exit'
            cand --print-config 'Print the resolved settings and where each value came from (password masked) and exit'
            cand --demo 'Run against a built-in practice server (strict vanilla) instead of a real one: no server or password needed. Try `rcon --demo help`'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
