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
    /// Writes what the socket (or rustls's queue) takes now; HTTP/2's
    /// connection task writes this way, between reads.
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self {
            Stream::Plain(tcp) => tcp.poll_write(cx, buf),
            Stream::Tls(tls) => tls.poll_write(cx, buf),
        }
    }

    /// Sends what rustls holds encrypted; plain TCP holds nothing.
    pub(crate) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Stream::Plain(_) => Poll::Ready(Ok(())),
            Stream::Tls(tls) => tls.poll_send(cx),
        }
    }

    /// Writes what the socket takes right now, without waiting: a last
    /// frame (GOAWAY) on a connection that is going away.
    pub(crate) fn try_write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        while !buf.is_empty() {
            match self.poll_write(&mut cx, buf) {
                Poll::Ready(Ok(0)) | Poll::Pending => break,
                Poll::Ready(Ok(n)) => buf = &buf[n..],
                Poll::Ready(Err(e)) => return Err(e),
            }
        }
        match self.poll_flush(&mut cx) {
            Poll::Ready(Err(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Whether TLS chose HTTP/2 (ALPN `h2`) for this connection.
    pub(crate) fn is_h2(&self) -> bool {
        match self {
            Stream::Plain(_) => false,
            Stream::Tls(tls) => tls.alpn_is_h2(),
        }
    }

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
