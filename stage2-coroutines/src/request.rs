//! The request `fetch` sends, and where it sends it.
//!
//! The chapter sends `GET {url} HTTP/1.0` with a `Host` header and reads
//! until the server closes the connection. HTTP/1.0 is what makes that
//! simple: the server may not keep the connection open or send the body in
//! chunks, so the end of the stream is the end of the response. Both
//! fetchers, the hand-written one and the `async fn`, use this.

use std::io;

use url::{Position, Url};

/// A GET request for one URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The host to resolve: a name, an IPv4 address, or `[v6]`.
    pub host: String,
    /// The port, the URL's or its scheme's default.
    pub port: u16,
    /// The request bytes to write.
    pub bytes: Vec<u8>,
}

impl Request {
    /// Builds the request for `url`. Fails for anything but `http://` URLs
    /// with a host: this stage speaks plain HTTP only.
    pub fn get(url: &Url) -> io::Result<Request> {
        if url.scheme() != "http" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "unsupported scheme {}: only http is spoken here",
                    url.scheme()
                ),
            ));
        }
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "URL has no host",
            ));
        };
        // Path and query; `url` never serializes an empty path for http.
        let target = &url[Position::BeforePath..Position::AfterQuery];
        let host_header = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        let bytes = format!("GET {target} HTTP/1.0\r\nHost: {host_header}\r\n\r\n").into_bytes();
        Ok(Request {
            host: host.to_string(),
            port,
            bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(url: &str) -> io::Result<Request> {
        Request::get(&Url::parse(url).unwrap())
    }

    #[test]
    fn path_query_and_host_with_port() {
        let r = get("http://127.0.0.1:8000/pages/a/0.html?from=index&lang=en#frag").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("127.0.0.1", 8000));
        assert_eq!(
            String::from_utf8(r.bytes).unwrap(),
            "GET /pages/a/0.html?from=index&lang=en HTTP/1.0\r\nHost: 127.0.0.1:8000\r\n\r\n"
        );
    }

    #[test]
    fn default_port_is_left_out_of_the_host_header() {
        let r = get("http://xkcd.com").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("xkcd.com", 80));
        assert_eq!(
            String::from_utf8(r.bytes).unwrap(),
            "GET / HTTP/1.0\r\nHost: xkcd.com\r\n\r\n"
        );
    }

    #[test]
    fn ipv6_hosts_keep_their_brackets() {
        let r = get("http://[::1]:81/x").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("[::1]", 81));
        assert!(r.bytes.ends_with(b"Host: [::1]:81\r\n\r\n"));
    }

    #[test]
    fn only_http_is_spoken() {
        let err = get("https://example.com/").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "unsupported scheme https: only http is spoken here"
        );
    }
}
