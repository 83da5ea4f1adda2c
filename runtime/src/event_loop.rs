//! The event loop: the stage-1 layer, our `selectors.DefaultSelector` plus
//! callbacks.
//!
//! The chapter's first crawler asks the selector to call a function when a
//! socket becomes readable or writable:
//!
//! ```text
//! selector.register(sock.fileno(), EVENT_WRITE, connected)   # Python, for comparison
//! ```
//!
//! [`EventLoop::register`] is that call. A callback gets the loop itself, so
//! it can register, modify or unregister sources, start timers, or stop the
//! loop, just as the chapter's callbacks use the global `selector`.
//!
//! Two properties make the loop safe to build on:
//!
//! * **Tokens are never reused.** Each registration gets a fresh token, so an
//!   event that was already collected for a source that a previous callback in
//!   the same batch unregistered is dropped instead of reaching a stranger.
//! * **Readiness is a hint.** mio may report a source ready when a read would
//!   still block, or report it twice. Callbacks must treat `WouldBlock` as
//!   "not yet" and return; the loop calls them again on the next event.
//!
//! The executor in [`crate::executor`] is built on this same loop: its reactor
//! registers callbacks that wake tasks instead of running crawler code.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::{Clock, saturating_add};
use crate::id_map::IdMap;
use crate::readiness::Readiness;
use crate::recorder::{self, Actor, Event, Lints, Recording};

use log::trace;
use mio::event::Source;
use mio::{Events, Interest, Poll, Token};

/// A callback for an I/O source. It runs every time the source is reported
/// ready, until it is replaced by [`EventLoop::modify`] or removed by
/// [`EventLoop::unregister`].
pub type Callback = Box<dyn FnMut(&mut EventLoop, Readiness)>;

/// A callback for a timer. It runs at most once.
pub type TimerCallback = Box<dyn FnOnce(&mut EventLoop)>;

/// Names a timer so it can be cancelled. Ordered by deadline, then by the
/// order the timers were set, which is the order they fire in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId {
    deadline: Instant,
    seq: u64,
}

impl TimerId {
    /// When the timer fires.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }
}

/// The token reserved for the cross-thread [`mio::Waker`]. Registrations
/// count up from 1, so they never collide with it.
const WAKE_TOKEN: Token = Token(0);

// ANCHOR: event_loop_struct
/// A selector loop with callbacks, single-threaded.
pub struct EventLoop {
    poll: Poll,
    events: Events,
    /// This turn's events, copied out of `events` (see `turn`).
    ready: Vec<(Token, Readiness)>,
    /// Token -> the callback to run when that source is ready. `None` only
    /// while the callback itself is running (see `dispatch`).
    callbacks: IdMap<Token, Option<Callback>>,
    next_token: usize,
    /// Pending timers in firing order (see [`TimerId`]).
    timers: BTreeMap<TimerId, TimerCallback>,
    next_timer: u64,
    waker: Arc<mio::Waker>,
    stopped: bool,
    /// Where "now" comes from: the system, or a paused clock in tests.
    clock: Clock,
    /// The recording this loop started, finished when the loop is dropped.
    recording: Option<Recording>,
}
// ANCHOR_END: event_loop_struct

