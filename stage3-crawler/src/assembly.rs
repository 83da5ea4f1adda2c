//! The crawler assembled: the lesson's [`Crawler`] with the real web's
//! features plugged into its seams, as the settings ([`Config`]) ask.
//! The lesson never names a feature; this module names them all.

use crate::crawling::Crawler;
use crate::reporting::{Crawl, Reported};
use crate::seams::Outcome;

/// A crawler's report is what it has recorded so far.
impl Reported for Crawler {
    fn with_crawl<R>(&self, outcome: Outcome, f: impl FnOnce(&Crawl<'_>) -> R) -> R {
        let done = self.done();
        let skipped = self.skipped();
        f(&Crawl {
            done: &done,
            skipped: &skipped,
            tally: self.tally(),
            secs: self.elapsed().as_secs_f64(),
            max_tasks: self.config().max_tasks,
            todo: self.todo(),
            connections: self.connections_opened(),
            interrupted: outcome != Outcome::Completed,
            robots: self.robots_outcomes(),
            sitemaps: self.sitemap_outcomes(),
        })
    }
}
