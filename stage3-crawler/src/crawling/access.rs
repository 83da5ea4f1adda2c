//! What the crawl offers those who plug into it: the numbers the progress
//! line and the report read, the records, and what a frontier or a crawl
//! taken up again may ask of its queue and seen set. A child of the lesson
//! module, so it reads the crawler's fields without making them public;
//! kept apart so that the lesson is the chapter's crawler and nothing
//! else.

use std::cell::Ref;
use std::time::{Duration, Instant};

use runtime::Queue;
use url::Url;

use super::Crawler;
use crate::config::Config;
use crate::logging::{CrawlLog, LogLine};
use crate::records::Records;
use crate::robots::RobotsOutcome;
use crate::seams::{Crawl, Rules, Work};
use crate::sitemap::SitemapOutcome;
use crate::skipped::Skipped;
use crate::stats::FetchStatistic;
use crate::tally::Tally;

/// What the crawl offers those who plug into it: its records, its queue
/// and its seen set, for a frontier and for a crawl taken up again.
impl Crawler {
    /// The records: the report's, and who hears of them.
    pub fn records(&self) -> &Records {
        &self.records
    }

    /// Marks `url` seen, without queueing it; whether it was new.
    pub fn mark_seen(&self, url: &str) -> bool {
        self.seen_urls.borrow_mut().insert(url)
    }

    /// Puts `work` back on the queue, as queued before (a crawl taken up
    /// again): it counts for `max_pages` only through `set_queued`.
    pub fn requeue(&self, work: Work) {
        self.q.put_nowait(work);
    }

    /// How many URLs count as queued, for `max_pages`.
    pub fn set_queued(&self, queued: usize) {
        self.queued.set(queued);
    }

    /// What each origin's robots.txt came to, in the order they were
    /// fetched.
    pub fn robots_outcomes(&self) -> Vec<RobotsOutcome> {
        self.rules.robots_outcomes()
    }

    /// What each sitemap read came to, in the order they were read.
    pub fn sitemap_outcomes(&self) -> Vec<SitemapOutcome> {
        self.rules.sitemap_outcomes()
    }

    /// Why a shared crawl stopped before its end ([`Outcome::FrontierLost`]).
    pub fn stopped_by(&self) -> Option<String> {
        self.frontier.as_ref().and_then(|f| f.stopped_by())
    }

    /// Whether the crawl is shared through a frontier.
    pub fn is_shared(&self) -> bool {
        self.frontier.is_some()
    }

    /// Calls `f` with every statistic as it is recorded.
    pub fn on_stat(&self, f: impl FnMut(&FetchStatistic) + 'static) {
        self.records.on_stat(f);
    }

    /// Calls `f` with every skipped URL as it is recorded.
    pub fn on_skip(&self, f: impl FnMut(&Skipped) + 'static) {
        self.records.on_skip(f);
    }

    /// The report's numbers so far.
    pub fn tally(&self) -> Tally {
        self.records.tally()
    }

    /// Statistics recorded so far.
    pub fn done_count(&self) -> usize {
        self.records.done_count()
    }

    /// The URLs seen and not fetched, in the order they were skipped
    /// (empty without `Config::keep_records`).
    pub fn skipped(&self) -> Ref<'_, Vec<Skipped>> {
        self.records.skipped()
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
        self.records.done()
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
        self.records.errors()
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
        self.records.any_root_fetched()
    }
}

/// What a shared frontier may ask of the crawl it feeds.
impl Crawl for Crawler {
    fn queue(&self) -> &Queue<Work> {
        &self.q
    }

    fn rules(&self) -> &dyn Rules {
        &*self.rules
    }

    fn log(&self) -> &CrawlLog {
        &self.log
    }

    fn max_redirect(&self) -> u32 {
        self.config.max_redirect
    }

    fn max_tasks(&self) -> usize {
        self.config.max_tasks
    }

    fn keep_statistic(&self, stat: FetchStatistic) {
        self.records.keep_statistic(stat);
    }

    fn keep_skip(&self, skipped: Skipped) {
        self.records.keep_skip(skipped);
    }
}
