//! `--warc FILE`: writing the archive without stalling the crawl.
//!
//! Writing to a file is a blocking call, and a slow disk (a network mount,
//! a full page cache, a laptop's disk waking up) can hold it for a long
//! time. On the loop thread, that would stop every fetch at once. So the
//! loop only hands each exchange over to a thread of its own, which builds
//! the records ([`crate::warc`]), digests and compresses them, and writes
//! them. The handoff is a bounded channel: when the writer falls behind by
//! [`BACKLOG`] exchanges, the worker whose exchange does not fit waits
//! for room on a helper thread (`spawn_blocking`), so that its task waits
//! and the loop does not. Memory stays bounded, and the crawl slows to the
//! disk's pace instead of stopping.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::SystemTime;

use runtime::spawn_blocking;

use crate::warc::{Exchange, Info, Records};

/// Exchanges waiting for the writer before a worker has to wait too.
pub const BACKLOG: usize = 32;

/// What a finished archive holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Exchanges archived (a request and a response record each).
    pub exchanges: u64,
    /// Bytes written, the `warcinfo` record included.
    pub bytes: u64,
}

/// An archive being written by its own thread.
#[derive(Debug)]
pub struct Archive {
    path: PathBuf,
    sender: RefCell<Option<SyncSender<Exchange>>>,
    writer: RefCell<Option<JoinHandle<io::Result<Written>>>>,
}

impl Archive {
    /// Creates (or truncates) the file at `path`, and starts the thread
    /// that writes it, beginning with the `warcinfo` record. A name ending
    /// in `.gz` gets a gzip member per record.
    pub fn create(path: &Path, info: &Info) -> io::Result<Archive> {
        let file = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create the WARC file {}: {e}", path.display()),
            )
        })?;
        Archive::start(path, file, info)
    }

    /// Opens the archive of a crawl that is resuming (`--state`), to add
    /// to it. A crash may have left its last record torn: that is cut off,
    /// so that readers never meet it. Returns the archive, whose writer
    /// begins with a new `warcinfo` record for this run, and what the file
    /// already held.
    pub fn reopen(path: &Path, info: &Info) -> io::Result<(Archive, Held)> {
        let named = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("cannot resume the WARC file {}: {e}", path.display()),
            )
        };
        let mut file = match OpenOptions::new().read(true).write(true).open(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok((Archive::create(path, info)?, Held::default()));
            }
            opened => opened.map_err(named)?,
        };
        let gzip = is_gzip(path);
        let held = scan(&mut file, gzip).map_err(named)?;
        file.set_len(held.good).map_err(named)?;
        file.seek(SeekFrom::End(0)).map_err(named)?;
        Ok((Archive::start(path, file, info)?, held))
    }

    /// Starts the writer thread on `file`, positioned where records go.
    fn start(path: &Path, file: File, info: &Info) -> io::Result<Archive> {
        let records = Records::new(is_gzip(path));
        let info = info.clone();
        let (sender, exchanges) = sync_channel(BACKLOG);
        let writer = std::thread::Builder::new()
            .name("warc-writer".into())
            .spawn(move || write_archive(file, &records, &info, &exchanges))?;
        Ok(Archive {
            path: path.to_path_buf(),
            sender: RefCell::new(Some(sender)),
            writer: RefCell::new(Some(writer)),
        })
    }

    // ANCHOR: save
    /// Hands `exchange` to the writer. When the writer is [`BACKLOG`]
    /// exchanges behind, waits for room without blocking the loop. If the
    /// writer has failed, the exchange is dropped: [`finish`](Self::finish)
    /// reports the error.
    pub async fn save(&self, exchange: Exchange) {
        let Some(sender) = self.sender.borrow().clone() else {
            return;
        };
        match sender.try_send(exchange) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(exchange)) => {
                log::debug!("the WARC writer is behind; waiting for it");
                // An error here is the writer's failure, reported by finish.
                let _ = spawn_blocking(move || sender.send(exchange).is_ok()).await;
            }
        }
    }
    // ANCHOR_END: save

    /// Waits for the writer to write what it was given, and for the file
    /// to reach the disk (`fsync`). The first write error, if any, names
    /// the file. Later calls return what the first one found.
    pub fn finish(&self) -> io::Result<Written> {
        drop(self.sender.borrow_mut().take());
        let Some(writer) = self.writer.borrow_mut().take() else {
            return Ok(Written::default());
        };
        writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")))
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("writing the WARC file {} failed: {e}", self.path.display()),
                )
            })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Archive {
    /// An archive nobody finished (an early return) is still written out
    /// whole.
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            log::error!("{e}");
        }
    }
}

