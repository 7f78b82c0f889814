//! Server messages (BattlEye, WebRCON, telnet push them; `--messages`): where they go in
//! one-shot and batch runs ([`message_sink`]) and in the console, above the prompt
//! ([`live_sink`]).

use std::sync::{Arc, Mutex};

use rconsole::consoles::MessageSink;

/// Where `--messages` sends server messages in one-shot and batch mode: stderr as
/// `[server] TEXT` (`[NAME] [server] TEXT` with `label`, in a fan-out over several servers), or
/// with `--json` an `"event":"message"` record (the one schema, [`crate::app::print::json`])
/// per message on stdout.
pub fn message_sink(json: bool, server: &str, label: bool) -> MessageSink {
    let server = server.to_string();
    Arc::new(move |text: &str| {
        if json {
            let now = std::time::SystemTime::now();
            let time = crate::app::print::json::utc_millis(now);
            let mut line = Vec::new();
            crate::app::print::json::JsonRecord::event(time, &server, "message", text)
                .write(&mut line);
            let _ = crate::app::print::output::write_stdout(&line);
        } else {
            for line in text.lines() {
                if label {
                    super::stderr!("[{server}] [server] {line}");
                } else {
                    super::stderr!("[server] {line}");
                }
            }
        }
    })
}

/// Server messages in the console: printed above the prompt through the line editor, so the
/// line being typed is redrawn below them, marked `[server]`.
pub fn live_sink(printer: impl rustyline::ExternalPrinter + Send + 'static) -> MessageSink {
    let printer = Mutex::new(printer);
    Arc::new(move |text: &str| {
        let mut p = printer.lock().unwrap_or_else(|e| e.into_inner());
        for line in text.lines() {
            let _ = p.print(format!("[server] {line}\n"));
        }
    })
}
