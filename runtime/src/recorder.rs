//! The recorder: what the runtime did, as events with timestamps, and the
//! warnings a debug mode gives about the classic async bugs.
//!
//! The trace log (`RUST_LOG=runtime=trace`) says what happens in words; the
//! recorder keeps the same story as data, so that a program can draw it.
//! Every place in the runtime that does something worth seeing (spawn a
//! task, poll it, wake it, register a socket, run a callback, set or fire a
//! timer, wait in the selector) calls [`record`] with the event. When no
//! recording is on, that call reads one thread-local flag and returns: the
//! event is never even built.
//!
//! A recording is turned on in three ways:
//!
//! * `RUNTIME_TRACE=trace.json` in the environment: the first event loop
//!   made on a thread records, and writes the trace when it is dropped (a
//!   thread other than the main one, such as a loop of `Loops`, writes its
//!   own file, its name before the extension: `trace.loop-0.json`), as
//!   Chrome trace-event JSON (open it in <https://ui.perfetto.dev> or
//!   `chrome://tracing`; `cargo run -p timeline` draws it as an SVG);
//! * `RUNTIME_DEBUG=1`: the same recording, kept only for its warnings
//!   (`RUNTIME_SLOW_POLL_MS` changes what counts as slow);
//! * [`Runtime::record`](crate::Runtime::record) or
//!   [`EventLoop::record`](crate::EventLoop::record), from a test, which
//!   gets a [`Recording`] to read.
//!
//! The warnings, like asyncio's debug mode, each name the task and where it
//! was spawned:
//!
//! * **slow poll**: a poll (or a callback) kept the loop longer than a
//!   threshold (10 ms by default): a blocking call inside async code;
//! * **lost waker**: a task returned `Pending` and nothing holds its waker,
//!   so nothing can ever wake it: the classic hang;
//! * **busy self-wake**: a task woke itself on every poll, many polls in a
//!   row: it spins instead of waiting;
//! * **left behind**: a task was still pending when its runtime was
//!   dropped (asyncio's "Task was destroyed but it is pending!").

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io;
use std::panic::Location;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::readiness::Readiness;
use crate::task_id::TaskId;

/// One thing the runtime did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A task was created (`block_on`'s own future counts, as task 0).
    Spawn {
        /// The new task.
        task: TaskId,
        /// Its name, if it was given one.
        name: Option<String>,
        /// Where it was spawned.
        at: &'static Location<'static>,
        /// Who spawned it.
        by: Actor,
    },
    /// The executor began to poll `task`.
    PollStart {
        /// The task.
        task: TaskId,
    },
    /// The poll of `task` returned.
    PollEnd {
        /// The task.
        task: TaskId,
        /// What the poll returned.
        outcome: Outcome,
    },
    /// A task was cancelled while it was not running.
    Cancelled {
        /// The task.
        task: TaskId,
    },
    /// `task` was woken (put back on the run queue).
    Wake {
        /// The task woken.
        task: TaskId,
        /// Who woke it.
        by: Actor,
    },
    /// A source was registered with the selector.
    Register {
        /// Its token.
        token: usize,
        /// Who registered it.
        by: Actor,
    },
    /// A source was removed from the selector.
    Deregister {
        /// Its token.
        token: usize,
        /// Who removed it.
        by: Actor,
    },
    /// The loop began to wait in the selector.
    WaitStart {
        /// The longest it may wait (`None`: until an event).
        timeout: Option<Duration>,
    },
    /// The wait in the selector ended.
    WaitEnd {
        /// How many events it returned.
        events: usize,
    },
    /// Another thread poked the loop (a wake from off the loop thread).
    Poke,
    /// The loop began to run the callback of a ready source.
    CallbackStart {
        /// The source's token.
        token: usize,
        /// What the event said.
        readiness: Readiness,
    },
    /// The callback returned.
    CallbackEnd {
        /// The source's token.
        token: usize,
    },
    /// A timer was set.
    TimerSet {
        /// The timer's sequence number.
        timer: u64,
        /// How far in the future it is due.
        after: Duration,
        /// Who set it.
        by: Actor,
    },
    /// A timer was cancelled before it fired.
    TimerCancelled {
        /// The timer.
        timer: u64,
        /// Who cancelled it.
        by: Actor,
    },
    /// A due timer's callback began.
    TimerStart {
        /// The timer.
        timer: u64,
    },
    /// The timer's callback returned.
    TimerEnd {
        /// The timer.
        timer: u64,
    },
    /// A lint fired.
    Warning(Warning),
}

