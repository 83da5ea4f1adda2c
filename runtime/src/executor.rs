//! The executor: the run queue, the task table, and the loop that drives
//! them, our `loop.run_until_complete`.
//!
//! One thread does everything, as in asyncio: it polls the tasks that are
//! ready, then turns the [`EventLoop`] once to learn which sockets and timers
//! are ready, which wakes more tasks, and so on. The reactor's callbacks (see
//! [`crate::reactor`]) are ordinary event-loop callbacks that call `wake()`.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use log::trace;

use crate::clock::Clock;
use crate::event_loop::EventLoop;
use crate::recorder::{self, Actor, Event, Lints, Outcome, Recording, WarningKind};
use crate::slab::Slab;
use crate::task::{JoinHandle, Meta, Runnable, Task, TaskState, WaitsOn};
use crate::task_id::TaskId;
use crate::waker::{RunQueue, TaskRef, TaskWaker};

/// The id of the future passed to [`Runtime::block_on`]. Spawned tasks count
/// up from 1.
const MAIN: TaskId = 0;

/// How many batches of ready tasks may run before the loop looks at I/O
/// again. A chain of wakes (a queue handing items from task to task) then
/// costs no system call per hop, while a task that wakes itself forever still
/// cannot keep the loop from its sockets and timers for long.
const BATCHES_PER_TURN: usize = 64;

thread_local! {
    /// The runtime whose `block_on` is running on this thread. `spawn`,
    /// `sleep` and the sockets find it here, as asyncio's coroutines find
    /// the running loop.
    static CURRENT: RefCell<Option<Rc<Inner>>> = const { RefCell::new(None) };
}

pub(crate) struct Inner {
    pub(crate) event_loop: RefCell<EventLoop>,
    tasks: RefCell<Slab<Rc<dyn Runnable>>>,
    queue: Arc<RunQueue>,
    next_id: Cell<TaskId>,
    /// Registrations dropped while the event loop was busy: their callbacks
    /// are removed after the loop's turn.
    orphans: RefCell<Vec<mio::Token>>,
}

/// A single-threaded async runtime: an [`EventLoop`] plus tasks.
pub struct Runtime {
    inner: Rc<Inner>,
}

impl Runtime {
    /// Creates a runtime with its own OS selector.
    pub fn new() -> io::Result<Runtime> {
        let event_loop = EventLoop::new()?;
        let queue = Arc::new(RunQueue::new(event_loop.waker()));
        Ok(Runtime {
            inner: Rc::new(Inner {
                event_loop: RefCell::new(event_loop),
                tasks: RefCell::new(Slab::default()),
                queue,
                next_id: Cell::new(MAIN + 1),
                orphans: RefCell::new(Vec::new()),
            }),
        })
    }

    /// Spawns a task on this runtime. It starts running when
    /// [`block_on`](Self::block_on) next runs.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
    {
        self.inner.spawn(future, Meta::here(None))
    }

    /// A runtime whose timers run by `clock`: [`Clock::paused`] makes timer
    /// tests exact and independent of the machine's speed.
    pub fn with_clock(clock: Clock) -> io::Result<Runtime> {
        let runtime = Runtime::new()?;
        runtime.inner.event_loop.borrow_mut().set_clock(clock);
        Ok(runtime)
    }

    /// Starts recording what this runtime does (see [`Recording`]), with the
    /// default lints, until the runtime is dropped.
    pub fn record(&self) -> Recording {
        self.inner.event_loop.borrow_mut().record()
    }

    /// [`record`](Self::record), with these lint thresholds.
    pub fn record_with(&self, lints: Lints) -> Recording {
        self.inner.event_loop.borrow_mut().record_with(lints)
    }

    /// The time now, by this runtime's clock.
    pub fn now(&self) -> std::time::Instant {
        self.inner.event_loop.borrow().now()
    }

    /// How many sockets are registered with this runtime's event loop. A
    /// test can check that a cancelled or timed-out future let go of its
    /// socket: after it is dropped, this goes back down.
    pub fn registered_sources(&self) -> usize {
        self.inner.event_loop.borrow().registered()
    }

