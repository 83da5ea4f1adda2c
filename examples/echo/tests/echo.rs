//! Runs the echo server binary and talks to it with plain blocking clients.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

/// A safety net for a broken server, so a failing test ends instead of
/// hanging. Not a timing assertion: a working server answers at once.
const PATIENCE: Duration = Duration::from_secs(20);

/// The server process, its address, and its stdout one line at a time.
struct Server {
    child: Child,
    addr: SocketAddr,
    lines: Receiver<String>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_echo"))
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the echo binary starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = lines.recv_timeout(PATIENCE).expect("a first line");
        let addr = first
            .strip_prefix("echo server listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .parse()
            .unwrap();
        Server { child, addr, lines }
    }

    fn next_line(&self) -> String {
        self.lines
            .recv_timeout(PATIENCE)
            .expect("another line from the server")
    }

    /// The next `n` lines, sorted: connections report in whatever order they
    /// finish.
    fn lines_sorted(&self, n: usize) -> Vec<String> {
        let mut lines: Vec<String> = (0..n).map(|_| self.next_line()).collect();
        lines.sort();
        lines
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A payload that differs per client and per position, so that bytes sent
/// back to the wrong client or out of order cannot pass for right ones.
fn payload(client: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i % 251) as u8 ^ client.wrapping_mul(37))
        .collect()
}

/// Sends `data` from one thread and reads the echo on another (a client that
/// wrote everything before reading could deadlock with a server that is
/// blocked writing back to it), then returns what came back.
fn round_trip(stream: &TcpStream, data: Vec<u8>) -> Vec<u8> {
    let mut writer = stream.try_clone().unwrap();
    let sender = thread::spawn(move || {
        writer.write_all(&data).unwrap();
        writer.shutdown(Shutdown::Write).unwrap();
    });
    let mut back = Vec::new();
    (&*stream).read_to_end(&mut back).unwrap();
    sender.join().unwrap();
    back
}

#[test]
fn concurrent_clients_each_get_exactly_their_bytes() {
    let server = Server::start();
    const LEN: usize = 200 * 1024;
    let clients: Vec<_> = (1..=4u8)
        .map(|id| {
            let stream = TcpStream::connect(server.addr).unwrap();
            let local = stream.local_addr().unwrap();
            let worker = thread::spawn(move || round_trip(&stream, payload(id, LEN)));
            (id, local, worker)
        })
        .collect();
    let mut expected_lines = Vec::new();
    for (id, local, worker) in clients {
        assert!(
            worker.join().unwrap() == payload(id, LEN),
            "client {id} got other bytes"
        );
        expected_lines.push(format!("{local}: connected"));
        expected_lines.push(format!("{local}: closed after echoing {LEN} bytes"));
    }
    expected_lines.sort();
    assert_eq!(server.lines_sorted(expected_lines.len()), expected_lines);
}

#[test]
fn a_client_that_vanishes_mid_stream_does_not_disturb_the_others() {
    let server = Server::start();
    const HALF: usize = 32 * 1024;
    // Two well-behaved clients get halfway through their exchange...
    let mut steady = Vec::new();
    for id in [1u8, 2] {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        let data = payload(id, 2 * HALF);
        stream.write_all(&data[..HALF]).unwrap();
        let mut first_half = vec![0; HALF];
        stream.read_exact(&mut first_half).unwrap();
        assert!(first_half == data[..HALF]);
        assert_eq!(
            server.next_line(),
            format!("{}: connected", stream.local_addr().unwrap())
        );
        steady.push((stream, data));
    }
    // ...then a third sends, reads one byte, and resets the connection.
    let rude = TcpStream::connect(server.addr).unwrap();
    let rude_addr = rude.local_addr().unwrap();
    assert_eq!(server.next_line(), format!("{rude_addr}: connected"));
    (&rude).write_all(&payload(3, HALF)).unwrap();
    (&rude).read_exact(&mut [0u8]).unwrap();
    socket2::SockRef::from(&rude)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(rude);
    // The server notices and reports it. How far it got varies.
    let report = server.next_line();
    let prefix = format!("{rude_addr}: failed after echoing ");
    assert!(
        report.starts_with(&prefix) && report.ends_with(" bytes: connection reset"),
        "{report}"
    );
    // The others carry on as if nothing happened.
    let mut expected_lines = Vec::new();
    for (stream, data) in steady {
        let local = stream.local_addr().unwrap();
        assert!(round_trip(&stream, data[HALF..].to_vec()) == data[HALF..]);
        expected_lines.push(format!("{local}: closed after echoing {} bytes", 2 * HALF));
    }
    // And new clients are still welcome.
    let late = TcpStream::connect(server.addr).unwrap();
    let late_addr = late.local_addr().unwrap();
    assert_eq!(round_trip(&late, b"still here".to_vec()), b"still here");
    expected_lines.push(format!("{late_addr}: connected"));
    expected_lines.push(format!("{late_addr}: closed after echoing 10 bytes"));
    expected_lines.sort();
    assert_eq!(server.lines_sorted(expected_lines.len()), expected_lines);
}

#[test]
fn a_bad_port_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_echo"))
        .args(["--port", "70000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "error: invalid value '70000' for '--port <PORT>': 70000 is not in 0..=65535\n"
        ),
        "{stderr}"
    );
}
