//! The seams between the chapter's crawler (the `crawling` module) and what
//! the real web adds to it. Everything here is at the bottom: the lesson
//! uses these names, and each real-web feature implements one of them
//! without knowing the lesson exists.
//!
//! | seam | what it decides | the lesson's own | the real web's |
//! |---|---|---|---|
//! | [`Work`] | what travels on the queue | a URL, its redirects, its referrer | a [`Tag`]: depth, sitemaps, leases |
//! | [`WorkQueue`] | where URLs come from and go, and when each may start | the queue and the seen set in memory | per-host turns and robots.txt, levels of `--max-depth`, sitemaps, the shared frontier in Redis, the hosts shared out among loops (`--loops`) |
//! | [`Rules`] | whether a URL may be followed | the roots' hosts, `--exclude` | traps, robots.txt already read |
//! | [`Observer`] | who hears what happened | the report's records | the JSON Lines and text reports, the journal |
//! | `http::Client` | how a URL is fetched | one GET, any status | keep-alive, TLS; its exchanges heard by the WARC archive |

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use url::Url;

use crate::skipped::{SkipReason, Skipped};
use crate::stats::FetchStatistic;

// ANCHOR: queue
/// One URL on the queue: what the chapter's queue holds, the URL and the
/// redirects it may still follow, and where it was found; and a [`Tag`],
/// which the lesson carries and never reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    /// What to fetch.
    pub url: Url,
    /// Redirects it may still follow.
    pub max_redirect: u32,
    /// The page that linked it first (the redirect, for a redirect's
    /// target); `None` for a root. Shared by all the links of one page.
    pub from: Option<Rc<str>>,
    /// What the queue that made this work keeps with it.
    pub tag: Tag,
}

/// How a crawl ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every URL queued was fetched (or failed for good).
    Completed,
    /// The interrupt future passed to `Crawler::crawl_until` fired first.
    Interrupted,
    /// The queue could not go on (`WorkQueue::stopped_by` says why);
    /// what was done is kept where the queue keeps it.
    Lost,
}

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

// ANCHOR: work_queue
/// The crawl's queue, as the chapter's `asyncio.Queue` is to its crawler:
/// workers `get` a URL and mark it `task_done`, and `crawl` waits in
/// `join`. Ours is told, with `task_done`, what the fetch found, and puts
/// where it leads on itself: a queue owns its seen set, and decides what
/// is new. The lesson's queue keeps both in memory (`queue.rs`); what the
/// real web adds wraps it, or replaces it, behind these same methods.
pub trait WorkQueue {
    /// The next URL to fetch, when there is one.
    fn get(&self) -> Pending<'_, Work>;
    /// `work` was fetched, and `found` is what came of it: record it, put
    /// where it leads on the queue, and mark `work` done.
    fn task_done(&self, work: Work, found: Found) -> Pending<'_, ()>;
    /// Waits until every URL put on the queue is done
    /// ([`Outcome::Completed`]), or the queue cannot go on.
    fn join(&self) -> Pending<'_, Outcome>;
    /// The crawl is over, and `unfinished` were being fetched (none, if it
    /// completed): account for what the queue still holds.
    fn close(&self, outcome: Outcome, unfinished: Vec<Work>) -> Pending<'_, ()>;
    /// Whether a link was never seen before, as far as this process knows.
    fn is_new(&self, url: &Url) -> bool;
    /// URLs queued and not yet taken by a worker.
    fn qsize(&self) -> usize;
    /// `work` will not be fetched, for `reason`: record it, and mark it done.
    fn skip(&self, work: Work, reason: SkipReason) -> Pending<'_, ()>;
    /// `work` was the crawler's own business, not a page: the URLs it
    /// listed (`None`: none) are seen as links one step from a root, and
    /// it is done, in no record.
    fn done_listing(&self, work: Work, listed: Option<Vec<Url>>) -> Pending<'_, ()>;
    /// Whether `work`, handed out by `get` and then held back a while by
    /// a queue around this one, may still start now: it comes back if so;
    /// if not, this queue keeps it, and its `task_done` comes later.
    fn readmit(&self, work: Work) -> Option<Work> {
        Some(work)
    }
    /// Why the queue could not go on, if it could not.
    fn stopped_by(&self) -> Option<String> {
        None
    }
}
// ANCHOR_END: work_queue
// ANCHOR_END: queue

