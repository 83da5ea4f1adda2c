//! The shared frontier (`--frontier redis://HOST:PORT/NAME`): the chapter's
//! joinable queue and seen set, kept in Redis so that any number of crawler
//! processes, on any number of machines, work on one crawl.
//!
//! Every step that reads and changes more than one key is a Lua script
//! (`frontier/*.lua`), which Redis runs atomically: no other process's
//! command runs in the middle of one. The keys, all under
//! `stage3:{NAME}:`, are:
//!
//! - `meta`: the crawl's identity (roots and rules) and the numbers the
//!   scripts need (`per_host`, `max_pages`, `robots`, `delay`, `lease`);
//! - `seen`: every URL seen, queued or skipped (the global dedup set);
//! - `queued`: how many URLs were queued, for `--max-pages`;
//! - `pending`: URLs queued and not yet completed (the join's count);
//! - `q:HOST`: each host's line of URLs waiting, as JSON work;
//! - `ready`: the hosts that may be claimed from, scored with the time
//!   their next request may start; `busy`, `delay` and `next`: each host's
//!   requests in flight, its delay once known, and when its delay ends;
//! - `leases` and `held`: every URL taken, with its deadline and holder;
//! - `variants`: how many query strings each path has had queued;
//! - `report`: every URL's record, a statistic or a skipped URL, as JSON;
//! - `tokens` and `expired`: counters of leases given and run out;
//! - `unreadable`: work in a host's line that held no URL, set aside.
//!
//! And one channel, `bell`: `complete` publishes on it when there is
//! something new to claim, or the crawl is over, so that a process with
//! nothing to do hears of it at once instead of polling.

use std::cell::Cell;
use std::io;
use std::time::{Duration, Instant};

use redis_client::{Connection, Error, Frame, Pool, RedisUrl, Script};

// ANCHOR: scripts
/// The scripts, each after the functions they share.
macro_rules! script {
    ($file:literal) => {
        Script::new(concat!(
            include_str!("frontier/common.lua"),
            include_str!(concat!("frontier/", $file))
        ))
    };
}
// ANCHOR_END: scripts

/// How long one Redis command may take before the connection is presumed
/// dead.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// The shortest lease: renewed every third of it, a shorter one would keep
/// a process busy renewing.
pub const MIN_LEASE: Duration = Duration::from_millis(100);

/// The longest pause between two tries to reach a lost Redis.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// The numbers every process of a crawl must agree on, which the scripts
/// read from `meta`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `--per-host`, summed over every process.
    pub per_host: usize,
    /// `--max-pages`, for the whole crawl.
    pub max_pages: Option<u64>,
    /// Whether robots.txt is obeyed: until a host's rules are known, it
    /// gets one request at a time.
    pub robots: bool,
    /// `--delay`.
    pub delay: Duration,
    /// How long a URL stays leased without a renewal.
    pub lease: Duration,
    /// `--max-query-variants`, for the whole crawl.
    pub max_query_variants: usize,
}

/// A URL offered to the shared seen set: queued if nobody saw it before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The URL, in the `url` crate's normal form.
    pub url: String,
    /// Its host key (`host:port`), whose line it waits in.
    pub host: String,
    /// The work to queue, as JSON.
    pub work: String,
    /// Its skipped record, if the rules that look only at the URL refuse
    /// it (host, `--exclude`, length, repeated segments).
    pub refused: Option<String>,
    /// Its path, if it has a query: what `--max-query-variants` counts.
    pub variant: Option<String>,
    /// Its skipped record, should its path have had its fill of queries.
    pub too_many_variants: String,
    /// Its skipped record, if robots.txt disallows it (as far as this
    /// process knows).
    pub robots: Option<String>,
    /// Its skipped record, should `--max-pages` be reached.
    pub over_max_pages: String,
    /// Whether it is a page's link, which counts in the page's `num_urls`.
    pub counts: bool,
}

/// One leased URL to complete, with what its fetch found.
#[derive(Clone, Debug)]
pub struct Completion {
    /// The leased URL.
    pub url: String,
    /// Its lease's token.
    pub token: u64,
    /// The host's delay, if this process learned it.
    pub delay: Option<Duration>,
    /// The URL's record for the report, as JSON.
    pub record: String,
    /// Links kept back, known to be seen.
    pub known: usize,
    /// The links to offer to the seen set.
    pub links: Vec<Link>,
}

