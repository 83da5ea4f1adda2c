//! `Queue::join`, the crawler's "are we done yet".
//!
//! A `join` that never returns is exactly the bug these tests look for, so
//! each runs under a timeout on a paused clock: if the test hangs, the
//! runtime has nothing else to do, the clock jumps to the deadline, and the
//! test fails at once instead of hanging CI.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use runtime::Clock;
use runtime::TaskDoneError;
use runtime::{Queue, Runtime, spawn, timeout};

/// Runs `future` to the end, or fails the test if it would hang.
fn run_until_complete<F: Future>(future: F) -> std::io::Result<F::Output> {
    let runtime = Runtime::with_clock(Clock::paused())?;
    let output = runtime.block_on(timeout(Duration::from_secs(60), future))?;
    Ok(output.expect("hung: still waiting after 60 s of (paused) time"))
}

#[test]
fn a_join_that_never_ends_fails_instead_of_hanging() {
    let runtime = Runtime::with_clock(Clock::paused()).unwrap();
    let hung = runtime
        .block_on(timeout(Duration::from_secs(60), async {
            let q = Queue::new();
            q.put_nowait(1);
            // Nobody calls task_done.
            q.join().await;
        }))
        .unwrap();
    assert!(hung.is_err());
}

#[test]
fn join_on_a_queue_that_never_had_an_item_resolves_at_once() {
    run_until_complete(async {
        let q: Queue<u32> = Queue::new();
        q.join().await;
    })
    .unwrap();
}

#[test]
fn join_waits_until_every_item_is_marked_done() {
    let log = Rc::new(RefCell::new(Vec::new()));
    run_until_complete({
        let log = log.clone();
        async move {
            let q = Queue::new();
            q.put_nowait(1);
            q.put_nowait(2);
            // Two workers; each item spawns a follow-up item once, as a
            // crawler's pages produce new URLs.
            let workers: Vec<_> = (0..2)
                .map(|w| {
                    let (q, log) = (q.clone(), log.clone());
                    spawn(async move {
                        loop {
                            let item = q.get().await;
                            log.borrow_mut().push(format!("w{w} got {item}"));
                            if item < 10 {
                                q.put_nowait(item * 10);
                            }
                            q.task_done().unwrap();
                        }
                    })
                })
                .collect();
            q.join().await;
            log.borrow_mut().push("joined".into());
            assert_eq!(q.unfinished(), 0);
            // The workers are parked in `get`: cancel them, as the crawler does.
            for w in workers {
                w.cancel();
                assert_eq!(w.await, Err(runtime::JoinError::Cancelled));
            }
        }
    })
    .unwrap();
    let log = log.borrow();
    assert_eq!(log.len(), 5);
    assert_eq!(log.last().map(String::as_str), Some("joined"));
    let mut items: Vec<_> = log[..4]
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap().to_string())
        .collect();
    items.sort();
    assert_eq!(items, ["1", "10", "2", "20"]);
}

#[test]
fn task_done_more_times_than_put_is_an_error() {
    let q = Queue::new();
    q.put_nowait("a");
    assert_eq!(q.get_nowait(), Some("a"));
    assert_eq!(q.task_done(), Ok(()));
    assert_eq!(q.task_done(), Err(TaskDoneError));
    // The error leaves the count at zero, not wrapped around.
    assert_eq!(q.unfinished(), 0);
}