    /// How many timers are pending: `sleep`s and `timeout`s that have not
    /// fired or been dropped.
    pub fn pending_timers(&self) -> usize {
        self.inner.event_loop.borrow().pending_timers()
    }

    // ANCHOR: block_on
    /// Runs `future` to completion, and every spawned task alongside it, then
    /// returns its output. Tasks still pending when it returns stay in the
    /// runtime and run again on the next `block_on`.
    ///
    /// Fails if the OS selector fails, or if called from inside another
    /// `block_on` on this thread (asyncio's "this event loop is already
    /// running").
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> io::Result<F::Output> {
        let _context = self.enter()?;
        let mut future = pin!(future);
        // The main future has no slot: it is not in the table.
        let main = TaskRef {
            id: MAIN,
            slot: usize::MAX,
        };
        let main = Arc::new(TaskWaker::new(main, self.inner.queue.clone()));
        let main_waker = Waker::from(main.clone());
        let at = std::panic::Location::caller();
        recorder::record(|| Event::Spawn {
            task: MAIN,
            name: Some("main".into()),
            at,
            by: Actor::Outside,
        });
        loop {
            if main.take_scheduled() {
                recorder::record(|| Event::PollStart { task: MAIN });
                let poll = future.as_mut().poll(&mut Context::from_waker(&main_waker));
                trace!(target: "runtime", "poll main -> {}", if poll.is_ready() { "Ready" } else { "Pending" });
                recorder::record(|| Event::PollEnd {
                    task: MAIN,
                    outcome: if poll.is_ready() {
                        Outcome::Ready
                    } else {
                        Outcome::Pending
                    },
                });
                if let Poll::Ready(output) = poll {
                    return Ok(output);
                }
            }
            // One batch always runs, even when the main future is ready
            // again, so that it cannot starve the tasks by waking itself.
            // More follow while they find something in the queue, up to the
            // limit, unless a task spent its I/O budget: its peer keeps it
            // busy, and the others' sockets and timers are looked at first.
            let mut batches = 0;
            loop {
                let ran = self.inner.run_ready_tasks();
                batches += 1;
                if ran == 0
                    || batches == BATCHES_PER_TURN
                    || main.is_scheduled()
                    || crate::task::take_budget_spent()
                {
                    break;
                }
            }
            // Somebody is ready to run: just look at I/O without sleeping.
            // Otherwise sleep until an event, a timer, or a wake from another
            // thread.
            let wait = if main.is_scheduled()
                || !self.inner.queue.is_empty()
                || !self.inner.queue.may_sleep()
            {
                Some(Duration::ZERO)
            } else {
                None
            };
            let turned = self.inner.event_loop.borrow_mut().turn(wait);
            self.inner.queue.awake();
            turned?;
            self.inner.forget_orphans();
        }
    }
    // ANCHOR_END: block_on

    fn enter(&self) -> io::Result<EnterGuard> {
        CURRENT.with(|current| {
            let mut current = current.borrow_mut();
            if current.is_some() {
                return Err(io::Error::other(
                    "block_on called while a runtime is already running on this thread",
                ));
            }
            *current = Some(self.inner.clone());
            Ok(EnterGuard {
                _running: self.inner.queue.enter(),
            })
        })
    }
}

/// Clears [`CURRENT`] when `block_on` returns, even by panic.
struct EnterGuard {
    _running: crate::waker::RunningGuard,
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        CURRENT.with(|current| current.borrow_mut().take());
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // Cancel what is left so that sockets close now; the futures may
        // deregister from our event loop as they go, so it must still exist.
        let mut tasks = self.inner.tasks.borrow_mut().drain();
        if recorder::is_on() {
            tasks.sort_unstable_by_key(|(id, _)| *id);
            // A cancelled task stays in the table, finished, until the
            // executor steps it once more; only unfinished ones are lost.
            for (id, task) in &tasks {
                if task.state() != TaskState::Finished {
                    recorder::warn(WarningKind::LeftBehind, *id);
                }
            }
        }
        for (_, task) in tasks {
            task.cancel();
        }
    }
}

