//! One crawl's hosts shared out among loops: a [`WorkQueue`] around each
//! loop's own [`LocalQueue`], which keeps the URLs of the hosts this loop
//! owns and sends every other URL to the loop that owns its host.
//!
//! Sharding by host keeps everything per host on one loop: its queue, its
//! turns and robots.txt, its connections and the seen set of its URLs. So
//! the per-host rules stay exact with no lock, and a URL is deduplicated
//! by exactly one seen set, its owner's.
//!
//! What is left to share is the end. One loop's queue can be empty while
//! another is busy and about to send it a link, so a loop's own `join`
//! says nothing. The crawl is over when the work pending *across* all
//! loops is zero: every loop adds what its queue gained or lost to one
//! atomic count, a link counts from the moment it is sent until its owner
//! has taken it in, and whoever brings the count to zero tells every loop.
//! It is the shared frontier's pending count (Beyond One Machine), in
//! memory.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::task::{Poll, Waker};

use runtime::mpsc;
use url::Url;

use crate::queue::{LocalQueue, Sight};
use crate::seams::{Found, Next, Outcome, Pending, Tag, Work, WorkQueue};
use crate::skipped::SkipReason;

/// What one loop sends another.
#[derive(Debug)]
pub enum Message {
    /// A URL of the receiver's host, found by the sender: a page's link or
    /// a redirect's target, as the lesson's `add_url` takes it.
    Link {
        /// The URL.
        url: Url,
        /// The page it was found on, or the URL that redirected to it.
        from: String,
        /// Redirects it may still follow.
        max_redirect: u32,
        /// What its queue keeps with it.
        tag: Tag,
    },
    /// An href that is no URL, reported once by the loop it hashes to.
    Invalid {
        /// As written.
        href: String,
        /// The page it was found on.
        from: Url,
    },
    /// Nothing is pending anywhere: the crawl is complete.
    Finished,
    /// Ctrl-C: stop crawling.
    Stop,
    /// The sender's crawl is over, and it sends nothing more.
    Closed,
}

/// What a loop takes with it to join a sharded crawl: built for every loop
/// at once by [`shards`], and sent to its thread.
pub struct Shard {
    me: usize,
    inboxes: Vec<mpsc::Sender<Message>>,
    inbox: mpsc::Receiver<Message>,
    pending: Arc<AtomicIsize>,
    pages: Arc<Pages>,
}

/// `--max-pages` across the loops: URLs queued by any loop, roots
/// included, and the most there may be.
#[derive(Debug)]
pub struct Pages {
    queued: AtomicUsize,
    max: Option<usize>,
}

impl Pages {
    /// Counts one more URL queued, if the crawl may queue it.
    fn take(&self) -> bool {
        let Some(max) = self.max else {
            return true;
        };
        self.queued
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok()
    }
}

/// The shards of a crawl on `loops` loops that queues at most `max_pages`
/// URLs in all; each loop's inbox, to send it [`Message::Stop`]; and the
/// work pending across the loops, for a progress line.
#[allow(clippy::type_complexity)]
pub fn shards(
    loops: usize,
    max_pages: Option<usize>,
) -> (Vec<Shard>, Vec<mpsc::Sender<Message>>, Arc<AtomicIsize>) {
    let (inboxes, receivers): (Vec<_>, Vec<_>) = (0..loops).map(|_| mpsc::channel()).unzip();
    // Each loop holds one count until its roots are queued, so that the
    // count cannot reach zero before every loop has started.
    let pending = Arc::new(AtomicIsize::new(loops as isize));
    let pages = Arc::new(Pages {
        queued: AtomicUsize::new(0),
        max: max_pages,
    });
    let shards = receivers
        .into_iter()
        .enumerate()
        .map(|(me, inbox)| Shard {
            me,
            inboxes: inboxes.clone(),
            inbox,
            pending: Arc::clone(&pending),
            pages: Arc::clone(&pages),
        })
        .collect();
    (shards, inboxes, pending)
}

/// The loop that owns `url`, of `loops`: its host's, as the per-host
/// limits count hosts (name and port, so that `http://h/` and `https://h/`
/// on one port are one); a URL without a host, as written.
fn owner_of(url: &Url, loops: usize) -> usize {
    match (url.host_str(), url.port_or_known_default()) {
        (Some(host), Some(port)) => owner((host, port), loops),
        _ => owner(url.as_str(), loops),
    }
}

// ANCHOR: owner
/// The loop that owns `key` (a host and port; a URL without one, or an
/// href that is no URL, as written), of `loops`. The same on every loop
/// and every run: the standard library's SipHash with its fixed keys.
pub fn owner(key: impl Hash, loops: usize) -> usize {
    let mut hasher = DefaultHasher::new();
    key.hash(&mut hasher);
    (hasher.finish() % loops as u64) as usize
}
// ANCHOR_END: owner

/// A flag a task can wait for.
#[derive(Default)]
struct Flag {
    set: Cell<bool>,
    waiting: RefCell<Vec<Waker>>,
}

impl Flag {
    fn set(&self) {
        self.set.set(true);
        for waker in self.waiting.borrow_mut().drain(..) {
            waker.wake();
        }
    }

