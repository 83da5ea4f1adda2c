//! Each host's turn: the queue as a good citizen takes from it. A
//! [`WorkQueue`] around another, which hands a worker a URL only when its
//! host may be asked (a free slot of `--per-host`, its delay passed, its
//! robots.txt read and allowing it), and parks the others without holding
//! the worker: the rules hand a parked URL back when its host's turn comes.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use url::Url;

use crate::polite::politeness::Slowed;
use crate::polite::rules::{Admission, WebRules};
use crate::seams::{Found, Outcome, Pending, Work, WorkQueue};
use crate::skipped::SkipReason;
use crate::stats::FetchStatistic;

// ANCHOR: turns
/// A queue whose URLs wait their host's turn.
pub struct Turns {
    inner: Rc<dyn WorkQueue>,
    rules: Rc<WebRules>,
    /// URLs whose host's turn came as a fetch there ended: the next `get`
    /// takes them first, their slot already theirs.
    ready: RefCell<VecDeque<Work>>,
    /// URLs waiting for their origin's robots.txt, which the worker that
    /// took them is fetching: unfinished, if the crawl stops.
    waiting: RefCell<Vec<Work>>,
}

impl Turns {
    /// `inner`'s URLs, each in its host's turn as `rules` say.
    pub fn new(inner: Rc<dyn WorkQueue>, rules: Rc<WebRules>) -> Turns {
        Turns {
            inner,
            rules,
            ready: RefCell::new(VecDeque::new()),
            waiting: RefCell::new(Vec::new()),
        }
    }

    /// Asks the rules about `work`, taken from the queue: the URL to fetch
    /// now, or `None` if it is not to be fetched now (parked, or done
    /// without a request).
    async fn admit(&self, mut work: Work) -> Option<Work> {
        loop {
            match self.rules.admit(work) {
                Admission::Fetch(work) => return Some(work),
                // Parked: its `task_done` comes when it has been fetched.
                Admission::Parked => return None,
                Admission::After(waits, first) => {
                    self.waiting.borrow_mut().push(waits.clone());
                    first.await;
                    self.waiting.borrow_mut().retain(|w| w.url != waits.url);
                    // While it waited, the queue it came from may have
                    // changed its mind (a new sitemap reopened a level).
                    work = self.inner.readmit(waits)?;
                }
                Admission::Dropped(work) => {
                    self.inner.done_listing(work, None).await;
                    return None;
                }
                Admission::Skip(work, reason) => {
                    self.inner.skip(work, reason).await;
                    return None;
                }
                Admission::Fail(work, exception) => {
                    let stat = FetchStatistic::failure(work.url.to_string(), exception);
                    self.inner.task_done(work, Found::nothing(stat)).await;
                    return None;
                }
            }
        }
    }

    // ANCHOR: unless_slowed
    /// `work` and what came of it, to record; or `None` when its server
    /// asked us to slow down (429, 503) and it waits with its host, to be
    /// asked again when the wait is over.
    fn unless_slowed(&self, work: Work, mut found: Found) -> Option<(Work, Found)> {
        let status = found.stat.status.filter(|s| matches!(s, 429 | 503));
        let Some(status) = status.filter(|_| found.stat.exception.is_none()) else {
            self.rules.answered(&work.url);
            return Some((work, found));
        };
        match self.rules.slowed(work, status) {
            Slowed::Waiting(_) => None,
            Slowed::Record(work) => Some((work, found)),
            Slowed::Fail(work, exception) => {
                found.stat.exception = Some(exception);
                Some((work, found))
            }
        }
    }
    // ANCHOR_END: unless_slowed

    /// The fetch of `url` ended: its host's next URL, if one waits, is
    /// the next to go.
    fn finish(&self, url: &Url) {
        if let Some(next) = self.rules.finish(url) {
            self.ready.borrow_mut().push_back(next);
        }
    }
}

impl WorkQueue for Turns {
    fn get(&self) -> Pending<'_, Work> {
        Box::pin(async {
            loop {
                let ready = self.ready.borrow_mut().pop_front();
                if let Some(work) = ready {
                    return work;
                }
                let work = self.inner.get().await;
                if let Some(work) = self.admit(work).await {
                    return work;
                }
            }
        })
    }

    fn task_done(&self, work: Work, found: Found) -> Pending<'_, ()> {
        Box::pin(async move {
            let url = work.url.clone();
            if let Some((work, found)) = self.unless_slowed(work, found) {
                self.inner.task_done(work, found).await;
            }
            self.finish(&url);
        })
    }
    // ANCHOR_END: turns

    fn join(&self) -> Pending<'_, Outcome> {
        self.inner.join()
    }

    fn close(&self, outcome: Outcome, mut unfinished: Vec<Work>) -> Pending<'_, ()> {
        unfinished.append(&mut self.waiting.borrow_mut());
        unfinished.extend(self.ready.borrow_mut().drain(..));
        unfinished.extend(self.rules.drain());
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
        // Read in its host's turn, as a page is fetched.
        Box::pin(async move {
            let url = work.url.clone();
            self.inner.done_listing(work, listed).await;
            self.finish(&url);
        })
    }

    fn readmit(&self, work: Work) -> Option<Work> {
        self.inner.readmit(work)
    }

    fn stopped_by(&self) -> Option<String> {
        self.inner.stopped_by()
    }
}
