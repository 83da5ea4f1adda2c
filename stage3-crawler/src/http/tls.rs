//! TLS on our readiness loop: rustls driven by hand over the runtime's
//! non-blocking [`TcpStream`].
//!
//! rustls does no I/O of its own. A [`ClientConnection`] is a state machine
//! with two byte queues: `read_tls` feeds it records from the network,
//! `process_new_packets` decrypts and advances the handshake, `write_tls`
//! takes the records it wants sent. Our job is to move bytes between those
//! queues and the socket, and to wait, without blocking the loop, whenever
//! the socket has nothing to give or no room to take. Python's asyncio does
//! the same with `ssl.MemoryBIO`: its SSL transport is this file, in C and
//! Python.
//!
//! The bridge is [`SocketIo`]: our socket seen through `std::io::Read` and
//! `Write`, as rustls wants it, where "not ready" is `WouldBlock`. By the
//! time rustls sees that `WouldBlock`, the reactor has the task's waker, so
//! the task sleeps until the socket is ready and then runs the same loop
//! again.

use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll, Waker, ready};

use log::debug;
use runtime::TcpStream;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{CertificateError, ClientConfig, ClientConnection, RootCertStore};

use super::error::FetchError;

// ANCHOR: client_config
/// The client side of TLS that every connection shares: the roots we
/// trust, the protocol versions and ciphers, and the application protocols
/// we offer (ALPN): `h2` first when `http2`, then `http/1.1`.
pub(crate) fn client_config(
    extra_roots: &[CertificateDer<'static>],
    http2: bool,
) -> Arc<ClientConfig> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    // `--ca-file` checked these already; one that fails here is skipped.
    let (_added, ignored) = roots.add_parsable_certificates(extra_roots.iter().cloned());
    if ignored > 0 {
        log::warn!("{ignored} certificate(s) from --ca-file could not be used as roots");
    }
    // An explicit provider: with more than one compiled in (cargo unifies
    // features across a workspace), rustls could not pick one by itself.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    // The server picks one; offering http/1.1 alone keeps it from h2.
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Arc::new(config)
}
// ANCHOR_END: client_config

// ANCHOR: tls_stream
/// A TLS connection over one of our sockets.
pub(crate) struct TlsStream {
    tcp: TcpStream,
    tls: ClientConnection,
    /// The first bytes the server sent, to recognise a plain-HTTP answer
    /// when a handshake fails.
    first_bytes: Vec<u8>,
}
// ANCHOR_END: tls_stream

// ANCHOR: socket_io
/// Our socket as rustls sees it: `std::io::Read` and `Write` that never
/// block. `Poll::Pending` becomes `WouldBlock`; the reactor already holds
/// the waker that `poll_read` or `poll_write` stored.
struct SocketIo<'a, 'b> {
    tcp: &'a mut TcpStream,
    cx: &'a mut Context<'b>,
}

impl Read for SocketIo<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.tcp.poll_read(self.cx, buf) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl Write for SocketIo<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.tcp.poll_write(self.cx, buf) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
// ANCHOR_END: socket_io

/// How many of the server's first bytes [`TlsStream`] keeps.
const FIRST_BYTES: usize = 5;

/// A reader that keeps a copy of the first few bytes that pass through it.
/// If they say `HTTP/`, a failed handshake can say that the server answered
/// in plain HTTP, which is far more useful than rustls's "corrupt message".
struct KeepFirstBytes<'a, R> {
    inner: R,
    kept: &'a mut Vec<u8>,
}

impl<R: Read> Read for KeepFirstBytes<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let room = FIRST_BYTES.saturating_sub(self.kept.len());
        if let Some(head) = buf.get(..n.min(room)) {
            self.kept.extend_from_slice(head);
        }
        Ok(n)
    }
}

