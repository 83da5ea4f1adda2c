//! Small futures every program on the runtime ends up writing: give the
//! other tasks a turn, race two futures, and survive a panic.
//!
//! Each is a few lines on top of `poll_fn`, which is why the stages once
//! wrote them again and again; here they are written once.

use std::any::Any;
use std::future::{Future, poll_fn};
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::task::Poll;

// ANCHOR: yield_now
/// Returns `Pending` once, after waking its own task: the task goes to the
/// back of the run queue and the others get a turn (asyncio's
/// `await asyncio.sleep(0)`).
pub async fn yield_now() {
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}
// ANCHOR_END: yield_now

/// Which of two raced futures finished first, with its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Either<A, B> {
    /// The first future finished first.
    Left(A),
    /// The second future finished first.
    Right(B),
}

// ANCHOR: select
/// Runs `left` and `right` together and returns the output of the first to
/// finish; the other is dropped, which cancels it. `left` is polled first,
/// so when both are ready it wins. asyncio's `wait(..., FIRST_COMPLETED)`.
pub async fn select<A: Future, B: Future>(left: A, right: B) -> Either<A::Output, B::Output> {
    let mut left = pin!(left);
    let mut right = pin!(right);
    poll_fn(|cx| {
        if let Poll::Ready(output) = left.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(output));
        }
        if let Poll::Ready(output) = right.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(output));
        }
        Poll::Pending
    })
    .await
}
// ANCHOR_END: select

// ANCHOR: catch_unwind
/// Runs `future`, turning a panic inside any of its polls into an error
/// with the panic's message, instead of the end of the task that polls it.
/// A worker that must outlive a bad URL wraps each fetch in it.
pub async fn catch_unwind<F: Future>(future: F) -> Result<F::Output, String> {
    let mut future = pin!(future);
    poll_fn(
        |cx| match panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        },
    )
    .await
}
// ANCHOR_END: catch_unwind

/// The message a panic was raised with (`panic!("...")` makes a `&str` or a
/// `String`), for a log line or an error.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{run_until_complete, spawn};
    use std::cell::RefCell;
    use std::rc::Rc;

    #[test]
    fn yield_now_lets_another_task_run_first() {
        let order = Rc::new(RefCell::new(Vec::new()));
        let o = order.clone();
        run_until_complete(async move {
            let other = spawn({
                let o = o.clone();
                async move { o.borrow_mut().push("other") }
            });
            yield_now().await;
            o.borrow_mut().push("main");
            other.await.unwrap();
        })
        .unwrap();
        assert_eq!(*order.borrow(), ["other", "main"]);
    }

    #[test]
    fn select_returns_the_first_and_drops_the_other() {
        let out = run_until_complete(select(std::future::pending::<u8>(), async { "done" }));
        assert_eq!(out.unwrap(), Either::Right("done"));
        let both = run_until_complete(select(async { 1 }, async { 2 }));
        assert_eq!(both.unwrap(), Either::Left(1));
    }

    #[test]
    fn catch_unwind_turns_a_panic_into_its_message() {
        let ok = run_until_complete(catch_unwind(async { 7 })).unwrap();
        assert_eq!(ok, Ok(7));
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let err = run_until_complete(catch_unwind(async {
            yield_now().await;
            panic!("bad page {}", 3)
        }))
        .unwrap();
        std::panic::set_hook(hook);
        assert_eq!(err, Err::<(), _>("bad page 3".to_string()));
    }
}
