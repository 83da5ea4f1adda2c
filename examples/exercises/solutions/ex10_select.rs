//! Exercise 10 ★: race two futures (reference solution).
//!
//! Poll both with the same context, so that whichever becomes ready wakes
//! this task; return the first output, and drop the loser with `select`'s
//! own frame when it returns.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

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
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(output) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(output));
        }
        if let Poll::Ready(output) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(output));
        }
        Poll::Pending
    })
    .await
}
