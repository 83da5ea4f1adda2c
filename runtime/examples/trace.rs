//! The smallest program worth tracing: one task that sleeps, awaited by the
//! main future. Run it with the runtime's trace log on:
//!
//! ```text
//! RUST_LOG=runtime=trace cargo run -p runtime --example trace
//! ```
//!
//! The book's "Tracing the Runtime" appendix walks through its output.

use std::io::Write;
use std::time::Duration;

use runtime::{Runtime, sleep, spawn};

fn main() -> std::io::Result<()> {
    // No timestamps: the book shows this output, and it must not change
    // from run to run except where the timings really differ.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("runtime=trace"))
        .format(|buf, record| writeln!(buf, "{:<5} {}", record.level(), record.args()))
        .init();
    // ANCHOR: main
    let rt = Runtime::new()?;
    let answer = rt.block_on(async {
        let napper = spawn(async {
            sleep(Duration::from_millis(10)).await;
            42
        });
        napper.await
    })?;
    println!("the task returned {answer:?}");
    // ANCHOR_END: main
    Ok(())
}
