//! What the engine learned about each server (how its answers end, its round trip and answer
//! latency), remembered in `learned-servers.toml` in the data directory so that the probe, its
//! reconnects and its note happen once per server, not once per run.
//!
//! The file holds no secrets: a key is `host:port dialect` (with the tunnel, if any), a value is
//! the method's name, two durations, a sample count and when it was learned. It is rewritten
//! whole through a temporary file and a rename, so two `rcon`s writing at once leave one of their
//! versions, never a torn file; a corrupt, missing or unwritable file counts as empty and is
//! never an error (at worst the probe runs again).
//!
//! Where that directory is ([`data_dir`]) is said here, the lowest module that keeps a file
//! there; the console's history and the batch journal keep theirs beside it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rconsole::engine::{Learned, Traced};
use rconsole::rcon::client::{ClientOptions, Observer};
use rconsole::rcon::exchange::{EndDetection, EndMethod, ServerFacts};
use serde::{Deserialize, Serialize};

/// The variable that overrides the data directory (history, learned servers). Windows ignores
/// `APPDATA` when it looks up known folders, so this is also how tests keep their files private
/// on every platform.
pub const DATA_DIR_ENV: &str = "RCON_DATA_DIR";

/// The data directory: `RCON_DATA_DIR` when set and not empty, else the platform's data directory
/// for `rconsole` (`$XDG_DATA_HOME/rconsole` or `~/.local/share/rconsole` on Linux and BSD,
/// `~/Library/Application Support/rconsole` on macOS, `%APPDATA%\rconsole\data` on Windows).
/// `None` when the platform has no home directory.
pub fn data_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(DATA_DIR_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    directories::ProjectDirs::from("", "", "rconsole").map(|d| d.data_dir().to_path_buf())
}

/// The file name inside the data directory.
pub const FILE_NAME: &str = "learned-servers.toml";

#[derive(Debug, Default, Serialize, Deserialize)]
struct LearnedToml {
    #[serde(default)]
    servers: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    method: String,
    rtt_us: u64,
    latency_us: u64,
    samples: u32,
    /// The server answers a sentinel with a login failure, in order.
    #[serde(default)]
    refuses_sentinel: bool,
    /// Seconds since the Unix epoch: when this method was learned (kept while later runs only
    /// add samples).
    learned_at: u64,
    /// How it was learned: `probe` (the first session's probe and answers), or `changed from
    /// METHOD` (a session's answers contradicted what was remembered).
    #[serde(default)]
    how: String,
}

/// The key a server is remembered under.
pub fn key(server: &str, dialect: rconsole::Dialect) -> String {
    format!("{server} {}", dialect.name)
}

/// Found once per process: a one-shot reads the store, then may update it (read again and
/// written), and each lookup of the data directory (`directories` resolves every base
/// directory) cost a one-shot about 25,000 instructions (callgrind, BENCHMARKS.md).
fn path() -> Option<PathBuf> {
    static PATH: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PATH.get_or_init(|| data_dir().map(|d| d.join(FILE_NAME)))
        .clone()
}

fn read() -> LearnedToml {
    path()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| toml::from_str(&text).ok())
        .unwrap_or_default()
}