impl Inner {
    /// Remembers `token` to be removed from the event loop after its turn:
    /// for a registration dropped while the loop was running a callback.
    pub(crate) fn forget_after_turn(&self, token: mio::Token) {
        self.orphans.borrow_mut().push(token);
    }

    fn forget_orphans(&self) {
        let orphans = std::mem::take(&mut *self.orphans.borrow_mut());
        if !orphans.is_empty() {
            let mut event_loop = self.event_loop.borrow_mut();
            for token in orphans {
                event_loop.forget(token);
            }
        }
    }

    fn spawn<F>(&self, future: F, meta: Meta) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
    {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        match &meta.name {
            Some(name) => trace!(
                target: "runtime",
                "spawn task={id} name={name} at {}:{}",
                meta.spawned_at.file(),
                meta.spawned_at.line()
            ),
            None => trace!(target: "runtime", "spawn task={id}"),
        }
        recorder::record(|| Event::Spawn {
            task: id,
            name: meta.name.clone(),
            at: meta.spawned_at,
            by: Actor::Outside,
        });
        let mut tasks = self.tasks.borrow_mut();
        let entry = tasks.vacant_entry(id);
        let waker = Arc::new(TaskWaker::new(entry.task(), self.queue.clone()));
        let task = Task::new(id, future, waker.clone(), meta);
        let handle = task.join_handle();
        entry.insert(task);
        drop(tasks);
        // A new task is born scheduled; put it in the queue to match.
        waker.take_scheduled();
        Waker::from(waker).wake();
        handle
    }

    // ANCHOR: run_ready_tasks
    /// Steps every task that was ready when the batch began, and returns
    /// how many entries of the run queue that took (counting the main
    /// future's, and wakes for tasks that had already finished).
    fn run_ready_tasks(&self) -> usize {
        let ready = self.queue.start_batch();
        for _ in 0..ready {
            let Some(next) = self.queue.pop() else {
                break;
            };
            if next.id == MAIN {
                continue; // block_on polls the main future itself
            }
            // Clone the task out of the table: while it runs it may spawn,
            // which needs the table.
            let Some(task) = self.tasks.borrow().get(next).cloned() else {
                continue; // a wake for a task that already finished
            };
            if task.step().is_ready() {
                self.tasks.borrow_mut().remove(next);
            }
        }
        ready
    }
    // ANCHOR_END: run_ready_tasks
}

/// Spawns a task on the runtime running on this thread, and returns a handle
/// to await its result or cancel it. asyncio's `create_task`. To give it a
/// name, for task dumps and traces, use [`TaskBuilder`].
///
/// # Panics
///
/// When no runtime is running on this thread, that is, outside
/// [`Runtime::block_on`]. Use [`Runtime::spawn`] there instead.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    TaskBuilder::new().spawn(future)
}

/// [`spawn`], or `None` when no runtime is running on this thread: for code
/// that may run while a runtime shuts down, such as a `Drop` that starts
/// the next piece of work, where a panic would abort the program.
#[track_caller]
pub fn try_spawn<F>(future: F) -> Option<JoinHandle<F::Output>>
where
    F: Future + 'static,
{
    TaskBuilder::new().try_spawn(future)
}

// ANCHOR: task_builder
/// Spawns a task with a name (asyncio's `create_task(coro, name=...)`):
/// `TaskBuilder::new().name("worker-3").spawn(future)`. The name, and where
/// the task was spawned, show in [`dump_tasks`] and the trace log, and in a
/// debugger as the task's `meta`.
#[derive(Debug, Default)]
pub struct TaskBuilder {
    name: Option<String>,
}

impl TaskBuilder {
    /// A builder for a task with no name yet.
    pub fn new() -> TaskBuilder {
        TaskBuilder::default()
    }

    /// Names the task.
    pub fn name(mut self, name: impl Into<String>) -> TaskBuilder {
        self.name = Some(name.into());
        self
    }

