//! A joinable queue: asyncio's `Queue`, the crawler's to-do list.
//!
//! The finished crawler puts URLs on a queue, `max_tasks` workers `get` them,
//! and each worker calls `task_done` when it has finished with one, even if
//! it failed. `join` waits until every URL ever put has been marked done,
//! which is exactly "the crawl is over", and then the crawler cancels the
//! workers, who are all parked in `get`.
//!
//! The queue is unbounded (the crawler only uses `put_nowait`), and belongs
//! to one thread, like everything that tasks share in this runtime.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// A FIFO queue shared between tasks. Cloning gives another handle to the
/// same queue.
pub struct Queue<T> {
    inner: Rc<RefCell<Inner<T>>>,
}

struct Inner<T> {
    items: VecDeque<T>,
    /// Items put and not yet marked done, as in asyncio.
    unfinished: usize,
    /// Tasks waiting in `get`, first come, first served.
    getters: Line,
    next_getter: u64,
    /// Tasks waiting in `join`.
    joiners: Vec<Waker>,
}

/// `task_done` was called more times than items were put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskDoneError;

impl fmt::Display for TaskDoneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task_done() called more times than items were put on the queue")
    }
}

impl std::error::Error for TaskDoneError {}

impl<T> Queue<T> {
    /// An empty queue with no unfinished items.
    pub fn new() -> Queue<T> {
        Queue {
            inner: Rc::new(RefCell::new(Inner {
                items: VecDeque::new(),
                unfinished: 0,
                getters: Line::default(),
                next_getter: 0,
                joiners: Vec::new(),
            })),
        }
    }

    // ANCHOR: put_nowait
    /// Adds an item and wakes the longest-waiting `get`, if any.
    pub fn put_nowait(&self, item: T) {
        let mut inner = self.inner.borrow_mut();
        inner.items.push_back(item);
        inner.unfinished += 1;
        if let Some(waker) = inner.getters.pop_first() {
            waker.wake();
        }
    }
    // ANCHOR_END: put_nowait

    /// Removes and returns the next item, waiting for one if the queue is
    /// empty.
    pub fn get(&self) -> Get<'_, T> {
        Get {
            queue: self,
            waiter: None,
        }
    }

    /// Removes the next item if there is one, without waiting.
    pub fn get_nowait(&self) -> Option<T> {
        self.inner.borrow_mut().items.pop_front()
    }

    // ANCHOR: task_done
    /// Marks one item from `get` as finished. When every item put so far is
    /// finished, wakes everyone in [`join`](Self::join).
    pub fn task_done(&self) -> Result<(), TaskDoneError> {
        let mut inner = self.inner.borrow_mut();
        if inner.unfinished == 0 {
            return Err(TaskDoneError);
        }
        inner.unfinished -= 1;
        if inner.unfinished == 0 {
            for waker in inner.joiners.drain(..) {
                waker.wake();
            }
        }
        Ok(())
    }
    // ANCHOR_END: task_done

    /// Waits until every item put has been marked done with
    /// [`task_done`](Self::task_done). Resolves at once if that is already
    /// so, including on a queue that never had an item.
    pub fn join(&self) -> Join<'_, T> {
        Join { queue: self }
    }

    /// How many items are waiting to be taken.
    pub fn qsize(&self) -> usize {
        self.inner.borrow().items.len()
    }

    /// Whether no item is waiting to be taken.
    pub fn is_empty(&self) -> bool {
        self.qsize() == 0
    }

    /// Items put and not yet marked done (taken or not).
    pub fn unfinished(&self) -> usize {
        self.inner.borrow().unfinished
    }
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue::new()
    }
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner.borrow();
        f.debug_struct("Queue")
            .field("qsize", &inner.items.len())
            .field("unfinished", &inner.unfinished)
            .field("waiting_getters", &inner.getters.len())
            .field("waiting_joiners", &inner.joiners.len())
            .finish()
    }
}

