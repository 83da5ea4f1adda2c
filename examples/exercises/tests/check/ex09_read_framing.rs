use std::io;
use std::io::Write;
use std::net::TcpListener;
use std::sync::mpsc;

use demo_site::DemoSite;
use exercises::ex09_read_framing::{Conn, Head};
use url::Url;

use crate::common::{GUARD, block_on, blocking_get};

/// The body of `path`, fetched by the tests' own HTTP/1.0 client.
fn body_of(site: &DemoSite, path: &str) -> Vec<u8> {
    blocking_get(&Url::parse(&site.url(path)).unwrap()).2
}

#[test]
fn three_responses_on_one_connection() {
    let site = DemoSite::start_default().unwrap();
    let (addr, host) = (site.addr(), site.addr().to_string());
    let paths = [
        "/framing/content-length.html",
        "/missing.html",
        "/framing/empty.html",
    ];
    let got = block_on("three gets", async {
        let mut conn = Conn::connect(addr).await?;
        let mut got = Vec::new();
        for path in paths {
            got.push(conn.get(&host, path).await?);
        }
        io::Result::Ok(got)
    })
    .expect("a get failed");
    let statuses: Vec<u16> = got.iter().map(|(head, _)| head.status).collect();
    assert_eq!(statuses, [200, 404, 200]);
    for ((head, body), path) in got.iter().zip(paths) {
        assert_eq!(head.content_length, body.len(), "{path}");
        assert!(*body == body_of(&site, path), "the body of {path} differs");
    }
    let counters = site.counters();
    assert_eq!(
        counters.connections,
        1 + 3,
        "one connection for Conn, three for the checks"
    );
}

#[test]
fn pipelined_responses_are_split_where_their_lengths_say() {
    let site = DemoSite::start_default().unwrap();
    let addr = site.addr();
    let paths = [
        "/framing/content-length.html",
        "/pages/a/0.html",
        "/framing/empty.html",
    ];
    let got = block_on("pipelined gets", async {
        let mut conn = Conn::connect(addr).await?;
        // All three requests in one write: the responses arrive back to
        // back, and one `fill` may read the end of one and the start of the
        // next.
        let requests: String = paths
            .iter()
            .map(|p| format!("GET {p} HTTP/1.1\r\nHost: {addr}\r\n\r\n"))
            .collect();
        conn.send(requests.as_bytes()).await?;
        let mut got = Vec::new();
        for _ in paths {
            let head = conn.read_head().await?;
            let body = conn.read_body(head.content_length).await?;
            got.push((head, body));
        }
        io::Result::Ok(got)
    })
    .expect("a response failed");
    for ((head, body), path) in got.iter().zip(paths) {
        assert_eq!(head.status, 200, "{path}");
        assert!(*body == body_of(&site, path), "the body of {path} differs");
    }
}

#[test]
fn a_chunked_response_is_refused_by_name() {
    let site = DemoSite::start_default().unwrap();
    let (addr, host) = (site.addr(), site.addr().to_string());
    let err = block_on("a chunked get", async {
        Conn::connect(addr)
            .await?
            .get(&host, "/framing/chunked.html")
            .await
    })
    .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    assert!(
        err.to_string().contains("chunked"),
        "the error should say why: {err}"
    );
}

#[test]
fn a_connection_that_closes_early_is_unexpected_eof() {
    let site = DemoSite::start_default().unwrap();
    let (addr, host) = (site.addr(), site.addr().to_string());
    for path in ["/fault/drop", "/fault/short-body"] {
        let result: io::Result<(Head, Vec<u8>)> = block_on(path, async {
            Conn::connect(addr).await?.get(&host, path).await
        });
        let err = result.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{path}: {err}");
    }
}

/// Two whole responses, back to back, as one write puts them on the wire.
const TWO_RESPONSES: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst\
HTTP/1.1 404 Not Found\r\nContent-Length: 6\r\n\r\nsecond";

#[test]
fn the_next_response_stays_in_the_buffer() {
    // A plain-thread server that sends two responses in one write and
    // closes: the first `fill` reads both, so the second response has to
    // come out of the buffer, not the socket.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (written_tx, written) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.write_all(TWO_RESPONSES).unwrap();
        written_tx.send(()).unwrap();
        // `conn` drops here: end of stream after the two responses.
    });
    let (first, second) = block_on("two responses from one read", async {
        let mut conn = Conn::connect(addr).await?;
        // Both responses are on their way before the first read.
        runtime::spawn_blocking(move || written.recv_timeout(GUARD))
            .await
            .unwrap()
            .expect("the server never wrote its responses");
        let head = conn.read_head().await?;
        let first = (head.clone(), conn.read_body(head.content_length).await?);
        let second = async {
            let head = conn.read_head().await?;
            let body = conn.read_body(head.content_length).await?;
            io::Result::Ok((head, body))
        }
        .await;
        io::Result::Ok((first, second))
    })
    .expect("the first response failed");
    assert_eq!(
        first,
        (
            Head {
                status: 200,
                content_length: 5
            },
            b"first".to_vec()
        ),
        "a body ends where its Content-Length says"
    );
    assert_eq!(
        second.expect("the second response, already in the buffer, was lost"),
        (
            Head {
                status: 404,
                content_length: 6
            },
            b"second".to_vec()
        )
    );
}
