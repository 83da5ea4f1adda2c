//! `redis://HOST:PORT/NAME`: where the server is, and the name under which
//! a program keeps its keys there.

use std::fmt;
use std::io;

use runtime::resolve;

use crate::connection::{Connection, Error};

/// A parsed `redis://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisUrl {
    /// The server's host name or address.
    pub host: String,
    /// The server's port.
    pub port: u16,
    /// The path without its slash: a prefix for the program's keys (a
    /// crawl's name, a stream's name), not a database number.
    pub name: String,
}

impl RedisUrl {
    /// Parses `redis://HOST[:PORT]/NAME`. The error is a sentence for the
    /// command line.
    pub fn parse(text: &str) -> Result<RedisUrl, String> {
        let url = url::Url::parse(text).map_err(|e| format!("{text:?} is not a URL: {e}"))?;
        if url.scheme() != "redis" {
            return Err(format!(
                "{text:?}: only redis:// URLs are supported, not {}://",
                url.scheme()
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("redis URLs with a user or password are not supported yet".into());
        }
        let host = match url.host_str() {
            Some(host) if !host.is_empty() => host.to_string(),
            _ => return Err(format!("{text:?} names no host")),
        };
        let name = url.path().trim_start_matches('/').to_string();
        if name.is_empty() || name.contains('/') {
            return Err(format!(
                "{text:?}: the path must be one name, as in redis://127.0.0.1:6379/jobs"
            ));
        }
        Ok(RedisUrl {
            host,
            port: url.port().unwrap_or(6379),
            name,
        })
    }

    /// Resolves the host (off the loop thread for a name) and connects.
    pub async fn connect(&self) -> Result<Connection, Error> {
        let addrs = resolve(&self.host, self.port).await?;
        let mut last = None;
        for addr in addrs {
            match Connection::connect(addr).await {
                Ok(conn) => return Ok(conn),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            Error::Io(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} has no addresses", self.host),
            ))
        }))
    }
}

impl fmt::Display for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "redis://{}:{}/{}", self.host, self.port, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_a_default_port() {
        assert_eq!(
            RedisUrl::parse("redis://127.0.0.1/jobs"),
            Ok(RedisUrl {
                host: "127.0.0.1".into(),
                port: 6379,
                name: "jobs".into()
            })
        );
        let url = RedisUrl::parse("redis://localhost:7000/crawl1").unwrap();
        assert_eq!(
            (url.port, url.to_string().as_str()),
            (7000, "redis://localhost:7000/crawl1")
        );
    }

    #[test]
    fn bad_urls_are_refused_with_a_reason() {
        for (text, error) in [
            (
                "http://h/x",
                "\"http://h/x\": only redis:// URLs are supported, not http://",
            ),
            (
                "redis://h:1/",
                "\"redis://h:1/\": the path must be one name, as in redis://127.0.0.1:6379/jobs",
            ),
            (
                "redis://h/a/b",
                "\"redis://h/a/b\": the path must be one name, as in redis://127.0.0.1:6379/jobs",
            ),
            (
                "redis://u:secret@h/x",
                "redis URLs with a user or password are not supported yet",
            ),
            (
                "nonsense",
                "\"nonsense\" is not a URL: relative URL without a base",
            ),
        ] {
            assert_eq!(RedisUrl::parse(text), Err(error.to_string()), "{text}");
        }
    }
}
