//! The interactive console: line editing, history in the platform data directory, completion,
//! `:` meta-commands, and reconnecting (with back-off) when the server went away.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{DefaultHistory, History};
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Context, Editor, Helper};

use rconsole::ErrorKind;

use crate::app::exit::Exit;
use crate::app::interrupt;
use crate::app::print::stderr;
use crate::app::runner::session::{CommandOutcome, Session};

/// The environment variable that overrides the history file's path (for tests and for people
/// who keep dotfiles elsewhere).
pub const HISTORY_ENV: &str = "RCON_HISTORY";

/// Most history entries kept.
const HISTORY_MAX: usize = 1000;

/// Reconnect attempts when the server is down: the first at once, then after pauses on the
/// one retry schedule ([`rconsole::engine::retry_pause`]) from [`RECONNECT_FIRST_PAUSE`]:
/// 0.5, 1, 2 and 4 s, about 7.5 s in all.
const RECONNECT_ATTEMPTS: u32 = 5;

/// The pause before the console's second reconnect attempt.
const RECONNECT_FIRST_PAUSE: Duration = Duration::from_millis(500);

/// The pause before reconnect attempt `attempt` (0 for the first, which goes at once).
fn reconnect_pause(attempt: u32) -> Duration {
    match attempt {
        0 => Duration::ZERO,
        n => rconsole::engine::retry_pause(RECONNECT_FIRST_PAUSE, n),
    }
}

/// The console's own commands, with their help lines.
const META: [(&str, &str); 7] = [
    (":help", "this list"),
    (":quit", "leave the console (also :exit, :q, Ctrl-D)"),
    (":reconnect", "close the connection and log in again"),
    (
        ":forget",
        "forget how this server's answers end and probe it again",
    ),
    (
        ":history",
        "show the stored history (:history N for the last N)",
    ),
    (":clear", "clear the screen"),
    (":exit", "leave the console"),
];

/// Java Edition command names, for completion.
const VANILLA: [&str; 86] = [
    "advancement",
    "attribute",
    "ban",
    "ban-ip",
    "banlist",
    "bossbar",
    "clear",
    "clone",
    "damage",
    "data",
    "datapack",
    "debug",
    "defaultgamemode",
    "deop",
    "difficulty",
    "effect",
    "enchant",
    "execute",
    "experience",
    "fill",
    "fillbiome",
    "forceload",
    "function",
    "gamemode",
    "gamerule",
    "give",
    "help",
    "item",
    "jfr",
    "kick",
    "kill",
    "list",
    "locate",
    "loot",
    "me",
    "msg",
    "op",
    "pardon",
    "pardon-ip",
    "particle",
    "perf",
    "place",
    "playsound",
    "publish",
    "random",
    "recipe",
    "reload",
    "return",
    "ride",
    "rotate",
    "save-all",
    "save-off",
    "save-on",
    "say",
    "schedule",
    "scoreboard",
    "seed",
    "setblock",
    "setidletimeout",
    "setworldspawn",
    "spawnpoint",
    "spectate",
    "spreadplayers",
    "stop",
    "stopsound",
    "summon",
    "tag",
    "team",
    "teammsg",
    "teleport",
    "tell",
    "tellraw",
    "test",
    "tick",
    "time",
    "title",
    "tm",
    "tp",
    "transfer",
    "trigger",
    "w",
    "weather",
    "whitelist",
    "worldborder",
    "xp",
    "dialog",
];

/// Where history is kept: `RCON_HISTORY`, else `history.txt` in the data directory (never the
/// working directory). `None` when neither can be found.
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(HISTORY_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    crate::app::learned::data_dir().map(|d| d.join("history.txt"))
}

/// Whether a line may be written to history: not blank, not containing the password, and no
/// meta-command except the known ones that take no argument (a future one might carry a secret).
pub fn should_store(line: &str, password: &str) -> bool {
    let line = line.trim();
    if line.is_empty() {
        return false;
    }
    if !password.is_empty() && line.contains(password) {
        return false;
    }
    if line.starts_with(':') {
        return META.iter().any(|(name, _)| *name == line);
    }
    true
}

