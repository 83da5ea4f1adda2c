//! `fetch`: resolve, connect, send the request, read the response, by hand.

use std::future::Future;
use std::io;
use std::mem;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::vec;

use runtime::TcpStream;
use url::Url;

use super::{Connect, ReadAll};
use crate::error::{FetchError, StepError};
use crate::request::Request;

/// A future whose type we cannot write down (it comes from an `async fn` in
/// the runtime), so it lives behind a pointer.
type Resolve = Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>>>>;

// ANCHOR: fetch_enum
/// Fetches `url` and returns the raw response, head and body. The chapter's
// The fields are the coroutine's locals, named as in the chapter; the
// variant's doc says what they are for.
#[allow(missing_docs)]
/// `Fetcher.fetch`, minus what it does with the response.
pub enum Fetch {
    /// Created, not polled yet. Like a generator before its first `send`,
    /// or an `async fn`'s future before its first `poll`: nothing has run.
    Start {
        url: Url,
    },
    /// Waiting for the host's addresses.
    Resolving {
        url: Url,
        request: Vec<u8>,
        resolve: Resolve,
    },
    /// Inside `connect`, with the addresses still to try if it fails.
    Connecting {
        url: Url,
        request: Vec<u8>,
        connect: Connect,
        untried: vec::IntoIter<SocketAddr>,
    },
    /// Writing the request; `sent` bytes of it are written.
    Sending {
        url: Url,
        request: Vec<u8>,
        stream: TcpStream,
        sent: usize,
    },
    /// Inside `read_all`, which now owns the socket.
    Reading {
        url: Url,
        read_all: ReadAll,
    },
    Done,
}
// ANCHOR_END: fetch_enum

impl Fetch {
    /// A fetch of `url`, not started yet.
    pub fn new(url: Url) -> Fetch {
        Fetch::Start { url }
    }
}

impl Future for Fetch {
    type Output = Result<Vec<u8>, FetchError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let next = match mem::replace(&mut *self, Fetch::Done) {
                Fetch::Start { url } => match Request::get(&url) {
                    Ok(Request { host, port, bytes }) => Fetch::Resolving {
                        url,
                        request: bytes,
                        resolve: Box::pin(resolve(host, port)),
                    },
                    Err(e) => return Poll::Ready(Err(FetchError::new(url, e))),
                },
                Fetch::Resolving {
                    url,
                    request,
                    mut resolve,
                } => match resolve.as_mut().poll(cx) {
                    Poll::Pending => {
                        *self = Fetch::Resolving {
                            url,
                            request,
                            resolve,
                        };
                        return Poll::Pending;
                    }
                    Poll::Ready(Err(e)) => {
                        return Poll::Ready(Err(FetchError::new(
                            url,
                            StepError::new("resolve", e),
                        )));
                    }
                    Poll::Ready(Ok(addrs)) => {
                        let mut untried = addrs.into_iter();
                        let Some(addr) = untried.next() else {
                            let e =
                                io::Error::new(io::ErrorKind::NotFound, "host has no addresses");
                            return Poll::Ready(Err(FetchError::new(
                                url,
                                StepError::new("resolve", e),
                            )));
                        };
                        Fetch::Connecting {
                            url,
                            request,
                            connect: Connect::new(addr),
                            untried,
                        }
                    }
                },
                Fetch::Connecting {
                    url,
                    request,
                    mut connect,
                    mut untried,
                } => match Pin::new(&mut connect).poll(cx) {
                    Poll::Pending => {
                        *self = Fetch::Connecting {
                            url,
                            request,
                            connect,
                            untried,
                        };
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok(stream)) => Fetch::Sending {
                        url,
                        request,
                        stream,
                        sent: 0,
                    },
                    // Try the next address; the last one's error is the one we report.
                    Poll::Ready(Err(e)) => match untried.next() {
                        Some(addr) => Fetch::Connecting {
                            url,
                            request,
                            connect: Connect::new(addr),
                            untried,
                        },
                        None => return Poll::Ready(Err(FetchError::new(url, e))),
                    },
                },
                // ANCHOR: fetch_send_and_read
                Fetch::Sending {
                    url,
                    request,
                    mut stream,
                    sent,
                } if sent < request.len() => match stream.poll_write(cx, &request[sent..]) {
                    Poll::Pending => {
                        *self = Fetch::Sending {
                            url,
                            request,
                            stream,
                            sent,
                        };
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok(0)) => {
                        let e = StepError::new("send", io::Error::from(io::ErrorKind::WriteZero));
                        return Poll::Ready(Err(FetchError::new(url, e)));
                    }
                    Poll::Ready(Ok(n)) => Fetch::Sending {
                        url,
                        request,
                        stream,
                        sent: sent + n,
                    },
                    Poll::Ready(Err(e)) => {
                        return Poll::Ready(Err(FetchError::new(url, StepError::new("send", e))));
                    }
                },
                // Everything is sent: `yield from read_all(sock)`.
                Fetch::Sending { url, stream, .. } => Fetch::Reading {
                    url,
                    read_all: ReadAll::new(stream),
                },
                Fetch::Reading { url, mut read_all } => match Pin::new(&mut read_all).poll(cx) {
                    Poll::Pending => {
                        *self = Fetch::Reading { url, read_all };
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok(response)) => return Poll::Ready(Ok(response)),
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(FetchError::new(url, e))),
                },
                // ANCHOR_END: fetch_send_and_read
                Fetch::Done => panic!("Fetch polled after it finished"),
            };
            *self = next;
        }
    }
}

/// `runtime::resolve` borrows the host name; this owns it, so that the
/// future can be stored in `Fetch` next to nothing it borrows from.
async fn resolve(host: String, port: u16) -> io::Result<Vec<SocketAddr>> {
    runtime::resolve(&host, port).await
}
