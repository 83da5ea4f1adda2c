//! Timers fire in deadline order, whatever order they were set in.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use runtime::time::sleep_until;
use runtime::{run_until_complete, spawn};

#[test]
fn timers_fire_in_deadline_order() {
    // Deadlines start 100 ms out, so every task has registered its timer
    // before the first one is due; from then on, order is up to the timers.
    let start = Instant::now() + Duration::from_millis(100);
    let fired = Rc::new(RefCell::new(Vec::new()));
    // Set in a scrambled order, including two with the same deadline, which
    // fire in the order they were set.
    let delays_ms = [50u64, 10, 40, 0, 30, 20, 30];
    let begun = Instant::now();
    // One task per timer: a timer's wake queues its task, so the tasks run
    // in the order their timers fired, even when several fire in one turn.
    run_until_complete({
        let fired = fired.clone();
        async move {
            let tasks: Vec<_> = delays_ms
                .iter()
                .enumerate()
                .map(|(i, &ms)| {
                    let fired = fired.clone();
                    spawn(async move {
                        sleep_until(start + Duration::from_millis(ms)).await;
                        fired.borrow_mut().push((ms, i));
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        }
    })
    .unwrap();
    assert_eq!(
        *fired.borrow(),
        [(0, 3), (10, 1), (20, 5), (30, 4), (30, 6), (40, 2), (50, 0)]
    );
    // Nobody woke early.
    assert!(begun.elapsed() >= Duration::from_millis(150));
}
