//! The TLS mode: a certificate made at start, and rustls on the same
//! blocking sockets and threads as plain HTTP.
//!
//! The certificate is self-signed, valid for `127.0.0.1` (an IP address SAN)
//! and `localhost` (a DNS SAN), and new every start. No client trusts it
//! until told to: a test hands [`DemoSite::cert_pem`] to the crawler as its
//! `--ca-file`, and a test that does not gets "unknown issuer".
//!
//! The mode is the cargo feature `tls` (on by default). The crawlers that
//! speak only plain http turn it off, so that they do not build rustls,
//! rcgen and ring just to have a demo site: without it, asking for TLS is an
//! error at start, and a connection is always plain.
//!
//! [`DemoSite::cert_pem`]: crate::DemoSite::cert_pem

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

#[cfg(feature = "tls")]
use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
#[cfg(feature = "tls")]
pub(crate) use rustls::ServerConfig;
#[cfg(feature = "tls")]
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
#[cfg(feature = "tls")]
use rustls::{ServerConnection, StreamOwned};

/// Without the `tls` feature there is no server configuration: a type with
/// no values, so the compiler knows every TLS branch is unreachable.
#[cfg(not(feature = "tls"))]
pub(crate) enum ServerConfig {}

/// The first byte of every TLS connection: a handshake record (RFC 8446,
/// section 5.1). No HTTP request starts with it.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// What the server needs to speak TLS, and the certificate to publish.
pub(crate) struct Identity {
    pub config: Arc<ServerConfig>,
    pub cert_pem: String,
}

// ANCHOR: self_signed
/// Makes a fresh key and self-signed certificate, and the rustls server
/// configuration that presents them.
#[cfg(feature = "tls")]
pub(crate) fn self_signed() -> io::Result<Identity> {
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .map_err(io::Error::other)?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "demo-site");
    params.distinguished_name = name;
    let key = KeyPair::generate().map_err(io::Error::other)?;
    let cert = params.self_signed(&key).map_err(io::Error::other)?;
    let private_key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    // An explicit provider: with more than one compiled in (cargo unifies
    // features across a workspace), rustls could not pick one by itself.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], private_key)
        .map_err(io::Error::other)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Identity {
        config: Arc::new(config),
        cert_pem: cert.pem(),
    })
}
// ANCHOR_END: self_signed

#[cfg(not(feature = "tls"))]
pub(crate) fn self_signed() -> io::Result<Identity> {
    Err(io::Error::other(
        "this demo site was built without its `tls` feature",
    ))
}

// ANCHOR: starts_with_tls
/// Whether the client opened with a TLS handshake, without consuming the
/// byte. `None` if it closed or stayed silent until the read timeout.
pub(crate) fn starts_with_tls(stream: &TcpStream) -> Option<bool> {
    let mut first = [0u8; 1];
    loop {
        match stream.peek(&mut first) {
            Ok(0) => return None,
            Ok(_) => return Some(first[0] == TLS_HANDSHAKE_RECORD),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}
// ANCHOR_END: starts_with_tls

/// A connection's byte stream: the socket itself, or TLS over it. Both are
/// blocking, and the server reads and writes them the same way.
pub(crate) enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Stream {
    /// Starts TLS on `tcp`. The handshake itself runs inside the first read.
    #[cfg(not(feature = "tls"))]
    pub(crate) fn tls(config: &Arc<ServerConfig>, _tcp: TcpStream) -> io::Result<Stream> {
        match **config {}
    }

    /// Starts TLS on `tcp`. The handshake itself runs inside the first read.
    #[cfg(feature = "tls")]
    pub(crate) fn tls(config: &Arc<ServerConfig>, tcp: TcpStream) -> io::Result<Stream> {
        let conn = ServerConnection::new(Arc::clone(config)).map_err(io::Error::other)?;
        Ok(Stream::Tls(Box::new(StreamOwned::new(conn, tcp))))
    }

    /// The socket underneath.
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(tcp) => tcp,
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => &tls.sock,
        }
    }

    /// Says "no more data" at the TLS level (`close_notify`), so that the
    /// client can tell the end of a close-delimited body from a cut
    /// connection. Plain TCP has nothing to say: its FIN is the end.
    pub(crate) fn close_notify(&mut self) {
        #[cfg(feature = "tls")]
        if let Stream::Tls(tls) = self {
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.write(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.flush(),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => tls.flush(),
        }
    }
}
