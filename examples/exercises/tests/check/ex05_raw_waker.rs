use std::sync::Arc;

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
