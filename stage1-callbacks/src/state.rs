//! The crawl's state: the chapter's `seen_urls` and `urls_todo`, and how
//! to crawl.
//!
//! The chapter keeps them in module globals, next to a global `stopped`
//! flag. We keep them in one [`Crawl`] value that every
//! [`Fetcher`](crate::fetcher::Fetcher) holds a reference to, so two crawls
//! (two tests, say) never share state. This module is those globals: the
//! fetchers use it, and so does [`crate::crawl`], which starts them; it
//! uses neither, so the arrows go one way, as in the chapter, where the
//! globals come first and the `Fetcher` class after them.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;

use crawl_kit::links;
use crawl_kit::report::Outcome;
use url::Url;

/// How to crawl.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// How long one URL may take, from connect to the last byte. The chapter
    /// has no timeouts; without one, a server that never answers keeps the
    /// crawl waiting forever.
    pub timeout: Duration,
    /// The chapter's `parse_links`: the links in a page. Always
    /// [`links::extract_links`], except in the example that shows what a
    /// bug in it looks like from inside a callback.
    pub parse_links: fn(&str, &Url) -> Vec<Url>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(10),
            parse_links: links::extract_links,
        }
    }
}

// ANCHOR: crawl_struct
/// What all the fetchers of one crawl share. One thread runs every callback,
/// so an `Rc<RefCell<Crawl>>` is enough: no lock, and no callback can be
/// interrupted halfway through an update.
pub struct Crawl {
    /// Where every fetcher connects: the root's host and port, resolved once.
    pub addr: SocketAddr,
    /// How to crawl.
    pub options: Options,
    /// Every URL found so far: the ones done and the ones in `urls_todo`.
    pub seen_urls: HashSet<Url>,
    /// The URLs being fetched now. The crawl is over when it is empty.
    pub urls_todo: HashSet<Url>,
    /// The largest `urls_todo` has been.
    pub concurrency: usize,
    outcomes: Vec<Outcome>,
    on_outcome: Box<dyn FnMut(&Outcome)>,
}
// ANCHOR_END: crawl_struct

impl Crawl {
    /// A crawl that reports each outcome to `on_outcome`.
    pub fn new(
        addr: SocketAddr,
        options: Options,
        on_outcome: impl FnMut(&Outcome) + 'static,
    ) -> Crawl {
        Crawl {
            addr,
            options,
            seen_urls: HashSet::new(),
            urls_todo: HashSet::new(),
            concurrency: 0,
            outcomes: Vec::new(),
            on_outcome: Box::new(on_outcome),
        }
    }

    /// The outcomes recorded so far, in the order they finished.
    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    // ANCHOR: add
    /// Adds `url` to `seen_urls` and `urls_todo`, unless it was seen before.
    /// Returns whether it is new, that is, whether to start a fetcher.
    pub fn add(&mut self, url: &Url) -> bool {
        if !self.seen_urls.insert(url.clone()) {
            return false;
        }
        self.urls_todo.insert(url.clone());
        self.concurrency = self.concurrency.max(self.urls_todo.len());
        true
    }
    // ANCHOR_END: add

    /// Reports how `url` ended: prints it (through `on_outcome`) and keeps it
    /// for the [`Report`](crawl_kit::report::Report).
    pub fn record(&mut self, outcome: Outcome) {
        (self.on_outcome)(&outcome);
        self.outcomes.push(outcome);
    }

    /// The outcomes, taken out for the report once the loop has ended.
    pub(crate) fn take_outcomes(&mut self) -> Vec<Outcome> {
        std::mem::take(&mut self.outcomes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawl_kit::report::Report;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn outcome_lines() {
        let page = url("http://127.0.0.1:8000/a.html");
        assert_eq!(
            Outcome::Fetched(page.clone()).to_string(),
            "http://127.0.0.1:8000/a.html"
        );
        assert_eq!(
            Outcome::Failed(page, "empty response".into()).to_string(),
            "error: http://127.0.0.1:8000/a.html (empty response)"
        );
    }

    #[test]
    fn summary_is_the_chapters_closing_line() {
        let report = Report {
            outcomes: Vec::new(),
            seen_urls: 137,
            concurrency: 42,
            elapsed: Duration::from_millis(1234),
        };
        assert_eq!(
            report.summary(),
            "137 URLs fetched in 1.2s, achieved concurrency = 42"
        );
    }

    #[test]
    fn add_counts_each_url_once_and_tracks_concurrency() {
        let mut crawl = Crawl::new("127.0.0.1:1".parse().unwrap(), Options::default(), |_| {});
        assert!(crawl.add(&url("http://h/a")));
        assert!(crawl.add(&url("http://h/b")));
        assert!(!crawl.add(&url("http://h/a")));
        crawl.urls_todo.remove(&url("http://h/a"));
        assert!(!crawl.add(&url("http://h/a")));
        assert!(crawl.add(&url("http://h/c")));
        assert_eq!(crawl.seen_urls.len(), 3);
        assert_eq!(crawl.urls_todo.len(), 2);
        assert_eq!(crawl.concurrency, 2);
    }
}