/// Who did something: the code that was running at the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Actor {
    /// A task's poll (task 0 is the main future).
    Task(TaskId),
    /// The callback of the source with this token (the reactor, for tasks).
    Io(usize),
    /// The callback of this timer.
    Timer(u64),
    /// Another thread (seen when the woken task is next polled).
    Thread,
    /// Code outside the loop: before `block_on`, or while a runtime drops.
    Outside,
}

/// What a poll returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not done: it will be polled again after a wake.
    Pending,
    /// Done.
    Ready,
    /// Cancelled during its own poll.
    Cancelled,
    /// It panicked.
    Panicked,
}

/// A warning about a likely bug, with who it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Which lint.
    pub kind: WarningKind,
    /// The task, or `None` for a callback of the bare event loop.
    pub task: Option<TaskId>,
    /// The task's name and where it was spawned, as `worker-2 (src/x.rs:10)`.
    pub who: String,
}

/// The lints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WarningKind {
    /// A poll or callback kept the loop for this long.
    SlowPoll(Duration),
    /// The task returned `Pending` and nothing holds its waker.
    LostWaker,
    /// The task woke itself on this many polls in a row.
    BusySelfWake(u32),
    /// The task was pending when its runtime was dropped.
    LeftBehind,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = &self.who;
        match &self.kind {
            WarningKind::SlowPoll(took) => write!(
                f,
                "slow poll: {who} kept the loop for {took:?}: a blocking call in async code?"
            ),
            WarningKind::LostWaker => write!(
                f,
                "lost waker: {who} returned Pending but nothing holds its waker, \
                 so nothing can wake it again"
            ),
            WarningKind::BusySelfWake(polls) => write!(
                f,
                "busy self-wake: {who} woke itself on {polls} polls in a row: \
                 it spins instead of waiting"
            ),
            WarningKind::LeftBehind => write!(
                f,
                "left behind: {who} was still pending when the runtime was dropped"
            ),
        }
    }
}

/// The lints' thresholds.
#[derive(Clone, Copy, Debug)]
pub struct Lints {
    /// A poll or callback longer than this is slow (asyncio's
    /// `slow_callback_duration` is 100 ms; a crawler's polls are far
    /// shorter, so ours is 10 ms).
    pub slow_poll: Duration,
    /// This many self-woken polls in a row is busy.
    pub busy_self_wakes: u32,
}

impl Default for Lints {
    fn default() -> Lints {
        Lints {
            slow_poll: Duration::from_millis(10),
            busy_self_wakes: 1000,
        }
    }
}

/// An event and when it happened, measured from the recording's start by
/// the loop's clock (so a paused clock gives logical times).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Time since the recording began.
    pub at: Duration,
    /// What happened.
    pub event: Event,
}

thread_local! {
    /// Whether a recording is on for this thread: the one check every
    /// hook makes.
    static ON: Cell<bool> = const { Cell::new(false) };
    static ACTIVE: RefCell<Option<Recording>> = const { RefCell::new(None) };
}

// ANCHOR: record
/// Records the event `make` builds, if a recording is on for this thread.
/// The closure runs only then, so a hook costs one flag check otherwise.
#[inline]
pub(crate) fn record(make: impl FnOnce() -> Event) {
    if ON.with(Cell::get) {
        let active = ACTIVE.with_borrow(Option::clone);
        if let Some(recording) = active {
            recording.push(make());
        }
    }
}
// ANCHOR_END: record

/// Whether a recording is on for this thread (for checks that cost
/// something, such as the lost-waker count).
#[inline]
pub(crate) fn is_on() -> bool {
    ON.with(Cell::get)
}

