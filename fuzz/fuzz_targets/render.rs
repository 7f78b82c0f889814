//! Fuzz target: the `§` code renderer (`rconsole::text::render`) must never panic, stripping must
//! remove every valid code and keep all other text, and the ANSI form must contain the
//! stripped text's characters in order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rconsole::text::render;

fuzz_target!(|text: &str| {
    let plain = render::strip(text);
    let ansi = render::to_ansi(text);
    let _ = render::fix_newlines(text);
    assert!(
        plain.chars().count() <= text.chars().count(),
        "stripping added text"
    );
    // Everything left in the plain form appears in the ANSI form, in order (the ANSI form only
    // adds escape sequences).
    let mut rest = ansi.chars();
    for c in plain.chars() {
        assert!(rest.any(|a| a == c), "ANSI form lost {c:?}");
    }
});
