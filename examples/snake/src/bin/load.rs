//! `snake-load`: starts the snake server (the `snake` binary beside this
//! one) and connects bot players to it on loopback, all at once, one task
//! each on our runtime, on `--bot-loops` loops (a bot loop that cannot keep
//! up would measure the bots, not the server). Every bot checks that it receives every tick, in
//! order, and steers now and then. Then it prints what the server's game
//! loop measured (tick intervals and costs), the server's CPU per tick and
//! its memory per player.
//!
//! `cargo build --release -p snake && target/release/snake-load --players 1000`
//!
//! It exits 1 if a bot missed a tick or was dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use runtime::{Loops, TcpStream, run_until_complete, sleep};
use snake::client::Client;
use snake::view::tick_of;

/// Bot players against the snake server, on loopback.
#[derive(Debug, Parser)]
#[command(name = "snake-load")]
struct Args {
    /// Bots, all connected at once.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=20_000))]
    players: u32,
    /// How long to measure, once every bot plays (plus a second to settle).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    seconds: u64,
    /// The server's ticks per second.
    #[arg(long, default_value_t = 10)]
    rate: u32,
    /// The field's width.
    #[arg(long, default_value_t = 400)]
    width: u32,
    /// The field's height.
    #[arg(long, default_value_t = 300)]
    height: u32,
    /// The server's event loops (`snake --loops`): the game's, and the
    /// rest for the players.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    loops: u16,
    /// The bots' event loops, the bots dealt out among them in turn.
    #[arg(long = "bot-loops", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    bot_loops: u16,
}

/// Bots connecting at once, at most.
const CONNECTING: usize = 256;

/// What every bot found, shared by the bot tasks on every bot loop.
#[derive(Default)]
struct Bots {
    connected: AtomicUsize,
    failed: Mutex<Vec<String>>,
    /// Ticks received, by all bots.
    ticks: AtomicU64,
    /// Ticks a bot expected and did not get (a gap in the numbers).
    missed: AtomicU64,
    /// Bots whose connection ended while the test ran.
    dropped: AtomicUsize,
}

