//! The waker: how a task that is waiting gets back onto the run queue.
//!
//! In the chapter, a `Future` keeps a list of callbacks, and `Task.step` adds
//! itself to that list; `set_result` calls it, and the task takes its next
//! step. Rust splits that in two. A future that cannot finish yet keeps the
//! [`std::task::Waker`] it was polled with, and later calls `wake()`. Our
//! waker puts the task's id back on the executor's run queue.
//!
//! We build the waker through [`std::task::Wake`] rather than by hand from a
//! `RawWakerVTable`. The standard library turns an `Arc<impl Wake>` into
//! exactly the vtable we would write (clone = increment the count, wake =
//! consume one count, drop = decrement), and it does so without `unsafe` in
//! our code. Writing that vtable yourself is one of the exercises.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Wake;

use log::trace;

pub use crate::task_id::TaskId;

/// What the run queue holds: a task's id, and its slot in the executor's
/// table ([`crate::slab`]), so that the executor finds the task by index
/// rather than by hashing its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TaskRef {
    pub(crate) id: TaskId,
    pub(crate) slot: usize,
}

// ANCHOR: run_queue
/// The tasks that are ready to be polled, in the order they woke.
///
/// A `Waker` must be `Send + Sync`: the standard library lets any thread call
/// `wake()`. So a wake from another thread goes into a queue behind a mutex,
/// and also pokes the loop's `mio::Waker`, in case the loop is asleep in
/// `poll`. Almost every wake, though, comes from the loop's own thread: a
/// task that puts into a queue, a socket's callback, a timer. Those go into
/// a queue of the thread's own ([`LOCAL`]), with no lock and no atomic
/// operation; at each batch the loop moves what the other threads woke
/// behind them, and runs the lot from the thread's queue. (tokio
/// does the same with a local run queue per worker beside its shared
/// "inject" queue.)
pub(crate) struct RunQueue {
    /// Wakes from other threads, or from this thread while the loop is
    /// not running.
    remote: Mutex<VecDeque<TaskRef>>,
    /// Whether `remote` may hold tasks: checked without taking the lock.
    /// (Read with a plain load first, in `start_batch`: the mutex orders
    /// the tasks themselves, and the `mio::Waker` poke keeps the loop from
    /// sleeping through one.)
    remote_pending: AtomicBool,
    /// Whether the loop is asleep in its selector, or about to be: only
    /// then does a wake from another thread need the `mio::Waker`'s system
    /// call. A loop that is busy finds the task at its next batch anyway.
    sleeping: AtomicBool,
    loop_waker: Arc<mio::Waker>,
}

thread_local! {
    /// The run queue of the loop running on this thread, if any. Compared by
    /// address only, to tell a wake on the loop thread from one elsewhere.
    static RUNNING: Cell<*const RunQueue> = const { Cell::new(std::ptr::null()) };

    /// The wakes of the loop running on this thread, made on this thread.
    /// Emptied into that loop's `remote` queue when it stops running, so
    /// that nothing is lost if it runs again later.
    static LOCAL: RefCell<VecDeque<TaskRef>> = const { RefCell::new(VecDeque::new()) };
}
// ANCHOR_END: run_queue

impl RunQueue {
    pub(crate) fn new(loop_waker: Arc<mio::Waker>) -> RunQueue {
        RunQueue {
            remote: Mutex::new(VecDeque::new()),
            remote_pending: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
            loop_waker,
        }
    }

    // ANCHOR: push
    fn push(self: &Arc<Self>, task: TaskRef) {
        if self.is_running_here() {
            LOCAL.with(|local| local.borrow_mut().push_back(task));
            return;
        }
        self.push_remote([task]);
        // The other half of `may_sleep`: the task is in, then we look.
        // Both sides store then load, sequentially consistent, so at least
        // one sees the other's store: either the loop sees the task and
        // does not sleep, or we see it sleeping and poke it.
        if self.sleeping.load(Ordering::SeqCst) {
            trace!(target: "runtime", "wake task={} from another thread: poking the loop", task.id);
            // If this fails the loop's selector is gone, and there is no
            // one left to wake.
            let _ = self.loop_waker.wake();
        }
    }

