//! `--warc FILE`: writing the archive beside the crawl, not in front of it.
//!
//! Writing to a file is a blocking call, and a slow disk (a network mount,
//! a full page cache, a laptop's disk waking up) can hold it for a long
//! time; on the loop thread, that would stop every fetch at once. The
//! records' digests are CPU work: two SHA-1 passes over every body (the
//! whole record, and the payload), which on the loop thread would slow
//! every fetch. So the loop only hands each exchange to a queue, and
//! archiver threads take them from it: each makes an exchange's records
//! (the digests, and for `.warc.gz` the compression) on its own, in
//! parallel with the others and with the crawl, and they take turns only
//! to write, each exchange's records whole and flushed before the next.
//!
//! The queue holds [`BACKLOG`] exchanges. When it is full, the worker whose
//! exchange does not fit waits (its task, not the loop) until an archiver
//! takes one out and wakes it, so memory stays bounded: at most
//! `BACKLOG` exchanges queued and one in the hands of each archiver. The
//! crawl then slows to the archive's pace instead of stopping.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::future::{Future, poll_fn};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Poll, Waker};
use std::thread::JoinHandle;
use std::time::SystemTime;

use crate::http::{Exchange, HearExchanges};
use crate::keeping::warc::{
    Info, Original, Parsed, RecordWriter, record_id, sha1_digest, warc_date,
};

mod originals;
mod scan;

pub use originals::Originals;
use originals::status_of;
pub use scan::Reopened;
#[cfg(test)]
use scan::read_record;
use scan::{is_gzip, scan};

/// Exchanges waiting for an archiver before a worker has to wait too.
pub const BACKLOG: usize = 32;

/// How much is written between two syncs of the file during the crawl.
/// The disk writes the archive while the crawl goes on, rather than all of
/// it at the end (200 MB took 75 ms to sync here, after the crawl); and a
/// power cut loses at most this much of what the archive was handed.
const SYNC_EVERY: u64 = 16 << 20;

/// The most archiver threads. Each makes about a gigabyte of records a
/// second (two SHA-1 passes at about two each); four keep up with any crawl
/// this crawler can do, and leave the other cores to it.
const MAX_ARCHIVERS: usize = 4;

/// What a finished archive holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Exchanges archived (a request and a response record each).
    pub exchanges: u64,
    /// Bytes written, the `warcinfo` record included.
    pub bytes: u64,
}

/// An archive being written by its archiver threads.
#[derive(Debug)]
pub struct Archive {
    path: PathBuf,
    shared: Arc<Shared>,
    archivers: RefCell<Vec<JoinHandle<()>>>,
    /// What `finish` found, for later calls.
    finished: RefCell<Option<Result<Written, (io::ErrorKind, String)>>>,
}

/// What the loop, the archivers and the syncs share.
#[derive(Debug)]
struct Shared {
    handoff: Mutex<Handoff>,
    /// Signalled when an exchange is queued, or the queue is closed.
    queued: Condvar,
    /// The file, and what was written to it.
    sink: Mutex<Sink>,
    /// A sync of the file is under way (see [`SYNC_EVERY`]).
    syncing: AtomicBool,
    /// What the file holds whole, for revisits to point at.
    originals: Mutex<Originals>,
    /// Signalled when a chosen original is written.
    original_written: Condvar,
}

/// The queue between the loop and the archivers.
#[derive(Debug, Default)]
struct Handoff {
    queue: VecDeque<Exchange>,
    /// Workers waiting for room, first come first woken.
    waiting: VecDeque<Waker>,
    /// No more exchanges: `finish` was called, or a write failed.
    closed: bool,
}

