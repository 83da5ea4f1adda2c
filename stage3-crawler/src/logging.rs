//! The crawler's log: every message goes to the `log` crate (the binary
//! sends it to stderr), and, when a test asks, into a list it can read.
//!
//! The chapter's tests capture the `crawling` logger to check phrases such
//! as "redirect limit reached". The `log` crate allows one logger per
//! process, and tests run in parallel threads, so a global capture would mix
//! crawls. Each crawler keeps its own list instead.

use std::cell::RefCell;
use std::fmt;

pub use log::Level;

/// One captured message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// How serious it is.
    pub level: Level,
    /// What happened.
    pub message: String,
}

impl fmt::Display for LogLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.level, self.message)
    }
}

/// Where a crawler's messages go.
#[derive(Debug, Default)]
pub struct CrawlLog {
    captured: RefCell<Option<Vec<LogLine>>>,
}

/// Every message is logged under this target, so `RUST_LOG=crawling=debug`
/// selects them.
pub const TARGET: &str = "crawling";

impl CrawlLog {
    /// From now on, also keep every message, at every level.
    pub fn capture(&self) {
        self.captured.borrow_mut().get_or_insert_with(Vec::new);
    }

    /// The messages kept since [`capture`](Self::capture).
    pub fn lines(&self) -> Vec<LogLine> {
        self.captured.borrow().clone().unwrap_or_default()
    }

    /// Logs `message` at `level`.
    pub fn log(&self, level: Level, message: fmt::Arguments<'_>) {
        log::log!(target: TARGET, level, "{message}");
        if let Some(lines) = self.captured.borrow_mut().as_mut() {
            lines.push(LogLine {
                level,
                message: message.to_string(),
            });
        }
    }

    /// Logs `message` as an error.
    pub fn error(&self, message: fmt::Arguments<'_>) {
        self.log(Level::Error, message);
    }

    /// Logs `message` as a warning.
    pub fn warn(&self, message: fmt::Arguments<'_>) {
        self.log(Level::Warn, message);
    }

    /// Logs `message` at info level.
    pub fn info(&self, message: fmt::Arguments<'_>) {
        self.log(Level::Info, message);
    }

    /// Debug messages are built only if someone will read them.
    pub fn debug(&self, message: fmt::Arguments<'_>) {
        if log::log_enabled!(target: TARGET, Level::Debug) || self.captured.borrow().is_some() {
            self.log(Level::Debug, message);
        }
    }
}
