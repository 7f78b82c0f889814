//! The crate's layering rules (issue 38; docs/architecture.md), read from `src/**/*.rs` outside
//! test code: no file imports itself back through others, no folder imports a sibling folder
//! that imports it back, the resolver imports no runner, `process::exit` only in `src/main.rs`,
//! every public type name defined once, no function over 100 lines. What breaks a rule today is listed below, each to remove:
//! the test fails on anything new and on a listed entry that is gone, so the lists only shrink.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// File circles (the modules of each strongly connected component of the import graph).
const KNOWN_FILE_CYCLES: &[&str] = &[];

/// Folder circles: sibling modules (folders or files under one parent) importing each other.
const KNOWN_FOLDER_CYCLES: &[&str] = &[];

/// Files other than `src/main.rs` that call `process::exit`.
const KNOWN_EXITS: &[&str] = &[];

/// Public type names defined in more than one file.
const KNOWN_DUPLICATE_TYPES: &[&str] = &[];

/// Functions over 100 lines, as `FILE NAME`.
const KNOWN_LONG_FUNCTIONS: &[&str] = &[];

/// What the resolver (`src/app/resolve`) may not import: it hands every runner what it needs
/// (issue 20), so every type they receive is defined there or beside the plan.
const ABOVE_THE_RESOLVER: &[&str] = &["app::mode", "app::runner", "app::source"];

/// The longest a function outside tests may be, in lines from `fn` to its closing brace.
const MAX_FUNCTION_LINES: usize = 100;