impl EventLoop {
    /// Creates the loop and its OS selector (epoll, kqueue, …).
    pub fn new() -> io::Result<EventLoop> {
        let poll = Poll::new()?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKE_TOKEN)?);
        Ok(EventLoop {
            poll,
            events: Events::with_capacity(1024),
            ready: Vec::new(),
            callbacks: IdMap::default(),
            next_token: WAKE_TOKEN.0 + 1,
            timers: BTreeMap::new(),
            next_timer: 0,
            waker,
            stopped: false,
            clock: Clock::System,
            recording: recorder::start_from_env(&Clock::System),
        })
    }

    /// Uses `clock` for timers from now on (a paused one, in tests).
    pub fn set_clock(&mut self, clock: Clock) {
        if let Some(recording) = &self.recording {
            recording.set_clock(clock.clone());
        }
        self.clock = clock;
    }

    /// Starts recording what this loop (and the runtime on it) does, with
    /// the default lints, until the loop is dropped. Replaces a recording
    /// the environment started (`RUNTIME_TRACE`), which is then not
    /// written.
    pub fn record(&mut self) -> Recording {
        self.record_with(Lints::default())
    }

    /// [`record`](Self::record), with these lint thresholds.
    pub fn record_with(&mut self, lints: Lints) -> Recording {
        if let Some(old) = self.recording.take() {
            old.discard();
        }
        let recording = recorder::start(self.clock.clone(), lints, None);
        self.recording = Some(recording.clone());
        recording
    }

    /// The time now, by the loop's clock.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    // ANCHOR: register
    /// Asks the OS to watch `source` for `interest`, and to run `callback`
    /// each time it is ready. Returns the token that names this registration.
    pub fn register<S>(
        &mut self,
        source: &mut S,
        interest: Interest,
        callback: impl FnMut(&mut EventLoop, Readiness) + 'static,
    ) -> io::Result<Token>
    where
        S: Source + ?Sized,
    {
        let token = Token(self.next_token);
        self.poll.registry().register(source, token, interest)?;
        self.next_token += 1;
        self.callbacks.insert(token, Some(Box::new(callback)));
        trace!(target: "runtime", "register token={} interest={interest:?}", token.0);
        recorder::record(|| Event::Register {
            token: token.0,
            by: Actor::Outside,
        });
        Ok(token)
    }
    // ANCHOR_END: register

    /// Changes what a registered source is watched for, and which callback
    /// runs. The chapter's `selector.unregister` + `selector.register` pair.
    pub fn modify<S>(
        &mut self,
        source: &mut S,
        token: Token,
        interest: Interest,
        callback: impl FnMut(&mut EventLoop, Readiness) + 'static,
    ) -> io::Result<()>
    where
        S: Source + ?Sized,
    {
        let Some(slot) = self.callbacks.get_mut(&token) else {
            return Err(not_registered(token));
        };
        self.poll.registry().reregister(source, token, interest)?;
        *slot = Some(Box::new(callback));
        trace!(target: "runtime", "modify token={} interest={interest:?}", token.0);
        Ok(())
    }

    /// Stops watching `source` and drops its callback. Events already
    /// collected for it in this turn are discarded.
    pub fn unregister<S>(&mut self, source: &mut S, token: Token) -> io::Result<()>
    where
        S: Source + ?Sized,
    {
        if self.callbacks.remove(&token).is_none() {
            return Err(not_registered(token));
        }
        trace!(target: "runtime", "unregister token={}", token.0);
        recorder::record(|| Event::Deregister {
            token: token.0,
            by: Actor::Outside,
        });
        self.poll.registry().deregister(source)
    }

    /// Drops the callback of a source that is already closed, without
    /// touching the selector: closing a socket removes it from the selector
    /// by itself. For a registration dropped while the loop was busy.
    pub fn forget(&mut self, token: Token) {
        if self.callbacks.remove(&token).is_some() {
            trace!(target: "runtime", "forget token={}", token.0);
            recorder::record(|| Event::Deregister {
                token: token.0,
                by: Actor::Outside,
            });
        }
    }

    // ANCHOR: timers
    /// Runs `callback` once, `delay` from now. The chapter has no timers, but
    /// a crawler without timeouts hangs on the first server that stops
    /// answering.
    pub fn call_later(
        &mut self,
        delay: Duration,
        callback: impl FnOnce(&mut EventLoop) + 'static,
    ) -> TimerId {
        self.call_at(saturating_add(self.now(), delay), callback)
    }

    /// Runs `callback` once, at or soon after `deadline`.
    pub fn call_at(
        &mut self,
        deadline: Instant,
        callback: impl FnOnce(&mut EventLoop) + 'static,
    ) -> TimerId {
        let id = TimerId {
            deadline,
            seq: self.next_timer,
        };
        self.next_timer += 1;
        self.timers.insert(id, Box::new(callback));
        trace!(target: "runtime", "timer set id={} in {:?}", id.seq, deadline.saturating_duration_since(self.now()));
        recorder::record(|| Event::TimerSet {
            timer: id.seq,
            after: deadline.saturating_duration_since(self.now()),
            by: Actor::Outside,
        });
        id
    }

    /// Cancels a timer that has not fired. Returns whether it was pending.
    pub fn cancel_timer(&mut self, id: TimerId) -> bool {
        let cancelled = self.timers.remove(&id).is_some();
        if cancelled {
            trace!(target: "runtime", "timer cancelled id={}", id.seq);
            recorder::record(|| Event::TimerCancelled {
                timer: id.seq,
                by: Actor::Outside,
            });
        }
        cancelled
    }
    // ANCHOR_END: timers

    /// Asks [`run`](Self::run) to return after the current turn.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether [`stop`](Self::stop) was called and `run` has not restarted.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// A handle another thread can use to interrupt a blocking
    /// [`turn`](Self::turn). The executor uses it for cross-thread wakes.
    pub fn waker(&self) -> Arc<mio::Waker> {
        Arc::clone(&self.waker)
    }

    /// How many sources are registered.
    pub fn registered(&self) -> usize {
        self.callbacks.len()
    }

    /// How many timers have not fired yet.
    pub fn pending_timers(&self) -> usize {
        self.timers.len()
    }

    /// The deadline of the next timer, if any.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.timers.keys().next().map(TimerId::deadline)
    }

    // ANCHOR: run
    /// Runs until a callback calls [`stop`](Self::stop), or until nothing is
    /// registered and no timer is pending, when no callback could ever run
    /// again. The chapter's `loop()`.
    pub fn run(&mut self) -> io::Result<()> {
        self.stopped = false;
        while !self.stopped && (!self.callbacks.is_empty() || !self.timers.is_empty()) {
            self.turn(None)?;
        }
        Ok(())
    }
    // ANCHOR_END: run

    // ANCHOR: turn
    /// One turn of the loop: wait for events (at most `max_wait`, and never
    /// past the next timer), run the callbacks of the ready sources, then run
    /// the timers that are due. Returns how many callbacks ran.
    pub fn turn(&mut self, max_wait: Option<Duration>) -> io::Result<usize> {
        let next_deadline = self.next_deadline();
        let mut wait = match (max_wait, next_deadline) {
            (wait, None) => wait,
            (wait, Some(deadline)) => {
                let until_timer = deadline.saturating_duration_since(self.now());
                Some(wait.map_or(until_timer, |w| w.min(until_timer)))
            }
        };
        // A paused clock never waits for a timer: it looks at I/O without
        // sleeping, and jumps to the deadline below if nothing happened.
        let jump_to =
            next_deadline.filter(|_| self.clock.is_paused() && wait != Some(Duration::ZERO));
        if jump_to.is_some() {
            wait = Some(Duration::ZERO);
        }
        trace!(
            target: "runtime",
            "loop turn: wait {} for {} sources, {} timers",
            wait.map_or("until an event".to_string(), |w| format!("up to {w:?}")),
            self.callbacks.len(),
            self.timers.len()
        );
        recorder::record(|| Event::WaitStart { timeout: wait });
        match self.poll.poll(&mut self.events, wait) {
            Ok(()) => {}
            // A signal arrived while we slept. Not an error: go round again.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => self.events.clear(),
            Err(e) => return Err(e),
        }
        if recorder::is_on() {
            self.record_wait_end();
        }
        // Copy the events out: callbacks need `&mut self`, and the buffer is
        // part of `self`. The copy's allocation is kept for the next turn.
        let mut ready = std::mem::take(&mut self.ready);
        ready.extend(
            self.events
                .iter()
                .filter(|event| event.token() != WAKE_TOKEN)
                .map(|event| (event.token(), Readiness::from_event(event))),
        );
        let mut ran = 0;
        for &(token, readiness) in &ready {
            if self.dispatch(token, readiness) {
                ran += 1;
            }
        }
        if let Some(deadline) = jump_to.filter(|_| ready.is_empty()) {
            self.clock.advance_to(deadline);
        }
        ready.clear();
        self.ready = ready;
        ran += self.fire_due_timers();
        Ok(ran)
    }
    // ANCHOR_END: turn

    // ANCHOR: dispatch
    /// Runs the callback registered for `token`, if it is still registered.
    /// Records the end of the selector's wait, and whether another thread
    /// poked the loop awake.
    fn record_wait_end(&self) {
        recorder::record(|| Event::WaitEnd {
            events: self.events.iter().count(),
        });
        if self.events.iter().any(|e| e.token() == WAKE_TOKEN) {
            recorder::record(|| Event::Poke);
        }
    }

    fn dispatch(&mut self, token: Token, readiness: Readiness) -> bool {
        // Take the callback out of its slot for the call: it needs `&mut
        // self`, and it may replace or remove its own registration.
        let Some(mut callback) = self.callbacks.get_mut(&token).and_then(Option::take) else {
            trace!(target: "runtime", "event for token={} dropped: no longer registered", token.0);
            return false;
        };
        trace!(target: "runtime", "event token={} {readiness:?}", token.0);
        recorder::record(|| Event::CallbackStart {
            token: token.0,
            readiness,
        });
        callback(self, readiness);
        recorder::record(|| Event::CallbackEnd { token: token.0 });
        // Put it back, unless the callback unregistered itself (no slot) or
        // installed a successor with `modify` (slot already filled).
        if let Some(slot @ None) = self.callbacks.get_mut(&token) {
            *slot = Some(callback);
        }
        true
    }
    // ANCHOR_END: dispatch

    fn fire_due_timers(&mut self) -> usize {
        if self.timers.is_empty() {
            return 0; // spare the clock read on the busiest path
        }
        let now = self.now();
        let mut fired = 0;
        // One at a time: a timer callback may set or cancel other timers.
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().deadline > now {
                break;
            }
            let (id, callback) = entry.remove_entry();
            trace!(target: "runtime", "timer fired id={}", id.seq);
            recorder::record(|| Event::TimerStart { timer: id.seq });
            callback(self);
            recorder::record(|| Event::TimerEnd { timer: id.seq });
            fired += 1;
        }
        fired
    }
}

