//! `--state DIR`: the crawl's journal, so that a crawl killed at any
//! moment resumes with nothing lost.
//!
//! The state is one append-only file, `DIR/journal`: a line per fact, in
//! the order the facts became true. A URL was queued (with the page that
//! linked it, its depth and the redirects it may still follow); a URL is
//! done, with its statistic; a URL was skipped, with the reason; an
//! origin's robots.txt said this; and with `--max-depth`, a URL was set
//! aside as too deep, or moved up a level. Nothing
//! is ever rewritten, so a crash can only ever leave the last line half
//! written, and the resumed crawl cuts it off. Replaying the lines gives
//! back the seen set (every URL queued or skipped), the report so far
//! (every statistic and skip), and the queue (what was queued and is not
//! done): exactly what the crawl knew, minus the fetches that were in
//! flight, which are fetched again.
//!
//! Each line is `CRC JSON`: the CRC-32 of the JSON text, in hex, then the
//! JSON. `cut -d' ' -f2- DIR/journal | jq` reads it. The checksum tells a
//! torn last line (cut off, with a warning) from damage in the middle
//! (refused: the state cannot be trusted).
//!
//! Two rules make it crash-safe:
//!
//! 1. **Effects before the fact.** A page's statistic is written after
//!    the lines of the links found on it, in the same write: if the
//!    statistic is there, so are its links. [`Journal::commit`] puts the
//!    `done` lines of a batch last.
//! 2. **Written, then done.** A batch reaches the file (`write(2)`, into
//!    the kernel's page cache, which survives the process being killed)
//!    before the queue hears that its URL is done. A thread syncs the file
//!    to the disk (`fsync`) once a second, so a power cut loses at most
//!    the last second, whose fetches are then done again.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{Value, json};

use crate::http::{Protocol, Validators};
use crate::polite::politeness::RobotsOutcome;
use crate::polite::robots::RobotsSource;
use crate::seams::{Observer, Work};
use crate::skipped::{SkipReason, Skipped};
use crate::stats::{Exception, FetchStatistic, Recrawled};

/// The format this crawler writes and reads.
pub const FORMAT: u64 = 1;

/// How the refusal of a journal of another crawl begins.
pub const ANOTHER_CRAWL: &str = "it holds another crawl";

/// How often the journal is synced to the disk.
const SYNC_EVERY: Duration = Duration::from_secs(1);

/// What identifies a crawl: a journal of another is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The roots, as the `url` crate writes them.
    pub roots: Vec<String>,
    /// The options that decide which URLs are crawled, in words
    /// (`--exclude`, host matching, limits, robots.txt ...).
    pub rules: String,
}

/// A URL that was queued, as the journal has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    /// The URL.
    pub url: String,
    /// The page that linked it; `None` for a root.
    pub from: Option<String>,
    /// Links from a root.
    pub depth: u32,
    /// Redirects it may still follow.
    pub redirects: u32,
}

/// A URL set aside as deeper than `--max-depth`, as the journal has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aside {
    /// The URL.
    pub url: String,
    /// The page that linked it first.
    pub from: Option<String>,
    /// Its depth when it was set aside.
    pub depth: u32,
}

/// What a journal says happened before.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Replayed {
    /// Every URL queued, in order.
    pub queued: Vec<Queued>,
    /// Every statistic, in order.
    pub done: Vec<FetchStatistic>,
    /// Every URL skipped, in order.
    pub skipped: Vec<Skipped>,
    /// Every origin's robots.txt, as it was understood, and what it was.
    pub robots: Vec<(RobotsOutcome, RobotsSource)>,
    /// With `--max-depth`: every URL set aside as too deep, in order.
    pub aside: Vec<Aside>,
    /// Bytes of a torn last line that were cut off.
    pub cut: u64,
    /// Every `Set-Cookie` line heard, with its URL and when it came, in
    /// order: the jar, played again.
    pub cookies: Vec<(String, String, SystemTime)>,
    /// How many times the crawl was begun again with `--recrawl`: 0 for
    /// the first crawl. The fields above are this generation's alone.
    pub generation: u32,
    /// In a recrawl, every URL an earlier generation queued, once each,
    /// in order: each is fetched again.
    pub known: Vec<Queued>,
    /// In a recrawl, the URLs an earlier generation skipped and never
    /// queued (but as too deep), with the reason: the rules are the same,
    /// so they stay skipped.
    pub known_skipped: Vec<Skipped>,
    /// In a recrawl with `--max-depth`, the URLs an earlier generation set
    /// aside as too deep: aside again, unless a shorter path turns up.
    pub known_aside: Vec<Aside>,
    /// The validators of every page an earlier generation fetched with a
    /// `200 OK` that had them, the latest of each: what a recrawl sends.
    pub validators: HashMap<String, Validators>,
    /// Those heard in this generation: the next recrawl's. (A page
    /// fetched again after a crash has this generation's own, which must
    /// not be sent in this generation: its record may be lost.)
    pub fresh_validators: HashMap<String, Validators>,
    /// In a recrawl, what each URL an earlier generation fetched was
    /// answered last: its status and where it redirected.
    pub answered: HashMap<String, Answer>,
}

