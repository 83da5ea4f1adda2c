// ANCHOR: module
//! The crawler: `max_tasks` workers on a joinable queue, the chapter's
//! `Crawler` class (`crawling.py`).
//!
//! The queue holds [`Work`]: a URL, how many redirects it may still follow,
//! and the page that linked it. Each worker takes one, fetches it, records a
//! [`FetchStatistic`], puts the page's new links on the queue, and calls
//! `task_done`. `crawl` waits in `join` until every URL put has been marked
//! done, then cancels the workers, who are all parked in `get` by then.
//!
//! Every URL the crawl sees ends in the report once: a statistic if it was
//! fetched (or failed), a [`Skipped`] record with the reason if not.
//!
//! What the real web adds plugs in through the seams of [`crate::seams`]:
//! [`Rules`] say whether and when a URL may be fetched, a [`Frontier`]
//! shared with other processes may feed the queue, and the [`Records`]
//! tell whoever listens. This module names none of those features.
//!
//! The book's Coordinating Coroutines shows this file whole, front to back,
//! so it reads in the chapter's order: each `impl Crawler` block is one of
//! its sections, with the small functions it uses beside it. What the crawl
//! offers those who plug into it (its numbers, its records, its queue for a
//! frontier) is in the child module `access`.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::time::Instant;

use runtime::{Either, JoinHandle, Queue, TaskBuilder, catch_unwind};
use url::Url;

use crate::charset::{charset_param, media_type};
use crate::config::Config;
use crate::http::{Client, FetchError, Response};
use crate::logging::CrawlLog;
use crate::parsing::ParsePool;
use crate::records::Records;
use crate::seams::{Admission, Again, Found, Frontier, Next, Rules};
pub use crate::seams::{Outcome, Work};
use crate::seen::SeenUrls;
use crate::skipped::{SkipReason, Skipped};
use crate::stats::{Exception, FetchStatistic};

mod access;
// ANCHOR_END: module

// ANCHOR: crawler
/// The crawl: its settings, its queue, its workers' shared state, and what
/// it found.
pub struct Crawler {
    config: Config,
    roots: Vec<Url>,
    /// What to fetch, how many redirects it may still follow, and from where.
    q: Queue<Work>,
    /// Every URL seen, queued or skipped: the dedup set. Its key is the
    /// `url` crate's normal form, so `HTTP://Host/./a` and `http://host/a`
    /// are one. Fingerprints, not strings: a big crawl sees millions.
    seen_urls: RefCell<SeenUrls>,
    /// How many URLs were queued, for `max_pages`.
    queued: Cell<usize>,
    /// Whether and when a URL may be fetched: the roots' hosts and
    /// `--exclude`, and whatever else the crawl obeys.
    rules: Rc<dyn Rules>,
    /// Where URLs come from when the crawl is shared with other processes;
    /// `None`: from this queue alone.
    frontier: Option<Rc<dyn Frontier>>,
    /// Every statistic and skipped URL, and who hears of them.
    records: Records,
    /// What each worker is fetching: what an interrupt leaves unfinished.
    current: RefCell<Vec<Option<Work>>>,
    client: Rc<Client>,
    parser: ParsePool,
    log: Rc<CrawlLog>,
    t0: Cell<Instant>,
    t1: Cell<Option<Instant>>,
}
// ANCHOR_END: crawler

// ANCHOR: assemble
/// What a crawler is made of besides its settings: the seams' choices.
pub struct Parts {
    /// The crawl's queue (the rules may hold it too).
    pub q: Queue<Work>,
    /// The rules.
    pub rules: Rc<dyn Rules>,
    /// A shared frontier, if any.
    pub frontier: Option<Rc<dyn Frontier>>,
    /// The records and their listeners.
    pub records: Records,
    /// The HTTP client.
    pub client: Rc<Client>,
    /// The log.
    pub log: Rc<CrawlLog>,
}

