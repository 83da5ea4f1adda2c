//! `--max-depth`: how many links from a root a URL may be, exactly, with a
//! hundred workers racing.
//!
//! A root is depth 0, a page it links is depth 1, and a redirect's target
//! has the depth of the URL that redirected. A URL's depth is its shortest
//! path. With concurrent workers the first path found is not always the
//! shortest: a slow page at depth 1 may link a URL that a fast page at
//! depth 2 found first, at depth 3. If the limit is 2, that URL was wrongly
//! refused, and if the limit is 3, its own links got depths one too large.
//!
//! So the crawl goes level by level: a worker does not start a URL of
//! depth `d + 1` while any URL of depth `d` or less is unfinished. It
//! parks it (as the per-host rules do, its `task_done` deferred) until the
//! level is done. Then every URL first seen at depth `d + 1` came from a
//! page at depth `d`, and no shorter path is left to find, except through
//! a redirect at depth `d`, whose target has depth `d`: a URL queued (or
//! refused) at `d + 1` is moved up when a redirect reaches it. A URL deeper
//! than the limit is skipped only at the end, when nothing can move it up.
//!
//! The cost is the slowest page of each level, paid once per level; it is
//! paid only with `--max-depth`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::{Rc, Weak};

use url::Url;

use crate::logging::CrawlLog;
use crate::queue::{LocalQueue, Sight};
use crate::seams::{Found, Outcome, Pending, Tag, Work, WorkQueue};
use crate::skipped::{SkipReason, Skipped};

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

// ANCHOR: levels
/// The lesson's queue, level by level: a [`WorkQueue`] around the
/// [`LocalQueue`] that hands out no URL of depth `d + 1` while one of
/// depth `d` is unfinished, and sets aside URLs deeper than the limit
/// until the end, when nothing can bring them closer.
pub struct Levels {
    local: Rc<LocalQueue>,
    limit: RefCell<DepthLimit>,
    log: Rc<CrawlLog>,
}
// ANCHOR_END: levels

impl Levels {
    /// `local`, at most `max` links from a root.
    pub fn new(local: Rc<LocalQueue>, max: u32, log: Rc<CrawlLog>) -> Levels {
        Levels {
            local,
            limit: RefCell::new(DepthLimit::new(max)),
            log,
        }
    }

    // ANCHOR: add
    /// The lesson's `add_url`, with a URL's depth (its tag's) in mind: a
    /// URL first seen deeper than the limit is set aside; one seen again
    /// on a shorter path moves up, or comes back from aside.
    pub fn add_url(&self, url: Url, from: Option<&Rc<str>>, max_redirect: u32, tag: Tag) {
        let depth = tag.depth;
        let work = |from| Work {
            url: url.clone(),
            max_redirect,
            from,
            tag,
        };
        match self.local.first_sight(&url, from) {
            Sight::Refused => {}
            Sight::New => {
                if !self.set_aside(&url, from, depth) {
                    self.put(work(from.cloned()));
                }
            }
            Sight::Seen => {
                let waited_at = self.limit.borrow().waiting_depth(url.as_str());
                let again = self.limit.borrow_mut().seen_again(url.as_str(), depth);
                if waited_at.is_some_and(|old| depth < old) {
                    self.local.records().moved_up(url.as_str(), depth);
                }
                match again {
                    Again::Nothing => {}
                    Again::Release(kept) => self.local.put_back(kept),
                    Again::ComeBack(first_from) => self.put(work(first_from)),
                }
            }
        }
    }
    // ANCHOR_END: add

    /// Sets `url` aside if it is deeper than the limit; whether it was.
    fn set_aside(&self, url: &Url, from: Option<&Rc<str>>, depth: u32) -> bool {
        if !self.limit.borrow_mut().set_aside(url.as_str(), depth, from) {
            return false;
        }
        let records = self.local.records();
        records.set_aside(url.as_str(), from.map(|f| &**f), depth);
        self.log.debug(format_args!("{url} is too deep, for now"));
        true
    }