/// What a URL was answered: its status (`None`: no response) and, for a
/// redirect, where it led.
pub type Answer = (Option<u16>, Option<String>);

impl Replayed {
    /// Whether the journal held nothing but its header: a new crawl.
    pub fn is_empty(&self) -> bool {
        self.generation == 0
            && self.queued.is_empty()
            && self.done.is_empty()
            && self.skipped.is_empty()
    }

    /// Whether this generation of the crawl is over: every URL it has to
    /// fetch was fetched or skipped. (A crawl that was interrupted, or
    /// killed, is not.)
    pub fn finished(&self) -> bool {
        let over: HashSet<&str> = self
            .done
            .iter()
            .map(|stat| stat.url.as_str())
            .chain(self.skipped.iter().map(|s| s.url.as_str()))
            .collect();
        !self.is_empty()
            && self
                .known
                .iter()
                .chain(&self.queued)
                .all(|queued| over.contains(queued.url.as_str()))
    }

    /// Begins the next generation (`--recrawl`): what this one queued,
    /// skipped and set aside becomes what is known, to be fetched (or
    /// skipped, or set aside) again; its statistics, skips and robots.txt
    /// rules are the last crawl's, and go. The validators and cookies stay.
    pub fn begin_recrawl(&mut self) {
        let mut known: HashSet<String> = self.known.iter().map(|q| q.url.clone()).collect();
        for queued in self.queued.drain(..) {
            if known.insert(queued.url.clone()) {
                self.known.push(queued);
            }
        }
        let mut skipped: Vec<Skipped> = std::mem::take(&mut self.known_skipped);
        skipped.extend(
            self.skipped
                .drain(..)
                .filter(|s| s.reason != SkipReason::Depth),
        );
        // Once each, where first skipped, with the latest reason.
        let mut at: HashMap<String, usize> = HashMap::new();
        let mut kept: Vec<Skipped> = Vec::new();
        for s in skipped.into_iter().filter(|s| !known.contains(&s.url)) {
            match at.get(&s.url) {
                Some(&i) => kept[i] = s,
                None => {
                    at.insert(s.url.clone(), kept.len());
                    kept.push(s);
                }
            }
        }
        self.known_skipped = kept;
        let mut aside: HashSet<String> = HashSet::new();
        let asides = std::mem::take(&mut self.known_aside);
        self.known_aside = asides
            .into_iter()
            .chain(self.aside.drain(..))
            .filter(|a| !known.contains(&a.url) && aside.insert(a.url.clone()))
            .collect();
        for stat in self.done.drain(..) {
            self.answered.insert(stat.url, (stat.status, stat.next_url));
        }
        self.validators.extend(self.fresh_validators.drain());
        self.robots.clear();
        self.cut = 0;
        self.generation = self.generation.saturating_add(1);
    }

    /// Sets aside the statistics of responses the crawl's archive does not
    /// hold (`--warc`: its writer was behind when the crawl was killed, or
    /// the disk filled), so that their URLs are fetched again. Returns how
    /// many. Every response the client heard is archived, a failed one too
    /// (a body that would not decode, a compression bomb: the statistic has
    /// a status and an exception); only a URL that got no response at all
    /// has nothing to keep. (A body over `--max-body` is dropped before it
    /// is archived: such a URL is fetched again, and fails again.)
    pub fn forget_unarchived(&mut self, archived: &HashSet<String>) -> usize {
        let before = self.done.len();
        self.done.retain(|stat| {
            let no_response = stat.exception.is_some() && stat.status.is_none();
            no_response || archived.contains(&stat.url)
        });
        before - self.done.len()
    }
}

/// The journal of a crawl, open for appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: RefCell<File>,
    /// Lines of the batch being built: `done` lines apart, written last.
    facts: RefCell<String>,
    done: RefCell<String>,
    /// The first error writing the journal: the crawl goes on, and the
    /// end reports it.
    failed: RefCell<Option<io::Error>>,
    syncer: RefCell<Option<Syncer>>,
    /// Held while the crawl runs: a second crawler on the same directory
    /// would interleave its lines with ours.
    _lock: File,
}

