//! `connect`: one non-blocking connect, by hand.

use std::future::Future;
use std::mem;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use runtime::TcpStream;

use crate::error::StepError;

// ANCHOR: connect
// The fields are the coroutine's locals, named as in the chapter; the
// variant's doc says what they are for.
#[allow(missing_docs)]
/// Connects to one address. The chapter's `connect(sock, address)`.
pub enum Connect {
    /// Created, not polled yet: nothing has happened.
    Start { addr: SocketAddr },
    /// The connect is under way; resume when the socket is writable.
    Connecting { addr: SocketAddr, stream: TcpStream },
    /// Finished (the stream was handed out, or the error).
    Done,
}

impl Connect {
    /// A connect to `addr`, not started yet.
    pub fn new(addr: SocketAddr) -> Connect {
        Connect::Start { addr }
    }
}

impl Future for Connect {
    type Output = Result<TcpStream, StepError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let next = match mem::replace(&mut *self, Connect::Done) {
                Connect::Start { addr } => match TcpStream::start_connect(addr) {
                    Ok(stream) => Connect::Connecting { addr, stream },
                    Err(e) => return Poll::Ready(Err(connect_error(addr, e))),
                },
                Connect::Connecting { addr, mut stream } => match stream.poll_connect(cx) {
                    Poll::Pending => {
                        *self = Connect::Connecting { addr, stream };
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok(())) => return Poll::Ready(Ok(stream)),
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(connect_error(addr, e))),
                },
                Connect::Done => panic!("Connect polled after it finished"),
            };
            *self = next;
        }
    }
}
// ANCHOR_END: connect

fn connect_error(addr: SocketAddr, e: std::io::Error) -> StepError {
    StepError::new(format!("connect {addr}"), e)
}
