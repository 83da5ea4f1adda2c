//! An async runtime for teaching, built directly on `mio`: one event loop
//! on one thread, as asyncio has, and (`Loops`) several, one per thread.
//!
//! Each module (a file of `runtime/src/`) is one idea and one section of
//! the book; its items are re-exported here:
//!
//! | module | the chapter's counterpart |
//! |---|---|
//! | `event_loop` | `selectors.DefaultSelector` and callbacks |
//! | `readiness` | what the selector's event said (`EVENT_READ`, `EVENT_WRITE`) |
//! | `waker`, `task`, `executor` | `Future.add_done_callback`, `Task.step`, `run_until_complete` |
//! | `task_id` | (ours) a task's number, as traces and the recorder call it |
//! | `reactor` | the callbacks that resolve futures when a socket is ready |
//! | `time` | `asyncio.sleep`, `asyncio.wait_for` |
//! | `clock` | (ours) the real clock, or a paused one for tests |
//! | `net` | non-blocking sockets |
//! | `blocking` | `loop.run_in_executor` (for DNS) |
//! | `oneshot` | (ours) a result handed from a helper thread to a task |
//! | `queue` | `asyncio.Queue` |
//! | `pool` | (ours) connections shared by many tasks, for the Redis and PostgreSQL clients |
//! | `gather` | `asyncio.gather` |
//! | `loops` | (ours) several event loops, one per thread, and tasks sent between them |
//! | `mpsc` | (ours) a channel from any thread to a task on one loop |
//! | `remote` | (ours) a task sent to another loop and its answer, in one allocation |
//! | `signal` | `loop.add_signal_handler` |
//! | `slab` | (ours) the task table: tasks found by the slot their waker carries |
//! | `id_map` | (ours) the event loop's table of sockets, keyed by token, hashed with one multiplication |
//! | `future` | `asyncio.sleep(0)`, `asyncio.wait(FIRST_COMPLETED)`, and a panic caught |
//! | `recorder`, `chrome_trace` | asyncio's debug mode; (ours) a timeline of every poll and wake |
//!
//! Every loop turn, poll, wake, registration and timer logs a line at trace
//! level under the target `runtime`: run with `RUST_LOG=runtime=trace`. The
//! `recorder` keeps the same events as data: `RUNTIME_TRACE=trace.json`
//! writes them as a Chrome trace, and `RUNTIME_DEBUG=1` warns about slow
//! polls, lost wakers, busy tasks and tasks left behind.

#![warn(missing_docs, missing_debug_implementations)]

// One module per idea, each private: a user needs the items, and finds them
// all here, at `runtime::NAME` (mini-redis's rule). `oneshot` stays a
// module, as its items read best qualified (`oneshot::channel`).
mod blocking;
mod chrome_trace;
mod clock;
mod event_loop;
mod executor;
mod future;
mod gather;
mod id_map;
mod loops;
pub mod mpsc;
mod net;
pub mod oneshot;
mod pool;
mod queue;
mod reactor;
mod readiness;
mod recorder;
mod remote;
mod signal;
mod slab;
mod task;
mod task_id;
mod time;
mod waker;

pub use blocking::{Blocking, spawn_blocking};
pub use clock::{Clock, saturating_add};
pub use event_loop::{Callback, EventLoop, TimerCallback, TimerId};
/// For a debugger's `call`, not for programs: see the book's debugger
/// appendix.
pub use executor::debug_dump_tasks;
pub use executor::{
    Runtime, TaskBuilder, dump_tasks, run_until_complete, spawn, task_table, try_spawn,
};
pub use future::{Either, catch_unwind, panic_message, select, yield_now};
pub use gather::gather;
pub use loops::{LoopHandle, Loops};
pub use net::{TcpListener, TcpStream, resolve};
pub use pool::{Pool, Pooled};
pub use queue::{Get, Join, Queue, TaskDoneError};
pub use reactor::{Direction, Registration};
pub use readiness::Readiness;
pub use recorder::{Actor, Event, Lints, Outcome, Record, Recording, Warning, WarningKind};
pub use remote::RemoteJoin;
pub use signal::SignalPipe;
pub use task::{JoinError, JoinHandle, TaskState};
pub use task_id::TaskId;
pub use time::{Elapsed, Sleep, deadline_after, now, sleep, sleep_until, timeout};
