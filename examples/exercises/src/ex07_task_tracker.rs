//! Exercise 07 ★★★: which tasks are waiting, and on what.
//!
//! When a crawl stalls, the first question is "who is waiting, and for
//! what?". `runtime::dump_tasks()` answers half of it: task ids and states.
//! A `Tracker` answers all of it. It spawns named tasks, and `waiting_on`
//! labels a future, so that a task stuck inside it is reported as
//! `waiting on LABEL`:
//!
//! ```text
//! task 1 fetch /fault/hang: waiting on read response
//! task 2 worker: waiting on queue get
//! task 4 quick: finished
//! ```
//!
//! Right now `spawn` tracks nothing and `report` is empty. Wrap each task's
//! future in one of your own that records its state around every poll, and
//! lets `waiting_on` find out which task is being polled (a thread-local
//! works: one thread runs every task). The line formats are in `report`'s
//! documentation.
//!
//! Read first: the book's "Building Coroutines With Futures", then
//! runtime/src/task.rs (`Task::step`, `TaskState`) and `dump_tasks` in
//! runtime/src/executor.rs.
//! Check: `cargo run -p exercises -- check 07`. Stuck: `... -- hint 07`.

use std::future::Future;

use runtime::JoinHandle;

/// Spawns tasks with names and reports what each is doing. Cloning gives
/// another handle to the same table.
#[derive(Clone, Default)]
pub struct Tracker {
    // TODO: a table shared by the tracker and its tasks' wrappers.
}

impl Tracker {
    pub fn new() -> Tracker {
        Tracker::default()
    }

    /// Spawns `future` as a task called `name`, and tracks it under the
    /// runtime's id for it (the id the trace log shows).
    pub fn spawn<F>(&self, name: &str, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
    {
        // TODO: wrap `future` so that each poll updates the task's entry.
        let _ = name;
        runtime::spawn(future)
    }

    /// Runs `future`; while it is pending, the task running it is reported
    /// as waiting on `what`. Inside another `waiting_on`, the inner label
    /// wins: it is the more precise.
    pub async fn waiting_on<F: Future>(&self, what: &str, future: F) -> F::Output {
        // TODO: note `what` against the current task whenever `future` is
        // pending.
        let _ = what;
        future.await
    }

    /// One line per tracked task, by id: `task ID NAME: STATE`, where the
    /// state is `scheduled` (not polled yet), `running` (being polled),
    /// `waiting on LABEL` (its last poll was pending inside
    /// `waiting_on(LABEL, ..)`), `waiting` (pending elsewhere), `finished`,
    /// or `cancelled` (dropped before it finished).
    pub fn report(&self) -> String {
        String::new() // TODO
    }
}
