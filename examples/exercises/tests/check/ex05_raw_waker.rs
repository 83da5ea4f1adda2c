use std::sync::{Arc, Mutex};

use exercises::ex05_raw_waker::{Signal, waker};

#[test]
fn every_operation_keeps_the_count_exact() {
    let signal = Signal::new();
    let w = waker(Arc::clone(&signal));
    assert_eq!(
        Arc::strong_count(&signal),
        2,
        "a waker must hold one strong count of its Arc"
    );
    let w2 = w.clone();
    assert_eq!(
        Arc::strong_count(&signal),
        3,
        "a clone holds a count of its own"
    );
    w2.wake_by_ref();
    assert_eq!(signal.wakes(), 1, "wake_by_ref must wake");
    assert_eq!(Arc::strong_count(&signal), 3, "wake_by_ref keeps the count");
    w2.wake();
    assert_eq!(signal.wakes(), 2, "wake must wake");
    assert_eq!(
        Arc::strong_count(&signal),
        2,
        "wake uses the waker up: its count goes"
    );
    drop(w);
    assert_eq!(Arc::strong_count(&signal), 1, "drop gives the count back");
    assert_eq!(signal.wakes(), 2, "drop must not wake");
}

#[test]
fn many_clones_leak_nothing() {
    let signal = Signal::new();
    let w = waker(Arc::clone(&signal));
    let clones: Vec<_> = (0..1000).map(|_| w.clone()).collect();
    assert_eq!(Arc::strong_count(&signal), 1002);
    for (i, c) in clones.into_iter().enumerate() {
        if i % 2 == 0 {
            c.wake();
        }
    }
    assert_eq!(signal.wakes(), 500);
    drop(w);
    assert_eq!(Arc::strong_count(&signal), 1);
}

#[test]
fn a_waker_wakes_from_another_thread() {
    let signal = Signal::new();
    let w = waker(Arc::clone(&signal));
    std::thread::spawn(move || w.wake()).join().unwrap();
    assert_eq!(signal.wakes(), 1);
    assert_eq!(Arc::strong_count(&signal), 1);
}

#[test]
fn will_wake_tells_signals_apart() {
    let (a, b) = (Signal::new(), Signal::new());
    let wa = waker(Arc::clone(&a));
    let wb = waker(Arc::clone(&b));
    assert!(wa.will_wake(&wa.clone()), "a clone wakes the same signal");
    assert!(!wa.will_wake(&wb), "wakers for two signals must differ");
    wb.wake_by_ref();
    assert_eq!((a.wakes(), b.wakes()), (0, 1));
}

#[test]
fn a_wake_with_the_last_count_wakes_before_the_drop() {
    // The waker holds the signal's only count, so its `wake` is what frees
    // the signal: it must wake the signal first and give the count back
    // after. The log outlives the signal, and the Weak keeps the signal's
    // memory allocated (not alive): a wake after the drop is logged, not
    // a crash.
    let log = Arc::new(Mutex::new(Vec::new()));
    let signal = Signal::with_log(Arc::clone(&log));
    let memory = Arc::downgrade(&signal);
    let w = waker(signal);
    assert_eq!(
        memory.strong_count(),
        1,
        "the waker must hold the only count"
    );
    w.wake();
    assert_eq!(
        *log.lock().unwrap(),
        ["woken", "dropped"],
        "the waker held the signal's last count, so `wake` must wake the signal and only \
         then give the count back (`Arc::from_raw` first, the Arc dropped at the end): a \
         signal dropped before it is woken is a use after free"
    );
    assert_eq!(
        memory.strong_count(),
        0,
        "wake uses the waker up: its count goes"
    );
}