impl Crawler {
    /// A crawler of `roots` made of `parts`. Unless a frontier feeds it,
    /// the roots are queued now: fetched whatever the rules say, since the
    /// user asked for them.
    pub fn assemble(roots: Vec<Url>, config: Config, parts: Parts) -> std::io::Result<Crawler> {
        let crawler = Crawler {
            parser: ParsePool::new(config.parse_threads)?,
            config,
            roots,
            q: parts.q,
            seen_urls: RefCell::new(SeenUrls::new()),
            queued: Cell::new(0),
            rules: parts.rules,
            frontier: parts.frontier,
            records: parts.records,
            current: RefCell::new(Vec::new()),
            client: parts.client,
            log: parts.log,
            t0: Cell::new(Instant::now()),
            t1: Cell::new(None),
        };
        Ok(crawler)
    }

    /// Queues the roots: the first URLs of a crawl of this process's own.
    pub fn queue_roots(&self) {
        for root in self.roots.clone() {
            self.see(root, None, self.config.max_redirect, 0);
        }
    }
}
// ANCHOR_END: assemble

// ANCHOR: crawl
impl Crawler {
    /// Runs the crawl until every queued URL is done.
    pub async fn crawl(self: &Rc<Self>) -> Outcome {
        self.crawl_until(std::future::pending()).await
    }

    /// Runs the crawl until every queued URL is done, or `interrupt`
    /// completes (Ctrl-C), whichever comes first. Either way the workers
    /// are cancelled before it returns.
    pub async fn crawl_until(self: &Rc<Self>, interrupt: impl Future<Output = ()>) -> Outcome {
        *self.current.borrow_mut() = vec![None; self.config.max_tasks];
        let workers: Vec<JoinHandle<()>> = (0..self.config.max_tasks)
            .map(|worker| {
                TaskBuilder::new()
                    .name(format!("worker-{worker}"))
                    .spawn(Rc::clone(self).work(worker))
            })
            .collect();
        self.t0.set(Instant::now());
        // Done when the queue is joined, or, shared, when every process's
        // queue is: the frontier knows.
        let done = async {
            match &self.frontier {
                None => {
                    self.q.join().await;
                    Outcome::Completed
                }
                Some(frontier) => frontier.run(&**self).await,
            }
        };
        let outcome = match runtime::select(done, interrupt).await {
            Either::Left(outcome) => outcome,
            Either::Right(()) => Outcome::Interrupted,
        };
        self.t1.set(Some(Instant::now()));
        // They are all parked in `get` (or, if interrupted, mid-fetch):
        // dropping their futures closes their sockets.
        for worker in &workers {
            worker.cancel();
        }
        let drained = self.rules.drain();
        for (url, from) in drained.too_deep {
            let skipped = Skipped {
                url: url.into(),
                reason: SkipReason::Depth,
                from: from.map(|f| f.to_string()),
            };
            // Only a crawl that ran to its end knows no shorter path is
            // left: an interrupted one keeps them set aside, for its
            // resumption.
            match outcome {
                Outcome::Completed => self.records.record_skip(skipped),
                Outcome::Interrupted | Outcome::FrontierLost => self.records.keep_skip(skipped),
            }
        }
        if outcome != Outcome::Completed {
            if let Some(frontier) = &self.frontier {
                frontier.release(&**self).await;
            }
            self.skip_unfinished(drained.parked);
        }
        self.records.settled();
        outcome
    }

    /// After an interrupt: what the workers were fetching and what was
    /// still queued, each named as interrupted, so that the report still
    /// accounts for every URL seen.
    fn skip_unfinished(&self, parked: Vec<Work>) {
        let in_flight: Vec<Work> = self
            .current
            .borrow_mut()
            .iter_mut()
            .flat_map(Option::take)
            .collect();
        let queued = std::iter::from_fn(|| self.q.get_nowait());
        let unfinished = in_flight.into_iter().chain(parked).chain(queued);
        for work in unfinished.filter(|w| !w.sitemap) {
            self.records.record_skip(Skipped {
                url: work.url.into(),
                reason: SkipReason::Interrupted,
                from: work.from.map(|f| f.to_string()),
            });
        }
    }
}
// ANCHOR_END: crawl