#[test]
fn the_crate_keeps_its_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = sources(root);
    let graph = import_graph(&files);
    let mut problems = Vec::new();
    check(
        "file circle",
        cycles(&graph),
        KNOWN_FILE_CYCLES,
        &mut problems,
    );
    let folders = cycles(&folder_graph(&graph));
    check("folder circle", folders, KNOWN_FOLDER_CYCLES, &mut problems);
    check(
        "process::exit in",
        exits(&files),
        KNOWN_EXITS,
        &mut problems,
    );
    let types = duplicate_types(&files);
    check(
        "public type defined twice:",
        types,
        KNOWN_DUPLICATE_TYPES,
        &mut problems,
    );
    check(
        "resolver import",
        runners_in_resolver(&graph),
        &[],
        &mut problems,
    );
    let long = long_functions(&files).into_iter().map(|(f, _)| f).collect();
    check(
        "function over 100 lines:",
        long,
        KNOWN_LONG_FUNCTIONS,
        &mut problems,
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Each rule on a small made-up crate, so the test above cannot pass by finding nothing.
#[test]
fn each_rule_finds_what_breaks_it() {
    let long_body = "let x = 1;\n".repeat(MAX_FUNCTION_LINES);
    let files = [
        (
            "src/lib.rs",
            "mod a; mod b;\n#[cfg(test)]\nmod checks;".to_string(),
        ),
        (
            "src/a/mod.rs",
            "use crate::b::{self, x::{Y}};\nfn f() { self::c::g(); }\npub struct Same;".to_string(),
        ),
        (
            "src/a/c.rs",
            "pub fn g() { std::process::exit(1) }".to_string(),
        ),
        (
            "src/b/mod.rs",
            "// use crate::a;\nconst S: &str = \"crate::a\";\npub(crate) enum Same {}".to_string(),
        ),
        (
            "src/b/x.rs",
            format!("use super::super::a::c as C;\nfn long() {{\n{long_body}}}"),
        ),
        (
            "src/b/y.rs",
            format!(
                "#[cfg(test)]\nmod tests {{\n    use crate::a;\n    fn t() {{\n{long_body}}}\n}}"
            ),
        ),
        (
            "src/checks.rs",
            "use crate::a::c; pub struct Same;".to_string(),
        ),
        (
            "src/main.rs",
            "fn main() { std::process::exit(0) }".to_string(),
        ),
    ];
    let files: Vec<File> = files.iter().map(|(p, text)| File::new(p, text)).collect();
    let files = without_test_modules(files);
    let graph = import_graph(&files);
    let edges = |m: &str| graph[m].iter().cloned().collect::<Vec<_>>();
    assert_eq!(edges("a"), ["a::c", "b", "b::x"]);
    assert_eq!(edges("b"), Vec::<String>::new());
    assert_eq!(edges("b::x"), ["a::c"]);
    assert_eq!(edges("b::y"), Vec::<String>::new());
    assert!(
        !graph.contains_key("checks"),
        "a #[cfg(test)] file is left out"
    );
    assert_eq!(cycles(&graph), Vec::<String>::new());
    let mut circle = graph.clone();
    circle.get_mut("a::c").unwrap().insert("a".into());
    assert_eq!(cycles(&circle), ["a a::c b::x"]);
    assert_eq!(cycles(&folder_graph(&circle)), ["a b"]);
    assert_eq!(exits(&files), ["src/a/c.rs"]);
    let mut resolver = BTreeMap::new();
    resolver.insert(
        "app::resolve::plan".to_string(),
        ["app::runner::batch".to_string()].into(),
    );
    assert_eq!(
        runners_in_resolver(&resolver),
        ["app::resolve::plan -> app::runner::batch"]
    );
    assert_eq!(
        duplicate_types(&files),
        ["Same (src/a/mod.rs, src/b/mod.rs)"]
    );
    assert_eq!(
        long_functions(&files),
        [("src/b/x.rs long".to_string(), MAX_FUNCTION_LINES + 2)]
    );
    let mut problems = Vec::new();
    check("file circle", vec!["a b".into()], &["b c"], &mut problems);
    assert_eq!(
        problems,
        [
            "new file circle a b: break it (docs/architecture.md)",
            "file circle b c is gone: take it off the list in tests/it/layout.rs",
        ]
    );
}

/// Compares what was `found` with what is `known`, naming each difference.
fn check(what: &str, found: Vec<String>, known: &[&str], problems: &mut Vec<String>) {
    let key = |f: &String| f.split(" (").next().unwrap_or(f).to_string();
    let keys: BTreeSet<String> = found.iter().map(key).collect();
    for f in &found {
        if !known.contains(&key(f).as_str()) {
            problems.push(format!("new {what} {f}: break it (docs/architecture.md)"));
        }
    }
    for k in known.iter().filter(|k| !keys.contains(**k)) {
        problems.push(format!(
            "{what} {k} is gone: take it off the list in tests/it/layout.rs"
        ));
    }
}

/// One source file: its path from the tree root, its module (`app::print::output`; the crate
/// roots are ``), and its tokens outside test code.
struct File {
    path: String,
    module: String,
    code: Vec<Token>,
    /// Modules declared here as `#[cfg(test)] mod NAME;`, whose files are test code.
    test_children: Vec<String>,
}

impl File {
    fn new(path: &str, text: &str) -> File {
        let mut parts: Vec<&str> = path.trim_start_matches("src/").split('/').collect();
        let last = parts.pop().unwrap().trim_end_matches(".rs");
        if !matches!(last, "mod" | "lib" | "main") {
            parts.push(last);
        }
        let module = parts.join("::");
        let (code, children) = without_tests(tokens(text));
        let test_children = children
            .into_iter()
            .map(|c| {
                if module.is_empty() {
                    c
                } else {
                    format!("{module}::{c}")
                }
            })
            .collect();
        File {
            path: path.to_string(),
            module,
            code,
            test_children,
        }
    }
}

/// Every `.rs` file under `src`, test modules' files left out.
fn sources(root: &Path) -> Vec<File> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<File>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(File::new(&rel, &std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join("src"), root, &mut out);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    without_test_modules(out)
}

/// `files` without those of a `#[cfg(test)] mod NAME;` and without any `tests` module.
fn without_test_modules(files: Vec<File>) -> Vec<File> {
    let tests: Vec<String> = files.iter().flat_map(|f| f.test_children.clone()).collect();
    files
        .into_iter()
        .filter(|f| {
            !f.module.split("::").any(|p| p == "tests")
                && !tests
                    .iter()
                    .any(|t| f.module == *t || f.module.starts_with(&format!("{t}::")))
        })
        .collect()
}

/// Each module with the modules it names through `crate::`, `super::` and `self::` paths
/// (`use` groups followed), itself and the crate root left out.
fn import_graph(files: &[File]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<&str> = files.iter().map(|f| f.module.as_str()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let here: Vec<&str> = file.module.split("::").filter(|p| !p.is_empty()).collect();
        let edges = graph.entry(file.module.clone()).or_default();
        let code = &file.code;
        for (i, t) in code.iter().enumerate() {
            let starts = matches!(t.text.as_str(), "crate" | "super" | "self")
                && code.get(i + 1).is_some_and(|n| n.text == "::")
                && (i == 0 || code[i - 1].text != "::");
            if !starts {
                continue;
            }
            let (mut paths, mut at) = (Vec::new(), i);
            follow(code, &mut at, Vec::new(), &mut paths);
            for path in paths {
                // `crate` starts at the root; `self` and each `super` from here.
                let mut full: Vec<&str> = if t.text == "crate" {
                    Vec::new()
                } else {
                    here.clone()
                };
                for part in &path {
                    match part.as_str() {
                        "super" => drop(full.pop()),
                        "crate" | "self" => {}
                        p => full.push(p),
                    }
                }
                let target = (1..=full.len())
                    .rev()
                    .map(|n| full[..n].join("::"))
                    .find(|m| modules.contains(m.as_str()));
                if let Some(target) = target.filter(|t| *t != file.module) {
                    edges.insert(target);
                }
            }
        }
    }
    graph
}

/// Reads the path at `code[*at]` onwards (after `prefix`), pushing each full path of a group.
fn follow(code: &[Token], at: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        let text = |k: usize| code.get(k).map_or("", |t| t.text.as_str());
        match text(*at) {
            "{" => {
                *at += 1;
                loop {
                    match text(*at) {
                        "" => return,
                        "}" => {
                            *at += 1;
                            return;
                        }
                        "," => *at += 1,
                        _ => follow(code, at, path.clone(), out),
                    }
                }
            }
            word if is_ident(word) => {
                path.push(word.to_string());
                *at += 1;
                if text(*at) == "::" {
                    *at += 1;
                    continue;
                }
                if text(*at) == "as" {
                    *at += 2;
                }
                break;
            }
            "*" => {
                *at += 1;
                break;
            }
            _ => break,
        }
    }
    out.push(path);
}

