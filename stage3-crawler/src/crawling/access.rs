//! What the crawl offers those who look at it: the numbers the progress
//! line and the report read, and the records. A child of the lesson
//! module, so it reads the crawler's fields without making them public;
//! kept apart so that the lesson is the chapter's crawler and nothing
//! else.

use std::cell::Ref;
use std::rc::Rc;
use std::time::{Duration, Instant};

use url::Url;

use super::Crawler;
use crate::config::Config;
use crate::logging::{CrawlLog, LogLine};
use crate::records::Records;
use crate::seams::WorkQueue;
use crate::skipped::Skipped;
use crate::stats::FetchStatistic;
use crate::tally::Tally;

/// What the crawl offers those who look at it.
impl Crawler {
    /// The records: the report's, and who hears of them.
    pub fn records(&self) -> &Records {
        &self.records
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

    /// The queue.
    pub fn queue(&self) -> &Rc<dyn WorkQueue> {
        &self.q
    }

    /// The log.
    pub fn log(&self) -> &CrawlLog {
        &self.log
    }

    /// What was plugged into the seams, if it is a `T`.
    pub fn plugged<T: 'static>(&self) -> Option<&T> {
        self.plugged.as_deref()?.downcast_ref()
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
