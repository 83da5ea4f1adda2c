//! `watch NN`: check, then wait for the learner to save, then check again,
//! as rustlings' `watch` does.
//!
//! The files are polled, a few times a second, rather than watched with
//! inotify through a crate: it is portable, costs nothing a person could
//! notice, and a save that leaves the bytes as they were (an editor's
//! "save" with no change) does not re-run the tests.

use std::hash::{DefaultHasher, Hasher};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(300);

/// Files whose contents are watched.
pub struct Watched {
    files: Vec<PathBuf>,
    seen: u64,
}

impl Watched {
    /// Watches `files` from their contents now.
    pub fn new(files: Vec<PathBuf>) -> Watched {
        let seen = contents(&files);
        Watched { files, seen }
    }

    /// Whether a file's contents differ from when this last said so (a
    /// file appearing or disappearing counts).
    pub fn changed(&mut self) -> bool {
        let now = contents(&self.files);
        let changed = now != self.seen;
        self.seen = now;
        changed
    }

    /// Returns once a file has changed, or a line comes from `lines` (the
    /// learner pressed Enter), whichever is first.
    pub fn wait_or_line(&mut self, lines: &Receiver<String>) -> Woken {
        loop {
            if self.changed() {
                return Woken::Saved;
            }
            // A person's save: a third of a second is prompt.
            match lines.recv_timeout(POLL) {
                Ok(line) => return Woken::Line(line),
                Err(RecvTimeoutError::Timeout) => {}
                // No terminal (input closed): saves only.
                Err(RecvTimeoutError::Disconnected) => thread::sleep(POLL),
            }
        }
    }
}

/// What ended a wait.
#[derive(Debug, PartialEq, Eq)]
pub enum Woken {
    /// A watched file changed.
    Saved,
    /// The learner typed this line.
    Line(String),
}

/// A hash of every file's bytes (or of its absence).
fn contents(files: &[PathBuf]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for file in files {
        match std::fs::read(file) {
            Ok(bytes) => {
                hasher.write_u8(1);
                hasher.write_usize(bytes.len());
                hasher.write(&bytes);
            }
            Err(_) => hasher.write_u8(0),
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_that_changes_the_bytes_is_seen_once() {
        let dir = std::env::temp_dir().join(format!("exercises-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ex10_select.rs");
        std::fs::write(&file, "todo!()").unwrap();
        let mut watched = Watched::new(vec![file.clone()]);
        assert!(!watched.changed());
        // Saved with the same bytes: nothing to check again.
        std::fs::write(&file, "todo!()").unwrap();
        assert!(!watched.changed());
        std::fs::write(&file, "done").unwrap();
        assert!(watched.changed());
        assert!(!watched.changed(), "seen once");
        // A wait returns at once for a change already made, with no
        // terminal to read lines from.
        std::fs::remove_file(&file).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        drop(tx);
        assert_eq!(watched.wait_or_line(&rx), Woken::Saved);
        // A line typed, with nothing saved; then a save, with a line
        // waiting too: the save comes first.
        let (tx, rx) = std::sync::mpsc::channel();
        tx.send("h".to_string()).unwrap();
        assert_eq!(watched.wait_or_line(&rx), Woken::Line("h".into()));
        std::fs::write(&file, "again").unwrap();
        tx.send(String::new()).unwrap();
        assert_eq!(watched.wait_or_line(&rx), Woken::Saved);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
