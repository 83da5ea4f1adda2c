//! Two tasks sleep at the same time: the first example of an asyncio
//! multiplayer-game tutorial, which runs `asyncio.gather(my_task(1),
//! my_task(2))`.
//!
//! Each task prints a line when it starts sleeping and another when it wakes.
//! Because a sleeping task gives the thread back to the executor, the second
//! task starts before the first one ends, and the whole run takes as long as
//! the longer sleep, not the sum of both.
//!
//! `--unit-ms MS` sets the length of one unit (default 1000, so the sleeps
//! are 1 s and 2 s); the tests use a few milliseconds.

use std::process::ExitCode;

use clap::Parser;
use std::time::{Duration, Instant};

use runtime::{gather, run_until_complete, sleep};

/// Runs two tasks that sleep 1 and 2 units at the same time.
#[derive(Debug, Parser)]
#[command(name = "gather")]
struct Args {
    /// The length of one unit in milliseconds, 1 to 60000. A minute is
    /// plenty for a demonstration, and the cap keeps `Instant + duration`
    /// far from overflowing.
    #[arg(long = "unit-ms", value_name = "MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    unit_ms: u64,
}

// ANCHOR: my_task
/// The article's `my_task`: announce, sleep, announce.
async fn my_task(duration: Duration) {
    println!("start sleeping for {duration:?}");
    sleep(duration).await;
    println!("end sleeping for {duration:?}");
}
// ANCHOR_END: my_task

fn main() -> ExitCode {
    env_logger::init();
    let unit = Duration::from_millis(Args::parse().unit_ms);
    // ANCHOR: main
    let (short, long) = (unit, 2 * unit);
    let started = Instant::now();
    // Both futures run inside one task; neither blocks the other, because
    // `sleep` returns Pending and hands the thread back to the executor.
    if let Err(e) = run_until_complete(gather([my_task(short), my_task(long)])) {
        eprintln!("gather: the runtime failed: {e}");
        return ExitCode::FAILURE;
    }
    let total = started.elapsed();
    println!(
        "total: {total:.2?} for sleeps of {short:?} and {long:?} \
         (one after the other would take {:?})",
        short + long
    );
    // ANCHOR_END: main
    ExitCode::SUCCESS
}