impl fmt::Debug for EventLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut tokens: Vec<usize> = self.callbacks.keys().map(|t| t.0).collect();
        tokens.sort_unstable();
        f.debug_struct("EventLoop")
            .field("registered", &tokens)
            .field("timers", &self.timers.len())
            .field("stopped", &self.stopped)
            .finish()
    }
}

impl Drop for EventLoop {
    fn drop(&mut self) {
        // Writes the trace, if the environment asked for one.
        if let Some(recording) = self.recording.take() {
            recording.finish();
        }
    }
}

fn not_registered(token: Token) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("token {} is not registered with this event loop", token.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::io::{Read, Write};
    use std::rc::Rc;

    fn pair() -> (mio::net::UnixStream, mio::net::UnixStream) {
        mio::net::UnixStream::pair().unwrap()
    }

    #[test]
    fn callback_runs_when_readable_and_can_unregister_itself() {
        let mut el = EventLoop::new().unwrap();
        let (a, mut b) = pair();
        let a = Rc::new(RefCell::new(a));
        let got = Rc::new(RefCell::new(Vec::new()));
        let (a2, got2) = (a.clone(), got.clone());
        let token = Rc::new(Cell::new(Token(usize::MAX)));
        let token2 = token.clone();
        let t = el
            .register(&mut *a.borrow_mut(), Interest::READABLE, move |el, r| {
                assert!(r.readable);
                let mut buf = [0; 16];
                let n = a2.borrow_mut().read(&mut buf).unwrap();
                got2.borrow_mut().extend_from_slice(&buf[..n]);
                el.unregister(&mut *a2.borrow_mut(), token2.get()).unwrap();
            })
            .unwrap();
        token.set(t);
        b.write_all(b"hello").unwrap();
        el.run().unwrap();
        assert_eq!(&*got.borrow(), b"hello");
        assert_eq!(el.registered(), 0);
    }

    #[test]
    fn modify_replaces_the_callback() {
        let mut el = EventLoop::new().unwrap();
        let (a, _b) = pair();
        let a = Rc::new(RefCell::new(a));
        let calls = Rc::new(RefCell::new(Vec::new()));
        let (a2, calls2) = (a.clone(), calls.clone());
        let token = el
            .register(&mut *a.borrow_mut(), Interest::WRITABLE, move |el, _| {
                calls2.borrow_mut().push("first");
                let calls3 = calls2.clone();
                let a3 = a2.clone();
                let token = Token(1);
                el.modify(
                    &mut *a2.borrow_mut(),
                    token,
                    Interest::WRITABLE,
                    move |el, _| {
                        calls3.borrow_mut().push("second");
                        el.unregister(&mut *a3.borrow_mut(), token).unwrap();
                    },
                )
                .unwrap();
            })
            .unwrap();
        assert_eq!(token, Token(1));
        el.run().unwrap();
        assert_eq!(*calls.borrow(), ["first", "second"]);
    }

    #[test]
    fn events_for_unregistered_tokens_are_dropped() {
        let mut el = EventLoop::new().unwrap();
        assert!(!el.dispatch(Token(42), Readiness::default()));
        let (mut a, _b) = pair();
        let err = el.unregister(&mut a, Token(42)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains("token 42"));
    }

    #[test]
    fn repeated_readiness_is_harmless() {
        // A callback called twice with no data finds WouldBlock and returns.
        let mut el = EventLoop::new().unwrap();
        let (a, _b) = pair();
        let a = Rc::new(RefCell::new(a));
        let would_block = Rc::new(Cell::new(0));
        let (a2, wb) = (a.clone(), would_block.clone());
        let token = el
            .register(&mut *a.borrow_mut(), Interest::READABLE, move |_, _| {
                let mut buf = [0; 8];
                match a2.borrow_mut().read(&mut buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => wb.set(wb.get() + 1),
                    other => panic!("unexpected {other:?}"),
                }
            })
            .unwrap();
        let spurious = Readiness {
            readable: true,
            ..Readiness::default()
        };
        assert!(el.dispatch(token, spurious));
        assert!(el.dispatch(token, spurious));
        assert_eq!(would_block.get(), 2);
        assert_eq!(el.registered(), 1);
    }

    #[test]
    fn timers_fire_in_deadline_order_and_cancel() {
        let mut el = EventLoop::new().unwrap();
        let order = Rc::new(RefCell::new(Vec::new()));
        let now = Instant::now();
        for (name, ms) in [("c", 30), ("a", 10), ("b", 20), ("a2", 10)] {
            let order = order.clone();
            el.call_at(now + Duration::from_millis(ms), move |_| {
                order.borrow_mut().push(name)
            });
        }
        let order2 = order.clone();
        let id = el.call_at(now + Duration::from_millis(15), move |_| {
            order2.borrow_mut().push("cancelled")
        });
        assert!(el.cancel_timer(id));
        assert!(!el.cancel_timer(id));
        el.run().unwrap();
        assert_eq!(*order.borrow(), ["a", "a2", "b", "c"]);
        assert!(Instant::now() >= now + Duration::from_millis(30));
    }

    #[test]
    fn stop_ends_run_after_the_current_turn() {
        let mut el = EventLoop::new().unwrap();
        el.call_later(Duration::ZERO, |el| el.stop());
        let ran = Rc::new(Cell::new(false));
        let ran2 = ran.clone();
        // Too long for the clock: saturates to "never" rather than panicking.
        el.call_later(Duration::MAX, move |_| ran2.set(true));
        el.run().unwrap();
        assert!(el.is_stopped());
        assert!(!ran.get());
        assert_eq!(el.pending_timers(), 1);
    }
}
