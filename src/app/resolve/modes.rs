//! The types the runners receive, defined with the plan ([`super::plan`]) that fills them: a
//! runner imports these from here, and nothing in `resolve` imports a runner.

use std::collections::HashMap;
use std::time::Duration;

use crate::app::exit::{Exit, fail};
use crate::app::print::output::Style;
use crate::app::resolve::settings::DEFAULT_TIMEOUT;
use crate::app::resolve::values::parse_host_port;

/// How often `--follow` asks RCON servers when `--poll` is not given.
pub const DEFAULT_POLL: Duration = Duration::from_secs(5);

/// How batch input runs.
#[derive(Debug, Clone, Default)]
pub struct BatchPolicy {
    /// Continue after a failed line.
    pub keep_going: bool,
    /// Pause between commands.
    pub delay: Option<Duration>,
    /// Print each command before its output.
    pub echo: bool,
    /// Values for `$(name)` in macro lines.
    pub macros: HashMap<String, String>,
    /// `--resume`: go on after the journal's last answered line.
    pub resume: bool,
    /// `--resend-in-doubt`: send the journal's line in doubt again.
    pub resend_in_doubt: bool,
    /// `--skip-in-doubt`: take the journal's line in doubt as run.
    pub skip_in_doubt: bool,
    /// `--retry N`: reconnect a lost batch up to N times.
    pub retry: u32,
}

impl BatchPolicy {
    /// Whether the run goes on after a failure with this exit status: with `--keep-going`,
    /// unless it is a refused login ([`Exit::passable`]).
    pub fn goes_on_after(&self, exit: Exit) -> bool {
        self.keep_going && exit.passable()
    }
}

/// The timed operations, resolved.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// `--countdown`: how long before the final commands.
    pub countdown: Option<Duration>,
    /// `--announce TEMPLATE` (`{left}` is the time left).
    pub announce: Option<String>,
    /// `--at`: announcement times instead of the default schedule.
    pub at: Vec<Duration>,
    /// `--then`: the final commands (before the command line's).
    pub then: Vec<String>,
    /// `--cancel-announce TEMPLATE`: said when Ctrl-C cancels the countdown.
    pub cancel_announce: Option<String>,
    /// `--every`: repeat the whole plan.
    pub every: Option<Duration>,
    /// `--if CONDITION`, parsed.
    pub condition: Option<Condition>,
    /// `--json`.
    pub json: bool,
}

/// `--follow`, resolved.
#[derive(Debug, Clone, Default)]
pub struct FollowOptions {
    /// NDJSON instead of text lines.
    pub json: bool,
    /// `--exec CMD`: run per event.
    pub exec: Option<String>,
    /// `--poll`: how often RCON servers are asked (default [`DEFAULT_POLL`]).
    pub poll: Option<Duration>,
    /// `--log-level`: console log lines (management protocol) below it are not shown.
    pub log_level: Option<crate::app::resolve::args::LogLevel>,
}

/// How the output of several servers is laid out on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Every line as `[NAME] line`, printed as each command completes.
    Prefix,
    /// Each server's output as one block under a `[NAME]` line, when the server is done.
    Group,
    /// One JSON object per command (or failure) per line.
    Json,
}

/// The run policy, as for one server, plus the fleet's limits.
#[derive(Debug, Clone, Copy)]
pub struct FanoutPolicy {
    /// Go on after a failed command.
    pub keep_going: bool,
    /// Pause between commands.
    pub delay: Option<Duration>,
    /// Print each command (`> COMMAND`) before its output.
    pub echo: bool,
    /// At most this many connections at once (`--parallel`).
    pub parallel: usize,
    /// Whether `--parallel` was given (a cap the descriptor limit forces lower is then said).
    pub parallel_given: bool,
    /// Connect retries (`--retry`).
    pub retries: u32,
    /// Draw a progress line on stderr (it is a terminal).
    pub progress: bool,
    /// `--messages`: show what BattlEye, WebRCON and telnet servers send on their own, labelled
    /// by server (`Some(true)`: as JSON records).
    pub messages: Option<bool>,
}

impl Default for FanoutPolicy {
    fn default() -> Self {
        Self {
            keep_going: false,
            delay: None,
            echo: false,
            parallel: rconsole::fleet::DEFAULT_PARALLEL,
            parallel_given: false,
            retries: 0,
            progress: false,
            messages: None,
        }
    }
}