/// Completion candidates for the word before `pos`: command names (vanilla list, or the
/// meta-commands after `:`) for the first word, and words seen in history anywhere.
pub fn candidates(
    line: &str,
    pos: usize,
    history_words: &BTreeSet<String>,
) -> (usize, Vec<String>) {
    let before = &line[..pos];
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &before[start..];
    let first = before[..start].trim().is_empty();
    let mut out = BTreeSet::new();
    if first {
        if word.starts_with(':') {
            out.extend(
                META.iter()
                    .map(|(m, _)| *m)
                    .chain([":q"])
                    .filter(|m| m.starts_with(word))
                    .map(str::to_string),
            );
        } else {
            let (slash, bare) = match word.strip_prefix('/') {
                Some(b) => ("/", b),
                None => ("", word),
            };
            out.extend(
                VANILLA
                    .iter()
                    .filter(|c| c.starts_with(bare))
                    .map(|c| format!("{slash}{c}")),
            );
        }
    }
    if !word.is_empty() && !word.starts_with(':') {
        out.extend(
            history_words
                .iter()
                .filter(|w| w.starts_with(word) && w.as_str() != word)
                .cloned(),
        );
    }
    let mut out: Vec<String> = out.into_iter().collect();
    // A single match is complete: add the space that comes next, as shells do.
    if let [only] = out.as_mut_slice() {
        only.push(' ');
    }
    (start, out)
}

/// The rustyline helper: completion only.
struct ConsoleHelper {
    words: BTreeSet<String>,
    /// The server's own completion, when it offers one (a management server with MSMP
    /// Enhanced, issue 42): asked first, the local list when it has nothing.
    server: Option<rconsole::engine::Suggest>,
}

/// The server's completion of the line before the cursor (a leading `/` is not the server's
/// to see), with the space after a single candidate as [`candidates`] adds it; `None` for a
/// `:` meta-command or when the server has nothing to offer.
fn server_candidates(
    suggest: &rconsole::engine::Suggest,
    line: &str,
    pos: usize,
) -> Option<(usize, Vec<String>)> {
    let before = &line[..pos];
    let slash = usize::from(before.starts_with('/'));
    if before.starts_with(':') {
        return None;
    }
    let (start, mut out) = suggest(&before[slash..])?;
    out.retain(|c| !c.is_empty());
    if out.is_empty() || !before.is_char_boundary(slash + start) {
        return None;
    }
    if let [only] = out.as_mut_slice() {
        only.push(' ');
    }
    Some((slash + start, out))
}

impl ConsoleHelper {
    fn learn(&mut self, line: &str) {
        for w in line.split_whitespace() {
            if w.chars().count() >= 2 && !w.starts_with(':') {
                self.words.insert(w.to_string());
            }
        }
    }
}

impl Completer for ConsoleHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let asked = self
            .server
            .as_ref()
            .and_then(|s| server_candidates(s, line, pos));
        Ok(asked.unwrap_or_else(|| candidates(line, pos, &self.words)))
    }
}

impl Hinter for ConsoleHelper {
    type Hint = String;
}
impl Highlighter for ConsoleHelper {}
impl Validator for ConsoleHelper {}
impl Helper for ConsoleHelper {}

/// The stored history: a plain file, one command per line, written whole (0600 on Unix).
struct HistoryFile {
    path: Option<PathBuf>,
    entries: Vec<String>,
}

impl HistoryFile {
    fn load(path: Option<PathBuf>, password: &str) -> Self {
        let entries = path
            .as_deref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|text| {
                let mut seen = BTreeSet::new();
                let mut kept: Vec<String> = text
                    .lines()
                    .rev()
                    .filter(|l| should_store(l, password) && seen.insert(l.to_string()))
                    .map(str::to_string)
                    .collect();
                kept.truncate(HISTORY_MAX);
                kept.reverse();
                kept
            })
            .unwrap_or_default();
        Self { path, entries }
    }

    /// Adds a line (moving an earlier copy to the end); returns whether the list changed.
    fn add(&mut self, line: &str) -> bool {
        if self.entries.last().is_some_and(|l| l == line) {
            return false;
        }
        self.entries.retain(|l| l != line);
        self.entries.push(line.to_string());
        if self.entries.len() > HISTORY_MAX {
            let extra = self.entries.len() - HISTORY_MAX;
            self.entries.drain(..extra);
        }
        true
    }

    fn save(&self) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension("txt.tmp");
        {
            let mut f = create_private(&tmp)?;
            let mut text = self.entries.join("\n");
            text.push('\n');
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    }
}

fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path)
}

/// What the console knows besides the session.
pub struct ConsoleContext {
    /// Shown in the prompt: a profile name or `host:port`.
    pub name: String,
    /// The password in effect, so history never stores it.
    pub password: String,
    /// A line that leaves the console like `:quit` (rcon-cli's `exit`), never sent.
    pub quit_word: Option<&'static str>,
}

/// Runs the console until `:quit` or Ctrl-D.
pub fn run(session: &mut Session, settings: &ConsoleContext) -> anyhow::Result<Exit> {
    // Ctrl-C while a command runs abandons that command, as in a shell: the terminal is out of
    // raw mode then, so it arrives as a signal (at the prompt the line editor reads it as a key
    // and clears the line).
    let caught = interrupt::catch();
    let interrupted: Arc<AtomicBool> = caught.clone().unwrap_or_default();
    if caught.is_some() {
        session.set_cancel(Arc::clone(&interrupted));
    }
    connect_first(session)?;
    let server = session.server().to_string();
    let word = settings
        .quit_word
        .map(|w| format!("{w}, "))
        .unwrap_or_default();
    stderr!(
        "rcon: connected to {server}; :help lists console commands, {word}:quit or Ctrl-D leaves"
    );
    let mut history = HistoryFile::load(history_path(), &settings.password);
    let mut helper = ConsoleHelper {
        words: BTreeSet::new(),
        server: None,
    };
    for line in &history.entries {
        helper.learn(line);
    }
    let mut editor = new_editor(session, &history, helper)?;
    let prompt = format!("{}> ", settings.name);
    let mut warned_history = false;
    loop {
        ask_the_server(&mut editor, session);
        let input = match editor.readline(&prompt) {
            Ok(input) => input,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => return Ok(Exit::Success),
            Err(e) => return Err(e.into()),
        };
        // A paste of several lines arrives as one input: each line is a command.
        let lines: Vec<&str> = input.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if settings.quit_word == Some(line) {
                return Ok(Exit::Success);
            }
            if should_store(line, &settings.password) && history.add(line) {
                remember(line, &history, &mut editor, &mut warned_history)?;
            }
            if let Some(meta) = line.strip_prefix(':') {
                match meta_command(meta, session, &history, &mut editor, &interrupted)? {
                    Flow::Quit => return Ok(Exit::Success),
                    Flow::Continue => continue,
                }
            }
            // The rest of a paste is not sent after a command that could not go out or was
            // interrupted: the lines of this input, and whatever the line editor already read
            // past the Enter (a paste without bracketed paste, keys typed ahead).
            let rest = lines[i + 1..]
                .iter()
                .filter(|l| !l.trim().is_empty())
                .count();
            if !ensure_connected(session, true, &interrupted) {
                stop_paste(rest, session, &history, &mut editor)?;
                break;
            }
            interrupted.store(false, Ordering::SeqCst);
            let outcome = session.run_with(line, crate::app::runner::session::Run::printed())?;
            if !say_how_it_went(&outcome) {
                stop_paste(rest, session, &history, &mut editor)?;
                break;
            }
        }
    }
}

/// Connects before the first prompt. Ctrl-C while the first connection waits (--wait,
/// --retry) or logs in ends rcon, as there is no console yet to go back to.
fn connect_first(session: &mut Session) -> anyhow::Result<()> {
    match session.connect() {
        Err(rconsole::Error::Cancelled) => Err(crate::app::exit::fail(
            Exit::Interrupted,
            format!(
                "interrupted by Ctrl-C while connecting to {}",
                session.server()
            ),
        )),
        Err(e) => Err(e.into()),
        Ok(_) => Ok(()),
    }
}

