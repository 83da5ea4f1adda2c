//! The URLs the crawler saw and chose not to fetch, each with its reason.
//!
//! The chapter's crawler drops a link it will not follow without a word, and
//! forgets what was still queued when it is stopped. A user then cannot
//! tell "not linked" from "linked, but skipped". Ours names every URL it
//! saw exactly once: fetched, failed, or skipped here with a reason.

use serde::{Serialize, Serializer};

/// Why a URL was not fetched. The names are the report's, and the
/// summary's `skipped_<name>` counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// On a host the host rules do not allow (`--strict`, `--lenient`).
    OffHost,
    /// Matched `--exclude`.
    Excluded,
    /// Disallowed by the origin's robots.txt.
    Robots,
    /// Deeper than `--max-depth`.
    Depth,
    /// Seen after `--max-pages` URLs were queued.
    MaxPages,
    /// Longer than the URL length guard.
    UrlTooLong,
    /// A path segment repeated more than the guard allows.
    PathRepetition,
    /// One more distinct query string for a path than the guard allows.
    QueryVariants,
    /// A scheme the crawler does not fetch (`mailto:`, `ftp:` ...).
    Scheme,
    /// An href that is not a URL at all (`http://[::1`); reported as
    /// written.
    InvalidUrl,
    /// Queued or being fetched when the crawl was interrupted (Ctrl-C).
    Interrupted,
}

impl SkipReason {
    /// The name the report uses.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::OffHost => "off-host",
            SkipReason::Excluded => "excluded",
            SkipReason::Robots => "robots",
            SkipReason::Depth => "depth",
            SkipReason::MaxPages => "max-pages",
            SkipReason::UrlTooLong => "url-too-long",
            SkipReason::PathRepetition => "path-repetition",
            SkipReason::QueryVariants => "query-variants",
            SkipReason::Scheme => "scheme",
            SkipReason::InvalidUrl => "invalid-url",
            SkipReason::Interrupted => "interrupted",
        }
    }
}

impl SkipReason {
    /// Every reason.
    pub const ALL: [SkipReason; 11] = [
        SkipReason::OffHost,
        SkipReason::Excluded,
        SkipReason::Robots,
        SkipReason::Depth,
        SkipReason::MaxPages,
        SkipReason::UrlTooLong,
        SkipReason::PathRepetition,
        SkipReason::QueryVariants,
        SkipReason::Scheme,
        SkipReason::InvalidUrl,
        SkipReason::Interrupted,
    ];

    /// The reason the report calls `name`.
    pub fn from_name(name: &str) -> Option<SkipReason> {
        SkipReason::ALL.into_iter().find(|r| r.name() == name)
    }
}

impl Serialize for SkipReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

// ANCHOR: skipped
/// A URL seen and not fetched. In JSON Lines:
/// `{"url": …, "skipped": "<reason>", "from": <the page that linked it
/// first, or null for a root>}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The URL, as the `url` crate writes it.
    pub url: String,
    #[serde(rename = "skipped")]
    /// Why it was not fetched.
    pub reason: SkipReason,
    /// The page that linked it first; `None` for a root.
    pub from: Option<String>,
}
// ANCHOR_END: skipped

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_the_reason_and_the_page() {
        let s = Skipped {
            url: "http://other/".into(),
            reason: SkipReason::OffHost,
            from: Some("http://h/".into()),
        };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"url":"http://other/","skipped":"off-host","from":"http://h/"}"#
        );
        let root = Skipped {
            url: "http://h/".into(),
            reason: SkipReason::Interrupted,
            from: None,
        };
        assert_eq!(
            serde_json::to_string(&root).unwrap(),
            r#"{"url":"http://h/","skipped":"interrupted","from":null}"#
        );
    }
}
