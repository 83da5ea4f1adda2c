//! The accept loop and the per-connection echo task.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use runtime::{TcpListener, TcpStream, sleep, spawn};

/// How long to pause after a failed `accept`. Errors such as "too many open
/// files" leave the pending connection in the queue, so the listener stays
/// readable and an immediate retry would fail again, forever, at full speed.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

// ANCHOR: serve
/// Accepts connections forever, one task each.
pub async fn serve(mut listener: TcpListener) -> Infallible {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                log::warn!("accept failed: {e}; retrying in {ACCEPT_BACKOFF:?}");
                sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        println!("{peer}: connected");
        // The task owns its socket; whatever happens to it stays inside it.
        spawn(connection(stream, peer));
    }
}
// ANCHOR_END: serve

/// Runs one connection and reports how it ended.
async fn connection(mut stream: TcpStream, peer: SocketAddr) {
    let mut echoed = 0;
    match echo(&mut stream, &mut echoed).await {
        Ok(()) => println!("{peer}: closed after echoing {echoed} bytes"),
        Err(e) => println!("{peer}: failed after echoing {echoed} bytes: {}", e.kind()),
    }
}

// ANCHOR: echo
/// Writes back everything it reads until the client closes its side.
/// `echoed` counts the bytes sent back, so the caller can report it even
/// when the connection fails.
async fn echo(stream: &mut TcpStream, echoed: &mut u64) -> io::Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(()); // the client closed its side: we are done
        }
        // While this waits for a slow reader we do not read either, so a
        // client that sends without reading is held back by TCP's flow
        // control, not by our memory.
        stream.write_all(&buf[..n]).await?;
        *echoed += n as u64;
    }
}
// ANCHOR_END: echo
