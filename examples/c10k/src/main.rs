//! C10K: ten thousand concurrent TCP connections, each end held by one
//! thread.
//!
//! Dan Kegel named the problem in 1999, when a thread per connection could
//! not get there. Here a client process opens N connections to a server
//! process; both are this program, and each runs our runtime on one thread
//! with a task per connection. It reports how long opening them all took,
//! and what they cost each process.
//!
//! `--connections N` chooses how many (default 10,000).
//!
//! | module | holds |
//! |---|---|
//! | `server` | the server side, in a second process: one task per connection |
//! | `client` | the client side: N connections from one thread, all held open at once |
//! | `fd_limit` | raising `RLIMIT_NOFILE`, so that there are file descriptors for every socket |
//! | `proc` | what Linux says about this process, from /proc/self |

/// `println!`, wrapped at [`WIDTH`] columns by [`say`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::say(&format!($($arg)*))
    };
}

mod client;
mod fd_limit;
mod proc;
mod server;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use runtime::Runtime;
use server::ServerProcess;

/// Opens N concurrent TCP connections from one thread to a server process
/// that serves them all from one thread.
#[derive(Debug, Parser)]
#[command(name = "c10k")]
struct Args {
    /// How many connections, from 1 to 1000000.
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    connections: u64,
    #[command(subcommand)]
    role: Option<Role>,
}

#[derive(Debug, Subcommand)]
enum Role {
    /// The server process the client starts for itself (not for people).
    #[command(name = "__server", hide = true)]
    Server {
        /// How many connections to serve.
        #[arg(value_parser = clap::value_parser!(u64).range(1..))]
        n: u64,
    },
}

fn main() -> ExitCode {
    env_logger::init();
    let args = Args::parse();
    if let Some(Role::Server { n }) = args.role {
        return server_main(n);
    }
    match client_main(args.connections) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("c10k: {e}");
            ExitCode::FAILURE
        }
    }
}

fn server_main(n: u64) -> ExitCode {
    match server::run(n) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("c10k server: {e}");
            ExitCode::FAILURE
        }
    }
}

fn client_main(wanted: u64) -> std::io::Result<ExitCode> {
    say!(
        "c10k: {} concurrent TCP connections, each end held by one thread",
        grouped(wanted)
    );
    let budget = fd_limit::make_room(wanted);
    for line in &budget.report {
        say!("{line}");
    }
    let n = budget.connections;
    if n == 0 {
        eprintln!("c10k: not enough file descriptors for even one connection");
        return Ok(ExitCode::FAILURE);
    }
    if n < wanted {
        say!(
            "running with {} connections instead of {}",
            grouped(n),
            grouped(wanted)
        );
    }
    let mut server = ServerProcess::start(n)?;
    say!(
        "server: {}, a second copy of this program, one task per accepted connection",
        server.addr
    );
    say!(
        "connecting, at most {} handshakes at a time (the listen backlog holds 128)",
        client::WINDOW
    );
    let runtime = Runtime::new()?;
    let outcome = runtime.block_on(client::open_all(server.addr, n))??;
    if outcome.failed > 0 {
        let first = outcome
            .first_error
            .map_or(String::new(), |e| format!("; the first: {e}"));
        say!(
            "{} of {} connections failed{first}",
            grouped(outcome.failed),
            grouped(n)
        );
        drop(server); // stops it
        return Ok(ExitCode::FAILURE);
    }
    say!(
        "all {} connections open after {:.2?}, each has echoed a byte",
        grouped(outcome.open),
        outcome.elapsed
    );
    report("client", (&outcome.before, &outcome.after), n);
    let (before, after) = server.usage()?;
    report("server", (&before, &after), n);
    say!(
        "(RSS counts what each process holds for its tasks and sockets; the kernel's own socket memory is not in it)"
    );
    // Dropping the runtime cancels the client tasks, which closes their
    // sockets; the server sees each one close.
    drop(runtime);
    server.finish()?;
    say!("closed all {} connections", grouped(n));
    Ok(ExitCode::SUCCESS)
}

fn report(side: &str, (before, after): (&proc::Usage, &proc::Usage), n: u64) {
    let grew = after.rss.saturating_sub(before.rss);
    say!(
        "{side} process: {} thread, {} open file descriptors; RSS grew by {} bytes, {} per connection",
        after.threads,
        grouped(after.descriptors),
        grouped(grew),
        grouped(grew / n.max(1))
    );
}

/// Formats `n` with thousands separators: 20064 -> "20,064".
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The width of the report's lines.
const WIDTH: usize = 88;

/// Prints `text` wrapped at [`WIDTH`] columns, with continuation lines
/// indented by two spaces.
fn say(text: &str) {
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > WIDTH {
            println!("{line}");
            line = String::from("  ");
        } else if !line.is_empty() && line != "  " {
            line.push(' ');
        }
        line.push_str(word);
    }
    println!("{line}");
}
