//! Tasks: a future, the executor's handle on it, and the caller's
//! [`JoinHandle`].
//!
//! The chapter's `Task` wraps a coroutine and drives it with `step`: send the
//! last result in, run to the next `yield`, and ask the yielded future to call
//! `step` again when it resolves. Ours wraps a Rust future, and
//! [`Task::step`] polls it once. The future itself arranges the next step by
//! keeping the task's [`Waker`](std::task::Waker), see [`crate::waker`].

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use log::{error, trace};

use crate::recorder::{self, Event, Outcome, WarningKind};
use crate::task_id::TaskId;
use crate::waker::TaskWaker;

/// Where a task is in its life, as [`Runtime`](crate::Runtime)'s `Debug`
/// shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// In the run queue, to be polled on the next batch.
    Scheduled,
    /// Being polled right now (you are probably inside it in a debugger).
    Running,
    /// Returned `Pending`; waiting for something to call its waker.
    Waiting,
    /// Done: completed, cancelled or panicked.
    Finished,
}

/// Why a [`JoinHandle`] has no value to give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JoinError {
    /// [`JoinHandle::cancel`] dropped the future before it finished: our
    /// counterpart of asyncio's `CancelledError`.
    Cancelled,
    /// The future panicked; the panic message.
    Panicked(String),
    /// The handle was polled again after it had returned its value.
    PolledAfterCompletion,
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::Cancelled => write!(f, "task was cancelled"),
            JoinError::Panicked(msg) => write!(f, "task panicked: {msg}"),
            JoinError::PolledAfterCompletion => {
                write!(f, "join handle polled after it returned the task's result")
            }
        }
    }
}

impl std::error::Error for JoinError {}

/// What a waiting task waits on, for the task table: noted by the
/// runtime's futures as they return `Pending`, so a person asking "why is
/// this stuck?" sees where.
///
/// One value, not a list: a task often waits on two things at once (a
/// socket, and the timer of its `timeout`), and the table shows the one
/// that says more, the socket. Kept to 16 bytes, because every task
/// carries one (the micro-benchmarks count an idle task's bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum WaitsOn {
    /// Nothing noted (a future of the program's own, or a handoff from
    /// another thread).
    #[default]
    Unknown,
    /// A socket to become readable: its event-loop token.
    Readable(usize),
    /// A socket to become writable.
    Writable(usize),
    /// A timer, due at this time.
    Timer(std::time::Instant),
    /// An item from a [`Queue`](crate::Queue), or its `join`.
    Queue,
    /// Another task's end (its `JoinHandle`).
    Task(TaskId),
}

thread_local! {
    /// What the task being polled waits on, as its futures note it.
    static WAITS_ON: Cell<WaitsOn> = const { Cell::new(WaitsOn::Unknown) };
    /// How many more ready I/O operations the task being polled may do
    /// before it yields; `None` outside a task's poll.
    static BUDGET: Cell<Option<u32>> = const { Cell::new(None) };
    /// Whether a task spent its budget since the executor last asked.
    static BUDGET_SPENT: Cell<bool> = const { Cell::new(false) };
}

/// Ready I/O operations a task may do in one poll. A task that reads until
/// `WouldBlock` never returns while its peer keeps the socket full, and no
/// other task runs meanwhile: a budget, as tokio's cooperative scheduling
/// has, makes it yield now and then. 128 reads of 4 KiB is half a
/// megabyte, far more than any of our tasks takes in one poll unless a
/// peer floods it.
pub const POLL_BUDGET: u32 = 128;

/// Spends one unit of the polled task's budget on an I/O operation that is
/// ready. If it is spent, wakes the task (which then runs again after
/// every task that is ready now, and after the event loop has looked at
/// its sockets and timers: see [`take_budget_spent`]) and returns false:
/// the operation must return `Pending` instead.
#[inline]
pub(crate) fn spend_budget(cx: &Context<'_>) -> bool {
    BUDGET.with(|budget| match budget.get() {
        None => true,
        Some(0) => {
            BUDGET_SPENT.set(true);
            cx.waker().wake_by_ref();
            false
        }
        Some(left) => {
            budget.set(Some(left - 1));
            true
        }
    })
}

/// Whether a task spent its budget since the last call. The executor asks
/// after each batch, and if one did, looks at I/O and timers before the
/// next: a task that yields for its budget is ready again at once, and
/// running batch after batch of it (up to the executor's limit) would
/// keep a task woken by a timer or a socket waiting all that time. (A
/// snake player flooding the server with commands held the game loop's
/// tick for a second and more.)
pub(crate) fn take_budget_spent() -> bool {
    BUDGET_SPENT.replace(false)
}

/// Notes what the task being polled waits on: called by a future that
/// returns `Pending`. A timer is noted only if nothing else was; anything
/// else replaces a timer, but not another note.
#[inline]
pub(crate) fn note_wait(waits_on: WaitsOn) {
    WAITS_ON.with(|noted| match (noted.get(), waits_on) {
        (WaitsOn::Unknown, _) => noted.set(waits_on),
        (WaitsOn::Timer(_), WaitsOn::Timer(_)) => {}
        (WaitsOn::Timer(_), _) => noted.set(waits_on),
        _ => {}
    });
}