// ANCHOR: work
/// What a worker does next with a URL.
enum Step {
    /// Ask the rules.
    Admit(Work),
    /// Fetch it: the rules let it start.
    Fetch(Work),
}

impl Crawler {
    /// One worker: take a URL, fetch it, mark it done, forever. Nothing that
    /// happens to one URL can end the loop, or `join` would wait forever for
    /// a `task_done` that never comes. A URL whose host is busy is parked
    /// by the rules, and the worker goes back for another; when a fetch
    /// ends, the worker takes the next URL the rules let start, if any.
    async fn work(self: Rc<Self>, worker: usize) {
        loop {
            let mut step = Some(Step::Admit(self.q.get().await));
            while let Some(next) = step.take() {
                step = match next {
                    Step::Admit(work) => self.admit(worker, work).await,
                    Step::Fetch(work) => self.fetch_work(worker, work).await,
                };
            }
        }
    }

    /// Asks the rules what to do with `work`.
    async fn admit(&self, worker: usize, work: Work) -> Option<Step> {
        match self.rules.admit(work) {
            Admission::Fetch(work) => Some(Step::Fetch(work)),
            // Parked: its `task_done` comes when it has been fetched.
            Admission::Parked => None,
            Admission::After(work, first) => {
                self.current.borrow_mut()[worker] = Some(work.clone());
                first.await;
                self.current.borrow_mut()[worker] = None;
                Some(Step::Admit(work))
            }
            Admission::Dropped(work) => {
                // A sitemap robots.txt disallows: shared, its lease is
                // given up as done, with nothing read.
                if let Some(frontier) = &self.frontier
                    && work.lease.is_some()
                {
                    frontier.sitemap(self, &work, None).await;
                }
                self.task_done(work.depth);
                None
            }
            Admission::Skip(work, reason) => {
                match &self.frontier {
                    Some(frontier) if work.lease.is_some() => {
                        frontier.skip(self, &work, reason).await
                    }
                    _ => self.skip(work.url, reason, work.from.map(|f| f.to_string())),
                }
                self.task_done(work.depth);
                None
            }
            Admission::Fail(work, exception) => {
                let stat = FetchStatistic::failure(work.url.to_string(), exception);
                match &self.frontier {
                    Some(frontier) if work.lease.is_some() => {
                        frontier.complete(self, &work, Found::nothing(stat)).await
                    }
                    _ => self.records.record_statistic(stat),
                }
                self.task_done(work.depth);
                None
            }
        }
    }

    /// Fetches `work`, which the rules let start, tells the rules it
    /// ended, and marks it done. Returns the next URL the rules let start
    /// on the same host, if any.
    async fn fetch_work(&self, worker: usize, work: Work) -> Option<Step> {
        let (url, max_redirect, depth) = (work.url.clone(), work.max_redirect, work.depth);
        let sitemap = work.sitemap;
        self.current.borrow_mut()[worker] = Some(work);
        let fetched = if sitemap {
            // The pages it lists are seen inside the guard too.
            catch_unwind(async {
                let pages = self.rules.read_sitemap(&url).await;
                // Shared, they go to the frontier that fed it.
                let leased = self.current.borrow()[worker]
                    .clone()
                    .filter(|w| w.lease.is_some());
                match (&self.frontier, &leased) {
                    (Some(frontier), Some(work)) => {
                        frontier.sitemap(self, work, Some(pages)).await;
                    }
                    _ => {
                        let from: Rc<str> = Rc::from(url.as_str());
                        for page in pages {
                            self.see(page, Some(&from), self.config.max_redirect, 1);
                        }
                    }
                }
                None
            })
            .await
        } else {
            catch_unwind(self.fetch(&url)).await.map(Some)
        };
        let work = self.current.borrow_mut()[worker].take();
        let found = fetched.unwrap_or_else(|panic| {
            self.log
                .error(format_args!("fetching {url} panicked: {panic}"));
            let exception = Exception {
                kind: "internal",
                message: format!("internal error: {panic}"),
            };
            Some(Found::nothing(FetchStatistic::failure(
                url.to_string(),
                exception,
            )))
        });
        // Recording what the fetch found is guarded the same way: a bug
        // there must cost this URL's links, not the `task_done` below,
        // without which the queue would wait forever.
        let recorded = match (found, work, &self.frontier) {
            (Some(found), Some(work), Some(frontier)) if work.lease.is_some() => {
                catch_unwind(frontier.complete(self, &work, found)).await
            }
            (Some(found), _, _) => {
                catch_unwind(async { self.keep_found(&url, found, max_redirect, depth) }).await
            }
            (None, _, _) => Ok(()),
        };
        if let Err(panic) = recorded {
            self.log.error(format_args!(
                "recording what {url} led to panicked: {panic}"
            ));
        }
        let next = self.rules.finish(&url);
        self.task_done(depth);
        next.map(Step::Fetch)
    }

