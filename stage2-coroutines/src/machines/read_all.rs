//! `read_all`: every chunk until the server closes, by hand.

use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::task::{Context, Poll};

use runtime::TcpStream;

use super::Read;
use crate::error::StepError;
use crate::{MAX_RESPONSE, response_too_large};

// ANCHOR: read_all
/// Reads until the server closes the connection, and returns everything it
/// sent. The chapter's `read_all(sock)`, which loops over
/// `yield from read(sock)`.
// The fields are the coroutine's locals; the variant's doc says what
// they are for.
#[allow(missing_docs)]
pub enum ReadAll {
    /// Inside `read`: `read` is the inner coroutine we delegate to, and
    /// `response` is our local, the chunks so far.
    Reading {
        read: Read,
        response: Vec<u8>,
    },
    Done,
}

impl ReadAll {
    /// A read of everything `stream` sends, not started yet.
    pub fn new(stream: TcpStream) -> ReadAll {
        ReadAll::Reading {
            read: Read::new(stream),
            response: Vec::new(),
        }
    }
}

impl Future for ReadAll {
    type Output = Result<Vec<u8>, StepError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let ReadAll::Reading {
                mut read,
                mut response,
            } = mem::replace(&mut *self, ReadAll::Done)
            else {
                panic!("ReadAll polled after it finished");
            };
            // `yield from read(sock)`: poll the inner future; while it is
            // pending, so are we, and we stay at this resume point.
            let (stream, chunk) = match Pin::new(&mut read).poll(cx) {
                Poll::Pending => {
                    *self = ReadAll::Reading { read, response };
                    return Poll::Pending;
                }
                Poll::Ready(Ok(got)) => got,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(StepError::new("read_all", e))),
            };
            if chunk.is_empty() {
                return Poll::Ready(Ok(response));
            }
            if response.len() + chunk.len() > MAX_RESPONSE {
                return Poll::Ready(Err(response_too_large()));
            }
            response.extend_from_slice(&chunk);
            *self = ReadAll::Reading {
                read: Read::new(stream),
                response,
            };
        }
    }
}
// ANCHOR_END: read_all
