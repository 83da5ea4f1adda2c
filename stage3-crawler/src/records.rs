//! What the crawl found, as it records it: the chapter's `done` list (and
//! our skipped URLs), their numbers for the summary, and whoever hears of
//! each record as it is made: the reports, written as the crawl goes, and
//! the journal, each an [`Observer`], as many as listen.

use std::cell::{Cell, Ref, RefCell};
use std::rc::Rc;

use crate::seams::{Observer, Work};
use crate::skipped::Skipped;
use crate::stats::FetchStatistic;
use crate::tally::Tally;

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
    /// Who hears of each record, and each new fact: any number of them
    /// (the reports, the journal).
    observers: RefCell<Vec<Rc<dyn Observer>>>,
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
            observers: RefCell::new(observers),
        }
    }

    /// `work` went on the queue.
    pub fn queued(&self, work: &Work) {
        for observer in self.observers.borrow().iter() {
            observer.queued(work);
        }
    }

    /// A URL is done: what it came to has been told. The journal writes
    /// it before the queue hears it is done.
    pub fn settled(&self) {
        for observer in self.observers.borrow().iter() {
            observer.settled();
        }
    }

    /// A URL first seen `depth` links from a root waits as too deep.
    pub fn set_aside(&self, url: &str, from: Option<&str>, depth: u32) {
        for observer in self.observers.borrow().iter() {
            observer.set_aside(url, from, depth);
        }
    }

    /// A URL waiting its level moved up to `depth`.
    pub fn moved_up(&self, url: &str, depth: u32) {
        for observer in self.observers.borrow().iter() {
            observer.moved_up(url, depth);
        }
    }

    /// Records a skipped URL, new in this run.
    pub fn record_skip(&self, skipped: Skipped) {
        for observer in self.observers.borrow().iter() {
            observer.skipped(&skipped);
        }
        self.keep_skip(skipped);
    }

    /// Adds a skipped URL to the report.
    pub fn keep_skip(&self, skipped: Skipped) {
        for observer in self.observers.borrow().iter() {
            observer.reported_skip(&skipped);
        }
        self.tally.borrow_mut().skip(&skipped);
        if self.keep {
            self.skipped.borrow_mut().push(skipped);
        }
    }

    /// Records a statistic, new in this run.
    pub fn record_statistic(&self, stat: FetchStatistic) {
        for observer in self.observers.borrow().iter() {
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
        for observer in self.observers.borrow().iter() {
            observer.reported(&stat);
        }
        self.tally.borrow_mut().stat(&stat);
        if self.keep {
            self.done.borrow_mut().push(stat);
        }
    }

    /// Adds `observer` to those who hear of each record and fact from
    /// now on.
    pub fn listen(&self, observer: Rc<dyn Observer>) {
        self.observers.borrow_mut().push(observer);
    }

    /// Calls `f` with every statistic as it goes into the report, beside
    /// whoever else listens.
    pub fn on_stat(&self, f: impl FnMut(&FetchStatistic) + 'static) {
        self.listen(Rc::new(OnStat(RefCell::new(f))));
    }

    /// Calls `f` with every skipped URL as it goes into the report, beside
    /// whoever else listens.
    pub fn on_skip(&self, f: impl FnMut(&Skipped) + 'static) {
        self.listen(Rc::new(OnSkip(RefCell::new(f))));
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

/// A closure that hears each statistic of the report.
struct OnStat<F>(RefCell<F>);

impl<F: FnMut(&FetchStatistic)> Observer for OnStat<F> {
    fn reported(&self, stat: &FetchStatistic) {
        (self.0.borrow_mut())(stat);
    }
}

/// A closure that hears each skipped URL of the report.
struct OnSkip<F>(RefCell<F>);

impl<F: FnMut(&Skipped)> Observer for OnSkip<F> {
    fn reported_skip(&self, skipped: &Skipped) {
        (self.0.borrow_mut())(skipped);
    }
}
