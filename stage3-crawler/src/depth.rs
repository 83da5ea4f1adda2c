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

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use crate::seams::{Again, Work};

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
    /// keeps it until that level's turn.
    pub fn may_start(&mut self, mut work: Work) -> Option<Work> {
        let key = work.url.as_str();
        let depth = self.waiting.get(key).copied().unwrap_or(work.depth);
        work.depth = depth;
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
    use url::Url;

    fn work(url: &str, depth: u32) -> Work {
        Work {
            url: Url::parse(url).unwrap(),
            max_redirect: 10,
            from: None,
            depth,
            sitemap: false,
            lease: None,
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
        assert_eq!(a.depth, 1);
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
        assert_eq!(x.depth, 1);
        // Seen again deeper: no change.
        d.add("http://h/y", 1);
        d.seen_again("http://h/y", 3);
        assert_eq!(d.may_start(work("http://h/y", 1)).unwrap().depth, 1);
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
        assert_eq!(d.may_start(x).unwrap().depth, 1);
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