    /// Called on the loop's thread when it has nothing to run and would
    /// sleep in its selector: marks it sleeping, and says whether it may
    /// (no task came from another thread meanwhile). [`awake`](Self::awake)
    /// when the selector returns.
    pub(crate) fn may_sleep(&self) -> bool {
        self.sleeping.store(true, Ordering::SeqCst);
        if self.remote_pending.load(Ordering::SeqCst) {
            self.sleeping.store(false, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// The loop is back from its selector.
    pub(crate) fn awake(&self) {
        self.sleeping.store(false, Ordering::Relaxed);
    }

    fn push_remote(&self, tasks: impl IntoIterator<Item = TaskRef>) {
        // A panic while holding this lock cannot leave the deque half-made,
        // so a poisoned lock is still good to use.
        self.lock_remote().extend(tasks);
        // After the tasks are in: whoever sees the flag finds them.
        // Sequentially consistent, for `may_sleep` (see `push`).
        self.remote_pending.store(true, Ordering::SeqCst);
    }
    // ANCHOR_END: push

    fn lock_remote(&self) -> std::sync::MutexGuard<'_, VecDeque<TaskRef>> {
        self.remote.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a batch on the loop's thread: puts the tasks woken from other
    /// threads behind those woken here, and returns how many the batch
    /// runs. Tasks woken while these run queue behind them, for the next
    /// batch. The loop then takes them one by one with [`pop`](Self::pop),
    /// from the queue where the wakes put them: nothing is swapped or
    /// copied per batch.
    pub(crate) fn start_batch(&self) -> usize {
        LOCAL.with(|local| {
            let mut local = local.borrow_mut();
            // Look before swapping: the swap is a locked instruction, and
            // there is almost never anything there. Clear the flag before
            // draining: an id pushed after the drain sets it again.
            if self.remote_pending.load(Ordering::Relaxed)
                && self.remote_pending.swap(false, Ordering::Acquire)
            {
                local.extend(self.lock_remote().drain(..));
            }
            local.len()
        })
    }

    /// The next ready task. Called on the loop's thread.
    pub(crate) fn pop(&self) -> Option<TaskRef> {
        LOCAL.with(|local| local.borrow_mut().pop_front())
    }

    /// Whether no task is waiting to run. Called on the loop's thread.
    pub(crate) fn is_empty(&self) -> bool {
        LOCAL.with(|local| local.borrow().is_empty())
            && !self.remote_pending.load(Ordering::Acquire)
    }

    fn is_running_here(self: &Arc<Self>) -> bool {
        RUNNING.with(|running| std::ptr::eq(running.get(), Arc::as_ptr(self)))
    }

    /// Marks this queue as the one whose loop runs on this thread, until the
    /// returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> RunningGuard {
        let previous = RUNNING.with(|running| running.replace(Arc::as_ptr(self)));
        RunningGuard {
            queue: Arc::clone(self),
            previous,
        }
    }
}

pub(crate) struct RunningGuard {
    queue: Arc<RunQueue>,
    previous: *const RunQueue,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        // Tasks woken on this thread and not yet run stay ready for the
        // next time this loop runs, wherever that is.
        let left = LOCAL.with(|local| std::mem::take(&mut *local.borrow_mut()));
        if !left.is_empty() {
            self.queue.push_remote(left);
        }
        RUNNING.with(|running| running.set(self.previous));
    }
}

// ANCHOR: task_waker
/// The data behind every `Waker` the executor hands out.
pub(crate) struct TaskWaker {
    task: TaskRef,
    /// Set while the id is in the run queue, so that ten wakes before the
    /// next poll queue the task once, not ten times.
    scheduled: AtomicBool,
    queue: Arc<RunQueue>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.scheduled.swap(true, Ordering::AcqRel) {
            trace!(target: "runtime", "wake task={}", self.task.id);
            // Recorded by the loop the task belongs to, when it is this
            // thread's: a task of another loop woken from here is that
            // loop's business (its poll shows a wake from another thread),
            // and its number means nothing to this loop's recording.
            if self.queue.is_running_here() {
                crate::recorder::record(|| crate::recorder::Event::Wake {
                    task: self.task.id,
                    by: crate::recorder::Actor::Outside,
                });
            }
            self.queue.push(self.task);
        }
    }
}
// ANCHOR_END: task_waker

