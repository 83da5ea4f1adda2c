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

use std::rc::Rc;

use url::Url;

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
