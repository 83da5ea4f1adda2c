// ANCHOR: crawler
//! The crawler: `max_tasks` workers on a joinable queue, the chapter's
//! `Crawler` class (`crawling.py`).
//!
//! The queue holds [`Work`]: a URL, how many redirects it may still follow,
//! and the page that linked it. Each worker takes one, fetches it, and
//! marks it done, handing the queue what the fetch found: a
//! [`FetchStatistic`] for the report, and the redirect's target or the
//! page's links, which the queue puts on itself if it has not seen them.
//! `crawl` waits in `join` until every URL put has been marked done, then
//! cancels the workers, who are all parked in `get` by then.
//!
//! Every URL the crawl sees ends in the report once: a statistic if it was
//! fetched (or failed), a [`Skipped`](crate::Skipped) record with the
//! reason if not.
//!
//! What the real web adds plugs in through the seams of [`crate::seams`]:
//! the [`WorkQueue`] hands out work and takes it back, [`Rules`] say
//! whether a link may be followed, and the [`Records`] tell whoever
//! listens. This module names none of those features.
//!
//! The book's Coordinating Coroutines shows this file whole, front to back,
//! so it reads in the chapter's order: each `impl Crawler` block is one of
//! its sections, with the small functions it uses beside it. What the crawl
//! offers those who look at it (its numbers, its records) is in the child
//! module `access`.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::time::Instant;

use runtime::{Either, JoinHandle, TaskBuilder, catch_unwind};
use url::Url;

use crate::config::Config;
use crate::http::{Client, FetchError, Response};
use crate::links::charset::{charset_param, media_type};
use crate::links::parsing::ParsePool;
use crate::logging::CrawlLog;
use crate::records::Records;
use crate::seams::{Found, Next, Rules, WorkQueue};
pub use crate::seams::{Outcome, Work};
use crate::skipped::SkipReason;
use crate::stats::{Exception, FetchStatistic};

mod access;

/// The crawl: its settings, its queue, its workers' shared state, and what
/// it found.
pub struct Crawler {
    config: Config,
    roots: Vec<Url>,
    /// What to fetch, how many redirects it may still follow, and from
    /// where; with every URL it has seen.
    q: Rc<dyn WorkQueue>,
    /// Whether a link may be followed: the roots' hosts and `--exclude`,
    /// and whatever else the crawl obeys.
    rules: Rc<dyn Rules>,
    /// Every statistic and skipped URL, and who hears of them.
    records: Rc<Records>,
    /// What each worker is fetching: what an interrupt leaves unfinished.
    current: RefCell<Vec<Option<Work>>>,
    client: Rc<Client>,
    parser: ParsePool,
    log: Rc<CrawlLog>,
    t0: Cell<Instant>,
    t1: Cell<Option<Instant>>,
    /// What was plugged into the seams, for those who report on it; the
    /// lesson never looks.
    plugged: Option<Rc<dyn Any>>,
}

/// What a crawler is made of besides its settings: the seams' choices.
pub struct Parts {
    /// The crawl's queue, with its first URLs on it.
    pub q: Rc<dyn WorkQueue>,
    /// The rules.
    pub rules: Rc<dyn Rules>,
    /// The records and their listeners.
    pub records: Rc<Records>,
    /// The HTTP client.
    pub client: Rc<Client>,
    /// The log.
    pub log: Rc<CrawlLog>,
    /// What was plugged in, for those who report on it.
    pub plugged: Option<Rc<dyn Any>>,
}

impl Crawler {
    /// A crawler of `roots` made of `parts`.
    pub fn assemble(roots: Vec<Url>, config: Config, parts: Parts) -> std::io::Result<Crawler> {
        Ok(Crawler {
            parser: ParsePool::new(config.parse_threads)?,
            config,
            roots,
            q: parts.q,
            rules: parts.rules,
            records: parts.records,
            current: RefCell::new(Vec::new()),
            client: parts.client,
            log: parts.log,
            t0: Cell::new(Instant::now()),
            t1: Cell::new(None),
            plugged: parts.plugged,
        })
    }
}
// ANCHOR_END: crawler

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
        let outcome = match runtime::select(self.q.join(), interrupt).await {
            Either::Left(outcome) => outcome,
            Either::Right(()) => Outcome::Interrupted,
        };
        self.t1.set(Some(Instant::now()));
        // They are all parked in `get` (or, if interrupted, mid-fetch):
        // dropping their futures closes their sockets.
        for worker in &workers {
            worker.cancel();
        }
        // The chapter's crawler closes its session when it is done; ours
        // says goodbye on the connections that need one (HTTP/2's).
        self.client.close().await;
        let unfinished = self
            .current
            .borrow_mut()
            .iter_mut()
            .flat_map(Option::take)
            .collect();
        self.q.close(outcome, unfinished).await;
        self.records.settled();
        outcome
    }
}

impl Crawler {
    /// One worker: take a URL, fetch it, mark it done, forever. Nothing that
    /// happens to one URL can end the loop, or `join` would wait forever for
    /// a `task_done` that never comes: a panic while fetching becomes the
    /// URL's statistic.
    async fn work(self: Rc<Self>, worker: usize) {
        loop {
            let work = self.q.get().await;
            self.current.borrow_mut()[worker] = Some(work.clone());
            let url = &work.url;
            let found = catch_unwind(self.fetch(url)).await.unwrap_or_else(|panic| {
                self.log
                    .error(format_args!("fetching {url} panicked: {panic}"));
                let exception = Exception {
                    kind: "internal",
                    message: format!("internal error: {panic}"),
                };
                Found::nothing(FetchStatistic::failure(url.to_string(), exception))
            });
            self.current.borrow_mut()[worker] = None;
            self.q.task_done(work, found).await;
        }
    }
}
// ANCHOR_END: crawl

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
        protocol: Some(response.protocol.as_str()),
        recrawl: None,
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
}
// ANCHOR_END: fetch

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
            protocol: Some(response.protocol.as_str()),
            recrawl: None,
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
        for link in page
            .links
            .iter()
            .filter(|link| self.rules.refusal(link).is_none())
        {
            stat.num_urls += 1;
            stat.num_new_urls += usize::from(self.q.is_new(link));
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
// ANCHOR_END: parse_links