/// A recording in progress, or finished: a handle to read its events and
/// warnings. Cheap to clone; all clones share one log.
#[derive(Clone)]
pub struct Recording(Rc<RefCell<Log>>);

struct Log {
    clock: Clock,
    start: Instant,
    lints: Lints,
    records: Vec<Record>,
    /// Who is running now, innermost last.
    acting: Vec<Actor>,
    /// When the poll in progress began.
    polling: Option<Duration>,
    /// When the callback or timer in progress began.
    calling: Option<Duration>,
    /// Tasks woken since their last poll, to tell a poll caused by a wake
    /// from another thread (which could not be recorded) from the others.
    woken: HashSet<TaskId>,
    /// Each live task's name and spawn location, for warnings.
    tasks: HashMap<TaskId, String>,
    /// Tasks that woke themselves in their last poll, and how many polls
    /// in a row.
    self_woken: HashMap<TaskId, u32>,
    /// When the last poke from another thread arrived.
    last_poke: Option<Duration>,
    /// Where to write the trace when the recording ends.
    file: Option<PathBuf>,
    /// The wall clock at the start, and the thread: what lines up the
    /// traces of several loops (`Loops`) in one timeline.
    started: std::time::SystemTime,
    thread: Option<String>,
}

impl fmt::Debug for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let log = self.0.borrow();
        f.debug_struct("Recording")
            .field("events", &log.records.len())
            .field("file", &log.file)
            .finish()
    }
}

impl Recording {
    fn new(clock: Clock, lints: Lints, file: Option<PathBuf>) -> Recording {
        Recording(Rc::new(RefCell::new(Log {
            start: clock.now(),
            clock,
            lints,
            records: Vec::new(),
            acting: Vec::new(),
            polling: None,
            calling: None,
            woken: HashSet::new(),
            tasks: HashMap::new(),
            self_woken: HashMap::new(),
            last_poke: None,
            file,
            started: std::time::SystemTime::now(),
            thread: std::thread::current().name().map(String::from),
        })))
    }

    /// Microseconds from the Unix epoch to the recording's start, and the
    /// thread it records (for the Chrome trace's `otherData`).
    pub(crate) fn origin(&self) -> (u128, Option<String>) {
        let log = self.0.borrow();
        let since_epoch = log
            .started
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        (since_epoch, log.thread.clone())
    }

    /// Everything recorded so far, in order.
    pub fn records(&self) -> Vec<Record> {
        self.0.borrow().records.clone()
    }

    /// The warnings so far, in order.
    pub fn warnings(&self) -> Vec<Warning> {
        self.0
            .borrow()
            .records
            .iter()
            .filter_map(|r| match &r.event {
                Event::Warning(w) => Some(w.clone()),
                _ => None,
            })
            .collect()
    }

    /// Lends the records so far to `f` (the Chrome trace writer reads them
    /// all).
    pub(crate) fn with_records<R>(&self, f: impl FnOnce(&[Record]) -> R) -> R {
        f(&self.0.borrow().records)
    }

    fn push(&self, event: Event) {
        let warnings = self.0.borrow_mut().push(event);
        for warning in warnings {
            log::warn!(target: "runtime", "{warning}");
        }
    }

    pub(crate) fn set_clock(&self, clock: Clock) {
        let mut log = self.0.borrow_mut();
        log.start = clock.now();
        log.clock = clock;
    }

    /// Stops recording on this thread without writing the file.
    pub(crate) fn discard(&self) {
        self.0.borrow_mut().file = None;
        self.finish();
    }

    /// Stops recording on this thread and writes the file, if any.
    pub(crate) fn finish(&self) {
        ACTIVE.with_borrow_mut(|active| {
            if active.as_ref().is_some_and(|a| Rc::ptr_eq(&a.0, &self.0)) {
                *active = None;
                ON.with(|on| on.set(false));
            }
        });
        let file = self.0.borrow_mut().file.take();
        if let Some(path) = file {
            let written = std::fs::File::create(&path)
                .and_then(|f| self.write_chrome_trace(io::BufWriter::new(f)));
            match written {
                Ok(()) => log::info!(target: "runtime", "trace written to {}", path.display()),
                Err(e) => eprintln!("runtime: cannot write the trace to {}: {e}", path.display()),
            }
        }
    }
}