/// The tasks waiting in `get`, in the order they came, each under an id
/// that grows with each new waiter. A getter that leaves (cancelled, or
/// served by an item it found itself) finds its entry by binary search, in
/// O(log n), and leaves a gap that `pop_first` skips: that matters when a
/// hundred thousand tasks wait on one queue and are all cancelled. A ring
/// buffer rather than a `BTreeMap`, which would allocate a node when its
/// first waiter comes and free it when the last goes: a queue with one
/// getter does that for every item.
#[derive(Default)]
struct Line {
    /// (id, waker) in increasing id order; `None` is a getter that left.
    waiting: VecDeque<(u64, Option<Waker>)>,
    /// The entries that are not gaps.
    len: usize,
}

impl Line {
    /// Adds a getter at the back; `id` must be larger than any before.
    fn push(&mut self, id: u64, waker: Waker) {
        debug_assert!(self.waiting.back().is_none_or(|(last, _)| *last < id));
        self.waiting.push_back((id, Some(waker)));
        self.len += 1;
    }

    /// Takes the longest-waiting getter out of the line.
    fn pop_first(&mut self) -> Option<Waker> {
        while let Some((_, waker)) = self.waiting.pop_front() {
            if waker.is_some() {
                self.len -= 1;
                return waker;
            }
        }
        None
    }

    /// The waker of getter `id`, if it is still in line.
    fn get_mut(&mut self, id: u64) -> Option<&mut Waker> {
        let at = self.waiting.binary_search_by_key(&id, |(id, _)| *id).ok()?;
        self.waiting[at].1.as_mut()
    }

    /// Takes getter `id` out of the line; whether it was in it.
    fn remove(&mut self, id: u64) -> bool {
        // The common case: a put already took this getter out (ids only
        // grow, so the whole line is after it).
        if self.waiting.front().is_none_or(|(first, _)| *first > id) {
            return false;
        }
        let Ok(at) = self.waiting.binary_search_by_key(&id, |(id, _)| *id) else {
            return false;
        };
        if self.waiting[at].1.take().is_none() {
            return false;
        }
        self.len -= 1;
        // Gaps at the front go at once; the others when they get there.
        while self
            .waiting
            .front()
            .is_some_and(|(_, waker)| waker.is_none())
        {
            self.waiting.pop_front();
        }
        true
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// The future returned by [`Queue::get`].
#[derive(Debug)]
pub struct Get<'a, T> {
    queue: &'a Queue<T>,
    /// Our id in the getters list, once we have waited.
    waiter: Option<u64>,
}

impl<T> Future for Get<'_, T> {
    type Output = T;

    // ANCHOR: get_poll
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut inner = self.queue.inner.borrow_mut();
        if let Some(item) = inner.items.pop_front() {
            if let Some(id) = self.waiter.take() {
                inner.getters.remove(id);
            }
            return Poll::Ready(item);
        }
        match self.waiter {
            // Still in line: the latest waker wins.
            Some(id) if let Some(waker) = inner.getters.get_mut(id) => {
                waker.clone_from(cx.waker());
            }
            // New, or woken by a put whose item someone else took first:
            // (re)join the line at the back.
            _ => {
                let id = inner.next_getter;
                inner.next_getter += 1;
                inner.getters.push(id, cx.waker().clone());
                drop(inner);
                self.waiter = Some(id);
            }
        }
        crate::task::note_wait(crate::task::WaitsOn::Queue);
        Poll::Pending
    }
    // ANCHOR_END: get_poll
}

impl<T> Drop for Get<'_, T> {
    // ANCHOR: get_drop
    fn drop(&mut self) {
        let Some(id) = self.waiter else { return };
        let Ok(mut inner) = self.queue.inner.try_borrow_mut() else {
            return;
        };
        let still_waiting = inner.getters.remove(id);
        // We were woken for an item but are going away (cancelled) without
        // taking it: pass the wakeup on, or that item would sit in the queue
        // while the next getter sleeps.
        if !still_waiting
            && !inner.items.is_empty()
            && let Some(waker) = inner.getters.pop_first()
        {
            waker.wake();
        }
    }
    // ANCHOR_END: get_drop
}

