//! Sorting more lines than memory should hold: an external merge sort, as
//! `sort(1)` does it. The text report lists every URL, sorted, and a crawl
//! of a million pages has a million lines; kept in memory until the end,
//! they were the biggest thing the crawler held.
//!
//! Lines are collected in memory up to a budget. Past it, they are sorted
//! and written to a temporary file, a *run*, and collection starts again.
//! At the end the runs and what is still in memory are merged: a heap holds
//! the smallest line not yet taken from each, so the merge needs one line
//! per run in memory, however long the runs are.
//!
//! Each line is sorted by its key, a prefix of it (the URL, for the
//! report), then by the whole line. A run is written as length-prefixed
//! records, so that a line may hold any bytes, a newline included. Its file
//! is removed from the directory as soon as it is created: it lives only as
//! long as it is open, and a crash leaves nothing behind.
//!
//! The disk is a way to save memory, not a place the lines need to be. If a
//! run cannot be written (no temporary directory, a full disk, a read-only
//! `TMPDIR`), the lines stay in memory from then on and the failure is
//! logged once: a report that costs more memory beats a report lost at the
//! end of a crawl of hours.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

/// What a line costs in memory beyond its bytes: its `String` and key
/// length in the vector.
const OVERHEAD: usize = 32;

/// One line and the length of its key.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    key_len: usize,
    line: String,
}

impl Entry {
    fn key(&self) -> &str {
        &self.line[..self.key_len]
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key()
            .cmp(other.key())
            .then_with(|| self.line.cmp(&other.line))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Lines to be read back sorted, in at most about `budget` bytes of memory
/// while they are collected.
#[derive(Debug)]
pub struct SortedLines {
    budget: usize,
    held: Vec<Entry>,
    held_bytes: usize,
    /// Sorted runs, written and not yet read.
    runs: Vec<File>,
    /// Where runs are written: the temporary directory.
    dir: PathBuf,
    /// Why runs can no longer be written, once one could not: the lines
    /// stay in memory from then on.
    no_disk: Option<String>,
}

impl SortedLines {
    /// Collects lines in memory up to `budget` bytes at a time.
    pub fn new(budget: usize) -> SortedLines {
        SortedLines::in_dir(budget, std::env::temp_dir())
    }

    /// The same, writing its runs in `dir`.
    pub fn in_dir(budget: usize, dir: PathBuf) -> SortedLines {
        SortedLines {
            budget,
            held: Vec::new(),
            held_bytes: 0,
            runs: Vec::new(),
            dir,
            no_disk: None,
        }
    }

    #[cfg(test)]
    /// Why the lines are kept in memory past the budget, if they are: a
    /// run could not be written.
    pub fn no_disk(&self) -> Option<&str> {
        self.no_disk.as_deref()
    }

    /// Adds `line`, whose first `key_len` bytes are its sort key. Never
    /// fails: if a run cannot be written, the lines stay in memory.
    pub fn push(&mut self, key_len: usize, line: String) -> io::Result<()> {
        let key_len = key_len.min(line.len());
        let key_len = (0..=key_len)
            .rev()
            .find(|&i| line.is_char_boundary(i))
            .unwrap_or(0);
        self.held_bytes += line.len() + OVERHEAD;
        self.held.push(Entry { key_len, line });
        if self.held_bytes > self.budget && self.no_disk.is_none() {
            self.held.sort_unstable();
            match self.spill() {
                Ok(file) => {
                    self.runs.push(file);
                    self.held.clear();
                    self.held_bytes = 0;
                }
                Err(e) => {
                    log::warn!(
                        "cannot write the report's sorted lines to disk ({e}): \
                         keeping them in memory"
                    );
                    self.no_disk = Some(e.to_string());
                }
            }
        }
        Ok(())
    }

    #[cfg(test)]
    /// How many runs have gone to disk so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Writes what is held, sorted, as a run, and returns it; on an error
    /// the lines are still held.
    fn spill(&self) -> io::Result<File> {
        let mut file = BufWriter::new(temporary_file(&self.dir)?);
        for entry in &self.held {
            for n in [entry.key_len, entry.line.len()] {
                let n = u32::try_from(n).map_err(|_| io::Error::other("a line over 4 GB"))?;
                file.write_all(&n.to_le_bytes())?;
            }
            file.write_all(entry.line.as_bytes())?;
        }
        let mut file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        Ok(file)
    }

    /// Every line pushed, in order of key, then line.
    pub fn into_sorted(mut self) -> io::Result<Merge> {
        self.held.sort_unstable();
        let mut sources: Vec<Source> = self
            .runs
            .into_iter()
            .map(|file| Source::Run(BufReader::with_capacity(64 * 1024, file)))
            .collect();
        sources.push(Source::Held(self.held.into_iter()));
        let mut heap = BinaryHeap::new();
        for (i, source) in sources.iter_mut().enumerate() {
            if let Some(entry) = source.next()? {
                heap.push(Reverse((entry, i)));
            }
        }
        Ok(Merge { sources, heap })
    }
}

/// A run on disk, or the lines still in memory.
enum Source {
    Run(BufReader<File>),
    Held(std::vec::IntoIter<Entry>),
}

impl Source {
    fn next(&mut self) -> io::Result<Option<Entry>> {
        let reader = match self {
            Source::Held(entries) => return Ok(entries.next()),
            Source::Run(reader) => reader,
        };
        let mut lens = [0u8; 8];
        match reader.read_exact(&mut lens) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let key_len = u32::from_le_bytes([lens[0], lens[1], lens[2], lens[3]]) as usize;
        let len = u32::from_le_bytes([lens[4], lens[5], lens[6], lens[7]]) as usize;
        let mut bytes = vec![0u8; len];
        reader.read_exact(&mut bytes)?;
        let line = String::from_utf8(bytes)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a run is corrupt"))?;
        Ok(Some(Entry { key_len, line }))
    }
}

/// The merge of the runs and the held lines: an iterator of lines.
pub struct Merge {
    sources: Vec<Source>,
    heap: BinaryHeap<Reverse<(Entry, usize)>>,
}

impl Iterator for Merge {
    type Item = io::Result<String>;

    fn next(&mut self) -> Option<io::Result<String>> {
        let Reverse((entry, i)) = self.heap.pop()?;
        match self.sources[i].next() {
            Ok(Some(next)) => self.heap.push(Reverse((next, i))),
            Ok(None) => {}
            Err(e) => {
                self.heap.clear();
                return Some(Err(e));
            }
        }
        Some(Ok(entry.line))
    }
}

impl std::fmt::Debug for Merge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Merge")
            .field("sources", &self.sources.len())
            .finish()
    }
}