impl Handoff {
    /// After an exchange was taken out: wakes as many waiting workers as
    /// there is room for, and all of them once the queue is empty. A woken
    /// worker that was cancelled meanwhile leaves its room to the next
    /// wake; the empty queue's wake-all means no worker is left waiting
    /// beside an empty queue.
    fn make_room(&mut self) {
        let room = if self.queue.is_empty() {
            self.waiting.len()
        } else {
            BACKLOG - self.queue.len().min(BACKLOG)
        };
        for waker in self.waiting.drain(..room.min(self.waiting.len())) {
            waker.wake();
        }
    }
}

#[derive(Debug)]
struct Sink {
    out: BufWriter<File>,
    /// Another handle to the file, to sync what is written so far without
    /// holding the sink.
    syncer: Option<Arc<File>>,
    /// Bytes written since the last sync began.
    unsynced: u64,
    written: Written,
    /// The first write error; every later exchange is dropped.
    failed: Option<io::Error>,
}

/// A lock, even if an archiver panicked while holding it: what it guards
/// (a queue, a file) stays usable, and `finish` reports the panic.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Archive {
    /// Creates (or truncates) the file at `path`, and starts the threads
    /// that write it, beginning with the `warcinfo` record. A name ending
    /// in `.gz` gets a gzip member per record.
    pub fn create(path: &Path, info: &Info) -> io::Result<Archive> {
        let file = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create the WARC file {}: {e}", path.display()),
            )
        })?;
        Archive::start(path, file, info, Originals::default())
    }

    /// Opens the archive of a crawl that is resuming (`--state`), to add
    /// to it. A crash may have left its last record torn: that is cut off,
    /// so that readers never meet it. Returns the archive, whose writer
    /// begins with a new `warcinfo` record for this run, and what the file
    /// already held.
    pub fn reopen(path: &Path, info: &Info) -> io::Result<(Archive, Reopened)> {
        // (`Reopened::responses` counts the records of `info.generation`.)
        let named = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("cannot resume the WARC file {}: {e}", path.display()),
            )
        };
        let mut file = match OpenOptions::new().read(true).write(true).open(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok((Archive::create(path, info)?, Reopened::default()));
            }
            opened => opened.map_err(named)?,
        };
        let gzip = is_gzip(path);
        let mut held = scan(&file, gzip, info.generation).map_err(named)?;
        file.set_len(held.good).map_err(named)?;
        file.seek(SeekFrom::End(0)).map_err(named)?;
        let originals = std::mem::take(&mut held.originals);
        Ok((Archive::start(path, file, info, originals)?, held))
    }

    /// Writes the `warcinfo` record to `file`, positioned where records
    /// go, and starts the archivers. A failure to write it is kept for
    /// `finish`, like any write error.
    fn start(path: &Path, file: File, info: &Info, originals: Originals) -> io::Result<Archive> {
        let archivers = std::thread::available_parallelism()
            .map_or(1, |n| n.get() / 2)
            .clamp(1, MAX_ARCHIVERS);
        Archive::start_with(path, file, info, originals, archivers)
    }

    /// [`start`](Self::start), with this many archivers.
    fn start_with(
        path: &Path,
        file: File,
        info: &Info,
        originals: Originals,
        archivers: usize,
    ) -> io::Result<Archive> {
        let records = Arc::new(RecordWriter::new(is_gzip(path)));
        let mut out = BufWriter::with_capacity(64 * 1024, file);
        let failed = records
            .warcinfo(info, SystemTime::now(), &mut out)
            .and_then(|()| out.flush())
            .err();
        let shared = Arc::new(Shared {
            handoff: Mutex::new(Handoff {
                closed: failed.is_some(),
                ..Handoff::default()
            }),
            queued: Condvar::new(),
            syncing: AtomicBool::new(false),
            originals: Mutex::new(originals),
            original_written: Condvar::new(),
            sink: Mutex::new(Sink {
                syncer: out.get_ref().try_clone().ok().map(Arc::new),
                out,
                unsynced: 0,
                written: Written::default(),
                failed,
            }),
        });
        let mut threads = Vec::with_capacity(archivers);
        for i in 0..archivers {
            let (shared, records) = (Arc::clone(&shared), Arc::clone(&records));
            let spawned = std::thread::Builder::new()
                .name(format!("warc-{i}"))
                .spawn(move || archiver(&shared, &records));
            match spawned {
                Ok(thread) => threads.push(thread),
                // One archiver is enough to be correct.
                Err(_) if !threads.is_empty() => break,
                Err(e) => return Err(e),
            }
        }
        Ok(Archive {
            path: path.to_path_buf(),
            shared,
            archivers: RefCell::new(threads),
            finished: RefCell::new(None),
        })
    }

    /// Hands `exchange` to the archivers. When [`BACKLOG`] exchanges wait
    /// already, waits (this task, not the loop) until an archiver takes
    /// one. If the archive has failed, the exchange is dropped:
    /// [`finish`](Self::finish) reports the error.
    pub async fn save(&self, exchange: Exchange) {
        save(&self.shared, exchange).await
    }

    /// A handle that hands exchanges to this archive from any thread: one
    /// for each loop of a crawl on several (`--loops`). The archive itself
    /// stays with whoever finishes it.
    pub fn handle(&self) -> ArchiveHandle {
        ArchiveHandle {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// Where a loop of a crawl on several hands its exchanges: the same queue
/// as the archive's own [`Archive::save`], from another thread.
#[derive(Clone, Debug)]
pub struct ArchiveHandle {
    shared: Arc<Shared>,
}

impl HearExchanges for ArchiveHandle {
    fn exchange(&self, exchange: Exchange) -> Pin<Box<dyn Future<Output = ()> + '_>> {
        Box::pin(save(&self.shared, exchange))
    }
}

// ANCHOR: save
/// Puts `exchange` on the archivers' queue, waiting (this task, not the
/// loop) while the queue is full. If the archive has failed, the exchange
/// is dropped: [`Archive::finish`] reports the error.
async fn save(shared: &Shared, exchange: Exchange) {
    let mut exchange = Some(exchange);
    poll_fn(|cx| {
        let mut handoff = lock(&shared.handoff);
        if handoff.closed {
            return Poll::Ready(());
        }
        if handoff.queue.len() < BACKLOG {
            handoff.queue.extend(exchange.take());
            drop(handoff);
            shared.queued.notify_one();
            return Poll::Ready(());
        }
        log::debug!("the WARC archivers are behind; waiting for them");
        if !handoff.waiting.iter().any(|w| w.will_wake(cx.waker())) {
            handoff.waiting.push_back(cx.waker().clone());
        }
        Poll::Pending
    })
    .await;
}
// ANCHOR_END: save

impl Archive {
    /// Waits for the archivers to write what they were given, and for the
    /// file to reach the disk (`fsync`). The first write error, if any,
    /// names the file. Later calls return what the first one found.
    pub fn finish(&self) -> io::Result<Written> {
        if let Some(done) = &*self.finished.borrow() {
            return done.clone().map_err(|(kind, e)| io::Error::new(kind, e));
        }
        lock(&self.shared.handoff).closed = true;
        self.shared.queued.notify_all();
        let mut panicked = false;
        for archiver in self.archivers.borrow_mut().drain(..) {
            panicked |= archiver.join().is_err();
        }
        let done = (|| {
            let mut sink = lock(&self.shared.sink);
            if let Some(e) = sink.failed.take() {
                return Err(e);
            }
            if panicked {
                return Err(io::Error::other("an archiver thread panicked"));
            }
            sink.out.flush()?;
            sink.out.get_ref().sync_all()?;
            let mut written = sink.written;
            written.bytes = sink.out.get_ref().metadata()?.len();
            Ok(written)
        })()
        .map_err(|e| {
            (
                e.kind(),
                format!("writing the WARC file {} failed: {e}", self.path.display()),
            )
        });
        *self.finished.borrow_mut() = Some(done.clone());
        done.map_err(|(kind, e)| io::Error::new(kind, e))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The validators of the record holding `url`'s page whole (see
    /// [`Originals::page_validators`]).
    pub fn page_validators(&self, url: &str) -> Option<crate::http::Validators> {
        lock(&self.shared.originals).page_validators(url).cloned()
    }
}

/// The archive hears the client's exchanges: it is one of the crawl's
/// observers, and the client does not know it exists.
impl HearExchanges for Archive {
    fn exchange(&self, exchange: Exchange) -> Pin<Box<dyn Future<Output = ()> + '_>> {
        Box::pin(self.save(exchange))
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

// ANCHOR: archiver
/// An archiver thread: take an exchange (waking a worker waiting for
/// room), decide whether its response is kept whole or as a revisit (a
/// moment under the originals' lock), make its records (the digests, the
/// compression) without holding any lock, wait if it is a revisit whose
/// original another archiver has not yet written, then take the file and
/// write them whole, flushed before the next exchange's begin, so a crash
/// tears at most the exchange being written. Returns once the queue is
/// closed and empty.
fn archiver(shared: &Arc<Shared>, records: &RecordWriter) {
    loop {
        let exchange = {
            let mut handoff = lock(&shared.handoff);
            loop {
                if let Some(exchange) = handoff.queue.pop_front() {
                    handoff.make_room();
                    break exchange;
                }
                if handoff.closed {
                    return;
                }
                handoff = shared
                    .queued
                    .wait(handoff)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        // Whole, or a revisit of a record that holds it already. The
        // choice is made, and a new original noted, in one step: of two
        // archivers with the same payload, the second points at the first.
        let status = status_of(&exchange.head);
        let digest = sha1_digest(&exchange.body);
        let whole = !exchange.truncated;
        let id = record_id();
        let keep = {
            let record = Original {
                id: id.clone(),
                uri: exchange.url.clone(),
                date: warc_date(exchange.date),
                digest: digest.clone(),
                validators: crate::http::Validators::in_head(&exchange.head),
            };
            let mut originals = lock(&shared.originals);
            let keep = originals.keep(&exchange.url, status, &digest, whole);
            originals.writing(&exchange.url, status, whole, keep.clone(), record);
            keep
        };
        let made = records.make(&exchange, &digest, &id, keep.as_kept());
        // A revisit waits for its original to be in the file.
        if let Some(original) = keep.refers_to() {
            let mut originals = lock(&shared.originals);
            while originals.is_pending(original) {
                originals = shared
                    .original_written
                    .wait(originals)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        let mut sink = lock(&shared.sink);
        let wrote = match sink.failed {
            Some(_) => Ok(None),
            None => made.and_then(|made| {
                made.write_to(&mut sink.out)?;
                sink.out.flush()?;
                Ok(Some(made.len() as u64))
            }),
        };
        // Written, or never to be: its revisits may go on either way.
        lock(&shared.originals).written(&id);
        shared.original_written.notify_all();
        match wrote {
            Ok(None) => continue,
            Ok(Some(len)) => {
                sink.written.exchanges += 1;
                sink.unsynced += len;
                if sink.unsynced >= SYNC_EVERY
                    && let Some(file) = sink.syncer.clone()
                    && !shared.syncing.swap(true, Ordering::AcqRel)
                {
                    sink.unsynced = 0;
                    drop(sink);
                    sync_beside(file, shared);
                }
            }
            Err(e) => {
                sink.failed = Some(e);
                drop(sink);
                // Nothing more can be written: stop taking exchanges, and
                // let every waiting worker go.
                let mut handoff = lock(&shared.handoff);
                handoff.closed = true;
                handoff.queue.clear();
                handoff.make_room();
                drop(handoff);
                shared.queued.notify_all();
            }
        }
    }
}
// ANCHOR_END: archiver

/// Syncs what the file holds so far on a thread of its own, so that no
/// archiver waits on the disk; `shared.syncing` (set by the caller) keeps
/// it to one at a time. An error here comes back from the final sync.
fn sync_beside(file: Arc<File>, shared: &Arc<Shared>) {
    let done = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("warc-sync".into())
        .spawn(move || {
            let _ = file.sync_data();
            done.syncing.store(false, Ordering::Release);
        });
    if spawned.is_err() {
        // No thread: the final sync does it all.
        shared.syncing.store(false, Ordering::Release);
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
            generation: 0,
        }
    }

    /// Exchange `i`, whose body is its own (the same body twice would be
    /// a revisit).
    fn exchange(i: usize) -> Exchange {
        let body = format!("x{i}").into_bytes();
        Exchange {
            url: format!("http://127.0.0.1/{i}"),
            date: UNIX_EPOCH,
            peer: None,
            request: b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            head: format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes(),
            protocol: crate::http::Protocol::Http11,
            chunked: false,
            body,
            truncated: false,
        }
    }

    /// A waker that counts its wakes.
    struct Count(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn room_wakes_as_many_waiting_workers_as_it_fits_and_all_once_empty() {
        let counts: Vec<Arc<Count>> = (0..40)
            .map(|_| Arc::new(Count(std::sync::atomic::AtomicUsize::new(0))))
            .collect();
        let mut handoff = Handoff {
            queue: (0..BACKLOG).map(exchange).collect(),
            waiting: counts.iter().map(|c| Waker::from(Arc::clone(c))).collect(),
            closed: false,
        };
        let woken = || {
            counts
                .iter()
                .filter(|c| c.0.load(Ordering::SeqCst) > 0)
                .count()
        };
        // One taken out of a full queue: room for one worker, the first.
        handoff.queue.pop_front();
        handoff.make_room();
        assert_eq!(woken(), 1);
        assert_eq!(counts[0].0.load(Ordering::SeqCst), 1);
        // Another: room for two (the first has not come back yet).
        handoff.queue.pop_front();
        handoff.make_room();
        assert_eq!(woken(), 3);
        // Empty: everyone still waiting goes, so none waits beside an
        // empty queue for a wake that a cancelled worker took.
        handoff.queue.clear();
        handoff.make_room();
        assert_eq!(woken(), 40);
        assert!(handoff.waiting.is_empty());
    }

    #[test]
    fn the_same_payload_is_one_response_and_revisits_after_it_whatever_the_archivers() {
        let dir = std::env::temp_dir().join(format!("archive-same-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.warc");
        let file = File::create(&path).unwrap();
        let archive = Archive::start_with(&path, file, &info(), Originals::default(), 4).unwrap();
        let n = 200;
        runtime::run_until_complete(async {
            for i in 0..n {
                let mut same = exchange(i);
                same.body = b"the same page".to_vec();
                archive.save(same).await;
            }
        })
        .unwrap();
        archive.finish().unwrap();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let _ = std::fs::remove_dir_all(&dir);
        let first_response = text.find("WARC-Type: response\r\n").unwrap();
        assert_eq!(text.matches("WARC-Type: response\r\n").count(), 1);
        assert_eq!(text.matches("WARC-Type: revisit\r\n").count(), n - 1);
        // Every revisit after the record it points at.
        assert!(text.find("WARC-Type: revisit\r\n").unwrap() > first_response);
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
        // Each exactly once, its response then its request, side by side
        // (archivers working in parallel may finish them in any order).
        for i in 0..n {
            let uri = format!("WARC-Target-URI: http://127.0.0.1/{i}\r\n");
            let at: Vec<usize> = text.match_indices(&uri).map(|(at, _)| at).collect();
            assert_eq!(at.len(), 2, "{i}");
            let start = text[..at[0]].rfind("WARC/1.1\r\n").unwrap();
            assert!(text[start..].starts_with("WARC/1.1\r\nWARC-Type: response\r\n"));
            let between = &text[at[0]..at[1]];
            assert_eq!(between.matches("WARC/1.1\r\n").count(), 1, "{i}");
            assert!(
                between.contains("WARC/1.1\r\nWARC-Type: request\r\n"),
                "{i}"
            );
        }
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

    /// Writes an archive of three exchanges at `path`; returns its bytes.
    fn three_exchanges(path: &Path) -> Vec<u8> {
        let archive = Archive::create(path, &info()).unwrap();
        runtime::run_until_complete(async {
            for i in 0..3 {
                archive.save(exchange(i)).await;
            }
        })
        .unwrap();
        archive.finish().unwrap();
        std::fs::read(path).unwrap()
    }

    #[test]
    fn damage_with_whole_records_after_it_is_refused_not_cut_off() {
        let dir = std::env::temp_dir().join(format!("archive-damage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Plain: the first response's Content-Length one more than its
        // block, so the record runs into the next one.
        let path = dir.join("t.warc");
        let mut bytes = three_exchanges(&path);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let response = text.find("WARC-Type: response").unwrap();
        let length = response + text[response..].find("Content-Length: ").unwrap() + 16;
        let digits = text[length..].find('\r').unwrap();
        let old: u64 = text[length..length + digits].parse().unwrap();
        let new = (old + 1).to_string();
        assert_eq!(new.len(), digits);
        bytes.splice(length..length + digits, new.bytes());
        std::fs::write(&path, &bytes).unwrap();
        let record = text[..response].rfind("WARC/1.1").unwrap();
        let err = Archive::reopen(&path, &info()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(
            err.to_string().starts_with(&format!(
                "cannot resume the WARC file {}: it is damaged at byte {record}: the record there \
                 is not whole, but the one at byte ",
                path.display()
            )),
            "{err}"
        );
        // Refused, and left as it was.
        assert_eq!(std::fs::read(&path).unwrap(), bytes);

        // Gzip: a byte of the second member flipped, so it does not
        // decompress; the members after it do.
        let path = dir.join("t.warc.gz");
        let mut bytes = three_exchanges(&path);
        let members: Vec<usize> = bytes
            .windows(3)
            .enumerate()
            .filter(|(_, w)| *w == [0x1f, 0x8b, 0x08])
            .map(|(i, _)| i)
            .collect();
        let (second, third) = (members[1], members[2]);
        bytes[(second + third) / 2] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let err = Archive::reopen(&path, &info()).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "it is damaged at byte {second}: the record there is not whole, but the one at \
                 byte {third} is"
            )),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_block_is_read_through_not_held() {
        // A head claiming 4 bytes, then zeros without end: the old scan
        // read the rest of the member into memory, and never returned from
        // this. Reading through stops at the fifth byte after the head.
        let head: &[u8] = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 4\r\n\r\n";
        let mut endless = BufReader::new(head.chain(io::repeat(0)));
        assert_eq!(read_record(&mut endless).unwrap(), None);
    }

    #[test]
    fn a_torn_record_holding_a_whole_one_is_cut_off_not_refused() {
        // Crawling an archive's site: the body of the record torn by the
        // crash holds a whole WARC record. It is torn all the same.
        let dir = std::env::temp_dir().join(format!("archive-nested-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.warc");
        let whole = three_exchanges(&path);
        let inner = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 2\r\n\r\nhi\r\n\r\n";
        let torn = [
            &b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 500\r\n\r\nbody "[..],
            &inner[..],
            b"and the crash came here",
        ]
        .concat();
        std::fs::write(&path, [&whole[..], &torn[..]].concat()).unwrap();
        let (archive, held) = Archive::reopen(&path, &info()).unwrap();
        drop(archive);
        assert_eq!(
            (held.good, held.cut, held.responses.len()),
            (whole.len() as u64, torn.len() as u64, 3)
        );
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
