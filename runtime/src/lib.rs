//! A single-threaded async runtime for teaching, built directly on `mio`.
//!
//! Each module is one idea and one section of the book:
//!
//! | module | the chapter's counterpart |
//! |---|---|
//! | [`event_loop`] | `selectors.DefaultSelector` and callbacks |
//! | [`waker`], [`task`], [`executor`] | `Future.add_done_callback`, `Task.step`, `run_until_complete` |
//! | [`reactor`] | the callbacks that resolve futures when a socket is ready |
//! | [`time`] | `asyncio.sleep`, `asyncio.wait_for` |
//! | [`clock`] | (ours) the real clock, or a paused one for tests |
//! | [`net`] | non-blocking sockets |
//! | [`blocking`] | `loop.run_in_executor` (for DNS) |
//! | [`oneshot`] | (ours) a result handed from a helper thread to a task |
//! | [`queue`] | `asyncio.Queue` |
//! | [`gather`] | `asyncio.gather` |
//! | [`future`] | `asyncio.sleep(0)`, `asyncio.wait(FIRST_COMPLETED)`, and a panic caught |
//!
//! Every loop turn, poll, wake, registration and timer logs a line at trace
//! level under the target `runtime`: run with `RUST_LOG=runtime=trace`.

#![warn(missing_docs, missing_debug_implementations)]

pub mod blocking;
pub mod clock;
pub mod event_loop;
pub mod executor;
pub mod future;
pub mod gather;
pub mod net;
pub mod oneshot;
pub mod queue;
pub mod reactor;
pub mod task;
pub mod time;
pub mod waker;

pub use blocking::spawn_blocking;
pub use event_loop::{EventLoop, Readiness};
pub use executor::{Runtime, dump_tasks, run_until_complete, spawn, try_spawn};
pub use future::{Either, catch_unwind, select, yield_now};
pub use gather::gather;
pub use net::{TcpListener, TcpStream};
pub use queue::Queue;
pub use task::{JoinError, JoinHandle, TaskState};
pub use time::{Elapsed, sleep, timeout};