/// Who a task is, for a person reading a task dump, a trace or a
/// debugger: the name it was given, if any, and where it was spawned.
#[derive(Clone, Debug)]
pub(crate) struct Meta {
    pub(crate) name: Option<String>,
    pub(crate) spawned_at: &'static Location<'static>,
}

// ANCHOR: task
/// What the task holds: the future, and the waker of whoever awaits the
/// `JoinHandle`, until it finishes; then its outcome until the
/// `JoinHandle` takes it.
enum Stage<F: Future> {
    Running(Pin<Box<F>>, Option<Waker>),
    Finished(Result<F::Output, JoinError>),
    Taken,
}

/// A spawned future and everything the executor needs to drive it.
pub(crate) struct Task<F: Future> {
    id: TaskId,
    /// Shared with every `Waker` clone, so a wake can find the task's id.
    waker: Arc<TaskWaker>,
    stage: RefCell<Stage<F>>,
    state: Cell<TaskState>,
    /// Set when `cancel` is called from inside this task's own poll.
    cancel_requested: Cell<bool>,
    /// Its name and where it was spawned.
    meta: Meta,
    /// What it waited on when its last poll returned `Pending`.
    waits_on: Cell<WaitsOn>,
}
// ANCHOR_END: task

/// The executor's view of a task, with the output type erased so that tasks
/// of every type fit in one table.
pub(crate) trait Runnable {
    fn step(&self) -> Poll<()>;
    fn state(&self) -> TaskState;
    fn cancel(&self);
    fn meta(&self) -> &Meta;
    fn waits_on(&self) -> WaitsOn;
}

/// The `JoinHandle`'s view of a task: only its output type is known.
trait Joinable<T> {
    fn poll_join(&self, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>>;
    fn cancel(&self);
    fn id(&self) -> TaskId;
    fn is_finished(&self) -> bool;
}

impl<F: Future + 'static> Task<F> {
    #[inline]
    pub(crate) fn new(id: TaskId, future: F, waker: Arc<TaskWaker>, meta: Meta) -> Rc<Task<F>> {
        Rc::new(Task {
            id,
            waker,
            stage: RefCell::new(Stage::Running(Box::pin(future), None)),
            state: Cell::new(TaskState::Scheduled),
            cancel_requested: Cell::new(false),
            meta,
            waits_on: Cell::new(WaitsOn::Unknown),
        })
    }

    pub(crate) fn join_handle(self: &Rc<Self>) -> JoinHandle<F::Output> {
        JoinHandle { task: self.clone() }
    }

    /// Records a `Pending` poll, and checks that something can wake the
    /// task: the poll's own `waker` is dropped first, so any count left
    /// beyond the task's is a clone some future kept.
    fn record_pending(&self, waker: Waker) {
        if !recorder::is_on() {
            return;
        }
        recorder::record(|| Event::PollEnd {
            task: self.id,
            outcome: Outcome::Pending,
        });
        drop(waker);
        if !self.waker.is_scheduled() && !TaskWaker::is_held_elsewhere(&self.waker) {
            recorder::warn(WarningKind::LostWaker, self.id);
        }
    }

    fn finish(&self, outcome: Result<F::Output, JoinError>) {
        // Swap the future out first and drop it after the borrow ends: its
        // destructor may close sockets or even cancel other tasks.
        let old = std::mem::replace(&mut *self.stage.borrow_mut(), Stage::Finished(outcome));
        self.state.set(TaskState::Finished);
        if let Stage::Running(future, awaiter) = old {
            drop(future);
            if let Some(waker) = awaiter {
                waker.wake();
            }
        }
    }
}