    /// Queues `work`, counted in its level.
    fn put(&self, work: Work) {
        let (url, depth): (Box<str>, u32) = (work.url.as_str().into(), work.tag.depth);
        if self.local.put(work) {
            self.limit.borrow_mut().add(&url, depth);
        }
    }

    /// A URL of `depth` is done. If that finished its level, the URLs kept
    /// for the next go on the queue first, so that the queue's count never
    /// touches zero on the way.
    fn mark_done(&self, depth: u32) {
        self.local.records().settled();
        for work in self.limit.borrow_mut().done(depth) {
            self.local.put_back(work);
        }
        self.local.finish_one();
    }

    /// Work that is not a URL (a sitemap to read), put on the queue at
    /// depth 0, holds level 0 open until it is done. A `Weak` handle: the
    /// rules that queue sitemaps must not keep the queue alive.
    pub fn hold_for(levels: &Rc<Levels>) -> impl Fn(Work) + use<> {
        let levels: Weak<Levels> = Rc::downgrade(levels);
        move |work| {
            if let Some(levels) = levels.upgrade() {
                levels.limit.borrow_mut().hold(work.tag.depth);
                levels.local.requeue(work);
            }
        }
    }

    /// A URL queued in an earlier run and not done goes on this run's
    /// queue, counted in its level.
    pub fn requeued(&self, url: &Url, depth: u32) {
        self.limit.borrow_mut().add(url.as_str(), depth);
    }

    /// A URL set aside as too deep in an earlier run stays aside.
    pub fn keep_aside(&self, url: &str, depth: u32, from: Option<&Rc<str>>) {
        self.limit.borrow_mut().set_aside(url, depth, from);
    }
}

impl WorkQueue for Levels {
    fn get(&self) -> Pending<'_, Work> {
        Box::pin(async {
            loop {
                let work = self.local.get().await;
                if let Some(work) = self.readmit(work) {
                    return work;
                }
            }
        })
    }

    fn task_done(&self, work: Work, found: Found) -> Pending<'_, ()> {
        Box::pin(async move {
            self.local
                .guarded(&work.url, || {
                    self.local
                        .keep_found(&work, found, |url, from, max_redirect, tag| {
                            self.add_url(url, from, max_redirect, tag)
                        })
                })
                .await;
            self.mark_done(work.tag.depth);
        })
    }

    fn join(&self) -> Pending<'_, Outcome> {
        self.local.join()
    }

    fn close(&self, outcome: Outcome, mut unfinished: Vec<Work>) -> Pending<'_, ()> {
        let mut limit = self.limit.borrow_mut();
        let records = self.local.records();
        for (url, from) in limit.take_too_deep() {
            let skipped = Skipped {
                url: url.into(),
                reason: SkipReason::Depth,
                from: from.map(|f| f.to_string()),
            };
            // Only a crawl that ran to its end knows no shorter path is
            // left: an interrupted one keeps them set aside, for its
            // resumption.
            match outcome {
                Outcome::Completed => records.record_skip(skipped),
                Outcome::Interrupted | Outcome::Lost => records.keep_skip(skipped),
            }
        }
        unfinished.extend(limit.take_deferred());
        drop(limit);
        self.local.close(outcome, unfinished)
    }

    fn is_new(&self, url: &Url) -> bool {
        self.local.is_new(url)
    }

    fn qsize(&self) -> usize {
        self.local.qsize()
    }

    fn skip(&self, work: Work, reason: SkipReason) -> Pending<'_, ()> {
        let from = work.from.map(|f| f.to_string());
        self.local.skip_url(work.url, reason, from);
        self.mark_done(work.tag.depth);
        Box::pin(std::future::ready(()))
    }

    fn done_listing(&self, work: Work, listed: Option<Vec<Url>>) -> Pending<'_, ()> {
        Box::pin(async move {
            self.local
                .guarded(&work.url, || {
                    self.local
                        .add_listed(&work, listed, |url, from, max_redirect, tag| {
                            self.add_url(url, from, max_redirect, tag)
                        })
                })
                .await;
            self.mark_done(work.tag.depth);
        })
    }

    fn readmit(&self, work: Work) -> Option<Work> {
        self.limit.borrow_mut().may_start(work)
    }
}