/// The writer thread: the `warcinfo` record, then each exchange's two
/// records, each flushed to the file whole before the next begins, so a
/// crash leaves at most the last exchange torn. The file is synced once,
/// at the end.
fn write_archive(
    file: File,
    records: &Records,
    info: &Info,
    exchanges: &Receiver<Exchange>,
) -> io::Result<Written> {
    let mut out = BufWriter::with_capacity(64 * 1024, file);
    records.warcinfo(info, SystemTime::now(), &mut out)?;
    out.flush()?;
    let mut written = Written::default();
    for exchange in exchanges {
        records.exchange(&exchange, &mut out)?;
        out.flush()?;
        written.exchanges += 1;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    written.bytes = file.metadata()?.len();
    Ok(written)
}

/// What an archive held when a crawl resumed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// The length of its complete records: where the torn one, if any,
    /// began.
    pub good: u64,
    /// Bytes of a torn last record, cut off.
    pub cut: u64,
    /// The target URI of every complete `response` record.
    pub responses: HashSet<String>,
}

/// Whether the file's name asks for gzip members (`.warc.gz`).
fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

// ANCHOR: scan
/// Reads an archive record by record, as far as its records are whole:
/// the head, the block of `Content-Length` bytes, and the two CRLFs. A
/// gzip archive is read member by member (a record each), and a member
/// that does not decompress whole ends the good part too.
fn scan(file: &mut File, gzip: bool) -> io::Result<Held> {
    let len = file.metadata()?.len();
    let mut reader = CountingReader {
        inner: &mut *file,
        count: 0,
    };
    let mut buffered = BufReader::new(&mut reader);
    let mut held = Held::default();
    loop {
        let at =
            |b: &BufReader<&mut CountingReader<'_>>| b.get_ref().count - b.buffer().len() as u64;
        let start = at(&buffered);
        if start == len {
            break;
        }
        let record = if gzip {
            let mut decoder = flate2::bufread::GzDecoder::new(&mut buffered);
            let mut record = Vec::new();
            match decoder.read_to_end(&mut record) {
                Ok(_) => Some(record),
                Err(_) => None,
            }
        } else {
            read_record(&mut buffered)?
        };
        let Some(record) = record else { break };
        let Some(parsed) = crate::warc::parse_record(&record) else {
            break;
        };
        held.good = at(&buffered);
        if parsed.kind == "response" {
            held.responses.extend(parsed.target_uri);
        }
    }
    held.cut = len - held.good;
    Ok(held)
}

/// One uncompressed record, whole, or `None` if the file ends inside it.
fn read_record(reader: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut record = Vec::new();
    // The head, line by line, to its blank line.
    loop {
        let n = reader.read_until(b'\n', &mut record)?;
        if n == 0 || !record.ends_with(b"\n") {
            return Ok(None);
        }
        if record.ends_with(b"\r\n\r\n") {
            break;
        }
        if record.len() > 1 << 20 {
            return Ok(None); // not a WARC head
        }
    }
    // A length that cannot be (from a damaged head) reads to the end of
    // the file, and comes up short.
    let Some(length) = crate::warc::content_length(&record).and_then(|n| n.checked_add(4)) else {
        return Ok(None);
    };
    let mut rest = Vec::new();
    reader.take(length).read_to_end(&mut rest)?;
    if rest.len() as u64 != length {
        return Ok(None);
    }
    record.extend(rest);
    Ok(Some(record))
}
// ANCHOR_END: scan

