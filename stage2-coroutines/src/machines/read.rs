//! `read`: one chunk from a socket, by hand.

use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::task::{Context, Poll};

use runtime::TcpStream;

use crate::CHUNK_SIZE;
use crate::error::StepError;
use crate::hooks;

// ANCHOR: read
/// Reads one chunk, at most [`CHUNK_SIZE`] bytes; an empty chunk means the
/// server closed the connection. The chapter's `read(sock)`.
///
/// It takes the socket by value and hands it back with the chunk, because a
/// hand-written future cannot hold a borrow of a socket that its caller's
/// future owns (see `ReadAll`).
// The fields are the coroutine's locals; the variant's doc says what
// they are for.
#[allow(missing_docs)]
pub enum Read {
    /// Resume when the socket has data (or an end) for us.
    Waiting {
        stream: TcpStream,
    },
    Done,
}

impl Read {
    /// A read from `stream`, not started yet.
    pub fn new(stream: TcpStream) -> Read {
        Read::Waiting { stream }
    }
}

impl Future for Read {
    type Output = Result<(TcpStream, Vec<u8>), StepError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Read::Waiting { mut stream } = mem::replace(&mut *self, Read::Done) else {
            panic!("Read polled after it finished");
        };
        let mut buf = [0u8; CHUNK_SIZE];
        match stream.poll_read(cx, &mut buf) {
            Poll::Pending => {
                *self = Read::Waiting { stream };
                Poll::Pending
            }
            Poll::Ready(Ok(n)) => {
                let chunk = buf[..n].to_vec();
                hooks::chunk_read(&chunk);
                Poll::Ready(Ok((stream, chunk)))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(StepError::new("read", e))),
        }
    }
}
// ANCHOR_END: read
