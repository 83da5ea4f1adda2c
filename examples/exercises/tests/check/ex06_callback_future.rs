use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use exercises::ex06_callback_future::sleep;
use runtime::EventLoop;
use stage2_coroutines::on_connected::run;

use crate::common::counting_waker;

#[test]
fn a_sleep_sets_a_timer_and_waits_for_it() {
    let event_loop = RefCell::new(EventLoop::new().unwrap());
    let mut s = pin!(sleep(&event_loop, Duration::from_secs(3600)));
    let mut cx = Context::from_waker(Waker::noop());
    assert_eq!(
        s.as_mut().poll(&mut cx),
        Poll::Pending,
        "a sleep must not be ready before its timer fires"
    );
    assert_eq!(
        event_loop.borrow().pending_timers(),
        1,
        "timers set by the first poll"
    );
    assert_eq!(s.as_mut().poll(&mut cx), Poll::Pending);
    assert_eq!(
        event_loop.borrow().pending_timers(),
        1,
        "a second poll must not set a second timer"
    );
}

#[test]
fn dropping_a_sleep_cancels_its_timer() {
    let event_loop = RefCell::new(EventLoop::new().unwrap());
    let mut s = Box::pin(sleep(&event_loop, Duration::from_secs(3600)));
    let _ = s.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    assert_eq!(
        event_loop.borrow().pending_timers(),
        1,
        "timers set by the first poll"
    );
    drop(s);
    assert_eq!(
        event_loop.borrow().pending_timers(),
        0,
        "a dropped sleep must cancel its timer"
    );
}

#[test]
fn the_timer_wakes_the_latest_waker_only() {
    let event_loop = RefCell::new(EventLoop::new().unwrap());
    let mut s = pin!(sleep(&event_loop, Duration::from_millis(1)));
    let (first, first_waker) = counting_waker();
    let (latest, latest_waker) = counting_waker();
    assert!(
        s.as_mut()
            .poll(&mut Context::from_waker(&first_waker))
            .is_pending()
    );
    assert!(
        s.as_mut()
            .poll(&mut Context::from_waker(&latest_waker))
            .is_pending()
    );
    while event_loop.borrow().pending_timers() > 0 {
        event_loop.borrow_mut().turn(None).unwrap();
    }
    assert_eq!(
        first.0.load(Ordering::SeqCst),
        0,
        "the first waker was replaced"
    );
    assert_eq!(
        latest.0.load(Ordering::SeqCst),
        1,
        "the latest waker is woken once"
    );
    assert_eq!(
        s.as_mut().poll(&mut Context::from_waker(&latest_waker)),
        Poll::Ready(())
    );
}

#[test]
fn a_coroutine_sleeps_twice_on_the_bare_loop() {
    let event_loop = RefCell::new(EventLoop::new().unwrap());
    let log = Rc::new(RefCell::new(Vec::new()));
    let theirs = Rc::clone(&log);
    run(&event_loop, async {
        sleep(&event_loop, Duration::from_millis(2)).await;
        theirs.borrow_mut().push("first");
        sleep(&event_loop, Duration::from_millis(2)).await;
        theirs.borrow_mut().push("second");
    })
    .unwrap();
    assert_eq!(*log.borrow(), ["first", "second"]);
    assert_eq!(event_loop.borrow().pending_timers(), 0);
}
