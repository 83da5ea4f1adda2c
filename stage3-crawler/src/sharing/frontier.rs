//! The shared frontier (`--frontier redis://HOST:PORT/NAME`): the chapter's
//! joinable queue and seen set, kept in Redis so that any number of crawler
//! processes, on any number of machines, work on one crawl.
//!
//! Every step that reads and changes more than one key is a Lua script
//! (`frontier/*.lua`), which Redis runs atomically: no other process's
//! command runs in the middle of one. On one Redis the keys are all under
//! `stage3:{NAME}:`. On a Redis Cluster the crawl has one *shard* per
//! master: the first under `stage3:{NAME}:`, each other under
//! `stage3:{NAME/N}:`, with an `N` chosen so that its hash tag lands on
//! that master. Each host's keys live on one shard (`hosts`, on the first,
//! says which), so a script that works on a host's line, slots and seen
//! URLs touches one slot, as a cluster requires. A shard's keys are:
//!
//! - `meta`: the crawl's identity (roots and rules) and the numbers the
//!   scripts need (`per_host`, `max_pages`, `robots`, `delay`, `lease`,
//!   `max_query_variants`, `max_depth`);
//!   on the first shard, also the other shards (`shards`), whether the
//!   roots are queued (`ready`), and when the crawl was created and found
//!   finished;
//! - `hosts` and `hosts_given`: on the first shard, each host's shard, and
//!   how many hosts were given one (the turn);
//! - `seen`: every URL seen, queued or skipped, with what the first page
//!   that offered it was told (the global dedup set);
//! - `queued`: how many URLs and sitemaps were queued, a count that only
//!   grows (the end on a cluster reads it), and `sitemaps_queued`, how
//!   many of them were sitemaps: `--max-pages` counts the rest (a crawl
//!   with `--max-pages` keeps to one shard: the count must be one number);
//! - `pending`: URLs queued and not yet completed (the join's count,
//!   summed over the shards);
//! - `q:HOST`: each host's line of URLs waiting, each four lines (the URL,
//!   the page that linked it, its depth, the redirects it may follow; a
//!   sitemap's URL after a `~`);
//! - with `--max-depth` (one shard): `level`, the depth in progress;
//!   `later`, URLs waiting for a deeper level (URL -> host and work); and
//!   `deep`, URLs deeper than the limit (URL -> the page that found them),
//!   skipped at the end unless a redirect brings them closer;
//! - `sitemaps` (`--sitemaps`): each sitemap queued, then what reading it
//!   came to;
//! - `ready`: the hosts that may be claimed from, scored with the time
//!   their next request may start; `busy`, `delay` and `next`: each host's
//!   requests in flight, its delay once known, and when its delay ends;
//! - `leases`, `grants`, `grant:TOKEN` and `works:TOKEN`: the URLs taken,
//!   in grants (a claim's URLs of one host, leased together): each grant's
//!   deadline, its host, the URLs it still holds and their work;
//! - `variants`: how many query strings each path has had queued;
//! - `report`: every URL's record: `=NUM_URLS NUM_NEW_URLS` and the JSON
//!   statistic its process sent (without the URL and the counts), or
//!   `-REASON` and the page that linked a URL `see` refused
//!   ([`Frontier::records`] makes JSON of both);
//! - `tokens` and `expired`: counters of grants given and of URLs whose
//!   lease ran out;
//! - `unreadable`: work in a host's line that held no URL, set aside.
//!
//! And a channel per shard, `bell`: `complete`, `see` and `release`
//! publish on it when there is something new to claim, or the crawl is
//! over, so that a process with nothing to do hears of it at once instead
//! of polling.
//!
//! The scripts need Redis 6.2 or later (`LPOP` with a count); Debian 12
//! has 7.0.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use redis_client::{Cluster, Connection, Error, Frame, RedisUrl, Script, is_redirect, key_slot};

mod completion;
mod layout;
mod leases;
mod report;

use completion::Group;

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
    /// `--max-depth`, level by level for every process at once.
    pub max_depth: Option<u32>,
}

