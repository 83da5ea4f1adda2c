//! The reactor: turns "this socket is ready" into "wake the task waiting on
//! it".
//!
//! In the chapter's coroutine crawler, `fetch` registers a callback with the
//! selector whose only job is to resolve a future:
//!
//! ```text
//! def on_connected():                # Python, for comparison
//!     f.set_result(None)
//! selector.register(sock.fileno(), EVENT_WRITE, on_connected)
//! ```
//!
//! [`Registration`] is that, generalised: one event-loop callback per socket
//! that records the readiness it saw and wakes whichever task is waiting to
//! read or to write. Four rules keep it from losing or inventing wakeups,
//! and each has a test:
//!
//! 1. **Register, then check.** A source is registered with the selector
//!    before the first read or write is tried, and a new registration starts
//!    out assuming the socket is ready. Data that arrived before registration
//!    is found by that first try; data that arrives after produces an event.
//! 2. **The latest waker wins.** A future may be polled by different tasks
//!    over its life (moved into a new task, or wrapped in `timeout`), so each
//!    `Pending` stores the waker it was just given, replacing the last.
//! 3. **Drain until `WouldBlock`, or a short read.** mio's events are
//!    edge-triggered: it reports a change, not a level. So readiness is
//!    cleared only when the socket is known to be drained: when an
//!    operation returns `WouldBlock`, or when a read from a stream socket
//!    returns fewer bytes than it asked for (but not none): the kernel
//!    hands a read all it holds, up to the buffer's size. (One exception:
//!    TCP's urgent data stops a read short with bytes behind it. No
//!    client of ours asks for it, and a server that sends it only delays
//!    the read until more data, or the read timeout, comes; tokio makes
//!    the same trade.) A read that fills its buffer leaves readiness set,
//!    and the next read goes straight to the socket.
//! 4. **Spurious events do no harm.** An event only sets readiness and wakes.
//!    If the socket turns out not to be ready, the operation sees
//!    `WouldBlock`, clears readiness and waits again.

use std::cell::{Cell, RefCell};
use std::io;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use log::trace;
use mio::event::Source;
use mio::{Interest, Token};

use crate::executor::{self, Inner};
use crate::readiness::Readiness;

/// Which half of a socket an operation uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Reading, or accepting a connection.
    Read,
    /// Writing, or finishing a connect.
    Write,
}

/// Readiness and waiting tasks for one socket, shared between the socket's
/// [`Registration`] and its event-loop callback.
#[derive(Default)]
struct IoState {
    /// The event-loop token, for the trace log.
    token: Cell<usize>,
    readable: Cell<bool>,
    writable: Cell<bool>,
    /// Whether an event has said that the peer closed its side, or that
    /// the socket failed. After that, something may be left to read after
    /// a short read (the end, or the error), and no other event will say
    /// so; so `poll_read` keeps readiness, at the cost of one more read.
    read_closed: Cell<bool>,
    reader: RefCell<Option<Waker>>,
    writer: RefCell<Option<Waker>>,
}

impl IoState {
    fn ready(&self, dir: Direction) -> &Cell<bool> {
        match dir {
            Direction::Read => &self.readable,
            Direction::Write => &self.writable,
        }
    }

    fn waiter(&self, dir: Direction) -> &RefCell<Option<Waker>> {
        match dir {
            Direction::Read => &self.reader,
            Direction::Write => &self.writer,
        }
    }

    // ANCHOR: on_event
    /// The event-loop callback: record what the event says, and wake whoever
    /// waits for it. An error or a hang-up counts as ready in both
    /// directions, so that the waiting operation runs and sees it.
    fn on_event(&self, r: Readiness) {
        if r.readable || r.read_closed || r.error {
            self.readable.set(true);
            self.read_closed
                .set(self.read_closed.get() || r.read_closed || r.error);
            self.wake(Direction::Read);
        }
        if r.writable || r.write_closed || r.error {
            self.writable.set(true);
            self.wake(Direction::Write);
        }
    }
    // ANCHOR_END: on_event

    fn wake(&self, dir: Direction) {
        if let Some(waker) = self.waiter(dir).borrow_mut().take() {
            trace!(target: "runtime", "reactor token={} {dir:?} ready: waking its task", self.token.get());
            waker.wake();
        }
    }
}

