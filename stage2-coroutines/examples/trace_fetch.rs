//! Fetches one small page with the runtime's trace log on, to watch a task
//! step: spawn, poll, `Pending`, the event, the wake, the poll that returns
//! `Ready`.
//!
//! ```text
//! RUST_LOG=runtime=trace cargo run -p stage2-coroutines --example trace_fetch -- [state-machine|async]
//! ```
//!
//! The page comes from a one-shot server that runs as a task on the same
//! runtime, rather than from the demo site's threads. With everything on one
//! thread, the order of events is the same on every run, so the book can
//! show this trace and explain each line.

use std::error::Error;
use std::io::Write;

use clap::Parser;
use runtime::{TcpListener, TcpStream};
use stage2_coroutines::{Style, fetch};
use url::Url;

const PAGE: &[u8] =
    b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<a href=\"/next\">next</a>\n";

/// Fetches one small page from a server on the same runtime, with the
/// runtime's trace log on (`RUST_LOG=runtime=trace`).
#[derive(Debug, Parser)]
struct Args {
    /// Which fetcher: `state-machine` or `async`.
    #[arg(default_value = "state-machine")]
    style: Style,
}

fn main() -> Result<(), Box<dyn Error>> {
    // Level and message only, as in the book's other traces.
    env_logger::Builder::from_default_env()
        .format(|out, record| writeln!(out, "{} {}", record.level(), record.args()))
        .init();
    let style = Args::parse().style;
    let listener = TcpListener::bind("127.0.0.1:0".parse()?)?;
    let url = Url::parse(&format!("http://{}/", listener.local_addr()?))?;
    // ANCHOR: main
    let response = runtime::run_until_complete(async move {
        runtime::spawn(serve_one(listener));
        runtime::spawn(async move { fetch(&url, style).await }).await
    })??;
    // ANCHOR_END: main
    println!("{}", String::from_utf8_lossy(&response?));
    Ok(())
}

/// Accepts one connection, reads the request head, answers, and closes.
async fn serve_one(mut listener: TcpListener) -> std::io::Result<()> {
    let (mut stream, _) = listener.accept().await?;
    read_head(&mut stream).await?;
    stream.write_all(PAGE).await
}

async fn read_head(stream: &mut TcpStream) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await? {
            0 => break,
            n => head.extend_from_slice(&buf[..n]),
        }
    }
    Ok(())
}