impl Journal {
    /// Opens the journal in `dir` (creating both if needed), for the crawl
    /// `identity`, and replays what it holds. Refuses a journal of another
    /// crawl, of a newer format, or damaged anywhere but at its end, and a
    /// directory another crawler is using.
    pub fn open(dir: &Path, identity: &Identity) -> Result<(Journal, Replayed), String> {
        let at = |e: io::Error| format!("{}: {e}", dir.display());
        std::fs::create_dir_all(dir).map_err(at)?;
        let lock = File::create(dir.join("lock")).map_err(at)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(format!(
                    "{} is in use by another stage3-crawler",
                    dir.display()
                ));
            }
            Err(TryLockError::Error(e)) => return Err(at(e)),
        }
        let path = dir.join("journal");
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(at)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(at)?;
        let mut replayed = Replayed::default();
        if text.is_empty() {
            let header = Header {
                format: FORMAT,
                roots: &identity.roots,
                rules: &identity.rules,
            };
            file.write_all(line(&header).as_bytes()).map_err(at)?;
            file.sync_all().map_err(at)?;
        } else {
            let good = replay(&text, identity, &mut replayed)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if good < text.len() {
                // A torn last line: the crash came in the middle of a
                // write. Cut it off, so that the next line starts clean.
                file.set_len(good as u64).map_err(at)?;
                file.seek(SeekFrom::End(0)).map_err(at)?;
                replayed.cut = (text.len() - good) as u64;
            }
        }
        let journal = Journal {
            syncer: RefCell::new(Some(start_syncer(&file).map_err(at)?)),
            path,
            file: RefCell::new(file),
            facts: RefCell::new(String::new()),
            done: RefCell::new(String::new()),
            failed: RefCell::new(None),
            _lock: lock,
        };
        Ok((journal, replayed))
    }

    /// Notes that `url` was queued.
    pub fn queued(&self, url: &str, from: Option<&str>, depth: u32, redirects: u32) {
        let fact = QueuedLine {
            queued: url,
            from,
            depth,
            redirects,
        };
        self.facts.borrow_mut().push_str(&line(&fact));
    }

    /// Notes that a URL is done, with its statistic.
    pub fn done(&self, stat: &FetchStatistic) {
        let fact = DoneLine {
            done: stat_json(stat),
        };
        self.done.borrow_mut().push_str(&line(&fact));
    }

    /// Notes that a URL was skipped. An interrupted URL is not skipped for
    /// good: it is left queued, for the resumed crawl.
    pub fn skipped(&self, skipped: &Skipped) {
        if skipped.reason == SkipReason::Interrupted {
            return;
        }
        let fact = SkippedLine {
            skipped: &skipped.url,
            reason: skipped.reason.name(),
            from: skipped.from.as_deref(),
        };
        self.facts.borrow_mut().push_str(&line(&fact));
    }

    /// Notes that `url` was set aside as deeper than `--max-depth`: skipped
    /// at the end, unless a shorter path turns up first.
    pub fn set_aside(&self, url: &str, from: Option<&str>, depth: u32) {
        let fact = AsideLine {
            aside: url,
            from,
            depth,
        };
        self.facts.borrow_mut().push_str(&line(&fact));
    }

    /// Notes that a queued URL moved up to `depth` (a redirect found a
    /// shorter path to it).
    pub fn moved_up(&self, url: &str, depth: u32) {
        let fact = MovedLine { moved: url, depth };
        self.facts.borrow_mut().push_str(&line(&fact));
    }

    /// Notes what an origin's robots.txt said, so that a resumed crawl
    /// obeys the same rules without asking again.
    pub fn robots(&self, outcome: &RobotsOutcome, source: &RobotsSource) {
        let (kind, text) = match source {
            RobotsSource::File(text) => ("file", Some(text.as_str())),
            RobotsSource::AllowAll => ("allow-all", None),
            RobotsSource::DisallowAll => ("disallow-all", None),
        };
        let fact = RobotsLine {
            robots: &outcome.origin,
            status: outcome.status,
            verdict: &outcome.verdict,
            source: kind,
            text,
        };
        self.facts.borrow_mut().push_str(&line(&fact));
    }

    /// Notes a `Set-Cookie` line from a response to `url` at `at`, so
    /// that a resumed crawl keeps its sessions: it goes out with the next
    /// commit, the one of the URL whose response set it.
    pub fn cookie(&self, url: &str, set: &str, at: SystemTime) {
        let ms = at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let fact = CookieLine {
            cookie: url,
            set,
            at: ms,
        };
        self.facts.borrow_mut().push_str(&line(&fact));
    }

    /// Notes the validators of a page's `200 OK`, for the next recrawl:
    /// they go out with the next commit, the one of the URL they came with.
    pub fn validators(&self, url: &str, validators: &Validators) {
        let fact = ValidatorsLine {
            validators: url,
            etag: validators.etag.as_deref(),
            last_modified: validators.last_modified.as_deref(),
        };
        self.facts.borrow_mut().push_str(&line(&fact));
    }

    /// Notes that the crawl begins again (`--recrawl`) as `generation`,
    /// and writes it at once: every line after it is the new generation's.
    pub fn begin_recrawl(&self, generation: u32) -> io::Result<()> {
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let fact = RecrawlLine {
            recrawl: generation,
            at,
        };
        let mut file = self.file.borrow_mut();
        file.write_all(line(&fact).as_bytes())?;
        file.sync_data()
    }

    // ANCHOR: commit
    /// Writes the batch noted since the last commit, `done` lines last, in
    /// one `write`. Called when a URL is done, before the queue hears it.
    pub fn commit(&self) {
        let mut facts = self.facts.borrow_mut();
        let mut done = self.done.borrow_mut();
        if facts.is_empty() && done.is_empty() {
            return;
        }
        facts.push_str(&done);
        let written = self.file.borrow_mut().write_all(facts.as_bytes());
        facts.clear();
        done.clear();
        if let Err(e) = written {
            self.failed.borrow_mut().get_or_insert(e);
        }
    }
    // ANCHOR_END: commit

    /// Commits what is left, syncs the file to the disk, and stops the
    /// syncing thread. Returns the first error the journal met.
    pub fn close(&self) -> io::Result<()> {
        self.commit();
        if let Some((stop, thread)) = self.syncer.borrow_mut().take() {
            drop(stop);
            let _ = thread.join();
        }
        let synced = self.file.borrow().sync_all();
        match self.failed.borrow_mut().take() {
            Some(e) => Err(e),
            None => synced,
        }
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("writing the state {} failed: {e}", self.path.display()),
            )
        })
    }
}

