//! HTTP/2 against servers that misbehave on purpose: each is a real server
//! on 127.0.0.1, speaking h2c (HTTP/2 without TLS, `--http2-prior-
//! knowledge`) frame by frame, so that it can break exactly one rule. The
//! client must answer each with a clear error, never a hang or unbounded
//! memory, and a server that behaves must get many requests on one
//! connection.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::thread;
use std::time::Duration;

use stage3_crawler::http::{Client, ClientConfig, FetchError, Protocol, Response};
use url::Url;

// Frame types and flags, as RFC 9113 numbers them.
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PUSH_PROMISE: u8 = 0x5;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const ACK: u8 = 0x1;

/// `:status: 200` as HPACK's static table has it (index 8).
const STATUS_200: &[u8] = &[0x88];

/// One frame as the test server saw it.
#[derive(Clone, Debug)]
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

/// The server's side of one connection.
struct Peer {
    socket: TcpStream,
}

impl Peer {
    /// Reads the client's preface, then answers with `settings`.
    fn accept(mut socket: TcpStream, settings: &[(u16, u32)]) -> Option<Peer> {
        let mut preface = [0u8; 24];
        socket.read_exact(&mut preface).ok()?;
        assert_eq!(&preface, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        let mut peer = Peer { socket };
        let payload: Vec<u8> = settings
            .iter()
            .flat_map(|(id, v)| [id.to_be_bytes().to_vec(), v.to_be_bytes().to_vec()].concat())
            .collect();
        peer.send(SETTINGS, 0, 0, &payload).ok()?;
        Some(peer)
    }

    fn send(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> std::io::Result<()> {
        let len = payload.len();
        let mut frame = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        frame.extend_from_slice(&stream.to_be_bytes());
        frame.extend_from_slice(payload);
        self.socket.write_all(&frame)
    }

    /// The next frame; `None` when the client has gone.
    fn frame(&mut self) -> Option<Frame> {
        let mut head = [0u8; 9];
        self.socket.read_exact(&mut head).ok()?;
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let mut payload = vec![0u8; len];
        self.socket.read_exact(&mut payload).ok()?;
        Some(Frame {
            kind: head[3],
            flags: head[4],
            stream: u32::from_be_bytes([head[5], head[6], head[7], head[8]]),
            payload,
        })
    }

    /// The next request's stream id (its HEADERS), answering SETTINGS on
    /// the way; `None` when the client has gone.
    fn request(&mut self) -> Option<u32> {
        self.request_frame().map(|frame| frame.stream)
    }

    /// The next request's HEADERS frame.
    fn request_frame(&mut self) -> Option<Frame> {
        loop {
            let frame = self.frame()?;
            match frame.kind {
                HEADERS => return Some(frame),
                SETTINGS if frame.flags & ACK == 0 => self.send(SETTINGS, ACK, 0, &[]).ok()?,
                _ => {}
            }
        }
    }

    /// A whole response: `200` and `body`.
    fn answer(&mut self, stream: u32, body: &[u8]) -> std::io::Result<()> {
        self.send(HEADERS, END_HEADERS, stream, STATUS_200)?;
        self.send(DATA, END_STREAM, stream, body)
    }

    /// Every frame until the client closes the connection.
    fn rest(&mut self) -> Vec<Frame> {
        std::iter::from_fn(|| self.frame()).collect()
    }
}

/// A server that runs `serve` on each connection, each in its own thread,
/// and counts the connections.
struct Server {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    /// What the connections' threads reported.
    seen: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(serve: impl Fn(TcpStream, &Mutex<Vec<String>>) + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let serve = Arc::new(serve);
        let (count, log) = (Arc::clone(&connections), Arc::clone(&seen));
        thread::spawn(move || {
            for socket in listener.incoming() {
                let Ok(socket) = socket else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let (serve, log) = (Arc::clone(&serve), Arc::clone(&log));
                thread::spawn(move || serve(socket, &log));
            }
        });
        Server {
            addr,
            connections,
            seen,
        }
    }

    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).unwrap()
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

fn client() -> Client {
    Client::new(ClientConfig {
        http2_prior_knowledge: true,
        // Long enough never to fire in these tests: each case ends by
        // what the server sends, not by a clock.
        read_timeout: Duration::from_secs(60),
        ..ClientConfig::default()
    })
}

/// Fetches each URL in turn on one client.
fn get_each(urls: &[Url]) -> Vec<Result<Response, FetchError>> {
    let client = client();
    runtime::run_until_complete(async {
        let mut results = Vec::new();
        for url in urls {
            results.push(client.get(url).await);
        }
        results
    })
    .unwrap()
}

/// Fetches all the URLs at once on one client.
fn get_together(urls: &[Url]) -> Vec<Result<Response, FetchError>> {
    let client = client();
    runtime::run_until_complete(runtime::gather(urls.iter().map(|url| client.get(url)))).unwrap()
}

/// Gets `/a` then `/b` on one client whose read timeout is 200 ms, then
/// closes it: a first request a server leaves unanswered, and the next.
fn get_twice_after_a_silence(
    server: &Server,
) -> (Result<Response, FetchError>, Result<Response, FetchError>) {
    let client = Client::new(ClientConfig {
        http2_prior_knowledge: true,
        read_timeout: Duration::from_millis(200),
        ..ClientConfig::default()
    });
    runtime::run_until_complete(async {
        let first = client.get(&server.url("/a")).await;
        let second = client.get(&server.url("/b")).await;
        client.close().await;
        (first, second)
    })
    .unwrap()
}

fn error_of(result: &Result<Response, FetchError>) -> String {
    match result {
        Ok(r) => panic!("expected an error, got {}", r.status),
        Err(e) => format!("{}: {e}", e.kind()),
    }
}

#[test]
fn many_requests_share_one_connection_within_the_servers_stream_limit() {
    // The server allows 3 streams at once, and answers once 3 are open
    // (or the last ones have come): the client must never open a fourth.
    let server = Server::start(|socket, seen| {
        let Some(mut peer) = Peer::accept(socket, &[(0x3, 3)]) else {
            return;
        };
        let mut open = Vec::new();
        let mut total = 0;
        while total < 8 {
            let Some(id) = peer.request() else { return };
            open.push(id);
            total += 1;
            seen.lock().unwrap().push(format!("{} open", open.len()));
            if open.len() == 3 || total == 8 {
                for id in open.drain(..) {
                    peer.answer(id, format!("stream {id}").as_bytes()).unwrap();
                }
            }
        }
        peer.rest();
    });
    let urls: Vec<Url> = (0..8).map(|i| server.url(&format!("/{i}"))).collect();
    let results = get_together(&urls);
    let mut bodies: Vec<String> = results
        .into_iter()
        .map(|r| {
            let r = r.unwrap();
            assert_eq!((r.status, r.protocol), (200, Protocol::H2));
            String::from_utf8(r.body).unwrap()
        })
        .collect();
    bodies.sort();
    let want: Vec<String> = [1, 11, 13, 15, 3, 5, 7, 9]
        .iter()
        .map(|id| format!("stream {id}"))
        .collect();
    assert_eq!(bodies, want);
    assert_eq!(server.connections(), 1);
    let most = server.seen().into_iter().max().unwrap();
    assert_eq!(most, "3 open");
}

#[test]
fn a_server_that_never_opens_its_window_still_answers_a_get() {
    // Its window for us is 0 and never grows: a GET sends no DATA, so it
    // needs none.
    let server = Server::start(|socket, seen| {
        let Some(mut peer) = Peer::accept(socket, &[(0x4, 0)]) else {
            return;
        };
        while let Some(frame) = peer.request_frame() {
            seen.lock()
                .unwrap()
                .push(format!("{:#04x}", frame.payload[0]));
            peer.answer(frame.stream, b"fine").unwrap();
        }
    });
    let results = get_each(&[server.url("/"), server.url("/again")]);
    for r in results {
        assert_eq!(r.unwrap().body, b"fine");
    }
    assert_eq!(server.connections(), 1);
    // The first header block opens with a dynamic table size update to 0
    // (0x20); the next starts with its first field, :method GET (0x82).
    assert_eq!(server.seen(), ["0x20", "0x82"]);
}

#[test]
fn a_continuation_flood_ends_the_connection() {
    // CVE-2024-27316's shape: a header block that never ends.
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        let _ = peer.send(HEADERS, 0, id, STATUS_200);
        for _ in 0..100_000 {
            if peer.send(CONTINUATION, 0, id, b"\x00").is_err() {
                break;
            }
        }
    });
    let results = get_each(&[server.url("/")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: HTTP/2 error from the server (ENHANCE_YOUR_CALM): a header block of 65 frames \
         and 65 bytes and no end: a CONTINUATION flood"
    );
}

#[test]
fn a_header_list_past_the_limit_fails_its_stream_and_the_connection_goes_on() {
    // Twenty-one references to one 4,000-byte field in HPACK's dynamic
    // table: a block of 4 KB that decodes to 85 KB.
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        let mut block = STATUS_200.to_vec();
        // A literal with incremental indexing, new name "x-big", then the
        // value's length, 4000, in HPACK's 7-bit-prefix integer.
        block.extend_from_slice(&[0x40, 5]);
        block.extend_from_slice(b"x-big");
        block.extend_from_slice(&[0x7f, 0xa1, 0x1e]);
        block.extend_from_slice(&[b'a'; 4000]);
        // The dynamic table's first entry (index 62), twenty times.
        block.extend_from_slice(&[0xbe; 20]);
        peer.send(HEADERS, END_HEADERS | END_STREAM, id, &block)
            .unwrap();
        while let Some(id) = peer.request() {
            peer.answer(id, b"next").unwrap();
        }
    });
    let results = get_each(&[server.url("/big"), server.url("/next")]);
    // :status is 7 + 3 + 32 bytes; each x-big field 5 + 4000 + 32.
    assert_eq!(42 + 21 * 4037, 84_819);
    assert_eq!(
        error_of(&results[0]),
        "malformed: response header list of 84819 bytes, over the 65536-byte limit"
    );
    assert_eq!(results[1].as_ref().unwrap().body, b"next");
    assert_eq!(server.connections(), 1);
}

