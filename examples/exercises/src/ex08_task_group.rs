//! Exercise 08 ★: cancel what you spawned.
//!
//! A `JoinHandle` that is dropped lets its task run on, unobserved, as
//! asyncio does. That is how a function that spawns helpers and then
//! returns early (an error, a timeout) leaks them, with their sockets. A
//! `TaskGroup` ties its tasks to its own lifetime: when the group is
//! dropped, every task in it that is still running is cancelled.
//!
//! Write `cancel_all`, and an `impl Drop for TaskGroup<T>` that cancels
//! every unfinished task. The tests prove the point from the other end of
//! the wire: after the group is dropped, the server sees its connection
//! close.
//!
//! Read first: `JoinHandle::cancel` in runtime/src/task.rs, and the book's
//! "Building Coroutines With Futures" (cancelling is dropping the future).
//! Check: `cargo run -p exercises -- check 08`. Stuck: `... -- hint 08`.

use std::future::Future;

use runtime::{JoinError, JoinHandle};

/// Tasks that live no longer than the group: dropping the group cancels
/// every task in it that is still running.
pub struct TaskGroup<T> {
    handles: Vec<JoinHandle<T>>,
}

impl<T: 'static> TaskGroup<T> {
    pub fn new() -> TaskGroup<T> {
        TaskGroup {
            handles: Vec::new(),
        }
    }

    /// Spawns `future` as a task that belongs to the group.
    pub fn spawn(&mut self, future: impl Future<Output = T> + 'static) {
        self.handles.push(runtime::spawn(future));
    }

    /// Waits for every task and returns their results in spawn order.
    /// The handles stay in the group while it waits: if this future is
    /// dropped (a timeout around it), the group goes with it, and so do
    /// the tasks it was waiting for.
    pub async fn join_all(mut self) -> Vec<Result<T, JoinError>> {
        let mut results = Vec::with_capacity(self.handles.len());
        for handle in &mut self.handles {
            results.push(handle.await);
        }
        results
    }
}

// Not `T: 'static` here: `Drop` may not ask more of `T` than the struct
// does, and it calls `cancel_all`.
impl<T> TaskGroup<T> {
    /// How many tasks were spawned into the group.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// Cancels every task that has not finished. `join_all` then reports
    /// them as `Err(JoinError::Cancelled)`.
    pub fn cancel_all(&self) {
        todo!("cancel every task in the group")
    }
}

impl<T: 'static> Default for TaskGroup<T> {
    fn default() -> Self {
        TaskGroup::new()
    }
}

// TODO: impl<T> Drop for TaskGroup<T>