/// After `history` took `line`: the editor's history follows, completion learns its words,
/// and the file is saved (a failure to save said once, `warned`).
fn remember(
    line: &str,
    history: &HistoryFile,
    editor: &mut ConsoleEditor,
    warned: &mut bool,
) -> anyhow::Result<()> {
    editor.history_mut().clear()?;
    for entry in &history.entries {
        editor.add_history_entry(entry.as_str())?;
    }
    if let Some(h) = editor.helper_mut() {
        h.learn(line);
    }
    if let Err(e) = history.save()
        && !*warned
    {
        *warned = true;
        let where_ = history
            .path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        crate::app::print::output::warning(&format!("cannot save history to {where_}: {e}"));
    }
    Ok(())
}

/// Says what went wrong with a command, if anything; `false` when Ctrl-C abandoned it, so the
/// rest of a paste is not sent.
fn say_how_it_went(outcome: &CommandOutcome) -> bool {
    if let Some(rconsole::Error::Cancelled) = &outcome.error {
        stderr!(
            "rcon: interrupted: the command was abandoned and the connection closed (the next command reconnects)"
        );
        return false;
    }
    if let Some(e) = &outcome.error {
        let hint = if e.kind() == ErrorKind::Refused {
            ""
        } else {
            " (the next command reconnects)"
        };
        stderr!("rcon: error: {e}{hint}");
    } else if outcome.stopped {
        stderr!(
            "rcon: the server is stopping; the connection is closed so it can shut down (the next command reconnects)"
        );
    }
    true
}

type ConsoleEditor = Editor<ConsoleHelper, DefaultHistory>;

/// Completes from the connection's own completion, if it offers one (looked at before each
/// line: a reconnect brings a new connection).
fn ask_the_server(editor: &mut ConsoleEditor, session: &mut Session) {
    let server = session.client().and_then(|c| c.suggest());
    if let Some(h) = editor.helper_mut() {
        h.server = server;
    }
}

/// A line editor with the console's settings, `history` and `helper`; server messages (BattlEye,
/// WebRCON, telnet) show above its prompt as they arrive.
fn new_editor(
    session: &mut Session,
    history: &HistoryFile,
    helper: ConsoleHelper,
) -> anyhow::Result<ConsoleEditor> {
    let config = Config::builder()
        .auto_add_history(false)
        .history_ignore_dups(false)?
        .max_history_size(HISTORY_MAX)?
        .completion_type(CompletionType::List)
        .build();
    let mut editor: ConsoleEditor = Editor::with_config(config)?;
    for line in &history.entries {
        editor.add_history_entry(line.as_str())?;
    }
    editor.set_helper(Some(helper));
    if let Ok(printer) = editor.create_external_printer() {
        session.set_messages(crate::app::print::messages::live_sink(printer), true);
    }
    Ok(editor)
}

/// Says how many lines of a bracketed paste (`rest`) are not sent, and drops what was typed or
/// pasted ahead of the prompt.
fn stop_paste(
    rest: usize,
    session: &mut Session,
    history: &HistoryFile,
    editor: &mut ConsoleEditor,
) -> anyhow::Result<()> {
    if rest > 0 {
        stderr!("rcon: {rest} more pasted line(s) not sent");
    }
    discard_typed_ahead(session, history, editor)
}

/// Drops input read or typed ahead and not yet edited: what the line editor holds past the last
/// Enter (it keeps that from one line to the next, so a paste without bracketed paste runs
/// line by line) goes with a fresh editor, and on Unix what waits in the terminal's queue is
/// flushed.
fn discard_typed_ahead(
    session: &mut Session,
    history: &HistoryFile,
    editor: &mut ConsoleEditor,
) -> anyhow::Result<()> {
    let helper = editor
        .helper_mut()
        .map(|h| std::mem::take(&mut h.words))
        .unwrap_or_default();
    let helper = ConsoleHelper {
        words: helper,
        server: None,
    };
    *editor = new_editor(session, history, helper)?;
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() {
            // SAFETY: tcflush on the process's own stdin, a terminal; no memory is passed.
            unsafe {
                libc::tcflush(libc::STDIN_FILENO, libc::TCIFLUSH);
            }
        }
    }
    Ok(())
}

