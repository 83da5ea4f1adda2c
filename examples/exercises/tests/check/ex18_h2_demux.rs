//! Exercise 18's tests: frames delivered in a chosen order to streams
//! polled with counting wakers (who was woken, how often), then eight
//! requests on the runtime fed by a connection task, each of which must get
//! exactly its own stream's frames.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::{Context, Poll};

use exercises::ex18_h2_demux::{Demux, Frame};

use crate::common::{Counter, block_on, counting_waker};

fn woken(counter: &Counter) -> usize {
    counter.0.load(std::sync::atomic::Ordering::SeqCst)
}

fn frame(stream: u32, payload: &str, end: bool) -> Frame {
    Frame {
        stream,
        payload: payload.as_bytes().to_vec(),
        end,
    }
}

#[test]
fn a_frame_wakes_its_own_stream_and_no_other() {
    let demux = Demux::new();
    let (mut one, mut three) = (demux.open(1), demux.open(3));
    let (woken_one, waker_one) = counting_waker();
    let (woken_three, waker_three) = counting_waker();
    assert_eq!(
        one.poll_frame(&mut Context::from_waker(&waker_one)),
        Poll::Pending,
        "stream 1 has no frame yet"
    );
    assert_eq!(
        three.poll_frame(&mut Context::from_waker(&waker_three)),
        Poll::Pending,
        "stream 3 has no frame yet"
    );
    assert!(demux.deliver(frame(3, "for three", false)));
    assert_eq!(
        (woken(&woken_one), woken(&woken_three)),
        (0, 1),
        "a frame for stream 3 must wake stream 3's request once, and not stream 1's"
    );
    assert_eq!(
        three.poll_frame(&mut Context::from_waker(&waker_three)),
        Poll::Ready(Some(frame(3, "for three", false)))
    );
    assert_eq!(
        one.poll_frame(&mut Context::from_waker(&waker_one)),
        Poll::Pending,
        "stream 1 still has nothing"
    );
    assert!(demux.deliver(frame(1, "for one", true)));
    assert_eq!((woken(&woken_one), woken(&woken_three)), (1, 1));
}

#[test]
fn frames_that_come_before_the_first_poll_are_kept_in_order() {
    let demux = Demux::new();
    let mut stream = demux.open(5);
    assert!(demux.deliver(frame(5, "a", false)));
    assert!(demux.deliver(frame(5, "b", false)));
    assert!(demux.deliver(frame(5, "c", true)));
    let (_, waker) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    for (payload, end) in [("a", false), ("b", false), ("c", true)] {
        assert_eq!(
            stream.poll_frame(&mut cx),
            Poll::Ready(Some(frame(5, payload, end)))
        );
    }
    assert_eq!(
        stream.poll_frame(&mut cx),
        Poll::Ready(None),
        "after the frame that ended the stream, the stream is over"
    );
}

#[test]
fn a_frame_for_a_stream_not_open_is_dropped() {
    let demux = Demux::new();
    assert!(
        !demux.deliver(frame(7, "nobody", true)),
        "stream 7 was never opened: deliver says false"
    );
    let stream = demux.open(9);
    assert_eq!(demux.open_streams(), 1);
    drop(stream);
    assert_eq!(
        demux.open_streams(),
        0,
        "a request given up closes its stream"
    );
    assert!(
        !demux.deliver(frame(9, "too late", true)),
        "stream 9's request was given up: its frames are dropped, not kept"
    );
}

#[test]
fn eight_requests_each_get_exactly_their_own_frames() {
    // The connection task delivers three frames per stream, the streams
    // interleaved, yielding between frames so that the requests run in
    // between, as they would while it waits for the socket.
    let got = block_on("eight streams", async {
        let demux = Demux::new();
        let got = Rc::new(RefCell::new(Vec::new()));
        let requests: Vec<_> = (0..8u32)
            .map(|i| {
                let mut stream = demux.open(2 * i + 1);
                let got = Rc::clone(&got);
                runtime::spawn(async move {
                    let mut body = String::new();
                    while let Some(frame) = stream.next().await {
                        body.push_str(std::str::from_utf8(&frame.payload).unwrap());
                    }
                    got.borrow_mut().push((2 * i + 1, body));
                })
            })
            .collect();
        for part in 0..3 {
            for i in (0..8u32).rev() {
                let id = 2 * i + 1;
                assert!(demux.deliver(frame(id, &format!("{id}.{part};"), part == 2)));
                runtime::yield_now().await;
            }
        }
        for request in requests {
            request.await.unwrap();
        }
        let mut got = got.borrow().clone();
        got.sort();
        got
    });
    let want: Vec<(u32, String)> = (0..8u32)
        .map(|i| {
            let id = 2 * i + 1;
            (id, format!("{id}.0;{id}.1;{id}.2;"))
        })
        .collect();
    assert_eq!(
        got, want,
        "each request must get its own stream's frames, in order"
    );
}