/// Between sibling modules (the first modules where two ends of an edge part): each edge of
/// `graph` where neither end contains the other, lifted to the siblings that hold them.
fn folder_graph(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, targets) in graph {
        let a_parts: Vec<&str> = a.split("::").filter(|p| !p.is_empty()).collect();
        for b in targets {
            let b_parts: Vec<&str> = b.split("::").collect();
            let k = a_parts
                .iter()
                .zip(&b_parts)
                .take_while(|(x, y)| x == y)
                .count();
            if k < a_parts.len() && k < b_parts.len() {
                let from = a_parts[..=k].join("::");
                out.entry(from)
                    .or_default()
                    .insert(b_parts[..=k].join("::"));
            }
        }
    }
    out
}

/// The strongly connected components of more than one module (Tarjan), each as its modules in
/// order, space-separated.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<String>,
    }
    fn visit<'g>(w: &mut Walk<'g>, v: &'g str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        for t in w.graph.get(v).into_iter().flatten() {
            let t = w
                .graph
                .get_key_value(t)
                .map_or(t.as_str(), |(k, _)| k.as_str());
            if !w.index.contains_key(t) {
                visit(w, t);
                let low = w.low[v].min(w.low[t]);
                w.low.insert(v, low);
            } else if w.stack.contains(&t) {
                let low = w.low[v].min(w.index[t]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let at = w.stack.iter().position(|s| *s == v).unwrap();
            let mut component: Vec<&str> = w.stack.split_off(at);
            if component.len() > 1 {
                component.sort();
                w.found.push(component.join(" "));
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            visit(&mut walk, v);
        }
    }
    walk.found.sort();
    walk.found
}

/// Each import from the resolver into a runner, a source or a mode, as `FROM -> TO`.
fn runners_in_resolver(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let within = |m: &str, top: &str| m == top || m.starts_with(&format!("{top}::"));
    let mut out = Vec::new();
    for (from, targets) in graph.iter().filter(|(m, _)| within(m, "app::resolve")) {
        for to in targets {
            if ABOVE_THE_RESOLVER.iter().any(|top| within(to, top)) {
                out.push(format!("{from} -> {to}"));
            }
        }
    }
    out
}

/// The files other than `src/main.rs` that name `process::exit`.
fn exits(files: &[File]) -> Vec<String> {
    files
        .iter()
        .filter(|f| f.path != "src/main.rs")
        .filter(|f| {
            f.code
                .windows(3)
                .any(|w| w[0].text == "process" && w[1].text == "::" && w[2].text == "exit")
        })
        .map(|f| f.path.clone())
        .collect()
}

