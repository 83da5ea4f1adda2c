//! Ctrl-C, on our own runtime: the runtime's [`SignalPipe`] (the
//! self-pipe trick) for SIGINT.
//!
//! The same pipe counts the presses that come later, while the report is
//! written: [`ReportOut`] lets a Ctrl-C end a long report, but only between
//! two lines, and never one that came in the first moment (`timeout`
//! delivers one Ctrl-C twice, microseconds apart).

use std::io::{self, Write};
use std::time::{Duration, Instant};

use runtime::SignalPipe;
use signal_hook::consts::SIGINT;

/// The exit status of a process ended by Ctrl-C, by shell convention
/// (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

// ANCHOR: interrupt
/// The Ctrl-C (SIGINT) watcher.
#[derive(Debug)]
pub struct Interrupt(SignalPipe);

impl Interrupt {
    /// Installs the SIGINT handler.
    pub fn install() -> io::Result<Interrupt> {
        SignalPipe::install(&[SIGINT]).map(Interrupt)
    }

    /// Completes when Ctrl-C is pressed.
    pub async fn wait(&self) {
        // Readable means the handler wrote its byte (or, impossibly, the
        // writer closed): either way, stop waiting.
        let _ = self.0.wait().await;
    }

    /// How many presses arrived since the last call (or since `wait`
    /// returned). Never blocks.
    pub fn presses(&self) -> usize {
        self.0.take()
    }
}
// ANCHOR_END: interrupt

/// How long after the report starts a Ctrl-C is taken as a duplicate of the
/// one that stopped the crawl, and ignored.
const MOMENT: Duration = Duration::from_millis(500);

// ANCHOR: report_out
/// Stdout for the report. While the crawl runs it passes bytes through.
/// Once the report has begun, it checks for Ctrl-C after each complete
/// line: a press in the first moment is ignored, a later one ends the
/// program with what has been written so far, the last line whole.
pub struct ReportOut<W: Write> {
    inner: W,
    interrupt: Option<Interrupt>,
    report_started: Option<Instant>,
}

impl<W: Write> ReportOut<W> {
    /// Passes everything to `inner` until the report begins.
    pub fn new(inner: W) -> ReportOut<W> {
        ReportOut {
            inner,
            interrupt: None,
            report_started: None,
        }
    }

    /// From now on a late Ctrl-C (seen through `interrupt`) may end the
    /// report.
    pub fn report_begins(&mut self, interrupt: Option<Interrupt>) {
        // Presses before now are the one that stopped the crawl, again.
        if let Some(interrupt) = &interrupt {
            interrupt.presses();
        }
        self.interrupt = interrupt;
        self.report_started = Some(Instant::now());
    }

    /// Whether a Ctrl-C says to stop now.
    fn stop_requested(&self) -> bool {
        let (Some(interrupt), Some(started)) = (&self.interrupt, self.report_started) else {
            return false;
        };
        // Read the presses either way, so that an early one is not counted
        // later.
        interrupt.presses() > 0 && started.elapsed() >= MOMENT
    }
}

impl<W: Write> Write for ReportOut<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(end) = buf.iter().rposition(|&b| b == b'\n') else {
            return self.inner.write(buf);
        };
        self.inner.write_all(&buf[..=end])?;
        if self.stop_requested() {
            let _ = self.inner.flush();
            eprintln!("Interrupted again: report cut short");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        Ok(end + 1)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
// ANCHOR_END: report_out