/// Counts the bytes read through it: where a reader is in the file.
struct CountingReader<'a> {
    inner: &'a mut File,
    count: u64,
}

impl Read for CountingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    fn info() -> Info {
        Info {
            filename: "t.warc".into(),
            command_line: "t".into(),
            robots: "obey",
            user_agent: "t".into(),
        }
    }

    fn exchange(i: usize) -> Exchange {
        Exchange {
            url: format!("http://127.0.0.1/{i}"),
            date: UNIX_EPOCH,
            peer: None,
            request: b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            head: b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n".to_vec(),
            chunked: false,
            body: b"x".to_vec(),
        }
    }

    #[test]
    fn more_exchanges_than_the_backlog_all_arrive() {
        let dir = std::env::temp_dir().join(format!("archive-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.warc");
        let archive = Archive::create(&path, &info()).unwrap();
        let n = 3 * BACKLOG;
        runtime::run_until_complete(async {
            for i in 0..n {
                archive.save(exchange(i)).await;
            }
        })
        .unwrap();
        let written = archive.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(written.exchanges, n as u64);
        assert_eq!(written.bytes, bytes.len() as u64);
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(text.matches("WARC-Type: response\r\n").count(), n);
        assert_eq!(text.matches("WARC-Type: request\r\n").count(), n);
        // In the order they were saved.
        let at = |i: usize| text.find(&format!("/{i}\r\n")).unwrap();
        assert!((1..n).all(|i| at(i - 1) < at(i)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reopening_cuts_off_a_torn_record_and_says_what_the_file_held() {
        let dir = std::env::temp_dir().join(format!("archive-reopen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["t.warc", "t.warc.gz"] {
            let path = dir.join(name);
            let archive = Archive::create(&path, &info()).unwrap();
            runtime::run_until_complete(async {
                for i in 0..3 {
                    archive.save(exchange(i)).await;
                }
            })
            .unwrap();
            archive.finish().unwrap();
            let whole = std::fs::read(&path).unwrap();
            // A record whose head claims more than a file can hold, and
            // the file ends inside it.
            let torn = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 18446744073709551615\r\n\r\nxx";
            std::fs::write(&path, [&whole[..], &torn[..]].concat()).unwrap();
            let (archive, held) = Archive::reopen(&path, &info()).unwrap();
            assert_eq!(
                (held.good, held.cut),
                (whole.len() as u64, torn.len() as u64),
                "{name}"
            );
            let want: HashSet<String> = (0..3).map(|i| exchange(i).url).collect();
            assert_eq!(held.responses, want, "{name}");
            // What follows starts where the torn record did.
            runtime::run_until_complete(archive.save(exchange(3))).unwrap();
            archive.finish().unwrap();
            let (_, held) = Archive::reopen(&path, &info()).unwrap();
            assert_eq!(held.cut, 0, "{name}");
            assert_eq!(held.responses.len(), 4, "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_that_cannot_be_created_is_an_error_naming_it() {
        let err = Archive::create(Path::new("/nonexistent-dir/a.warc"), &info()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot create the WARC file /nonexistent-dir/a.warc: "),
            "{err}"
        );
    }

    #[test]
    fn a_write_error_is_reported_by_finish() {
        // /dev/full accepts the open and fails every write with ENOSPC.
        let archive = Archive::create(Path::new("/dev/full"), &info()).unwrap();
        runtime::run_until_complete(archive.save(exchange(0))).unwrap();
        let err = archive.finish().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("writing the WARC file /dev/full failed: "),
            "{err}"
        );
    }
}
