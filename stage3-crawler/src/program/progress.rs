//! The progress line: one line on stderr, redrawn in place, that says how
//! the crawl is going. Shown when stderr is a terminal, or on request.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::crawling::Crawler;

/// How often the line is redrawn.
pub const INTERVAL: Duration = Duration::from_millis(250);

/// Whether a progress line is on the screen now (and must be erased before
/// a log line is written, or the two would share a line).
static SHOWN: AtomicBool = AtomicBool::new(false);

/// `--progress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// When stderr is a terminal.
    Auto,
    /// Even when stderr is a file or a pipe.
    Always,
    /// Not at all.
    Never,
}

impl When {
    /// Whether to show the line: `auto` means when stderr is a terminal.
    pub fn enabled(self) -> bool {
        match self {
            When::Auto => std::io::stderr().is_terminal(),
            When::Always => true,
            When::Never => false,
        }
    }
}

/// What the line says.
pub fn line(crawler: &Crawler) -> String {
    let done = crawler.done_count();
    let secs = crawler.elapsed().as_secs_f64();
    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    format!(
        "{done} done, {} queued, {} in flight, {} errors, {rate:.1} pages/s",
        crawler.todo(),
        crawler.in_flight(),
        crawler.errors()
    )
}

/// What the line says for a crawl on several loops (`--loops`): the
/// records the main thread has taken in, and the work pending across the
/// loops (queued or in flight, as the shards count it).
pub fn line_of_loops(done: usize, errors: usize, pending: isize, secs: f64) -> String {
    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    format!(
        "{done} done, {} queued or in flight, {errors} errors, {rate:.1} pages/s",
        pending.max(0)
    )
}

/// Redraws the line that `line` makes every [`INTERVAL`] until cancelled.
pub async fn run(line: impl Fn() -> String) {
    loop {
        runtime::sleep(INTERVAL).await;
        let mut err = std::io::stderr().lock();
        // Carriage return and "erase to end of line": draw over the last one.
        let _ = write!(err, "\r\x1b[K{}", line());
        let _ = err.flush();
        SHOWN.store(true, Ordering::Relaxed);
    }
}

/// Draws the line a last time, with the crawl's final numbers, and ends
/// it, so that it stays: a crawl over before the first redraw (the demo
/// site takes 50 ms) still shows what it came to.
pub fn finish(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "\r\x1b[K{line}");
    let _ = err.flush();
    SHOWN.store(false, Ordering::Relaxed);
}

/// Erases the line if it is showing. Log lines call this first.
pub fn clear() {
    if SHOWN.swap(false, Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}
