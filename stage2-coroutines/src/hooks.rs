//! A fault-injection hook, so the book can show a real panic deep inside a
//! coroutine (see `examples/backtrace.rs`).
//!
//! Both `read`s call `chunk_read` with every chunk they receive. It exists
//! only with the `test-hooks` feature, which the crate's own tests and the
//! backtrace example turn on; in every other build `chunk_read` is an empty
//! function the compiler removes.

#[cfg(feature = "test-hooks")]
use std::cell::Cell;

/// What `read` calls with each chunk.
#[cfg(feature = "test-hooks")]
pub type ChunkHook = fn(&[u8]);

#[cfg(feature = "test-hooks")]
thread_local! {
    static ON_CHUNK: Cell<Option<ChunkHook>> = const { Cell::new(None) };
}

/// Installs (or with `None` removes) a function that `read` calls with each
/// chunk it receives, on this thread.
#[cfg(feature = "test-hooks")]
pub fn set_on_chunk(hook: Option<ChunkHook>) {
    ON_CHUNK.set(hook);
}

/// Called by `read` with each chunk it receives.
#[cfg(feature = "test-hooks")]
pub(crate) fn chunk_read(chunk: &[u8]) {
    if let Some(hook) = ON_CHUNK.get() {
        hook(chunk);
    }
}

/// Without the feature there is nothing to call.
#[cfg(not(feature = "test-hooks"))]
#[inline(always)]
pub(crate) fn chunk_read(_chunk: &[u8]) {}
