//! The seams between the chapter's crawler (the `crawling` module) and what
//! the real web adds to it. Everything here is at the bottom: the lesson
//! uses these names, and each real-web feature implements one of them
//! without knowing the lesson exists.
//!
//! | seam | what it decides | the lesson's own | the real web's |
//! |---|---|---|---|
//! | [`Work`] | what travels on the queue | a URL, its redirects, its referrer | depth, sitemaps, leases |
//! | [`Rules`] | whether and when a URL may be fetched | the roots' hosts, `--exclude` | traps, depth, robots.txt, per-host limits and delays, sitemaps |
//! | [`Frontier`] | where URLs come from and go | the queue and the seen set in memory | the shared frontier in Redis |
//! | [`Observer`] | who hears what happened | the report's records | the JSON Lines and text reports, the journal |
//! | `http::Client` | how a URL is fetched | one GET, any status | keep-alive, TLS; its exchanges heard by the WARC archive |

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use runtime::Queue;
use url::Url;

use crate::logging::CrawlLog;
use crate::robots::RobotsOutcome;
use crate::sitemap::SitemapOutcome;
use crate::skipped::{SkipReason, Skipped};
use crate::stats::{Exception, FetchStatistic};

/// One URL on the queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    /// What to fetch.
    pub url: Url,
    /// Redirects it may still follow.
    pub max_redirect: u32,
    /// The page that linked it first (the redirect, for a redirect's
    /// target); `None` for a root. Shared by all the links of one page.
    pub from: Option<Rc<str>>,
    /// Links from a root: 0 for a root; a redirect's target has the depth
    /// of the URL that redirected.
    pub depth: u32,
    /// A sitemap to read (`--sitemaps`), not a page: the crawler's own
    /// business, never a URL of the report.
    pub sitemap: bool,
    /// With a shared frontier (`--frontier`), the lease this process holds
    /// on the URL; `None` in a crawl of one process.
    pub lease: Option<u64>,
}

/// How a crawl ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every URL queued was fetched (or failed for good).
    Completed,
    /// The interrupt future passed to [`Crawler::crawl_until`](crate::Crawler::crawl_until) fired first.
    Interrupted,
    /// The shared frontier's Redis was lost for good
    /// ([`Crawler::stopped_by`](crate::Crawler::stopped_by) says why); the crawl's state stays there.
    FrontierLost,
}

/// A future a seam hands back, boxed so that a trait object can return it.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// What fetching one URL found: its statistic, and where it leads.
pub struct Found {
    /// The record of the fetch.
    pub stat: FetchStatistic,
    /// Where it leads.
    pub next: Next,
}

/// Where a fetched URL leads.
pub enum Next {
    /// Nowhere: a failure, or a page that is not searched for links.
    Nothing,
    /// A redirect's target.
    Redirect(Url),
    /// A page's links, followed or not: each is seen, and accounted for,
    /// whatever its scheme; and its hrefs that are not URLs at all, as
    /// written (cut to `--max-url-length`), each reported `invalid-url`.
    Links {
        /// The URLs, in page order.
        links: Vec<Url>,
        /// The hrefs no URL parser accepts.
        invalid: Vec<String>,
    },
}

impl Found {
    /// A fetch that leads nowhere.
    pub fn nothing(stat: FetchStatistic) -> Found {
        Found {
            stat,
            next: Next::Nothing,
        }
    }
}

// ANCHOR: rules
/// Whether and when a URL may be fetched. The lesson asks at three moments:
/// when a URL is first seen (may it be queued?), when a worker takes it
/// from the queue (may it start now?), and when its fetch ends (whose turn
/// is next?). Every method but the first has the chapter's answer as its
/// default: yes, now, nobody's.
pub trait Rules {
    /// Why a link may not be followed, judging by the URL alone, if it may
    /// not: not on the roots' hosts, `--exclude`d, not http(s), a trap.
    fn refusal_by_url(&self, url: &Url) -> Option<SkipReason>;
    /// Why a link may not be followed, counting what was queued before it
    /// (too many query variants of one path), if it may not.
    fn refusal(&self, url: &Url) -> Option<SkipReason> {
        self.refusal_by_url(url)
    }
    /// Why a URL that may be followed is still not to be fetched, as far as
    /// is known without a request (robots.txt already read), if it is not.
    fn robots_refusal(&self, _url: &Url) -> Option<SkipReason> {
        None
    }
    /// Whether a URL first seen `depth` links from a root waits instead of
    /// being queued (deeper than `--max-depth`, for now); the rules keep it.
    fn set_aside(&self, _url: &Url, _from: Option<&Rc<str>>, _depth: u32) -> bool {
        false
    }
    /// A URL seen again, `depth` links from a root: what that changes.
    fn seen_again(&self, _url: &Url, _depth: u32) -> Again {
        Again::Nothing
    }
    /// A URL was queued, `depth` links from a root.
    fn queued(&self, _url: &Url, _depth: u32) {}
    /// What a worker does with `work`, taken from the queue.
    fn admit(&self, work: Work) -> Admission<'_> {
        Admission::Fetch(work)
    }
    /// The fetch of `url` ended: the URL its host may start next, if any.
    fn finish(&self, _url: &Url) -> Option<Work> {
        None
    }
    /// A URL `depth` links from a root is done: the URLs that may go on the
    /// queue now (the next level of `--max-depth`).
    fn done(&self, _depth: u32) -> Vec<Work> {
        Vec::new()
    }
    /// The crawl is over: the URLs the rules still hold, unfinished, and
    /// those they kept as too deep, with the page that linked each.
    fn drain(&self) -> Drained {
        Drained::default()
    }
    /// The least time between two requests to `url`'s host, if any.
    fn host_delay(&self, _url: &Url) -> Option<Duration> {
        None
    }
    /// Reads the sitemap `url` (`Work::sitemap`): the pages it lists,
    /// seen as links one step from it. The sitemaps an index lists go on
    /// the queue.
    fn read_sitemap<'a>(&'a self, _url: &'a Url) -> Pending<'a, Vec<Url>> {
        Box::pin(async { Vec::new() })
    }
    /// What each origin's robots.txt came to, for the report.
    fn robots_outcomes(&self) -> Vec<RobotsOutcome> {
        Vec::new()
    }
    /// Sitemaps found since the last call, for a shared frontier to queue
    /// (`--sitemaps` with `--frontier`); none where the rules queue them
    /// themselves.
    fn take_found_sitemaps(&self) -> Vec<Url> {
        Vec::new()
    }
    /// What each sitemap read came to, for the report.
    fn sitemap_outcomes(&self) -> Vec<SitemapOutcome> {
        Vec::new()
    }
}
// ANCHOR_END: rules