impl TaskWaker {
    /// A waker for `task`, which starts out scheduled: a new task is
    /// already in the run queue.
    pub(crate) fn new(task: TaskRef, queue: Arc<RunQueue>) -> TaskWaker {
        TaskWaker {
            task,
            scheduled: AtomicBool::new(true),
            queue,
        }
    }

    /// Clears the scheduled flag just before a poll, so that a wake during the
    /// poll queues the task again. Returns whether it was set.
    pub(crate) fn take_scheduled(&self) -> bool {
        self.scheduled.swap(false, Ordering::AcqRel)
    }

    pub(crate) fn is_scheduled(&self) -> bool {
        self.scheduled.load(Ordering::Acquire)
    }

    /// Whether anything besides `this` (the task's own reference) holds
    /// this waker: for the lost-waker lint, after a `Pending` poll.
    pub(crate) fn is_held_elsewhere(this: &Arc<TaskWaker>) -> bool {
        Arc::strong_count(this) > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;

    /// What the loop would run next: one batch, taken as the loop takes it.
    fn batch(queue: &Arc<RunQueue>) -> Vec<TaskId> {
        let _running = queue.enter();
        let n = queue.start_batch();
        (0..n)
            .map_while(|_| queue.pop())
            .map(|task| task.id)
            .collect()
    }

    fn task(id: TaskId) -> TaskRef {
        TaskRef { id, slot: 0 }
    }

    fn queue() -> (mio::Poll, Arc<RunQueue>) {
        let poll = mio::Poll::new().unwrap();
        let waker = Arc::new(mio::Waker::new(poll.registry(), mio::Token(0)).unwrap());
        (poll, Arc::new(RunQueue::new(waker)))
    }

    #[test]
    fn many_wakes_queue_a_task_once() {
        let (_poll, queue) = queue();
        let task = Arc::new(TaskWaker::new(task(7), queue.clone()));
        assert!(task.take_scheduled());
        let waker = Waker::from(task.clone());
        waker.wake_by_ref();
        waker.wake_by_ref();
        let clone = waker.clone();
        clone.wake();
        assert_eq!(batch(&queue), [7]);
        assert!(task.take_scheduled());
        waker.wake();
        assert_eq!(batch(&queue), [7]);
    }

    #[test]
    fn a_wake_from_another_thread_pokes_a_sleeping_selector() {
        let (mut poll, queue) = queue();
        let task = Arc::new(TaskWaker::new(task(1), queue.clone()));
        task.take_scheduled();
        let waker = Waker::from(task);
        assert!(queue.may_sleep());
        std::thread::spawn(move || waker.wake()).join().unwrap();
        let mut events = mio::Events::with_capacity(4);
        // Returns as soon as the poke arrives; the limit only turns a missing
        // poke into a failure instead of a hang.
        poll.poll(&mut events, Some(std::time::Duration::from_secs(10)))
            .unwrap();
        assert_eq!(events.iter().next().map(|e| e.token()), Some(mio::Token(0)));
        queue.awake();
        assert_eq!(batch(&queue), [1]);
    }

    #[test]
    fn a_wake_from_another_thread_leaves_a_busy_loop_alone() {
        let (mut poll, queue) = queue();
        let task = Arc::new(TaskWaker::new(task(1), queue.clone()));
        task.take_scheduled();
        let waker = Waker::from(task);
        std::thread::spawn(move || waker.wake()).join().unwrap();
        // No poke, no system call: the loop takes the task at its next
        // batch, and will not sleep before it.
        let mut events = mio::Events::with_capacity(4);
        poll.poll(&mut events, Some(std::time::Duration::ZERO))
            .unwrap();
        assert!(events.is_empty());
        assert!(!queue.may_sleep());
        assert_eq!(batch(&queue), [1]);
    }
}
