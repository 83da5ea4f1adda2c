//! The crawl: the chapter's `Fetcher`, `seen_urls` and `urls_todo`, with a
//! task per URL and no limit on how many run at once.
//!
//! ```python
//! def fetch(self):
//!     sock = socket.socket()
//!     yield from connect(sock, ('xkcd.com', 80))
//!     get = 'GET {} HTTP/1.0\r\nHost: xkcd.com\r\n\r\n'.format(self.url)
//!     sock.send(get.encode('ascii'))
//!     self.response = yield from read_all(sock)
//!     self._process_response()
//!     urls_todo.remove(self.url)
//!     if not urls_todo:
//!         stopped = True
//!     print(self.url)
//! ```
//!
//! Each new URL gets its own task, as each gets its own `Task` in the
//! chapter, and the crawl is over when `urls_todo` is empty. The chapter's
//! global `stopped` flag becomes a [`chapter_future::Future`] that the last
//! fetcher resolves and `crawl` awaits.

use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crawl_kit::links::{extract_links, same_host};
use crawl_kit::response::{self, NOT_UTF8};
use url::Url;

use crate::chapter_future;
use crate::style::{self, Style};

/// What became of one URL, and the result of a crawl: the same types, and so
/// the same output lines, as stage 1.
pub use crawl_kit::report::{Outcome, Report};

/// How to crawl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Which fetcher runs: the state machines or the `async fn`s.
    pub style: Style,
    /// How long one URL may take, from connect to the last byte.
    pub timeout: Duration,
    /// The most fetchers running at once; the other URLs wait their turn.
    pub max_tasks: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            style: Style::default(),
            timeout: Duration::from_secs(10),
            max_tasks: 100,
        }
    }
}

/// Called with each URL's outcome as it finishes.
type OnOutcome = Box<dyn FnMut(&Outcome)>;

/// What every fetcher shares. One thread runs them all, so a `RefCell` is
/// enough, and no borrow is ever held across an `.await`.
struct Crawler {
    root: Url,
    options: Options,
    /// Strings, not `Url`s: a page can link to half a million URLs.
    seen_urls: RefCell<HashSet<Box<str>>>,
    /// Every URL not finished yet: running or waiting.
    urls_todo: RefCell<HashSet<Box<str>>>,
    /// URLs waiting for one of the `max_tasks` fetchers to finish.
    waiting: RefCell<VecDeque<Url>>,
    running: Cell<usize>,
    /// The most fetchers that ran at once.
    concurrency: Cell<usize>,
    outcomes: RefCell<Vec<Outcome>>,
    on_outcome: RefCell<OnOutcome>,
    stopped: chapter_future::Future<()>,
}

// ANCHOR: crawl
/// Crawls every page reachable from `root` on the same host and port, calling
/// `on_outcome` as each URL finishes. Must run inside the runtime
/// (`runtime::run_until_complete(crawl(...))`).
pub async fn crawl(
    root: Url,
    options: Options,
    on_outcome: impl FnMut(&Outcome) + 'static,
) -> Report {
    let crawler = Rc::new(Crawler {
        root: root.clone(),
        options,
        seen_urls: RefCell::default(),
        urls_todo: RefCell::default(),
        waiting: RefCell::default(),
        running: Cell::new(0),
        concurrency: Cell::new(0),
        outcomes: RefCell::default(),
        on_outcome: RefCell::new(Box::new(on_outcome)),
        stopped: chapter_future::Future::new(),
    });
    let start = Instant::now();
    crawler.add(root);
    // The chapter's `while not stopped: ...`: the last fetcher to finish
    // resolves `stopped`, which wakes us.
    crawler.stopped.clone().await;
    Report {
        outcomes: crawler.outcomes.take(),
        seen_urls: crawler.seen_urls.borrow().len(),
        concurrency: crawler.concurrency.get(),
        elapsed: start.elapsed(),
    }
}
// ANCHOR_END: crawl

