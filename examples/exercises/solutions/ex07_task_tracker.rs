//! Exercise 07 ★★★: which tasks are waiting, and on what (reference
//! solution).
//!
//! Each tracked task is wrapped in a future that, around every poll, says
//! "task N is running" in a thread-local. `waiting_on` reads that
//! thread-local when its future returns `Pending` and records the label
//! against task N. The innermost label wins because it is recorded first,
//! and an outer one only fills an empty slot.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll};

use runtime::JoinHandle;

thread_local! {
    /// The tracked task being polled on this thread, if any.
    static CURRENT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Where a tracked task is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    /// Spawned, not polled yet.
    Scheduled,
    /// Being polled right now.
    Running,
    /// Its last poll returned `Pending`; the label of the innermost
    /// `waiting_on` that was pending, if any.
    Waiting(Option<String>),
    Finished,
    /// Dropped before it finished.
    Cancelled,
}

struct Entry {
    name: String,
    state: State,
}

type Table = Rc<RefCell<BTreeMap<u64, Entry>>>;

/// Spawns tasks with names and reports what each is doing. Cloning gives
/// another handle to the same table.
#[derive(Clone, Default)]
pub struct Tracker {
    table: Table,
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
        let id = Rc::new(Cell::new(None));
        let handle = runtime::spawn(Tracked {
            id: Rc::clone(&id),
            table: Rc::clone(&self.table),
            future: Box::pin(future),
            finished: false,
        });
        // The task has not run yet (it runs on the executor's next batch),
        // so it learns its id before its first poll.
        id.set(Some(handle.id()));
        self.table.borrow_mut().insert(
            handle.id(),
            Entry {
                name: name.to_string(),
                state: State::Scheduled,
            },
        );
        handle
    }

    /// Runs `future`; while it is pending, the task running it is reported
    /// as waiting on `what`. Inside another `waiting_on`, the inner label
    /// wins: it is the more precise.
    pub async fn waiting_on<F: Future>(&self, what: &str, future: F) -> F::Output {
        let mut future = pin!(future);
        poll_fn(|cx| {
            let poll = future.as_mut().poll(cx);
            if poll.is_pending()
                && let Some(id) = CURRENT.get()
                && let Some(entry) = self.table.borrow_mut().get_mut(&id)
                && entry.state == State::Running
            {
                entry.state = State::Waiting(Some(what.to_string()));
            }
            poll
        })
        .await
    }

    /// One line per tracked task, by id: `task ID NAME: STATE`, where the
    /// state is `scheduled`, `running`, `waiting on LABEL`, `waiting`,
    /// `finished` or `cancelled`.
    pub fn report(&self) -> String {
        let mut out = String::new();
        for (id, entry) in self.table.borrow().iter() {
            let state = match &entry.state {
                State::Scheduled => "scheduled".to_string(),
                State::Running => "running".to_string(),
                State::Waiting(Some(what)) => format!("waiting on {what}"),
                State::Waiting(None) => "waiting".to_string(),
                State::Finished => "finished".to_string(),
                State::Cancelled => "cancelled".to_string(),
            };
            let _ = writeln!(out, "task {id} {}: {state}", entry.name);
        }
        out
    }
}

/// A task's future, wrapped to keep its entry up to date.
struct Tracked<F: Future> {
    id: Rc<Cell<Option<u64>>>,
    table: Table,
    /// Boxed so that `Tracked` is `Unpin` whatever `F` is.
    future: Pin<Box<F>>,
    finished: bool,
}

impl<F: Future> Tracked<F> {
    fn set_state(&self, state: State) {
        if let Some(id) = self.id.get()
            && let Some(entry) = self.table.borrow_mut().get_mut(&id)
        {
            entry.state = state;
        }
    }
}

impl<F: Future> Future for Tracked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.set_state(State::Running);
        let outer = CURRENT.replace(self.id.get());
        let poll = self.future.as_mut().poll(cx);
        CURRENT.set(outer);
        match poll {
            Poll::Ready(output) => {
                self.finished = true;
                self.set_state(State::Finished);
                Poll::Ready(output)
            }
            Poll::Pending => {
                // No `waiting_on` claimed this poll: waiting, on we know not
                // what.
                if let Some(id) = self.id.get()
                    && let Some(entry) = self.table.borrow_mut().get_mut(&id)
                    && entry.state == State::Running
                {
                    entry.state = State::Waiting(None);
                }
                Poll::Pending
            }
        }
    }
}

impl<F: Future> Drop for Tracked<F> {
    fn drop(&mut self) {
        if !self.finished {
            // `try_borrow_mut`: dropped while someone reads the table (a
            // report that cancels?) we just leave the old state.
            if let Some(id) = self.id.get()
                && let Ok(mut table) = self.table.try_borrow_mut()
                && let Some(entry) = table.get_mut(&id)
            {
                entry.state = State::Cancelled;
            }
        }
    }
}
