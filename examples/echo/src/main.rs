//! An echo server: every byte a client sends comes back to it.
//!
//! One task per connection, all on one thread. A connection that fails (the
//! client resets it, say) ends its own task with a line on stdout and leaves
//! every other connection alone.
//!
//! `--port PORT` chooses the port on 127.0.0.1 (default 7007; 0 picks a free
//! one). The first line on stdout is the address it listens on.
//!
//! | module | holds |
//! |---|---|
//! | `server` | the accept loop and the per-connection echo task |

mod server;

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use clap::Parser;
use runtime::{TcpListener, run_until_complete};

/// An echo server on 127.0.0.1, one task per connection. Stop it with
/// Ctrl-C.
#[derive(Debug, Parser)]
#[command(name = "echo")]
struct Args {
    /// The port to listen on; 0 picks a free port.
    #[arg(long, value_name = "PORT", default_value_t = 7007)]
    port: u16,
}

fn main() -> ExitCode {
    env_logger::init();
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, Args::parse().port));
    let listener = match TcpListener::bind(addr) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("echo: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(addr) => println!("echo server listening on {addr}"),
        Err(e) => {
            eprintln!("echo: cannot read the listening address: {e}");
            return ExitCode::FAILURE;
        }
    }
    match run_until_complete(server::serve(listener)) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("echo: the runtime failed: {e}");
            ExitCode::FAILURE
        }
    }
}