impl Bots {
    fn failed(&self) -> Vec<String> {
        self.failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (mut server, addr) = match start_server(&args) {
        Ok(started) => started,
        Err(e) => {
            eprintln!("snake-load: cannot start the server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let pid = server.id();
    let bot_loops = match Loops::start(usize::from(args.bot_loops)) {
        Ok(loops) => loops,
        Err(e) => {
            eprintln!("snake-load: cannot start the bots' loops: {e}");
            let _ = server.kill();
            return ExitCode::FAILURE;
        }
    };
    let outcome = run_until_complete(run(&args, addr, pid, &bot_loops));
    let _ = server.kill();
    let _ = server.wait();
    // The bots end as their connections do.
    bot_loops.join();
    match outcome {
        Ok(Ok(true)) => ExitCode::SUCCESS,
        Ok(Ok(false)) => ExitCode::FAILURE,
        Ok(Err(e)) | Err(e) => {
            eprintln!("snake-load: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The `snake` binary beside this one, on a free port; its address.
fn start_server(args: &Args) -> std::io::Result<(Child, SocketAddr)> {
    let me = std::env::current_exe()?;
    let server: PathBuf = me.with_file_name("snake");
    let mut child = Command::new(&server)
        .args(["--port", "0", "--rate", &args.rate.to_string()])
        .args([
            "--width",
            &args.width.to_string(),
            "--height",
            &args.height.to_string(),
        ])
        .args(["--max-players", &(args.players + 10).to_string()])
        .args(["--loops", &args.loops.to_string()])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        BufReader::new(out).read_line(&mut line)?;
    }
    // "snake: open http://127.0.0.1:PORT/ in a browser ..."
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|addr| addr.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("{}: said {line:?}", server.display())))?;
    Ok((child, addr))
}

async fn run(args: &Args, addr: SocketAddr, pid: u32, loops: &Loops) -> std::io::Result<bool> {
    let bots = Arc::new(Bots::default());
    let rss_empty = rss_bytes(pid);
    let started = Instant::now();
    let players = args.players as usize;
    // A few hundred connecting at a time: ten thousand at once overflow
    // the server's accept queue, and the kernel resets the rest.
    let settled = |bots: &Bots| bots.connected.load(Ordering::Relaxed) + bots.failed().len();
    for i in 0..players {
        while i - settled(&bots) >= CONNECTING {
            sleep(Duration::from_millis(1)).await;
        }
        let on = &loops.handles()[i % loops.len()];
        let bots = Arc::clone(&bots);
        drop(on.spawn_with(move || bot(addr, i, bots)));
    }
    while settled(&bots) < players {
        sleep(Duration::from_millis(10)).await;
    }
    let connect_time = started.elapsed();
    let failed = bots.failed();
    if let Some(first) = failed.first() {
        return Err(std::io::Error::other(format!(
            "{} bots could not connect; the first: {first}",
            failed.len()
        )));
    }
    // Let every bot's first ticks arrive, then measure a window.
    sleep(Duration::from_secs(1)).await;
    let (stats0, cpu0, ticks0, missed0) = (
        get_stats(addr).await?,
        cpu_ns(pid),
        bots.ticks.load(Ordering::Relaxed),
        bots.missed.load(Ordering::Relaxed),
    );
    let rss_full = rss_bytes(pid);
    sleep(Duration::from_secs(args.seconds)).await;
    let (stats1, cpu1, ticks1) = (
        get_stats(addr).await?,
        cpu_ns(pid),
        bots.ticks.load(Ordering::Relaxed),
    );
    let server_ticks =
        stats1["ticks"].as_u64().unwrap_or(0) - stats0["ticks"].as_u64().unwrap_or(0);
    let missed = bots.missed.load(Ordering::Relaxed) - missed0;
    let ms = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
    println!("players:              {players} (all connected in {connect_time:.2?})");
    println!(
        "measured:             {} s, {server_ticks} ticks",
        args.seconds
    );
    println!(
        "tick rate:            {:.3}/s over the server's run (asked: {})",
        ms(&stats1["rate"]),
        args.rate
    );
    println!(
        "tick interval:        p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (last {} ticks)",
        ms(&stats1["interval_ms"]["p50"]),
        ms(&stats1["interval_ms"]["p99"]),
        ms(&stats1["interval_ms"]["max"]),
        server_ticks.min(600)
    );
    println!(
        "tick cost:            p50 {:.2} ms, p99 {:.2} ms (the game and the broadcast)",
        ms(&stats1["tick_cost_ms"]["p50"]),
        ms(&stats1["tick_cost_ms"]["p99"])
    );
    println!(
        "server CPU per tick:  {:.2} ms (everything: the game, encoding, {} sockets)",
        (cpu1.saturating_sub(cpu0)) as f64 / 1e6 / server_ticks.max(1) as f64,
        players
    );
    let sent = |v: &serde_json::Value, key: &str| v[key].as_u64().unwrap_or(0);
    let frames = sent(&stats1, "frames_sent") - sent(&stats0, "frames_sent");
    println!(
        "frame:                {:.0} bytes per player per tick (its view's changes; {:.1} KB/s a player)",
        (sent(&stats1, "bytes_sent") - sent(&stats0, "bytes_sent")) as f64 / frames.max(1) as f64,
        (sent(&stats1, "bytes_sent") - sent(&stats0, "bytes_sent")) as f64 / frames.max(1) as f64
            * f64::from(args.rate)
            / 1e3
    );
    println!(
        "server memory:        {:.1} MB empty, {:.1} MB with the players: {:.1} KB per player",
        rss_empty as f64 / 1e6,
        rss_full as f64 / 1e6,
        rss_full.saturating_sub(rss_empty) as f64 / 1e3 / players as f64
    );
    println!(
        "bots:                 {} ticks received, {missed} missed, {} dropped",
        ticks1 - ticks0,
        bots.dropped.load(Ordering::Relaxed)
    );
    Ok(missed == 0 && bots.dropped.load(Ordering::Relaxed) == 0)
}

/// One bot: joins, then reads every frame; notes a gap in the tick
/// numbers, and turns every ten ticks or so.
async fn bot(addr: SocketAddr, i: usize, bots: Arc<Bots>) {
    let mut client = match Client::connect(addr, &format!("bot{i}")).await {
        Ok(client) => client,
        Err(e) => {
            let mut failed = bots
                .failed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            return failed.push(e.to_string());
        }
    };
    bots.connected.fetch_add(1, Ordering::Relaxed);
    let mut last: Option<u64> = None;
    let turns = ["up", "left", "down", "right", "respawn"];
    loop {
        let (opcode, payload) = match client.frame().await {
            Ok(Some(frame)) => frame,
            Ok(None) | Err(_) => {
                bots.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
        };
        let Some(tick) = (opcode == 2).then(|| tick_of(&payload)).flatten() else {
            continue; // the hello, or a control frame
        };
        if let Some(last) = last {
            bots.missed
                .fetch_add(tick.saturating_sub(last + 1), Ordering::Relaxed);
        }
        last = Some(tick);
        bots.ticks.fetch_add(1, Ordering::Relaxed);
        if (tick + i as u64).is_multiple_of(10) {
            let turn = turns[(tick as usize / 10 + i) % turns.len()];
            if client.send_text(turn).await.is_err() {
                bots.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }
}

/// The server's `/stats`.
async fn get_stats(addr: SocketAddr) -> std::io::Result<serde_json::Value> {
    let mut stream = TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET /stats HTTP/1.1\r\nHost: x\r\n\r\n")
        .await?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).await?;
    let text = String::from_utf8_lossy(&reply);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).map_err(|e| std::io::Error::other(format!("/stats: {e}: {body}")))
}

/// The server's resident memory, from /proc (0 if it cannot be read).
fn rss_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(0)
}

/// CPU time the server's threads (its event loops, and any helper) have
/// used, in nanoseconds, from /proc (0 if it cannot be read).
fn cpu_ns(pid: u32) -> u64 {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    threads
        .flatten()
        .filter_map(|thread| std::fs::read_to_string(thread.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}