#[test]
fn a_dynamic_table_size_update_past_what_we_allowed_is_refused() {
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        // A size update to 8,192 (we allowed 4,096), then :status 200.
        let block = [0x3f, 0xe1, 0x3f, 0x88];
        let _ = peer.send(HEADERS, END_HEADERS | END_STREAM, id, &block);
        peer.rest();
    });
    let results = get_each(&[server.url("/")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: HTTP/2 error from the server (COMPRESSION_ERROR): a header block HPACK cannot \
         decode: a dynamic table size update to 8192 bytes, past the 4096 we allowed"
    );
}

/// A server that answers a request with `flood` copies of one frame.
fn flood(kind: u8, payload: &'static [u8]) -> Server {
    Server::start(move |socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(_) = peer.request() else { return };
        for _ in 0..100_000 {
            if peer.send(kind, 0, 0, payload).is_err() {
                break;
            }
        }
    })
}

#[test]
fn a_settings_flood_ends_the_connection() {
    let server = flood(SETTINGS, b"");
    let results = get_each(&[server.url("/")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: HTTP/2 error from the server (ENHANCE_YOUR_CALM): 1001 frames in a row that \
         carried no response (SETTINGS, PING, WINDOW_UPDATE, frames for closed streams): a flood"
    );
}

#[test]
fn a_ping_flood_ends_the_connection() {
    let server = flood(PING, b"12345678");
    let results = get_each(&[server.url("/")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: HTTP/2 error from the server (ENHANCE_YOUR_CALM): 1001 frames in a row that \
         carried no response (SETTINGS, PING, WINDOW_UPDATE, frames for closed streams): a flood"
    );
}

#[test]
fn a_server_that_never_reads_our_answers_is_stopped() {
    // Each PING comes with a byte of the response, so it is not a flood of
    // idle frames; but the server never reads, and our PING answers pile
    // up. They may not pile up without end.
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        let _ = peer.send(HEADERS, END_HEADERS, id, STATUS_200);
        for _ in 0..10_000_000 {
            if peer.send(PING, 0, 0, b"12345678").is_err() || peer.send(DATA, 0, id, b"x").is_err()
            {
                break;
            }
        }
    });
    let results = get_each(&[server.url("/")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: HTTP/2 error from the server (ENHANCE_YOUR_CALM): the server does not read our \
         answers to its frames"
    );
}

#[test]
fn a_frame_over_the_size_we_allowed_ends_the_connection() {
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        let _ = peer.send(HEADERS, END_HEADERS, id, STATUS_200);
        let _ = peer.send(DATA, END_STREAM, id, &[b'x'; 16_385]);
        peer.rest();
    });
    let results = get_each(&[server.url("/")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: HTTP/2 error from the server (FRAME_SIZE_ERROR): a 16385-byte frame, over the \
         16384 bytes we allow"
    );
}

