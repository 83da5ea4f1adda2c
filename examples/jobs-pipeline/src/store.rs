//! The store: a JSON Lines file, one job per line. It stands where the
//! article's second service puts MongoDB.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::job::Job;

/// The file, and the jobs in it.
pub struct Store {
    path: PathBuf,
    file: File,
    jobs: Vec<Job>,
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
        let mut jobs = Vec::new();
        for (number, line) in BufReader::new(&file).lines().enumerate() {
            let line = line?;
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
        })
    }

    /// Appends one job as one line. The line goes to the OS in one write, so
    /// a crash leaves whole lines behind, not half of one.
    ///
    /// This is a blocking call on the loop thread. Appending a short line to
    /// a file takes microseconds, and no selector can wait on a regular file
    /// anyway; a store that could stall (a database across a network) would
    /// be awaited like a socket, or run with `spawn_blocking`.
    pub fn append(&mut self, job: Job) -> io::Result<()> {
        let mut line = serde_json::to_string(&job).map_err(io::Error::other)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
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