/// The layout for the style and `--group`; `--raw` has none (bytes cannot be labelled).
pub fn layout(style: Style, group: bool) -> Option<Layout> {
    match style {
        Style::Json => Some(Layout::Json),
        Style::Raw => None,
        Style::Text { .. } if group => Some(Layout::Group),
        Style::Text { .. } => Some(Layout::Prefix),
    }
}

/// What `--ping` and `--query` fall back on: the host (without its RCON port) and the time
/// limit, from the flags, or from the profile `-s` names.
#[derive(Debug, Clone)]
pub struct ProbeDefaults {
    /// The host to ask when the flag names none.
    pub host: String,
    /// The time limit.
    pub timeout: Duration,
}

impl ProbeDefaults {
    /// From the flags alone (no config file): `--host` or localhost, `--timeout` or 10s.
    pub fn from_flags(
        host: Option<&str>,
        timeout: Option<Duration>,
    ) -> anyhow::Result<ProbeDefaults> {
        let host = match host {
            Some(h) => {
                parse_host_port(h)
                    .map_err(|why| fail(Exit::Usage, format!("--host: {why}")))?
                    .0
            }
            None => "localhost".into(),
        };
        Ok(ProbeDefaults {
            host,
            timeout: timeout.unwrap_or(DEFAULT_TIMEOUT),
        })
    }
}

/// `--ping` or `--query`, resolved.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Which, and its own options.
    pub kind: ProbeKind,
    /// The host and time limit when the flag names no host.
    pub defaults: ProbeDefaults,
    /// `--json`.
    pub json: bool,
    /// Colour in the text output.
    pub colour: bool,
    /// `--trace`: the bytes on stderr.
    pub trace: bool,
}

/// A status ping or a query, with the `HOST[:PORT]` given to the flag.
#[derive(Debug, Clone)]
pub enum ProbeKind {
    /// `--ping [HOST[:PORT]]`, `--legacy`.
    Ping { given: Option<String>, legacy: bool },
    /// `--query [HOST[:PORT]]`, `--full`.
    Query { given: Option<String>, full: bool },
}

/// `players < 5` and the like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition {
    op: &'static str,
    n: usize,
}

impl Condition {
    /// Parses `players OP N`, OP one of `< <= > >= == !=` (`=` counts as `==`).
    pub fn parse(text: &str) -> anyhow::Result<Condition> {
        let bad = || {
            fail(
                Exit::Usage,
                format!("--if '{text}': expected 'players OP N' with OP one of < <= > >= == !="),
            )
        };
        let t = text.trim();
        let rest = t.strip_prefix("players").ok_or_else(bad)?.trim_start();
        let (op, num) = ["<=", ">=", "==", "!=", "<", ">", "="]
            .iter()
            .find_map(|op| rest.strip_prefix(op).map(|n| (*op, n)))
            .ok_or_else(bad)?;
        let op = if op == "=" { "==" } else { op };
        let n = num.trim().parse().map_err(|_| bad())?;
        Ok(Condition { op, n })
    }

    /// Whether it holds for `players` online.
    pub fn holds(&self, players: usize) -> bool {
        match self.op {
            "<" => players < self.n,
            "<=" => players <= self.n,
            ">" => players > self.n,
            ">=" => players >= self.n,
            "==" => players == self.n,
            _ => players != self.n,
        }
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "players {} {}", self.op, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The resolver's direction (issue 20): no file under `src/app/resolve` names a runner, a
    /// source or a mode, so every type they receive is defined here or beside the plan.
    #[test]
    fn no_file_of_the_resolver_imports_a_runner() {
        fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, found);
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for (n, line) in text.lines().enumerate() {
                    let code = line.split("//").next().unwrap_or("");
                    // Spelled in two halves, so this line does not match itself.
                    let runs = ["::runner", "::source", "::mode::", "::mode;"]
                        .iter()
                        .any(|r| {
                            code.contains(&["app", r].concat())
                                || code.contains(&["super", r].concat())
                        });
                    if runs {
                        found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                    }
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app/resolve");
        let mut found = Vec::new();
        walk(&root, &mut found);
        assert!(
            found.is_empty(),
            "the resolver imports a runner:\n{}",
            found.join("\n")
        );
    }

    /// The application's direction (issue 20): no circle of imports among the modules of
    /// `src/app`. Every `crate::app::...`, `super::...` and `self::...` path outside the test
    /// modules (`use` groups included) is an edge to the module it names; a module's own
    /// ancestors (whose `mod` declares it) are not.
    #[test]
    fn no_circle_of_imports_in_the_application() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let graph = import_graph::of(&root, "app");
        let cycles = import_graph::cycles(&graph);
        assert!(
            cycles.is_empty(),
            "modules of src/app import each other in a circle:\n{}",
            cycles.join("\n")
        );
    }