/// A source registered with the runtime's event loop, owned: a socket and
/// its membership go together, as in smol's `Async<T>`. Dropping it
/// deregisters the source, so no owner can forget to, and then closes it.
pub struct Registration<S: Source> {
    io: S,
    token: Token,
    state: Rc<IoState>,
    runtime: Rc<Inner>,
}

impl<S: Source> Registration<S> {
    /// Registers `io` for both reading and writing with the running
    /// runtime's event loop. Fails outside a runtime.
    pub fn new(mut io: S) -> io::Result<Registration<S>> {
        let runtime = executor::current().ok_or_else(executor::no_runtime)?;
        let state = Rc::new(IoState::default());
        // Rule 1: assume ready until a `WouldBlock` says otherwise.
        state.readable.set(true);
        state.writable.set(true);
        let callback_state = state.clone();
        let token = {
            let mut event_loop = runtime
                .event_loop
                .try_borrow_mut()
                .map_err(|_| event_loop_busy())?;
            // Edge-triggered readiness costs nothing while nobody waits, so
            // always ask for both directions.
            event_loop.register(
                &mut io,
                Interest::READABLE | Interest::WRITABLE,
                move |_, readiness| callback_state.on_event(readiness),
            )?
        };
        state.token.set(token.0);
        Ok(Registration {
            io,
            token,
            state,
            runtime,
        })
    }

    /// The source, for the calls that are not reads or writes
    /// (`peer_addr`, `set_nodelay`, ...).
    pub fn get_ref(&self) -> &S {
        &self.io
    }

    // ANCHOR: poll_io
    /// Tries `op` on the source when it may be ready for `dir`. On
    /// `WouldBlock` it clears readiness, stores the waker, and returns
    /// `Pending`; the next event for `dir` wakes the task to try again.
    pub fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        dir: Direction,
        mut op: impl FnMut(&S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        loop {
            if !self.state.ready(dir).get() {
                // Rule 2: the latest waker wins.
                *self.state.waiter(dir).borrow_mut() = Some(cx.waker().clone());
                crate::task::note_wait(match dir {
                    Direction::Read => crate::task::WaitsOn::Readable(self.token.0),
                    Direction::Write => crate::task::WaitsOn::Writable(self.token.0),
                });
                return Poll::Pending;
            }
            // Ready, but the task has done its share for this poll: it
            // yields, and is woken to come back (see `POLL_BUDGET`).
            if !crate::task::spend_budget(cx) {
                return Poll::Pending;
            }
            match op(&self.io) {
                // Rule 3: WouldBlock clears readiness (and so does a
                // short read, in `poll_read`).
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.state.ready(dir).set(false);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                result => return Poll::Ready(result),
            }
        }
    }
    // ANCHOR_END: poll_io

    // ANCHOR: poll_read
    /// [`poll_io`](Self::poll_io) for a read of at most `len` bytes from a
    /// stream socket (TCP, or a Unix stream). A read that returns fewer
    /// bytes than it asked for took all the kernel had, so readiness is
    /// cleared then and there (rule 3): the next read waits for the event
    /// that new data brings, instead of spending a system call to hear
    /// `WouldBlock`. Tokio does the same on epoll and kqueue. Not once the
    /// peer has closed: the end came in an event already (perhaps the
    /// same one as the data), and no other will come for it, so the next
    /// read must go and find it.
    ///
    /// Crate-private: the caller must pass the length of the buffer that
    /// `op` reads into, and only a stream socket keeps the promise above
    /// (a datagram socket, or a Unix socket passing descriptors, can read
    /// short with more queued). [`TcpStream`](crate::TcpStream) is the
    /// one caller.
    pub(crate) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        op: impl FnMut(&S) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        let poll = self.poll_io(cx, Direction::Read, op);
        if let Poll::Ready(Ok(n)) = poll
            && 0 < n
            && n < len
            && !self.state.read_closed.get()
        {
            self.state.readable.set(false);
        }
        poll
    }
    // ANCHOR_END: poll_read

    /// The event-loop token, as the trace log shows it.
    pub fn token(&self) -> Token {
        self.token
    }

    /// Feeds an event to this registration as if the selector had reported
    /// it, to make spurious events on demand. Only for tests and the
    /// spurious-events lesson: the `test-hooks` feature.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn simulate_event(&self, readiness: Readiness) {
        self.state.on_event(readiness);
    }
}

