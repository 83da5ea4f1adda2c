//! Sitemaps read between pages (`--sitemaps`): a [`WorkQueue`] around
//! another, whose `get` reads each sitemap it meets on the queue (in its
//! host's turn, as a page is fetched) and hands the URLs it lists back to
//! the queue, then goes on to the next URL: the workers fetch pages only.

use std::rc::Rc;

use runtime::catch_unwind;
use url::Url;

use crate::logging::CrawlLog;
use crate::polite::rules::WebRules;
use crate::seams::{Found, Outcome, Pending, Work, WorkQueue};
use crate::skipped::SkipReason;

// ANCHOR: sitemaps
/// A queue whose sitemaps are read as they come up.
pub struct SitemapReader {
    inner: Rc<dyn WorkQueue>,
    rules: Rc<WebRules>,
    log: Rc<CrawlLog>,
}

impl SitemapReader {
    /// `inner`, with its sitemaps read by `rules`.
    pub fn new(inner: Rc<dyn WorkQueue>, rules: Rc<WebRules>, log: Rc<CrawlLog>) -> SitemapReader {
        SitemapReader { inner, rules, log }
    }
}

impl WorkQueue for SitemapReader {
    fn get(&self) -> Pending<'_, Work> {
        Box::pin(async {
            loop {
                let work = self.inner.get().await;
                if work.tag.in_report() {
                    return work;
                }
                // Read inside the guard: a panic costs the sitemap's URLs,
                // never its `task_done`.
                let url = work.url.clone();
                let listed = match catch_unwind(self.rules.read(&url)).await {
                    Ok(pages) => Some(pages),
                    Err(panic) => {
                        self.log
                            .error(format_args!("fetching {url} panicked: {panic}"));
                        None
                    }
                };
                self.inner.done_listing(work, listed).await;
            }
        })
    }
    // ANCHOR_END: sitemaps

    fn task_done(&self, work: Work, found: Found) -> Pending<'_, ()> {
        self.inner.task_done(work, found)
    }

    fn join(&self) -> Pending<'_, Outcome> {
        self.inner.join()
    }

    fn close(&self, outcome: Outcome, unfinished: Vec<Work>) -> Pending<'_, ()> {
        self.inner.close(outcome, unfinished)
    }

    fn is_new(&self, url: &Url) -> bool {
        self.inner.is_new(url)
    }

    fn qsize(&self) -> usize {
        self.inner.qsize()
    }

    fn skip(&self, work: Work, reason: SkipReason) -> Pending<'_, ()> {
        self.inner.skip(work, reason)
    }

    fn done_listing(&self, work: Work, listed: Option<Vec<Url>>) -> Pending<'_, ()> {
        self.inner.done_listing(work, listed)
    }

    fn readmit(&self, work: Work) -> Option<Work> {
        self.inner.readmit(work)
    }

    fn stopped_by(&self) -> Option<String> {
        self.inner.stopped_by()
    }
}
