//! The lesson's queue: the chapter's `asyncio.Queue` and its `seen_urls`
//! set, in this process's memory. It is the first [`WorkQueue`]; whatever
//! the real web adds wraps it (or, shared with other processes, replaces
//! it), and uses the steps it is made of: a URL seen for the first time
//! ([`LocalQueue::first_sight`]), put on the queue ([`LocalQueue::put`]),
//! and what a fetch found, kept ([`LocalQueue::keep_found`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use runtime::{Queue, catch_unwind};
use url::Url;

use crate::config::Config;
use crate::logging::CrawlLog;
use crate::records::Records;
use crate::seams::{Found, Next, Outcome, Pending, Rules, Tag, Work, WorkQueue};
use crate::seen::SeenUrls;
use crate::skipped::{SkipReason, Skipped};

// ANCHOR: add_url
/// The queue, and every URL it has seen.
pub struct LocalQueue {
    /// What to fetch, how many redirects it may still follow, and from where.
    q: Queue<Work>,
    /// Every URL seen, queued or skipped: the dedup set. Its key is the
    /// `url` crate's normal form, so `HTTP://Host/./a` and `http://host/a`
    /// are one. Fingerprints, not strings: a big crawl sees millions.
    seen_urls: RefCell<SeenUrls>,
    /// How many URLs were queued, for `max_pages`.
    queued: Cell<usize>,
    max_pages: Option<usize>,
    /// Redirects a link may follow.
    max_redirect: u32,
    /// Whether a URL may be followed.
    rules: Rc<dyn Rules>,
    /// Every statistic and skipped URL, and who hears of them.
    records: Rc<Records>,
    log: Rc<CrawlLog>,
}

/// What seeing a URL came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Sight {
    /// Seen for the first time, and it may be queued.
    New,
    /// Seen before: nothing happens.
    Seen,
    /// Seen for the first time, and skipped with its reason.
    Refused,
}

impl LocalQueue {
    /// An empty queue on `q`, with the limits of `config`.
    pub fn new(
        q: Queue<Work>,
        config: &Config,
        rules: Rc<dyn Rules>,
        records: Rc<Records>,
        log: Rc<CrawlLog>,
    ) -> LocalQueue {
        LocalQueue {
            q,
            seen_urls: RefCell::new(SeenUrls::new()),
            queued: Cell::new(0),
            max_pages: config.max_pages,
            max_redirect: config.max_redirect,
            rules,
            records,
            log,
        }
    }
}

impl LocalQueue {
    /// A URL the crawl has come across, in a page (`from`) or as a root,
    /// with `max_redirect` redirects left. The first time it is seen it is
    /// queued, or skipped with its reason; after that, nothing happens:
    /// every URL is accounted for once.
    pub fn add_url(&self, url: Url, from: Option<&Rc<str>>, max_redirect: u32, tag: Tag) {
        if self.first_sight(&url, from) == Sight::New {
            let from = from.cloned();
            self.put(Work {
                url,
                max_redirect,
                from,
                tag,
            });
        }
    }

    /// Marks `url` seen. If it is new and may not be followed, it is
    /// skipped, with the reason. A root is fetched whatever the rules say
    /// of its host: the user asked for it.
    pub fn first_sight(&self, url: &Url, from: Option<&Rc<str>>) -> Sight {
        if !self.seen_urls.borrow_mut().insert(url.as_str()) {
            return Sight::Seen;
        }
        let refused = from.and_then(|_| self.rules.refusal(url));
        match refused.or_else(|| self.rules.refusal_known(url)) {
            Some(reason) => {
                self.skip_url(url, reason, from.map(|f| f.to_string()));
                Sight::Refused
            }
            None => Sight::New,
        }
    }

