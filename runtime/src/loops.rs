//! Several event loops, one per thread: how a runtime uses every core.
//!
//! Everything else in this crate is one loop on one thread, as asyncio is.
//! [`Loops`] starts N of them, each a whole [`Runtime`] of its own (its
//! selector, its run queue, its timers) that shares nothing with the others
//! by default: a thread per core, as glommio, monoio and Seastar build
//! theirs. Tokio's other answer, work stealing, lets an idle thread take
//! tasks from a busy one; it needs every task to be `Send` and every
//! structure a task touches to be shared, which is what Part I's `Rc` and
//! `RefCell` were spared. Here a task stays on the loop it started on, and
//! only what crosses between loops is `Send`.
//!
//! What crosses goes through one door per loop, its mailbox: an
//! [`mpsc`](crate::mpsc) channel of jobs, read by a task on the loop.
//! [`LoopHandle::spawn_with`] sends a closure that builds a future there
//! (the future itself need not be `Send`: it is made on the loop that runs
//! it); [`LoopHandle::spawn`] sends a `Send` future. Either way the job and
//! its answer are one allocation ([`crate::remote`]), and every wake
//! between loops is the run queue's `mio::Waker` handoff that blocking
//! threads already use.

use std::fmt;
use std::future::Future;
use std::io;
use std::rc::Rc;
use std::thread;

use crate::executor::Runtime;
use crate::mpsc;
use crate::remote::{self, Alive, Job, Live, RemoteJoin};

/// N event loops on N threads.
pub struct Loops {
    handles: Vec<LoopHandle>,
    threads: Vec<thread::JoinHandle<()>>,
}

/// A loop's address, for any thread: clone it, send it, spawn through it.
#[derive(Clone)]
pub struct LoopHandle {
    index: usize,
    jobs: mpsc::Sender<Job>,
}

impl Loops {
    /// Starts `n` loops (at least one), each on a thread of its own named
    /// `loop-I`. Fails if a thread or a selector cannot be made.
    pub fn start(n: usize) -> io::Result<Loops> {
        let mut loops = Loops {
            handles: Vec::new(),
            threads: Vec::new(),
        };
        for index in 0..n.max(1) {
            let (jobs, mailbox) = mpsc::channel::<Job>();
            let (ready_tx, ready_rx) = std::sync::mpsc::channel();
            let thread = thread::Builder::new()
                .name(format!("loop-{index}"))
                .spawn(move || run_loop(mailbox, ready_tx))?;
            // Each loop says whether its runtime started before the next
            // one is made: a failure is the caller's error, not a thread's
            // panic found at the end.
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(io::Error::other("a loop thread ended at its start")),
            }
            loops.handles.push(LoopHandle { index, jobs });
            loops.threads.push(thread);
        }
        Ok(loops)
    }

    /// How many loops there are.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Always false: there is at least one loop.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// Every loop's handle, loop 0 first.
    pub fn handles(&self) -> &[LoopHandle] {
        &self.handles
    }

    /// Closes every mailbox, waits for every task spawned through them to
    /// end, and then for the threads. (Dropped instead, the loops close
    /// their mailboxes the same way, and end when their tasks do, detached.)
    pub fn join(self) {
        let Loops { handles, threads } = self;
        drop(handles);
        for thread in threads {
            // A loop thread runs nothing of ours that can panic outside a
            // task; a task's panic is its join handle's error.
            let _ = thread.join();
        }
    }
}

impl fmt::Debug for Loops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loops").field("len", &self.len()).finish()
    }
}

impl LoopHandle {
    /// Which loop this is, from 0.
    pub fn index(&self) -> usize {
        self.index
    }

    // ANCHOR: spawn_with
    /// Runs the future that `make` builds as a task on this loop. `make`
    /// crosses threads; the future it builds never does, so it may hold
    /// `Rc`s and sockets of its loop. Fails with [`JoinError::Cancelled`]
    /// if the loop has stopped.
    pub fn spawn_with<M, F>(&self, make: M) -> RemoteJoin<F::Output>
    where
        M: FnOnce() -> F + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        let (job, answer) = remote::job(make);
        // A loop that has stopped drops the job unstarted: the handle then
        // says so.
        let _ = self.jobs.send(job);
        answer
    }
    // ANCHOR_END: spawn_with

    /// Runs `future` as a task on this loop.
    pub fn spawn<F>(&self, future: F) -> RemoteJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_with(move || future)
    }
}

impl fmt::Debug for LoopHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopHandle")
            .field("index", &self.index)
            .finish()
    }
}

/// Jobs a loop's mailbox starts before it lets the tasks they made run.
const JOBS_PER_TURN: usize = 64;