/// What a queue keeps with a piece of work, opaque to the lesson, which
/// only asks for the tag of a page's links ([`Tag::link`]) and passes a
/// redirect's on: how many links from a root it is (`--max-depth`, and the
/// journal), whether it is a sitemap to read rather than a page
/// (`--sitemaps`), and the lease a shared crawl holds on it (`--frontier`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tag {
    /// Links from a root: 0 for a root; a redirect's target has the depth
    /// of the URL that redirected.
    pub(crate) depth: u32,
    /// A sitemap to read, not a page: the crawler's own business, never a
    /// URL of the report.
    pub(crate) sitemap: bool,
    /// With a shared frontier, the lease this process holds on the URL.
    pub(crate) lease: Option<u64>,
}

impl Tag {
    /// The tag of a root, or of anything a queue makes up itself.
    pub fn root() -> Tag {
        Tag::default()
    }

    /// The tag of a link found on a page of this tag: one step further.
    /// (Saturating: a depth read from a journal can be anything.)
    pub fn link(self) -> Tag {
        Tag {
            depth: self.depth.saturating_add(1),
            ..Tag::default()
        }
    }

    /// The tag of where a redirect of this tag leads: as far from a root.
    pub fn redirect(self) -> Tag {
        Tag {
            depth: self.depth,
            ..Tag::default()
        }
    }

    /// Whether the work is a URL of the report (not the crawler's own
    /// business, as a sitemap to read is).
    pub fn in_report(self) -> bool {
        !self.sitemap
    }

    /// A tag `depth` links from a root (a queue taken up from a journal).
    pub(crate) fn at_depth(depth: u32) -> Tag {
        Tag {
            depth,
            ..Tag::default()
        }
    }
}

/// A future a seam hands back, boxed so that a trait object can return it.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

// ANCHOR: rules
/// Whether a URL may be followed: asked when a URL is first seen, and when
/// a page's links are counted. The chapter's host rules and `--exclude`,
/// and whatever else the crawl obeys.
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
    fn refusal_known(&self, _url: &Url) -> Option<SkipReason> {
        None
    }
    /// A URL was queued (the guards against traps count them).
    fn queued(&self, _url: &Url) {}
    /// The least time between two requests to `url`'s host, if any.
    fn host_delay(&self, _url: &Url) -> Option<Duration> {
        None
    }
}
// ANCHOR_END: rules

// ANCHOR: observer
/// Who hears what happened: each record as it goes into the report (the
/// JSON Lines and text reports, written as the crawl goes), and each new
/// fact of the crawl as it happens (the journal, which makes a crawl
/// resumable). Any number listen; every method defaults to not listening.
pub trait Observer {
    /// A statistic went into the report: new, or taken up from an earlier
    /// run.
    fn reported(&self, _stat: &FetchStatistic) {}
    /// A skipped URL went into the report: new, or taken up.
    fn reported_skip(&self, _skipped: &Skipped) {}
    /// `work` went on the queue.
    fn queued(&self, _work: &Work) {}
    /// A URL was fetched (or failed).
    fn fetched(&self, _stat: &FetchStatistic) {}
    /// A URL was skipped.
    fn skipped(&self, _skipped: &Skipped) {}
    /// A URL is done: what it came to has been told.
    fn settled(&self) {}
    /// A URL first seen `depth` links from a root waits as too deep, for
    /// now (`--max-depth`).
    fn set_aside(&self, _url: &str, _from: Option<&str>, _depth: u32) {}
    /// A URL waiting its level moved up to `depth` (a shorter path).
    fn moved_up(&self, _url: &str, _depth: u32) {}
}
// ANCHOR_END: observer