#[test]
fn data_on_a_finished_stream_is_ignored_and_on_one_never_opened_is_an_error() {
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(first) = peer.request() else { return };
        peer.answer(first, b"one").unwrap();
        // Once more on the stream that ended: ignored.
        peer.send(DATA, END_STREAM, first, b"stale").unwrap();
        let Some(second) = peer.request() else { return };
        peer.answer(second, b"two").unwrap();
        let Some(third) = peer.request() else { return };
        // On a stream the client has not opened: the connection is over.
        let _ = peer.send(DATA, END_STREAM, third + 2, b"who?");
        peer.rest();
    });
    let results = get_each(&[server.url("/1"), server.url("/2"), server.url("/3")]);
    assert_eq!(results[0].as_ref().unwrap().body, b"one");
    assert_eq!(results[1].as_ref().unwrap().body, b"two");
    assert_eq!(
        error_of(&results[2]),
        "http2: HTTP/2 error from the server (PROTOCOL_ERROR): DATA on stream 7, which we never \
         opened"
    );
    assert_eq!(server.connections(), 1);
}

#[test]
fn a_storm_of_resets_fails_each_request_once() {
    let server = Server::start(|socket, seen| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        while let Some(id) = peer.request() {
            seen.lock().unwrap().push(format!("stream {id}"));
            // INTERNAL_ERROR.
            let _ = peer.send(RST_STREAM, 0, id, &2u32.to_be_bytes());
        }
    });
    let urls: Vec<Url> = (0..20).map(|i| server.url(&format!("/{i}"))).collect();
    let results = get_each(&urls);
    for r in &results {
        assert_eq!(
            error_of(r),
            "http2: the server reset the stream (INTERNAL_ERROR)"
        );
    }
    assert_eq!(server.seen().len(), 20);
    assert_eq!(server.connections(), 1);
}

