//! A task's number: what the run queue, the executor's table, the recorder
//! and a person reading a trace call a task. Its own module, so that the
//! recorder can name it without importing the waker that calls it.

/// Identifies a task for as long as the runtime lives. Never reused.
pub type TaskId = u64;
