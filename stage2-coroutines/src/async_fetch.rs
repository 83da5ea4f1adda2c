//! The same fetcher as [`crate::machines`], written as `async fn`s.
//!
//! `.await` is Rust's `yield from`: it runs the inner future, passing every
//! `Pending` up to whoever polled us, and evaluates to the inner future's
//! output when it is ready. The compiler turns each function into an enum
//! much like ours, with a variant for each `.await` and fields for the
//! locals alive across it.
//!
//! One thing the compiler's enums can do that ours cannot: `fetch` keeps
//! `stream` as a local and lends it to `read_all(&mut stream)`, so while
//! `fetch` waits inside `read_all`, its enum holds both the socket and a
//! future pointing at that socket. Moving the enum would leave that pointer
//! dangling. That is why a future is polled through `Pin<&mut Self>`: once
//! polled, it promises to stay where it is. Such a future is not `Unpin`:
//!
//! ```compile_fail,E0277
//! fn unpin<T: Unpin>(_: &T) {}
//! let url = url::Url::parse("http://127.0.0.1/").unwrap();
//! unpin(&stage2_coroutines::async_fetch::fetch(&url));
//! ```

use std::io;
use std::net::SocketAddr;

use runtime::TcpStream;
use url::Url;

use crate::error::{FetchError, StepError};
use crate::request::Request;
use crate::{CHUNK_SIZE, MAX_RESPONSE, hooks, response_too_large};

// ANCHOR: connect
/// Connects to one address.
pub async fn connect(addr: SocketAddr) -> Result<TcpStream, StepError> {
    TcpStream::connect(addr)
        .await
        .map_err(|e| StepError::new(format!("connect {addr}"), e))
}
// ANCHOR_END: connect

// ANCHOR: read
/// Reads one chunk; an empty chunk means the server closed the connection.
pub async fn read(stream: &mut TcpStream) -> Result<Vec<u8>, StepError> {
    let mut buf = [0u8; CHUNK_SIZE];
    let n = stream
        .read(&mut buf)
        .await
        .map_err(|e| StepError::new("read", e))?;
    let chunk = buf[..n].to_vec();
    hooks::chunk_read(&chunk);
    Ok(chunk)
}
// ANCHOR_END: read

// ANCHOR: read_all
/// Reads until the server closes the connection.
pub async fn read_all(stream: &mut TcpStream) -> Result<Vec<u8>, StepError> {
    let mut response = Vec::new();
    let mut chunk = read(stream)
        .await
        .map_err(|e| StepError::new("read_all", e))?;
    while !chunk.is_empty() {
        if response.len() + chunk.len() > MAX_RESPONSE {
            return Err(response_too_large());
        }
        response.extend_from_slice(&chunk);
        chunk = read(stream)
            .await
            .map_err(|e| StepError::new("read_all", e))?;
    }
    Ok(response)
}
// ANCHOR_END: read_all

// ANCHOR: fetch
/// Fetches `url` and returns the raw response, head and body.
pub async fn fetch(url: &Url) -> Result<Vec<u8>, FetchError> {
    let fail = |e: StepError| FetchError::new(url.clone(), e);
    let request = Request::get(url).map_err(|e| FetchError::new(url.clone(), e))?;
    let addrs = runtime::resolve(&request.host, request.port)
        .await
        .map_err(|e| fail(StepError::new("resolve", e)))?;
    let mut stream = connect_any(addrs).await.map_err(fail)?;
    stream
        .write_all(&request.bytes)
        .await
        .map_err(|e| fail(StepError::new("send", e)))?;
    read_all(&mut stream).await.map_err(fail)
}
// ANCHOR_END: fetch

/// Tries each address in turn; the last one's error is the one we report.
async fn connect_any(addrs: Vec<SocketAddr>) -> Result<TcpStream, StepError> {
    let mut last_error = None;
    for addr in addrs {
        match connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        let e = io::Error::new(io::ErrorKind::NotFound, "host has no addresses");
        StepError::new("resolve", e)
    }))
}