    /// Puts `work` on the queue, unless `max_pages` URLs were queued
    /// already (roots included): then it is skipped. Whether it was queued.
    pub fn put(&self, work: Work) -> bool {
        if self.max_pages.is_some_and(|max| self.queued.get() >= max) {
            let from = work.from.map(|f| f.to_string());
            self.skip_url(work.url, SkipReason::MaxPages, from);
            return false;
        }
        self.log
            .debug(format_args!("adding {} {}", work.url, work.max_redirect));
        self.rules.queued(&work.url);
        self.queued.set(self.queued.get() + 1);
        self.records.queued(&work);
        self.q.put_nowait(work);
        true
    }

    /// Records a URL that will not be fetched, with the reason.
    pub fn skip_url(&self, url: impl AsRef<str>, reason: SkipReason, from: Option<String>) {
        let url = url.as_ref();
        self.log
            .debug(format_args!("skipping {url}: {}", reason.name()));
        self.records.record_skip(Skipped {
            url: url.into(),
            reason,
            from,
        });
    }
}
// ANCHOR_END: add_url

// ANCHOR: keep_found
impl LocalQueue {
    /// Records what fetching `work` found, and sees where it leads through
    /// `add` (this queue's [`add_url`](Self::add_url), or a wrapper's): a
    /// redirect's target, or the page's links.
    pub fn keep_found(
        &self,
        work: &Work,
        found: Found,
        add: impl Fn(Url, Option<&Rc<str>>, u32, Tag),
    ) {
        self.records.record_statistic(found.stat);
        match found.next {
            Next::Nothing => {}
            Next::Redirect(next_url) => self.follow_redirect(work, next_url, add),
            Next::Links { links, invalid } => {
                let from: Rc<str> = Rc::from(work.url.as_str());
                for link in links {
                    add(link, Some(&from), self.max_redirect, work.tag.link());
                }
                // Nothing can fetch an href that is not a URL; it is seen,
                // and reported as written, once.
                for href in invalid {
                    if self.seen_urls.borrow_mut().insert(&href) {
                        self.skip_url(href, SkipReason::InvalidUrl, Some(from.to_string()));
                    }
                }
            }
        }
    }

    /// Queues a redirect's target, unless it was seen before (another
    /// chain got there first: the chapter's "redirect join") or this
    /// chain has used up its redirects.
    fn follow_redirect(
        &self,
        work: &Work,
        next_url: Url,
        add: impl Fn(Url, Option<&Rc<str>>, u32, Tag),
    ) {
        let url = &work.url;
        if work.max_redirect > 0 {
            if !self.seen_urls.borrow().contains(next_url.as_str()) {
                self.log
                    .info(format_args!("redirect to {next_url} from {url}"));
            }
            let from = Rc::from(url.as_str());
            add(
                next_url,
                Some(&from),
                work.max_redirect - 1,
                work.tag.redirect(),
            );
        } else {
            self.log.error(format_args!(
                "redirect limit reached for {next_url} from {url}"
            ));
        }
    }
}

impl WorkQueue for LocalQueue {
    fn get(&self) -> Pending<'_, Work> {
        Box::pin(self.q.get())
    }

    fn task_done(&self, work: Work, found: Found) -> Pending<'_, ()> {
        Box::pin(async move {
            self.guarded(&work.url, || {
                self.keep_found(&work, found, |url, from, max_redirect, tag| {
                    self.add_url(url, from, max_redirect, tag)
                })
            })
            .await;
            self.mark_done();
        })
    }

    fn join(&self) -> Pending<'_, Outcome> {
        Box::pin(async {
            self.q.join().await;
            Outcome::Completed
        })
    }

    fn close(&self, outcome: Outcome, unfinished: Vec<Work>) -> Pending<'_, ()> {
        // After an interrupt, what the workers were fetching and what was
        // still queued are each named as interrupted, so that the report
        // still accounts for every URL seen.
        if outcome != Outcome::Completed {
            let queued = std::iter::from_fn(|| self.q.get_nowait());
            for work in unfinished.into_iter().chain(queued) {
                self.skip_unfinished(work);
            }
        }
        Box::pin(std::future::ready(()))
    }
    // ANCHOR_END: keep_found

    fn is_new(&self, url: &Url) -> bool {
        !self.seen_urls.borrow().contains(url.as_str())
    }

    fn qsize(&self) -> usize {
        self.q.qsize()
    }

    fn skip(&self, work: Work, reason: SkipReason) -> Pending<'_, ()> {
        let from = work.from.map(|f| f.to_string());
        self.skip_url(work.url, reason, from);
        self.mark_done();
        Box::pin(std::future::ready(()))
    }

    fn done_listing(&self, work: Work, listed: Option<Vec<Url>>) -> Pending<'_, ()> {
        Box::pin(async move {
            self.guarded(&work.url, || {
                self.add_listed(&work, listed, |url, from, max_redirect, tag| {
                    self.add_url(url, from, max_redirect, tag)
                })
            })
            .await;
            self.mark_done();
        })
    }
}

