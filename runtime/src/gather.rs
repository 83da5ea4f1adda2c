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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Queue;
    use crate::time::timeout;
    use crate::{run_until_complete, time::sleep};
    use std::time::Duration;

    #[test]
    fn outputs_come_back_in_order_and_run_concurrently() {
        // The first future can only finish after the second has started,
        // and the second only after the first has: run one after the other,
        // they would wait for each other forever. (The timeout turns that
        // into a failure instead of a hang.)
        let (ping, pong) = (Queue::new(), Queue::new());
        let out = run_until_complete(timeout(
            Duration::from_secs(30),
            gather([0, 1].map(|side| {
                let (ping, pong) = (ping.clone(), pong.clone());
                async move {
                    if side == 0 {
                        ping.put_nowait(());
                        pong.get().await;
                        "first"
                    } else {
                        ping.get().await;
                        pong.put_nowait(());
                        sleep(Duration::from_millis(1)).await;
                        "second"
                    }
                }
            })),
        ))
        .unwrap();
        assert_eq!(out, Ok(vec!["first", "second"]));
    }

    #[test]
    fn gathering_nothing_is_empty() {
        let out: Vec<()> =
            run_until_complete(gather(Vec::<std::future::Ready<()>>::new())).unwrap();
        assert!(out.is_empty());
    }
}
