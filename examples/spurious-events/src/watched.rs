//! A socket registered with the runtime's reactor that narrates every read
//! it tries.

use std::future::poll_fn;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::task::Poll;

use runtime::Queue;
use runtime::{Direction, Registration};

/// One end of a Unix socket pair, in the runtime's event loop.
pub struct Watched {
    sock: Registration<mio::net::UnixStream>,
}

impl Watched {
    /// Registers `sock` with the running runtime.
    pub fn new(sock: UnixStream) -> io::Result<Watched> {
        sock.set_nonblocking(true)?;
        let sock = Registration::new(mio::net::UnixStream::from_std(sock))?;
        Ok(Watched { sock })
    }

    /// The reactor's hook for tests: feed it an event that the OS never
    /// reported.
    pub fn simulate_readable(&self) {
        self.sock.simulate_event(runtime::Readiness {
            readable: true,
            ..runtime::Readiness::default()
        });
    }

    /// A read that believes the event: it goes straight to the socket,
    /// without the reactor's "WouldBlock means wait" rule.
    pub fn trusting_read(&self) -> io::Result<usize> {
        self.sock.get_ref().read(&mut [0u8; 64])
    }

    // ANCHOR: read_narrated
    /// Reads one message the way every socket operation in the runtime
    /// does, through `Registration::poll_io`, and prints each attempt. After
    /// each `Pending` and at the end it puts a token on `progress`, so that
    /// the main task can wait for this reader without sleeping.
    pub async fn read_narrated(&self, who: &str, progress: &Queue<()>) -> io::Result<Vec<u8>> {
        let mut buf = [0u8; 64];
        let mut woken = "";
        let result = poll_fn(|cx| {
            let mut tried = false;
            let poll = self.sock.poll_io(cx, Direction::Read, |mut sock| {
                tried = true;
                sock.read(&mut buf)
            });
            match &poll {
                // An event said "readable", the read said "WouldBlock":
                // poll_io cleared the readiness and kept our waker. Nothing
                // is lost; we simply wait for the next event.
                Poll::Pending if tried => {
                    println!(
                        "{who}: {woken}read -> WouldBlock; parked until the next readable event"
                    );
                    progress.put_nowait(());
                    woken = "woken; ";
                }
                Poll::Pending => {}
                Poll::Ready(Ok(n)) => {
                    let text = String::from_utf8_lossy(buf.get(..*n).unwrap_or_default());
                    println!("{who}: {woken}read -> {n} bytes {text:?}");
                }
                Poll::Ready(Err(e)) => println!("{who}: {woken}read -> error: {e}"),
            }
            poll
        })
        .await;
        progress.put_nowait(());
        let n = result?;
        Ok(buf.get(..n).unwrap_or_default().to_vec())
    }
    // ANCHOR_END: read_narrated
}
