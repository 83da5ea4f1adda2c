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
use std::time::{Duration, Instant};

use runtime::{gather, run_until_complete, sleep};

const USAGE: &str = "usage: gather [--unit-ms MS]

Runs two tasks that sleep 1 and 2 units at the same time.
  --unit-ms MS   the length of one unit in milliseconds, 1 to 60000 (default 1000)";

/// The longest unit we accept: a minute is plenty for a demonstration, and a
/// cap keeps `Instant + duration` far from overflowing.
const MAX_UNIT_MS: u64 = 60_000;

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
    let unit = match parse_args(std::env::args().skip(1)) {
        Ok(Some(unit)) => unit,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("gather: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
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

/// Parses the command line: `Ok(None)` asks for the help text.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Duration>, String> {
    let mut unit_ms = 1000;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--unit-ms" => {
                let value = args.next().ok_or("--unit-ms needs a value")?;
                unit_ms = value
                    .parse::<u64>()
                    .ok()
                    .filter(|ms| (1..=MAX_UNIT_MS).contains(ms))
                    .ok_or_else(|| {
                        format!(
                            "--unit-ms takes a whole number from 1 to {MAX_UNIT_MS}, not {value:?}"
                        )
                    })?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(Duration::from_millis(unit_ms)))
}
