//! Guards against crawler traps: sites that make up new URLs forever.
//!
//! A calendar whose "next month" link never ends, a page that links to
//! twenty fresh `/q?id=RANDOM` URLs, a relative link that nests a directory
//! in itself (`a/` on `/a/` gives `/a/a/`): each is an endless supply of
//! URLs, and a crawler that follows them never finishes and fills its
//! memory with a queue that grows faster than it drains. Three cheap rules
//! end them, each adjustable, each a skip reason in the report:
//!
//! - a URL longer than `max_url_length` (`url-too-long`);
//! - a path in which one segment appears more than `max_path_repetition`
//!   times (`path-repetition`, StormCrawler's `maxPathRepetition`);
//! - more than `max_query_variants` distinct query strings for one path
//!   (`query-variants`).

use std::cell::RefCell;
use std::collections::HashMap;

use url::{Position, Url};

use crate::skipped::SkipReason;

pub use crate::config::TrapLimits;

// ANCHOR: traps
/// The limits, and how many query variants each path has had queued.
#[derive(Debug, Default)]
pub struct Traps {
    limits: TrapLimits,
    /// Scheme, host, port and path -> queued URLs with a query there.
    variants: RefCell<HashMap<Box<str>, usize>>,
}

impl Traps {
    /// Guards with `limits`.
    pub fn new(limits: TrapLimits) -> Traps {
        Traps {
            limits,
            variants: RefCell::default(),
        }
    }

    /// Which rule `url` breaks, if any.
    pub fn check(&self, url: &Url) -> Option<SkipReason> {
        self.check_shape(url).or_else(|| self.check_variants(url))
    }

    /// Which rule the URL itself breaks, whatever was queued before: too
    /// long, or a path segment repeated too often.
    pub fn check_shape(&self, url: &Url) -> Option<SkipReason> {
        if url.as_str().len() > self.limits.max_url_length {
            return Some(SkipReason::UrlTooLong);
        }
        if most_repeated_segment(url) > self.limits.max_path_repetition {
            return Some(SkipReason::PathRepetition);
        }
        None
    }

    /// Whether `url`'s path has had its fill of query strings queued. A
    /// shared crawl counts these in Redis instead ([`variant_key`]).
    pub fn check_variants(&self, url: &Url) -> Option<SkipReason> {
        let full = url.query().is_some()
            && self
                .variants
                .borrow()
                .get(path_key(url))
                .copied()
                .unwrap_or(0)
                >= self.limits.max_query_variants;
        full.then_some(SkipReason::QueryVariants)
    }

    /// Counts `url`, which is being queued, towards its path's variants.
    pub fn admit(&self, url: &Url) {
        if url.query().is_some() {
            *self
                .variants
                .borrow_mut()
                .entry(path_key(url).into())
                .or_default() += 1;
        }
    }
}
// ANCHOR_END: traps

/// The URL up to the end of its path: the same page, whatever its query.
/// What `--max-query-variants` counts `url` under: its path (scheme, host
/// and port included), if it has a query.
pub fn variant_key(url: &Url) -> Option<&str> {
    url.query().map(|_| path_key(url))
}

fn path_key(url: &Url) -> &str {
    &url[..Position::AfterPath]
}

/// How many times the most frequent non-empty path segment appears.
fn most_repeated_segment(url: &Url) -> usize {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for segment in url.path().split('/').filter(|s| !s.is_empty()) {
        *counts.entry(segment).or_default() += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn long_urls_and_repeated_segments() {
        let traps = Traps::default();
        let long = format!("http://h/{}", "x".repeat(2048));
        assert_eq!(traps.check(&url(&long)), Some(SkipReason::UrlTooLong));
        let just = format!("http://h/{}", "x".repeat(2048 - "http://h/".len()));
        assert_eq!(traps.check(&url(&just)), None);
        assert_eq!(traps.check(&url("http://h/a/b/a/c/a/")), None);
        assert_eq!(
            traps.check(&url("http://h/a/a/a/a/")),
            Some(SkipReason::PathRepetition)
        );
        // The query does not count as a segment.
        assert_eq!(traps.check(&url("http://h/a/a/a?a/a/a")), None);
    }

    #[test]
    fn query_variants_are_counted_per_path() {
        let traps = Traps::new(TrapLimits {
            max_query_variants: 2,
            ..TrapLimits::default()
        });
        for id in 0..2 {
            let u = url(&format!("http://h/q?id={id}"));
            assert_eq!(traps.check(&u), None);
            traps.admit(&u);
        }
        assert_eq!(
            traps.check(&url("http://h/q?id=9")),
            Some(SkipReason::QueryVariants)
        );
        // Another path, another host, or no query at all: not counted.
        assert_eq!(traps.check(&url("http://h/r?id=9")), None);
        assert_eq!(traps.check(&url("http://g/q?id=9")), None);
        assert_eq!(traps.check(&url("http://h/q")), None);
    }
}