    /// Marks a URL of `depth` done. If the rules hold URLs that may go on
    /// the queue now (the next level of `--max-depth`), they go first, so
    /// that the queue's count never touches zero on the way.
    fn task_done(&self, depth: u32) {
        // What the URL came to is told before the queue hears it is done.
        self.records.settled();
        for work in self.rules.done(depth) {
            self.q.put_nowait(work);
            self.finish_one();
        }
        self.finish_one();
    }

    fn finish_one(&self) {
        if let Err(e) = self.q.task_done() {
            self.log.error(format_args!("{e}"));
        }
    }
}
// ANCHOR_END: work

// ANCHOR: fetch
impl Crawler {
    /// Fetches one URL, retrying network errors, and says what it found.
    async fn fetch(&self, url: &Url) -> Found {
        let mut tries = 0;
        let response = loop {
            tries += 1;
            match self.client.get(url).await {
                Ok(response) => {
                    if tries > 1 {
                        self.log
                            .info(format_args!("try {tries} for {url} succeeded"));
                    }
                    break response;
                }
                Err(error) if error.is_retryable() => {
                    self.log
                        .info(format_args!("try {tries} for {url} raised {error}"));
                    if tries < self.config.max_tries {
                        continue;
                    }
                    self.log
                        .error(format_args!("{url} failed after {tries} tries"));
                    return Found::nothing(failure_statistic(url, &error));
                }
                Err(error) => {
                    self.log.warn(format_args!("{url} failed: {error}"));
                    return Found::nothing(failure_statistic(url, &error));
                }
            }
        };
        match self.redirect_target(url, &response) {
            Some(next_url) => Found {
                stat: redirect_statistic(url, &response, &next_url),
                next: Next::Redirect(next_url),
            },
            None => {
                let (stat, next) = self.parse_links(url, response).await;
                Found { stat, next }
            }
        }
    }

    /// Records what a fetch found, and sees where it leads: a redirect's
    /// target, or the page's links, one step deeper.
    fn keep_found(&self, url: &Url, found: Found, max_redirect: u32, depth: u32) {
        self.records.record_statistic(found.stat);
        match found.next {
            Next::Nothing => {}
            Next::Redirect(next_url) => self.follow_redirect(url, next_url, max_redirect, depth),
            Next::Links { links, invalid } => {
                let from: Rc<str> = Rc::from(url.as_str());
                // Saturating: a depth replayed from a journal can be anything.
                for link in links {
                    self.see(
                        link,
                        Some(&from),
                        self.config.max_redirect,
                        depth.saturating_add(1),
                    );
                }
                // Nothing can fetch an href that is not a URL; it is seen,
                // and reported as written, once.
                for href in invalid {
                    if self.seen_urls.borrow_mut().insert(&href) {
                        self.skip(href, SkipReason::InvalidUrl, Some(from.to_string()));
                    }
                }
            }
        }
    }
}