#[test]
fn a_refused_stream_is_sent_again_once() {
    let server = Server::start(|socket, seen| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        while let Some(id) = peer.request() {
            seen.lock().unwrap().push(format!("stream {id}"));
            // REFUSED_STREAM: not processed, safe to send again.
            let _ = peer.send(RST_STREAM, 0, id, &7u32.to_be_bytes());
        }
    });
    let results = get_each(&[server.url("/a"), server.url("/b")]);
    for r in &results {
        assert_eq!(
            error_of(r),
            "http2: the server refused the stream (REFUSED_STREAM) (twice in a row)"
        );
    }
    assert_eq!(
        server.seen(),
        ["stream 1", "stream 3", "stream 5", "stream 7"]
    );
}

#[test]
fn a_goaway_loop_costs_two_connections_and_one_error() {
    // Every connection says GOAWAY before answering anything.
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        if peer.request().is_none() {
            return;
        }
        let _ = peer.send(GOAWAY, 0, 0, &[0; 8]);
        peer.rest();
    });
    let results = get_each(&[server.url("/")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: the server is closing the connection (GOAWAY, NO_ERROR) and did not process \
         the request (twice in a row)"
    );
    assert_eq!(server.connections(), 2);
}

#[test]
fn a_push_although_push_is_disabled_ends_the_connection() {
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        // A promised stream 2, with :method GET, :path /, :scheme http.
        let mut payload = 2u32.to_be_bytes().to_vec();
        payload.extend_from_slice(&[0x82, 0x84, 0x86]);
        let _ = peer.send(PUSH_PROMISE, END_HEADERS, id, &payload);
        peer.rest();
    });
    let results = get_each(&[server.url("/")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: HTTP/2 error from the server (PROTOCOL_ERROR): the server pushed a response \
         (PUSH_PROMISE) although we disabled push"
    );
}

#[test]
fn a_body_over_the_cap_resets_its_stream_and_the_connection_goes_on() {
    let server = Server::start(|socket, seen| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        peer.send(HEADERS, END_HEADERS, id, STATUS_200).unwrap();
        // 20 KB against a cap of 10,000 bytes, and no end: the client
        // must reset the stream itself.
        for _ in 0..2 {
            peer.send(DATA, 0, id, &[b'x'; 10_000]).unwrap();
        }
        loop {
            let Some(frame) = peer.frame() else { return };
            if frame.kind == RST_STREAM {
                seen.lock().unwrap().push(format!(
                    "reset stream {} code {}",
                    frame.stream,
                    u32::from_be_bytes(frame.payload[..4].try_into().unwrap())
                ));
            }
            if frame.kind == HEADERS {
                peer.answer(frame.stream, b"small").unwrap();
            }
        }
    });
    let client = Client::new(ClientConfig {
        http2_prior_knowledge: true,
        max_body: 10_000,
        read_timeout: Duration::from_secs(60),
        ..ClientConfig::default()
    });
    let (big, small) = runtime::run_until_complete(async {
        let big = client.get(&server.url("/big")).await;
        let small = client.get(&server.url("/small")).await;
        (big, small)
    })
    .unwrap();
    assert_eq!(
        error_of(&big),
        "too_large: body larger than the 10000-byte limit (--max-body)"
    );
    assert_eq!(small.unwrap().body, b"small");
    // CANCEL is 8.
    assert_eq!(server.seen(), ["reset stream 1 code 8"]);
    assert_eq!(server.connections(), 1);
}