enum Flow {
    Continue,
    Quit,
}

fn meta_command(
    meta: &str,
    session: &mut Session,
    history: &HistoryFile,
    editor: &mut ConsoleEditor,
    interrupted: &AtomicBool,
) -> anyhow::Result<Flow> {
    let mut words = meta.split_whitespace();
    let name = words.next().unwrap_or("");
    let arg = words.next();
    match name {
        "q" | "quit" | "exit" => return Ok(Flow::Quit),
        "help" => {
            let mut text =
                String::from("Console commands (anything else is sent to the server):\n");
            for (m, what) in META.iter().filter(|(m, _)| *m != ":exit") {
                text.push_str(&format!("  {m:<12} {what}\n"));
            }
            text.push_str(
                "Tab completes command names and words from history; Ctrl-C clears the line.\n",
            );
            crate::app::print::output::print_text(&text)?;
        }
        "history" => {
            let n = match arg.map(str::parse::<usize>) {
                None => history.entries.len(),
                Some(Ok(n)) => n,
                Some(Err(_)) => {
                    stderr!("rcon: :history takes a number (how many recent entries)");
                    return Ok(Flow::Continue);
                }
            };
            let skip = history.entries.len().saturating_sub(n);
            let mut text = String::new();
            for (i, e) in history.entries.iter().enumerate().skip(skip) {
                text.push_str(&format!("{:>5}  {e}\n", i + 1));
            }
            crate::app::print::output::print_text(&text)?;
        }
        "reconnect" => {
            if let Some(c) = session.client() {
                c.close();
            }
            ensure_connected(session, false, interrupted);
        }
        "forget" => {
            session.forget();
            stderr!(
                "rcon: forgot what was learned about {}; the next command probes it again",
                session.server()
            );
        }
        "clear" => editor.clear_screen()?,
        _ => stderr!("rcon: unknown console command ':{name}' (:help lists them)"),
    }
    Ok(Flow::Continue)
}

/// Makes sure the session has a live connection, reconnecting with back-off if the server went
/// away. Says what it does on stderr; `for_command`: a typed command waits on it (not so for
/// `:reconnect`), so a failure says it was not sent. Returns false when the server stays
/// unreachable, or when Ctrl-C (`interrupted`) stops the back-off: at once, also during a
/// pause between attempts.
fn ensure_connected(session: &mut Session, for_command: bool, interrupted: &AtomicBool) -> bool {
    let unsent = if for_command {
        "; the command was not sent"
    } else {
        ""
    };
    let server = session.server().to_string();
    let had_connection = match session.client() {
        Some(c) => {
            let was = c.is_connected();
            if was && c.check_open() {
                return true;
            }
            was
        }
        None => false,
    };
    if had_connection {
        stderr!("rcon: the server closed the connection; reconnecting to {server}");
    } else {
        stderr!("rcon: reconnecting to {server}");
    }
    let stopped = || {
        stderr!("rcon: interrupted: stopped reconnecting to {server}{unsent}");
        false
    };
    // A Ctrl-C that came before this (none can at the prompt, where it is a key) is not for
    // this back-off.
    interrupted.store(false, Ordering::SeqCst);
    let mut waited = Duration::ZERO;
    for attempt in 0..RECONNECT_ATTEMPTS {
        let delay = reconnect_pause(attempt);
        if !delay.is_zero() {
            if pause(delay, interrupted) {
                return stopped();
            }
            waited += delay;
        }
        let result = match session.client() {
            Some(c) => c.reconnect(),
            None => session.connect().map(|_| ()),
        };
        if matches!(result, Err(rconsole::Error::Cancelled))
            || interrupted.swap(false, Ordering::SeqCst)
        {
            // Ctrl-C during the attempt: a login that went through is kept.
            if result.is_ok() {
                stderr!("rcon: reconnected to {server}");
                return true;
            }
            return stopped();
        }
        match result {
            Ok(()) => {
                stderr!("rcon: reconnected to {server}");
                return true;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::Connect | ErrorKind::Timeout | ErrorKind::Connection
                ) =>
            {
                if attempt + 1 < RECONNECT_ATTEMPTS {
                    stderr!(
                        "rcon: cannot reach {server} ({e}); retrying in {}",
                        rconsole::format_duration(reconnect_pause(attempt + 1))
                    );
                } else {
                    stderr!(
                        "rcon: error: {server} is still down after {RECONNECT_ATTEMPTS} attempts over {}: {e}{unsent} (the next command tries again)",
                        rconsole::format_duration(waited)
                    );
                }
            }
            Err(e) => {
                stderr!("rcon: error: {e}{unsent}");
                return false;
            }
        }
    }
    false
}

