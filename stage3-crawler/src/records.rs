//! What the crawl found, as it records it: the chapter's `done` list (and
//! our skipped URLs), their numbers for the summary, and whoever hears of
//! each record as it is made: the reports, written as the crawl goes, and
//! the journal's [`Observer`].

use std::cell::{Cell, Ref, RefCell};
use std::rc::Rc;

use crate::seams::{Observer, Work};
use crate::skipped::Skipped;
use crate::stats::FetchStatistic;
use crate::tally::Tally;

/// Someone who wants each statistic as it is recorded.
type StatSink = Box<dyn FnMut(&FetchStatistic)>;

/// Someone who wants each skipped URL as it is recorded.
type SkipSink = Box<dyn FnMut(&Skipped)>;

/// The crawl's records, and who hears of them.
pub struct Records {
    /// Keep every record in memory (`Config::keep_records`).
    keep: bool,
    /// The roots, to know whether one was answered.
    roots: Vec<String>,
    done: RefCell<Vec<FetchStatistic>>,
    skipped: RefCell<Vec<Skipped>>,
    /// Their numbers, for the summary, kept either way.
    tally: RefCell<Tally>,
    /// Whether some root has been answered (see `any_root_fetched`).
    root_answered: Cell<bool>,
    errors: Cell<usize>,
    /// Called with each statistic as it is recorded (JSON Lines output).
    on_stat: RefCell<Option<StatSink>>,
    /// Called with each skipped URL as it is recorded.
    on_skip: RefCell<Option<SkipSink>>,
    /// Who hears each new fact (not those taken up from an earlier run).
    observers: Vec<Rc<dyn Observer>>,
}

impl Records {
    /// Records for a crawl of `roots`, kept in memory if `keep`, and told
    /// to `observers` as they happen.
    pub fn new(roots: &[url::Url], keep: bool, observers: Vec<Rc<dyn Observer>>) -> Records {
        Records {
            keep,
            roots: roots.iter().map(|r| r.to_string()).collect(),
            done: RefCell::new(Vec::new()),
            skipped: RefCell::new(Vec::new()),
            tally: RefCell::new(Tally::default()),
            root_answered: Cell::new(false),
            errors: Cell::new(0),
            on_stat: RefCell::new(None),
            on_skip: RefCell::new(None),
            observers,
        }
    }

    /// `work` went on the queue.
    pub fn queued(&self, work: &Work) {
        for observer in &self.observers {
            observer.queued(work);
        }
    }

    /// A URL is done: what it came to has been told. The journal writes
    /// it before the queue hears it is done.
    pub fn settled(&self) {
        for observer in &self.observers {
            observer.settled();
        }
    }

    /// A URL first seen `depth` links from a root waits as too deep.
    pub fn set_aside(&self, url: &str, from: Option<&str>, depth: u32) {
        for observer in &self.observers {
            observer.set_aside(url, from, depth);
        }
    }

    /// A URL waiting its level moved up to `depth`.
    pub fn moved_up(&self, url: &str, depth: u32) {
        for observer in &self.observers {
            observer.moved_up(url, depth);
        }
    }

    /// Records a skipped URL, new in this run.
    pub fn record_skip(&self, skipped: Skipped) {
        for observer in &self.observers {
            observer.skipped(&skipped);
        }
        self.keep_skip(skipped);
    }

    /// Adds a skipped URL to the report.
    pub fn keep_skip(&self, skipped: Skipped) {
        if let Some(on_skip) = self.on_skip.borrow_mut().as_mut() {
            on_skip(&skipped);
        }
        self.tally.borrow_mut().skip(&skipped);
        if self.keep {
            self.skipped.borrow_mut().push(skipped);
        }
    }

    /// Records a statistic, new in this run.
    pub fn record_statistic(&self, stat: FetchStatistic) {
        for observer in &self.observers {
            observer.fetched(&stat);
        }
        self.keep_statistic(stat);
    }

    /// Adds a statistic to the report.
    pub fn keep_statistic(&self, stat: FetchStatistic) {
        if stat.is_error() {
            self.errors.set(self.errors.get() + 1);
        }
        if !self.root_answered.get()
            && stat.exception.is_none()
            && self.roots.iter().any(|root| &stat.url == root)
        {
            self.root_answered.set(true);
        }
        if let Some(on_stat) = self.on_stat.borrow_mut().as_mut() {
            on_stat(&stat);
        }
        self.tally.borrow_mut().stat(&stat);
        if self.keep {
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

    /// The statistics kept, in the order they were recorded.
    pub fn done(&self) -> Ref<'_, Vec<FetchStatistic>> {
        self.done.borrow()
    }

    /// The URLs skipped, in the order they were skipped.
    pub fn skipped(&self) -> Ref<'_, Vec<Skipped>> {
        self.skipped.borrow()
    }

    /// Statistics that are failures or HTTP errors.
    pub fn errors(&self) -> usize {
        self.errors.get()
    }

    /// Whether some root was answered.
    pub fn any_root_fetched(&self) -> bool {
        self.root_answered.get()
    }
}
