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

use std::cell::{Cell, Ref, RefCell};
use std::collections::HashSet;
use std::future::Future;
use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use runtime::{Either, JoinHandle, Queue, TaskBuilder, catch_unwind};
use url::Url;

use crate::charset::{charset_param, media_type};
use crate::config::Config;
use crate::depth::{DepthLimit, SeenAgain};
use crate::host::HostRules;
use crate::http::{Client, FetchError, HearExchanges, Response};
use crate::journal::{Journal, Replayed};
use crate::logging::{CrawlLog, LogLine};
use crate::parsing::ParsePool;
use crate::politeness::{Admission, Politeness, RobotsOutcome};
use crate::robots::{Robots, product_token};
use crate::robots_fetch::{RobotsFetch, fetch_robots};
pub use crate::seams::{Outcome, Work};
use crate::seen::SeenUrls;
use crate::sitemap::SitemapOutcome;
use crate::sitemap::{Sitemap, SitemapKind, parse_sitemap};
use crate::skipped::{SkipReason, Skipped};
use crate::stats::{Exception, FetchStatistic};
use crate::tally::Tally;
use crate::traps::Traps;

mod shared;
pub use shared::{Shared, root_link};

/// The statuses the chapter treats as redirects, plus 308, which came later.
fn is_redirect(status: u16) -> bool {
    matches!(status, 300 | 301 | 302 | 303 | 307 | 308)
}