/// Each type name `pub` or `pub(crate)` in more than one file, as `NAME (FILE, FILE)`.
fn duplicate_types(files: &[File]) -> Vec<String> {
    let mut defined: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for f in files {
        let c = &f.code;
        for i in 0..c.len() {
            let text = |k: usize| c.get(k).map_or("", |t| t.text.as_str());
            if text(i) != "pub" {
                continue;
            }
            let at = match (text(i + 1), text(i + 2)) {
                ("(", "crate") => i + 4,
                ("(", _) => continue,
                _ => i + 1,
            };
            if matches!(text(at), "struct" | "enum" | "trait" | "type" | "union") {
                defined.entry(text(at + 1)).or_default().insert(&f.path);
            }
        }
    }
    defined
        .into_iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(name, files)| {
            format!(
                "{name} ({})",
                files.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
        .collect()
}

/// Each function longer than [`MAX_FUNCTION_LINES`], as `FILE NAME` and its length.
fn long_functions(files: &[File]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for f in files {
        let c = &f.code;
        for i in 0..c.len() {
            if c[i].text != "fn" || !c.get(i + 1).is_some_and(|t| is_ident(&t.text)) {
                continue;
            }
            let Some(open) = body(c, i + 2) else { continue };
            let close = matching(c, open);
            let lines = c[close].line - c[i].line + 1;
            if lines > MAX_FUNCTION_LINES {
                out.push((format!("{} {}", f.path, c[i + 1].text), lines));
            }
        }
    }
    out.sort();
    out
}

/// The index of the `{` that opens the body of the item whose signature starts at `from`, or
/// `None` when a `;` ends it first (outside parentheses and brackets).
fn body(code: &[Token], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in code.iter().enumerate().skip(from) {
        match t.text.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            "{" if depth == 0 => return Some(k),
            ";" if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The index of the `}` that closes the `{` at `open` (the last token if none does).
fn matching(code: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (k, t) in code.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            return k;
        }
    }
    code.len() - 1
}

/// A word or punctuation of the source and its line (from 1).
#[derive(Debug, Clone)]
struct Token {
    text: String,
    line: usize,
}

fn is_ident(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, numbers, `::` and single punctuation; comments, strings and characters dropped.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let (c, next) = (chars[i], chars.get(i + 1).copied());
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i = block_comment_end(&chars, i);
        } else if let Some(end) = raw_string_end(&chars, i) {
            i = end;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            i += 3;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else if c.is_alphanumeric() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token {
                text: chars[start..i].iter().collect(),
                line,
            });
        } else if c == ':' && next == Some(':') {
            out.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Token {
                    text: c.to_string(),
                    line,
                });
            }
            i += 1;
        }
        line += chars[start..i.min(chars.len())]
            .iter()
            .filter(|&&c| c == '\n')
            .count();
    }
    out
}

/// Where the (nested) block comment at `i` ends.
fn block_comment_end(chars: &[char], mut i: usize) -> usize {
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
    i
}

/// Where the raw string at `i` (`r"..."`, `r#"..."#`) ends, if one starts there.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    if chars[i] != 'r' || (i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')) {
        return None;
    }
    let mut j = i + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    let hashes = j - i - 1;
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

/// `code` without each item under `#[cfg(test)]` (a `mod` block, a function, a `use`), and the
/// names of the modules declared that way in files of their own (`#[cfg(test)] mod NAME;`).
fn without_tests(code: Vec<Token>) -> (Vec<Token>, Vec<String>) {
    let attr = ["#", "[", "cfg", "(", "test", ")", "]"];
    let mut out = Vec::new();
    let mut children = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let is_attr = code.len() >= i + attr.len()
            && code[i..i + attr.len()]
                .iter()
                .zip(attr)
                .all(|(a, b)| a.text == b);
        if !is_attr {
            out.push(code[i].clone());
            i += 1;
            continue;
        }
        let item = i + attr.len();
        match body(&code, item) {
            Some(open) => i = matching(&code, open) + 1,
            None => {
                let end = (item..code.len())
                    .find(|&k| code[k].text == ";")
                    .unwrap_or(code.len());
                let words: Vec<&str> = code[item..end].iter().map(|t| t.text.as_str()).collect();
                if let Some(p) = words.iter().position(|w| *w == "mod") {
                    children.extend(words.get(p + 1).map(|n| n.to_string()));
                }
                i = end + 1;
            }
        }
    }
    (out, children)
}
