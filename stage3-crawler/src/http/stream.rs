//! A connection's byte stream: our socket as it is, or TLS over it. The
//! HTTP code above reads and writes both the same way.

use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use runtime::TcpStream;

use super::tls::TlsStream;

// ANCHOR: stream
pub(crate) enum Stream {
    /// `http`: bytes go to the socket as they are.
    Plain(TcpStream),
    /// `https`: bytes go through rustls, which encrypts them into records.
    Tls(Box<TlsStream>),
}

impl Stream {
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match self {
            Stream::Plain(tcp) => tcp.poll_read(cx, buf),
            Stream::Tls(tls) => tls.poll_read(cx, buf),
        }
    }

    pub(crate) async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.write_all(buf).await,
            Stream::Tls(tls) => tls.write_all(buf).await,
        }
    }
}
// ANCHOR_END: stream

impl Stream {
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        std::future::poll_fn(|cx| self.poll_read(cx, buf)).await
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Stream::Plain(tcp) => tcp.local_addr(),
            Stream::Tls(tls) => tls.local_addr(),
        }
    }

    pub(crate) fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Stream::Plain(tcp) => tcp.peer_addr(),
            Stream::Tls(tls) => tls.peer_addr(),
        }
    }
}
