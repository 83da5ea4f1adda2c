//! What the crawlers' tests share besides the site itself.
//!
//! Peers that misbehave at the TCP level: a port that refuses connections,
//! a server that resets, a server that never answers. (The site serves the
//! HTTP-level faults under `/fault/`; these are the ones an HTTP server
//! cannot send from a route.) And a runner for a crawler's binary, with the
//! parser of the chapter's closing line that stages 1 and 2 print.

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

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

/// Reads one request head from `reader` and returns its request line
/// (`GET /path HTTP/1.1`, without the CRLF); `None` when the client closed
/// the connection (or broke it) before sending one. For the small
/// misbehaving servers that tests write themselves.
pub fn read_request(reader: &mut impl BufRead) -> Option<String> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return None;
    }
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
        line.clear();
    }
    Some(request_line.trim_end().to_string())
}

/// A server for one connection that reads the request and then resets the
/// connection (SO_LINGER 0) instead of answering.
pub fn resetting_server() -> io::Result<(SocketAddr, JoinHandle<io::Result<()>>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let server = thread::spawn(move || {
        let (stream, _) = listener.accept()?;
        read_head(&stream)?;
        socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO))
    });
    Ok((addr, server))
}

/// A server for one connection that reads the request, says so on
/// `got_request`, never answers, and reports on `next_read` what its next
/// read returned: `Ok(0)` is the client closing the connection.
pub struct SilentServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Receives `()` once the request has been read.
    pub got_request: mpsc::Receiver<()>,
    /// Receives the result of the read after the request.
    pub next_read: mpsc::Receiver<io::Result<usize>>,
}

/// Starts a [`SilentServer`].
pub fn silent_server() -> io::Result<SilentServer> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let (request_tx, got_request) = mpsc::channel();
    let (read_tx, next_read) = mpsc::channel();
    thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        if read_head(&stream).is_ok() && request_tx.send(()).is_ok() {
            let mut buf = [0u8; 64];
            let _ = read_tx.send(stream.read(&mut buf));
        }
    });
    Ok(SilentServer {
        addr,
        got_request,
        next_read,
    })
}

/// An address where connecting is refused for as long as the returned
/// socket lives: it is bound to a port but not listening.
pub fn refusing_addr() -> io::Result<(socket2::Socket, SocketAddr)> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    socket.bind(&any.into())?;
    let addr = socket
        .local_addr()?
        .as_socket()
        .ok_or_else(|| io::Error::other("not an IP socket"))?;
    Ok((socket, addr))
}

/// Runs the binary at `path` with `args` to the end, without `RUST_LOG`
/// from the caller's environment (so stderr holds only what the program
/// itself says).
pub fn run(path: impl AsRef<OsStr>, args: &[&str]) -> io::Result<Output> {
    command(path, args).output()
}

/// The command [`run`] runs.
fn command(path: impl AsRef<OsStr>, args: &[&str]) -> Command {
    let mut command = Command::new(path);
    command.args(args).env_remove("RUST_LOG");
    command
}

/// Runs the binary at `path` as [`run`] does, with the runtime's recorder
/// on (`RUNTIME_TRACE`), and returns the warnings of its lints: lost
/// wakers, busy self-wakes, tasks left behind. Slow polls are left out
/// (their threshold is raised to an hour): whether a poll takes 10 ms
/// depends on the machine, and the runtime's own tests check that lint on
/// a paused clock.
pub fn run_with_lints(path: impl AsRef<OsStr>, args: &[&str]) -> io::Result<(Output, Vec<String>)> {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let trace = std::env::temp_dir().join(format!("lints-{}-{n}.json", std::process::id()));
    let output = command(path, args)
        .env("RUNTIME_TRACE", &trace)
        .env("RUNTIME_SLOW_POLL_MS", "3600000")
        .output()?;
    let json = std::fs::read_to_string(&trace)
        .map_err(|e| io::Error::other(format!("no trace at {}: {e}", trace.display())))?;
    let _ = std::fs::remove_file(&trace);
    if !json.contains("\"traceEvents\"") {
        return Err(io::Error::other("the trace has no events"));
    }
    // The recorder writes one event per line; a warning keeps its text in
    // "message".
    let warnings = json
        .lines()
        .filter(|line| line.contains("\"cat\":\"warning\""))
        .map(|line| {
            line.split_once("\"message\":")
                .map_or(line, |(_, message)| message.trim_end_matches(['}', ',']))
                .to_string()
        })
        .collect();
    Ok((output, warnings))
}

/// The bytes as text; a test fails on output that is not UTF-8.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The chapter's closing line (`N URLs fetched in 0.1s, achieved
/// concurrency = C`) with its time replaced by `X.X` and its concurrency by
/// `C`, and the concurrency, which varies from run to run. `None` for a line
/// of another shape.
pub fn closing_line(line: &str) -> Option<(String, usize)> {
    let (head, concurrency) = line.rsplit_once(" = ")?;
    let (count, time) = head.split_once(" URLs fetched in ")?;
    let (secs, rest) = time.split_once('s')?;
    secs.parse::<f64>().ok()?;
    Some((
        format!("{count} URLs fetched in X.Xs{rest} = C"),
        concurrency.parse().ok()?,
    ))
}
