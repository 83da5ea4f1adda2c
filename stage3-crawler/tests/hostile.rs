//! Servers that misbehave on purpose, as a hostile web would: they drip,
//! trickle, never finish their trailers, go silent on a reused connection,
//! or send raw UTF-8 in a header. Each must cost the crawler a clear error
//! (or the right URL) in bounded time, never a hang.

mod common;

use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use common::{config, crawl};
use demo_site::testing::read_request;
use stage3_crawler::http::{Client, ClientConfig, FetchError};
use url::Url;

/// A server for one connection: reads a request, then runs `behave` on the
/// stream until it returns (it returns when a write fails: the client has
/// gone).
fn one_connection(
    behave: impl FnOnce(&mut TcpStream) + Send + 'static,
) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let thread = thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        read_request(&mut reader);
        let mut stream = stream;
        behave(&mut stream);
    });
    (addr, thread)
}

/// Writes `bytes` one at a time, `gap` apart, until done or the client
/// has gone. The pause is the server's misbehaviour, not a wait in the
/// test.
fn drip(stream: &mut TcpStream, bytes: &[u8], gap: Duration) {
    for byte in bytes {
        if stream.write_all(std::slice::from_ref(byte)).is_err() {
            return;
        }
        thread::sleep(gap);
    }
}

fn get(addr: SocketAddr, config: ClientConfig) -> (Result<u16, FetchError>, u64) {
    let client = Client::new(config);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let result = runtime::run_until_complete(async { client.get(&url).await })
        .unwrap()
        .map(|r| r.status);
    (result, client.connections_opened())
}

/// A short fetch timeout with a generous read timeout: every byte comes
/// well within the read timeout, so only the fetch timeout can end it.
fn fetch_limited() -> ClientConfig {
    ClientConfig {
        read_timeout: Duration::from_secs(30),
        fetch_timeout: Duration::from_millis(400),
        ..ClientConfig::default()
    }
}

#[test]
fn headers_dripped_a_byte_at_a_time_end_at_the_fetch_timeout() {
    let (addr, server) = one_connection(|s| {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Slow: ".repeat(1000);
        drip(s, &head, Duration::from_millis(20));
    });
    let (result, _) = get(addr, fetch_limited());
    server.join().unwrap();
    assert_eq!(
        result,
        Err(FetchError::FetchTimeout(Duration::from_millis(400)))
    );
}

#[test]
fn a_trickled_body_ends_at_the_fetch_timeout() {
    for (head, body) in [
        // Close-delimited.
        (&b"HTTP/1.1 200 OK\r\n\r\n"[..], b"x".repeat(10_000)),
        // Chunked, one byte per chunk.
        (
            &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"1\r\nx\r\n".repeat(10_000),
        ),
    ] {
        let (addr, server) = one_connection(move |s| {
            s.write_all(head).unwrap();
            drip(s, &body, Duration::from_millis(20));
        });
        let (result, _) = get(addr, fetch_limited());
        server.join().unwrap();
        assert_eq!(
            result,
            Err(FetchError::FetchTimeout(Duration::from_millis(400)))
        );
    }
}

#[test]
fn endless_trailers_hit_the_head_limits() {
    let (addr, server) = one_connection(|s| {
        let start = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n";
        if s.write_all(start).is_err() {
            return;
        }
        while s.write_all(b"X-Trailer: again\r\n").is_ok() {}
    });
    // The fetch timeout is long: the limit, not the clock, must end it.
    let config = ClientConfig {
        fetch_timeout: Duration::from_secs(60),
        ..ClientConfig::default()
    };
    let (result, _) = get(addr, config);
    server.join().unwrap();
    assert_eq!(
        result,
        Err(FetchError::Malformed(
            "trailers longer than 1024 lines or 65536 bytes".into()
        ))
    );
}

#[test]
fn a_timeout_on_a_reused_connection_is_a_real_try() {
    // Answers the first request on a keep-alive connection, then reads the
    // second and says nothing until the client gives up.
    let (addr, server) = one_connection(|s| {
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .unwrap();
        let mut reader = BufReader::new(s.try_clone().unwrap());
        read_request(&mut reader);
        let _ = reader.read_to_end(&mut Vec::new());
    });
    let client = Client::new(ClientConfig {
        read_timeout: Duration::from_millis(200),
        ..ClientConfig::default()
    });
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let (first, second) = runtime::run_until_complete(async {
        let first = client.get(&url).await.map(|r| r.status);
        (first, client.get(&url).await.map(|r| r.status))
    })
    .unwrap();
    assert_eq!(first, Ok(200));
    assert_eq!(
        second,
        Err(FetchError::ReadTimeout(Duration::from_millis(200)))
    );
    // No silent second try on a fresh connection.
    assert_eq!(client.connections_opened(), 1);
    drop(client);
    server.join().unwrap();
}

#[test]
fn a_raw_utf8_location_is_requested_as_utf8() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (seen_tx, seen) = mpsc::channel();
    let server = thread::spawn(move || {
        for _ in 0..2 {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let line = read_request(&mut reader).unwrap_or_default();
            let mut stream = stream;
            let response: &[u8] = if line.starts_with("GET / ") {
                b"HTTP/1.1 301 Moved\r\nLocation: /ok/caf\xc3\xa9\r\n\
                  Content-Length: 0\r\nConnection: close\r\n\r\n"
            } else {
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\
                  Content-Length: 2\r\nConnection: close\r\n\r\nok"
            };
            stream.write_all(response).unwrap();
            seen_tx.send(line).unwrap();
        }
    });
    let root = format!("http://{addr}/");
    let c = crawl(std::slice::from_ref(&root), config());
    server.join().unwrap();
    let lines: Vec<String> = seen.try_iter().collect();
    assert_eq!(
        lines,
        ["GET / HTTP/1.1", "GET /ok/caf%C3%A9 HTTP/1.1"],
        "{:?}",
        c.stats
    );
    assert_eq!(
        c.stat(&root).next_url.as_deref(),
        Some(format!("http://{addr}/ok/caf%C3%A9").as_str())
    );
}