fn write(model: &LearnedToml) {
    let Some(path) = path() else { return };
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(text) = toml::to_string(model) else {
        return;
    };
    let tmp = dir.join(format!(".{FILE_NAME}.{}", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

fn to_learned(e: &Entry) -> Option<ServerFacts> {
    Some(ServerFacts {
        method: EndMethod::from_name(&e.method)?,
        rtt: Duration::from_micros(e.rtt_us),
        latency: Duration::from_micros(e.latency_us),
        samples: e.samples,
        refuses_sentinel: e.refuses_sentinel,
    })
}

/// The entry for `l`, over the `old` one: the same method keeps when and how it was learned,
/// another one says what it replaced.
fn entry(old: Option<&Entry>, l: ServerFacts) -> Entry {
    let method = l.method.name().to_string();
    let (learned_at, how) = match old {
        Some(old) if old.method == method => (old.learned_at, old.how.clone()),
        Some(old) => (now(), format!("changed from {}", old.method)),
        None => (now(), "probe".to_string()),
    };
    Entry {
        method,
        rtt_us: l.rtt.as_micros().min(u128::from(u64::MAX)) as u64,
        latency_us: l.latency.as_micros().min(u128::from(u64::MAX)) as u64,
        samples: l.samples,
        refuses_sentinel: l.refuses_sentinel,
        learned_at,
        how,
    }
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A fleet's view of the file while [`defer`] is on: read once, changes written once at the end.
struct Deferred {
    model: LearnedToml,
    /// What this run learned or forgot, by key, to apply over the file as it is at the end.
    changes: BTreeMap<String, Option<Entry>>,
}

static DEFERRED: Mutex<Option<Deferred>> = Mutex::new(None);

/// With `true`, reads the file once and keeps what is learned in memory; with `false`, writes
/// what was learned meanwhile in one go (over the file as it is then, so entries another `rcon`
/// wrote are kept). A fleet of ten thousand servers would otherwise read and rewrite the whole
/// file once per server.
pub fn defer(on: bool) {
    let mut deferred = DEFERRED.lock().unwrap_or_else(|e| e.into_inner());
    if on {
        *deferred = Some(Deferred {
            model: read(),
            changes: BTreeMap::new(),
        });
        return;
    }
    let Some(done) = deferred.take() else { return };
    if done.changes.is_empty() {
        return;
    }
    let mut model = read();
    for (key, entry) in done.changes {
        match entry {
            Some(e) => model.servers.insert(key, e),
            None => model.servers.remove(&key),
        };
    }
    write(&model);
}

/// What is remembered for `key`.
pub fn load(key: &str) -> Option<ServerFacts> {
    let deferred = DEFERRED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = deferred.as_ref() {
        return d.model.servers.get(key).and_then(to_learned);
    }
    drop(deferred);
    let entry = read().servers.remove(key);
    let learned = entry.as_ref().and_then(to_learned);
    LOADED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key.to_string(), entry);
    learned
}

/// What [`load`] found in the file for each server this run (`None`: nothing), for [`store`].
static LOADED: Mutex<BTreeMap<String, Option<Entry>>> = Mutex::new(BTreeMap::new());

/// Remembers `learned` for `key` (`None` forgets it). Reads the file again first, so entries
/// another `rcon` wrote meanwhile are kept.
pub fn store(key: &str, learned: Option<ServerFacts>) {
    let mut deferred = DEFERRED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = deferred.as_mut() {
        let entry = learned.map(|l| entry(d.model.servers.get(key), l));
        match &entry {
            Some(e) => d.model.servers.insert(key.to_string(), e.clone()),
            None => d.model.servers.remove(key),
        };
        d.changes.insert(key.to_string(), entry);
        return;
    }
    drop(deferred);
    // What this run loaded for the server, when nothing that matters changed since: the file
    // is neither read again nor rewritten (a one-shot's second TOML parse: 32,000
    // instructions, callgrind).
    let loaded = LOADED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(key)
        .cloned();
    if let Some(old) = loaded {
        let unchanged = match learned {
            Some(l) => old
                .as_ref()
                .is_some_and(|o| close_enough(o, &entry(Some(o), l))),
            None => old.is_none(),
        };
        if unchanged {
            return;
        }
    }
    let mut model = read();
    let changed = match learned {
        Some(l) => {
            let entry = entry(model.servers.get(key), l);
            let same = model
                .servers
                .get(key)
                .is_some_and(|old| close_enough(old, &entry));
            model.servers.insert(key.to_string(), entry);
            !same
        }
        None => model.servers.remove(key).is_some(),
    };
    LOADED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key.to_string(), model.servers.get(key).cloned());
    if changed {
        write(&model);
    }
}

/// Whether `new` is worth no rewrite over `old`: the same method, and neither the first few
/// timed answers (the gap's floor depends on them) nor answers that got slower by a quarter
/// or faster by half. Not rewritten on every run.
fn close_enough(old: &Entry, new: &Entry) -> bool {
    let trusted = rconsole::rcon::exchange::TRUSTED_SAMPLES;
    old.method == new.method
        && old.refuses_sentinel == new.refuses_sentinel
        && (old.samples == new.samples || (old.samples >= trusted && new.samples >= trusted))
        && new.latency_us <= old.latency_us + old.latency_us / 4
        && new.latency_us >= old.latency_us / 2
        && new.rtt_us <= old.rtt_us.saturating_mul(2).max(1000)
}

/// One line for `--print-config`: what is remembered for `key` and when.
pub fn describe(key: &str) -> String {
    let model = read();
    let Some(entry) = model.servers.get(key) else {
        return "nothing yet (the first session probes the server)".to_string();
    };
    let Some(l) = to_learned(entry) else {
        return format!("unreadable entry in {FILE_NAME} (the next session probes again)");
    };
    let age = now().saturating_sub(entry.learned_at);
    format!(
        "answers end by {}; round trip {}, slowest answer {} over {} command{}; learned {} ago",
        l.method.name(),
        fine_duration(l.rtt),
        fine_duration(l.latency),
        l.samples,
        if l.samples == 1 { "" } else { "s" },
        human_age(age)
    )
}

/// `--learned`: one line per remembered server (its key, method, when and how it was learned,
/// how many answers were timed), or a line saying there is none, and where the file is.
pub fn list() -> String {
    let model = read();
    let file = path().map_or_else(|| FILE_NAME.into(), |p| p.display().to_string());
    if model.servers.is_empty() {
        return format!("nothing remembered yet ({file})\n");
    }
    let width = model.servers.keys().map(|k| k.chars().count()).max();
    let width = width.unwrap_or(0);
    let mut out = String::new();
    for (key, e) in &model.servers {
        let how = if e.how.is_empty() { "probe" } else { &e.how };
        out.push_str(&format!(
            "{key:<width$}  {:<17}  learned {} ago ({how}), {} answer{}\n",
            e.method,
            human_age(now().saturating_sub(e.learned_at)),
            e.samples,
            if e.samples == 1 { "" } else { "s" },
        ));
    }
    out.push_str(&format!(
        "({file}; `rcon --learned --forget` with a server's address forgets it)\n"
    ));
    out
}

/// `--learned --forget`: forgets what is remembered for `key`; what happened, for stderr.
pub fn forget(key: &str) -> String {
    if !read().servers.contains_key(key) {
        return format!("nothing was remembered for {key}");
    }
    store(key, None);
    format!("forgot what was learned about {key} (the next session probes it)")
}

/// A duration that may be well under a millisecond: `40µs`, `1.5ms`, `2s`.
fn fine_duration(d: Duration) -> String {
    match d.as_micros() {
        0..=999 => format!("{}µs", d.as_micros()),
        1000..=9_999 => format!("{:.1}ms", d.as_secs_f64() * 1000.0),
        _ => rconsole::format_duration(d),
    }
}

fn human_age(secs: u64) -> String {
    match secs {
        0..=119 => format!("{secs}s"),
        120..=7199 => format!("{}m", secs / 60),
        7200..=172_799 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// Makes `opts` use and update what is remembered for `key`: loads it (unless `forget`, which
/// drops it, or a method is forced) and wraps the observer so that new knowledge is stored.
pub fn attach(opts: &mut ClientOptions, key: String, forget: bool) {
    if opts.end != EndDetection::Detect {
        return;
    }
    if forget {
        store(&key, None);
    }
    let last = if forget { None } else { load(&key) };
    opts.learned = last.map(Learned::new);
    let inner = Arc::clone(&opts.observer);
    opts.observer = Arc::new(Remember {
        inner,
        key,
        last: Mutex::new(last),
    });
}

/// Stores what the engine learns, then passes everything on.
struct Remember {
    inner: Arc<dyn Observer>,
    key: String,
    last: Mutex<Option<ServerFacts>>,
}

impl Remember {
    fn remember(&self, learned: Option<ServerFacts>) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if *last != learned {
            *last = learned;
            store(&self.key, learned);
        }
    }
}

impl Observer for Remember {
    fn warning(&self, message: &str) {
        self.inner.warning(message);
    }
    fn note(&self, message: &str) {
        self.inner.note(&format!(
            "{message} (learned once and remembered; `rcon --forget` probes again)"
        ));
    }
    fn trace(&self, traced: &Traced) {
        self.inner.trace(traced);
    }
    fn wants_packets(&self) -> bool {
        self.inner.wants_packets()
    }
    /// Only RCON learns, and what it learned is its [`ServerFacts`].
    fn learned(&self, learned: Option<Learned>) {
        match learned {
            None => self.remember(None),
            Some(l) => {
                if let Some(facts) = l.get::<ServerFacts>() {
                    self.remember(Some(*facts));
                }
            }
        }
    }
}
