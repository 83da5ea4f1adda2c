//! A fault-injection hook, so the book can show a real panic deep inside a
//! coroutine (see `examples/backtrace.rs`).
//!
//! Both `read`s call `chunk_read` with every chunk they receive. Normally
//! nothing is installed and it costs one thread-local load per chunk.

use std::cell::Cell;

/// What `read` calls with each chunk.
pub type ChunkHook = fn(&[u8]);

thread_local! {
    static ON_CHUNK: Cell<Option<ChunkHook>> = const { Cell::new(None) };
}

/// Installs (or with `None` removes) a function that `read` calls with each
/// chunk it receives, on this thread.
#[doc(hidden)]
pub fn set_on_chunk(hook: Option<ChunkHook>) {
    ON_CHUNK.set(hook);
}

/// Called by `read` with each chunk it receives.
pub(crate) fn chunk_read(chunk: &[u8]) {
    if let Some(hook) = ON_CHUNK.get() {
        hook(chunk);
    }
}