/// Media types whose bodies we search for links.
fn is_markup(media_type: &str) -> bool {
    ["text/html", "application/xhtml+xml", "application/xml"]
        .iter()
        .any(|t| media_type.eq_ignore_ascii_case(t))
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

/// What fetching one URL found: its statistic, and where it leads.
struct Found {
    stat: FetchStatistic,
    next: Next,
}

/// Where a fetched URL leads.
enum Next {
    /// Nowhere: a failure, or a page that is not searched for links.
    Nothing,
    /// A redirect's target.
    Redirect(Url),
    /// A page's links, followed or not: each is seen, and accounted for.
    Links(Vec<Url>),
}

/// Someone who wants each statistic as it is recorded.
type StatSink = Box<dyn FnMut(&FetchStatistic)>;

/// Someone who wants each skipped URL as it is recorded.
type SkipSink = Box<dyn FnMut(&Skipped)>;

/// Sitemaps read at most, however many indexes list.
const MAX_SITEMAPS: usize = 1_000;

/// What a worker does next with a URL.
enum Step {
    /// Ask the per-host rules.
    Admit(Work),
    /// Fetch it: its host slot is already taken.
    Fetch(Work),
}

// ANCHOR: crawler
/// The crawl: its rules, its queue, its workers' shared state, and what it found.
pub struct Crawler {
    config: Config,
    roots: Vec<Url>,
    hosts: HostRules,
    /// Guards against sites that make up URLs forever.
    traps: Traps,
    /// What to fetch, how many redirects it may still follow, and from where.
    q: Queue<Work>,
    /// Every URL seen, queued or skipped: the dedup set. Its key is the
    /// `url` crate's normal form, so `HTTP://Host/./a` and `http://host/a`
    /// are one. Fingerprints, not strings: a big crawl sees millions.
    seen_urls: RefCell<SeenUrls>,
    /// How many URLs were queued, for `max_pages`.
    queued: Cell<usize>,
    /// Every statistic and skipped URL, with `Config::keep_records`.
    done: RefCell<Vec<FetchStatistic>>,
    skipped: RefCell<Vec<Skipped>>,
    /// Their numbers, for the summary, kept either way.
    tally: RefCell<Tally>,
    /// Whether some root has been answered (see `any_root_fetched`).
    root_answered: Cell<bool>,
    /// Per-host limits and robots.txt.
    polite: Politeness,
    /// Levels, with `--max-depth`.
    depth: Option<RefCell<DepthLimit>>,
    /// Sitemaps queued (`--sitemaps`), so that none is read twice.
    sitemaps_queued: RefCell<HashSet<String>>,
    /// What each sitemap read came to, for the report.
    sitemaps: RefCell<Vec<SitemapOutcome>>,
    /// What each worker is fetching: what an interrupt leaves unfinished.
    current: RefCell<Vec<Option<Work>>>,
    client: Client,
    parser: ParsePool,
    log: CrawlLog,
    /// Called with each statistic as it is recorded (JSON Lines output).
    on_stat: RefCell<Option<StatSink>>,
    /// Called with each skipped URL as it is recorded.
    on_skip: RefCell<Option<SkipSink>>,
    /// `--state`: where every fact of the crawl is written as it happens.
    journal: Option<Journal>,
    /// What the journal held when the crawl began, until `crawl` takes it
    /// up (after the report's sinks are in place).
    replay: RefCell<Option<Replayed>>,
    /// `--frontier`: the crawl is shared with other processes through
    /// Redis, which holds its queue, seen set and report.
    shared: Option<Shared>,
    /// Why a shared crawl stopped before its end.
    stopped_by: RefCell<Option<io::Error>>,
    t0: Cell<Instant>,
    t1: Cell<Option<Instant>>,
    errors: Cell<usize>,
}
// ANCHOR_END: crawler

impl Crawler {
    /// A crawler with `roots` already queued. Fragments are dropped from the
    /// roots; their hosts (and non-default ports) define the site.
    pub fn new(roots: Vec<Url>, config: Config) -> io::Result<Crawler> {
        Crawler::create(roots, config, None, None)
    }

    /// A crawler that works on a crawl shared through Redis (`--frontier`),
    /// whose roots are `roots` and whose frontier was created already: the
    /// roots are queued there, not here.
    pub fn shared(roots: Vec<Url>, config: Config, shared: Shared) -> io::Result<Crawler> {
        Crawler::create(roots, config, None, Some(shared))
    }

    /// A crawler that writes every fact of the crawl to `journal`
    /// (`--state`). If the journal held a crawl already (`replayed`), that
    /// crawl resumes: `crawl` takes up its report and its queue instead of
    /// the roots.
    pub fn with_journal(
        roots: Vec<Url>,
        config: Config,
        journal: Journal,
        replayed: Replayed,
    ) -> io::Result<Crawler> {
        Crawler::create(roots, config, Some((journal, replayed)), None)
    }

    fn create(
        roots: Vec<Url>,
        mut config: Config,
        state: Option<(Journal, Replayed)>,
        shared: Option<Shared>,
    ) -> io::Result<Crawler> {
        let (journal, replay) = match state {
            Some((journal, replayed)) => (Some(journal), Some(replayed)),
            None => (None, None),
        };
        let replay = replay.filter(|r| !r.is_empty());
        let roots: Vec<Url> = roots
            .into_iter()
            .map(|mut root| {
                root.set_fragment(None);
                root
            })
            .collect();
        let hosts = HostRules::new(&roots, config.strict);
        config.client.max_idle = config.max_tasks;
        let traps = Traps::new(config.traps);
        let q = Queue::new();
        let crawler = Crawler {
            polite: Politeness::new(config.polite.clone(), q.clone()),
            depth: config
                .max_depth
                .map(|max| RefCell::new(DepthLimit::new(max))),
            sitemaps_queued: RefCell::new(HashSet::new()),
            sitemaps: RefCell::new(Vec::new()),
            traps,
            parser: ParsePool::new(config.parse_threads)?,
            client: Client::new(config.client.clone()),
            config,
            hosts,
            q,
            seen_urls: RefCell::new(SeenUrls::new()),
            queued: Cell::new(0),
            done: RefCell::new(Vec::new()),
            tally: RefCell::new(Tally::default()),
            root_answered: Cell::new(false),
            skipped: RefCell::new(Vec::new()),
            current: RefCell::new(Vec::new()),
            log: CrawlLog::default(),
            on_stat: RefCell::new(None),
            on_skip: RefCell::new(None),
            t0: Cell::new(Instant::now()),
            t1: Cell::new(None),
            errors: Cell::new(0),
            roots: roots.clone(),
            journal,
            replay: RefCell::new(None),
            shared,
            stopped_by: RefCell::new(None),
        };
        if crawler.shared.is_some() {
            // The frontier queued the roots when the crawl was created.
        } else if replay.is_some() {
            *crawler.replay.borrow_mut() = replay;
        } else {
            for root in &roots {
                crawler.see(root.clone(), None, 0);
            }
        }
        // The default place of each root's sitemap; robots.txt may name
        // more (see `learn_robots`).
        if crawler.config.sitemaps {
            for root in &roots {
                if let Ok(sitemap) = root.join("/sitemap.xml") {
                    crawler.queue_sitemap(sitemap);
                }
            }
        }
        if let Some(journal) = &crawler.journal {
            journal.commit();
        }
        Ok(crawler)
    }

    // ANCHOR: resume
    /// Takes up a crawl from its journal: its statistics and skipped URLs
    /// go into the report (and to the report's sinks) as if they had just
    /// happened; every URL it queued is seen; and those not done go back on
    /// the queue, in the order they were first queued. The fetches that
    /// were in flight when it stopped are among them.
    fn resume(&self, replayed: Replayed) {
        let mut finished: HashSet<&str> = HashSet::new();
        for stat in &replayed.done {
            finished.insert(&stat.url);
            self.keep_statistic(stat.clone());
        }
        for skipped in &replayed.skipped {
            finished.insert(&skipped.url);
            self.keep_skip(skipped.clone());
        }
        let mut again = 0;
        {
            let mut seen = self.seen_urls.borrow_mut();
            for url in &finished {
                seen.insert(url);
            }
            for queued in &replayed.queued {
                let Ok(url) = Url::parse(&queued.url) else {
                    continue; // it parsed when it was queued
                };
                // The trap guards count what was queued, done or not.
                self.traps.admit(&url);
                if !seen.insert(&queued.url) {
                    continue; // done or skipped
                }
                if let Some(limit) = &self.depth {
                    limit.borrow_mut().add(&queued.url, queued.depth);
                }
                self.q.put_nowait(Work {
                    url,
                    max_redirect: queued.redirects,
                    from: queued.from.as_deref().map(Rc::from),
                    depth: queued.depth,
                    sitemap: false,
                    lease: None,
                });
                again += 1;
            }
            // With --max-depth: what was set aside as too deep, and has not
            // been queued (a shorter path) or skipped since, stays aside.
            if let Some(limit) = &self.depth {
                let mut limit = limit.borrow_mut();
                for aside in &replayed.aside {
                    if seen.insert(aside.url.as_str()) {
                        let from = aside.from.as_deref().map(Rc::from);
                        limit.set_aside(&aside.url, aside.depth, from.as_ref());
                    }
                }
            }
        }
        self.queued.set(replayed.queued.len());
        // The rules each origin's robots.txt gave, without asking again;
        // and every host the crawl had fetched from waits its delay before
        // the first request of this run, as if the last one had just ended.
        let token = product_token(&self.config.client.user_agent);
        for (outcome, source) in replayed.robots {
            let Ok(origin) = Url::parse(&outcome.origin) else {
                continue;
            };
            let robots = source.rules(token);
            self.queue_robots_sitemaps(&origin, &robots, &outcome.origin);
            self.polite.robots_known(&origin, robots, outcome);
        }
        for stat in &replayed.done {
            if let Ok(url) = Url::parse(&stat.url) {
                self.polite.wait_before_next(&url);
            }
        }
        self.log.info(format_args!(
            "resuming: {} URLs done, {} skipped, {again} to fetch{}",
            replayed.done.len(),
            replayed.skipped.len(),
            if replayed.cut > 0 {
                format!(
                    " (the journal's last {} bytes, torn by a crash, were cut off)",
                    replayed.cut
                )
            } else {
                String::new()
            }
        ));
    }
    // ANCHOR_END: resume

    /// Tells `listener` every exchange of the crawl (`--warc`: the
    /// archive).
    pub fn hear_exchanges(&mut self, listener: Rc<dyn HearExchanges>) {
        self.client.hear_exchanges(listener);
    }

    // ANCHOR: crawl
    /// Runs the crawl until every queued URL is done.
    pub async fn crawl(self: &Rc<Self>) -> Outcome {
        self.crawl_until(std::future::pending()).await
    }

    /// Runs the crawl until every queued URL is done, or `interrupt`
    /// completes (Ctrl-C), whichever comes first. Either way the workers
    /// are cancelled before it returns.
    pub async fn crawl_until(self: &Rc<Self>, interrupt: impl Future<Output = ()>) -> Outcome {
        if let Some(replayed) = self.replay.borrow_mut().take() {
            self.resume(replayed);
        }
        *self.current.borrow_mut() = vec![None; self.config.max_tasks];
        let workers: Vec<JoinHandle<()>> = (0..self.config.max_tasks)
            .map(|worker| {
                TaskBuilder::new()
                    .name(format!("worker-{worker}"))
                    .spawn(Rc::clone(self).work(worker))
            })
            .collect();
        self.t0.set(Instant::now());
        let outcome = match &self.shared {
            None => match runtime::select(self.q.join(), interrupt).await {
                Either::Left(()) => Outcome::Completed,
                Either::Right(()) => Outcome::Interrupted,
            },
            Some(shared) => self.crawl_shared(shared, interrupt).await,
        };
        self.t1.set(Some(Instant::now()));
        // They are all parked in `get` (or, if interrupted, mid-fetch):
        // dropping their futures closes their sockets.
        for worker in &workers {
            worker.cancel();
        }
        // After `join`, nothing is parked; after an interrupt, what was
        // parked is unfinished too. Either way, this stops the timers.
        let mut parked = self.polite.drain();
        if let Some(limit) = &self.depth {
            let mut limit = limit.borrow_mut();
            parked.extend(limit.take_deferred());
            for (url, from) in limit.take_too_deep() {
                let skipped = Skipped {
                    url: url.into(),
                    reason: SkipReason::Depth,
                    from: from.map(|f| f.to_string()),
                };
                // Only a crawl that ran to its end knows no shorter path is
                // left: an interrupted one keeps them set aside, for its
                // resumption.
                match outcome {
                    Outcome::Completed => self.record_skip(skipped),
                    Outcome::Interrupted | Outcome::FrontierLost => self.keep_skip(skipped),
                }
            }
        }
        if outcome != Outcome::Completed {
            self.release_leases().await;
            self.skip_unfinished(parked);
        }
        if let Some(journal) = &self.journal {
            journal.commit();
        }
        outcome
    }
    // ANCHOR_END: crawl

    /// A shared crawl runs until the frontier says the whole crawl is
    /// over, or `interrupt` fires, or Redis is lost for good.
    async fn crawl_shared(
        self: &Rc<Self>,
        shared: &Shared,
        interrupt: impl Future<Output = ()>,
    ) -> Outcome {
        let renewer = TaskBuilder::new()
            .name("lease-renewer")
            .spawn(Rc::clone(self).renew_leases());
        let outcome = match runtime::select(self.feed(shared), interrupt).await {
            Either::Left(Ok(())) => Outcome::Completed,
            Either::Left(Err(e)) => {
                self.log.error(format_args!("{e}"));
                *self.stopped_by.borrow_mut() = Some(e);
                Outcome::FrontierLost
            }
            Either::Right(()) => Outcome::Interrupted,
        };
        renewer.cancel();
        outcome
    }

    /// Why a shared crawl stopped before its end ([`Outcome::FrontierLost`]).
    pub fn stopped_by(&self) -> Option<String> {
        self.stopped_by.borrow().as_ref().map(ToString::to_string)
    }

    /// Whether the crawl is shared through a frontier in Redis.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    // ANCHOR: work
    /// One worker: take a URL, fetch it, mark it done, forever. Nothing that
    /// happens to one URL can end the loop, or `join` would wait forever for
    /// a `task_done` that never comes. A URL whose host is busy is parked
    /// with the host, and the worker goes back for another; when a fetch
    /// ends, the worker takes the next URL parked with that host, if any.
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

    /// Asks the per-host rules what to do with `work`.
    async fn admit(&self, worker: usize, work: Work) -> Option<Step> {
        // With --max-depth, a deeper level waits for the one in progress.
        let work = match &self.depth {
            // A sitemap is read in level 0, where it was queued.
            Some(limit) if !work.sitemap => limit.borrow_mut().may_start(work)?,
            _ => work,
        };
        match self.polite.admit(work) {
            Admission::Fetch(work) => Some(Step::Fetch(work)),
            // Parked: its `task_done` comes when it has been fetched.
            Admission::Parked => None,
            Admission::FetchRobots(work, robots_url) => {
                self.current.borrow_mut()[worker] = Some(work.clone());
                self.learn_robots(&work.url, robots_url).await;
                self.current.borrow_mut()[worker] = None;
                Some(Step::Admit(work))
            }
            Admission::Skip(work, _) | Admission::Fail(work, _) if work.sitemap => {
                self.log
                    .info(format_args!("not reading sitemap {}: robots.txt", work.url));
                self.task_done(work.depth);
                None
            }
            Admission::Skip(work, reason) if work.lease.is_some() => {
                self.complete_skipped(&work, reason).await;
                self.task_done(work.depth);
                None
            }
            Admission::Fail(work, exception) if work.lease.is_some() => {
                let found =
                    Found::nothing(FetchStatistic::failure(work.url.to_string(), exception));
                self.complete_fetched(&work, found).await;
                self.task_done(work.depth);
                None
            }
            Admission::Skip(work, reason) => {
                let depth = work.depth;
                self.skip(work.url, reason, work.from.map(|f| f.to_string()));
                self.task_done(depth);
                None
            }
            Admission::Fail(work, exception) => {
                self.record_statistic(FetchStatistic::failure(work.url.to_string(), exception));
                self.task_done(work.depth);
                None
            }
        }
    }

    // ANCHOR: learn_robots
    /// Fetches the robots.txt of `url`'s origin and hands the verdict to the
    /// per-host rules, which release the URLs that waited for it. It always
    /// settles, even if the fetch panics: those URLs must not wait forever.
    async fn learn_robots(&self, url: &Url, robots_url: Url) {
        let token = product_token(&self.config.client.user_agent);
        let max_tries = self.config.max_tries;
        let fetch = fetch_robots(&self.client, robots_url, token, max_tries, &self.log);
        match catch_unwind(fetch).await {
            Ok(RobotsFetch::Known(robots, outcome, source)) => {
                if let Some(journal) = &self.journal {
                    journal.robots(&outcome, &source);
                }
                // The report lists every origin's verdict; the log need
                // not, unless asked (-v).
                self.log.debug(format_args!(
                    "robots.txt of {}: {}",
                    outcome.origin, outcome.verdict
                ));
                self.queue_robots_sitemaps(url, &robots, &outcome.origin);
                self.polite.robots_known(url, robots, outcome)
            }
            Ok(RobotsFetch::Unreachable(error, outcome)) => {
                self.log.warn(format_args!(
                    "robots.txt of {}: {}",
                    outcome.origin, outcome.verdict
                ));
                self.polite.robots_unreachable(url, error, outcome)
            }
            Err(panic) => {
                self.log.error(format_args!(
                    "fetching robots.txt for {url} panicked: {panic}"
                ));
                let error = Exception {
                    kind: "internal",
                    message: format!("internal error: {panic}"),
                };
                let outcome = RobotsOutcome {
                    origin: url.origin().ascii_serialization(),
                    status: None,
                    verdict: format!("unreachable: {}", error.message),
                    rules: 0,
                    crawl_delay: None,
                    capped: false,
                };
                self.polite.robots_unreachable(url, error, outcome)
            }
        }
    }
    // ANCHOR_END: learn_robots

    /// With `--sitemaps`, queues the sitemaps a robots.txt names.
    fn queue_robots_sitemaps(&self, url: &Url, robots: &Robots, origin: &str) {
        if !self.config.sitemaps {
            return;
        }
        for line in robots.sitemaps() {
            match url.join(line) {
                Ok(sitemap) => self.queue_sitemap(sitemap),
                Err(e) => self.log.warn(format_args!(
                    "robots.txt of {origin}: bad Sitemap {line:?}: {e}"
                )),
            }
        }
    }

    /// Fetches `work`, whose host slot is taken, frees the slot, and marks
    /// it done. Returns the next URL parked with the same host, if it may
    /// start now.
    async fn fetch_work(&self, worker: usize, work: Work) -> Option<Step> {
        let (url, max_redirect, depth) = (work.url.clone(), work.max_redirect, work.depth);
        self.current.borrow_mut()[worker] = Some(work);
        let fetched = if self.current_is_sitemap(worker) {
            catch_unwind(self.read_sitemap(&url)).await.map(|()| None)
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
        let recorded = match (found, work) {
            (Some(found), Some(work)) if work.lease.is_some() => {
                catch_unwind(self.complete_fetched(&work, found)).await
            }
            (Some(found), _) => {
                catch_unwind(async { self.keep_found(&url, found, max_redirect, depth) }).await
            }
            (None, _) => Ok(()),
        };
        if let Err(panic) = recorded {
            self.log.error(format_args!(
                "recording what {url} led to panicked: {panic}"
            ));
        }
        let next = self.polite.finish(&url);
        self.task_done(depth);
        next.map(Step::Fetch)
    }

    /// Marks a URL of `depth` done. If that ends a level of `--max-depth`,
    /// the URLs kept for the next level go back on the queue first, so that
    /// the queue's count never touches zero on the way.
    fn task_done(&self, depth: u32) {
        // What the URL came to reaches the journal before the queue hears
        // it is done.
        if let Some(journal) = &self.journal {
            journal.commit();
        }
        if let Some(limit) = &self.depth {
            let next_level = limit.borrow_mut().done(depth);
            for work in next_level {
                self.q.put_nowait(work);
                self.finish_one();
            }
        }
        self.finish_one();
    }

    fn finish_one(&self) {
        if let Err(e) = self.q.task_done() {
            self.log.error(format_args!("{e}"));
        }
    }
    // ANCHOR_END: work

    // ANCHOR: fetch
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
                let (stat, links) = self.parse_links(url, response).await;
                Found {
                    stat,
                    next: Next::Links(links),
                }
            }
        }
    }

    /// Records what a fetch found, and sees where it leads: a redirect's
    /// target, or the page's links, one step deeper.
    fn keep_found(&self, url: &Url, found: Found, max_redirect: u32, depth: u32) {
        self.record_statistic(found.stat);
        match found.next {
            Next::Nothing => {}
            Next::Redirect(next_url) => self.follow_redirect(url, next_url, max_redirect, depth),
            Next::Links(links) => {
                let from: Rc<str> = Rc::from(url.as_str());
                // Saturating: a depth replayed from a journal can be anything.
                for link in links {
                    self.see(link, Some(&from), depth.saturating_add(1));
                }
            }
        }
    }
    // ANCHOR_END: fetch

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

    // ANCHOR: follow_redirect
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
            self.see_with(next_url, Some(&from), max_redirect - 1, depth);
        } else {
            self.log.error(format_args!(
                "redirect limit reached for {next_url} from {url}"
            ));
        }
    }
    // ANCHOR_END: follow_redirect

    // ANCHOR: parse_links
    /// Builds the statistic for a response that is not a redirect, and, for
    /// a 200 HTML or XML page, finds the links the crawl may follow. The
    /// parsing itself runs on a helper thread.
    async fn parse_links(&self, url: &Url, response: Response) -> (FetchStatistic, Vec<Url>) {
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
            return (stat, Vec::new());
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
                return (stat, Vec::new());
            }
        };
        stat.encoding = Some(page.encoding);
        let seen = self.seen_urls.borrow();
        for link in page
            .links
            .iter()
            .filter(|link| self.refusal(link).is_none())
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
        // All of them, followed or not: each is seen, and accounted for.
        (stat, page.links)
    }
    // ANCHOR_END: parse_links

    // ANCHOR: url_allowed
    /// Why a link may not be followed, if it may not: excluded, not http or
    /// https, not on one of the roots' hosts, or a trap.
    pub fn refusal(&self, url: &Url) -> Option<SkipReason> {
        self.refusal_of_url(url)
            .or_else(|| self.traps.check_variants(url))
    }

    /// The rules that look at nothing but the URL: all of them but the
    /// count of query strings per path, which depends on what was queued.
    fn refusal_of_url(&self, url: &Url) -> Option<SkipReason> {
        if let Some(exclude) = &self.config.exclude
            && exclude.is_match(url.as_str())
        {
            return Some(SkipReason::Excluded);
        }
        if !matches!(url.scheme(), "http" | "https") {
            return Some(SkipReason::Scheme);
        }
        if !self.hosts.host_okay(url) {
            return Some(SkipReason::OffHost);
        }
        self.traps.check_shape(url)
    }

    /// Whether a link may be followed.
    pub fn url_allowed(&self, url: &Url) -> bool {
        self.refusal(url).is_none()
    }
    // ANCHOR_END: url_allowed

    // ANCHOR: add_url
    /// A URL the crawl has come across, in a page (`from`) or as a root,
    /// `depth` links from a root. The first time it is seen it is queued,
    /// or skipped with its reason; after that, nothing happens (but for
    /// `--max-depth`, where a shorter path may still move it up): every
    /// URL is accounted for once. `max_pages` counts the URLs queued,
    /// roots included.
    fn see(&self, url: Url, from: Option<&Rc<str>>, depth: u32) {
        self.see_with(url, from, self.config.max_redirect, depth);
    }

    fn see_with(&self, url: Url, from: Option<&Rc<str>>, max_redirect: u32, depth: u32) {
        let from = if self.seen_urls.borrow_mut().insert(url.as_str()) {
            // A root is fetched whatever the rules say: the user asked for it.
            let refused = from.and_then(|_| self.refusal(&url));
            if let Some(reason) = refused.or_else(|| self.polite.robots_refusal(&url)) {
                return self.skip(url, reason, from.map(|f| f.to_string()));
            }
            if let Some(limit) = &self.depth
                && limit.borrow_mut().set_aside(url.as_str(), depth, from)
            {
                if let Some(journal) = &self.journal {
                    journal.set_aside(url.as_str(), from.map(|f| &**f), depth);
                }
                return self.log.debug(format_args!("{url} is too deep, for now"));
            }
            from.cloned()
        } else {
            // Seen before: with --max-depth, a shorter path may matter.
            let Some(limit) = &self.depth else { return };
            let waited_at = limit.borrow().waiting_depth(url.as_str());
            let again = limit.borrow_mut().seen_again(url.as_str(), depth);
            if let Some(journal) = &self.journal
                && waited_at.is_some_and(|old| depth < old)
            {
                journal.moved_up(url.as_str(), depth);
            }
            match again {
                SeenAgain::Nothing => return,
                SeenAgain::Release(work) => {
                    self.q.put_nowait(work);
                    return self.finish_one();
                }
                SeenAgain::ComeBack(first_from) => first_from,
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
        if let Some(limit) = &self.depth {
            limit.borrow_mut().add(url.as_str(), depth);
        }
        self.traps.admit(&url);
        self.queued.set(self.queued.get() + 1);
        if let Some(journal) = &self.journal {
            journal.queued(url.as_str(), from.as_deref(), depth, max_redirect);
        }
        self.q.put_nowait(Work {
            url,
            max_redirect,
            from,
            depth,
            sitemap: false,
            lease: None,
        });
    }

    // ANCHOR: sitemaps
    /// Queues a sitemap to read, once, if it is on the crawl's hosts. It
    /// is work like a page (a host slot, robots.txt), but not a URL of the
    /// crawl: it is in no statistic and no skipped record.
    fn queue_sitemap(&self, url: Url) {
        if !self.hosts.host_okay(&url) {
            return self
                .log
                .info(format_args!("not reading sitemap {url}: another host"));
        }
        let mut queued = self.sitemaps_queued.borrow_mut();
        if queued.len() >= MAX_SITEMAPS || !queued.insert(url.to_string()) {
            return;
        }
        if let Some(limit) = &self.depth {
            // Read in level 0: its URLs are depth 1.
            limit.borrow_mut().hold(0);
        }
        self.q.put_nowait(Work {
            url,
            max_redirect: 0,
            from: None,
            depth: 0,
            sitemap: true,
            lease: None,
        });
    }

    /// Reads one sitemap: an index queues the sitemaps it lists; a list of
    /// pages puts each through `see`, as links at depth 1 from the
    /// sitemap, so that every rule (hosts, robots.txt, depth) applies.
    async fn read_sitemap(&self, url: &Url) {
        let outcome = match self.client.get_retrying(url, self.config.max_tries).await {
            Err(e) => format!("failed: {e}"),
            Ok(response) if response.status != 200 => format!("{}: not read", response.status),
            Ok(response) => match parse_sitemap(&response.body, url) {
                Err(e) => e.to_string(),
                Ok(sitemap) => self.follow_sitemap(url, sitemap),
            },
        };
        self.log.debug(format_args!("sitemap {url}: {outcome}"));
        self.sitemaps.borrow_mut().push(SitemapOutcome {
            url: url.to_string(),
            outcome,
        });
    }

    fn follow_sitemap(&self, url: &Url, sitemap: Sitemap) -> String {
        let count = sitemap.locs.len();
        let mut outcome = match sitemap.kind {
            SitemapKind::Index => {
                for child in sitemap.locs {
                    self.queue_sitemap(child);
                }
                format!("an index of {count} sitemaps")
            }
            SitemapKind::UrlSet => {
                let from: Rc<str> = Rc::from(url.as_str());
                for page in sitemap.locs {
                    self.see(page, Some(&from), 1);
                }
                format!("{count} URLs")
            }
        };
        if sitemap.dropped > 0 {
            outcome.push_str(&format!(", {} past the limit dropped", sitemap.dropped));
        }
        if sitemap.invalid > 0 {
            outcome.push_str(&format!(", {} invalid", sitemap.invalid));
        }
        outcome
    }

    fn current_is_sitemap(&self, worker: usize) -> bool {
        self.current.borrow()[worker]
            .as_ref()
            .is_some_and(|w| w.sitemap)
    }
    // ANCHOR_END: sitemaps

    fn skip(&self, url: Url, reason: SkipReason, from: Option<String>) {
        self.log
            .debug(format_args!("skipping {url}: {}", reason.name()));
        self.record_skip(Skipped {
            url: url.into(),
            reason,
            from,
        });
    }
    // ANCHOR_END: add_url

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
            self.record_skip(Skipped {
                url: work.url.into(),
                reason: SkipReason::Interrupted,
                from: work.from.map(|f| f.to_string()),
            });
        }
    }

    fn record_skip(&self, skipped: Skipped) {
        if let Some(journal) = &self.journal {
            journal.skipped(&skipped);
        }
        self.keep_skip(skipped);
    }

    /// Adds a skipped URL to the report.
    fn keep_skip(&self, skipped: Skipped) {
        if let Some(on_skip) = self.on_skip.borrow_mut().as_mut() {
            on_skip(&skipped);
        }
        self.tally.borrow_mut().skip(&skipped);
        if self.config.keep_records {
            self.skipped.borrow_mut().push(skipped);
        }
    }

    fn record_statistic(&self, stat: FetchStatistic) {
        if let Some(journal) = &self.journal {
            journal.done(&stat);
        }
        self.keep_statistic(stat);
    }

    /// Adds a statistic to the report.
    fn keep_statistic(&self, stat: FetchStatistic) {
        if stat.is_error() {
            self.errors.set(self.errors.get() + 1);
        }
        if !self.root_answered.get()
            && stat.exception.is_none()
            && self.roots.iter().any(|root| stat.url == root.as_str())
        {
            self.root_answered.set(true);
        }
        if let Some(on_stat) = self.on_stat.borrow_mut().as_mut() {
            on_stat(&stat);
        }
        self.tally.borrow_mut().stat(&stat);
        if self.config.keep_records {
            self.done.borrow_mut().push(stat);
        }
    }

    /// Calls `f` with every statistic as it is recorded.
    pub fn on_stat(&self, f: impl FnMut(&FetchStatistic) + 'static) {
        *self.on_stat.borrow_mut() = Some(Box::new(f));
    }

    /// Calls `f` with every skipped URL as it is recorded.
    pub fn on_skip(&self, f: impl FnMut(&Skipped) + 'static) {
        *self.on_skip.borrow_mut() = Some(Box::new(f));
    }

    /// The report's numbers so far.
    pub fn tally(&self) -> Tally {
        self.tally.borrow().clone()
    }

    /// Statistics recorded so far.
    pub fn done_count(&self) -> usize {
        self.tally.borrow().done
    }

    /// The URLs seen and not fetched, in the order they were skipped
    /// (empty without `Config::keep_records`).
    pub fn skipped(&self) -> Ref<'_, Vec<Skipped>> {
        self.skipped.borrow()
    }

    /// Every URL seen: fetched, failed or skipped.
    pub fn seen(&self) -> usize {
        self.seen_urls.borrow().len()
    }

    /// Keep every log message from now on, for [`log_lines`](Self::log_lines).
    pub fn capture_log(&self) {
        self.log.capture();
    }

    /// The messages logged since [`capture_log`](Self::capture_log).
    pub fn log_lines(&self) -> Vec<LogLine> {
        self.log.lines()
    }

    /// The statistics recorded so far, in the order they were recorded
    /// (empty without `Config::keep_records`).
    pub fn done(&self) -> Ref<'_, Vec<FetchStatistic>> {
        self.done.borrow()
    }

    /// The roots, as given (fragments dropped).
    pub fn roots(&self) -> &[Url] {
        &self.roots
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What each origin's robots.txt came to, in the order they were
    /// fetched.
    pub fn robots_outcomes(&self) -> Vec<RobotsOutcome> {
        self.polite.robots_outcomes()
    }

    /// What each sitemap read came to, in the order they were read.
    pub fn sitemap_outcomes(&self) -> Vec<SitemapOutcome> {
        self.sitemaps.borrow().clone()
    }

    /// URLs queued and not yet taken by a worker.
    pub fn todo(&self) -> usize {
        self.q.qsize()
    }

    /// Fetches running right now.
    pub fn in_flight(&self) -> usize {
        self.current.borrow().iter().flatten().count()
    }

    /// Statistics that are failures or HTTP errors.
    pub fn errors(&self) -> usize {
        self.errors.get()
    }

    /// From the start of the crawl to its end, or to now while it runs.
    pub fn elapsed(&self) -> Duration {
        self.t1
            .get()
            .unwrap_or_else(Instant::now)
            .saturating_duration_since(self.t0.get())
    }

    /// Writes what is left of the journal (`--state`) and syncs it to the
    /// disk; the first error writing it, if any.
    pub fn close_journal(&self) -> io::Result<()> {
        self.journal.as_ref().map_or(Ok(()), Journal::close)
    }

    /// TCP connections the HTTP client has opened.
    pub fn connections_opened(&self) -> u64 {
        self.client.connections_opened()
    }

    /// Whether some root was answered (any status). A crawl where none was
    /// is a failed crawl: exit code 1.
    pub fn any_root_fetched(&self) -> bool {
        self.root_answered.get()
    }
}

// After `impl Crawler`, so that the crawler's methods keep their names in
// a debugger (`crawling::{impl#0}::fetch`, as the Debugger appendix shows).
impl Found {
    fn nothing(stat: FetchStatistic) -> Found {
        Found {
            stat,
            next: Next::Nothing,
        }
    }
}