/// What became of one [`Link`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// Some process saw it before.
    Before,
    /// Queued.
    Queued,
    /// New, and refused by the rules that look only at the URL: its
    /// skipped record is in the report.
    Refused,
    /// New, and its path had its fill of queries.
    QueryVariants,
    /// New, and disallowed by robots.txt.
    Robots,
    /// New, and over `--max-pages`.
    OverMaxPages,
}

/// A URL taken under a lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leased {
    /// The URL, as the frontier keeps it.
    pub url: String,
    /// The lease's token: only its holder may complete or renew it.
    pub token: u64,
    /// Its host key.
    pub host: String,
    /// The work, as JSON.
    pub work: String,
}

/// What [`Frontier::claim`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// URLs to fetch.
    Work(Vec<Leased>),
    /// Nothing may start now; ask again after this long at most.
    Wait(Duration),
    /// No URL is queued or leased anywhere: the crawl is over.
    Finished,
}

/// What [`Frontier::complete`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completed {
    /// The lease ran out before: the URL went back to the queue, and
    /// whoever takes it next reports it.
    Lost,
    /// Its record was not JSON (a bug of ours): nothing was done, and the
    /// lease will run out.
    Unreadable,
    /// Recorded. The page's link counts, and what became of each link.
    Done {
        /// The page's links that the rules let through: its `num_urls`.
        urls: usize,
        /// Those that nobody had seen: its `num_new_urls`.
        new: usize,
        /// Each link's fate, in order.
        seen: Vec<Seen>,
    },
}

/// The crawl's counters, for the merged report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// URLs queued and not completed.
    pub pending: u64,
    /// Leases that ran out (URLs fetched again, or about to be).
    pub expired: u64,
    /// When the crawl was created, in ms since the epoch (server time).
    pub created_ms: u64,
    /// When a process first found it finished; 0 if none has.
    pub finished_ms: u64,
    /// Workers of every process that joined it, summed.
    pub workers: u64,
    /// Work set aside because it held no URL: seen, and in no report.
    pub unreadable: u64,
}

/// A crawl's frontier in Redis, for one process.
pub struct Frontier {
    url: RedisUrl,
    prefix: String,
    pool: Pool,
    /// How long to keep trying a lost Redis before giving up.
    patience: Cell<Duration>,
    /// Whether the last try failed, so that the recovery is logged once.
    lost: Cell<bool>,
    /// A connection subscribed to the crawl's `bell`, once there is one.
    bell: Cell<Option<Connection>>,
    init: Script,
    claim: Script,
    complete: Script,
    renew: Script,
    release: Script,
}

impl Frontier {
    /// The frontier of the crawl `url` names, through at most `connections`
    /// connections. A lost Redis is tried again for `patience`.
    pub fn new(url: RedisUrl, connections: usize, patience: Duration) -> Frontier {
        Frontier {
            prefix: format!("stage3:{{{}}}:", url.name),
            pool: Pool::new(url.clone(), connections),
            url,
            patience: Cell::new(patience),
            lost: Cell::new(false),
            bell: Cell::new(None),
            init: script!("init.lua"),
            claim: script!("claim.lua"),
            complete: script!("complete.lua"),
            renew: script!("renew.lua"),
            release: script!("release.lua"),
        }
    }

    /// `redis://HOST:PORT/NAME`.
    pub fn url(&self) -> &RedisUrl {
        &self.url
    }

    /// The crawl's identity, if it exists.
    pub async fn identity(&self) -> io::Result<Option<String>> {
        let key = self.key("meta");
        let reply = self
            .call(async |conn: &mut Connection| conn.command(&["HGET", &key, "identity"]).await)
            .await?;
        Ok(reply.as_str().map(str::to_string))
    }