    /// Spawns the task on the runtime running on this thread, as [`spawn`]
    /// does (and panics where it does).
    #[track_caller]
    pub fn spawn<F>(self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
    {
        let meta = Meta::here(self.name);
        match current() {
            Some(inner) => inner.spawn(future, meta),
            None => panic!("runtime::spawn called outside Runtime::block_on; use Runtime::spawn"),
        }
    }

    /// Spawns the task, or returns `None` when no runtime is running on
    /// this thread, as [`try_spawn`] does.
    #[track_caller]
    pub fn try_spawn<F>(self, future: F) -> Option<JoinHandle<F::Output>>
    where
        F: Future + 'static,
    {
        let meta = Meta::here(self.name);
        current().map(|inner| inner.spawn(future, meta))
    }

    /// Spawns the task on `runtime`, as [`Runtime::spawn`] does.
    #[track_caller]
    pub fn spawn_on<F>(self, runtime: &Runtime, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
    {
        runtime.inner.spawn(future, Meta::here(self.name))
    }
}
// ANCHOR_END: task_builder

/// Runs `future` to completion on a new runtime: asyncio's
/// `loop.run_until_complete`.
#[track_caller]
pub fn run_until_complete<F: Future>(future: F) -> io::Result<F::Output> {
    Runtime::new()?.block_on(future)
}

/// The runtime running on this thread, if any.
pub(crate) fn current() -> Option<Rc<Inner>> {
    CURRENT.with(|current| current.borrow().clone())
}

pub(crate) fn no_runtime() -> io::Error {
    io::Error::other("no runtime is running on this thread (use Runtime::block_on)")
}

/// A description of every task on the current runtime, as its `Debug` shows
/// it, or `None` outside a runtime. Call it from inside a task (or from a
/// debugger) to see who is waiting.
pub fn dump_tasks() -> Option<String> {
    current().map(|inner| format!("{:#?}", Tasks(&inner)))
}

// ANCHOR: task_table
/// The current runtime's tasks as a table, one line each, for a person
/// asking a running program what it is doing (Python's `asyncio ps`): id,
/// state, name, what a waiting task waits on (a socket, a timer, the
/// queue, another task; `?` for a future that does not say) and where it
/// was spawned. `None` outside a runtime.
pub fn task_table() -> Option<String> {
    let inner = current()?;
    let Ok(tasks) = inner.tasks.try_borrow() else {
        return Some("<task table busy>\n".into());
    };
    let mut rows: Vec<_> = tasks.iter().collect();
    rows.sort_unstable_by_key(|(id, _)| *id);
    let now = inner.event_loop.try_borrow().map(|l| l.now()).ok();
    let mut table = format!(
        "{:>6}  {:<9}  {:<24}  {:<22}  {}\n",
        "task", "state", "name", "waits on", "spawned at"
    );
    for (id, task) in rows {
        let meta = task.meta();
        let state = task.state();
        let name = meta.name.as_deref().unwrap_or("-");
        let waits_on = match state {
            TaskState::Waiting => describe_wait(task.waits_on(), now),
            _ => "-".to_string(),
        };
        let at = meta.spawned_at;
        table.push_str(&format!(
            "{id:>6}  {:<9}  {name:<24}  {waits_on:<22}  {}:{}\n",
            format!("{state:?}"),
            at.file(),
            at.line()
        ));
    }
    Some(table)
}
// ANCHOR_END: task_table

/// What a waiting task waits on, for the task table.
fn describe_wait(waits_on: WaitsOn, now: Option<std::time::Instant>) -> String {
    match waits_on {
        WaitsOn::Unknown => "?".into(),
        WaitsOn::Readable(token) => format!("socket {token} (read)"),
        WaitsOn::Writable(token) => format!("socket {token} (write)"),
        WaitsOn::Timer(deadline) => match now {
            Some(now) => format!(
                "timer, {:.1}s left",
                deadline.saturating_duration_since(now).as_secs_f64()
            ),
            None => "timer".into(),
        },
        WaitsOn::Queue => "queue".into(),
        WaitsOn::Task(id) => format!("task {id}"),
    }
}

/// Prints [`dump_tasks`] to stderr. Meant for debuggers, which cannot call
/// a function that returns a `String`: `call runtime::executor::debug_dump_tasks()`.
pub fn debug_dump_tasks() {
    eprintln!(
        "{}",
        dump_tasks().unwrap_or_else(|| "no runtime is running on this thread".into())
    );
}

/// Keeps `debug_dump_tasks` in every binary that links the runtime, although
/// no code calls it, so that a debugger can.
#[used]
static KEEP_DEBUG_DUMP_TASKS: fn() = debug_dump_tasks;

struct Tasks<'a>(&'a Inner);

impl fmt::Debug for Tasks<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `try_borrow`: Debug may be called from inside a task, while the
        // table is being edited.
        let Ok(tasks) = self.0.tasks.try_borrow() else {
            return f.write_str("<task table busy>");
        };
        let mut list: Vec<(TaskKey<'_>, TaskState)> = tasks
            .iter()
            .map(|(id, t)| (TaskKey(id, t.meta().name.as_deref()), t.state()))
            .collect();
        list.sort_unstable_by_key(|(key, _)| key.0);
        f.debug_map().entries(list).finish()
    }
}