impl TlsStream {
    /// Starts TLS to `host` over a connected socket. SNI and certificate
    /// checking both use `host`: a name, or an IP address (which is checked
    /// against the certificate's IP addresses and sent without SNI).
    pub(crate) fn new(
        config: Arc<ClientConfig>,
        host: &str,
        tcp: TcpStream,
    ) -> Result<TlsStream, FetchError> {
        let name = ServerName::try_from(host.to_string()).map_err(|_| {
            FetchError::InvalidUrl(format!("{host} cannot be checked against a certificate"))
        })?;
        let tls = ClientConnection::new(config, name)
            .map_err(|e| FetchError::Tls(format!("cannot start TLS: {e}")))?;
        Ok(TlsStream {
            tcp,
            tls,
            first_bytes: Vec::new(),
        })
    }

    // ANCHOR: poll_flush
    /// Sends the records rustls has queued: the handshake's messages, or
    /// encrypted requests. `Ready(Ok)` once the queue is empty.
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.tls.wants_write() {
            let mut io = SocketIo {
                tcp: &mut self.tcp,
                cx,
            };
            match self.tls.write_tls(&mut io) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
    // ANCHOR_END: poll_flush

    // ANCHOR: poll_receive
    /// Reads what the socket has into rustls and lets it process the
    /// records. `Ready(Ok(0))` when the server closed the connection.
    fn poll_receive(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let mut io = KeepFirstBytes {
            inner: SocketIo {
                tcp: &mut self.tcp,
                cx,
            },
            kept: &mut self.first_bytes,
        };
        let n = match self.tls.read_tls(&mut io) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
            Err(e) => return Poll::Ready(Err(e)),
        };
        if let Err(e) = self.tls.process_new_packets() {
            // rustls queued an alert that tells the server why; send it if
            // the socket takes it now, but do not wait for that.
            let _ = self.poll_flush(cx);
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, e)));
        }
        Poll::Ready(Ok(n))
    }
    // ANCHOR_END: poll_receive

    // ANCHOR: poll_handshake
    /// Drives the handshake to its end: send what rustls wants sent, then
    /// read what it waits for, until it is no longer handshaking. Each step
    /// that would block returns `Pending`, and the reactor wakes us when the
    /// socket is ready.
    fn poll_handshake(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_flush(cx))?;
            if !self.tls.is_handshaking() {
                return Poll::Ready(Ok(()));
            }
            if ready!(self.poll_receive(cx))? == 0 {
                return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
            }
        }
    }
    // ANCHOR_END: poll_handshake

    /// Completes the handshake, or says why it failed.
    pub(crate) async fn handshake(&mut self, host: &str) -> Result<(), FetchError> {
        let result = poll_fn(|cx| self.poll_handshake(cx)).await;
        result.map_err(|e| self.handshake_error(host, e))?;
        if let Some(version) = self.tls.protocol_version() {
            debug!("TLS with {host}: {version:?}");
        }
        Ok(())
    }

    // ANCHOR: handshake_error
    /// Turns a failed handshake into the error the statistic shows. A bad
    /// certificate is its own kind, and is not retried: it will be just as
    /// bad next time.
    fn handshake_error(&self, host: &str, e: io::Error) -> FetchError {
        let Some(tls_error) = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) else {
            return FetchError::Tls(if e.kind() == io::ErrorKind::UnexpectedEof {
                "connection closed during the TLS handshake".into()
            } else {
                format!("TLS handshake failed: {e}")
            });
        };
        match tls_error {
            rustls::Error::InvalidCertificate(reason) => FetchError::Certificate(format!(
                "certificate verify failed for {host}: {}",
                certificate_problem(reason)
            )),
            _ if self.first_bytes.starts_with(b"HTTP/") => {
                FetchError::Tls("TLS handshake failed: the server answered in plain HTTP".into())
            }
            other => FetchError::Tls(format!("TLS handshake failed: {other}")),
        }
    }
    // ANCHOR_END: handshake_error

    // ANCHOR: poll_read
    /// Reads decrypted bytes into `buf`; `Ok(0)` at the end of the stream.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            match self.tls.reader().read(buf) {
                // Zero: the server said close_notify, a clean end.
                Ok(n) => return Poll::Ready(Ok(n)),
                // No plaintext yet: read more records, below.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The socket closed without close_notify. Many servers do
                // that; HTTP framing catches a body cut short.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    debug!("TLS peer closed without close_notify");
                    return Poll::Ready(Ok(0));
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
            // rustls may have something to say first (an alert, a key
            // update). If the socket is full, it goes out with a later call.
            if let Poll::Ready(Err(e)) = self.poll_flush(cx) {
                return Poll::Ready(Err(e));
            }
            ready!(self.poll_receive(cx))?;
        }
    }
    // ANCHOR_END: poll_read

    // ANCHOR: write_all
    /// Encrypts all of `buf` and sends it.
    pub(crate) async fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            // Into rustls's queue, as records; it takes what fits.
            let n = self.tls.writer().write(buf)?;
            buf = &buf[n..];
            poll_fn(|cx| self.poll_flush(cx)).await?;
        }
        Ok(())
    }
    // ANCHOR_END: write_all

    /// Writes what fits in rustls's queue (sending what it held first if it
    /// is full); the records go out with [`poll_send`](Self::poll_send).
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let n = self.tls.writer().write(buf)?;
        if n > 0 || buf.is_empty() {
            return Poll::Ready(Ok(n));
        }
        ready!(self.poll_flush(cx))?;
        Poll::Ready(self.tls.writer().write(buf))
    }

    /// Sends the records rustls has queued.
    pub(crate) fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }

    /// Whether the handshake chose HTTP/2.
    pub(crate) fn alpn_is_h2(&self) -> bool {
        self.tls.alpn_protocol() == Some(b"h2")
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }

    pub(crate) fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.peer_addr()
    }
}