/// The statistic of a fetch that got no usable response.
fn failure_statistic(url: &Url, error: &FetchError) -> FetchStatistic {
    let mut stat = FetchStatistic::failure(url.to_string(), error.to_exception());
    // Over the size cap, we did get a response; keep what we know.
    if let FetchError::TooLarge {
        status,
        content_type,
        ..
    } = error
    {
        stat.status = Some(*status);
        stat.content_type = content_type.as_deref().map(|ct| media_type(ct).to_string());
    }
    stat
}
// ANCHOR_END: fetch

// ANCHOR: follow_redirect
/// The statuses the chapter treats as redirects, plus 308, which came later.
fn is_redirect(status: u16) -> bool {
    matches!(status, 300 | 301 | 302 | 303 | 307 | 308)
}

/// The statistic of a redirect to `next_url`.
fn redirect_statistic(url: &Url, response: &Response, next_url: &Url) -> FetchStatistic {
    FetchStatistic {
        url: url.to_string(),
        next_url: Some(next_url.to_string()),
        status: Some(response.status),
        exception: None,
        size: response.body.len() as u64,
        content_type: response
            .header("content-type")
            .map(|ct| media_type(ct).to_string()),
        encoding: None,
        num_urls: 0,
        num_new_urls: 0,
        wire_size: response.wire_size,
    }
}

impl Crawler {
    /// Where a redirect points, resolved against the request URL, without
    /// its fragment. `None` for other responses, and for a redirect with no
    /// usable `Location`, which is then reported like any other response.
    fn redirect_target(&self, url: &Url, response: &Response) -> Option<Url> {
        if !is_redirect(response.status) {
            return None;
        }
        let Some(location) = response.header("location") else {
            self.log.warn(format_args!(
                "{url} answered {} without a Location",
                response.status
            ));
            return None;
        };
        match url.join(location.trim()) {
            Ok(mut next) => {
                next.set_fragment(None);
                Some(next)
            }
            Err(e) => {
                self.log.warn(format_args!(
                    "{url} redirects to an invalid Location {location:?}: {e}"
                ));
                None
            }
        }
    }

    /// Records a redirect and queues its target, unless the target was seen
    /// before (another chain got there first: the chapter's "redirect join")
    /// or this chain has used up its redirects.
    fn follow_redirect(&self, url: &Url, next_url: Url, max_redirect: u32, depth: u32) {
        if max_redirect > 0 {
            if !self.seen_urls.borrow().contains(next_url.as_str()) {
                self.log
                    .info(format_args!("redirect to {next_url} from {url}"));
            }
            let from = Rc::from(url.as_str());
            self.see(next_url, Some(&from), max_redirect - 1, depth);
        } else {
            self.log.error(format_args!(
                "redirect limit reached for {next_url} from {url}"
            ));
        }
    }
}
// ANCHOR_END: follow_redirect

// ANCHOR: parse_links
/// Media types whose bodies we search for links.
fn is_markup(media_type: &str) -> bool {
    ["text/html", "application/xhtml+xml", "application/xml"]
        .iter()
        .any(|t| media_type.eq_ignore_ascii_case(t))
}

