//! Timers fire in deadline order, whatever order they were set in, and
//! never early. On a paused clock, so the test is exact on any machine: the
//! clock stands still while the tasks register, and jumps from deadline to
//! deadline when there is nothing else to do.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use runtime::Clock;
use runtime::{Runtime, spawn};
use runtime::{now, sleep, sleep_until};

#[test]
fn timers_fire_in_deadline_order() {
    let rt = Runtime::with_clock(Clock::paused()).unwrap();
    let start = rt.now();
    let fired = Rc::new(RefCell::new(Vec::new()));
    // Set in a scrambled order, including two with the same deadline, which
    // fire in the order they were set.
    let delays_ms = [50u64, 10, 40, 0, 30, 20, 30];
    // One task per timer: a timer's wake queues its task, so the tasks run
    // in the order their timers fired, even when several fire in one turn.
    rt.block_on({
        let fired = fired.clone();
        async move {
            let tasks: Vec<_> = delays_ms
                .iter()
                .enumerate()
                .map(|(i, &ms)| {
                    let fired = fired.clone();
                    spawn(async move {
                        sleep_until(start + Duration::from_millis(ms)).await;
                        // The clock says exactly when it fired: not early,
                        // and (paused) not late either.
                        let at = now() - start;
                        fired.borrow_mut().push((ms, i, at));
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        }
    })
    .unwrap();
    let ms = Duration::from_millis;
    assert_eq!(
        *fired.borrow(),
        [
            (0, 3, ms(0)),
            (10, 1, ms(10)),
            (20, 5, ms(20)),
            (30, 4, ms(30)),
            (30, 6, ms(30)),
            (40, 2, ms(40)),
            (50, 0, ms(50))
        ]
    );
    assert_eq!(rt.now() - start, ms(50));
}

#[test]
fn an_hour_of_sleep_takes_no_time_on_a_paused_clock() {
    let rt = Runtime::with_clock(Clock::paused()).unwrap();
    let start = rt.now();
    let wall = std::time::Instant::now();
    // Made inside the runtime, so it reads the runtime's clock.
    rt.block_on(async { sleep(Duration::from_secs(3600)).await })
        .unwrap();
    assert_eq!(rt.now() - start, Duration::from_secs(3600));
    // Not a timing assertion: an hour of real sleep would never finish.
    assert!(wall.elapsed() < Duration::from_secs(3600));
}