    /// The graph's reader on a small circle, so the test above cannot pass by finding nothing.
    #[test]
    fn the_import_graph_finds_a_circle() {
        let files = [
            (
                "app::a",
                "use crate::app::b::{self, X};\nfn f() { super::c::g(); }",
            ),
            ("app::b", "use super::{c::Y, d};\n// use crate::app::a;\n"),
            (
                "app::c",
                "pub fn g() {}\nconst S: &str = \"crate::app::a\";\n",
            ),
            (
                "app::d",
                "use crate::app::{x::{a::Z}};\n#[cfg(test)]\nmod tests {\n    use crate::app::d;\n}\n",
            ),
            ("app::x", ""),
            ("app::x::a", "use super::super::b::{W as V};\n"),
        ];
        let modules: Vec<String> = files.iter().map(|(m, _)| m.to_string()).collect();
        let graph: Vec<(String, Vec<String>)> = files
            .iter()
            .map(|(m, text)| (m.to_string(), import_graph::edges(m, text, &modules)))
            .collect();
        let edges = |m: &str| graph.iter().find(|(n, _)| n == m).unwrap().1.clone();
        assert_eq!(edges("app::a"), ["app::b", "app::c"]);
        assert_eq!(edges("app::b"), ["app::c", "app::d"]);
        assert_eq!(edges("app::c"), Vec::<String>::new());
        assert_eq!(edges("app::d"), ["app::x::a"]);
        assert_eq!(edges("app::x::a"), ["app::b"]);
        assert_eq!(
            import_graph::cycles(&graph),
            ["app::b -> app::d -> app::x::a -> app::b"]
        );
    }

    /// A rough reader of Rust's module paths, enough for the test above: comments, strings and
    /// `#[cfg(test)] mod` blocks are left out, then every path that starts with `crate`,
    /// `super` or `self` is followed, through `{...}` groups.
    mod import_graph {
        use std::path::Path;

