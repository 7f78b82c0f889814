//! Fuzz target: the `.mcfunction` line rules (`rconsole::text::mcfunction::Joiner`) must never panic
//! on any text, must report line numbers that never go backwards, and must never produce a
//! command that still has a line break in it.
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use rconsole::text::mcfunction::{Item, Joiner};

fuzz_target!(|data: &str| {
    let mut macros = HashMap::new();
    macros.insert("name".to_string(), "Steve".to_string());
    let mut joiner = Joiner::new(macros);
    let mut last_line = 0;
    let mut check = |item: Item| {
        let line = match item {
            Item::Command(c) => {
                assert!(!c.text.contains('\n'), "a command spans lines");
                c.line
            }
            Item::Error { line, .. } => line,
        };
        assert!(line >= last_line, "line numbers went backwards");
        last_line = line;
    };
    for physical in data.split('\n') {
        if let Some(item) = joiner.push(physical) {
            check(item);
        }
    }
    if let Some(item) = joiner.finish() {
        check(item);
    }
});