/// A URL offered to the shared seen set: queued if nobody saw it before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The URL, in the `url` crate's normal form.
    pub url: String,
    /// Its host key (`host:port`), whose line it waits in.
    pub host: String,
    /// Its path, if it has a query: what `--max-query-variants` counts.
    pub variant: Option<String>,
    /// Why the rules that look only at the URL refuse it (host,
    /// `--exclude`, length, repeated segments): the report's reason.
    pub refused: Option<&'static str>,
    /// Whether robots.txt disallows it, as far as this process knows.
    pub robots: bool,
    /// Whether it is a page's link, which counts in the page's `num_urls`.
    pub counts: bool,
    /// Whether it is a sitemap to read (`--sitemaps`), not a page.
    pub sitemap: bool,
}

/// One leased URL to complete, with what its fetch found.
#[derive(Clone, Debug)]
pub struct Completion {
    /// The leased URL.
    pub url: String,
    /// Its host key, as its lease gave it.
    pub host: String,
    /// Its lease's token.
    pub token: u64,
    /// The host's delay, if this process learned it.
    pub delay: Option<Duration>,
    /// The URL's record for the report, as JSON.
    pub record: String,
    /// Links kept back, known to be seen.
    pub known: usize,
    /// The depth and redirects of its links (their `from` is `url`).
    pub depth: u32,
    /// How many redirects each link may still follow.
    pub redirects: u32,
    /// The links to offer to the seen set.
    pub links: Vec<Link>,
}

/// A lease this process holds: the URL, its host and its token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// The leased URL.
    pub url: String,
    /// Its host key.
    pub host: String,
    /// The lease's token.
    pub token: u64,
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
    /// New, and deeper than `--max-depth`: skipped at the end, unless a
    /// redirect brings it closer first.
    TooDeep,
}

/// A URL taken under a lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leased {
    /// The URL, as the frontier keeps it.
    pub url: String,
    /// The token of the grant it was leased in: only its holder may
    /// complete or renew it.
    pub token: u64,
    /// Its host key.
    pub host: String,
    /// The work, in the frontier's four lines (see `q:HOST` above).
    pub work: String,
}

impl Leased {
    /// The lease, as renewing or giving it back names it.
    pub fn held(&self) -> Held {
        Held {
            url: self.url.clone(),
            host: self.host.clone(),
            token: self.token,
        }
    }
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
    /// The first shard's prefix, `stage3:{NAME}:`: the crawl's identity.
    home: String,
    nodes: Cluster,
    /// The prefixes of the crawl's shards, the first shard's first, once
    /// read from `meta`.
    shards: RefCell<Option<Rc<[String]>>>,
    /// Each host's shard, as the crawl placed it (see `assign.lua`).
    placed: RefCell<HashMap<String, usize>>,
    /// Hosts this process has told Redis have no delay: told once, since
    /// a delay of zero moves nothing (a delay above zero is told after
    /// every request, to start the next one's wait).
    told: RefCell<std::collections::HashSet<String>>,
    /// The shard the next idle claim starts from, so that claims take
    /// turns among shards.
    next_claim: Cell<usize>,
    /// How long to keep trying a lost Redis before giving up.
    patience: Cell<Duration>,
    /// Whether the last try failed, so that the recovery is logged once.
    lost: Cell<bool>,
    /// A connection subscribed to the crawl's bells, once there is one.
    bell: Cell<Option<Connection>>,
    init: Script,
    claim: Script,
    complete: Script,
    see: Script,
    assign: Script,
    finish: Script,
    counts: Script,
    renew: Script,
    release: Script,
    workers: Script,
    pause: Script,
}

impl Frontier {
    /// The frontier of the crawl `url` names, through at most `connections`
    /// connections to each Redis. A lost Redis is tried again for
    /// `patience`.
    pub fn new(url: RedisUrl, connections: usize, patience: Duration) -> Frontier {
        Frontier {
            home: format!("stage3:{{{}}}:", url.name),
            nodes: Cluster::new(url.clone(), connections),
            url,
            shards: RefCell::new(None),
            placed: RefCell::new(HashMap::new()),
            told: RefCell::new(std::collections::HashSet::new()),
            next_claim: Cell::new(0),
            patience: Cell::new(patience),
            lost: Cell::new(false),
            bell: Cell::new(None),
            init: script!("init.lua"),
            claim: script!("claim.lua"),
            complete: script!("complete.lua"),
            see: script!("see.lua"),
            assign: script!("assign.lua"),
            finish: script!("finish.lua"),
            counts: script!("counts.lua"),
            renew: script!("renew.lua"),
            release: script!("release.lua"),
            workers: script!("workers.lua"),
            pause: script!("pause.lua"),
        }
    }