// ANCHOR: run_loop
/// A loop thread: a runtime whose main task reads the mailbox and starts
/// each job it finds; once every handle is gone, it waits for the tasks it
/// started, and ends.
fn run_loop(mut mailbox: mpsc::Receiver<Job>, ready: std::sync::mpsc::Sender<io::Result<()>>) {
    let runtime = match Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let live = Rc::new(Live::default());
    let mut ready = Some(ready);
    let _ = runtime.block_on(async {
        // Every job there, under one lock; started a few at a time, with
        // the loop's other tasks run between: a burst of a hundred thousand
        // spawns is never a hundred thousand tasks started before the
        // first one ran.
        let mut jobs = Vec::new();
        loop {
            let taken = std::future::poll_fn(|cx| {
                let polled = mailbox.poll_recv_many(cx, &mut jobs);
                // Said once the mailbox is watched: `start` returns loops
                // that are running, each ready for its first job.
                if let Some(ready) = ready.take() {
                    let _ = ready.send(Ok(()));
                }
                polled
            })
            .await;
            if taken == 0 {
                break;
            }
            let mut jobs = jobs.drain(..).peekable();
            while jobs.peek().is_some() {
                for job in jobs.by_ref().take(JOBS_PER_TURN) {
                    job.start(Alive::new(&live));
                }
                crate::yield_now().await;
            }
        }
        live.all_done().await;
    });
}
// ANCHOR_END: run_loop

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JoinError, run_until_complete};
    use std::cell::Cell;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_task_runs_on_the_loop_it_was_sent_to() {
        let loops = Loops::start(2).unwrap();
        let names = run_until_complete(async {
            let mut names = Vec::new();
            for handle in loops.handles() {
                let name = handle
                    .spawn(async { thread::current().name().map(String::from) })
                    .await
                    .unwrap();
                names.push(name.unwrap());
            }
            names
        })
        .unwrap();
        assert_eq!(names, ["loop-0", "loop-1"]);
        loops.join();
    }

    #[test]
    fn a_future_made_on_its_loop_may_hold_what_cannot_cross_threads() {
        let loops = Loops::start(1).unwrap();
        let got = run_until_complete(loops.handles()[0].spawn_with(|| {
            let here = Rc::new(Cell::new(20));
            async move {
                crate::yield_now().await;
                here.get() + 22
            }
        }))
        .unwrap();
        assert_eq!(got, Ok(42));
        loops.join();
    }

    fn explode() -> u8 {
        panic!("bad page")
    }

    #[test]
    fn a_panic_on_another_loop_is_its_handles_error_and_the_loop_goes_on() {
        let loops = Loops::start(1).unwrap();
        let handle = loops.handles()[0].clone();
        let (first, second) = run_until_complete(async move {
            let first = handle.spawn(async { explode() }).await;
            let second = handle.spawn(async { 7 }).await;
            (first, second)
        })
        .unwrap();
        assert_eq!(first, Err(JoinError::Panicked("bad page".into())));
        assert_eq!(second, Ok(7));
        loops.join();
    }

    #[test]
    fn a_panic_while_making_the_future_is_its_handles_error() {
        let loops = Loops::start(1).unwrap();
        let got = run_until_complete(
            loops.handles()[0].spawn_with(|| -> std::future::Ready<u8> { panic!("no future") }),
        )
        .unwrap();
        assert_eq!(got, Err(JoinError::Panicked("no future".into())));
        loops.join();
    }

    #[test]
    fn join_waits_for_every_task_the_loops_were_given() {
        let loops = Loops::start(2).unwrap();
        let ended = Arc::new(AtomicUsize::new(0));
        for i in 0..10 {
            let ended = Arc::clone(&ended);
            // Each waits for a message its sender sends only after the
            // handle is dropped: `join` must wait for all ten.
            let (tx, mut rx) = mpsc::channel::<()>();
            drop(loops.handles()[i % 2].spawn(async move {
                rx.recv().await;
                ended.fetch_add(1, Ordering::SeqCst);
            }));
            thread::spawn(move || tx.send(()).unwrap());
        }
        loops.join();
        assert_eq!(ended.load(Ordering::SeqCst), 10);
    }

    #[test]
    fn a_stopped_loop_cancels_what_is_sent_to_it() {
        let loops = Loops::start(1).unwrap();
        let handle = loops.handles()[0].clone();
        // `join` cannot return while a handle lives, so stop the loop by
        // hand: drop the mailbox's receiving end with its thread.
        let (jobs, mailbox) = mpsc::channel::<Job>();
        drop(mailbox);
        let dead = LoopHandle { index: 9, jobs };
        assert_eq!(
            run_until_complete(dead.spawn(async { 1 })).unwrap(),
            Err(JoinError::Cancelled)
        );
        drop(handle);
        loops.join();
    }
}
