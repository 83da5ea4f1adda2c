//! `cargo run -p snake`: the multiplayer snake server. Open the URL it
//! prints in a browser; every tab is a player. Ctrl-C (or SIGTERM) stops
//! it cleanly: every player is told the server is going away (1001).

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use runtime::{SignalPipe, run_until_complete};
use signal_hook::consts::{SIGINT, SIGTERM};
use snake::game;
use snake::server::{self, Options, Server};

/// A multiplayer snake game server on our runtime: the page at /, the
/// players' WebSockets at /ws, the game loop's numbers at /stats.
#[derive(Debug, Parser)]
#[command(name = "snake")]
struct Args {
    /// The port to listen on, on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Ticks per second.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    rate: u32,
    /// The field's width, in cells.
    #[arg(long, default_value_t = game::Config::default().width as u32,
          value_parser = clap::value_parser!(u32).range(10..=1000))]
    width: u32,
    /// The field's height, in cells.
    #[arg(long, default_value_t = game::Config::default().height as u32,
          value_parser = clap::value_parser!(u32).range(10..=1000))]
    height: u32,
    /// Players at most: those in the game, and those joining. A player the
    /// game drops for not reading frees its place at once. Past it, a new
    /// player gets 503 "the game is full". Each player is a socket: the
    /// open-file limit (`ulimit -n`) must allow as many.
    #[arg(long = "max-players", default_value_t = Options::default().max_players as u32,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    max_players: u32,
    /// The seed of the game's randomness (food, where snakes start).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Event loops, each on a thread of its own. With more than one, the
    /// game keeps the first and the players are spread over the others,
    /// each building and sending its own players' frames.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    loops: u16,
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = Args::parse();
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let listener = match server::listen(addr) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("snake: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Before the banner: whoever reads it may press Ctrl-C at once.
    let signals = match SignalPipe::install(&[SIGINT, SIGTERM]) {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("snake: cannot handle Ctrl-C: {e}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(addr) => println!("snake: open http://{addr}/ in a browser (a tab per player)"),
        Err(e) => {
            eprintln!("snake: {e}");
            return ExitCode::FAILURE;
        }
    }
    let options = Options {
        tick: Duration::from_secs(1) / args.rate,
        max_players: args.max_players as usize,
        game: game::Config {
            width: args.width as usize,
            height: args.height as usize,
            ..game::Config::default()
        },
        seed: args.seed,
        loops: usize::from(args.loops),
        ..Options::default()
    };
    // ANCHOR: stop
    let stop = async {
        if let Err(e) = signals.wait().await {
            log::error!("waiting for Ctrl-C failed: {e}");
            return std::future::pending().await;
        }
        println!("snake: shutting down: telling every player, then stopping");
        // A second Ctrl-C from here on ends the process at once: the
        // handlers go with the pipe.
        drop(signals);
    };
    match run_until_complete(Server::new(options).serve(listener, stop)) {
        Ok(stopped) => {
            println!(
                "snake: stopped; {} told the server is going away, {} cut off",
                players(stopped.players_closed),
                connections(stopped.cut_off)
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("snake: the runtime failed: {e}");
            ExitCode::FAILURE
        }
    }
    // ANCHOR_END: stop
}

fn players(n: usize) -> String {
    if n == 1 {
        "1 player".into()
    } else {
        format!("{n} players")
    }
}

fn connections(n: usize) -> String {
    if n == 1 {
        "1 connection".into()
    } else {
        format!("{n} connections")
    }
}