/// Sleeps for `delay`; true (and the flag cleared) when Ctrl-C cut it short.
fn pause(delay: Duration, interrupted: &AtomicBool) -> bool {
    crate::app::interrupt::pause_until(delay, || interrupted.swap(false, Ordering::SeqCst))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_servers_completion_comes_first_and_a_slash_is_kept_from_it() {
        let suggest: rconsole::engine::Suggest = std::sync::Arc::new(|partial: &str| {
            assert!(!partial.starts_with('/'), "{partial}");
            match partial {
                "ti" => Some((0, vec!["time".into(), "tick".into()])),
                "time s" => Some((5, vec!["set".into()])),
                _ => Some((0, Vec::new())),
            }
        });
        let ask = |line: &str| super::server_candidates(&suggest, line, line.len());
        assert_eq!(ask("ti"), Some((0, vec!["time".into(), "tick".into()])));
        assert_eq!(ask("/time s"), Some((6, vec!["set ".into()])));
        // Nothing from the server, or a meta-command: the local list answers.
        assert_eq!(ask("zz"), None);
        assert_eq!(ask(":rec"), None);
    }

    #[test]
    fn reconnects_follow_the_one_retry_schedule() {
        use std::time::Duration;
        let pauses: Vec<Duration> = (0..super::RECONNECT_ATTEMPTS)
            .map(super::reconnect_pause)
            .collect();
        let ms = Duration::from_millis;
        assert_eq!(pauses, [ms(0), ms(500), ms(1000), ms(2000), ms(4000)]);
    }

    use super::*;

    #[test]
    fn completes_command_names() {
        let none = BTreeSet::new();
        assert_eq!(
            candidates("gam", 3, &none),
            (0, vec!["gamemode".into(), "gamerule".into()])
        );
        assert_eq!(
            candidates("/gamem", 6, &none),
            (0, vec!["/gamemode ".into()])
        );
        assert_eq!(candidates(":re", 3, &none), (0, vec![":reconnect ".into()]));
        // Not the first word: only history words.
        assert_eq!(candidates("say gam", 7, &none), (4, vec![]));
    }

    #[test]
    fn completes_history_words() {
        let words: BTreeSet<String> = ["Notch".to_string(), "minecraft:stone".to_string()].into();
        assert_eq!(candidates("give No", 7, &words), (5, vec!["Notch ".into()]));
        assert_eq!(
            candidates("setblock ~ ~ ~ mine", 19, &words),
            (15, vec!["minecraft:stone ".into()])
        );
        assert_eq!(candidates("give ", 5, &words), (5, vec![]));
    }

    #[test]
    fn history_filter() {
        assert!(should_store("list", "pw"));
        assert!(!should_store("   ", "pw"));
        assert!(!should_store("say my pw is hunter2", "hunter2"));
        assert!(should_store(":quit", "pw"));
        assert!(!should_store(":login secret", "pw"));
        assert!(should_store("anything", ""));
    }

    #[test]
    fn history_file_dedups_and_persists() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("history.txt");
        let mut h = HistoryFile::load(Some(path.clone()), "pw");
        assert!(h.add("list"));
        assert!(h.add("seed"));
        assert!(!h.add("seed"));
        assert!(h.add("list"));
        h.save().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "seed\nlist\n");
        std::fs::write(&path, "a\nsay pw\nb\na\n\n").unwrap();
        let h = HistoryFile::load(Some(path), "pw");
        assert_eq!(h.entries, ["b", "a"]);
    }
}
