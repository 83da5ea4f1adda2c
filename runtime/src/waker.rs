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

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Wake;

use log::trace;

/// Identifies a task for as long as the runtime lives. Never reused.
pub type TaskId = u64;

/// The ids of tasks that are ready to be polled, in the order they woke.
///
/// A `Waker` must be `Send + Sync`: the standard library lets any thread call
/// `wake()`. So the queue sits behind a mutex, and a wake from another thread
/// also pokes the loop's `mio::Waker`, in case the loop is asleep in `poll`.
pub(crate) struct RunQueue {
    ready: Mutex<VecDeque<TaskId>>,
    loop_waker: Arc<mio::Waker>,
}

thread_local! {
    /// The run queue of the loop running on this thread, if any. Compared by
    /// address only, to tell a wake on the loop thread from one elsewhere.
    static RUNNING: std::cell::Cell<*const RunQueue> = const { std::cell::Cell::new(std::ptr::null()) };
}

impl RunQueue {
    pub(crate) fn new(loop_waker: Arc<mio::Waker>) -> RunQueue {
        RunQueue {
            ready: Mutex::new(VecDeque::new()),
            loop_waker,
        }
    }

    fn push(self: &Arc<Self>, id: TaskId) {
        // A panic while holding this lock cannot leave the deque half-made,
        // so a poisoned lock is still good to use.
        self.ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(id);
        if !self.is_running_here() {
            trace!(target: "runtime", "wake task={id} from another thread: poking the loop");
            // If this fails the loop's selector is gone, and there is no one
            // left to wake.
            let _ = self.loop_waker.wake();
        }
    }

    /// Moves every id queued so far into `batch`, which must be empty. Tasks
    /// woken while these run go into the next batch. Swapping, rather than
    /// taking, keeps both deques' allocations for reuse.
    pub(crate) fn take_batch(&self, batch: &mut VecDeque<TaskId>) {
        debug_assert!(batch.is_empty());
        std::mem::swap(
            &mut *self.ready.lock().unwrap_or_else(PoisonError::into_inner),
            batch,
        );
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    fn is_running_here(self: &Arc<Self>) -> bool {
        RUNNING.with(|running| std::ptr::eq(running.get(), Arc::as_ptr(self)))
    }

    /// Marks this queue as the one whose loop runs on this thread, until the
    /// returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> RunningGuard {
        let previous = RUNNING.with(|running| running.replace(Arc::as_ptr(self)));
        RunningGuard { previous }
    }
}

pub(crate) struct RunningGuard {
    previous: *const RunQueue,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        RUNNING.with(|running| running.set(self.previous));
    }
}

// ANCHOR: task_waker
/// The data behind every `Waker` the executor hands out.
pub(crate) struct TaskWaker {
    id: TaskId,
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
            trace!(target: "runtime", "wake task={}", self.id);
            crate::recorder::record(|| crate::recorder::Event::Wake {
                task: self.id,
                by: crate::recorder::Actor::Outside,
            });
            self.queue.push(self.id);
        }
    }
}
// ANCHOR_END: task_waker

impl TaskWaker {
    /// A waker for task `id`, which starts out scheduled: a new task is
    /// already in the run queue.
    pub(crate) fn new(id: TaskId, queue: Arc<RunQueue>) -> TaskWaker {
        TaskWaker {
            id,
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

    fn queue() -> (mio::Poll, Arc<RunQueue>) {
        let poll = mio::Poll::new().unwrap();
        let waker = Arc::new(mio::Waker::new(poll.registry(), mio::Token(0)).unwrap());
        (poll, Arc::new(RunQueue::new(waker)))
    }

    #[test]
    fn many_wakes_queue_a_task_once() {
        let (_poll, queue) = queue();
        let task = Arc::new(TaskWaker::new(7, queue.clone()));
        assert!(task.take_scheduled());
        let waker = Waker::from(task.clone());
        waker.wake_by_ref();
        waker.wake_by_ref();
        let clone = waker.clone();
        clone.wake();
        let mut batch = VecDeque::new();
        queue.take_batch(&mut batch);
        assert_eq!(batch, [7]);
        batch.clear();
        assert!(task.take_scheduled());
        waker.wake();
        queue.take_batch(&mut batch);
        assert_eq!(batch, [7]);
    }

    #[test]
    fn a_wake_from_another_thread_pokes_the_selector() {
        let (mut poll, queue) = queue();
        let task = Arc::new(TaskWaker::new(1, queue.clone()));
        task.take_scheduled();
        let waker = Waker::from(task);
        std::thread::spawn(move || waker.wake()).join().unwrap();
        let mut events = mio::Events::with_capacity(4);
        // Returns as soon as the poke arrives; the limit only turns a missing
        // poke into a failure instead of a hang.
        poll.poll(&mut events, Some(std::time::Duration::from_secs(10)))
            .unwrap();
        assert_eq!(events.iter().next().map(|e| e.token()), Some(mio::Token(0)));
        let mut batch = VecDeque::new();
        queue.take_batch(&mut batch);
        assert_eq!(batch, [1]);
    }
}
