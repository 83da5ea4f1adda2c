//! Exercise 08 ★: cancel what you spawned (reference solution).
//!
//! Cancelling a task drops its future, and dropping a future drops
//! everything it owns, its sockets included. So the group's `Drop` only has
//! to cancel every task that has not finished.

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
        for handle in &self.handles {
            handle.cancel();
        }
    }
}

impl<T: 'static> Default for TaskGroup<T> {
    fn default() -> Self {
        TaskGroup::new()
    }
}

impl<T> Drop for TaskGroup<T> {
    fn drop(&mut self) {
        // `cancel` on a finished task does nothing, so no need to check.
        self.cancel_all();
    }
}
