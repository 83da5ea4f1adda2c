//! Helpers the integration tests share.

#![allow(dead_code)] // each test file uses its own subset

use std::io::{self, BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use stage1_callbacks::{Options, Report, crawl};
use url::Url;

pub fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

/// Crawls from `root` with `timeout`, printing nothing.
pub fn crawl_from(root: &str, timeout: Duration) -> Report {
    let options = Options {
        timeout,
        ..Options::default()
    };
    crawl(url(root), options, |_| {}).unwrap()
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

/// An address where connecting is refused for as long as the returned
/// socket lives: it is bound to a port but not listening.
pub fn refusing_addr() -> (socket2::Socket, SocketAddr) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    socket.bind(&any.into()).unwrap();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    (socket, addr)
}
