//! [`gather`]: run several futures at once and collect their outputs in
//! order, asyncio's `gather`.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

enum Slot<F: Future> {
    Running(Pin<Box<F>>),
    Done(F::Output),
    Taken,
}

// ANCHOR: gather
/// Polls every future until all are done, and returns their outputs in the
/// order given.
///
/// The futures run concurrently inside the calling task; nothing is spawned.
/// Each wake re-polls every unfinished future, which is cheap for the handful
/// a program gathers and is why large fan-outs spawn tasks instead.
pub async fn gather<F, I>(futures: I) -> Vec<F::Output>
where
    F: Future,
    I: IntoIterator<Item = F>,
{
    let mut slots: Vec<Slot<F>> = futures
        .into_iter()
        .map(|f| Slot::Running(Box::pin(f)))
        .collect();
    poll_fn(|cx| {
        let mut all_done = true;
        for slot in slots.iter_mut() {
            if let Slot::Running(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(output) => *slot = Slot::Done(output),
                    Poll::Pending => all_done = false,
                }
            }
        }
        if !all_done {
            return Poll::Pending;
        }
        let outputs = slots
            .iter_mut()
            .map(|slot| match std::mem::replace(slot, Slot::Taken) {
                Slot::Done(output) => output,
                _ => unreachable!("every slot is Done when all_done"),
            })
            .collect();
        Poll::Ready(outputs)
    })
    .await
}
// ANCHOR_END: gather

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{run_until_complete, time::sleep};
    use std::cell::RefCell;
    use std::time::Duration;

    #[test]
    fn outputs_come_back_in_order_and_run_concurrently() {
        let finished = RefCell::new(Vec::new());
        let out = run_until_complete(gather([30u64, 10, 20].map(|ms| {
            let finished = &finished;
            async move {
                sleep(Duration::from_millis(ms)).await;
                finished.borrow_mut().push(ms);
                ms
            }
        })))
        .unwrap();
        assert_eq!(out, [30, 10, 20]);
        // They ran at the same time: they finished shortest first, not in
        // the order they were given.
        assert_eq!(finished.into_inner(), [10, 20, 30]);
    }

    #[test]
    fn gathering_nothing_is_empty() {
        let out: Vec<()> =
            run_until_complete(gather(Vec::<std::future::Ready<()>>::new())).unwrap();
        assert!(out.is_empty());
    }
}