impl Log {
    fn now(&self) -> Duration {
        self.clock.now().saturating_duration_since(self.start)
    }

    fn actor(&self) -> Actor {
        self.acting.last().copied().unwrap_or(Actor::Outside)
    }

    fn who(&self, task: TaskId) -> String {
        self.tasks
            .get(&task)
            .cloned()
            .unwrap_or_else(|| format!("task {task}"))
    }

    /// Appends `event`, filling in who did it, and returns the warnings to
    /// log: those it raised (appended after it), or itself if it is one.
    fn push(&mut self, mut event: Event) -> Vec<Warning> {
        let at = self.now();
        let mut warnings = Vec::new();
        let mut before = None;
        match &mut event {
            Event::Spawn {
                task,
                name,
                at: loc,
                by,
            } => {
                *by = self.actor();
                let who = match name {
                    Some(name) => format!(
                        "task {task} ({name}, spawned at {}:{})",
                        loc.file(),
                        loc.line()
                    ),
                    None => format!("task {task} (spawned at {}:{})", loc.file(), loc.line()),
                };
                self.tasks.insert(*task, who);
                self.woken.insert(*task);
            }
            Event::Wake { task, by } => {
                *by = self.actor();
                self.woken.insert(*task);
            }
            Event::Register { by, .. }
            | Event::Deregister { by, .. }
            | Event::TimerSet { by, .. }
            | Event::TimerCancelled { by, .. } => *by = self.actor(),
            Event::PollStart { task } => {
                if !self.woken.remove(task) {
                    // Scheduled, but no wake on this thread: another
                    // thread woke it.
                    before = Some(Record {
                        at: self.last_poke.unwrap_or(at),
                        event: Event::Wake {
                            task: *task,
                            by: Actor::Thread,
                        },
                    });
                }
                self.acting.push(Actor::Task(*task));
                self.polling = Some(at);
            }
            Event::PollEnd { task, outcome } => {
                self.acting.pop();
                if let Some(started) = self.polling.take() {
                    let took = at.saturating_sub(started);
                    if took > self.lints.slow_poll {
                        warnings.push(self.warning(WarningKind::SlowPoll(took), Some(*task)));
                    }
                }
                if *outcome == Outcome::Pending {
                    if let Some(w) = self.count_self_wake(*task) {
                        warnings.push(w);
                    }
                } else {
                    self.forget(*task);
                }
            }
            Event::Cancelled { task } => self.forget(*task),
            Event::CallbackStart { token, .. } => {
                self.acting.push(Actor::Io(*token));
                self.calling = Some(at);
            }
            Event::TimerStart { timer } => {
                self.acting.push(Actor::Timer(*timer));
                self.calling = Some(at);
            }
            Event::CallbackEnd { .. } | Event::TimerEnd { .. } => {
                let took = self.calling.take().map(|s| at.saturating_sub(s));
                // A reactor callback only wakes tasks; a slow one is a
                // callback of the bare event loop (stage 1).
                if let Some(took) = took.filter(|t| *t > self.lints.slow_poll) {
                    warnings.push(self.warning(WarningKind::SlowPoll(took), None));
                }
                self.acting.pop();
            }
            Event::Poke => self.last_poke = Some(at),
            Event::WaitStart { .. } | Event::WaitEnd { .. } => {}
            // A warning found outside the event stream (see `warn`): it is
            // the event itself, to be logged like the others.
            Event::Warning(w) => warnings.push(w.clone()),
        }
        self.records.extend(before);
        let found_elsewhere = matches!(event, Event::Warning(_));
        self.records.push(Record { at, event });
        if !found_elsewhere {
            self.records.extend(warnings.iter().map(|w| Record {
                at,
                event: Event::Warning(w.clone()),
            }));
        }
        warnings
    }

