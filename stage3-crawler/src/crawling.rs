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

use runtime::{Either, JoinHandle, Queue, catch_unwind};
use url::Url;

use crate::charset::{charset_param, media_type};
use crate::config::Config;
use crate::host::HostRules;
use crate::http::{Client, FetchError, Response};
use crate::logging::{CrawlLog, LogLine};
use crate::parsing::ParsePool;
use crate::skipped::{SkipReason, Skipped};
use crate::stats::{Exception, FetchStatistic};
use crate::traps::Traps;

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

/// Someone who wants each statistic as it is recorded.
type StatSink = Box<dyn FnMut(&FetchStatistic)>;

/// Someone who wants each skipped URL as it is recorded.
type SkipSink = Box<dyn FnMut(&Skipped)>;

/// One URL on the queue.
#[derive(Clone, Debug)]
pub struct Work {
    /// What to fetch.
    pub url: Url,
    /// Redirects it may still follow.
    pub max_redirect: u32,
    /// The page that linked it first (the redirect, for a redirect's
    /// target); `None` for a root. Shared by all the links of one page.
    pub from: Option<Rc<str>>,
}

/// How a crawl ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every URL queued was fetched (or failed for good).
    Completed,
    /// The interrupt future passed to [`Crawler::crawl_until`] fired first.
    Interrupted,
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
    /// are one. A string, not a `Url`: a big crawl sees millions.
    seen_urls: RefCell<HashSet<Box<str>>>,
    /// How many URLs were queued, for `max_pages`.
    queued: Cell<usize>,
    done: RefCell<Vec<FetchStatistic>>,
    skipped: RefCell<Vec<Skipped>>,
    /// What each worker is fetching: what an interrupt leaves unfinished.
    current: RefCell<Vec<Option<Work>>>,
    client: Client,
    parser: ParsePool,
    log: CrawlLog,
    /// Called with each statistic as it is recorded (JSON Lines output).
    on_stat: RefCell<Option<StatSink>>,
    /// Called with each skipped URL as it is recorded.
    on_skip: RefCell<Option<SkipSink>>,
    t0: Cell<Instant>,
    t1: Cell<Option<Instant>>,
    errors: Cell<usize>,
}
// ANCHOR_END: crawler

impl Crawler {
    /// A crawler with `roots` already queued. Fragments are dropped from the
    /// roots; their hosts (and non-default ports) define the site.
    pub fn new(roots: Vec<Url>, mut config: Config) -> io::Result<Crawler> {
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
        let crawler = Crawler {
            traps,
            parser: ParsePool::new(config.parse_threads)?,
            client: Client::new(config.client.clone()),
            config,
            hosts,
            q: Queue::new(),
            seen_urls: RefCell::new(HashSet::new()),
            queued: Cell::new(0),
            done: RefCell::new(Vec::new()),
            skipped: RefCell::new(Vec::new()),
            current: RefCell::new(Vec::new()),
            log: CrawlLog::default(),
            on_stat: RefCell::new(None),
            on_skip: RefCell::new(None),
            t0: Cell::new(Instant::now()),
            t1: Cell::new(None),
            errors: Cell::new(0),
            roots: roots.clone(),
        };
        for root in roots {
            crawler.see(root, None);
        }
        Ok(crawler)
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
        *self.current.borrow_mut() = vec![None; self.config.max_tasks];
        let workers: Vec<JoinHandle<()>> = (0..self.config.max_tasks)
            .map(|worker| runtime::spawn(Rc::clone(self).work(worker)))
            .collect();
        self.t0.set(Instant::now());
        let outcome = match runtime::select(self.q.join(), interrupt).await {
            Either::Left(()) => Outcome::Completed,
            Either::Right(()) => Outcome::Interrupted,
        };
        self.t1.set(Some(Instant::now()));
        // They are all parked in `get` (or, if interrupted, mid-fetch):
        // dropping their futures closes their sockets.
        for worker in &workers {
            worker.cancel();
        }
        if outcome == Outcome::Interrupted {
            self.skip_unfinished();
        }
        outcome
    }
    // ANCHOR_END: crawl

    // ANCHOR: work
    /// One worker: take a URL, fetch it, mark it done, forever. Nothing that
    /// happens to one URL can end the loop, or `join` would wait forever for
    /// a `task_done` that never comes.
    async fn work(self: Rc<Self>, worker: usize) {
        loop {
            let work = self.q.get().await;
            let (url, max_redirect) = (work.url.clone(), work.max_redirect);
            self.current.borrow_mut()[worker] = Some(work);
            let fetched = catch_unwind(self.fetch(&url, max_redirect)).await;
            self.current.borrow_mut()[worker] = None;
            if let Err(panic) = fetched {
                self.log
                    .error(format_args!("fetching {url} panicked: {panic}"));
                let exception = Exception {
                    kind: "internal",
                    message: format!("internal error: {panic}"),
                };
                self.record_statistic(FetchStatistic::failure(url.to_string(), exception));
            }
            if let Err(e) = self.q.task_done() {
                self.log.error(format_args!("{e}"));
            }
        }
    }
    // ANCHOR_END: work