/// The journal hears every new fact of the crawl, and writes a URL's
/// facts before the queue hears the URL is done.
impl Observer for Journal {
    fn queued(&self, work: &Work) {
        Journal::queued(
            self,
            work.url.as_str(),
            work.from.as_deref(),
            work.tag.depth,
            work.max_redirect,
        );
    }

    fn set_aside(&self, url: &str, from: Option<&str>, depth: u32) {
        Journal::set_aside(self, url, from, depth);
    }

    fn moved_up(&self, url: &str, depth: u32) {
        Journal::moved_up(self, url, depth);
    }

    fn fetched(&self, stat: &FetchStatistic) {
        self.done(stat);
    }

    fn skipped(&self, skipped: &Skipped) {
        Journal::skipped(self, skipped);
    }

    fn settled(&self) {
        self.commit();
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            log::error!("{e}");
        }
    }
}

/// The syncing thread, and the channel whose closing stops it.
type Syncer = (Sender<()>, JoinHandle<io::Result<()>>);

/// A thread that syncs the journal to the disk every [`SYNC_EVERY`],
/// until its channel closes.
fn start_syncer(file: &File) -> io::Result<Syncer> {
    let file = file.try_clone()?;
    let (stop, stopped) = channel::<()>();
    let thread = std::thread::Builder::new()
        .name("journal-sync".into())
        .spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(SYNC_EVERY)
            {
                file.sync_data()?;
            }
            Ok(())
        })?;
    Ok((stop, thread))
}

/// One journal line: the CRC-32 of the JSON, the JSON, a newline. The
/// JSON names its kind of fact first (`{"queued": …`), for a person
/// reading the file.
fn line(fact: &impl Serialize) -> String {
    let text = serde_json::to_string(fact).unwrap_or_default();
    format!("{:08x} {text}\n", crc32fast::hash(text.as_bytes()))
}

/// The first line: which crawl this is.
#[derive(Serialize)]
struct Header<'a> {
    format: u64,
    roots: &'a [String],
    rules: &'a str,
}

#[derive(Serialize)]
struct QueuedLine<'a> {
    queued: &'a str,
    from: Option<&'a str>,
    depth: u32,
    redirects: u32,
}

#[derive(Serialize)]
struct SkippedLine<'a> {
    skipped: &'a str,
    reason: &'a str,
    from: Option<&'a str>,
}

#[derive(Serialize)]
struct AsideLine<'a> {
    aside: &'a str,
    from: Option<&'a str>,
    depth: u32,
}

#[derive(Serialize)]
struct MovedLine<'a> {
    moved: &'a str,
    depth: u32,
}

#[derive(Serialize)]
struct RobotsLine<'a> {
    robots: &'a str,
    status: Option<u16>,
    verdict: &'a str,
    source: &'a str,
    text: Option<&'a str>,
}

#[derive(Serialize)]
struct CookieLine<'a> {
    cookie: &'a str,
    set: &'a str,
    /// Milliseconds since 1970: an expiry of Max-Age counts from here.
    at: u64,
}