#[test]
fn requests_waiting_for_a_connection_that_fails_share_its_error() {
    // Eight requests at once to an https origin, which must get one
    // connection: the first connects while the others wait. The server
    // reads the ClientHello and closes, so the handshake fails; the seven that waited
    // fail with the same error, instead of each trying in turn. It closes
    // only once every request has started: a server that closed at once
    // could fail the first handshake before the second request began,
    // and a request that begins after a failure tries again, as it should.
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Mutex::new(released);
    let server = Server::start(move |mut socket, _| {
        // Read the whole ClientHello record first: closing with bytes
        // unread would send a reset instead of an end of stream.
        let mut head = [0u8; 5];
        if socket.read_exact(&mut head).is_ok() {
            let mut hello = vec![0u8; usize::from(u16::from_be_bytes([head[3], head[4]]))];
            let _ = socket.read_exact(&mut hello);
        }
        let _ = released.lock().unwrap().recv();
    });
    let url = Url::parse(&format!("https://127.0.0.1:{}/", server.addr.port())).unwrap();
    let urls = vec![url; 8];
    let client = Client::new(ClientConfig::default());
    let results = runtime::run_until_complete(async {
        let mut all = std::pin::pin!(runtime::gather(urls.iter().map(|url| client.get(url))));
        // One poll starts every request: the first connecting, the others
        // waiting for it.
        let started = std::future::poll_fn(|cx| Poll::Ready(all.as_mut().poll(cx))).await;
        assert!(started.is_pending());
        let _ = release.send(());
        drop(release);
        all.await
    })
    .unwrap();
    for r in &results {
        assert_eq!(
            error_of(r),
            "tls: connection closed during the TLS handshake"
        );
    }
    assert_eq!(server.connections(), 1);
}

#[test]
fn a_stream_that_breaks_the_rules_is_reset_and_the_connection_goes_on() {
    let server = Server::start(|socket, seen| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        // DATA before any HEADERS: a stream error, not a connection's.
        let _ = peer.send(DATA, 0, id, b"body first");
        while let Some(frame) = peer.frame() {
            match frame.kind {
                RST_STREAM => seen.lock().unwrap().push(format!(
                    "reset stream {} code {}",
                    frame.stream,
                    u32::from_be_bytes(frame.payload[..4].try_into().unwrap())
                )),
                HEADERS => peer.answer(frame.stream, b"fine").unwrap(),
                _ => {}
            }
        }
    });
    let results = get_each(&[server.url("/bad"), server.url("/good")]);
    assert_eq!(
        error_of(&results[0]),
        "http2: HTTP/2 error from the server: DATA before the response's headers"
    );
    assert_eq!(results[1].as_ref().unwrap().body, b"fine");
    // PROTOCOL_ERROR is 1: the rule the server broke, so it may stop
    // sending.
    assert_eq!(server.seen(), ["reset stream 1 code 1"]);
    assert_eq!(server.connections(), 1);
}

#[test]
fn a_connection_gone_silent_is_given_up_and_the_next_request_opens_another() {
    // The first connection takes the request and never answers, nor sends
    // anything else; the second answers.
    let server = Server::start(|socket, seen| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let first = seen.lock().unwrap().is_empty();
        seen.lock().unwrap().push("connection".into());
        let Some(id) = peer.request() else { return };
        if first {
            // Silent until the client goes.
            peer.rest();
            return;
        }
        peer.answer(id, b"awake").unwrap();
        peer.rest();
    });
    let (first, second) = get_twice_after_a_silence(&server);
    assert_eq!(error_of(&first), "timeout: read timed out after 200ms");
    assert_eq!(second.unwrap().body, b"awake");
    assert_eq!(server.connections(), 2);
    assert_eq!(server.seen(), ["connection", "connection"]);
}

