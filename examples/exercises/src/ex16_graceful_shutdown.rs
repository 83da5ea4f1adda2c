//! Exercise 16 ★★: shut down gracefully on Ctrl-C.
//!
//! Stage 3 stops on Ctrl-C by cancelling its workers mid-fetch: a page half
//! downloaded is lost, and so is the record of what was still to do. A
//! graceful stop lets the fetches in progress finish, starts no new ones,
//! and reports what was left undone, so a later run could resume.
//!
//! Once `shutdown.trigger()` has been called: no new link is queued; a URL
//! a worker takes from the queue is not fetched but recorded in
//! `Report::abandoned`; a fetch already started finishes and is recorded
//! in `Report::fetched`; and `crawl` returns when nothing is in flight,
//! with `interrupted: true`. The queue's `join` still tells you when that
//! is, as long as every URL taken off the queue, fetched or abandoned, gets
//! its `task_done`. Keep the two `observe` calls where they are: the tests
//! trigger the shutdown from them.
//!
//! `on_ctrl_c` (finished) connects the real Ctrl-C to a `Shutdown`.
//!
//! Read first: the book's "Coordinating Coroutines" (Ctrl-C, and stopping
//! with `join` then cancel), `crawl_until` and `work` in
//! stage3-crawler/src/crawling.rs, and stage3-crawler/src/program/interrupt.rs.
//! Check: `cargo run -p exercises -- check 16`. Stuck: `... -- hint 16`.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashSet};
use std::io;
use std::rc::Rc;

use runtime::{JoinHandle, Queue};
use stage3_crawler::http::{Client, ClientConfig};
use stage3_crawler::interrupt::Interrupt;
use url::Url;

use crate::support::fetch_links;

/// A switch that asks the crawl to stop. Cloning gives another handle to
/// the same switch.
#[derive(Clone, Debug, Default)]
pub struct Shutdown {
    triggered: Rc<Cell<bool>>,
}

impl Shutdown {
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    /// Asks the crawl to stop. Takes effect at once: the next thing any
    /// worker does sees it.
    pub fn trigger(&self) {
        self.triggered.set(true);
    }

    pub fn is_triggered(&self) -> bool {
        self.triggered.get()
    }
}

/// Triggers `shutdown` when Ctrl-C is pressed (a second Ctrl-C ends the
/// process at once). Call it inside the runtime; the task it returns ends
/// after the first Ctrl-C, or cancel it when the crawl is over.
pub fn on_ctrl_c(shutdown: Shutdown) -> io::Result<JoinHandle<()>> {
    let interrupt = Interrupt::install()?;
    Ok(runtime::spawn(async move {
        interrupt.wait().await;
        shutdown.trigger();
    }))
}

/// What the crawl tells its observer.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// A worker is about to fetch this URL.
    Started(&'a Url),
    /// This URL is fetched, and its new links are queued (none once the
    /// shutdown is triggered).
    Finished(&'a Url),
}

/// How a crawl ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// URLs fetched (or failed: they were tried), sorted.
    pub fetched: BTreeSet<String>,
    /// URLs queued but never started because of the shutdown, sorted.
    pub abandoned: BTreeSet<String>,
    /// Whether the shutdown was triggered.
    pub interrupted: bool,
}

type Observer = Box<dyn FnMut(Event<'_>)>;

/// What the workers share.
struct Crawler {
    root: Url,
    client: Client,
    q: Queue<Url>,
    seen_urls: RefCell<HashSet<Url>>,
    report: RefCell<Report>,
    shutdown: Shutdown,
    observer: RefCell<Observer>,
}

/// Crawls the site from `root` with `max_tasks` workers until it is done
/// or `shutdown` is triggered, calling `observe` as fetches start and end.
pub async fn crawl(
    root: Url,
    max_tasks: usize,
    shutdown: Shutdown,
    observe: impl FnMut(Event<'_>) + 'static,
) -> Report {
    let crawler = Rc::new(Crawler {
        root: root.clone(),
        client: Client::new(ClientConfig::default()),
        q: Queue::new(),
        seen_urls: RefCell::default(),
        report: RefCell::default(),
        shutdown,
        observer: RefCell::new(Box::new(observe)),
    });
    crawler.add_url(root);
    let workers: Vec<JoinHandle<()>> = (0..max_tasks.max(1))
        .map(|_| runtime::spawn(Rc::clone(&crawler).work()))
        .collect();
    crawler.q.join().await;
    for worker in &workers {
        worker.cancel();
    }
    let mut report = crawler.report.take();
    report.interrupted = crawler.shutdown.is_triggered();
    report
}

impl Crawler {
    /// One worker: take a URL, fetch it, queue its new links, mark it done.
    async fn work(self: Rc<Self>) {
        loop {
            let url = self.q.get().await;
            // TODO: after a shutdown, abandon the URL instead.
            self.observe(Event::Started(&url));
            let links = fetch_links(&self.client, &url, &self.root)
                .await
                .unwrap_or_default();
            self.report.borrow_mut().fetched.insert(url.to_string());
            for link in links {
                self.add_url(link);
            }
            self.observe(Event::Finished(&url));
            let _ = self.q.task_done();
        }
    }

    fn add_url(&self, url: Url) {
        // TODO: after a shutdown, queue nothing new.
        if self.seen_urls.borrow_mut().insert(url.clone()) {
            self.q.put_nowait(url);
        }
    }

    fn observe(&self, event: Event<'_>) {
        (self.observer.borrow_mut())(event);
    }
}
