//! Servers and helpers the integration tests share.

#![allow(dead_code)] // each test file uses its own subset

use std::io::{self, BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use stage2_coroutines::{Options, Report, Style, crawl};
use url::Url;

pub fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

/// Crawls from `root` on a fresh runtime.
pub fn crawl_from(root: &str, style: Style, timeout: Duration) -> Report {
    let options = Options { style, timeout };
    runtime::run_until_complete(crawl(url(root), options, |_| {})).unwrap()
}

/// Reads one request head from `stream`.
fn read_head(stream: &TcpStream) -> io::Result<()> {
    let mut lines = BufReader::new(stream).lines();
    while lines
        .next()
        .transpose()?
        .is_some_and(|line| !line.is_empty())
    {}
    Ok(())
}

/// A server for one connection that reads the request and then resets the
/// connection (SO_LINGER 0) instead of answering.
pub fn resetting_server() -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        read_head(&stream).unwrap();
        socket2::SockRef::from(&stream)
            .set_linger(Some(Duration::ZERO))
            .unwrap();
    });
    (addr, server)
}

/// A server for one connection that reads the request, says so on the first
/// channel, never answers, and reports on the second channel what its next
/// read returned: `Ok(0)` is the client closing the connection.
pub struct SilentServer {
    pub addr: SocketAddr,
    pub got_request: mpsc::Receiver<()>,
    pub next_read: mpsc::Receiver<io::Result<usize>>,
}

pub fn silent_server() -> SilentServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (request_tx, got_request) = mpsc::channel();
    let (read_tx, next_read) = mpsc::channel();
    thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        read_head(&stream).unwrap();
        request_tx.send(()).unwrap();
        let mut buf = [0u8; 64];
        let _ = read_tx.send(stream.read(&mut buf));
    });
    SilentServer {
        addr,
        got_request,
        next_read,
    }
}

/// An address where connecting is refused for as long as the returned
/// socket lives: it is bound to a port but not listening.
pub fn refusing_addr() -> (socket2::Socket, SocketAddr) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    socket.bind(&any.into()).unwrap();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    (socket, addr)
}
