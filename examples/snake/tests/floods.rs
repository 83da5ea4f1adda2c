//! Two floods, end to end against the `snake` binary, run by hand and
//! reported rather than asserted (what they measure depends on the
//! machine; the mechanisms behind them have exact tests: the runtime's
//! poll budget, and `server`'s player that answers no ping):
//!
//! ```text
//! cargo test --release -p snake --test floods -- --ignored --nocapture --test-threads 1
//! ```
//!
//! - Three players write direction frames as fast as loopback takes them
//!   (reading their own frames and answering pings meanwhile), beside an
//!   honest player: how many of its ticks the honest player gets, its
//!   longest wait between two, and the server's memory.
//! - `--max-players 300`, and 300 players that complete the handshake and
//!   never read again: how soon a newcomer gets in.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

mod common;
use common::{Client, KEY, client_frame, hello, parse};

/// The `snake` binary on a free port, ten ticks a second, with `args`.
fn start_server(args: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snake"))
        .args(["--port", "0", "--rate", "10"])
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.split("http://").nth(1).unwrap().split('/').next();
    (child, addr.unwrap().parse().unwrap())
}

/// The server's resident memory now and at its peak, in MB.
fn memory_mb(child: &Child) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let kib = |key: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (kib("VmRSS:") / 1024, kib("VmHWM:") / 1024)
}

/// A player that writes "up" frames as fast as its socket takes them, in
/// one thread, and reads its frames in another, answering each ping (the
/// two share the writing half, so that a pong never lands inside a frame).
fn flooder(addr: SocketAddr, name: &str, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    let mut client = Client::open(addr, name);
    hello(&mut client);
    let writer = Arc::new(Mutex::new(client.stream.try_clone().unwrap()));
    let burst: Vec<u8> = (0..256)
        .flat_map(|_| client_frame(0x1, b"up", true))
        .collect();
    let flood_writer = Arc::clone(&writer);
    thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if flood_writer.lock().unwrap().write_all(&burst).is_err() {
                return;
            }
            sent.fetch_add(256, Ordering::Relaxed);
        }
    });
    thread::spawn(move || {
        let (mut stream, mut buf) = (client.stream, Vec::new());
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            while let Some((opcode, payload, used)) = parse(&buf) {
                buf.drain(..used);
                if opcode == 0x9 {
                    let pong = client_frame(0xA, &payload, true);
                    if writer.lock().unwrap().write_all(&pong).is_err() {
                        return;
                    }
                }
            }
        }
    });
}

#[test]
#[ignore = "an end-to-end flood, run by hand: see the top of this file"]
fn three_flooders_beside_an_honest_player() {
    let (mut server, addr) = start_server(&[]);
    let mut honest = Client::open(addr, "honest");
    hello(&mut honest);
    honest
        .stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let before = memory_mb(&server);
    let (stop, sent) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    for i in 0..3 {
        flooder(addr, &format!("flooder{i}"), stop.clone(), sent.clone());
    }
    let seconds = 9;
    let (start, mut last) = (Instant::now(), Instant::now());
    let (mut ticks, mut longest, first) = (0, Duration::ZERO, honest.tick().0.tick);
    let mut tick = first;
    while start.elapsed() < Duration::from_secs(seconds) {
        tick = honest.tick().0.tick;
        ticks += 1;
        longest = longest.max(last.elapsed());
        last = Instant::now();
    }
    stop.store(true, Ordering::Relaxed);
    let after = memory_mb(&server);
    println!(
        "three flooders ({} frames sent in {seconds} s) beside an honest player: \
         it got {ticks} ticks (numbers {first}..{tick}, {} expected at 10 a second), \
         its longest wait for one {longest:?}; the server's memory {} MB before, \
         {} MB after, {} MB at its peak",
        sent.load(Ordering::Relaxed),
        seconds * 10,
        before.0,
        after.0,
        after.1,
    );
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
#[ignore = "an end-to-end flood, run by hand: see the top of this file"]
fn a_newcomer_past_300_players_that_never_read() {
    let (mut server, addr) = start_server(&["--max-players", "300"]);
    // Each completes the handshake (its 101 is read) and reads no more.
    let sleepers: Vec<Client> = (0..300)
        .map(|i| Client::open_small(addr, &format!("sleeper{i}")))
        .collect();
    let start = Instant::now();
    let mut refused = 0;
    loop {
        let mut newcomer = Client::raw(addr);
        newcomer.send_head(&format!(
            "GET /ws?name=newcomer HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ));
        let head = newcomer.read_head();
        if head.starts_with("HTTP/1.1 101") {
            break;
        }
        assert!(head.starts_with("HTTP/1.1 503"), "{head}");
        refused += 1;
        thread::sleep(Duration::from_millis(250));
    }
    println!(
        "past 300 players that never read, a newcomer got in after {:.1} s \
         ({refused} tries refused with 503 before)",
        start.elapsed().as_secs_f64()
    );
    drop(sleepers);
    server.kill().unwrap();
    server.wait().unwrap();
}
