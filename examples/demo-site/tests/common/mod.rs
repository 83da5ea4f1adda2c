//! A minimal blocking HTTP/1.1 client for the tests, on std's TcpStream.
//!
//! It reports *how* each body was framed, because several tests are about
//! exactly that.
#![allow(dead_code)] // Each test binary uses a different subset.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

/// A blocking TLS client connection.
pub type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// Generous, but keeps a broken server from hanging the test suite.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    ContentLength,
    Chunked,
    /// Neither header: the body ran until the server closed the connection.
    Close,
    /// A HEAD response: no body whatever the headers say.
    NoBody,
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub framing: Framing,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One client connection; several requests can be sent over it. Plain TCP
/// unless made with [`Client::connect_tls`].
pub struct Client<S = TcpStream> {
    reader: BufReader<S>,
}

fn tcp(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    stream
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        Client {
            reader: BufReader::new(tcp(addr)),
        }
    }

    pub fn stream(&self) -> &TcpStream {
        self.reader.get_ref()
    }
}

/// A TLS client configuration that trusts only `cert_pem`.
pub fn tls_config(cert_pem: &str) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(cert_pem.as_bytes()).expect("a PEM certificate"))
        .expect("a usable root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

impl Client<TlsStream> {
    /// Connects over TLS to `addr` as `name`, trusting only `cert_pem`. The
    /// handshake runs with the first request.
    pub fn connect_tls(addr: SocketAddr, name: &str, cert_pem: &str) -> Client<TlsStream> {
        let name = ServerName::try_from(name.to_string()).expect("a server name");
        let conn = ClientConnection::new(tls_config(cert_pem), name).expect("a TLS client");
        Client {
            reader: BufReader::new(StreamOwned::new(conn, tcp(addr))),
        }
    }
}

impl<S: Read + Write> Client<S> {
    pub fn send(&mut self, raw: &[u8]) {
        let stream = self.reader.get_mut();
        stream
            .write_all(raw)
            .and_then(|()| stream.flush())
            .expect("send request");
    }

    /// Sends `raw` where that must fail (a TLS handshake the client
    /// refuses), and returns the error.
    pub fn send_fails(&mut self, raw: &[u8]) -> io::Error {
        let stream = self.reader.get_mut();
        stream
            .write_all(raw)
            .and_then(|()| stream.flush())
            .expect_err("the send should fail")
    }

    /// Sends `GET path HTTP/1.1` (keep-alive) and reads the response.
    pub fn get(&mut self, path: &str) -> Response {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes());
        self.read_response(false).expect("read response")
    }

    pub fn read_response(&mut self, head_only: bool) -> io::Result<Response> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let mut parts = line.trim_end().splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        if !version.starts_with("HTTP/1.") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("bad status line {line:?}"),
            ));
        }
        let status = parts
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, line.clone()))?;
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("header has a colon");
            headers.push((name.to_string(), value.trim().to_string()));
        }
        let mut response = Response {
            status,
            headers,
            body: Vec::new(),
            framing: Framing::NoBody,
        };
        if head_only {
            return Ok(response);
        }
        if response
            .header("transfer-encoding")
            .is_some_and(|te| te.eq_ignore_ascii_case("chunked"))
        {
            response.framing = Framing::Chunked;
            response.body = self.read_chunked()?;
        } else if let Some(len) = response.header("content-length") {
            let len: usize = len.parse().expect("numeric content-length");
            response.framing = Framing::ContentLength;
            response.body = vec![0; len];
            self.reader.read_exact(&mut response.body)?;
        } else {
            response.framing = Framing::Close;
            self.reader.read_to_end(&mut response.body)?;
        }
        Ok(response)
    }

    fn read_chunked(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let mut size_line = String::new();
            self.reader.read_line(&mut size_line)?;
            let size = usize::from_str_radix(size_line.trim_end(), 16)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk)?;
            assert_eq!(&chunk[size..], b"\r\n", "chunk ends with CRLF");
            if size == 0 {
                return Ok(body);
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }

    /// Reads until the server closes the connection. Returns the bytes, and
    /// whether the close was clean (end-of-stream rather than an error).
    pub fn read_to_close(&mut self) -> (Vec<u8>, bool) {
        let mut bytes = Vec::new();
        let clean = self.reader.read_to_end(&mut bytes).is_ok();
        (bytes, clean)
    }

    /// True if the server has closed the connection (reads end-of-stream or
    /// fail), false if more bytes arrive.
    pub fn is_closed_by_server(&mut self) -> bool {
        let mut byte = [0u8; 1];
        !matches!(self.reader.read(&mut byte), Ok(n) if n > 0)
    }
}

/// GET over a fresh HTTP/1.1 connection.
pub fn get(addr: SocketAddr, path: &str) -> Response {
    Client::connect(addr).get(path)
}

/// Sends raw bytes on a fresh connection and returns everything the server
/// sends until it closes the connection.
pub fn raw_exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut client = Client::connect(addr);
    client.send(request);
    client.read_to_close().0
}

/// What an HTML parser sees in a document: this is the independent check on
/// the link lists the site records while writing its pages.
#[derive(Debug, Default)]
pub struct ParsedHtml {
    /// `(element name, href)` for every element with an `href`, except `<base>`.
    pub hrefs: Vec<(String, String)>,
    /// The first `<base href>`.
    pub base: Option<String>,
    /// The first `<meta charset>`.
    pub meta_charset: Option<String>,
}

/// Parses a body with html5ever, decoding it lossily (links are ASCII).
pub fn parse_html(body: &[u8]) -> ParsedHtml {
    use html5ever::tendril::TendrilSink;
    use markup5ever_rcdom::{Handle, NodeData, RcDom};

    fn walk(node: &Handle, out: &mut ParsedHtml) {
        if let NodeData::Element { name, attrs, .. } = &node.data {
            let element = name.local.to_string();
            for attr in attrs.borrow().iter() {
                let attr_name = &*attr.name.local;
                let value = attr.value.to_string();
                match (element.as_str(), attr_name) {
                    ("base", "href") => {
                        out.base.get_or_insert(value);
                    }
                    ("meta", "charset") => {
                        out.meta_charset.get_or_insert(value);
                    }
                    (_, "href") => out.hrefs.push((element.clone(), value)),
                    _ => {}
                }
            }
        }
        for child in node.children.borrow().iter() {
            walk(child, out);
        }
    }

    let text = String::from_utf8_lossy(body);
    let dom = html5ever::parse_document(RcDom::default(), Default::default()).one(text.as_ref());
    let mut out = ParsedHtml::default();
    walk(&dom.document, &mut out);
    out
}

/// Just the hrefs, in document order.
pub fn hrefs(body: &[u8]) -> Vec<String> {
    parse_html(body).hrefs.into_iter().map(|(_, h)| h).collect()
}
