//! Stage 2: the chapter's coroutine crawler.
//!
//! Stable Rust has no generators. What a generator is underneath, a state
//! machine that keeps its locals between steps, is exactly what `async fn`
//! compiles to, so this stage writes the fetcher twice: once as hand-written
//! state machines ([`machines`]) and once as `async fn` ([`async_fetch`]).
//! Both run on the runtime's executor and reactor, a task per URL.
//!
//! | module | the chapter |
//! |---|---|
//! | [`chapter_future`] | its small `Future`: a result slot and done-callbacks |
//! | [`on_connected`] | the first coroutine: `yield f`, resolved by a callback |
//! | [`machines`] | generators and their frames, written out as enums |
//! | `machines::connect`, `machines::read`, `machines::read_all`, `machines::fetch` | each of the chapter's coroutines, as an enum and its `poll` |
//! | [`async_fetch`] | `yield from`, which is `.await` |
//! | [`style`] | (new) picks one of the two fetchers |
//! | [`crawler`] | `Fetcher`, `seen_urls`, `urls_todo`, a `Task` per URL |
//! | [`request`] | the HTTP/1.0 request |
//! | [`error`] | (new) errors that keep the chain of steps they came through |
//! | [`cli`] | the command line |
//! | [`hooks`] | (new) fault injection for the book's backtrace (feature `test-hooks`) |

#![warn(missing_docs)]

pub mod async_fetch;
pub mod chapter_future;
pub mod cli;
pub mod crawler;
pub mod error;
pub mod hooks;
pub mod machines;
pub mod on_connected;
pub mod request;
pub mod style;

pub use crawler::{Options, Outcome, Report, crawl};
pub use error::{FetchError, StepError};
pub use style::{Style, fetch};

/// How much `read` asks the socket for at a time (the chapter's
/// `sock.recv(4096)`).
pub const CHUNK_SIZE: usize = 4096;

/// The largest response `read_all` accepts, the same as stage 1's.
pub use crawl_kit::response::MAX_RESPONSE;

/// The error `read_all` returns for a response over [`MAX_RESPONSE`].
pub(crate) fn response_too_large() -> StepError {
    StepError::new(
        "read_all",
        std::io::Error::other(format!("response larger than {MAX_RESPONSE} bytes")),
    )
}
