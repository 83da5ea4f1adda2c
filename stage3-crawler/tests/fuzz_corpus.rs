//! Replays the fuzz corpus (`fuzz/corpus/<target>/`) through the same
//! property functions the fuzz targets check, so every `cargo test` checks
//! every input the fuzzer ever found interesting, with no fuzzer installed.
//! `.ci/fuzz` runs the fuzzers themselves.

#[path = "../fuzz/properties.rs"]
mod properties;

use std::path::Path;

/// Runs `property` on every file of `fuzz/corpus/<target>`; fails if the
/// folder is missing or empty (a corpus that vanished checks nothing).
fn replay(target: &str, property: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut inputs = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| property(&data));
        assert!(outcome.is_ok(), "{target}: {} fails", path.display());
        inputs += 1;
    }
    assert!(inputs > 0, "{} holds no inputs", dir.display());
}

#[test]
fn the_scanner_corpus_agrees_with_html5ever() {
    replay("scanner", properties::scanner);
}

#[test]
fn the_charset_corpus_decodes() {
    replay("charset", properties::charset);
}

#[test]
fn the_resolve_corpus_resolves_to_http_urls_only() {
    replay("resolve", properties::resolve);
}

#[test]
fn the_robots_corpus_parses_and_matches_like_a_regex() {
    replay("robots", properties::robots);
}

#[test]
fn the_sitemap_corpus_parses_or_fails_cleanly() {
    replay("sitemap", properties::sitemap);
}