impl Drop for TlsStream {
    /// Says goodbye (`close_notify`) if the socket takes it right now, so
    /// the server sees a clean end rather than a cut connection. Never
    /// waits: a drop cannot.
    fn drop(&mut self) {
        self.tls.send_close_notify();
        let _ = self.poll_flush(&mut Context::from_waker(Waker::noop()));
    }
}

/// What is wrong with a certificate, in words a user can act on. rustls's
/// own names (`CaUsedAsEndEntity`, `BadEncoding`) are for programmers.
fn certificate_problem(reason: &CertificateError) -> String {
    match reason {
        CertificateError::UnknownIssuer => {
            "unknown issuer (no trusted root signed it; see --ca-file)".into()
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            format!("the certificate has expired ({reason})")
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            format!("the certificate is not valid yet; is this machine's clock right? ({reason})")
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            reason.to_string()
        }
        CertificateError::Revoked => "the certificate has been revoked by its issuer".into(),
        CertificateError::BadSignature => {
            "the certificate's signature does not verify: it was not signed by the key it \
             names as its issuer"
                .into()
        }
        CertificateError::BadEncoding => "the certificate is not valid DER (malformed)".into(),
        CertificateError::UnsupportedSignatureAlgorithmContext { .. }
        | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            format!("the certificate is signed with an algorithm we do not accept ({reason})")
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            format!("the certificate is not for TLS servers ({reason})")
        }
        CertificateError::Other(other) => match other.0.downcast_ref::<webpki::Error>() {
            Some(webpki::Error::CaUsedAsEndEntity) => {
                "the server presents a CA certificate as its own. rustls refuses a CA \
                 certificate as the server's (leaf) certificate, which curl and OpenSSL \
                 accept; the server needs a leaf certificate (CA:FALSE) signed by that CA"
                    .into()
            }
            Some(webpki::Error::EndEntityUsedAsCa) => {
                "a certificate in the chain that signed the server's is not a CA \
                 certificate (CA:FALSE), so it may not sign others"
                    .into()
            }
            Some(other) => format!("the certificate was refused: {other}"),
            None => format!("the certificate was refused: {other}"),
        },
        other => format!("the certificate was refused: {other}"),
    }
}