    // ANCHOR: pause
    /// `host` asked to be left alone for `wait` (a 429 or 503): no process
    /// is handed its URLs until then, by the clock of the Redis that
    /// holds it, one clock for every process.
    pub async fn pause(&self, host: &str, wait: Duration) -> io::Result<()> {
        let shard = self.place(&[host]).await?[0];
        let prefix = self.shards().await?[shard].clone();
        let ms = wait.as_millis().to_string();
        self.run(&self.pause, &prefix, &[host.as_bytes(), ms.as_bytes()])
            .await
            .map(drop)
    }
    // ANCHOR_END: pause

    /// `redis://HOST:PORT/NAME`.
    pub fn url(&self) -> &RedisUrl {
        &self.url
    }

    /// The crawl's identity, if it exists and its roots are queued.
    pub async fn identity(&self) -> io::Result<Option<String>> {
        let key = self.key("meta");
        let reply = self
            .call(&key, async |conn: &mut Connection| {
                conn.command(&["HMGET", &key, "identity", "ready", "shards"])
                    .await
            })
            .await?;
        let fields = items(reply)?;
        let field = |i: usize| fields.get(i).and_then(Frame::as_str);
        // A crawl of an older format has no `shards`: its identity says
        // which format it is, for the caller to refuse.
        Ok(match (field(0), field(1), field(2)) {
            (Some(identity), Some(_), _) | (Some(identity), None, None) => {
                Some(identity.to_string())
            }
            _ => None,
        })
    }

    /// Counts a process's `workers` in the crawl's total, for the merged
    /// report.
    pub async fn add_workers(&self, workers: usize) -> io::Result<()> {
        let n = workers.to_string();
        let reply = self.run(&self.workers, &self.home, &[n.as_bytes()]).await?;
        if reply.as_integer() == Some(-2) {
            return Err(self.gone());
        }
        Ok(())
    }

    /// Changes how long a lost Redis is tried again: none at all when a
    /// process starts (an unreachable Redis is a mistake to report at
    /// once), longer once the crawl runs.
    pub fn set_patience(&self, patience: Duration) {
        self.patience.set(patience);
    }

    // ANCHOR: doorbell
    /// Waits until some process rings one of the crawl's bells (there is
    /// new work, or the crawl is over), or `longest` has passed. Without a
    /// working subscription, it just waits `longest`: the bell saves time,
    /// it is never needed for correctness.
    pub async fn wait_for_news(&self, longest: Duration) {
        let conn = match self.bell.take() {
            Some(conn) => conn,
            None => match runtime::timeout(longest, self.subscribe()).await {
                Ok(Ok(conn)) => {
                    // A bell rung before we subscribed is lost, and the
                    // news it carried may be what we wait for (the work
                    // another process just queued, the crawl's end): come
                    // back at once, for the caller to ask again. From now
                    // on a bell waits in the connection until we listen.
                    self.bell.set(Some(conn));
                    return;
                }
                _ => return runtime::sleep(longest).await,
            },
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
            return;
        }
        // While this process was busy, every completion of every other
        // process rang, and each ring waits in the connection: one claim
        // answers them all. So the rings already here are read now (a
        // timeout of zero reads what has arrived and waits for nothing),
        // rather than each waking the process for another claim later.
        // None is lost: the caller claims after this.
        loop {
            match runtime::timeout(Duration::ZERO, conn.receive()).await {
                Ok(Ok(_)) => continue,
                Ok(Err(_)) => kept.conn = None,
                Err(_) => {}
            }
            break;
        }
    }

    /// A connection subscribed to every shard's bell. On a cluster any
    /// node hears what is published on every other.
    async fn subscribe(&self) -> Result<Connection, Error> {
        let shards = self.shards().await.map_err(Error::Io)?;
        let channels: Vec<String> = shards.iter().map(|p| format!("{p}bell")).collect();
        let mut conn = self.url.connect().await?;
        let mut command = vec!["SUBSCRIBE"];
        command.extend(channels.iter().map(String::as_str));
        conn.command(&command).await?;
        // One confirmation per channel: the first was the reply.
        for _ in 1..channels.len() {
            conn.receive().await?;
        }
        Ok(conn)
    }
    // ANCHOR_END: doorbell

