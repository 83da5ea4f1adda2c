//! An echo server: every byte a client sends comes back to it.
//!
//! One task per connection, all on one thread. A connection that fails (the
//! client resets it, say) ends its own task with a line on stdout and leaves
//! every other connection alone.
//!
//! `--port PORT` chooses the port on 127.0.0.1 (default 7007; 0 picks a free
//! one). The first line on stdout is the address it listens on.

mod server;

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use runtime::{TcpListener, run_until_complete};

const USAGE: &str = "usage: echo [--port PORT]

An echo server on 127.0.0.1, one task per connection. Stop it with Ctrl-C.
  --port PORT   the port to listen on (default 7007; 0 picks a free port)";

fn main() -> ExitCode {
    env_logger::init();
    let port = match parse_args(std::env::args().skip(1)) {
        Ok(Some(port)) => port,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("echo: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
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

/// Parses the command line: `Ok(None)` asks for the help text.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<u16>, String> {
    let mut port = 7007;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--port" => {
                let value = args.next().ok_or("--port needs a value")?;
                port = value
                    .parse()
                    .map_err(|_| format!("--port takes a number from 0 to 65535, not {value:?}"))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(port))
}