impl<F: Future + 'static> Runnable for Task<F> {
    // ANCHOR: step
    /// Polls the future once: the chapter's `Task.step`. Returns `Ready` when
    /// the task is finished and the executor can forget it.
    fn step(&self) -> Poll<()> {
        // From here on, a wake puts us back in the queue, even one that
        // happens during this very poll.
        self.waker.take_scheduled();
        let waker = Waker::from(self.waker.clone());
        let mut cx = Context::from_waker(&waker);
        let poll = {
            let mut stage = self.stage.borrow_mut();
            let Stage::Running(future, _) = &mut *stage else {
                return Poll::Ready(()); // cancelled while it sat in the queue
            };
            self.state.set(TaskState::Running);
            recorder::record(|| Event::PollStart { task: self.id });
            WAITS_ON.set(WaitsOn::Unknown);
            BUDGET.set(Some(POLL_BUDGET));
            // A panic in one task must not take the loop and every other task
            // down with it; it becomes that task's result instead.
            let poll = panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)));
            BUDGET.set(None);
            poll
        };
        let outcome = match poll {
            Ok(Poll::Pending) if !self.cancel_requested.get() => {
                self.state.set(if self.waker.is_scheduled() {
                    TaskState::Scheduled
                } else {
                    TaskState::Waiting
                });
                trace!(target: "runtime", "poll task={} -> Pending", self.id);
                self.waits_on.set(WAITS_ON.get());
                self.record_pending(waker);
                return Poll::Pending;
            }
            Ok(Poll::Pending) => Err(JoinError::Cancelled),
            Ok(Poll::Ready(output)) => Ok(output),
            Err(payload) => Err(JoinError::Panicked(crate::future::panic_message(
                payload.as_ref(),
            ))),
        };
        let ended = match &outcome {
            Ok(_) => Outcome::Ready,
            Err(JoinError::Panicked(_)) => Outcome::Panicked,
            Err(_) => Outcome::Cancelled,
        };
        match &outcome {
            Ok(_) => trace!(target: "runtime", "poll task={} -> Ready", self.id),
            Err(JoinError::Panicked(msg)) => {
                error!(target: "runtime", "task {} panicked: {msg}", self.id)
            }
            Err(e) => trace!(target: "runtime", "poll task={} -> {e}", self.id),
        }
        // Part of the poll: dropping the future, and waking the awaiter.
        self.finish(outcome);
        recorder::record(|| Event::PollEnd {
            task: self.id,
            outcome: ended,
        });
        Poll::Ready(())
    }
    // ANCHOR_END: step

    fn state(&self) -> TaskState {
        match self.state.get() {
            // Woken since its last poll: it is back in the run queue.
            TaskState::Waiting if self.waker.is_scheduled() => TaskState::Scheduled,
            state => state,
        }
    }

    // ANCHOR: cancel
    fn cancel(&self) {
        if self.state.get() == TaskState::Finished {
            return;
        }
        if self.stage.try_borrow_mut().is_err() {
            // The task is cancelling itself from inside its own poll: `step`
            // drops the future when that poll returns.
            self.cancel_requested.set(true);
            return;
        }
        trace!(target: "runtime", "cancel task={}", self.id);
        recorder::record(|| Event::Cancelled { task: self.id });
        self.finish(Err(JoinError::Cancelled));
        // Let the executor step the task once more, see it finished, and
        // drop it from its table.
        Waker::from(self.waker.clone()).wake();
    }
    // ANCHOR_END: cancel

    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn waits_on(&self) -> WaitsOn {
        self.waits_on.get()
    }
}

impl<F: Future + 'static> Joinable<F::Output> for Task<F> {
    fn poll_join(&self, cx: &mut Context<'_>) -> Poll<Result<F::Output, JoinError>> {
        let Ok(mut stage) = self.stage.try_borrow_mut() else {
            // A task awaiting its own handle: it can never finish, and
            // nothing will wake it (the lost-waker lint says so).
            return Poll::Pending;
        };
        if let Stage::Running(_, awaiter) = &mut *stage {
            // The latest waker wins: whoever polled us last is waiting.
            *awaiter = Some(cx.waker().clone());
            note_wait(WaitsOn::Task(self.id));
            return Poll::Pending;
        }
        match std::mem::replace(&mut *stage, Stage::Taken) {
            Stage::Finished(outcome) => Poll::Ready(outcome),
            _ => Poll::Ready(Err(JoinError::PolledAfterCompletion)),
        }
    }

    fn cancel(&self) {
        Runnable::cancel(self);
    }

    fn id(&self) -> TaskId {
        self.id
    }

    fn is_finished(&self) -> bool {
        self.state.get() == TaskState::Finished
    }
}

/// A spawned task's result, once it has one. Await it for the result, or call
/// [`cancel`](JoinHandle::cancel). Dropping the handle lets the task run on
/// unobserved, as asyncio does with a task nobody awaits.
pub struct JoinHandle<T> {
    task: Rc<dyn Joinable<T>>,
}

impl<T> JoinHandle<T> {
    /// Drops the task's future now, closing whatever it owned (sockets,
    /// timers), and makes the handle resolve to [`JoinError::Cancelled`].
    /// Our `Task.cancel()`: there is no exception to throw into the
    /// coroutine, because dropping a future is how Rust stops it.
    pub fn cancel(&self) {
        self.task.cancel();
    }

    /// The task's id, as the trace log and the executor's `Debug` show it.
    pub fn id(&self) -> TaskId {
        self.task.id()
    }

    /// Whether the task has completed, been cancelled or panicked.
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.task.poll_join(cx)
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.task.id())
            .field("finished", &self.task.is_finished())
            .finish()
    }
}

// After the task's own impls, so that debuggers keep calling `step`
// `{impl#3}`, as the debugger appendix does.
impl Meta {
    /// A task spawned by the caller of the `#[track_caller]` function that
    /// calls this.
    #[inline]
    #[track_caller]
    pub(crate) fn here(name: Option<String>) -> Meta {
        Meta {
            name,
            spawned_at: Location::caller(),
        }
    }
}
