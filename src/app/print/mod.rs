//! The sink: what reaches the terminal. Command output in every style, `--follow` events and
//! the countdown's results through the one `Printer`, and the runners' warnings ([`output`]);
//! the one JSON record schema of every mode ([`json`]); server messages of `--messages` and the
//! console ([`messages`]); packet traces ([`trace`]); the line that says what a signal stopped
//! ([`interrupted`]); the one progress line on stderr ([`progress`]).
//!
//! Nothing else in `src/app` writes to stdout or stderr: text on stdout goes through the
//! [`output::Printer`] or [`output::write_stdout`], every line on stderr through [`stderr!`]
//! ([`progress::stderr`], which erases the progress line first), and whether either stream is a
//! terminal is asked here ([`stdout_is_terminal`], [`stderr_is_terminal`] beside the progress
//! line). A unit test reads every file of `src/app` and names any line that writes around the
//! sink.

pub mod interrupted;
pub mod json;
pub mod messages;
pub mod output;
pub mod progress;
pub mod trace;

/// Writes one line (a newline added) on stderr through the sink: `rcon: error: ...`, warnings,
/// notes, the console's messages. Formats as `eprintln!` does; the line goes around the
/// progress line ([`progress::stderr`]), without Rust's ` (os error N)`, and a closed stderr is
/// ignored.
macro_rules! stderr {
    () => {
        $crate::app::print::progress::stderr(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::app::print::progress::stderr(format_args!($($arg)*), true)
    };
}
pub(crate) use stderr;

// Asked beside the progress line, which needs it, so that `progress` imports nothing above it.
pub use progress::stderr_is_terminal;

/// Whether stdout is a terminal (colour, the console's defaults), asked once.
pub fn stdout_is_terminal() -> bool {
    use std::io::IsTerminal;
    static TERMINAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TERMINAL.get_or_init(|| std::io::stdout().is_terminal())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// What writes to stdout or stderr without the sink, spelled in halves so that this file
    /// does not name them whole (it is in the sink and not read, but a copy elsewhere would be).
    fn writers() -> Vec<String> {
        [
            ["print", "ln!"],
            ["print", "!"],
            ["eprint", "ln!"],
            ["eprint", "!"],
            ["db", "g!"],
            ["io::std", "out"],
            ["io::std", "err"],
        ]
        .iter()
        .map(|h| h.concat())
        .collect()
    }

    /// The lines of `text` (numbered from 1) that write around the sink: code before the test
    /// module, comments left out.
    fn around_the_sink(text: &str) -> Vec<(usize, String)> {
        let writers = writers();
        let mut found = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("mod tests") {
                break;
            }
            let code = line.split("//").next().unwrap_or("");
            if writers.iter().any(|w| code.contains(w.as_str())) {
                found.push((n + 1, line.trim().to_string()));
            }
        }
        found
    }

    /// Issue 20's one sink: no file of `src/app` outside `print/` writes to stdout or stderr
    /// itself (`generate.rs` is compiled for the tests only). A line that does is named `file:line`.
    #[test]
    fn nothing_in_the_application_writes_around_the_sink() {
        fn walk(dir: &Path, src: &Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let rel = path
                    .strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                if ["app/print", "app/generate.rs"].contains(&&*rel) {
                    continue;
                }
                if path.is_dir() {
                    walk(&path, src, found);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for (n, line) in around_the_sink(&text) {
                        found.push(format!("src/{rel}:{n}: {line}"));
                    }
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        walk(&src.join("app"), &src, &mut found);
        assert!(
            found.is_empty(),
            "these lines write to stdout or stderr around the sink (src/app/print):\n{}",
            found.join("\n")
        );
    }

    /// The reader above on a made-up file, so that the test cannot pass by finding nothing.
    #[test]
    fn a_write_around_the_sink_is_found() {
        let w = writers();
        let text = format!(
            "fn a() {{\n    {}(\"x\");\n    // {}(\"a comment\");\n    let _ = {}().lock();\n    \
             stderr!(\"fine\");\n}}\nmod tests {{\n    fn b() {{ {}(\"in a test\"); }}\n}}\n",
            w[2], w[0], w[5], w[0]
        );
        let found = around_the_sink(&text);
        let lines: Vec<usize> = found.iter().map(|(n, _)| *n).collect();
        assert_eq!(lines, [2, 4], "{found:?}");
    }
}
