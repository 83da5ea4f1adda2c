//! The report's numbers, counted as the crawl goes: the chapter's `Stats`
//! and the counting half of its `url_report`.
//!
//! Counting as each statistic is recorded, rather than at the end from
//! every record, is what lets a crawl of a million pages stream its report
//! (`--report json`) and keep nothing per URL for it: the summary needs
//! only these numbers.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::skipped::Skipped;
use crate::stats::FetchStatistic;

/// Named counts, printed sorted by name: the chapter's `Stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Counters(pub BTreeMap<String, u64>);

impl Counters {
    /// Adds `count` to `key`.
    pub fn add(&mut self, key: &str, count: u64) {
        // Counted for every URL as it is recorded: no new key string
        // unless the key is new.
        match self.0.get_mut(key) {
            // Saturating: a size read back from a journal or from Redis
            // can be anything, and a report is no reason to panic.
            Some(total) => *total = total.saturating_add(count),
            None => {
                self.0.insert(key.to_string(), count);
            }
        }
    }

    /// The count for `key` (0 if never added).
    pub fn get(&self, key: &str) -> u64 {
        self.0.get(key).copied().unwrap_or(0)
    }
}

/// The four kinds of report line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// A failure: no response.
    Error,
    /// A redirect.
    Redirect,
    /// A page parsed for links.
    Html,
    /// Anything else: another type, or an HTTP error status.
    Other,
}

// ANCHOR: url_report
/// Which line a statistic gets, counting it as it goes: the chapter's
/// `url_report` without the printing. A page we parsed for links (status
/// 200, HTML or XML) is an `html` line; any other status without a redirect
/// is an `error`, counted by status.
pub fn classify(stat: &FetchStatistic, counters: &mut Counters) -> Line {
    match kind_of(stat) {
        Kind::Failed(kind) => {
            counters.add("fail", 1);
            counters.add(&format!("fail_{kind}"), 1);
        }
        Kind::Redirect => counters.add("redirect", 1),
        Kind::Html => {
            counters.add("html", 1);
            counters.add("html_bytes", stat.size);
        }
        Kind::Other => {
            counters.add("other", 1);
            counters.add("other_bytes", stat.size);
        }
        Kind::NotModified => counters.add("not_modified", 1),
        Kind::Error(status) => {
            counters.add("error", 1);
            counters.add("error_bytes", stat.size);
            let status = status.map_or("none".to_string(), |s| s.to_string());
            counters.add(&format!("status_{status}"), 1);
        }
    }
    line_of(stat)
}

/// Which line a statistic gets, without counting it.
pub fn line_of(stat: &FetchStatistic) -> Line {
    match kind_of(stat) {
        Kind::Failed(_) => Line::Error,
        Kind::Redirect => Line::Redirect,
        Kind::Html => Line::Html,
        Kind::Other | Kind::NotModified | Kind::Error(_) => Line::Other,
    }
}

/// What a statistic is, as the report counts it.
enum Kind {
    /// No response: the exception's kind.
    Failed(&'static str),
    Redirect,
    /// A 200 page parsed for links.
    Html,
    /// Another 200.
    Other,
    /// A `304 Not Modified`: a recrawl asked if the page changed, and it
    /// had not.
    NotModified,
    /// Any other status (or none).
    Error(Option<u16>),
}

fn kind_of(stat: &FetchStatistic) -> Kind {
    if let Some(exception) = &stat.exception {
        Kind::Failed(exception.kind)
    } else if stat.next_url.is_some() {
        Kind::Redirect
    } else if stat.status == Some(200) && is_parsed(stat) {
        Kind::Html
    } else if stat.status == Some(200) {
        Kind::Other
    } else if stat.status == Some(304) {
        Kind::NotModified
    } else {
        Kind::Error(stat.status)
    }
}
// ANCHOR_END: url_report

fn is_parsed(stat: &FetchStatistic) -> bool {
    stat.content_type.as_deref().is_some_and(|ct| {
        ["text/html", "application/xhtml+xml", "application/xml"]
            .iter()
            .any(|t| ct.eq_ignore_ascii_case(t))
    })
}

/// What a report's summary is made of, counted one record at a time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Statistics counted.
    pub done: usize,
    /// Skipped URLs counted.
    pub skipped: usize,
    /// By kind (`html`, `fail_timeout`, `skipped_off-host`...).
    pub counters: Counters,
}

impl Tally {
    /// The tally of these records.
    pub fn of(done: &[FetchStatistic], skipped: &[Skipped]) -> Tally {
        let mut tally = Tally::default();
        done.iter().for_each(|stat| tally.stat(stat));
        skipped.iter().for_each(|skip| tally.skip(skip));
        tally
    }

    /// Counts a statistic.
    pub fn stat(&mut self, stat: &FetchStatistic) {
        self.done += 1;
        classify(stat, &mut self.counters);
        if let Some(recrawled) = stat.recrawl {
            self.counters
                .add(&format!("recrawl_{}", recrawled.as_str()), 1);
        }
    }

    /// Counts a skipped URL.
    pub fn skip(&mut self, skipped: &Skipped) {
        self.skipped += 1;
        self.counters
            .add(&format!("skipped_{}", skipped.reason.name()), 1);
    }
}
