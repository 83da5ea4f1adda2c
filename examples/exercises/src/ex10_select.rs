//! Exercise 10 ★: race two futures.
//!
//! `runtime::timeout` races a future against a timer, and the stage-3
//! crawler races its queue's `join` against Ctrl-C. Both are the same
//! thing, written twice. Write it once: `select(a, b)` runs both futures in
//! the calling task and returns the output of whichever finishes first,
//! dropping (so cancelling) the other.
//!
//! Poll both with the same `Context`: whichever becomes ready first wakes
//! the task. If both are ready in the same poll, `a` wins, and `b` is not
//! polled at all: a loser must lose nothing (an item it took off a queue
//! would be thrown away with it).
//!
//! Read first: the book's "Factoring With .await", `timeout` in
//! runtime/src/time.rs, and `crawl_until` in stage3-crawler/src/crawling.rs
//! (which races `join` against Ctrl-C; don't read runtime/src/future.rs's
//! `select` until you are done: it is this exercise's answer).
//! Check: `cargo run -p exercises -- check 10`. Stuck: `... -- hint 10`.

use std::future::Future;

/// Which of the two finished first, and its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Runs `a` and `b` at the same time and returns the output of the first
/// to finish. The other is dropped before `select` returns, which cancels
/// it. If both are ready at the same poll, `a` wins.
pub async fn select<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let _ = (a, b);
    todo!("poll both futures until one is ready")
}