// ANCHOR: registration_drop
impl<S: Source> Drop for Registration<S> {
    /// Removes the source from the event loop; then the source itself is
    /// dropped, which closes it. Errors are ignored: a closed socket leaves
    /// the selector anyway.
    fn drop(&mut self) {
        match self.runtime.event_loop.try_borrow_mut() {
            Ok(mut event_loop) => {
                let _ = event_loop.unregister(&mut self.io, self.token);
            }
            // Dropped while the loop is busy (from inside one of its
            // callbacks): the loop forgets the callback after the current
            // turn instead, so none is left behind.
            Err(_) => self.runtime.forget_after_turn(self.token),
        }
        self.state.reader.borrow_mut().take();
        self.state.writer.borrow_mut().take();
    }
}
// ANCHOR_END: registration_drop

impl<S: Source> std::fmt::Debug for Registration<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("token", &self.token.0)
            .field("readable", &self.state.readable.get())
            .field("writable", &self.state.writable.get())
            .finish()
    }
}

fn event_loop_busy() -> io::Error {
    io::Error::other("cannot register a socket from inside an event-loop callback")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Runtime;
    use std::future::poll_fn;
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct CountingWaker(AtomicUsize);
    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting() -> (Arc<CountingWaker>, Waker) {
        let w = Arc::new(CountingWaker(AtomicUsize::new(0)));
        (w.clone(), Waker::from(w))
    }

    fn read_op(buf: &mut [u8]) -> impl FnMut(&mio::net::UnixStream) -> io::Result<usize> + '_ {
        move |s| (&*s).read(buf)
    }

    #[test]
    fn latest_waker_wins_and_spurious_events_are_harmless() {
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let (a, mut b) = mio::net::UnixStream::pair().unwrap();
            let reg = Registration::new(a).unwrap();
            let (first, first_waker) = counting();
            let (second, second_waker) = counting();
            let mut buf = [0u8; 4];
            // Nothing to read: WouldBlock clears readiness, the waker is kept.
            let poll = reg.poll_io(
                &mut Context::from_waker(&first_waker),
                Direction::Read,
                read_op(&mut buf),
            );
            assert!(poll.is_pending());
            let poll = reg.poll_io(
                &mut Context::from_waker(&second_waker),
                Direction::Read,
                read_op(&mut buf),
            );
            assert!(poll.is_pending());
            // A spurious event wakes only the latest waiter...
            reg.simulate_event(Readiness {
                readable: true,
                ..Readiness::default()
            });
            assert_eq!(first.0.load(Ordering::SeqCst), 0);
            assert_eq!(second.0.load(Ordering::SeqCst), 1);
            // ...who finds nothing there and waits again, unharmed.
            let poll = reg.poll_io(
                &mut Context::from_waker(&second_waker),
                Direction::Read,
                read_op(&mut buf),
            );
            assert!(poll.is_pending());
            b.write_all(b"ping").unwrap();
            // The real event arrives through the event loop and wakes us.
            poll_fn(|cx| {
                reg.poll_io(cx, Direction::Read, read_op(&mut buf))
                    .map(|r| assert_eq!(r.unwrap(), 4))
            })
            .await;
            assert_eq!(&buf, b"ping");
        })
        .unwrap();
    }

    #[test]
    fn a_task_whose_socket_is_always_ready_still_lets_others_run() {
        // A read that always succeeds is a peer that keeps the socket full:
        // without a budget the reader would never return `Pending`, and the
        // other task would run only after all its reads.
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let (a, _b) = mio::net::UnixStream::pair().unwrap();
            let reg = std::rc::Rc::new(Registration::new(a).unwrap());
            reg.simulate_event(Readiness {
                readable: true,
                ..Readiness::default()
            });
            let other_ran = std::rc::Rc::new(Cell::new(false));
            let reader = {
                let (reg, other_ran) = (reg.clone(), other_ran.clone());
                crate::spawn(async move {
                    let mut reads = 0;
                    while !other_ran.get() && reads < 10 * crate::task::POLL_BUDGET {
                        let _: io::Result<usize> =
                            poll_fn(|cx| reg.poll_io(cx, Direction::Read, |_| Ok(1))).await;
                        reads += 1;
                    }
                    reads
                })
            };
            let other = {
                let other_ran = other_ran.clone();
                crate::spawn(async move { other_ran.set(true) })
            };
            let reads = reader.await.unwrap();
            other.await.unwrap();
            // POLL_BUDGET reads, then a yield, in which the other task ran;
            // the read that yielded completes when the reader is back.
            assert_eq!(reads, crate::task::POLL_BUDGET + 1);
        })
        .unwrap();
    }

    #[test]
    fn a_task_that_spends_its_budget_lets_the_loop_wake_the_others_before_it_runs_again() {
        // The reader's socket is always ready. The other task waits for an
        // event the loop has not seen yet (bytes the reader writes on its
        // first read): the loop must look at I/O as soon as the reader has
        // spent one budget, not after its limit of batches of the reader.
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let (a, _b) = mio::net::UnixStream::pair().unwrap();
            let (c, d) = std::os::unix::net::UnixStream::pair().unwrap();
            c.set_nonblocking(true).unwrap();
            let reg = std::rc::Rc::new(Registration::new(a).unwrap());
            reg.simulate_event(Readiness {
                readable: true,
                ..Readiness::default()
            });
            let other_ran = std::rc::Rc::new(Cell::new(false));
            let other = {
                let other_ran = other_ran.clone();
                crate::spawn(async move {
                    let waiting = Registration::new(mio::net::UnixStream::from_std(c)).unwrap();
                    let mut byte = [0u8; 1];
                    poll_fn(|cx| waiting.poll_io(cx, Direction::Read, |s| (&*s).read(&mut byte)))
                        .await
                        .unwrap();
                    other_ran.set(true);
                })
            };
            let reader = {
                let (reg, other_ran) = (reg.clone(), other_ran.clone());
                crate::spawn(async move {
                    let mut reads = 0;
                    let mut d = Some(d);
                    while !other_ran.get() && reads < 100 * crate::task::POLL_BUDGET {
                        let _: io::Result<usize> =
                            poll_fn(|cx| reg.poll_io(cx, Direction::Read, |_| Ok(1))).await;
                        if let Some(mut d) = d.take() {
                            std::io::Write::write_all(&mut d, b"!").unwrap();
                        }
                        reads += 1;
                    }
                    reads
                })
            };
            let reads = reader.await.unwrap();
            other.await.unwrap();
            // A budget; a yield, in which the loop saw the byte and woke
            // the other task, queued behind the reader; the reader's
            // second budget, then the other task; the read that yielded.
            // (Before the loop looked at I/O after a spent budget, the
            // reader ran its 64 batches first: 8,321 reads.)
            assert_eq!(reads, 2 * crate::task::POLL_BUDGET + 1);
        })
        .unwrap();
    }

    /// A read into `buf` that counts its system calls in `calls`.
    fn counted_read<'a>(
        calls: &'a Cell<usize>,
        buf: &'a mut [u8],
    ) -> impl FnMut(&mio::net::UnixStream) -> io::Result<usize> + 'a {
        move |s| {
            calls.set(calls.get() + 1);
            (&*s).read(buf)
        }
    }

    #[test]
    fn a_short_read_clears_readiness_and_the_next_waits_without_a_system_call() {
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let (a, mut b) = mio::net::UnixStream::pair().unwrap();
            let reg = Registration::new(a).unwrap();
            let calls = Cell::new(0);
            let mut buf = [0u8; 8];
            let mut read = counted_read(&calls, &mut buf);
            b.write_all(b"abc").unwrap();
            let (_, waker) = counting();
            let mut cx = Context::from_waker(&waker);
            let poll = reg.poll_read(&mut cx, 8, &mut read);
            assert!(matches!(poll, Poll::Ready(Ok(3))), "{poll:?}");
            assert!(!reg.state.readable.get());
            // Nothing is tried: the task waits for the next event.
            assert!(reg.poll_read(&mut cx, 8, &mut read).is_pending());
            assert_eq!(calls.get(), 1);
            // New data brings an event, which wakes the task.
            b.write_all(b"defghijkl").unwrap();
            poll_fn(|cx| {
                reg.poll_read(cx, 8, &mut read)
                    .map(|r| assert_eq!(r.unwrap(), 8))
            })
            .await;
            // A full buffer leaves readiness set: the rest is read at once.
            assert!(reg.state.readable.get());
            let poll = reg.poll_read(&mut cx, 8, &mut read);
            assert!(matches!(poll, Poll::Ready(Ok(1))), "{poll:?}");
            assert_eq!(calls.get(), 3);
            // A close after the short read comes in an event of its own.
            drop(b);
            poll_fn(|cx| {
                reg.poll_read(cx, 8, &mut read)
                    .map(|r| assert_eq!(r.unwrap(), 0))
            })
            .await;
            assert_eq!(calls.get(), 4);
        })
        .unwrap();
    }

    #[test]
    fn a_short_read_after_the_peer_closed_keeps_readiness_for_the_end() {
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let (a, mut b) = mio::net::UnixStream::pair().unwrap();
            let reg = Registration::new(a).unwrap();
            let calls = Cell::new(0);
            let mut buf = [0u8; 8];
            let mut read = counted_read(&calls, &mut buf);
            let (woken, waker) = counting();
            let mut cx = Context::from_waker(&waker);
            assert!(reg.poll_read(&mut cx, 8, &mut read).is_pending());
            // The data and the end arrive together, in one event: no
            // further event will come for the end.
            b.write_all(b"xyz").unwrap();
            drop(b);
            crate::yield_now().await; // the loop turns and delivers it
            assert_eq!(woken.0.load(Ordering::SeqCst), 1);
            let poll = reg.poll_read(&mut cx, 8, &mut read);
            assert!(matches!(poll, Poll::Ready(Ok(3))), "{poll:?}");
            // So the short read leaves readiness set, and the end is read
            // at once rather than waited for forever.
            let poll = reg.poll_read(&mut cx, 8, &mut read);
            assert!(matches!(poll, Poll::Ready(Ok(0))), "{poll:?}");
            let poll = reg.poll_read(&mut cx, 8, &mut read);
            assert!(matches!(poll, Poll::Ready(Ok(0))), "{poll:?}");
            assert_eq!(calls.get(), 4);
        })
        .unwrap();
    }

    #[test]
    fn full_reads_keep_readiness_until_would_block() {
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let (a, mut b) = mio::net::UnixStream::pair().unwrap();
            let reg = Registration::new(a).unwrap();
            b.write_all(b"abcdef").unwrap();
            let (_, waker) = counting();
            let mut cx = Context::from_waker(&waker);
            let mut got = Vec::new();
            // Two-byte reads that fill their buffer, with no event in
            // between: readiness stays set, because no read has returned
            // WouldBlock or less than it asked for.
            for _ in 0..3 {
                let mut buf = [0u8; 2];
                match reg.poll_io(&mut cx, Direction::Read, read_op(&mut buf)) {
                    Poll::Ready(Ok(n)) => got.extend_from_slice(&buf[..n]),
                    other => panic!("expected data, got {other:?}"),
                }
            }
            assert_eq!(got, b"abcdef");
            let mut buf = [0u8; 2];
            assert!(
                reg.poll_io(&mut cx, Direction::Read, read_op(&mut buf))
                    .is_pending()
            );
            assert!(!reg.state.readable.get());
        })
        .unwrap();
    }

    #[test]
    fn registering_outside_a_runtime_is_an_error() {
        let (a, _b) = mio::net::UnixStream::pair().unwrap();
        let err = Registration::new(a).err().unwrap();
        assert!(err.to_string().contains("no runtime"), "{err}");
    }

    #[test]
    fn dropping_deregisters_even_while_the_loop_is_busy() {
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let inner = executor::current().unwrap();
            let registered = || inner.event_loop.borrow().registered();
            let (a, _b) = mio::net::UnixStream::pair().unwrap();
            drop(Registration::new(a).unwrap());
            assert_eq!(registered(), 0);
            // As if from inside an event-loop callback: the loop is borrowed.
            let (a, _b) = mio::net::UnixStream::pair().unwrap();
            let reg = Registration::new(a).unwrap();
            let busy = inner.event_loop.borrow_mut();
            drop(reg);
            drop(busy);
            assert_eq!(registered(), 1);
            // The next turn of the loop forgets it.
            crate::future::yield_now().await;
            assert_eq!(registered(), 0);
        })
        .unwrap();
    }
}