/// The levels of a crawl with `--max-depth`.
#[derive(Debug, Default)]
pub struct DepthLimit {
    max: u32,
    /// Unfinished URLs per depth: the lowest key is the level in progress.
    unfinished: BTreeMap<u32, usize>,
    /// The depth of each URL queued and not started, which a redirect may
    /// still lower.
    waiting: HashMap<Box<str>, u32>,
    /// URLs deeper than the limit, with the page that linked them first.
    too_deep: HashMap<Box<str>, Option<Rc<str>>>,
    /// URLs taken from the queue before their level's turn.
    deferred: Vec<Work>,
}

impl DepthLimit {
    /// A limit of `max` links from a root.
    pub fn new(max: u32) -> DepthLimit {
        DepthLimit {
            max,
            ..DepthLimit::default()
        }
    }

    /// A URL seen for the first time, at `depth`, linked from `from`: if
    /// it is deeper than the limit, it is set aside (to be skipped at the
    /// end, unless a shorter path turns up) and this returns true.
    pub fn set_aside(&mut self, url: &str, depth: u32, from: Option<&Rc<str>>) -> bool {
        let too_deep = depth > self.max;
        if too_deep {
            self.too_deep.insert(url.into(), from.cloned());
        }
        too_deep
    }

    /// Work that is not a URL (a sitemap to read) holds `depth` open until
    /// it is [`done`](Self::done).
    pub fn hold(&mut self, depth: u32) {
        *self.unfinished.entry(depth).or_default() += 1;
    }

    /// A URL is queued at `depth`.
    pub fn add(&mut self, url: &str, depth: u32) {
        *self.unfinished.entry(depth).or_default() += 1;
        self.waiting.insert(url.into(), depth);
    }

    /// The depth a URL queued and not started waits at.
    pub fn waiting_depth(&self, url: &str) -> Option<u32> {
        self.waiting.get(url).copied()
    }

    /// A URL seen before, now at `depth`. If that is shorter than the depth
    /// it waits at, it moves up, and if it was kept for a later level that
    /// is now the level in progress, it is handed back to go on the queue.
    /// If it was set aside as too deep and now is not, it comes back: the
    /// caller queues it (and calls [`add`](Self::add)), with the page that
    /// linked it first.
    pub fn seen_again(&mut self, url: &str, depth: u32) -> Again {
        if let Some(waiting) = self.waiting.get_mut(url) {
            if depth >= *waiting {
                return Again::Nothing;
            }
            let old = std::mem::replace(waiting, depth);
            self.forget(old);
            *self.unfinished.entry(depth).or_default() += 1;
            // Kept for level `old`, it is now part of the level in
            // progress, which cannot end without it.
            return match self.deferred.iter().position(|w| w.url.as_str() == url) {
                Some(i) => Again::Release(self.deferred.swap_remove(i)),
                None => Again::Nothing,
            };
        }
        if depth > self.max {
            return Again::Nothing;
        }
        match self.too_deep.remove(url) {
            Some(from) => Again::ComeBack(from),
            None => Again::Nothing,
        }
    }

    // ANCHOR: may_start
    /// A worker took `work` from the queue. Returns it, with its depth
    /// brought up to date, if its level is the one in progress; otherwise
    /// keeps it until that level's turn. A sitemap is read in level 0,
    /// where it was queued.
    pub fn may_start(&mut self, mut work: Work) -> Option<Work> {
        if work.tag.sitemap {
            return Some(work);
        }
        let key = work.url.as_str();
        let depth = self.waiting.get(key).copied().unwrap_or(work.tag.depth);
        work.tag.depth = depth;
        let level = self.unfinished.keys().next().copied();
        if level.is_some_and(|level| depth > level) {
            self.deferred.push(work);
            return None;
        }
        self.waiting.remove(key);
        Some(work)
    }

    /// A URL of `depth` is done. If that finished its level, returns the
    /// URLs kept for the next one, for the caller to put back on the queue.
    pub fn done(&mut self, depth: u32) -> Vec<Work> {
        let level = self.unfinished.keys().next().copied();
        self.forget(depth);
        if self.unfinished.keys().next().copied() == level {
            return Vec::new();
        }
        std::mem::take(&mut self.deferred)
    }
    // ANCHOR_END: may_start