/// The future returned by [`Queue::join`].
#[derive(Debug)]
pub struct Join<'a, T> {
    queue: &'a Queue<T>,
}

impl<T> Future for Join<'_, T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut inner = self.queue.inner.borrow_mut();
        if inner.unfinished == 0 {
            return Poll::Ready(());
        }
        if !inner.joiners.iter().any(|w| w.will_wake(cx.waker())) {
            inner.joiners.push(cx.waker().clone());
        }
        crate::task::note_wait(crate::task::WaitsOn::Queue);
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{run_until_complete, spawn};

    #[test]
    fn the_line_serves_in_order_and_skips_those_who_left() {
        use std::task::Wake;
        // Four wakers told apart by their allocations.
        struct Noop;
        impl Wake for Noop {
            fn wake(self: std::sync::Arc<Self>) {}
        }
        let wakers: Vec<_> = (0..4)
            .map(|_| Waker::from(std::sync::Arc::new(Noop)))
            .collect();
        let mut line = Line::default();
        for (id, waker) in wakers.iter().enumerate() {
            line.push(id as u64, waker.clone());
        }
        assert!(line.remove(1));
        assert!(!line.remove(1));
        assert!(line.get_mut(1).is_none());
        assert!(line.get_mut(2).is_some_and(|w| w.will_wake(&wakers[2])));
        assert_eq!(line.len(), 3);
        let order: Vec<usize> = std::iter::from_fn(|| line.pop_first())
            .map(|w| wakers.iter().position(|x| x.will_wake(&w)).unwrap())
            .collect();
        assert_eq!(order, [0, 2, 3]);
        assert_eq!((line.len(), line.waiting.len()), (0, 0));
        // A gap at the front goes when it is made.
        line.push(10, wakers[0].clone());
        line.push(11, wakers[1].clone());
        assert!(line.remove(10));
        assert_eq!(line.waiting.len(), 1);
    }

    #[test]
    fn fifo_order_and_sizes() {
        let q = Queue::new();
        q.put_nowait(1);
        q.put_nowait(2);
        assert_eq!((q.qsize(), q.unfinished()), (2, 2));
        assert_eq!(q.get_nowait(), Some(1));
        assert_eq!((q.qsize(), q.unfinished()), (1, 2));
        assert_eq!(q.task_done(), Ok(()));
        assert_eq!(q.unfinished(), 1);
    }

    #[test]
    fn task_done_underflow_is_an_error() {
        let q: Queue<()> = Queue::new();
        assert_eq!(q.task_done(), Err(TaskDoneError));
        assert_eq!(
            TaskDoneError.to_string(),
            "task_done() called more times than items were put on the queue"
        );
    }

    #[test]
    fn get_waits_for_put() {
        let got = run_until_complete(async {
            let q = Queue::new();
            let q2 = q.clone();
            let getter = spawn(async move { q2.get().await });
            crate::time::sleep(std::time::Duration::from_millis(1)).await;
            q.put_nowait("x");
            getter.await.unwrap()
        })
        .unwrap();
        assert_eq!(got, "x");
    }

    #[test]
    fn a_cancelled_getter_passes_its_wakeup_on() {
        let got = run_until_complete(async {
            let q = Queue::new();
            let (qa, qb) = (q.clone(), q.clone());
            let a = spawn(async move { qa.get().await });
            let b = spawn(async move { qb.get().await });
            // Let both park in get: a first, then b.
            crate::time::sleep(std::time::Duration::from_millis(1)).await;
            q.put_nowait(7); // wakes a...
            a.cancel(); // ...who is dropped before it can take the item.
            b.await.unwrap()
        })
        .unwrap();
        assert_eq!(got, 7);
    }
}