#[derive(Serialize)]
struct ValidatorsLine<'a> {
    validators: &'a str,
    etag: Option<&'a str>,
    last_modified: Option<&'a str>,
}

#[derive(Serialize)]
struct RecrawlLine {
    recrawl: u32,
    /// Milliseconds since 1970, for a person reading the file.
    at: u64,
}

#[derive(Serialize)]
struct DoneLine {
    done: Value,
}

// ANCHOR: replay
/// Replays the journal `text` into `replayed`, and returns the length of
/// its good part. A last line without its newline, or whose checksum is
/// wrong, was torn by a crash: it is not part of the good length. A bad
/// line with lines after it is damage, and an error.
fn replay(text: &[u8], identity: &Identity, replayed: &mut Replayed) -> Result<usize, String> {
    let mut good = 0;
    let mut number = 0;
    // Where each URL's statistic is in `replayed.done`.
    let mut done_at = HashMap::new();
    while good < text.len() {
        number += 1;
        let rest = &text[good..];
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            break; // torn: no newline
        };
        let Some(fact) = check(&rest[..end]) else {
            if good + end + 1 == text.len() {
                break; // torn: the last line
            }
            return Err(format!(
                "line {number} is damaged (its checksum does not match); \
                 the state cannot be trusted"
            ));
        };
        if number == 1 {
            check_header(&fact, identity)?;
        } else {
            apply(&fact, replayed, &mut done_at)
                .ok_or_else(|| format!("line {number} is not a journal entry"))?;
        }
        good += end + 1;
    }
    if number == 0 || (good == 0 && !text.is_empty()) {
        return Err("its first line, which names the crawl, is damaged".into());
    }
    Ok(good)
}
// ANCHOR_END: replay

/// The JSON of a line whose checksum matches.
fn check(line: &[u8]) -> Option<Value> {
    let line = std::str::from_utf8(line).ok()?;
    let (crc, text) = line.split_once(' ')?;
    let crc = u32::from_str_radix(crc, 16).ok()?;
    (crc32fast::hash(text.as_bytes()) == crc)
        .then(|| serde_json::from_str(text).ok())
        .flatten()
}

