//! Beyond One Machine: the frontier in Redis, and this process's part in a shared crawl.

pub mod frontier;
pub(crate) mod shared;
