//! A task sent to another loop, and its answer, in one allocation.
//!
//! What [`LoopHandle::spawn_with`](crate::LoopHandle::spawn_with) sends
//! through a loop's mailbox is a [`Job`]: the closure that makes the
//! future, and the slot its answer comes back in, behind one lock. The
//! [`RemoteJoin`] the caller keeps points at the same allocation, as
//! tokio's join handle points into its task. (Made of parts, a boxed
//! closure, a channel for the answer and its queue, the same spawn cost
//! about 1.2 times tokio's; see the bench's `loopspawn` row.)
//!
//! Every way a job can end answers its handle: the task's output, its
//! panic, or [`JoinError::Cancelled`] when the job is dropped unstarted
//! (its loop had stopped) or its task is dropped unfinished (its loop's
//! runtime went away).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::future::catch_unwind;
use crate::task::JoinError;

/// Where a job is.
enum Stage<M, T> {
    /// In a mailbox: the closure that makes the future.
    Sent(M),
    /// Its task is running.
    Started,
    /// Its answer, for the handle to take.
    Answered(Result<T, JoinError>),
    /// The handle took it.
    Taken,
}

struct State<M, T> {
    stage: Stage<M, T>,
    /// The task waiting on the handle.
    waker: Option<Waker>,
}

/// The one allocation: a job and its answer.
struct Cell<M, T> {
    state: Mutex<State<M, T>>,
}

/// What a job is to the loop that starts it.
trait Start: Send + Sync {
    /// Takes the closure out and spawns its future on this thread's loop,
    /// with `alive` kept until the task ends.
    fn start(self: Arc<Self>, alive: Alive);
    /// The job will never start.
    fn cancel(&self);
}

/// What a job is to its handle.
trait Answer<T>: Send + Sync {
    fn poll_answer(&self, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>>;
}

/// A job in a mailbox. Dropped unstarted, it answers its handle
/// [`JoinError::Cancelled`].
pub(crate) struct Job(Option<Arc<dyn Start>>);

/// The answer of a task spawned on another loop, as a future.
#[must_use = "the task runs either way; the handle is only its answer"]
pub struct RemoteJoin<T> {
    cell: Arc<dyn Answer<T>>,
}

/// A job of `make`, and the handle of its answer.
pub(crate) fn job<M, F>(make: M) -> (Job, RemoteJoin<F::Output>)
where
    M: FnOnce() -> F + Send + 'static,
    F: Future + 'static,
    F::Output: Send + 'static,
{
    let cell = Arc::new(Cell {
        state: Mutex::new(State {
            stage: Stage::Sent(make),
            waker: None,
        }),
    });
    let job = Job(Some(Arc::clone(&cell) as Arc<dyn Start>));
    (job, RemoteJoin { cell })
}

impl Job {
    /// Spawns the job's future on this thread's loop; `alive` is dropped
    /// when its task ends.
    pub(crate) fn start(mut self, alive: Alive) {
        if let Some(job) = self.0.take() {
            job.start(alive);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(job) = self.0.take() {
            job.cancel();
        }
    }
}

impl<M, T> Cell<M, T> {
    /// Puts the answer in and wakes the handle's task, unless an answer is
    /// there already.
    fn answer(&self, answer: Result<T, JoinError>) {
        let (waker, _before) = {
            let mut state = lock(&self.state);
            if matches!(state.stage, Stage::Answered(_) | Stage::Taken) {
                return;
            }
            let before = std::mem::replace(&mut state.stage, Stage::Answered(answer));
            (state.waker.take(), before)
        };
        // What the stage held (a closure never run, for a cancelled job) is
        // dropped after the lock: it may hold a handle whose drop takes
        // other locks.
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Answers `Cancelled` if the task is dropped before it answered.
struct Answering<M, T>(Arc<Cell<M, T>>);

impl<M, T> Drop for Answering<M, T> {
    fn drop(&mut self) {
        self.0.answer(Err(JoinError::Cancelled));
    }
}

impl<M, F> Start for Cell<M, F::Output>
where
    M: FnOnce() -> F + Send + 'static,
    F: Future + 'static,
    F::Output: Send + 'static,
{
    fn start(self: Arc<Self>, alive: Alive) {
        let make = match std::mem::replace(&mut lock(&self.state).stage, Stage::Started) {
            Stage::Sent(make) => make,
            _ => return,
        };
        let answering = Answering(self);
        crate::spawn(async move {
            // `make` runs inside the guard too: a panic there is the task's.
            let outcome = catch_unwind(async move { make().await })
                .await
                .map_err(JoinError::Panicked);
            answering.0.answer(outcome);
            drop(alive);
        });
    }

    fn cancel(&self) {
        self.answer(Err(JoinError::Cancelled));
    }
}

impl<M: Send, T: Send> Answer<T> for Cell<M, T> {
    fn poll_answer(&self, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>> {
        let mut state = lock(&self.state);
        match std::mem::replace(&mut state.stage, Stage::Taken) {
            Stage::Answered(answer) => Poll::Ready(answer),
            Stage::Taken => Poll::Ready(Err(JoinError::PolledAfterCompletion)),
            waiting => {
                state.stage = waiting;
                // Under the lock the answer is put in under: it cannot
                // come between our look and our waker.
                match &mut state.waker {
                    Some(waker) if waker.will_wake(cx.waker()) => {}
                    slot => *slot = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}

impl<T> Future for RemoteJoin<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>> {
        self.cell.poll_answer(cx)
    }
}

impl<T> fmt::Debug for RemoteJoin<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteJoin").finish_non_exhaustive()
    }
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job").finish_non_exhaustive()
    }
}

/// How many tasks a loop's mailbox started are still running, and the
/// waker of the loop's main task once it waits for them.
#[derive(Default)]
pub(crate) struct Live {
    running: std::cell::Cell<usize>,
    waiting: std::cell::RefCell<Option<Waker>>,
}

impl Live {
    /// Resolves when every task started through the mailbox has ended.
    pub(crate) async fn all_done(&self) {
        std::future::poll_fn(|cx| {
            if self.running.get() == 0 {
                return Poll::Ready(());
            }
            *self.waiting.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}

/// One running task of a mailbox's: dropped when the task ends or is
/// dropped with its loop.
pub(crate) struct Alive(Rc<Live>);

impl Alive {
    pub(crate) fn new(live: &Rc<Live>) -> Alive {
        live.running.set(live.running.get() + 1);
        Alive(Rc::clone(live))
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        let live = &self.0;
        live.running.set(live.running.get() - 1);
        if live.running.get() == 0
            && let Some(waker) = live.waiting.borrow_mut().take()
        {
            waker.wake();
        }
    }
}

/// A poisoned lock only means a task panicked while holding it; the stage
/// inside is still whole.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
