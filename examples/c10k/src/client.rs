//! The client side: N connections from one thread, all held open at once.

use std::cell::{Cell, RefCell};
use std::future::pending;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use runtime::{Queue, TcpStream, spawn};

use crate::proc::{self, Usage};

/// How many connections may be between "connect started" and "echo
/// received" at once. A connect completes in the kernel, which then holds
/// the connection in the listener's backlog (128 here, std's and mio's
/// choice) until the server's accept task takes it. Ten thousand connects at
/// once would overflow it; the kernel drops the handshakes that do not fit,
/// and the clients retry them only after a second or more.
pub const WINDOW: u64 = 100;

/// What the client side measured.
pub struct Outcome {
    pub open: u64,
    pub failed: u64,
    pub first_error: Option<io::Error>,
    pub elapsed: Duration,
    /// This process before the first connection and with all of them open.
    pub before: Usage,
    pub after: Usage,
}

#[derive(Default)]
struct Failures {
    count: Cell<u64>,
    first: RefCell<Option<io::Error>>,
}

// ANCHOR: open_all
/// Opens `n` connections to `server`, at most [`WINDOW`] handshakes at a
/// time, and returns once all of them are open (or failed). The tasks that
/// hold them stay in the runtime until it is dropped.
pub async fn open_all(server: SocketAddr, n: u64) -> io::Result<Outcome> {
    let before = proc::usage()?;
    let start = Instant::now();
    let handshakes = Queue::new();
    let failures = Rc::new(Failures::default());
    let (mut started, mut finished) = (0, 0);
    while finished < n {
        // Start clients while there is room in the window, then wait for
        // one handshake to finish.
        while started < n && started - finished < WINDOW {
            spawn(client(server, handshakes.clone(), failures.clone()));
            started += 1;
        }
        handshakes.get().await;
        finished += 1;
    }
    let elapsed = start.elapsed();
    Ok(Outcome {
        open: n - failures.count.get(),
        failed: failures.count.get(),
        first_error: failures.first.borrow_mut().take(),
        elapsed,
        before,
        after: proc::usage()?,
    })
}
// ANCHOR_END: open_all

// ANCHOR: client
/// One client: connect, send a byte, wait for it to come back, report, then
/// hold the connection open until the task is cancelled.
async fn client(server: SocketAddr, handshakes: Queue<()>, failures: Rc<Failures>) {
    let stream = match echo_one_byte(server).await {
        Ok(stream) => Some(stream),
        Err(e) => {
            failures.count.set(failures.count.get() + 1);
            failures.first.borrow_mut().get_or_insert(e);
            None
        }
    };
    handshakes.put_nowait(());
    let _held = stream;
    pending::<()>().await
}
// ANCHOR_END: client

async fn echo_one_byte(server: SocketAddr) -> io::Result<TcpStream> {
    let mut stream = TcpStream::connect(server).await?;
    stream.write_all(b"x").await?;
    let mut byte = [0u8; 1];
    match stream.read(&mut byte).await? {
        1 if byte == *b"x" => Ok(stream),
        0 => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection before echoing",
        )),
        _ => Err(io::Error::other("the server echoed the wrong byte")),
    }
}
