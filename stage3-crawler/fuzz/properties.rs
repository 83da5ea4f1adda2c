//! What each fuzz target checks, in plain functions: the fuzz binaries call
//! them with generated inputs, and `stage3-crawler/tests/fuzz_corpus.rs`
//! calls them with every input in `corpus/`, on every `cargo test`.
//!
//! Each panics (through `assert!`) when the property fails; a panic is what
//! the fuzzer reports as a crash. A new parser gets a function here, a
//! `fuzz_targets/NAME.rs`, a `[[bin]]` in `Cargo.toml`, a seed in
//! `corpus/NAME/` and a line in `tests/fuzz_corpus.rs` (the HTTP response
//! reader needs a sans-IO entry point first, since it reads from a socket).

// Each fuzz target includes this file and calls one of its functions.
#![allow(dead_code)]

use crawl_kit::links::{Href, resolve_hrefs};
use stage3_crawler::charset::decode;
use stage3_crawler::robots::Robots;
use stage3_crawler::scanner::oracle::tokenizer_hrefs;
use stage3_crawler::scanner::scan_hrefs;
use stage3_crawler::sitemap::{MAX_SITEMAP_URLS, parse_sitemap};
use url::Url;

/// The scanner finds exactly the hrefs html5ever's tokenizer finds.
pub fn scanner(data: &[u8]) {
    let html = String::from_utf8_lossy(data);
    assert_eq!(scan_hrefs(&html), tokenizer_hrefs(&html), "on {html:?}");
}

/// Decoding never panics, and names a charset encoding_rs knows.
pub fn charset(data: &[u8]) {
    // The first byte picks the Content-Type charset the body came with.
    const HEADERS: [Option<&str>; 6] = [
        None,
        Some("utf-8"),
        Some("iso-8859-1"),
        Some("shift_jis"),
        Some("utf-16"),
        Some("no-such-charset"),
    ];
    let (header, body) = match data.split_first() {
        Some((first, body)) => (HEADERS[usize::from(*first) % HEADERS.len()], body),
        None => (None, data),
    };
    let decoded = decode(body, header);
    assert!(
        encoding_rs::Encoding::for_label(decoded.encoding.as_bytes()).is_some(),
        "unknown encoding {:?}",
        decoded.encoding
    );
}

/// Resolving hrefs never panics, and yields only http and https URLs
/// without fragments, each once.
pub fn resolve(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let page = lines
        .next()
        .and_then(|first| Url::parse(first).ok())
        .unwrap_or_else(|| Url::parse("http://example.com/dir/page.html").unwrap());
    // A line starting with `B` is a `<base href>`.
    let hrefs: Vec<Href> = lines
        .map(|line| match line.strip_prefix('B') {
            Some(value) => Href {
                value: value.to_string(),
                is_base: true,
            },
            None => Href {
                value: line.to_string(),
                is_base: false,
            },
        })
        .collect();
    let links = resolve_hrefs(&hrefs, &page);
    let mut seen = std::collections::HashSet::new();
    for link in &links {
        assert!(matches!(link.scheme(), "http" | "https"), "{link}");
        assert!(link.fragment().is_none(), "{link}");
        assert!(seen.insert(link.as_str()), "{link} twice");
    }
}

/// robots.txt: parsing any bytes never panics and is deterministic;
/// `/robots.txt` is always allowed; a Crawl-delay is never negative. And
/// the wildcard matcher agrees with a regular expression: the input's
/// first line, over a small alphabet, is a Disallow pattern, its second a
/// path, and the path is refused exactly when `^pattern` (with `*` as
/// `.*`, a final `$` as the end) matches it.
pub fn robots(data: &[u8]) {
    let robots = Robots::parse(data, "stage3-crawler");
    assert_eq!(robots, Robots::parse(data, "stage3-crawler"));
    let url = |path: &str| Url::parse(&format!("http://h{path}")).unwrap();
    assert!(robots.is_allowed(&url("/robots.txt")));
    let _ = robots.is_allowed(&url("/a/b?c=d"));
    let _ = robots.crawl_delay();

    let mut parts = data.splitn(2, |&b| b == b'\n');
    let pick = |bytes: &[u8], alphabet: &[u8]| -> String {
        bytes
            .iter()
            .take(64)
            .map(|b| char::from(alphabet[usize::from(*b) % alphabet.len()]))
            .collect()
    };
    let pattern = format!("/{}", pick(parts.next().unwrap_or(&[]), b"ab/*$"));
    let path = format!("/{}", pick(parts.next().unwrap_or(&[]), b"ab/"));
    let file = format!("User-agent: *\nDisallow: {pattern}\n");
    let allowed = Robots::parse(file.as_bytes(), "x").is_allowed(&url(&path));
    let (body, anchored) = match pattern.strip_suffix('$') {
        Some(body) => (body, true),
        None => (pattern.as_str(), false),
    };
    let pieces: Vec<String> = body.split('*').map(regex::escape).collect();
    let end = if anchored { "$" } else { "" };
    let oracle = regex::Regex::new(&format!("^{}{end}", pieces.join(".*"))).unwrap();
    assert_eq!(
        allowed,
        !oracle.is_match(&path),
        "{pattern:?} against {path:?}"
    );
}

/// Sitemaps: any bytes parse to a sitemap or an error, never a panic; a
/// sitemap keeps at most the protocol's limit, without fragments.
pub fn sitemap(data: &[u8]) {
    let base = Url::parse("http://example.com/sitemap.xml").unwrap();
    if let Ok(sitemap) = parse_sitemap(data, &base) {
        assert!(sitemap.locs.len() <= MAX_SITEMAP_URLS);
        assert!(sitemap.locs.iter().all(|u| u.fragment().is_none()));
    }
}