    /// Creates the crawl with `identity` and queues `roots`, unless it
    /// exists. Returns `None` if it was created, or the identity of the
    /// crawl that was there.
    pub async fn create(
        &self,
        identity: &str,
        settings: &Settings,
        roots: &[Link],
    ) -> io::Result<Option<String>> {
        let numbers = [
            settings.per_host.to_string(),
            settings.max_pages.map_or("-1".into(), |n| n.to_string()),
            u8::from(settings.robots).to_string(),
            settings.delay.as_millis().to_string(),
            settings.lease.max(MIN_LEASE).as_millis().to_string(),
            settings.max_query_variants.to_string(),
        ];
        let mut args: Vec<&[u8]> = vec![identity.as_bytes()];
        args.extend(numbers.iter().map(|n| n.as_bytes()));
        push_links(&mut args, roots);
        let reply = self.run(&self.init, &args).await?;
        let mut items = items(reply)?.into_iter();
        match (items.next().and_then(|f| f.as_integer()), items.next()) {
            (Some(1), _) => Ok(None),
            (Some(0), Some(existing)) => Ok(existing.as_str().map(str::to_string)),
            _ => Err(unexpected("init")),
        }
    }

    /// Takes up to `n` URLs under a lease.
    pub async fn claim(&self, n: usize) -> io::Result<Claim> {
        let n = n.to_string();
        let reply = self.run(&self.claim, &[n.as_bytes()]).await?;
        let mut items = items(reply)?.into_iter();
        let kind = items.next();
        match kind.as_ref().and_then(Frame::as_str) {
            Some("finished") => Ok(Claim::Finished),
            Some("gone") => Err(self.gone()),
            Some("wait") => {
                let ms = items.next().and_then(|f| f.as_integer()).unwrap_or(1);
                Ok(Claim::Wait(Duration::from_millis(ms.max(1) as u64)))
            }
            Some("work") => Ok(Claim::Work(leased_list(&items.collect::<Vec<_>>())?)),
            _ => Err(unexpected("claim")),
        }
    }

    /// Completes the leased `url`: records it, queues the new `links`, and
    /// frees its host's slot, starting the host's `delay` if this process
    /// learned one. `known` links of the page were kept back, known to be
    /// seen: they count in its `num_urls` (see `shared.rs`'s `SeenHere`).
    pub async fn complete(
        &self,
        url: &str,
        token: u64,
        delay: Option<Duration>,
        record: &str,
        known: usize,
        links: &[Link],
    ) -> io::Result<Completed> {
        let one = Completion {
            url: url.to_string(),
            token,
            delay,
            record: record.to_string(),
            known,
            links: links.to_vec(),
        };
        let (mut done, _) = self.complete_many(std::slice::from_ref(&one), 0).await?;
        done.pop().ok_or_else(|| unexpected("complete"))
    }

    /// Completes several leased URLs in one script, each as
    /// [`complete`](Self::complete) would: what each came to, in order.
    ///
    /// Then it claims up to `claim` URLs, as [`claim`](Self::claim) would
    /// (none if the crawl is over): a busy process gets its next work in
    /// the call that completes its last, with no script of its own.
    pub async fn complete_many(
        &self,
        batch: &[Completion],
        claim: usize,
    ) -> io::Result<(Vec<Completed>, Vec<Leased>)> {
        let claim = claim.to_string();
        let numbers: Vec<[String; 4]> = batch
            .iter()
            .map(|c| {
                [
                    c.token.to_string(),
                    c.delay.map_or(String::new(), |d| d.as_millis().to_string()),
                    c.known.to_string(),
                    c.links.len().to_string(),
                ]
            })
            .collect();
        let mut args: Vec<&[u8]> = vec![claim.as_bytes()];
        for (c, [token, delay, known, links]) in batch.iter().zip(&numbers) {
            args.extend([
                c.url.as_bytes(),
                token.as_bytes(),
                delay.as_bytes(),
                c.record.as_bytes(),
                known.as_bytes(),
                links.as_bytes(),
            ]);
            push_links(&mut args, &c.links);
        }
        let reply = self.run(&self.complete, &args).await?;
        // The URLs claimed first, then what each completion came to.
        let mut replies = items(reply)?.into_iter();
        let claimed = leased_list(&items(
            replies.next().ok_or_else(|| unexpected("complete"))?,
        )?)?;
        let mut done = Vec::with_capacity(batch.len());
        for item in replies {
            let codes: Vec<i64> = items(item)?
                .iter()
                .map(|f| f.as_integer().ok_or_else(|| unexpected("complete")))
                .collect::<io::Result<_>>()?;
            done.push(match codes.as_slice() {
                [-2, ..] => return Err(self.gone()),
                [-1, ..] => Completed::Lost,
                [-3, ..] => Completed::Unreadable,
                [urls, new, codes @ ..] => Completed::Done {
                    urls: (*urls).max(0) as usize,
                    new: (*new).max(0) as usize,
                    seen: codes.iter().map(|&c| seen_code(c)).collect(),
                },
                _ => return Err(unexpected("complete")),
            });
        }
        if done.len() != batch.len() {
            return Err(unexpected("complete"));
        }
        Ok((done, claimed))
    }