    // ANCHOR: fetch
    /// Fetches one URL, retrying network errors, and records what happened.
    async fn fetch(&self, url: &Url, max_redirect: u32) {
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
                    return self.record_failure(url, &error);
                }
                Err(error) => {
                    self.log.warn(format_args!("{url} failed: {error}"));
                    return self.record_failure(url, &error);
                }
            }
        };
        match self.redirect_target(url, &response) {
            Some(next_url) => self.follow_redirect(url, &response, next_url, max_redirect),
            None => {
                let (stat, links) = self.parse_links(url, response).await;
                self.record_statistic(stat);
                let from: Rc<str> = Rc::from(url.as_str());
                for link in links {
                    self.see(link, Some(&from));
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
    fn follow_redirect(&self, url: &Url, response: &Response, next_url: Url, max_redirect: u32) {
        self.record_statistic(FetchStatistic {
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
        });
        if max_redirect > 0 {
            if !self.seen_urls.borrow().contains(next_url.as_str()) {
                self.log
                    .info(format_args!("redirect to {next_url} from {url}"));
            }
            let from = Rc::from(url.as_str());
            self.see_with(next_url, Some(&from), max_redirect - 1);
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
        self.traps.check(url)
    }

    /// Whether a link may be followed.
    pub fn url_allowed(&self, url: &Url) -> bool {
        self.refusal(url).is_none()
    }
    // ANCHOR_END: url_allowed

    // ANCHOR: add_url
    /// A URL the crawl has come across, in a page (`from`) or as a root.
    /// The first time it is seen it is queued, or skipped with its reason;
    /// after that, nothing happens: every URL is accounted for once.
    /// `max_pages` counts the URLs queued, roots included.
    fn see(&self, url: Url, from: Option<&Rc<str>>) {
        self.see_with(url, from, self.config.max_redirect);
    }

    fn see_with(&self, url: Url, from: Option<&Rc<str>>, max_redirect: u32) {
        if !self.seen_urls.borrow_mut().insert(url.as_str().into()) {
            return;
        }
        let full = self
            .config
            .max_pages
            .is_some_and(|max| self.queued.get() >= max);
        // A root is fetched whatever the rules say: the user asked for it.
        let refused = from.and_then(|_| self.refusal(&url));
        let reason = refused.or(full.then_some(SkipReason::MaxPages));
        if let Some(reason) = reason {
            self.log
                .debug(format_args!("skipping {url}: {}", reason.name()));
            return self.record_skip(Skipped {
                url: url.into(),
                reason,
                from: from.map(|f| f.to_string()),
            });
        }
        self.log.debug(format_args!("adding {url} {max_redirect}"));
        self.traps.admit(&url);
        self.queued.set(self.queued.get() + 1);
        self.q.put_nowait(Work {
            url,
            max_redirect,
            from: from.cloned(),
        });
    }
    // ANCHOR_END: add_url

    /// After an interrupt: what the workers were fetching and what was
    /// still queued, each named as interrupted, so that the report still
    /// accounts for every URL seen.
    fn skip_unfinished(&self) {
        let in_flight: Vec<Work> = self
            .current
            .borrow_mut()
            .iter_mut()
            .flat_map(Option::take)
            .collect();
        let queued = std::iter::from_fn(|| self.q.get_nowait());
        for work in in_flight.into_iter().chain(queued) {
            self.record_skip(Skipped {
                url: work.url.into(),
                reason: SkipReason::Interrupted,
                from: work.from.map(|f| f.to_string()),
            });
        }
    }

    fn record_skip(&self, skipped: Skipped) {
        if let Some(on_skip) = self.on_skip.borrow_mut().as_mut() {
            on_skip(&skipped);
        }
        self.skipped.borrow_mut().push(skipped);
    }

    fn record_failure(&self, url: &Url, error: &FetchError) {
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
        self.record_statistic(stat);
    }

    fn record_statistic(&self, stat: FetchStatistic) {
        if stat.is_error() {
            self.errors.set(self.errors.get() + 1);
        }
        if let Some(on_stat) = self.on_stat.borrow_mut().as_mut() {
            on_stat(&stat);
        }
        self.done.borrow_mut().push(stat);
    }

    /// Calls `f` with every statistic as it is recorded.
    pub fn on_stat(&self, f: impl FnMut(&FetchStatistic) + 'static) {
        *self.on_stat.borrow_mut() = Some(Box::new(f));
    }

    /// Calls `f` with every skipped URL as it is recorded.
    pub fn on_skip(&self, f: impl FnMut(&Skipped) + 'static) {
        *self.on_skip.borrow_mut() = Some(Box::new(f));
    }

    /// The URLs seen and not fetched, in the order they were skipped.
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

    /// The statistics recorded so far, in the order they were recorded.
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

    /// TCP connections the HTTP client has opened.
    pub fn connections_opened(&self) -> u64 {
        self.client.connections_opened()
    }

    /// Whether some root was answered (any status). A crawl where none was
    /// is a failed crawl: exit code 1.
    pub fn any_root_fetched(&self) -> bool {
        let done = self.done.borrow();
        self.roots.iter().any(|root| {
            done.iter()
                .any(|stat| stat.url == root.as_str() && stat.exception.is_none())
        })
    }
}