        /// Each module under `src/<top>` (by its path from the crate root, `app::run::batch`)
        /// with the modules it imports, sorted.
        pub fn of(src: &Path, top: &str) -> Vec<(String, Vec<String>)> {
            fn walk(dir: &Path, src: &Path, found: &mut Vec<(String, String)>) {
                for entry in std::fs::read_dir(dir).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        walk(&path, src, found);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        let rel = path.strip_prefix(src).unwrap().with_extension("");
                        let mut parts: Vec<String> = rel
                            .components()
                            .map(|c| c.as_os_str().to_string_lossy().into_owned())
                            .collect();
                        if parts.last().is_some_and(|p| p == "mod") {
                            parts.pop();
                        }
                        found.push((parts.join("::"), std::fs::read_to_string(&path).unwrap()));
                    }
                }
            }
            let mut files = Vec::new();
            walk(&src.join(top), src, &mut files);
            files.sort();
            let modules: Vec<String> = files.iter().map(|(m, _)| m.clone()).collect();
            files
                .iter()
                .map(|(m, text)| (m.clone(), edges(m, text, &modules)))
                .collect()
        }

        /// The modules among `modules` that `text`, the source of `module`, imports.
        pub fn edges(module: &str, text: &str, modules: &[String]) -> Vec<String> {
            let code = without_tests(&tokens(text));
            let mut paths = Vec::new();
            for (i, t) in code.iter().enumerate() {
                let starts = matches!(t.as_str(), "crate" | "super" | "self")
                    && code.get(i + 1).is_some_and(|n| n == "::")
                    && (i == 0 || code[i - 1] != "::");
                if starts {
                    let mut at = i;
                    follow(&code, &mut at, Vec::new(), &mut paths);
                }
            }
            let here: Vec<&str> = module.split("::").collect();
            let mut out = Vec::new();
            for path in paths {
                let mut full: Vec<&str> = Vec::new();
                let mut rest = &path[..];
                match rest.first().map(String::as_str) {
                    Some("crate") => rest = &rest[1..],
                    Some("self") => {
                        full.extend(&here);
                        rest = &rest[1..];
                    }
                    _ => {
                        full.extend(&here);
                        while rest.first().is_some_and(|s| s == "super") {
                            full.pop();
                            rest = &rest[1..];
                        }
                    }
                }
                full.extend(rest.iter().map(String::as_str).filter(|s| *s != "self"));
                let target = (1..=full.len())
                    .rev()
                    .map(|n| full[..n].join("::"))
                    .find(|m| modules.contains(m));
                if let Some(target) = target
                    && target != module
                    && !module.starts_with(&format!("{target}::"))
                    && !out.contains(&target)
                {
                    out.push(target);
                }
            }
            out.sort();
            out
        }

        /// Reads the path at `code[*at]` onwards (after `prefix`), pushing each full path of a
        /// group.
        fn follow(
            code: &[String],
            at: &mut usize,
            prefix: Vec<String>,
            out: &mut Vec<Vec<String>>,
        ) {
            let mut path = prefix;
            loop {
                match code.get(*at).map(String::as_str) {
                    Some("{") => {
                        *at += 1;
                        loop {
                            match code.get(*at).map(String::as_str) {
                                None => return,
                                Some("}") => {
                                    *at += 1;
                                    return;
                                }
                                Some(",") => *at += 1,
                                Some(_) => follow(code, at, path.clone(), out),
                            }
                        }
                    }
                    Some(word) if is_ident(word) => {
                        path.push(word.to_string());
                        *at += 1;
                        if code.get(*at).is_some_and(|n| n == "::") {
                            *at += 1;
                            continue;
                        }
                        if code.get(*at).is_some_and(|n| n == "as") {
                            *at += 2;
                        }
                        out.push(path);
                        return;
                    }
                    Some("*") => {
                        *at += 1;
                        out.push(path);
                        return;
                    }
                    _ => {
                        out.push(path);
                        return;
                    }
                }
            }
        }

        fn is_ident(word: &str) -> bool {
            word.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        }

        /// Identifiers, `::` and single punctuation; comments, strings and characters dropped.
        fn tokens(text: &str) -> Vec<String> {
            let chars: Vec<char> = text.chars().collect();
            let mut out = Vec::new();
            let mut i = 0;
            while i < chars.len() {
                let c = chars[i];
                let next = chars.get(i + 1).copied();
                if c == '/' && next == Some('/') {
                    while i < chars.len() && chars[i] != '\n' {
                        i += 1;
                    }
                } else if c == '/' && next == Some('*') {
                    let mut depth = 0;
                    while i < chars.len() {
                        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                            depth += 1;
                            i += 2;
                        } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                            depth -= 1;
                            i += 2;
                            if depth == 0 {
                                break;
                            }
                        } else {
                            i += 1;
                        }
                    }
                } else if c == 'r' && (next == Some('"') || next == Some('#')) && {
                    let mut j = i + 1;
                    while chars.get(j) == Some(&'#') {
                        j += 1;
                    }
                    chars.get(j) == Some(&'"')
                } {
                    let mut j = i + 1;
                    let mut hashes = 0;
                    while chars[j] == '#' {
                        hashes += 1;
                        j += 1;
                    }
                    j += 1;
                    loop {
                        if j >= chars.len() {
                            break;
                        }
                        if chars[j] == '"'
                            && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#'))
                        {
                            j += 1 + hashes;
                            break;
                        }
                        j += 1;
                    }
                    i = j;
                } else if c == '"' {
                    i += 1;
                    while i < chars.len() && chars[i] != '"' {
                        i += if chars[i] == '\\' { 2 } else { 1 };
                    }
                    i += 1;
                } else if c == '\'' {
                    // A character ('x', '\n', '\u{..}') or a lifetime ('a).
                    if next == Some('\\') {
                        i += 2;
                        while i < chars.len() && chars[i] != '\'' {
                            i += 1;
                        }
                        i += 1;
                    } else if chars.get(i + 2) == Some(&'\'') {
                        i += 3;
                    } else {
                        i += 1;
                    }
                } else if c.is_alphanumeric() || c == '_' {
                    let start = i;
                    while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                        i += 1;
                    }
                    out.push(chars[start..i].iter().collect());
                } else if c == ':' && next == Some(':') {
                    out.push("::".to_string());
                    i += 2;
                } else {
                    if !c.is_whitespace() {
                        out.push(c.to_string());
                    }
                    i += 1;
                }
            }
            out
        }

        /// `code` without each `#[cfg(test)]` `mod NAME { ... }`.
        fn without_tests(code: &[String]) -> Vec<String> {
            let attr = ["#", "[", "cfg", "(", "test", ")", "]"];
            let mut out = Vec::new();
            let mut i = 0;
            while i < code.len() {
                let is_attr = code.len() >= i + attr.len()
                    && code[i..i + attr.len()]
                        .iter()
                        .zip(attr)
                        .all(|(a, b)| a == b);
                let module = i + attr.len();
                if is_attr
                    && code.get(module).is_some_and(|t| t == "mod")
                    && code.get(module + 2).is_some_and(|t| t == "{")
                {
                    let mut depth = 0;
                    i = module + 2;
                    while i < code.len() {
                        match code[i].as_str() {
                            "{" => depth += 1,
                            "}" => depth -= 1,
                            _ => {}
                        }
                        i += 1;
                        if depth == 0 {
                            break;
                        }
                    }
                } else {
                    out.push(code[i].clone());
                    i += 1;
                }
            }
            out
        }

        /// One circle per strongly connected component of more than one module (Tarjan), each
        /// as `a -> b -> ... -> a`.
        pub fn cycles(graph: &[(String, Vec<String>)]) -> Vec<String> {
            struct State<'g> {
                graph: &'g [(String, Vec<String>)],
                index: Vec<Option<usize>>,
                low: Vec<usize>,
                stack: Vec<usize>,
                on_stack: Vec<bool>,
                next: usize,
                components: Vec<Vec<usize>>,
            }
            fn at(graph: &[(String, Vec<String>)], name: &str) -> Option<usize> {
                graph.iter().position(|(m, _)| m == name)
            }
            fn visit(s: &mut State, v: usize) {
                s.index[v] = Some(s.next);
                s.low[v] = s.next;
                s.next += 1;
                s.stack.push(v);
                s.on_stack[v] = true;
                for w in s.graph[v].1.iter().filter_map(|n| at(s.graph, n)) {
                    match s.index[w] {
                        None => {
                            visit(s, w);
                            s.low[v] = s.low[v].min(s.low[w]);
                        }
                        Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                        Some(_) => {}
                    }
                }
                if Some(s.low[v]) == s.index[v] {
                    let mut component = Vec::new();
                    loop {
                        let w = s.stack.pop().unwrap();
                        s.on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if component.len() > 1 {
                        s.components.push(component);
                    }
                }
            }
            let n = graph.len();
            let mut s = State {
                graph,
                index: vec![None; n],
                low: vec![0; n],
                stack: Vec::new(),
                on_stack: vec![false; n],
                next: 0,
                components: Vec::new(),
            };
            for v in 0..n {
                if s.index[v].is_none() {
                    visit(&mut s, v);
                }
            }
            // In each component, the shortest way from its first module back to itself
            // (breadth first, inside the component).
            let mut out = Vec::new();
            for component in s.components {
                let start = *component.iter().min().unwrap();
                let mut from: Vec<Option<usize>> = vec![None; n];
                let mut queue = std::collections::VecDeque::from([start]);
                let mut back = None;
                while let Some(v) = queue.pop_front() {
                    for w in graph[v].1.iter().filter_map(|m| at(graph, m)) {
                        if !component.contains(&w) {
                            continue;
                        }
                        if w == start {
                            back = Some(v);
                            queue.clear();
                            break;
                        }
                        if from[w].is_none() {
                            from[w] = Some(v);
                            queue.push_back(w);
                        }
                    }
                }
                let mut path = vec![start];
                let mut v = back.unwrap();
                while v != start {
                    path.push(v);
                    v = from[v].unwrap();
                }
                path.push(start);
                path.reverse();
                let names: Vec<&str> = path.iter().map(|&v| graph[v].0.as_str()).collect();
                let mut all: Vec<&str> = component.iter().map(|&v| graph[v].0.as_str()).collect();
                all.sort();
                out.push(if all.len() + 1 == names.len() {
                    names.join(" -> ")
                } else {
                    format!("{} (and all of {})", names.join(" -> "), all.join(", "))
                });
            }
            out
        }
    }

    #[test]
    fn conditions() {
        let c = Condition::parse("players < 5").unwrap();
        assert!(c.holds(4) && !c.holds(5));
        assert_eq!(c.to_string(), "players < 5");
        assert!(Condition::parse("players>=2").unwrap().holds(2));
        assert!(Condition::parse("players = 0").unwrap().holds(0));
        assert!(Condition::parse("players != 0").unwrap().holds(1));
        for bad in ["", "players", "players < x", "tps < 5", "players ~ 3"] {
            assert!(Condition::parse(bad).is_err(), "{bad}");
        }
    }
}