    /// Extends the leases on `held` (URL and token). Returns how many were
    /// still ours.
    pub async fn renew(&self, held: &[(String, u64)]) -> io::Result<usize> {
        self.pairs(&self.renew, held).await
    }

    /// Gives the leases on `held` back to the queue at once.
    pub async fn release(&self, held: &[(String, u64)]) -> io::Result<usize> {
        self.pairs(&self.release, held).await
    }

    async fn pairs(&self, script: &Script, held: &[(String, u64)]) -> io::Result<usize> {
        if held.is_empty() {
            return Ok(0);
        }
        let tokens: Vec<String> = held.iter().map(|(_, t)| t.to_string()).collect();
        let mut args: Vec<&[u8]> = Vec::with_capacity(held.len() * 2);
        for ((url, _), token) in held.iter().zip(&tokens) {
            args.push(url.as_bytes());
            args.push(token.as_bytes());
        }
        let reply = self.run(script, &args).await?;
        Ok(reply.as_integer().unwrap_or(0).max(0) as usize)
    }

    /// Every URL's record, statistic or skipped, as JSON, in no order.
    pub async fn records(&self) -> io::Result<Vec<String>> {
        let key = self.key("report");
        let mut cursor = "0".to_string();
        let mut records = Vec::new();
        loop {
            let reply = self
                .call(async |conn: &mut Connection| {
                    conn.command(&["HSCAN", &key, &cursor, "COUNT", "1000"])
                        .await
                })
                .await?;
            let mut parts = items(reply)?.into_iter();
            let (Some(next), Some(page)) = (parts.next(), parts.next()) else {
                return Err(unexpected("HSCAN"));
            };
            let page = page.into_items().ok_or_else(|| unexpected("HSCAN"))?;
            for pair in page.chunks(2) {
                if let Some(value) = pair.get(1).and_then(Frame::as_str) {
                    records.push(value.to_string());
                }
            }
            cursor = next
                .as_str()
                .ok_or_else(|| unexpected("HSCAN"))?
                .to_string();
            if cursor == "0" {
                return Ok(records);
            }
        }
    }