    fn forget(&mut self, depth: u32) {
        if let Some(count) = self.unfinished.get_mut(&depth) {
            *count -= 1;
            if *count == 0 {
                self.unfinished.remove(&depth);
            }
        }
    }

    /// The URLs still kept for a later level (an interrupt leaves them
    /// unfinished).
    pub fn take_deferred(&mut self) -> Vec<Work> {
        std::mem::take(&mut self.deferred)
    }

    /// The URLs too deep to fetch, with the page that linked each first:
    /// once the crawl is over, nothing can bring them closer.
    pub fn take_too_deep(&mut self) -> Vec<(Box<str>, Option<Rc<str>>)> {
        let mut too_deep: Vec<_> = self.too_deep.drain().collect();
        too_deep.sort();
        too_deep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(url: &str, depth: u32) -> Work {
        Work {
            url: Url::parse(url).unwrap(),
            max_redirect: 10,
            from: None,
            tag: Tag::at_depth(depth),
        }
    }

    #[test]
    fn a_deeper_level_waits_for_the_one_in_progress() {
        let mut d = DepthLimit::new(5);
        d.add("http://h/", 0);
        d.add("http://h/a", 1);
        // /a (depth 1) is taken while / (depth 0) is unfinished: kept.
        assert!(d.may_start(work("http://h/a", 1)).is_none());
        assert!(d.may_start(work("http://h/", 0)).is_some());
        // / is done: level 0 is over, and /a comes back.
        let back = d.done(0);
        assert_eq!(back.len(), 1);
        let a = d.may_start(back.into_iter().next().unwrap()).unwrap();
        assert_eq!(a.tag.depth, 1);
        assert!(d.done(1).is_empty());
    }

    #[test]
    fn a_redirect_moves_a_waiting_url_up_a_level() {
        let mut d = DepthLimit::new(5);
        d.add("http://h/r", 1);
        d.add("http://h/x", 2);
        // The redirect at depth 1 reaches /x: depth 1 now.
        assert_eq!(d.seen_again("http://h/x", 1), Again::Nothing);
        let x = d.may_start(work("http://h/x", 2)).unwrap();
        assert_eq!(x.tag.depth, 1);
        // Seen again deeper: no change.
        d.add("http://h/y", 1);
        d.seen_again("http://h/y", 3);
        assert_eq!(d.may_start(work("http://h/y", 1)).unwrap().tag.depth, 1);
    }

    #[test]
    fn a_kept_url_moved_up_to_the_level_in_progress_is_released() {
        let mut d = DepthLimit::new(5);
        d.add("http://h/r", 1);
        d.add("http://h/x", 2);
        assert!(d.may_start(work("http://h/r", 1)).is_some());
        assert!(d.may_start(work("http://h/x", 2)).is_none());
        // /r redirects to /x: level 1 now waits for /x, so /x must go.
        let Again::Release(x) = d.seen_again("http://h/x", 1) else {
            panic!("not released")
        };
        assert_eq!(d.may_start(x).unwrap().tag.depth, 1);
        assert!(d.done(1).is_empty());
        assert!(d.done(1).is_empty());
        assert!(d.unfinished.is_empty());
    }

    #[test]
    fn too_deep_comes_back_when_a_shorter_path_turns_up() {
        let mut d = DepthLimit::new(1);
        let page: Rc<str> = Rc::from("http://h/p");
        assert!(!d.set_aside("http://h/shallow", 1, Some(&page)));
        assert!(d.set_aside("http://h/deep", 2, Some(&page)));
        assert_eq!(d.seen_again("http://h/deep", 2), Again::Nothing);
        assert_eq!(
            d.seen_again("http://h/deep", 1),
            Again::ComeBack(Some(page))
        );
        assert!(d.take_too_deep().is_empty());
        assert!(d.set_aside("http://h/z", 7, None));
        let too_deep = d.take_too_deep();
        assert_eq!(too_deep.len(), 1);
        assert_eq!(&*too_deep[0].0, "http://h/z");
    }
}
