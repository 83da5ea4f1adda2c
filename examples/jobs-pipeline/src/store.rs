//! The store: a JSON Lines file, one job per line. It stands where the
//! article's second service puts MongoDB.
//!
//! The file holds whole lines only, whatever happens to a write: a line
//! the disk could take only part of (a full disk) is cut off again at
//! once, and a torn last line left by a crash is cut off when the store
//! opens, so that a job is in the file entirely or not at all.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::job::Job;

/// The file, and the jobs in it.
pub struct Store {
    path: PathBuf,
    file: File,
    jobs: Vec<Job>,
    /// The file's length: where its last whole line ends.
    len: u64,
    /// Why the store takes no more jobs, once a failed write could not be
    /// undone (the file may end in part of a line).
    broken: Option<String>,
}

impl Store {
    /// Opens the store at `path`, creating it if needed, and loads the jobs
    /// already there. A line that is not a job is an error naming the line:
    /// we would rather stop than silently skip stored work.
    pub fn open(path: &Path) -> io::Result<Store> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .map_err(|e| {
                io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display()))
            })?;
        let mut bytes = Vec::new();
        (&file).read_to_end(&mut bytes)?;
        // A last line without its newline is a write a crash (or a full
        // disk, before this program cut such lines itself) left half done:
        // its job never got its 202. Cut it, as stage 3's journal does.
        let whole = bytes
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |end| end + 1);
        if whole < bytes.len() {
            log::warn!(
                "{}: cut a torn last line of {} bytes (a write that never finished)",
                path.display(),
                bytes.len() - whole
            );
            file.set_len(whole as u64)?;
            bytes.truncate(whole);
        }
        let mut jobs = Vec::new();
        for (number, line) in bytes.split(|&b| b == b'\n').enumerate() {
            let line = String::from_utf8_lossy(line);
            if line.trim().is_empty() {
                continue;
            }
            let job = serde_json::from_str(&line).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} line {}: not a job: {e}", path.display(), number + 1),
                )
            })?;
            jobs.push(job);
        }
        Ok(Store {
            path: path.to_path_buf(),
            file,
            jobs,
            len: whole as u64,
            broken: None,
        })
    }

    /// Appends one job as one line. When it returns `Ok`, the line is in
    /// the file: written to the OS, which survives this process's crash
    /// (not the machine's; `sync` at shutdown flushes it to the disk). If
    /// the disk takes only part of the line (full, or over a file size
    /// limit), the part is cut off again and the error returned: the job is
    /// not stored, and the file still ends with a whole line.
    ///
    /// This is a blocking call on the loop thread. Appending a short line to
    /// a file takes microseconds, and no selector can wait on a regular file
    /// anyway; a store that could stall (a database across a network) would
    /// be awaited like a socket, or run with `spawn_blocking`.
    pub fn append(&mut self, job: Job) -> io::Result<()> {
        if let Some(why) = &self.broken {
            return Err(io::Error::other(why.clone()));
        }
        let mut line = serde_json::to_string(&job).map_err(io::Error::other)?;
        line.push('\n');
        if let Err(e) = self.file.write_all(line.as_bytes()) {
            // Part of the line may be in the file: take it out again.
            if let Err(undo) = self.file.set_len(self.len) {
                self.broken = Some(format!(
                    "a failed write could not be undone ({undo}); restart the service, \
                     which cuts the torn line"
                ));
            }
            return Err(e);
        }
        self.len += line.len() as u64;
        self.jobs.push(job);
        Ok(())
    }

    /// Flushes the file to the disk: called once, at shutdown.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_all()
    }

    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// The highest id stored, so that a restarted service does not reuse ids.
    pub fn last_id(&self) -> u64 {
        self.jobs.iter().map(|job| job.id).max().unwrap_or(0)
    }

    /// The id for the next new job: one past the highest stored. `None`
    /// when that is `u64::MAX` (a file written by hand or by another
    /// program): there is no id left, and adding one would wrap round to
    /// ids already stored.
    pub fn next_id(&self) -> Option<u64> {
        self.last_id().checked_add(1)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("jobs-pipeline-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    }

    #[test]
    fn jobs_survive_a_reopen() {
        let path = temp("reopen.jsonl");
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.last_id(), 0);
        let job = Job {
            id: 4,
            name: "x".into(),
            priority: 1,
        };
        store.append(job.clone()).unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.jobs(), [job]);
        assert_eq!(store.last_id(), 4);
        assert_eq!(store.next_id(), Some(5));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn the_highest_id_leaves_no_next_one() {
        let path = temp("full.jsonl");
        std::fs::write(
            &path,
            "{\"id\":18446744073709551614,\"name\":\"a\",\"priority\":0}\n",
        )
        .unwrap();
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.next_id(), Some(u64::MAX));
        store
            .append(Job {
                id: u64::MAX,
                name: "b".into(),
                priority: 0,
            })
            .unwrap();
        assert_eq!(store.next_id(), None);
        // Reopened, the file loads (its jobs can still be listed) and still
        // has no id to give.
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!((store.jobs().len(), store.next_id()), (2, None));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_torn_last_line_is_cut_and_the_next_job_follows_whole_lines() {
        let path = temp("torn.jsonl");
        std::fs::write(&path, "{\"id\":1,\"name\":\"a\",\"priority\":0}\n{\"id").unwrap();
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.jobs().len(), 1);
        let job = Job {
            id: 2,
            name: "b".into(),
            priority: 1,
        };
        store.append(job).unwrap();
        drop(store);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"id\":1,\"name\":\"a\",\"priority\":0}\n{\"id\":2,\"name\":\"b\",\"priority\":1}\n"
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_corrupt_line_is_an_error_naming_it() {
        let path = temp("corrupt.jsonl");
        std::fs::write(
            &path,
            "{\"id\":1,\"name\":\"a\",\"priority\":0}\n\nnot json\n",
        )
        .unwrap();
        let err = Store::open(&path).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(
            err.to_string()
                .ends_with("line 3: not a job: expected ident at line 1 column 2"),
            "{err}"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