    /// The crawl's counters.
    pub async fn status(&self) -> io::Result<Status> {
        let keys = [
            self.key("pending"),
            self.key("expired"),
            self.key("meta"),
            self.key("unreadable"),
        ];
        let reply = self
            .call(async |conn: &mut Connection| {
                let replies = conn
                    .pipeline(&[
                        vec!["GET", keys[0].as_str()],
                        vec!["GET", keys[1].as_str()],
                        vec!["HGET", keys[2].as_str(), "created"],
                        vec!["HGET", keys[2].as_str(), "finished"],
                        vec!["HGET", keys[2].as_str(), "workers"],
                        vec!["LLEN", keys[3].as_str()],
                    ])
                    .await?;
                let numbers = replies
                    .into_iter()
                    .map(|r| r.map(|f| Frame::Integer(number(&f) as i64)))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Frame::Array(numbers))
            })
            .await?;
        let n: Vec<u64> = items(reply)?
            .iter()
            .map(|f| f.as_integer().unwrap_or(0).max(0) as u64)
            .collect();
        Ok(Status {
            pending: n.first().copied().unwrap_or(0),
            expired: n.get(1).copied().unwrap_or(0),
            created_ms: n.get(2).copied().unwrap_or(0),
            finished_ms: n.get(3).copied().unwrap_or(0),
            workers: n.get(4).copied().unwrap_or(0),
            unreadable: n.get(5).copied().unwrap_or(0),
        })
    }

    /// Counts a process's `workers` in the crawl's total, for the merged
    /// report.
    pub async fn add_workers(&self, workers: usize) -> io::Result<()> {
        let key = self.key("meta");
        let n = workers.to_string();
        self.call(async |conn: &mut Connection| {
            conn.command(&["HINCRBY", key.as_str(), "workers", n.as_str()])
                .await
        })
        .await?;
        Ok(())
    }

    /// Changes how long a lost Redis is tried again: none at all when a
    /// process starts (an unreachable Redis is a mistake to report at
    /// once), longer once the crawl runs.
    pub fn set_patience(&self, patience: Duration) {
        self.patience.set(patience);
    }

    /// Deletes every key of the crawl. Returns how many there were.
    pub async fn clear(&self) -> io::Result<usize> {
        let pattern = format!("{}*", glob_escape(&self.prefix));
        let mut cursor = "0".to_string();
        let mut deleted = 0;
        loop {
            let reply = self
                .call(async |conn: &mut Connection| {
                    conn.command(&["SCAN", &cursor, "MATCH", &pattern, "COUNT", "1000"])
                        .await
                })
                .await?;
            let mut parts = items(reply)?.into_iter();
            let (Some(next), Some(keys)) = (parts.next(), parts.next()) else {
                return Err(unexpected("SCAN"));
            };
            let keys: Vec<Frame> = keys.into_items().ok_or_else(|| unexpected("SCAN"))?;
            if !keys.is_empty() {
                let mut command: Vec<&[u8]> = vec![b"UNLINK"];
                command.extend(keys.iter().filter_map(Frame::as_bytes));
                let reply = self
                    .call(async |conn: &mut Connection| conn.command(&command).await)
                    .await?;
                deleted += reply.as_integer().unwrap_or(0).max(0) as usize;
            }
            cursor = next.as_str().ok_or_else(|| unexpected("SCAN"))?.to_string();
            if cursor == "0" {
                return Ok(deleted);
            }
        }
    }

    // ANCHOR: doorbell
    /// Waits until some process rings the crawl's bell (there is new work,
    /// or the crawl is over), or `longest` has passed. Without a working
    /// subscription, it just waits `longest`: the bell saves time, it is
    /// never needed for correctness.
    pub async fn wait_for_news(&self, longest: Duration) {
        let conn = match self.bell.take() {
            Some(conn) => Some(conn),
            None => runtime::timeout(longest, self.subscribe())
                .await
                .ok()
                .and_then(Result::ok),
        };
        let Some(conn) = conn else {
            return runtime::sleep(longest).await;
        };
        // Back in the cell however this ends, a cancelled wait included
        // (`receive` loses nothing when cancelled), unless it broke.
        let mut kept = Kept {
            cell: &self.bell,
            conn: Some(conn),
        };
        let Some(conn) = kept.conn.as_mut() else {
            return;
        };
        if let Ok(Err(_)) = runtime::timeout(longest, conn.receive()).await {
            kept.conn = None; // subscribe again next time
        }
    }

    async fn subscribe(&self) -> Result<Connection, Error> {
        let mut conn = self.url.connect().await?;
        conn.command(&["SUBSCRIBE", &self.key("bell")]).await?;
        Ok(conn)
    }
    // ANCHOR_END: doorbell

    /// The crawl's keys vanished under us: a Redis that restarted without
    /// keeping its data, a flush, an eviction, `--frontier-clear`. Going on
    /// would look like a finished crawl.
    fn gone(&self) -> io::Error {
        io::Error::other(format!(
            "the crawl at {} is gone from Redis (restarted without its data, flushed, evicted \
             or cleared): run Redis with persistence (appendonly yes) and \
             maxmemory-policy noeviction",
            self.url
        ))
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    async fn run(&self, script: &Script, args: &[&[u8]]) -> io::Result<Frame> {
        let prefix = self.prefix.as_str();
        self.call(async |conn: &mut Connection| script.invoke(conn, &[prefix], args).await)
            .await
    }

    // ANCHOR: call
    /// Runs `command` on a pooled connection. A connection that fails or
    /// hangs is dropped, and the command tried again on a new one, with a
    /// growing pause, until `patience` runs out: Redis restarting, or a
    /// network blip, costs a wait, not the crawl. An error reply is not
    /// tried again: the server is there, and said no.
    async fn call(
        &self,
        command: impl AsyncFn(&mut Connection) -> Result<Frame, Error>,
    ) -> io::Result<Frame> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(50);
        loop {
            let tried = runtime::timeout(COMMAND_TIMEOUT, async {
                let mut conn = self.pool.get().await?;
                let reply = command(&mut conn).await;
                if !reply.as_ref().is_err_and(Error::is_fatal) {
                    conn.release();
                }
                reply
            })
            .await;
            let error = match tried {
                Ok(Ok(reply)) => {
                    if self.lost.replace(false) {
                        log::warn!("redis at {} is back", self.url);
                    }
                    return Ok(reply);
                }
                Ok(Err(e)) if !e.is_fatal() && !is_transient(&e) => {
                    return Err(io::Error::other(format!("{}: {e}", self.url)));
                }
                Ok(Err(e)) => e.to_string(),
                Err(_) => format!("no answer in {COMMAND_TIMEOUT:?}"),
            };
            if started.elapsed() + pause > self.patience.get() {
                return Err(io::Error::other(format!(
                    "lost redis at {} ({error}), and it did not come back in {:?}",
                    self.url,
                    self.patience.get()
                )));
            }
            if !self.lost.replace(true) {
                log::warn!("redis at {}: {error}; trying again", self.url);
            }
            runtime::sleep(pause).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }
    // ANCHOR_END: call
}

