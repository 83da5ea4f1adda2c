//! The floor of a scaling row: what a site can serve when every URL is
//! known in advance, fetched by a plain client with no crawl to do.
//!
//! A crawler that scales perfectly cannot beat this: it must fetch the
//! same pages over the same connections, and also parse them, find their
//! links, deduplicate and queue. So a scaling row that misses its target
//! can say whether the crawler is the limit (far from the floor) or the
//! site is (near it). The client is blocking, a thread per connection,
//! keep-alive, `per_host` connections to each host: the crawler's
//! `--per-host`.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// What the floor fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fetched {
    /// Responses read.
    pub responses: usize,
    /// Body bytes read.
    pub bytes: u64,
    /// From the first connection to the last response.
    pub took: Duration,
}

/// Fetches every one of `urls` (`http://HOST:PORT/PATH`), `per_host`
/// connections to each host at once.
pub fn fetch_all(urls: &[String], per_host: usize) -> io::Result<Fetched> {
    let mut by_host: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for url in urls {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| io::Error::other(format!("the floor fetches http only: {url}")))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path = if path.is_empty() { "/" } else { path };
        by_host
            .entry(authority.to_string())
            .or_default()
            .push(path.to_string());
    }
    let started = Instant::now();
    let mut threads = Vec::new();
    for (authority, paths) in by_host {
        let paths = Arc::new(paths);
        let next = Arc::new(AtomicUsize::new(0));
        for _ in 0..per_host.max(1) {
            let (authority, paths, next) =
                (authority.clone(), Arc::clone(&paths), Arc::clone(&next));
            threads.push(thread::spawn(move || connection(&authority, &paths, &next)));
        }
    }
    let mut fetched = Fetched {
        responses: 0,
        bytes: 0,
        took: Duration::ZERO,
    };
    for thread in threads {
        let (responses, bytes) = thread
            .join()
            .map_err(|_| io::Error::other("a floor thread panicked"))??;
        fetched.responses += responses;
        fetched.bytes += bytes;
    }
    fetched.took = started.elapsed();
    Ok(fetched)
}

/// One keep-alive connection to `authority`, fetching the next of `paths`
/// until none is left; reconnects when the server closes.
fn connection(authority: &str, paths: &[String], next: &AtomicUsize) -> io::Result<(usize, u64)> {
    let (mut responses, mut bytes) = (0, 0);
    let mut stream: Option<(TcpStream, BufReader<TcpStream>)> = None;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(path) = paths.get(i) else {
            return Ok((responses, bytes));
        };
        if stream.is_none() {
            let s = TcpStream::connect(authority)?;
            s.set_nodelay(true)?;
            stream = Some((s.try_clone()?, BufReader::new(s)));
        }
        let Some((writer, reader)) = stream.as_mut() else {
            continue;
        };
        write!(writer, "GET {path} HTTP/1.1\r\nHost: {authority}\r\n\r\n")?;
        let (body, keep_alive) = read_response(reader)?;
        responses += 1;
        bytes += body;
        if !keep_alive {
            stream = None;
        }
    }
}

/// Reads one response; its body's length, and whether the connection
/// stays open. Content-Length or chunked, as the demo site answers.
fn read_response(reader: &mut impl BufRead) -> io::Result<(u64, bool)> {
    let mut line = String::new();
    let (mut length, mut chunked, mut keep_alive) = (None, false, true);
    reader.read_line(&mut line)?;
    if !line.starts_with("HTTP/1.1 ") {
        return Err(io::Error::other(format!("not a response: {line:?}")));
    }
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse::<u64>().ok(),
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "connection" => keep_alive = !value.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    if !chunked {
        let n = length.unwrap_or(0);
        io::copy(&mut reader.take(n), &mut io::sink())?;
        return Ok((n, keep_alive));
    }
    let mut total = 0;
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let size = u64::from_str_radix(line.trim_end().split(';').next().unwrap_or(""), 16)
            .map_err(|e| io::Error::other(format!("bad chunk size {line:?}: {e}")))?;
        // The chunk, then its CRLF (or, after the last, the trailer's end).
        io::copy(&mut reader.take(size), &mut io::sink())?;
        line.clear();
        reader.read_line(&mut line)?;
        total += size;
        if size == 0 {
            return Ok((total, keep_alive));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_framings() {
        let mut both: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc\
            HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
            2\r\nab\r\n1\r\nc\r\n0\r\n\r\n";
        assert_eq!(read_response(&mut both).unwrap(), (3, true));
        assert_eq!(read_response(&mut both).unwrap(), (3, false));
        assert!(both.is_empty());
    }

    #[test]
    fn fetches_every_page_of_the_demo_site() {
        let site = demo_site::DemoSite::start(demo_site::SiteConfig {
            pages: 50,
            ..demo_site::SiteConfig::default()
        })
        .unwrap();
        let urls: Vec<String> = site.expected().into_iter().map(|e| e.url).collect();
        let fetched = fetch_all(&urls, 4).unwrap();
        assert_eq!(fetched.responses, urls.len());
        site.shutdown();
    }
}