/// What a worker does with a URL it took from the queue.
pub enum Admission<'a> {
    /// Fetch it now (its host's slot is taken: call [`Rules::finish`]
    /// after).
    Fetch(Work),
    /// Wait for this (robots.txt of its origin, fetched by this worker),
    /// then ask again.
    After(Work, Pending<'a, ()>),
    /// The rules keep it, and put it back on the queue or hand it over
    /// through [`Rules::finish`] or [`Rules::done`]: its `task_done` comes
    /// then.
    Parked,
    /// Not to be fetched, for this reason.
    Skip(Work, SkipReason),
    /// Failed without a request (its robots.txt was unreachable).
    Fail(Work, Exception),
    /// The crawler's own business (a sitemap robots.txt disallows): done,
    /// and in no record.
    Dropped(Work),
}

/// What a URL seen again at a shorter depth comes to.
#[derive(Debug, PartialEq)]
pub enum Again {
    /// Nothing changes.
    Nothing,
    /// It was kept for a later level, and belongs to this one now: put it
    /// back on the queue (its old place there ends with a `task_done`).
    Release(Work),
    /// It was too deep, and is not: queue it, with the page that linked it
    /// first.
    ComeBack(Option<Rc<str>>),
}

/// What the rules hold when the crawl ends.
#[derive(Default)]
pub struct Drained {
    /// URLs waiting their turn: unfinished.
    pub parked: Vec<Work>,
    /// URLs deeper than `--max-depth`, with the page that linked each.
    pub too_deep: Vec<(Box<str>, Option<Rc<str>>)>,
}

// ANCHOR: observer
/// Who hears what happened: each fact of the crawl as it happens (the
/// journal, which makes a crawl resumable). The report's own records are
/// kept by the lesson; every method defaults to not listening.
pub trait Observer {
    /// `work` went on the queue.
    fn queued(&self, _work: &Work) {}
    /// A URL was fetched (or failed).
    fn fetched(&self, _stat: &FetchStatistic) {}
    /// A URL was skipped.
    fn skipped(&self, _skipped: &Skipped) {}
    /// A URL is done: what it came to has been told.
    fn settled(&self) {}
}
// ANCHOR_END: observer

// ANCHOR: frontier
/// Where URLs come from and go when they are not this process's alone: a
/// frontier shared by many processes. Without one, the lesson's queue and
/// seen set are the frontier.
pub trait Frontier {
    /// Feeds the crawl's queue until the whole crawl is over
    /// ([`Outcome::Completed`]) or the frontier is lost
    /// ([`Outcome::FrontierLost`]).
    fn run<'a>(&'a self, crawl: &'a dyn Crawl) -> Pending<'a, Outcome>;
    /// Completes `work`, which this frontier fed, with what its fetch
    /// found.
    fn complete<'a>(
        &'a self,
        crawl: &'a dyn Crawl,
        work: &'a Work,
        found: Found,
    ) -> Pending<'a, ()>;
    /// Completes `work`, which this frontier fed, as skipped.
    fn skip<'a>(
        &'a self,
        crawl: &'a dyn Crawl,
        work: &'a Work,
        reason: SkipReason,
    ) -> Pending<'a, ()>;
    /// Completes `work`, a sitemap this frontier fed, with the pages it
    /// lists (`None`: it was not read).
    fn sitemap<'a>(
        &'a self,
        crawl: &'a dyn Crawl,
        work: &'a Work,
        pages: Option<Vec<Url>>,
    ) -> Pending<'a, ()>;
    /// Gives back what this process did not finish (an interrupt).
    fn release<'a>(&'a self, crawl: &'a dyn Crawl) -> Pending<'a, ()>;
    /// Why the frontier was lost, if it was.
    fn stopped_by(&self) -> Option<String>;
}

/// What a frontier may ask of the crawl it feeds.
pub trait Crawl {
    /// The crawl's queue.
    fn queue(&self) -> &Queue<Work>;
    /// Its rules.
    fn rules(&self) -> &dyn Rules;
    /// Its log.
    fn log(&self) -> &CrawlLog;
    /// Redirects a URL may follow, from a page's link.
    fn max_redirect(&self) -> u32;
    /// Its workers.
    fn max_tasks(&self) -> usize;
    /// Adds a statistic to this process's report.
    fn keep_statistic(&self, stat: FetchStatistic);
    /// Adds a skipped URL to this process's report.
    fn keep_skip(&self, skipped: Skipped);
}
// ANCHOR_END: frontier