/// A connection taken out of a cell, put back when dropped.
struct Kept<'a> {
    cell: &'a Cell<Option<Connection>>,
    conn: Option<Connection>,
}

impl Drop for Kept<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.cell.set(Some(conn));
        }
    }
}

/// A refusal that passes by itself: Redis loading its data after a
/// restart, busy with a slow script, or a replica between masters.
fn is_transient(e: &Error) -> bool {
    matches!(e, Error::Server(message)
        if ["LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN"]
            .iter()
            .any(|prefix| message.starts_with(prefix)))
}

fn push_links<'a>(args: &mut Vec<&'a [u8]>, links: &'a [Link]) {
    for link in links {
        args.push(link.url.as_bytes());
        args.push(link.host.as_bytes());
        args.push(link.work.as_bytes());
        args.push(link.refused.as_deref().unwrap_or("").as_bytes());
        args.push(link.variant.as_deref().unwrap_or("").as_bytes());
        args.push(link.too_many_variants.as_bytes());
        args.push(link.robots.as_deref().unwrap_or("").as_bytes());
        args.push(link.over_max_pages.as_bytes());
        args.push(if link.counts { b"1" } else { b"0" });
    }
}

fn seen_code(code: i64) -> Seen {
    match code {
        1 => Seen::Queued,
        2 => Seen::Refused,
        3 => Seen::OverMaxPages,
        4 => Seen::QueryVariants,
        5 => Seen::Robots,
        _ => Seen::Before,
    }
}

fn items(reply: Frame) -> io::Result<Vec<Frame>> {
    reply.into_items().ok_or_else(|| unexpected("a script"))
}

/// A number sent as a string (`GET` of a counter), 0 if absent.
fn number(frame: &Frame) -> u64 {
    frame
        .as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| frame.as_integer().map(|n| n.max(0) as u64))
        .unwrap_or(0)
}

/// Leased URLs as a claim lists them: url, token, host and work for each.
fn leased_list(frames: &[Frame]) -> io::Result<Vec<Leased>> {
    let mut leased = Vec::with_capacity(frames.len() / 4);
    for group in frames.chunks(4) {
        let [url, token, host, work] = group else {
            return Err(unexpected("claim"));
        };
        let (Some(url), Some(token), Some(host), Some(work)) = (
            url.as_str(),
            token.as_integer(),
            host.as_str(),
            work.as_str(),
        ) else {
            return Err(unexpected("claim"));
        };
        leased.push(Leased {
            url: url.to_string(),
            token: token as u64,
            host: host.to_string(),
            work: work.to_string(),
        });
    }
    Ok(leased)
}

fn unexpected(what: &str) -> io::Error {
    io::Error::other(format!("redis: unexpected reply to {what}"))
}

/// `SCAN MATCH` reads `*?[]\` as a glob: a crawl's name may hold them.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