fn check_header(header: &Value, identity: &Identity) -> Result<(), String> {
    let format = header["format"].as_u64().unwrap_or(0);
    if format > FORMAT {
        return Err(format!(
            "it was written by a newer stage3-crawler (state format {format}; this one reads {FORMAT})"
        ));
    }
    let roots: Vec<&str> = header["roots"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rules = header["rules"].as_str().unwrap_or_default();
    if format != FORMAT || roots != identity.roots || rules != identity.rules {
        return Err(format!(
            "{ANOTHER_CRAWL} (roots {}; {rules}); resume it with the command that \
             started it, or give this crawl another --state directory",
            roots.join(" ")
        ));
    }
    Ok(())
}

/// Adds one fact to `replayed`; `None` if it is not one we know.
fn apply(
    fact: &Value,
    replayed: &mut Replayed,
    done_at: &mut HashMap<String, usize>,
) -> Option<()> {
    let text = |v: &Value| v.as_str().map(str::to_string);
    if let Some(url) = fact.get("queued") {
        replayed.queued.push(Queued {
            url: text(url)?,
            from: text(&fact["from"]),
            depth: u32::try_from(fact["depth"].as_u64()?).ok()?,
            redirects: u32::try_from(fact["redirects"].as_u64()?).ok()?,
        });
    } else if let Some(stat) = fact.get("done") {
        // A URL done twice was fetched again after its first statistic
        // was set aside (its archive record was lost): the last one holds.
        let stat = stat_from_json(stat)?;
        match done_at.get(&stat.url) {
            Some(&i) => replayed.done[i] = stat,
            None => {
                done_at.insert(stat.url.clone(), replayed.done.len());
                replayed.done.push(stat);
            }
        }
    } else if let Some(url) = fact.get("validators") {
        // One that cannot be sent back is not kept.
        if let Some(validators) =
            Validators::new(fact["etag"].as_str(), fact["last_modified"].as_str())
        {
            replayed.fresh_validators.insert(text(url)?, validators);
        }
    } else if let Some(generation) = fact.get("recrawl") {
        let generation = u32::try_from(generation.as_u64()?).ok()?;
        // Each generation's line names the next number; anything else (a
        // line edited in, or a count past u32) is not this journal's.
        if replayed.generation.checked_add(1) != Some(generation) {
            return None;
        }
        replayed.begin_recrawl();
        done_at.clear();
    } else if let Some(url) = fact.get("aside") {
        replayed.aside.push(Aside {
            url: text(url)?,
            from: text(&fact["from"]),
            depth: u32::try_from(fact["depth"].as_u64()?).ok()?,
        });
    } else if let Some(url) = fact.get("moved") {
        let url = url.as_str()?;
        let depth = u32::try_from(fact["depth"].as_u64()?).ok()?;
        // The URL waits at its new depth; a URL that came back from being
        // too deep is queued again, with its own line.
        if let Some(queued) = replayed.queued.iter_mut().rev().find(|q| q.url == url) {
            queued.depth = depth;
        }
    } else if let Some(url) = fact.get("cookie") {
        let at = UNIX_EPOCH + Duration::from_millis(fact["at"].as_u64()?);
        replayed.cookies.push((text(url)?, text(&fact["set"])?, at));
    } else if let Some(origin) = fact.get("robots") {
        let source = match fact["source"].as_str()? {
            "file" => RobotsSource::File(text(&fact["text"])?),
            "allow-all" => RobotsSource::AllowAll,
            "disallow-all" => RobotsSource::DisallowAll,
            _ => return None,
        };
        let outcome = RobotsOutcome {
            origin: text(origin)?,
            status: match &fact["status"] {
                Value::Null => None,
                s => Some(u16::try_from(s.as_u64()?).ok()?),
            },
            verdict: text(&fact["verdict"])?,
            // Counted again from the rules when they are made.
            rules: 0,
            crawl_delay: None,
            capped: false,
        };
        replayed.robots.push((outcome, source));
    } else if let Some(url) = fact.get("skipped") {
        replayed.skipped.push(Skipped {
            url: text(url)?,
            reason: SkipReason::from_name(fact["reason"].as_str()?)?,
            from: text(&fact["from"]),
        });
    } else {
        return None;
    }
    Some(())
}

/// A statistic as the journal keeps it: the report's fields, with the
/// exception's kind beside its message.
pub(crate) fn stat_json(stat: &FetchStatistic) -> Value {
    let mut value = json!({
        "url": stat.url,
        "next_url": stat.next_url,
        "status": stat.status,
        "exception": stat.exception.as_ref().map(|e| json!({"kind": e.kind, "message": e.message})),
        "size": stat.size,
        "content_type": stat.content_type,
        "encoding": stat.encoding,
        "num_urls": stat.num_urls,
        "num_new_urls": stat.num_new_urls,
        "wire_size": stat.wire_size,
        "protocol": stat.protocol,
    });
    // Only a recrawl's statistics have it.
    if let Some(recrawled) = stat.recrawl {
        value["recrawl"] = recrawled.as_str().into();
    }
    value
}

pub(crate) fn stat_from_json(v: &Value) -> Option<FetchStatistic> {
    let text = |v: &Value| v.as_str().map(str::to_string);
    let exception = match &v["exception"] {
        Value::Null => None,
        e => Some(Exception {
            kind: Exception::kind_named(e["kind"].as_str()?),
            message: text(&e["message"])?,
        }),
    };
    Some(FetchStatistic {
        url: text(&v["url"])?,
        next_url: text(&v["next_url"]),
        status: match &v["status"] {
            Value::Null => None,
            s => Some(u16::try_from(s.as_u64()?).ok()?),
        },
        exception,
        size: v["size"].as_u64()?,
        content_type: text(&v["content_type"]),
        encoding: text(&v["encoding"]),
        num_urls: usize::try_from(v["num_urls"].as_u64()?).ok()?,
        num_new_urls: usize::try_from(v["num_new_urls"].as_u64()?).ok()?,
        wire_size: v["wire_size"].as_u64()?,
        // Journals written before HTTP/2 have none.
        protocol: v["protocol"]
            .as_str()
            .and_then(Protocol::named)
            .map(Protocol::as_str),
        recrawl: v["recrawl"].as_str().and_then(Recrawled::named),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir().join(format!("journal-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            Dir(dir)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn identity() -> Identity {
        Identity {
            roots: vec!["http://127.0.0.1:1/".into()],
            rules: "strict".into(),
        }
    }

    fn stat(url: &str) -> FetchStatistic {
        FetchStatistic {
            url: url.into(),
            next_url: None,
            status: Some(200),
            exception: None,
            size: 3,
            content_type: Some("text/html".into()),
            encoding: Some("utf-8".into()),
            num_urls: 1,
            num_new_urls: 1,
            wire_size: 3,
            protocol: Some("http/1.1"),
            recrawl: None,
        }
    }

    #[test]
    fn a_recrawl_is_a_generation_that_knows_the_last_one() {
        let dir = Dir::new("recrawl");
        let url = |path: &str| format!("http://127.0.0.1:1/{path}");
        let validators = Validators::new(Some("\"v1\""), None).unwrap();
        {
            let (journal, _) = Journal::open(&dir.0, &identity()).unwrap();
            journal.queued(&url(""), None, 0, 10);
            journal.validators(&url(""), &validators);
            journal.queued(&url("r"), Some(&url("")), 1, 10);
            journal.skipped(&Skipped {
                url: "http://elsewhere/".into(),
                reason: SkipReason::OffHost,
                from: Some(url("")),
            });
            journal.done(&stat(&url("")));
            journal.commit();
            let mut redirect = stat(&url("r"));
            redirect.status = Some(301);
            redirect.next_url = Some(url(""));
            journal.done(&redirect);
            journal.commit();
        }
        let (journal, mut replayed) = Journal::open(&dir.0, &identity()).unwrap();
        assert!(replayed.finished());
        assert_eq!(replayed.generation, 0);
        journal.begin_recrawl(1).unwrap();
        replayed.begin_recrawl();
        let expect_known = |replayed: &Replayed| {
            let known: Vec<&str> = replayed.known.iter().map(|q| q.url.as_str()).collect();
            assert_eq!(known, [url("").as_str(), url("r").as_str()]);
            assert_eq!(replayed.known_skipped.len(), 1);
            assert_eq!(replayed.validators[&url("")], validators);
            assert_eq!(replayed.answered[&url("r")], (Some(301), Some(url(""))));
            assert!(replayed.done.is_empty() && replayed.queued.is_empty());
        };
        expect_known(&replayed);
        assert!(!replayed.finished());
        // The root answers 304 in the new generation; killed there.
        let mut not_modified = stat(&url(""));
        not_modified.status = Some(304);
        not_modified.recrawl = Some(Recrawled::NotModified);
        journal.done(&not_modified);
        journal.commit();
        drop(journal);
        // Replayed, the generation is the same, and one URL is left.
        let (_journal, replayed) = Journal::open(&dir.0, &identity()).unwrap();
        assert_eq!(replayed.generation, 1);
        assert!(!replayed.is_empty());
        expect_known(&Replayed {
            done: Vec::new(),
            ..replayed.clone()
        });
        assert_eq!(replayed.done, [not_modified]);
        assert!(!replayed.finished());
    }

    #[test]
    fn cookies_survive_a_resume() {
        let dir = Dir::new("cookies");
        let at = UNIX_EPOCH + Duration::from_secs(1_772_355_900);
        let url = "http://127.0.0.1:1/login";
        {
            let (journal, _) = Journal::open(&dir.0, &identity()).unwrap();
            journal.cookie(url, "session=abc; Max-Age=600", at);
            journal.commit();
        }
        let (_, replayed) = Journal::open(&dir.0, &identity()).unwrap();
        assert_eq!(
            replayed.cookies,
            [(url.to_string(), "session=abc; Max-Age=600".to_string(), at)]
        );
        // Played into a new client's jar, the session goes out again, and
        // its Max-Age counts from when it was first heard.
        let client = crate::http::Client::new(crate::http::ClientConfig::default());
        let (url, line, at) = &replayed.cookies[0];
        let url = url::Url::parse(url).unwrap();
        client.restore_cookie(&url, line, *at);
        assert_eq!(client.cookies_kept(), 1);
    }

    #[test]
    fn a_failed_response_the_archive_lost_is_fetched_again() {
        let failure = |url: &str, status| FetchStatistic {
            status,
            exception: Some(crate::stats::Exception {
                kind: "decode",
                message: "not gzip".into(),
            }),
            ..stat(url)
        };
        let mut replayed = Replayed {
            done: vec![
                stat("http://h/kept"),
                stat("http://h/lost"),
                failure("http://h/bad-gzip", Some(200)),
                failure("http://h/refused", None),
            ],
            ..Replayed::default()
        };
        let archived: HashSet<String> = ["http://h/kept".to_string()].into();
        assert_eq!(replayed.forget_unarchived(&archived), 2);
        let left: Vec<&str> = replayed.done.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(left, ["http://h/kept", "http://h/refused"]);
    }

    /// A crawl of two pages: the root, done, and its link, queued.
    fn write_some(dir: &Path) {
        let (journal, replayed) = Journal::open(dir, &identity()).unwrap();
        assert!(replayed.is_empty());
        journal.queued("http://127.0.0.1:1/", None, 0, 10);
        journal.commit();
        journal.done(&stat("http://127.0.0.1:1/"));
        journal.queued("http://127.0.0.1:1/a", Some("http://127.0.0.1:1/"), 1, 10);
        journal.skipped(&Skipped {
            url: "http://x/".into(),
            reason: SkipReason::OffHost,
            from: Some("http://127.0.0.1:1/".into()),
        });
        journal.skipped(&Skipped {
            url: "http://127.0.0.1:1/b".into(),
            reason: SkipReason::Interrupted,
            from: None,
        });
        journal.commit();
        journal.close().unwrap();
    }

    #[test]
    fn replay_gives_back_what_was_written_with_done_after_its_links() {
        let dir = Dir::new("replay");
        write_some(&dir.0);
        let text = std::fs::read_to_string(dir.0.join("journal")).unwrap();
        let kinds: Vec<&str> = text
            .lines()
            .map(|l| l.split_once(' ').unwrap().1.split('"').nth(1).unwrap())
            .collect();
        assert_eq!(kinds, ["format", "queued", "queued", "skipped", "done"]);
        let (_journal, replayed) = Journal::open(&dir.0, &identity()).unwrap();
        assert_eq!(replayed.done, [stat("http://127.0.0.1:1/")]);
        assert_eq!(
            replayed
                .queued
                .iter()
                .map(|q| q.url.as_str())
                .collect::<Vec<_>>(),
            ["http://127.0.0.1:1/", "http://127.0.0.1:1/a"]
        );
        assert_eq!(
            replayed.queued[1].from.as_deref(),
            Some("http://127.0.0.1:1/")
        );
        // The interrupted URL is not skipped for good.
        assert_eq!(replayed.skipped.len(), 1);
        assert_eq!(replayed.skipped[0].reason, SkipReason::OffHost);
        assert_eq!(replayed.cut, 0);
    }

    #[test]
    fn depths_replay_as_they_last_were() {
        let dir = Dir::new("depth");
        let (journal, _) = Journal::open(&dir.0, &identity()).unwrap();
        journal.queued("http://127.0.0.1:1/a", None, 3, 10);
        journal.set_aside("http://127.0.0.1:1/deep", Some("http://127.0.0.1:1/a"), 4);
        journal.moved_up("http://127.0.0.1:1/a", 1);
        journal.commit();
        drop(journal);
        let (_journal, replayed) = Journal::open(&dir.0, &identity()).unwrap();
        assert_eq!(replayed.queued[0].depth, 1);
        assert_eq!(
            replayed.aside,
            [Aside {
                url: "http://127.0.0.1:1/deep".into(),
                from: Some("http://127.0.0.1:1/a".into()),
                depth: 4,
            }]
        );
    }

    #[test]
    fn a_torn_last_line_is_cut_off_and_damage_before_it_refused() {
        let dir = Dir::new("torn");
        write_some(&dir.0);
        let path = dir.0.join("journal");
        let whole = std::fs::read(&path).unwrap();
        // Torn in the middle of the last line: cut off, with what it held.
        std::fs::write(&path, &whole[..whole.len() - 10]).unwrap();
        let (journal, replayed) = Journal::open(&dir.0, &identity()).unwrap();
        assert!(replayed.done.is_empty());
        assert_eq!(replayed.queued.len(), 2);
        let last = whole[..whole.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap();
        assert_eq!(replayed.cut, (whole.len() - 10 - last - 1) as u64);
        drop(journal);
        assert_eq!(std::fs::read(&path).unwrap(), whole[..last + 1]);
        // A changed byte in the middle: refused, whatever follows.
        let mut damaged = whole.clone();
        let second = whole.iter().position(|&b| b == b'\n').unwrap() + 20;
        damaged[second] ^= 1;
        std::fs::write(&path, &damaged).unwrap();
        let err = Journal::open(&dir.0, &identity()).unwrap_err();
        assert!(err.contains("line 2 is damaged"), "{err}");
    }

    #[test]
    fn another_crawl_a_newer_format_and_a_busy_directory_are_refused() {
        let dir = Dir::new("refused");
        write_some(&dir.0);
        let other = Identity {
            roots: vec!["http://127.0.0.1:2/".into()],
            rules: "strict".into(),
        };
        let err = Journal::open(&dir.0, &other).unwrap_err();
        assert!(
            err.contains("it holds another crawl (roots http://127.0.0.1:1/; strict)"),
            "{err}"
        );
        let (_open, _) = Journal::open(&dir.0, &identity()).unwrap();
        let err = Journal::open(&dir.0, &identity()).unwrap_err();
        assert!(
            err.ends_with("is in use by another stage3-crawler"),
            "{err}"
        );
        drop(_open);
        let newer = line(&Header {
            format: FORMAT + 1,
            roots: &[],
            rules: "",
        });
        std::fs::write(dir.0.join("journal"), newer).unwrap();
        let err = Journal::open(&dir.0, &identity()).unwrap_err();
        assert!(err.contains("written by a newer stage3-crawler"), "{err}");
        std::fs::write(dir.0.join("journal"), "garbage\n").unwrap();
        let err = Journal::open(&dir.0, &identity()).unwrap_err();
        assert!(err.contains("damaged"), "{err}");
    }
}