#[test]
fn a_server_that_never_sends_settings_is_given_up_after_a_read_timeout() {
    // The first connection reads the preface and says nothing at all; the
    // second behaves.
    let server = Server::start(|mut socket, seen| {
        let first = seen.lock().unwrap().is_empty();
        seen.lock().unwrap().push("connection".into());
        if first {
            let mut sink = Vec::new();
            let _ = socket.read_to_end(&mut sink);
            return;
        }
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        while let Some(id) = peer.request() {
            peer.answer(id, b"settled").unwrap();
        }
    });
    let (first, second) = get_twice_after_a_silence(&server);
    assert_eq!(
        error_of(&first),
        "http2: the server sent no SETTINGS within 200ms"
    );
    assert_eq!(second.unwrap().body, b"settled");
    assert_eq!(server.connections(), 2);
}

#[test]
fn a_server_may_not_enable_push_nor_update_a_stream_never_opened() {
    let push = Server::start(|socket, _| {
        if let Some(mut peer) = Peer::accept(socket, &[(0x2, 1)]) {
            peer.rest();
        }
    });
    assert_eq!(
        error_of(&get_each(&[push.url("/")])[0]),
        // The connection ended before the request was sent, so it was sent
        // again on a new one: the same answer twice.
        "http2: HTTP/2 error from the server (PROTOCOL_ERROR): the server sent ENABLE_PUSH 1 \
         (twice in a row)"
    );
    let window = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        let _ = peer.send(0x8, 0, id + 2, &1u32.to_be_bytes());
        peer.rest();
    });
    assert_eq!(
        error_of(&get_each(&[window.url("/")])[0]),
        "http2: HTTP/2 error from the server (PROTOCOL_ERROR): WINDOW_UPDATE on stream 3, \
         which we never opened"
    );
}

#[test]
fn a_header_value_with_a_line_break_is_malformed_and_never_archived() {
    // A value holding CR LF would be a second header line in the head we
    // write for the archive.
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        let mut block = STATUS_200.to_vec();
        // A literal without indexing, new name "x-a", value "1\r\nevil: 1".
        block.extend_from_slice(&[0x00, 3]);
        block.extend_from_slice(b"x-a");
        block.push(10);
        block.extend_from_slice(b"1\r\nevil: 1");
        peer.send(HEADERS, END_HEADERS | END_STREAM, id, &block)
            .unwrap();
        while let Some(id) = peer.request() {
            peer.answer(id, b"clean").unwrap();
        }
    });
    let results = get_each(&[server.url("/evil"), server.url("/clean")]);
    assert_eq!(
        error_of(&results[0]),
        "malformed: a malformed value of header \"x-a\": \"1\\r\\nevil: 1\""
    );
    assert_eq!(results[1].as_ref().unwrap().body, b"clean");
    assert_eq!(server.connections(), 1);
}

#[test]
fn data_in_flight_when_we_reset_a_stream_is_no_flood() {
    // The body passes the cap in its fifth frame, and we reset the stream.
    // The server then sends 1,200 more small frames, within the stream's
    // window, as one that had them in flight would (here it waits for our
    // RST_STREAM, so that they certainly come after it). They are no
    // flood: the next request on the same connection is answered.
    let server = Server::start(|socket, _| {
        let Some(mut peer) = Peer::accept(socket, &[]) else {
            return;
        };
        let Some(id) = peer.request() else { return };
        peer.send(HEADERS, END_HEADERS, id, STATUS_200).unwrap();
        for _ in 0..5 {
            peer.send(DATA, 0, id, &[b'x'; 1024]).unwrap();
        }
        while let Some(frame) = peer.frame() {
            if frame.kind == RST_STREAM {
                break;
            }
        }
        for _ in 0..1200 {
            if peer.send(DATA, 0, id, &[b'x'; 1024]).is_err() {
                return;
            }
        }
        while let Some(id) = peer.request() {
            peer.answer(id, b"next").unwrap();
        }
    });
    let client = Client::new(ClientConfig {
        http2_prior_knowledge: true,
        max_body: 4096,
        read_timeout: Duration::from_secs(60),
        ..ClientConfig::default()
    });
    let (big, next) = runtime::run_until_complete(async {
        let big = client
            .get_capped(&server.url("/big"), stage3_crawler::http::Cap::Cut)
            .await;
        let next = client.get(&server.url("/next")).await;
        (big, next)
    })
    .unwrap();
    let big = big.unwrap();
    assert!(big.truncated);
    assert_eq!(big.body.len(), 4096);
    assert_eq!(next.unwrap().body, b"next");
    assert_eq!(server.connections(), 1);
}