    async fn wait(&self) {
        poll_fn(|cx| {
            if self.set.get() {
                return Poll::Ready(());
            }
            let mut waiting = self.waiting.borrow_mut();
            if !waiting.iter().any(|w| w.will_wake(cx.waker())) {
                waiting.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }
}

/// A loop's part of a sharded crawl.
pub struct Shards {
    local: Rc<LocalQueue>,
    me: usize,
    inboxes: Vec<mpsc::Sender<Message>>,
    /// Until [`begin`](Self::begin).
    inbox: RefCell<Option<mpsc::Receiver<Message>>>,
    /// Work pending across all loops.
    pending: Arc<AtomicIsize>,
    /// `--max-pages` across all loops.
    pages: Arc<Pages>,
    /// This loop's unfinished count, as `pending` has it.
    mirrored: Cell<usize>,
    finished: Flag,
    stop: Flag,
    /// Loops whose crawl is over, by their [`Message::Closed`].
    closed: Cell<usize>,
    all_closed: Flag,
}

impl Shards {
    /// This loop's part, around its queue. Queue the roots it
    /// [`owns`](Self::owns), then [`begin`](Self::begin).
    pub fn new(local: Rc<LocalQueue>, shard: Shard) -> Rc<Shards> {
        let Shard {
            me,
            inboxes,
            inbox,
            pending,
            pages,
        } = shard;
        Rc::new(Shards {
            local,
            me,
            inboxes,
            inbox: RefCell::new(Some(inbox)),
            pending,
            pages,
            mirrored: Cell::new(0),
            finished: Flag::default(),
            stop: Flag::default(),
            closed: Cell::new(0),
            all_closed: Flag::default(),
        })
    }

    /// Whether this loop owns `url`'s host.
    pub fn owns(&self, url: &Url) -> bool {
        owner_of(url, self.loops()) == self.me
    }

    /// The roots this loop owns are queued: it lets go of the count it
    /// held meanwhile, and reads its inbox from now on.
    pub fn begin(self: &Rc<Self>) {
        self.account(1);
        if let Some(inbox) = self.inbox.borrow_mut().take() {
            runtime::TaskBuilder::new()
                .name(format!("inbox-{}", self.me))
                .spawn(Rc::clone(self).serve(inbox));
        }
    }

    /// Resolves when Ctrl-C reaches this loop.
    pub async fn stopped(&self) {
        self.stop.wait().await
    }

    fn loops(&self) -> usize {
        self.inboxes.len()
    }

    fn broadcast(&self, message: impl Fn() -> Message) {
        for inbox in &self.inboxes {
            // A loop whose inbox is gone has ended; it needs nothing.
            let _ = inbox.send(message());
        }
    }

    // ANCHOR: account
    /// Adds what this loop's queue gained or lost since it was last told
    /// to the crawl's pending count, less `taken_in` messages it has
    /// handled; if that brings the count to zero, the crawl is complete,
    /// and every loop hears so.
    fn account(&self, taken_in: isize) {
        let unfinished = self.local.unfinished();
        let delta = unfinished as isize - self.mirrored.replace(unfinished) as isize - taken_in;
        self.add_pending(delta);
    }

    /// Adds `delta` to the crawl's pending count; whoever brings it to
    /// zero tells every loop the crawl is complete.
    fn add_pending(&self, delta: isize) {
        if delta != 0 && self.pending.fetch_add(delta, Ordering::SeqCst) + delta == 0 {
            self.broadcast(|| Message::Finished);
        }
    }

    /// Sends a URL, or an invalid href, to the loop that owns it. It counts
    /// as pending from now until that loop has taken it in.
    fn send(&self, owner: usize, message: Message) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.inboxes[owner].send(message).is_err() {
            // Only a loop whose thread died drops its inbox: the link is
            // lost, said so, and not counted, so the others still finish.
            log::error!("loop {owner} is gone: a link to it is lost");
            self.add_pending(-1);
        }
    }
    // ANCHOR_END: account

    /// What this loop's queue's `add_url` is, for a loop of many: a URL of
    /// a host of ours goes on our queue; any other goes to its owner.
    fn add_url(&self, url: Url, from: Option<&Rc<str>>, max_redirect: u32, tag: Tag) {
        let owner = owner_of(&url, self.loops());
        match from {
            Some(from) if owner != self.me => self.send(
                owner,
                Message::Link {
                    url,
                    from: from.to_string(),
                    max_redirect,
                    tag,
                },
            ),
            _ => self.add_here(url, from, max_redirect, tag),
        }
    }

    /// The lesson's `add_url` for a URL of this loop's hosts, made of the
    /// lesson queue's steps, with `--max-pages` counted across the loops
    /// (each loop's own queue counts no pages).
    pub fn add_here(&self, url: Url, from: Option<&Rc<str>>, max_redirect: u32, tag: Tag) {
        if self.local.first_sight(&url, from) != Sight::New {
            return;
        }
        if !self.pages.take() {
            let from = from.map(|f| f.to_string());
            self.local.skip_url(url, SkipReason::MaxPages, from);
            return;
        }
        let from = from.cloned();
        self.local.put(Work {
            url,
            max_redirect,
            from,
            tag,
        });
    }

    /// The hrefs of `found` that are no URL and hash to another loop go
    /// there: an href is reported once, by one seen set.
    fn send_invalid(&self, work: &Work, found: &mut Found) {
        let Next::Links { invalid, .. } = &mut found.next else {
            return;
        };
        invalid.retain(|href| {
            let owner = owner(href.as_str(), self.loops());
            if owner != self.me {
                let from = work.url.clone();
                self.send(
                    owner,
                    Message::Invalid {
                        href: href.clone(),
                        from,
                    },
                );
            }
            owner == self.me
        });
    }

    // ANCHOR: serve
    /// Reads this loop's inbox until every sender is gone.
    async fn serve(self: Rc<Self>, mut inbox: mpsc::Receiver<Message>) {
        while let Some(message) = inbox.recv().await {
            match message {
                // Each in a panic guard, as `task_done` is: a bug in the
                // rules costs this link, not the inbox, without which the
                // count could never reach zero.
                Message::Link {
                    url,
                    from,
                    max_redirect,
                    tag,
                } => {
                    let from: Rc<str> = Rc::from(from);
                    let at = url.clone();
                    self.local
                        .guarded(&at, || {
                            self.add_here(url, Some(&from), max_redirect, tag);
                            self.local.records().settled();
                        })
                        .await;
                    self.account(1);
                }
                Message::Invalid { href, from } => {
                    self.local
                        .guarded(&from, || {
                            if self.local.mark_seen(&href) {
                                let page = Some(from.to_string());
                                self.local.skip_url(href, SkipReason::InvalidUrl, page);
                                self.local.records().settled();
                            }
                        })
                        .await;
                    self.account(1);
                }
                Message::Finished => self.finished.set(),
                Message::Stop => self.stop.set(),
                Message::Closed => {
                    self.closed.set(self.closed.get() + 1);
                    if self.closed.get() == self.loops() {
                        // Nothing more comes from anyone.
                        self.all_closed.set();
                        return;
                    }
                }
            }
        }
    }
    // ANCHOR_END: serve
}

impl WorkQueue for Shards {
    fn get(&self) -> Pending<'_, Work> {
        self.local.get()
    }

    fn task_done(&self, work: Work, mut found: Found) -> Pending<'_, ()> {
        Box::pin(async move {
            self.send_invalid(&work, &mut found);
            self.local
                .guarded(&work.url, || {
                    self.local
                        .keep_found(&work, found, |url, from, max_redirect, tag| {
                            self.add_url(url, from, max_redirect, tag)
                        })
                })
                .await;
            self.local.mark_done();
            self.account(0);
        })
    }

