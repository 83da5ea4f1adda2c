use std::cell::{Cell, RefCell};
use std::rc::Rc;

use exercises::ex11_semaphore::Semaphore;

use crate::common::{block_on, counting_waker, yield_now};

#[test]
fn never_more_holders_than_permits() {
    let (peak, finished, available) = block_on("ten tasks", async {
        let semaphore = Semaphore::new(3);
        let running = Rc::new(Cell::new(0));
        let peak = Rc::new(Cell::new(0));
        let tasks: Vec<_> = (0..10)
            .map(|_| {
                let (semaphore, running, peak) =
                    (semaphore.clone(), Rc::clone(&running), Rc::clone(&peak));
                runtime::spawn(async move {
                    let _permit = semaphore.acquire().await;
                    running.set(running.get() + 1);
                    peak.set(peak.get().max(running.get()));
                    yield_now().await;
                    yield_now().await;
                    running.set(running.get() - 1);
                })
            })
            .collect();
        let mut finished = 0;
        for task in tasks {
            task.await.unwrap();
            finished += 1;
        }
        (peak.get(), finished, semaphore.available())
    });
    assert_eq!(peak, 3, "the most permit holders at once");
    assert_eq!(finished, 10);
    assert_eq!(available, 3, "every permit is back at the end");
}

#[test]
fn waiters_are_served_in_the_order_they_came() {
    let order = block_on("five waiters", async {
        let semaphore = Semaphore::new(1);
        let held = semaphore.acquire().await;
        let order = Rc::new(RefCell::new(Vec::new()));
        let tasks: Vec<_> = (0..5)
            .map(|i| {
                let (semaphore, order) = (semaphore.clone(), Rc::clone(&order));
                runtime::spawn(async move {
                    let _permit = semaphore.acquire().await;
                    order.borrow_mut().push(i);
                    yield_now().await;
                })
            })
            .collect();
        yield_now().await;
        assert_eq!(
            semaphore.waiting(),
            5,
            "tasks waiting while the permit is held"
        );
        drop(held);
        for task in tasks {
            task.await.unwrap();
        }
        order.take()
    });
    assert_eq!(order, [0, 1, 2, 3, 4]);
}

#[test]
fn a_permit_handed_to_a_waiter_is_not_taken_by_another() {
    let stolen = block_on("a waiter", async {
        let semaphore = Semaphore::new(1);
        let held = semaphore.acquire().await;
        let s = semaphore.clone();
        let waiter = runtime::spawn(async move { drop(s.acquire().await) });
        yield_now().await; // the waiter is in line
        drop(held); // the permit is the waiter's now, though it has not run
        let stolen = semaphore.try_acquire().is_some();
        waiter.await.unwrap();
        stolen
    });
    assert!(
        !stolen,
        "try_acquire took the permit that was handed to the waiter"
    );
}

#[test]
fn a_cancelled_waiter_passes_its_permit_on() {
    let (second_got_it, available) = block_on("two waiters", async {
        let semaphore = Semaphore::new(1);
        let held = semaphore.acquire().await;
        let (s1, s2) = (semaphore.clone(), semaphore.clone());
        let first = runtime::spawn(async move { drop(s1.acquire().await) });
        let second = runtime::spawn(async move { drop(s2.acquire().await) });
        yield_now().await; // both in line
        drop(held); // hands the permit to `first`...
        first.cancel(); // ...which is dropped before it can take it
        let got = second.await.is_ok();
        (got, semaphore.available())
    });
    assert!(second_got_it);
    assert_eq!(available, 1, "the permit must be back at the end");
}

#[test]
fn try_acquire_fails_when_none_is_free() {
    let semaphore = Semaphore::new(1);
    let first = semaphore.try_acquire();
    assert!(first.is_some());
    assert!(semaphore.try_acquire().is_none(), "only one permit exists");
    drop(first);
    assert_eq!(semaphore.available(), 1);
}

#[test]
fn a_waiter_cancelled_in_line_leaves_it() {
    let (waiting, later_got_it, available) = block_on("a cancelled waiter", async {
        let semaphore = Semaphore::new(1);
        let held = semaphore.acquire().await;
        let (s1, s2) = (semaphore.clone(), semaphore.clone());
        let gone = runtime::spawn(async move { drop(s1.acquire().await) });
        yield_now().await; // in line
        gone.cancel(); // never handed a permit: it must leave the line
        let waiting = semaphore.waiting();
        let later = runtime::spawn(async move { drop(s2.acquire().await) });
        yield_now().await;
        // Must go to `later`: handed to the cancelled waiter, it would be
        // lost for good, and `later` would wait forever.
        drop(held);
        let got = later.await.is_ok();
        (waiting, got, semaphore.available())
    });
    assert_eq!(waiting, 0, "a cancelled waiter still counts as waiting");
    assert!(later_got_it);
    assert_eq!(available, 1, "the permit must be back at the end");
}

/// A waiter polled again with another waker (moved to another task, or
/// polled by a `select` that was itself re-polled) must be woken through
/// the latest one: waking a stale waker wakes nobody who will poll.
#[test]
fn a_waiter_is_woken_through_its_latest_waker() {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::atomic::Ordering::SeqCst;
    use std::task::Context;

    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let mut waiter = pin!(semaphore.acquire());
    let (first, w1) = counting_waker();
    let (latest, w2) = counting_waker();
    assert!(
        waiter
            .as_mut()
            .poll(&mut Context::from_waker(&w1))
            .is_pending()
    );
    assert!(
        waiter
            .as_mut()
            .poll(&mut Context::from_waker(&w2))
            .is_pending()
    );
    drop(held);
    assert_eq!(
        (first.0.load(SeqCst), latest.0.load(SeqCst)),
        (0, 1),
        "release must wake the waker of the waiter's latest poll, and only that"
    );
    assert!(
        waiter
            .as_mut()
            .poll(&mut Context::from_waker(&w2))
            .is_ready(),
        "woken, the waiter must get its permit"
    );
}