    /// Counts a Pending poll of `task` during which it woke itself; warns
    /// once when the streak reaches the threshold.
    fn count_self_wake(&mut self, task: TaskId) -> Option<Warning> {
        let woke_itself = self
            .records
            .iter()
            .rev()
            .take_while(|r| !matches!(r.event, Event::PollStart { task: t } if t == task));
        let woke_itself = woke_itself.into_iter().any(|r| {
            matches!(r.event, Event::Wake { task: t, by: Actor::Task(b) } if t == task && b == task)
        });
        if !woke_itself {
            self.self_woken.remove(&task);
            return None;
        }
        let streak = self.self_woken.entry(task).or_insert(0);
        *streak += 1;
        let streak = *streak;
        (streak == self.lints.busy_self_wakes)
            .then(|| self.warning(WarningKind::BusySelfWake(streak), Some(task)))
    }

    fn forget(&mut self, task: TaskId) {
        self.self_woken.remove(&task);
        self.woken.remove(&task);
        // Keep the name: a late warning may still need it.
    }

    fn warning(&self, kind: WarningKind, task: Option<TaskId>) -> Warning {
        let who = match task {
            Some(task) => self.who(task),
            None => match self.actor() {
                Actor::Io(token) => format!("the callback for token {token}"),
                Actor::Timer(timer) => format!("timer {timer}'s callback"),
                _ => "a callback".to_string(),
            },
        };
        Warning { kind, task, who }
    }
}

/// What the environment asks for: whether to record, the file to write,
/// and the lints' thresholds (`RUNTIME_SLOW_POLL_MS` sets the slow-poll
/// one).
struct FromEnv {
    on: bool,
    file: Option<PathBuf>,
    lints: Lints,
}

fn from_env() -> &'static FromEnv {
    static ENV: OnceLock<FromEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let file = std::env::var_os("RUNTIME_TRACE")
            .filter(|f| !f.is_empty())
            .map(PathBuf::from);
        let debug = std::env::var_os("RUNTIME_DEBUG").is_some_and(|v| !v.is_empty() && v != "0");
        let mut lints = Lints::default();
        if let Some(ms) = std::env::var("RUNTIME_SLOW_POLL_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
        {
            lints.slow_poll = Duration::from_millis(ms);
        }
        FromEnv {
            on: file.is_some() || debug,
            file,
            lints,
        }
    })
}

/// Starts a recording on this thread for an event loop being created, if
/// the environment asks for one and none is on. The loop keeps it and
/// finishes it when dropped.
pub(crate) fn start_from_env(clock: &Clock) -> Option<Recording> {
    let env = from_env();
    if !env.on || is_on() {
        return None;
    }
    Some(start(
        clock.clone(),
        env.lints,
        env.file.clone().map(for_this_thread),
    ))
}

/// The trace file of this thread's loop: `RUNTIME_TRACE` itself on the
/// main thread; on another (a loop of [`Loops`](crate::Loops), named
/// `loop-0` ...), the thread's name before the extension, so that each
/// loop writes its own: `trace.loop-0.json`.
fn for_this_thread(path: PathBuf) -> PathBuf {
    let thread = std::thread::current();
    let Some(name) = thread.name().filter(|n| *n != "main") else {
        return path;
    };
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{name}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{name}"),
    };
    path.with_file_name(name)
}

/// Starts a recording on this thread (replacing any other).
pub(crate) fn start(clock: Clock, lints: Lints, file: Option<PathBuf>) -> Recording {
    let recording = Recording::new(clock, lints, file);
    ACTIVE.with_borrow_mut(|active| *active = Some(recording.clone()));
    ON.with(|on| on.set(true));
    recording
}

/// Records a warning about `task` found outside the event stream: a
/// lost waker (the task returned `Pending` and only the task itself holds
/// its waker) or a task left behind by a runtime being dropped.
pub(crate) fn warn(kind: WarningKind, task: TaskId) {
    let active = ACTIVE.with_borrow(Option::clone);
    if let Some(recording) = active {
        let warning = recording.0.borrow().warning(kind, Some(task));
        recording.push(Event::Warning(warning));
    }
}
