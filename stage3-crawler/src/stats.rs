//! What the crawler remembers about each URL: the chapter's
//! `FetchStatistic`, one per URL, successes and failures alike.

use std::fmt;

use serde::{Serialize, Serializer};

/// Why a fetch produced no usable response: the chapter's `exception` field.
///
/// The kind is a short stable name for the report's `fail_KIND` counters (the
/// chapter counted by Python exception class); the message says what
/// happened, for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exception {
    /// A short stable name, for the `fail_KIND` counters.
    pub kind: &'static str,
    /// What happened, for people.
    pub message: String,
}

impl Exception {
    /// Every kind the crawler gives an exception.
    pub const KINDS: [&'static str; 18] = [
        "unsupported",
        "invalid_url",
        "dns",
        "connect",
        "timeout",
        "certificate",
        "tls",
        "io",
        "closed",
        "malformed",
        "truncated",
        "http2",
        "proxy",
        "slow_down",
        "decode",
        "too_large",
        "internal",
        "parse",
    ];

    /// The kind called `name`, as a `&'static str`: for a statistic read
    /// back from `--state`. A name we do not know becomes `other`.
    pub fn kind_named(name: &str) -> &'static str {
        Exception::KINDS
            .into_iter()
            .find(|kind| *kind == name)
            .unwrap_or("other")
    }
}

impl fmt::Display for Exception {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Serialize for Exception {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.message)
    }
}

// ANCHOR: fetch_statistic
/// One line of the report. The fields, their names and their meaning are the
/// chapter's `FetchStatistic`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FetchStatistic {
    /// The URL fetched, fragment-free, as the `url` crate writes it.
    pub url: String,
    /// For a redirect: where it points (resolved, fragment dropped).
    pub next_url: Option<String>,
    /// The HTTP status; `None` when no response arrived.
    pub status: Option<u16>,
    /// Why the fetch failed, if it did.
    pub exception: Option<Exception>,
    /// Body bytes, decoded: after de-chunking and undoing any
    /// Content-Encoding.
    pub size: u64,
    /// The media type as the server sent it, without parameters.
    pub content_type: Option<String>,
    /// The charset the body was decoded with, as declared (lower-cased), or
    /// `utf-8` for a page that declared none.
    pub encoding: Option<String>,
    /// Links on the page that the crawler may follow.
    pub num_urls: usize,
    /// Of those, the ones it had not seen before.
    pub num_new_urls: usize,
    /// Body bytes as received (de-chunked, still compressed): `size` when
    /// the server did not compress.
    pub wire_size: u64,
    /// The protocol the response came over, by its ALPN name (`http/1.1`,
    /// `h2`); `None` when none came.
    pub protocol: Option<&'static str>,
    /// In a recrawl (`--recrawl`), what became of the URL since the last
    /// crawl; `None` in a first crawl (and left out of its JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recrawl: Option<Recrawled>,
}
// ANCHOR_END: fetch_statistic

/// What a recrawl found of a URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Recrawled {
    /// Known before, and the server said `304 Not Modified`, or gave the
    /// same answer with no page as last time (the same redirect, the same
    /// error status).
    NotModified,
    /// Known before, and fetched whole again (its server keeps no
    /// validators, or the page changed), or answered otherwise than last
    /// time, or not at all.
    Changed,
    /// Not known before: a link found on a page that changed.
    New,
}

impl Recrawled {
    /// The name the reports and the journal use.
    pub fn as_str(self) -> &'static str {
        match self {
            Recrawled::NotModified => "not-modified",
            Recrawled::Changed => "changed",
            Recrawled::New => "new",
        }
    }

    /// The label called `name`, if there is one.
    pub fn named(name: &str) -> Option<Recrawled> {
        [Recrawled::NotModified, Recrawled::Changed, Recrawled::New]
            .into_iter()
            .find(|r| r.as_str() == name)
    }
}

impl FetchStatistic {
    /// A URL that could not be fetched at all.
    pub fn failure(url: String, exception: Exception) -> FetchStatistic {
        FetchStatistic {
            url,
            next_url: None,
            status: None,
            exception: Some(exception),
            size: 0,
            content_type: None,
            encoding: None,
            num_urls: 0,
            num_new_urls: 0,
            wire_size: 0,
            protocol: None,
            recrawl: None,
        }
    }

    /// Whether the progress line counts this as an error: no response, or
    /// an HTTP error status.
    pub fn is_error(&self) -> bool {
        self.exception.is_some() || self.status.is_none_or(|s| s >= 400)
    }
}