    fn join(&self) -> Pending<'_, Outcome> {
        Box::pin(async {
            self.finished.wait().await;
            Outcome::Completed
        })
    }

    // ANCHOR: close
    fn close(&self, outcome: Outcome, unfinished: Vec<Work>) -> Pending<'_, ()> {
        Box::pin(async move {
            // Each loop sends its last link before it says it is closed, and
            // an inbox keeps each sender's order: once every loop has said
            // so, every link sent here is on this loop's queue, and the
            // lesson's queue names what is left as interrupted.
            self.broadcast(|| Message::Closed);
            self.all_closed.wait().await;
            self.local.close(outcome, unfinished).await;
        })
    }
    // ANCHOR_END: close

    fn is_new(&self, url: &Url) -> bool {
        self.local.is_new(url)
    }

    fn qsize(&self) -> usize {
        self.local.qsize()
    }

    fn skip(&self, work: Work, reason: SkipReason) -> Pending<'_, ()> {
        Box::pin(async move {
            self.local.skip(work, reason).await;
            self.account(0);
        })
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
            self.local.mark_done();
            self.account(0);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_pages_is_counted_across_the_loops() {
        let (three, _, _) = shards(3, Some(2));
        let pages = &three[0].pages;
        assert!(Arc::ptr_eq(pages, &three[2].pages));
        assert!(pages.take() && pages.take());
        assert!(!pages.take(), "a third page past --max-pages 2");
        let (unlimited, _, _) = shards(2, None);
        assert!((0..1000).all(|_| unlimited[1].pages.take()));
    }

    #[test]
    fn a_host_has_one_owner_whatever_its_path_or_scheme() {
        let a = Url::parse("http://example.com:8080/a").unwrap();
        let b = Url::parse("https://example.com:8080/b?q").unwrap();
        for loops in 1..9 {
            assert_eq!(owner_of(&a, loops), owner_of(&b, loops));
            assert!(owner_of(&a, loops) < loops);
        }
    }

    #[test]
    fn hosts_spread_over_the_loops() {
        let mut per_loop = [0; 4];
        for i in 0..400 {
            per_loop[owner((format!("host{i}.example").as_str(), 80), 4)] += 1;
        }
        // SipHash spreads 400 hosts within 25% of the even 100 on each loop.
        assert!(
            per_loop.iter().all(|n| (75..=125).contains(n)),
            "{per_loop:?}"
        );
    }
}