impl Crawler {
    // ANCHOR: add
    /// Starts a fetcher for `url` unless the crawl has seen it already, or,
    /// when `max_tasks` are running, puts it in line.
    fn add(self: &Rc<Self>, url: Url) {
        if !self.seen_urls.borrow_mut().insert(url.as_str().into()) {
            return;
        }
        self.urls_todo.borrow_mut().insert(url.as_str().into());
        if self.running.get() < self.options.max_tasks {
            self.start(url);
        } else {
            self.waiting.borrow_mut().push_back(url);
        }
    }

    fn start(self: &Rc<Self>, url: Url) {
        let fetcher = Fetcher {
            crawler: self.clone(),
            url,
            finished: false,
        };
        // Nobody awaits the handle: the task reports through `finish`. When
        // the runtime is shutting down (a fetcher dropped with it) there is
        // nothing to start.
        if runtime::try_spawn(fetcher.fetch()).is_some() {
            self.running.set(self.running.get() + 1);
            self.concurrency
                .set(self.concurrency.get().max(self.running.get()));
        }
    }
    // ANCHOR_END: add

    /// Records `outcome` and starts the next waiting URL; the last URL to
    /// finish ends the crawl.
    fn finish(self: &Rc<Self>, outcome: Outcome) {
        self.running.set(self.running.get().saturating_sub(1));
        let next = self.waiting.borrow_mut().pop_front();
        if let Some(next) = next {
            self.start(next);
        }
        let todo_left = {
            let mut urls_todo = self.urls_todo.borrow_mut();
            urls_todo.remove(outcome.url().as_str());
            urls_todo.len()
        };
        self.outcomes.borrow_mut().push(outcome.clone());
        if todo_left == 0 {
            // Only the last URL gets here, once. This schedules `crawl` to
            // resume; it runs after this task's step, so the report below
            // still comes first.
            let _ = self.stopped.set_result(());
        }
        // Last, so that even a report that panics cannot stop the crawl
        // from ending.
        (self.on_outcome.borrow_mut())(&outcome);
    }
}

/// One URL's fetch, the chapter's `Fetcher`.
struct Fetcher {
    crawler: Rc<Crawler>,
    url: Url,
    /// Set once the outcome is recorded; see `Drop`.
    finished: bool,
}

impl Fetcher {
    // ANCHOR: fetcher
    /// Fetches the URL, queues its links, and reports. A slow server costs
    /// an error line after `timeout`, never a hang: the timeout drops the
    /// fetch, which closes its socket.
    async fn fetch(mut self) {
        let Options { style, timeout, .. } = self.crawler.options;
        let outcome = match runtime::timeout(timeout, style::fetch(&self.url, style)).await {
            Ok(Ok(raw)) => self.process_response(&raw),
            Ok(Err(e)) => Outcome::Failed(self.url.clone(), e.reason()),
            Err(elapsed) => Outcome::Failed(self.url.clone(), elapsed.to_string()),
        };
        self.finished = true;
        self.crawler.finish(outcome);
    }

    /// The chapter's `_process_response`: check the response, find the
    /// links, and start a fetcher for each new one on the same host. The
    /// checks and the link rules are stage 1's.
    fn process_response(&self, raw: &[u8]) -> Outcome {
        let response = match response::parse(raw) {
            Ok(response) => response,
            Err(e) => return Outcome::Failed(self.url.clone(), e.to_string()),
        };
        if !response.is_markup() {
            return Outcome::Fetched(self.url.clone());
        }
        // A page in another encoding than UTF-8 is fetched, not searched.
        let Some(text) = response.text() else {
            return Outcome::Unsearched(self.url.clone(), NOT_UTF8.into());
        };
        for link in extract_links(text, &self.url) {
            if same_host(&self.crawler.root, &link) {
                self.crawler.add(link);
            }
        }
        Outcome::Fetched(self.url.clone())
    }
    // ANCHOR_END: fetcher
}

// ANCHOR: drop
/// A fetcher that is dropped before it reports, because its task panicked or
/// was cancelled, still takes its URL off `urls_todo`. Without this the
/// crawl would wait for it forever. `Drop` is our `try: ... finally:`.
impl Drop for Fetcher {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            let reason = "the fetcher stopped before it finished".to_string();
            self.crawler
                .finish(Outcome::Failed(self.url.clone(), reason));
        }
    }
}
// ANCHOR_END: drop