/// What a wrapper of the queue uses besides its steps.
impl LocalQueue {
    /// Runs `record`, what `url` led to, inside a panic guard: a bug there
    /// must cost this URL's links, not the `task_done` that follows, without
    /// which `join` would wait forever.
    pub async fn guarded(&self, url: &Url, record: impl FnOnce()) {
        if let Err(panic) = catch_unwind(async { record() }).await {
            self.log.error(format_args!(
                "recording what {url} led to panicked: {panic}"
            ));
        }
    }

    /// Marks one URL done: what it came to is told first, so that those
    /// who listen have it before the queue hears it is done.
    pub fn mark_done(&self) {
        self.records.settled();
        self.finish_one();
    }

    /// The queue's own `task_done`, with nothing told.
    pub fn finish_one(&self) {
        if let Err(e) = self.q.task_done() {
            self.log.error(format_args!("{e}"));
        }
    }

    /// Puts `work`, which was taken from the queue and kept aside, back on
    /// it: its old place there ends with a `task_done`.
    pub fn put_back(&self, work: Work) {
        self.q.put_nowait(work);
        self.finish_one();
    }

    /// Puts `work` on the queue as it is: a URL queued before (a crawl
    /// taken up again), or the crawler's own business. It counts for
    /// `max_pages` only through [`set_queued`](Self::set_queued).
    pub fn requeue(&self, work: Work) {
        self.q.put_nowait(work);
    }

    /// How many URLs count as queued, for `max_pages`.
    pub fn set_queued(&self, queued: usize) {
        self.queued.set(queued);
    }

    /// Marks `url` seen, without queueing it; whether it was new.
    pub fn mark_seen(&self, url: &str) -> bool {
        self.seen_urls.borrow_mut().insert(url)
    }

    /// URLs put on the queue and not yet marked done, whether a worker
    /// took them or not.
    pub fn unfinished(&self) -> usize {
        self.q.unfinished()
    }

    /// Every URL seen: fetched, failed or skipped.
    pub fn seen(&self) -> usize {
        self.seen_urls.borrow().len()
    }

    /// The records this queue keeps.
    pub fn records(&self) -> &Rc<Records> {
        &self.records
    }

    /// Sees the URLs a piece of the crawler's own work listed as links one
    /// step from a root, found at its URL.
    pub fn add_listed(
        &self,
        work: &Work,
        listed: Option<Vec<Url>>,
        add: impl Fn(Url, Option<&Rc<str>>, u32, Tag),
    ) {
        let from: Rc<str> = Rc::from(work.url.as_str());
        for url in listed.unwrap_or_default() {
            add(url, Some(&from), self.max_redirect, Tag::root().link());
        }
    }

    /// Names `work` as interrupted in the report, unless it is the
    /// crawler's own business, which is in no record.
    pub fn skip_unfinished(&self, work: Work) {
        if work.tag.in_report() {
            self.records.record_skip(Skipped {
                url: work.url.into(),
                reason: SkipReason::Interrupted,
                from: work.from.map(|f| f.to_string()),
            });
        }
    }
}
