//! Exercise 04 ★★: write the state machine that `async fn` writes for you
//! (reference solution).
//!
//! One variant per place the function can be suspended, holding exactly
//! the locals that are alive there. `poll` takes the state out, advances as
//! far as it can, and puts back the state to resume from.

use std::future::Future;
use std::io;
use std::mem;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use runtime::TcpStream;

/// The request both versions send: HTTP/1.0, so the server closes the
/// connection after the body, and "read to the end" reads one response.
pub fn request(addr: SocketAddr, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").into_bytes()
}

/// The function to translate: three `.await`s, so three places to stop.
pub async fn get_async(addr: SocketAddr, path: &str) -> io::Result<Vec<u8>> {
    let request = request(addr, path);
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(&request).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    Ok(response)
}

/// [`get_async`], by hand.
pub enum Get {
    /// Created, not polled yet: nothing has happened, as with an `async fn`
    /// before its first poll.
    Start { addr: SocketAddr, request: Vec<u8> },
    /// At the first `.await`: the connect is under way.
    Connecting { stream: TcpStream, request: Vec<u8> },
    /// At the second: `sent` bytes of the request are written.
    Sending {
        stream: TcpStream,
        request: Vec<u8>,
        sent: usize,
    },
    /// At the third: reading until the server closes.
    Receiving {
        stream: TcpStream,
        response: Vec<u8>,
    },
    /// Returned its output. Polling again is a bug.
    Done,
}

impl Get {
    pub fn new(addr: SocketAddr, path: &str) -> Get {
        Get::Start {
            addr,
            request: request(addr, path),
        }
    }
}

impl Future for Get {
    type Output = io::Result<Vec<u8>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            // Take the state out (leaving `Done`), look at it, and decide
            // the next one. Every `return Poll::Pending` puts it back first.
            let next = match mem::replace(&mut *self, Get::Done) {
                Get::Start { addr, request } => match TcpStream::start_connect(addr) {
                    Ok(stream) => Get::Connecting { stream, request },
                    Err(e) => return Poll::Ready(Err(e)),
                },
                Get::Connecting {
                    mut stream,
                    request,
                } => match stream.poll_connect(cx) {
                    Poll::Pending => {
                        *self = Get::Connecting { stream, request };
                        return Poll::Pending;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => Get::Sending {
                        stream,
                        request,
                        sent: 0,
                    },
                },
                Get::Sending {
                    stream,
                    request,
                    sent,
                } if sent == request.len() => Get::Receiving {
                    stream,
                    response: Vec::new(),
                },
                Get::Sending {
                    mut stream,
                    request,
                    sent,
                } => match stream.poll_write(cx, &request[sent..]) {
                    Poll::Pending => {
                        *self = Get::Sending {
                            stream,
                            request,
                            sent,
                        };
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                    Poll::Ready(Ok(n)) => Get::Sending {
                        stream,
                        request,
                        sent: sent + n,
                    },
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                },
                Get::Receiving {
                    mut stream,
                    mut response,
                } => {
                    let mut chunk = [0u8; 16 * 1024];
                    match stream.poll_read(cx, &mut chunk) {
                        Poll::Pending => {
                            *self = Get::Receiving { stream, response };
                            return Poll::Pending;
                        }
                        Poll::Ready(Ok(0)) => return Poll::Ready(Ok(response)),
                        Poll::Ready(Ok(n)) => {
                            response.extend_from_slice(&chunk[..n]);
                            Get::Receiving { stream, response }
                        }
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    }
                }
                Get::Done => panic!("Get polled after it returned its output"),
            };
            *self = next;
        }
    }
}