/// A task in a dump: its id, and its name if it has one (`3 (worker-2)`).
struct TaskKey<'a>(TaskId, Option<&'a str>);

impl fmt::Debug for TaskKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("tasks", &Tasks(&self.inner))
            .field("event_loop", &self.inner.event_loop.try_borrow().ok())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::task::JoinError;

    use crate::future::yield_now;

    #[test]
    fn a_task_woken_but_not_run_when_block_on_returns_runs_in_the_next() {
        let rt = Runtime::new().unwrap();
        let ran = Rc::new(Cell::new(false));
        // The spawn's wake goes into this thread's own queue; the main
        // future is done before the task's first poll.
        let flag = Rc::clone(&ran);
        let mut handle = None;
        rt.block_on(async { handle = Some(spawn(async move { flag.set(true) })) })
            .unwrap();
        let handle = handle.unwrap();
        assert!(!ran.get());
        // Another runtime on the same thread in between must not take it:
        // the wake would be lost, or worse, find that runtime's own task in
        // the same slot (ids and slots start alike in every runtime). It
        // went back to its own runtime's shared queue.
        Runtime::new().unwrap().block_on(yield_now()).unwrap();
        let bounded = crate::time::timeout(Duration::from_secs(10), handle);
        rt.block_on(bounded).unwrap().unwrap().unwrap();
        assert!(ran.get());
    }

    #[test]
    fn block_on_returns_the_output() {
        assert_eq!(run_until_complete(async { 6 * 7 }).unwrap(), 42);
    }

    /// The name and spawn location the table keeps for task `id`.
    fn meta_of(id: TaskId) -> (Option<String>, u32, String) {
        let inner = current().unwrap();
        let tasks = inner.tasks.borrow();
        let (_, task) = tasks.iter().find(|(each, _)| *each == id).unwrap();
        let meta = task.meta();
        let at = meta.spawned_at;
        (
            meta.name.as_deref().map(str::to_string),
            at.line(),
            at.file().to_string(),
        )
    }

    #[test]
    fn tasks_know_their_name_and_where_they_were_spawned() {
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            use std::future::pending;
            let line = line!() + 1;
            let named = TaskBuilder::new().name("worker-3").spawn(pending::<()>());
            let plain_line = line!() + 1;
            let plain = spawn(pending::<()>());
            assert_eq!(
                meta_of(named.id()),
                (Some("worker-3".to_string()), line, file!().to_string())
            );
            // `spawn` passes its caller's location on (`#[track_caller]`).
            assert_eq!(meta_of(plain.id()), (None, plain_line, file!().to_string()));
            assert_eq!(
                dump_tasks().unwrap(),
                format!(
                    "{{\n    {} (worker-3): Scheduled,\n    {}: Scheduled,\n}}",
                    named.id(),
                    plain.id()
                )
            );
        })
        .unwrap();
    }

    #[test]
    fn the_task_table_has_a_line_per_task() {
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            use std::future::pending;
            let line = line!() + 1;
            let named = TaskBuilder::new().name("worker-0").spawn(pending::<()>());
            yield_now().await;
            assert_eq!(
                task_table().unwrap(),
                format!(
                    "  task  state      name                      waits on                spawned at\n\
                     {:>6}  Waiting    worker-0                  ?                       {}:{line}\n",
                    named.id(),
                    file!()
                )
            );
        })
        .unwrap();
        assert_eq!(task_table(), None);
    }

    #[test]
    fn the_task_table_says_what_each_task_waits_on() {
        let rt = Runtime::with_clock(Clock::paused()).unwrap();
        let rows = rt
            .block_on(async {
                let queue: crate::Queue<u8> = crate::Queue::new();
                let sleeper = TaskBuilder::new()
                    .name("sleeper")
                    .spawn(crate::time::sleep(Duration::from_secs(5)));
                let sleeper_id = sleeper.id();
                let theirs = queue.clone();
                TaskBuilder::new()
                    .name("getter")
                    .spawn(async move { theirs.get().await });
                let mut listener =
                    crate::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
                let acceptor = TaskBuilder::new()
                    .name("acceptor")
                    .spawn(async move { listener.accept().await.map(drop) });
                TaskBuilder::new().name("joiner").spawn(sleeper);
                yield_now().await;
                let table = task_table().unwrap();
                let rows: Vec<Vec<String>> = table
                    .lines()
                    .skip(1)
                    .map(|l| {
                        l.split("  ")
                            .map(str::trim)
                            .filter(|c| !c.is_empty())
                            .map(String::from)
                            .collect()
                    })
                    .collect();
                acceptor.cancel();
                (rows, sleeper_id)
            })
            .unwrap();
        let (rows, sleeper_id) = rows;
        let waits: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r[2].as_str(), r[3].as_str()))
            .collect();
        let socket = waits[2].1;
        assert!(
            socket.starts_with("socket ") && socket.ends_with(" (read)"),
            "{waits:?}"
        );
        let joined = format!("task {sleeper_id}");
        assert_eq!(
            waits,
            [
                ("sleeper", "timer, 5.0s left"),
                ("getter", "queue"),
                ("acceptor", socket),
                ("joiner", joined.as_str()),
            ]
        );
    }

    #[test]
    fn spawned_tasks_run_and_join() {
        let rt = Runtime::new().unwrap();
        let out = rt
            .block_on(async {
                let a = spawn(async {
                    yield_now().await;
                    1
                });
                let b = spawn(async { 2 });
                a.await.unwrap() + b.await.unwrap()
            })
            .unwrap();
        assert_eq!(out, 3);
        assert_eq!(rt.inner.tasks.borrow().iter().count(), 0);
    }

    #[test]
    fn cancel_drops_the_future_and_reports_cancelled() {
        struct Flag(Rc<Cell<bool>>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.set(true);
            }
        }
        let dropped = Rc::new(Cell::new(false));
        let flag = Flag(dropped.clone());
        let out = run_until_complete(async move {
            let handle = spawn(async move {
                let _flag = flag;
                std::future::pending::<()>().await
            });
            yield_now().await; // let it start and park
            handle.cancel();
            handle.await
        })
        .unwrap();
        assert_eq!(out, Err(JoinError::Cancelled));
        assert!(dropped.get());
    }

    #[test]
    fn a_task_can_cancel_itself() {
        let out = run_until_complete(async {
            let me: Rc<RefCell<Option<JoinHandle<()>>>> = Rc::default();
            let me2 = me.clone();
            let handle = spawn(async move {
                yield_now().await;
                if let Some(h) = me2.borrow().as_ref() {
                    h.cancel()
                }
                std::future::pending::<()>().await
            });
            let id = handle.id();
            *me.borrow_mut() = Some(handle);
            while !me.borrow().as_ref().is_some_and(JoinHandle::is_finished) {
                yield_now().await;
            }
            let handle = me.borrow_mut().take().unwrap();
            (id, handle.await)
        })
        .unwrap();
        assert_eq!(out, (1, Err(JoinError::Cancelled)));
    }

    #[test]
    fn a_main_future_that_keeps_waking_itself_does_not_starve_tasks() {
        let ran = Rc::new(Cell::new(false));
        let theirs = ran.clone();
        let out = run_until_complete(crate::time::timeout(Duration::from_secs(30), async move {
            spawn(async move { theirs.set(true) });
            while !ran.get() {
                yield_now().await;
            }
        }))
        .unwrap();
        assert_eq!(out, Ok(()));
    }

    #[test]
    fn a_task_that_keeps_waking_itself_does_not_keep_the_loop_from_its_sockets() {
        use std::io::{Read, Write};
        let yields = Rc::new(Cell::new(0));
        let out = run_until_complete({
            let yields = yields.clone();
            async move {
                let (a, mut b) = mio::net::UnixStream::pair().unwrap();
                let socket = crate::reactor::Registration::new(a).unwrap();
                let done = Rc::new(Cell::new(false));
                let spinner = spawn({
                    let done = done.clone();
                    async move {
                        // The byte's event waits in the selector from now.
                        b.write_all(b"x").unwrap();
                        while !done.get() && yields.get() < 10 * BATCHES_PER_TURN {
                            yields.set(yields.get() + 1);
                            yield_now().await;
                        }
                    }
                });
                let mut buf = [0u8; 1];
                let read = std::future::poll_fn(|cx| {
                    socket.poll_read(cx, 1, |mut s: &mio::net::UnixStream| s.read(&mut buf))
                });
                let n = read.await.unwrap();
                done.set(true);
                spinner.await.unwrap();
                n
            }
        })
        .unwrap();
        assert_eq!(out, 1);
        // One poll of the spinner per batch, and the loop looked at its
        // sockets after the 64th.
        assert_eq!(yields.get(), BATCHES_PER_TURN);
    }

    #[test]
    fn a_late_wake_for_a_finished_task_does_not_poll_the_task_in_its_slot() {
        let polls = Rc::new(Cell::new(0));
        run_until_complete({
            let polls = polls.clone();
            async move {
                let kept = Rc::new(RefCell::new(None));
                let first = spawn({
                    let kept = kept.clone();
                    std::future::poll_fn(move |cx| {
                        *kept.borrow_mut() = Some(cx.waker().clone());
                        Poll::Ready(())
                    })
                });
                first.await.unwrap();
                // The first task is gone; the second takes its slot.
                let second = spawn(std::future::poll_fn(move |_| {
                    polls.set(polls.get() + 1);
                    Poll::<()>::Pending
                }));
                yield_now().await;
                let late: Option<Waker> = kept.borrow_mut().take();
                late.unwrap().wake();
                yield_now().await;
                yield_now().await;
                second.cancel();
            }
        })
        .unwrap();
        assert_eq!(polls.get(), 1);
    }

    #[test]
    fn a_panicking_task_does_not_stop_the_others() {
        let out = run_until_complete(async {
            let bad = spawn(async { panic!("boom") });
            let good = spawn(async { "fine" });
            (bad.await, good.await)
        })
        .unwrap();
        assert_eq!(out, (Err(JoinError::Panicked("boom".into())), Ok("fine")));
    }

    #[test]
    fn nested_block_on_is_an_error_not_a_panic() {
        let rt = Runtime::new().unwrap();
        let inner = rt
            .block_on(async { Runtime::new().unwrap().block_on(async {}) })
            .unwrap();
        let err = inner.unwrap_err();
        assert!(err.to_string().contains("already running"), "{err}");
    }

    #[test]
    fn dump_tasks_lists_ids_and_states() {
        let rt = Runtime::new().unwrap();
        let dump = rt
            .block_on(async {
                let waiting = spawn(std::future::pending::<()>());
                yield_now().await;
                let _queued = spawn(async {});
                let dump = dump_tasks().unwrap();
                waiting.cancel();
                dump
            })
            .unwrap();
        assert_eq!(dump, "{\n    1: Waiting,\n    2: Scheduled,\n}");
        assert_eq!(dump_tasks(), None);
    }

    #[test]
    fn tasks_left_pending_are_dropped_with_the_runtime() {
        let dropped = Rc::new(Cell::new(false));
        struct Flag(Rc<Cell<bool>>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.set(true);
            }
        }
        let rt = Runtime::new().unwrap();
        let flag = Flag(dropped.clone());
        rt.spawn(async move {
            let _flag = flag;
            std::future::pending::<()>().await
        });
        rt.block_on(yield_now()).unwrap();
        assert!(!dropped.get());
        drop(rt);
        assert!(dropped.get());
    }
}