impl Crawler {
    /// Builds the statistic for a response that is not a redirect, and, for
    /// a 200 HTML or XML page, finds the links the crawl may follow. The
    /// parsing itself runs on a helper thread.
    async fn parse_links(&self, url: &Url, response: Response) -> (FetchStatistic, Next) {
        let content_type = response.header("content-type");
        let header_charset = content_type.and_then(charset_param).map(str::to_string);
        let mut stat = FetchStatistic {
            url: url.to_string(),
            next_url: None,
            status: Some(response.status),
            exception: None,
            size: response.body.len() as u64,
            content_type: content_type.map(|ct| media_type(ct).to_string()),
            encoding: header_charset.as_deref().map(str::to_ascii_lowercase),
            num_urls: 0,
            num_new_urls: 0,
            wire_size: response.wire_size,
        };
        let markup = stat.content_type.as_deref().is_some_and(is_markup);
        if response.status != 200 || !markup {
            return (stat, Next::Nothing);
        }
        let page = match self
            .parser
            .parse(response.body, header_charset, url.clone())
            .await
        {
            Ok(page) => page,
            Err(e) => {
                stat.exception = Some(Exception {
                    kind: "parse",
                    message: e,
                });
                return (stat, Next::Nothing);
            }
        };
        stat.encoding = Some(page.encoding);
        let seen = self.seen_urls.borrow();
        for link in page
            .links
            .iter()
            .filter(|link| self.rules.refusal(link).is_none())
        {
            stat.num_urls += 1;
            stat.num_new_urls += usize::from(!seen.contains(link.as_str()));
        }
        if stat.num_urls > 0 {
            self.log.info(format_args!(
                "got {} distinct urls from {url}",
                stat.num_urls
            ));
        }
        // All of them, followed or not: each is seen, and accounted for. An
        // href that is not a URL is shown as written, up to the length a
        // URL may have.
        let max = self.config.traps.max_url_length;
        let invalid = page
            .invalid
            .into_iter()
            .map(|href| href.chars().take(max).collect())
            .collect();
        let next = Next::Links {
            links: page.links,
            invalid,
        };
        (stat, next)
    }
}
// ANCHOR_END: parse_links

// ANCHOR: url_allowed
impl Crawler {
    /// Why a link may not be followed, if it may not: the rules' answer
    /// (not on one of the roots' hosts, excluded, not http or https, a
    /// trap).
    pub fn refusal(&self, url: &Url) -> Option<SkipReason> {
        self.rules.refusal(url)
    }

    /// Whether a link may be followed.
    pub fn url_allowed(&self, url: &Url) -> bool {
        self.refusal(url).is_none()
    }
}
// ANCHOR_END: url_allowed

// ANCHOR: add_url
impl Crawler {
    /// A URL the crawl has come across, in a page (`from`) or as a root,
    /// `depth` links from a root, with `max_redirect` redirects left. The
    /// first time it is seen it is queued, or skipped with its reason;
    /// after that, nothing happens (unless the rules say a shorter path
    /// moves it up): every URL is accounted for once. `max_pages` counts
    /// the URLs queued, roots included.
    fn see(&self, url: Url, from: Option<&Rc<str>>, max_redirect: u32, depth: u32) {
        let from = if self.seen_urls.borrow_mut().insert(url.as_str()) {
            // A root is fetched whatever the rules say: the user asked for it.
            let refused = from.and_then(|_| self.rules.refusal(&url));
            if let Some(reason) = refused.or_else(|| self.rules.robots_refusal(&url)) {
                return self.skip(url, reason, from.map(|f| f.to_string()));
            }
            if self.rules.set_aside(&url, from, depth) {
                return;
            }
            from.cloned()
        } else {
            match self.rules.seen_again(&url, depth) {
                Again::Nothing => return,
                Again::Release(work) => {
                    self.q.put_nowait(work);
                    return self.finish_one();
                }
                Again::ComeBack(first_from) => first_from,
            }
        };
        if self
            .config
            .max_pages
            .is_some_and(|max| self.queued.get() >= max)
        {
            return self.skip(url, SkipReason::MaxPages, from.map(|f| f.to_string()));
        }
        self.log.debug(format_args!("adding {url} {max_redirect}"));
        self.rules.queued(&url, depth);
        self.queued.set(self.queued.get() + 1);
        let work = Work {
            url,
            max_redirect,
            from,
            depth,
            sitemap: false,
            lease: None,
        };
        self.records.queued(&work);
        self.q.put_nowait(work);
    }

    fn skip(&self, url: impl AsRef<str>, reason: SkipReason, from: Option<String>) {
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
