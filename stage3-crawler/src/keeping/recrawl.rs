//! `--recrawl`: crawling a site again, fetching only what changed.
//!
//! A recrawl starts from the journal of a finished crawl (`--state`). Every
//! URL that crawl queued goes on the queue again, and the client asks for
//! each page with the validators its last `200 OK` came with
//! (`If-None-Match`, `If-Modified-Since`): a page that did not change comes
//! back as `304 Not Modified`, with no body and so no links, and only the
//! pages that changed are read for links. What is new among those links is
//! crawled as in any crawl.
//!
//! This module is the plug-in the queue wears for it: it names what became
//! of each URL (`not-modified`, `changed`, `new`) in its statistic, for the
//! report. A URL is not modified when its server says so (`304`), or
//! answers as it did last time with no page at all (the same redirect, the
//! same error status): those have no validators to send. A page fetched
//! whole is changed, even if its server simply keeps no validators (with
//! `--warc`, its record is then a revisit if its bytes are the same). The
//! journal begins the new generation; the client sends the validators; the
//! archive writes the revisit records.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use url::Url;

use crate::keeping::journal::Answer;
use crate::seams::{Found, Outcome, Pending, Work, WorkQueue};
use crate::skipped::SkipReason;
use crate::stats::Recrawled;

// ANCHOR: recrawl
/// A queue whose statistics say what became of each URL since the last
/// crawl.
pub struct Recrawl {
    inner: Rc<dyn WorkQueue>,
    /// Every URL an earlier crawl queued.
    known: HashSet<String>,
    /// What each URL an earlier crawl fetched was answered.
    answered: HashMap<String, Answer>,
}

impl Recrawl {
    /// `inner`, labelling each statistic against what was `known` and
    /// how it was `answered`.
    pub fn new(
        inner: Rc<dyn WorkQueue>,
        known: HashSet<String>,
        answered: HashMap<String, Answer>,
    ) -> Recrawl {
        Recrawl {
            inner,
            known,
            answered,
        }
    }

    /// What became of `url`, answered `status`, redirecting to `next_url`.
    fn label(&self, url: &Url, status: Option<u16>, next_url: Option<&str>) -> Recrawled {
        if !self.known.contains(url.as_str()) {
            return Recrawled::New;
        }
        let same_non_page = match status {
            Some(304) => return Recrawled::NotModified,
            Some(200) | None => false,
            _ => self
                .answered
                .get(url.as_str())
                .is_some_and(|(was, led)| *was == status && led.as_deref() == next_url),
        };
        match same_non_page {
            true => Recrawled::NotModified,
            false => Recrawled::Changed,
        }
    }
}

impl WorkQueue for Recrawl {
    fn task_done(&self, work: Work, mut found: Found) -> Pending<'_, ()> {
        let stat = &found.stat;
        let label = self.label(&work.url, stat.status, stat.next_url.as_deref());
        found.stat.recrawl = Some(label);
        self.inner.task_done(work, found)
    }
    // ANCHOR_END: recrawl

    fn get(&self) -> Pending<'_, Work> {
        self.inner.get()
    }

    fn join(&self) -> Pending<'_, Outcome> {
        self.inner.join()
    }

    fn close(&self, outcome: Outcome, unfinished: Vec<Work>) -> Pending<'_, ()> {
        self.inner.close(outcome, unfinished)
    }

    fn is_new(&self, url: &Url) -> bool {
        self.inner.is_new(url)
    }

    fn qsize(&self) -> usize {
        self.inner.qsize()
    }

    fn skip(&self, work: Work, reason: SkipReason) -> Pending<'_, ()> {
        self.inner.skip(work, reason)
    }

    fn done_listing(&self, work: Work, listed: Option<Vec<Url>>) -> Pending<'_, ()> {
        self.inner.done_listing(work, listed)
    }

    fn readmit(&self, work: Work) -> Option<Work> {
        self.inner.readmit(work)
    }

    fn stopped_by(&self) -> Option<String> {
        self.inner.stopped_by()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_url_is_named_by_what_became_of_it() {
        let known: HashSet<String> = ["http://h/a", "http://h/r", "http://h/e"]
            .map(str::to_string)
            .into();
        let answered: HashMap<String, Answer> = [
            ("http://h/a".to_string(), (Some(200), None)),
            (
                "http://h/r".to_string(),
                (Some(301), Some("http://h/a".into())),
            ),
            ("http://h/e".to_string(), (Some(404), None)),
        ]
        .into();
        struct Nothing;
        impl WorkQueue for Nothing {
            fn get(&self) -> Pending<'_, Work> {
                Box::pin(std::future::pending())
            }
            fn task_done(&self, _: Work, _: Found) -> Pending<'_, ()> {
                Box::pin(async {})
            }
            fn join(&self) -> Pending<'_, Outcome> {
                Box::pin(async { Outcome::Completed })
            }
            fn close(&self, _: Outcome, _: Vec<Work>) -> Pending<'_, ()> {
                Box::pin(async {})
            }
            fn is_new(&self, _: &Url) -> bool {
                true
            }
            fn qsize(&self) -> usize {
                0
            }
            fn skip(&self, _: Work, _: SkipReason) -> Pending<'_, ()> {
                Box::pin(async {})
            }
            fn done_listing(&self, _: Work, _: Option<Vec<Url>>) -> Pending<'_, ()> {
                Box::pin(async {})
            }
        }
        let recrawl = Recrawl::new(Rc::new(Nothing), known, answered);
        let label =
            |url: &Url, (status, next): &Answer| recrawl.label(url, *status, next.as_deref());
        let url = |path: &str| Url::parse(&format!("http://h/{path}")).unwrap();
        let status = |s: u16| (Some(s), None);
        assert_eq!(label(&url("a"), &status(304)), Recrawled::NotModified);
        assert_eq!(label(&url("a"), &status(200)), Recrawled::Changed);
        assert_eq!(label(&url("a"), &(None, None)), Recrawled::Changed);
        assert_eq!(label(&url("b"), &status(200)), Recrawled::New);
        assert_eq!(label(&url("b"), &status(304)), Recrawled::New);
        // The same redirect, the same error: not modified; else changed.
        let to = |path: &str| (Some(301), Some(format!("http://h/{path}")));
        assert_eq!(label(&url("r"), &to("a")), Recrawled::NotModified);
        assert_eq!(label(&url("r"), &to("b")), Recrawled::Changed);
        assert_eq!(label(&url("e"), &status(404)), Recrawled::NotModified);
        assert_eq!(label(&url("e"), &status(410)), Recrawled::Changed);
    }
}
