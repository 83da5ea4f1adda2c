use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::rc::Rc;
use std::thread;

use exercises::ex01_echo_callbacks::echo;
use runtime::EventLoop;

use crate::common::{pattern, small_buffers, turn_until};

/// A peer on a plain thread that sends back every byte it receives, with
/// small socket buffers, until we close our side. Returns how many bytes it
/// echoed.
fn echo_peer() -> (std::net::SocketAddr, thread::JoinHandle<io::Result<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let peer = thread::spawn(move || {
        let (mut stream, _) = listener.accept()?;
        small_buffers(&stream);
        let mut chunk = [0u8; 4096];
        let mut echoed = 0;
        loop {
            match stream.read(&mut chunk)? {
                0 => return Ok(echoed),
                n => {
                    stream.write_all(&chunk[..n])?;
                    echoed += n;
                }
            }
        }
    });
    (addr, peer)
}

/// Echoes `data` through `echo` and returns what came back.
fn round_trip(data: Vec<u8>) -> (Vec<u8>, usize) {
    let (addr, peer) = echo_peer();
    let stream = std::net::TcpStream::connect(addr).unwrap();
    small_buffers(&stream);
    stream.set_nonblocking(true).unwrap();
    let sock = mio::net::TcpStream::from_std(stream);

    let mut event_loop = EventLoop::new().unwrap();
    let result: Rc<RefCell<Option<io::Result<Vec<u8>>>>> = Rc::default();
    let slot = Rc::clone(&result);
    echo(&mut event_loop, sock, data, move |_, got| {
        *slot.borrow_mut() = Some(got)
    })
    .unwrap();
    turn_until(&mut event_loop, "echo", || result.borrow().is_some());
    let got = result.take().unwrap().unwrap_or_else(|e| {
        panic!(
            "echo called back with an error: {e} ({:?}). It should write everything, \
             shut down its writing side (even when there is nothing to write: then at \
             once), and read until the peer closes. A BrokenPipe means it wrote after \
             shutting down, or after the socket closed.",
            e.kind()
        )
    });
    let echoed = peer.join().unwrap().unwrap_or_else(|e| {
        panic!(
            "the echo peer failed: {e} ({:?}). It reads until our side shuts down its \
             writing, echoing each chunk back. A BrokenPipe or reset here means echo \
             closed the socket (or dropped it) before reading back everything the peer \
             sent: close only after reading returns 0.",
            e.kind()
        )
    });
    assert_eq!(
        event_loop.registered(),
        0,
        "echo must unregister its socket when it is done"
    );
    (got, echoed)
}

#[test]
fn a_short_message_comes_back() {
    let (got, echoed) = round_trip(b"hello, callbacks".to_vec());
    assert_eq!(got, b"hello, callbacks");
    assert_eq!(echoed, 16);
}

#[test]
fn two_megabytes_come_back_whole_and_in_order() {
    let data = pattern(2 << 20);
    let (got, echoed) = round_trip(data.clone());
    assert_eq!(
        echoed,
        data.len(),
        "the peer received {echoed} of {} bytes: one write took only part of the buffer; keep writing on later callbacks",
        data.len()
    );
    assert_eq!(got.len(), data.len(), "echoed bytes");
    assert!(got == data, "the echo came back, but not in the order sent");
}

#[test]
fn nothing_to_send_still_finishes() {
    let (got, echoed) = round_trip(Vec::new());
    assert_eq!((got.len(), echoed), (0, 0));
}