/// A new file in `dir`, opened for reading and writing and already
/// removed from the directory.
fn temporary_file(dir: &std::path::Path) -> io::Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, AtomicOrdering::Relaxed);
    let path: PathBuf = dir.join(format!("stage3-report-{}-{n}.run", std::process::id()));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(budget: usize, lines: &[(&str, &str)]) -> (Vec<String>, usize) {
        let mut sorter = SortedLines::new(budget);
        for (key, rest) in lines {
            sorter.push(key.len(), format!("{key}{rest}")).unwrap();
        }
        let runs = sorter.runs();
        let out = sorter.into_sorted().unwrap().map(Result::unwrap).collect();
        (out, runs)
    }

    #[test]
    fn with_no_disk_the_lines_stay_in_memory_and_none_is_lost() {
        // A temporary directory under a regular file: every create fails
        // (ENOTDIR), even as root, for whom a read-only mode would not.
        let file = std::env::temp_dir().join(format!("sort-no-disk-{}", std::process::id()));
        std::fs::write(&file, b"not a directory").unwrap();
        let mut sorter = SortedLines::in_dir(100, file.join("tmp"));
        let mut want = Vec::new();
        for i in (0..1_000).rev() {
            let line = format!("http://h/{i:04} 200");
            want.push(line.clone());
            sorter.push(13, line).unwrap();
        }
        want.sort();
        assert_eq!(sorter.runs(), 0);
        let why = sorter.no_disk().expect("the spill failed").to_string();
        assert!(why.contains("Not a directory"), "{why}");
        let out: Vec<String> = sorter.into_sorted().unwrap().map(Result::unwrap).collect();
        assert_eq!(out, want);
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn runs_on_disk_merge_into_the_same_order_as_in_memory() {
        // Pseudo-random keys, some the prefix of others, some lines with
        // a newline in them.
        let mut state = 7u64;
        let lines: Vec<(String, String)> = (0..5_000)
            .map(|i| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let key = format!("http://h/{}", state >> 50);
                (key, format!(" line {i}\n{}", i % 7))
            })
            .collect();
        let borrowed: Vec<(&str, &str)> = lines
            .iter()
            .map(|(k, r)| (k.as_str(), r.as_str()))
            .collect();
        let (in_memory, no_runs) = sorted(usize::MAX, &borrowed);
        let (spilled, runs) = sorted(4_000, &borrowed);
        assert_eq!(no_runs, 0);
        assert!(runs > 10, "{runs}");
        assert_eq!(spilled, in_memory);
        let mut want: Vec<(String, String)> = lines
            .iter()
            .map(|(k, r)| (k.clone(), format!("{k}{r}")))
            .collect();
        want.sort();
        let want: Vec<String> = want.into_iter().map(|(_, line)| line).collect();
        assert_eq!(in_memory, want);
    }

    #[test]
    fn the_key_comes_first_then_the_line() {
        // "a-b" sorts before "a b" as a line, but its key "a-b" comes after
        // the key "a".
        let (out, _) = sorted(0, &[("a-b", " x"), ("a", " z"), ("a", " y")]);
        assert_eq!(out, ["a y", "a z", "a-b x"]);
    }

    #[test]
    fn nothing_in_nothing_out() {
        let (out, runs) = sorted(10, &[]);
        assert!(out.is_empty());
        assert_eq!(runs, 0);
    }
}