    /// The crawl's keys vanished under us: a Redis that restarted without
    /// keeping its data, a flush, an eviction, `--frontier-clear`. Going on
    /// would look like a finished crawl.
    /// (`NotFound`: the crawl's state is not in Redis any more, and running
    /// the command again would start a new crawl.)
    fn gone(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "the crawl at {} is gone from Redis (restarted without its data, flushed, evicted \
             or cleared): run Redis with persistence (appendonly yes) and \
             maxmemory-policy noeviction",
                self.url
            ),
        )
    }

    /// A key of the crawl's first shard.
    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.home)
    }

    async fn run(&self, script: &Script, prefix: &str, args: &[&[u8]]) -> io::Result<Frame> {
        self.call(prefix, async |conn: &mut Connection| {
            script.invoke(conn, &[prefix], args).await
        })
        .await
    }

    // ANCHOR: call
    /// Runs `command` on a pooled connection to the Redis that holds `key`.
    /// A connection that fails or hangs is dropped, and the command tried
    /// again on a new one, with a growing pause, until `patience` runs
    /// out: Redis restarting, or a network blip, costs a wait, not the
    /// crawl. A cluster that says the key has moved is asked where its
    /// slots are now. An error reply is not tried again: the server is
    /// there, and said no.
    async fn call(
        &self,
        key: &str,
        command: impl AsyncFn(&mut Connection) -> Result<Frame, Error>,
    ) -> io::Result<Frame> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(50);
        let mut redirected = false;
        loop {
            let tried = runtime::timeout(COMMAND_TIMEOUT, async {
                let pool = self.nodes.pool_for(key.as_bytes()).await?;
                let mut conn = pool.get().await?;
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
                Ok(Err(e)) if is_redirect(&e) && !redirected => {
                    // The slot moved: ask where it is, and go there at
                    // once. A slot still moving (`ASK`, or `MOVED` again)
                    // is waited out below, like a passing refusal.
                    redirected = true;
                    self.nodes.forget();
                    continue;
                }
                Ok(Err(e)) if !e.is_fatal() && !is_transient(&e) && !is_redirect(&e) => {
                    return Err(io::Error::other(format!("{}: {e}", self.url)));
                }
                Ok(Err(e)) => e.to_string(),
                Err(_) => format!("no answer in {COMMAND_TIMEOUT:?}"),
            };
            // A lost master may have been replaced: ask again where the
            // slots are.
            self.nodes.forget();
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

/// FNV-1a, 64 bits: a page's fingerprint in `seen`, the same in every
/// process and every build.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The numbers the scripts read from `meta`, by name.
fn numbers(settings: &Settings) -> [(&'static str, String); 7] {
    [
        ("per_host", settings.per_host.to_string()),
        (
            "max_pages",
            settings.max_pages.map_or("-1".into(), |n| n.to_string()),
        ),
        ("robots", u8::from(settings.robots).to_string()),
        ("delay", settings.delay.as_millis().to_string()),
        (
            "lease",
            settings.lease.max(MIN_LEASE).as_millis().to_string(),
        ),
        (
            "max_query_variants",
            settings.max_query_variants.to_string(),
        ),
        (
            "max_depth",
            settings.max_depth.map_or("-1".into(), |n| n.to_string()),
        ),
    ]
}

/// A script's `{{-2}}` or `{-2}`: the crawl is gone from that shard.
fn gone_reply(reply: &Frame) -> bool {
    match reply {
        Frame::Array(items) => items.first().is_some_and(is_gone),
        _ => false,
    }
}

fn is_gone(frame: &Frame) -> bool {
    match frame {
        Frame::Integer(-2) => true,
        Frame::Array(items) => matches!(items.as_slice(), [Frame::Integer(-2), ..]),
        _ => false,
    }
}

fn codes_of(item: Frame) -> io::Result<Vec<i64>> {
    items(item)?
        .iter()
        .map(|f| f.as_integer().ok_or_else(|| unexpected("complete")))
        .collect()
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
/// restart, busy with a slow script, a replica between masters, or a
/// cluster missing a master that is on its way back (or being replaced).
fn is_transient(e: &Error) -> bool {
    matches!(e, Error::Server(message)
        if ["LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN"]
            .iter()
            .any(|prefix| message.starts_with(prefix)))
}

fn seen_code(code: i64) -> Seen {
    match code {
        1 => Seen::Queued,
        2 => Seen::Refused,
        3 => Seen::OverMaxPages,
        4 => Seen::QueryVariants,
        5 => Seen::Robots,
        6 => Seen::TooDeep,
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
