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
        }
    }

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

    /// Creates the crawl with `identity` and queues `roots` (who may follow
    /// `redirects` redirects), unless it exists. Returns `None` if it was
    /// created, or the identity of the crawl that was there. A crawl whose
    /// creator died before its roots were queued on their shards is
    /// finished by whoever creates it again with the same identity.
    pub async fn create(
        &self,
        identity: &str,
        settings: &Settings,
        roots: &[Link],
        redirects: u32,
    ) -> io::Result<Option<String>> {
        let numbers = numbers(settings);
        // --max-pages is one count for the whole crawl, and --max-depth
        // one order of levels: one shard.
        let shards = if settings.max_pages.is_some() || settings.max_depth.is_some() {
            Vec::new()
        } else {
            self.choose_shards().await?
        };
        let shards = shards.join(" ");
        let mut args: Vec<&[u8]> = vec![identity.as_bytes()];
        args.extend(numbers.iter().map(|(_, n)| n.as_bytes()));
        args.push(shards.as_bytes());
        let group = Group::new(None, 0, redirects, roots.iter());
        if shards.is_empty() {
            group.extend_args(&mut args);
        }
        let home = self.home.clone();
        let reply = self.run(&self.init, &home, &args).await?;
        let mut items = items(reply)?.into_iter();
        let existing = match (
            items.next().and_then(|f| f.as_integer()),
            items.next(),
            items.next().and_then(|f| f.as_integer()),
        ) {
            (Some(1), ..) => None,
            (Some(0), Some(existing), Some(ready)) => {
                let existing = existing.as_str().map(str::to_string);
                if ready == 1 || existing.as_deref() != Some(identity) {
                    return Ok(existing);
                }
                existing
            }
            _ => return Err(unexpected("init")),
        };
        // Ours, and its roots not queued yet: a cluster's other shards get
        // the crawl's numbers, and the roots go to their hosts' shards.
        let layout = self.shards().await?;
        if layout.len() == 1 {
            // init.lua queued the roots, and the crawl is ready.
            return Ok(existing);
        }
        for prefix in layout.iter().skip(1) {
            let key = format!("{prefix}meta");
            let mut command: Vec<&str> = vec!["HSET", &key, "identity", identity];
            for (name, value) in &numbers {
                command.extend([*name, value.as_str()]);
            }
            self.call(&key, async |conn: &mut Connection| {
                conn.command(&command).await
            })
            .await?;
        }
        let hosts: Vec<&str> = roots.iter().map(|r| r.host.as_str()).collect();
        let placed = self.place(&hosts).await?;
        for (shard, prefix) in layout.iter().enumerate() {
            let here: Vec<&Link> = roots
                .iter()
                .zip(&placed)
                .filter(|(_, s)| **s == shard)
                .map(|(r, _)| r)
                .collect();
            if here.is_empty() {
                continue;
            }
            let group = Group::new(None, 0, redirects, here.into_iter());
            let mut args = Vec::new();
            group.extend_args(&mut args);
            let reply = self.run(&self.see, prefix, &args).await?;
            if gone_reply(&reply) {
                return Err(self.gone());
            }
        }
        let key = self.key("meta");
        self.call(&key, async |conn: &mut Connection| {
            conn.command(&["HSET", &key, "ready", "1"]).await
        })
        .await?;
        Ok(existing)
    }

    /// On a cluster, a hash tag for each master but the first shard's, so
    /// that the crawl has a shard on every master: `NAME/N` for the
    /// smallest `N` whose slot that master serves. None on one Redis.
    async fn choose_shards(&self) -> io::Result<Vec<String>> {
        let io = |e: Error| io::Error::other(format!("{}: {e}", self.url));
        if !self.nodes.is_cluster().await.map_err(io)? {
            return Ok(Vec::new());
        }
        let mut masters = Vec::new();
        for pool in self.nodes.masters().await.map_err(io)? {
            masters.push((pool.url().host.clone(), pool.url().port));
        }
        let home = self.nodes.master_of(key_slot(self.home.as_bytes()));
        let home = home.await.map_err(io)?;
        let mut wanted: Vec<_> = masters
            .into_iter()
            .filter(|(host, port)| {
                home.is_none_or(|h| h.ip().to_string() != *host || h.port() != *port)
            })
            .collect();
        let mut tags = Vec::new();
        for n in 1..=100_000u32 {
            if wanted.is_empty() {
                break;
            }
            let tag = format!("{}/{n}", self.url.name);
            let Some(at) = self
                .nodes
                .master_of(key_slot(tag.as_bytes()))
                .await
                .map_err(io)?
            else {
                continue;
            };
            if let Some(i) = wanted
                .iter()
                .position(|(host, port)| at.ip().to_string() == *host && at.port() == *port)
            {
                wanted.swap_remove(i);
                tags.push(n.to_string());
            }
        }
        Ok(tags)
    }

    /// The prefixes of the crawl's shards, the first shard's first.
    async fn shards(&self) -> io::Result<Rc<[String]>> {
        if let Some(shards) = self.shards.borrow().clone() {
            return Ok(shards);
        }
        let key = self.key("meta");
        let reply = self
            .call(&key, async |conn: &mut Connection| {
                conn.command(&["HGET", &key, "shards"]).await
            })
            .await?;
        let mut shards = vec![self.home.clone()];
        if let Some(list) = reply.as_str() {
            for tag in list.split_whitespace() {
                shards.push(format!("stage3:{{{}/{tag}}}:", self.url.name));
            }
        }
        let shards: Rc<[String]> = shards.into();
        // Only a crawl that exists says how many shards it has.
        if reply.as_str().is_some() {
            *self.shards.borrow_mut() = Some(shards.clone());
        }
        Ok(shards)
    }

    /// The shard of each of `hosts`.
    async fn place(&self, hosts: &[&str]) -> io::Result<Vec<usize>> {
        let shards = self.shards().await?.len();
        if shards <= 1 {
            return Ok(vec![0; hosts.len()]);
        }
        let mut missing: Vec<&str> = hosts
            .iter()
            .copied()
            .filter(|h| !self.placed.borrow().contains_key(*h))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let n = shards.to_string();
            let mut args: Vec<&[u8]> = vec![n.as_bytes()];
            args.extend(missing.iter().map(|h| h.as_bytes()));
            let home = self.home.clone();
            let reply = items(self.run(&self.assign, &home, &args).await?)?;
            if matches!(reply.as_slice(), [Frame::Integer(-2)]) {
                return Err(self.gone());
            }
            if reply.len() != missing.len() {
                return Err(unexpected("assign"));
            }
            let mut placed = self.placed.borrow_mut();
            for (host, shard) in missing.iter().zip(reply) {
                let shard = shard
                    .as_integer()
                    .and_then(|s| usize::try_from(s).ok())
                    .filter(|s| *s < shards)
                    .ok_or_else(|| unexpected("assign"))?;
                placed.insert(host.to_string(), shard);
            }
        }
        let placed = self.placed.borrow();
        Ok(hosts
            .iter()
            .map(|h| placed.get(*h).copied().unwrap_or(0))
            .collect())
    }

    /// Takes up to `n` URLs under a lease.
    pub async fn claim(&self, n: usize) -> io::Result<Claim> {
        let mut work = Vec::new();
        let claimed = self.claim_into(n, &mut work).await;
        if claimed.is_err() {
            self.give_back(&work).await;
        }
        claimed
    }

    async fn claim_into(&self, n: usize, work: &mut Vec<Leased>) -> io::Result<Claim> {
        let shards = self.shards().await?;
        let only = if shards.len() == 1 { "1" } else { "0" };
        let start = self.next_claim.get();
        self.next_claim.set(start.wrapping_add(1));
        let mut wait: Option<Duration> = None;
        let mut empty = 0;
        for k in 0..shards.len() {
            let shard = (start + k) % shards.len();
            let prefix = &shards[shard];
            let wanted = (n - work.len()).to_string();
            let reply = self
                .run(&self.claim, prefix, &[wanted.as_bytes(), only.as_bytes()])
                .await?;
            let mut items = items(reply)?.into_iter();
            let kind = items.next();
            match kind.as_ref().and_then(Frame::as_str) {
                Some("finished") => empty += 1,
                Some("gone") => return Err(self.gone()),
                Some("wait") => {
                    let ms = items.next().and_then(|f| f.as_integer()).unwrap_or(1);
                    let ms = Duration::from_millis(ms.max(1) as u64);
                    wait = Some(wait.map_or(ms, |w| w.min(ms)));
                }
                Some("work") => {
                    let leased = leased_list(&items.collect::<Vec<_>>())?;
                    self.remember(&leased, shard);
                    work.extend(leased);
                }
                _ => return Err(unexpected("claim")),
            }
            if work.len() >= n {
                break;
            }
        }
        if !work.is_empty() {
            return Ok(Claim::Work(std::mem::take(work)));
        }
        if empty == shards.len() {
            if shards.len() == 1 || self.finished().await? {
                return Ok(Claim::Finished);
            }
            // Links on their way to an empty shard: ask again soon.
            return Ok(Claim::Wait(Duration::from_millis(5)));
        }
        Ok(Claim::Wait(wait.unwrap_or(Duration::from_millis(1))))
    }

    // ANCHOR: finished
    /// Whether the crawl is over, on a cluster: no shard has a URL pending.
    /// The shards are read one after another, not at one instant, so a
    /// page completed on one shard after its links were queued on another
    /// already read could slip between the readings. Read twice: if no
    /// shard queued anything between its two readings (its `queued` count
    /// is the same), every shard held its `pending` at zero over a common
    /// moment, and then nothing was left anywhere. A page's links are
    /// queued before the page completes, so while work remains some
    /// shard's `pending` is above zero at every moment.
    async fn finished(&self) -> io::Result<bool> {
        let Some(first) = self.counts().await? else {
            return Ok(false);
        };
        let Some(second) = self.counts().await? else {
            return Ok(false);
        };
        if first != second {
            return Ok(false);
        }
        let home = self.home.clone();
        if self.run(&self.finish, &home, &[]).await?.as_integer() == Some(-2) {
            return Err(self.gone());
        }
        Ok(true)
    }

    /// Each shard's `queued` count, if the crawl is ready and no shard has
    /// a URL pending. Each shard's two counts are read at one moment (a
    /// script), as the argument above needs.
    async fn counts(&self) -> io::Result<Option<Vec<u64>>> {
        let ready_key = self.key("meta");
        let ready = self
            .call(&ready_key, async |conn: &mut Connection| {
                conn.command(&["HGET", &ready_key, "ready"]).await
            })
            .await?;
        if ready.as_str().is_none() {
            return Ok(None);
        }
        let mut queued = Vec::new();
        for prefix in self.shards().await?.iter() {
            let reply = self.run(&self.counts, prefix, &[]).await?;
            let n: Vec<i64> = items(reply)?.iter().filter_map(Frame::as_integer).collect();
            match n.as_slice() {
                [-2] => return Err(self.gone()),
                [pending, q] if *pending <= 0 => queued.push((*q).max(0) as u64),
                [_, _] => return Ok(None),
                _ => return Err(unexpected("counts")),
            }
        }
        Ok(Some(queued))
    }
    // ANCHOR_END: finished

    /// Completes one leased URL: records it, queues its new links, and
    /// frees its host's slot, starting the host's delay if this process
    /// learned one. `known` links of the page were kept back, known to be
    /// seen: they count in its `num_urls` (see `shared.rs`'s `SeenHere`).
    pub async fn complete(&self, one: Completion) -> io::Result<Completed> {
        let (mut done, _) = self.complete_many(std::slice::from_ref(&one), 0).await?;
        done.pop().ok_or_else(|| unexpected("complete"))
    }

    /// Completes several leased URLs, each as [`complete`](Self::complete)
    /// would: what each came to, in order. On one Redis that is one script.
    /// On a cluster, the links whose hosts live on another shard than
    /// their page go there first (`see.lua`), and then each shard completes
    /// its pages (`complete.lua`).
    ///
    /// Then it claims up to `claim` URLs, as [`claim`](Self::claim) would
    /// (none if the crawl is over): a busy process gets its next work in
    /// the call that completes its last, with no script of its own.
    pub async fn complete_many(
        &self,
        batch: &[Completion],
        claim: usize,
    ) -> io::Result<(Vec<Completed>, Vec<Leased>)> {
        let mut claimed = Vec::new();
        match self.complete_into(batch, claim, &mut claimed).await {
            Ok(done) => Ok((done, claimed)),
            Err(e) => {
                // A shard failed after another had leased URLs to us:
                // give them back rather than leave them to run out.
                self.give_back(&claimed).await;
                Err(e)
            }
        }
    }

    /// Which of `links`, each with the page that offers it, the crawl has
    /// seen from another page, read with plain `HMGET`s (one per shard), no
    /// script: what a script costs Redis is mostly its handling of every
    /// argument, which a link seen before does not need. The seen set only
    /// grows, so a link read here as seen is seen for good; one read as not
    /// seen may be by the time it is offered, which `see` decides. A link
    /// its own page offered before (the page fetched again after a crash)
    /// is not "seen from another page": `see` answers it as the first time.
    pub async fn seen_already(&self, links: &[(&Link, &str)]) -> io::Result<Vec<bool>> {
        let shards = self.shards().await?;
        // Where `offer_elsewhere` offers them.
        let open: Vec<&str> = links
            .iter()
            .filter(|(l, _)| l.refused.is_none())
            .map(|(l, _)| l.host.as_str())
            .collect();
        let mut given = self.place(&open).await?.into_iter();
        let placed: Vec<usize> = links
            .iter()
            .map(|(l, _)| link_shard(l, &mut given, shards.len()))
            .collect();
        let mut seen = vec![false; links.len()];
        for (shard, prefix) in shards.iter().enumerate() {
            let here: Vec<usize> = (0..links.len()).filter(|&i| placed[i] == shard).collect();
            if here.is_empty() {
                continue;
            }
            let key = format!("{prefix}seen");
            let mut command: Vec<&str> = vec!["HMGET", &key];
            command.extend(here.iter().map(|&i| links[i].0.url.as_str()));
            let reply = self
                .call(&key, async |conn: &mut Connection| {
                    conn.command(&command).await
                })
                .await?;
            let values = items(reply)?;
            if values.len() != here.len() {
                return Err(unexpected("HMGET"));
            }
            for (i, value) in here.into_iter().zip(values) {
                // `seen`'s value: a code, whether it counted, and the
                // fingerprint of the page that offered it first.
                let page = links[i].1.strip_prefix('~').unwrap_or(links[i].1);
                let ours = format!("{:016x}", fnv1a(page.as_bytes()));
                seen[i] = match &value {
                    Frame::Null => false,
                    value => value.as_str().and_then(|v| v.get(2..)) != Some(ours.as_str()),
                };
            }
        }
        Ok(seen)
    }

    /// The first of `complete_many`'s two steps on a cluster, alone: the
    /// links go to their shards, and the pages stay leased. It is what a
    /// process that dies before completing its pages has done, which the
    /// tests play.
    pub async fn offer(&self, batch: &[Completion]) -> io::Result<()> {
        let shards = self.shards().await?;
        self.offer_elsewhere(batch, &shards).await.map(|_| ())
    }

    /// Where each page and link of `batch` lives, and what became of the
    /// links offered on other shards than their pages'.
    async fn offer_elsewhere(
        &self,
        batch: &[Completion],
        shards: &[String],
    ) -> io::Result<Offered> {
        // Where each page and each link lives (see `link_shard`).
        let mut hosts: Vec<&str> = batch.iter().map(|c| c.host.as_str()).collect();
        for c in batch {
            hosts.extend(
                c.links
                    .iter()
                    .filter(|l| l.refused.is_none())
                    .map(|l| l.host.as_str()),
            );
        }
        let placed = self.place(&hosts).await?;
        let (pages, rest) = placed.split_at(batch.len());
        let mut rest = rest.iter().copied();
        let link_shard: Vec<Vec<usize>> = batch
            .iter()
            .map(|c| {
                c.links
                    .iter()
                    .map(|l| link_shard(l, &mut rest, shards.len()))
                    .collect()
            })
            .collect();
        // Offered elsewhere only by pages whose lease is still ours, just
        // renewed: a page whose lease ran out is someone else's now, and
        // its links could be queued after the crawl was found finished.
        let mut offers = vec![false; batch.len()];
        let remote: Vec<usize> = (0..batch.len())
            .filter(|&i| link_shard[i].iter().any(|s| *s != pages[i]))
            .collect();
        if !remote.is_empty() {
            let held: Vec<Held> = remote
                .iter()
                .map(|&i| Held {
                    url: batch[i].url.clone(),
                    host: batch[i].host.clone(),
                    token: batch[i].token,
                })
                .collect();
            for (&i, ours) in remote.iter().zip(self.renew_each(&held).await?) {
                offers[i] = ours;
            }
        }
        // Each page's links on other shards, offered there first.
        let mut elsewhere: Vec<(usize, usize)> = vec![(0, 0); batch.len()];
        let mut away: Vec<Vec<Option<Seen>>> =
            batch.iter().map(|c| vec![None; c.links.len()]).collect();
        for (shard, prefix) in shards.iter().enumerate() {
            let mut groups = Vec::new();
            let mut which = Vec::new();
            for (i, c) in batch.iter().enumerate() {
                if pages[i] == shard || !offers[i] {
                    continue;
                }
                let here: Vec<&Link> = c
                    .links
                    .iter()
                    .zip(&link_shard[i])
                    .filter(|(_, s)| **s == shard)
                    .map(|(l, _)| l)
                    .collect();
                if here.is_empty() {
                    continue;
                }
                groups.push(Group::new(
                    Some(&c.url),
                    c.depth,
                    c.redirects,
                    here.into_iter(),
                ));
                which.push(i);
            }
            if which.is_empty() {
                continue;
            }
            let mut args = Vec::new();
            for group in &groups {
                group.extend_args(&mut args);
            }
            let reply = self.run(&self.see, prefix, &args).await?;
            if gone_reply(&reply) {
                return Err(self.gone());
            }
            let replies = items(reply)?;
            if replies.len() != which.len() {
                return Err(unexpected("see"));
            }
            for (i, reply) in which.into_iter().zip(replies) {
                let (urls, new, codes) = match codes_of(reply)?.as_slice() {
                    [urls, new, codes @ ..] => (
                        (*urls).max(0) as usize,
                        (*new).max(0) as usize,
                        codes.to_vec(),
                    ),
                    _ => return Err(unexpected("see")),
                };
                elsewhere[i].0 += urls;
                elsewhere[i].1 += new;
                let mut codes = codes.into_iter();
                for (slot, s) in away[i].iter_mut().zip(&link_shard[i]) {
                    if *s == shard {
                        *slot = Some(seen_code(codes.next().ok_or_else(|| unexpected("see"))?));
                    }
                }
            }
        }
        Ok(Offered {
            pages: pages.to_vec(),
            link_shard,
            elsewhere,
            away,
        })
    }

    async fn complete_into(
        &self,
        batch: &[Completion],
        claim: usize,
        claimed: &mut Vec<Leased>,
    ) -> io::Result<Vec<Completed>> {
        let shards = self.shards().await?;
        let Offered {
            pages,
            link_shard,
            elsewhere,
            away,
        } = self.offer_elsewhere(batch, &shards).await?;

        // Then each shard completes its own pages, with the links that
        // live there.
        let mut done: Vec<Option<Completed>> = vec![None; batch.len()];
        for (shard, prefix) in shards.iter().enumerate() {
            let mine: Vec<usize> = (0..batch.len()).filter(|&i| pages[i] == shard).collect();
            if mine.is_empty() {
                continue;
            }
            let wanted = claim.saturating_sub(claimed.len()).to_string();
            let mut fields: Vec<[String; 3]> = Vec::with_capacity(mine.len());
            let mut groups = Vec::with_capacity(mine.len());
            for &i in &mine {
                let c = &batch[i];
                let here = c
                    .links
                    .iter()
                    .zip(&link_shard[i])
                    .filter(|(_, s)| **s == shard)
                    .map(|(l, _)| l);
                let delay = match c.delay {
                    Some(d) if !d.is_zero() || !self.told.borrow().contains(&c.host) => {
                        d.as_millis().to_string()
                    }
                    _ => String::new(),
                };
                // The record as the report keeps it, with the counts of
                // the links that do not come here: when none do, Redis
                // stores it as it is.
                let (urls, new) = (c.known + elsewhere[i].0, elsewhere[i].1);
                fields.push([
                    c.token.to_string(),
                    delay,
                    format!("={urls} {new}\n{}", c.record),
                ]);
                groups.push(Group::new(Some(&c.url), c.depth, c.redirects, here));
            }
            let mut args: Vec<&[u8]> = vec![wanted.as_bytes()];
            for ((&i, [token, delay, record]), group) in mine.iter().zip(&fields).zip(&groups) {
                args.extend([
                    batch[i].url.as_bytes(),
                    token.as_bytes(),
                    delay.as_bytes(),
                    record.as_bytes(),
                ]);
                group.extend_page_args(&mut args);
            }
            let reply = self.run(&self.complete, prefix, &args).await?;
            // The URLs claimed first, then what each completion came to.
            let mut replies = items(reply)?.into_iter();
            let leased = leased_list(&items(
                replies.next().ok_or_else(|| unexpected("complete"))?,
            )?)?;
            self.remember(&leased, shard);
            claimed.extend(leased);
            let replies: Vec<Frame> = replies.collect();
            if replies.len() != mine.len() && !replies.first().is_some_and(is_gone) {
                return Err(unexpected("complete"));
            }
            for (&i, item) in mine.iter().zip(replies) {
                let codes = codes_of(item)?;
                done[i] = Some(match codes.as_slice() {
                    [-2, ..] => return Err(self.gone()),
                    [-1, ..] => Completed::Lost,
                    // No link came to this shard: the counts are as sent.
                    [] if link_shard[i].iter().all(|s| *s != shard) => Completed::Done {
                        urls: batch[i].known + elsewhere[i].0,
                        new: elsewhere[i].1,
                        seen: away[i].iter().map(|a| a.unwrap_or(Seen::Before)).collect(),
                    },
                    [urls, new, codes @ ..] => {
                        let mut codes = codes.iter();
                        let mut seen = Vec::with_capacity(batch[i].links.len());
                        for (away, s) in away[i].iter().zip(&link_shard[i]) {
                            seen.push(if *s == shard {
                                seen_code(*codes.next().ok_or_else(|| unexpected("complete"))?)
                            } else {
                                away.unwrap_or(Seen::Before)
                            });
                        }
                        Completed::Done {
                            urls: (*urls).max(0) as usize,
                            new: (*new).max(0) as usize,
                            seen,
                        }
                    }
                    _ => return Err(unexpected("complete")),
                });
            }
        }
        let done = done
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| unexpected("complete"))?;
        for (c, done) in batch.iter().zip(&done) {
            if c.delay == Some(Duration::ZERO) && matches!(done, Completed::Done { .. }) {
                self.told.borrow_mut().insert(c.host.clone());
            }
        }
        Ok(done)
    }

    /// Notes the shard of the hosts of URLs a shard leased to us: a
    /// claim says where a host lives, with no need to ask.
    fn remember(&self, leased: &[Leased], shard: usize) {
        let mut placed = self.placed.borrow_mut();
        for l in leased {
            placed.entry(l.host.clone()).or_insert(shard);
        }
    }

    /// Gives back URLs leased to us that no worker will fetch, as best it
    /// can: if that fails too, their leases run out.
    async fn give_back(&self, leased: &[Leased]) {
        let held: Vec<Held> = leased
            .iter()
            .map(|l| Held {
                url: l.url.clone(),
                host: l.host.clone(),
                token: l.token,
            })
            .collect();
        if let Err(e) = self.release(&held).await {
            log::warn!(
                "could not give back {} leased URLs ({e}): their leases will run out",
                held.len()
            );
        }
    }

    /// Extends the leases on `held`. Returns how many were still ours.
    pub async fn renew(&self, held: &[Held]) -> io::Result<usize> {
        Ok(self
            .renew_each(held)
            .await?
            .into_iter()
            .filter(|&ours| ours)
            .count())
    }

    /// Extends the leases on `held`: whether each was still ours.
    async fn renew_each(&self, held: &[Held]) -> io::Result<Vec<bool>> {
        let mut ours = vec![false; held.len()];
        for (which, reply) in self.per_shard(&self.renew, held).await? {
            let flags = items(reply)?;
            if flags.is_empty() {
                return Err(self.gone());
            }
            for (i, flag) in which.into_iter().zip(flags) {
                ours[i] = flag.as_integer() == Some(1);
            }
        }
        Ok(ours)
    }

    /// Gives the leases on `held` back to the queue at once.
    pub async fn release(&self, held: &[Held]) -> io::Result<usize> {
        let mut n = 0;
        for (_, reply) in self.per_shard(&self.release, held).await? {
            n += reply.as_integer().unwrap_or(0).max(0) as usize;
        }
        Ok(n)
    }

    /// Runs `script` on each shard with the leases of `held` that live
    /// there, as pairs of URL and token: which of `held` went to each call,
    /// and its reply.
    async fn per_shard(
        &self,
        script: &Script,
        held: &[Held],
    ) -> io::Result<Vec<(Vec<usize>, Frame)>> {
        let mut replies = Vec::new();
        if held.is_empty() {
            return Ok(replies);
        }
        let shards = self.shards().await?;
        let hosts: Vec<&str> = held.iter().map(|h| h.host.as_str()).collect();
        let placed = self.place(&hosts).await?;
        let tokens: Vec<String> = held.iter().map(|h| h.token.to_string()).collect();
        for (shard, prefix) in shards.iter().enumerate() {
            let which: Vec<usize> = (0..held.len()).filter(|&i| placed[i] == shard).collect();
            if which.is_empty() {
                continue;
            }
            let mut args: Vec<&[u8]> = Vec::with_capacity(which.len() * 2);
            for &i in &which {
                args.push(held[i].url.as_bytes());
                args.push(tokens[i].as_bytes());
            }
            let reply = self.run(script, prefix, &args).await?;
            replies.push((which, reply));
        }
        Ok(replies)
    }

    /// Every URL's record, statistic or skipped, as JSON, in no order.
    pub async fn records(&self) -> io::Result<Vec<String>> {
        let mut records = Vec::new();
        for prefix in self.shards().await?.iter() {
            let pairs = self.scan_hash(&format!("{prefix}report")).await?;
            records.extend(pairs.iter().map(|(url, value)| record_json(url, value)));
        }
        Ok(records)
    }

    /// What reading each sitemap came to (`--sitemaps`), over every shard,
    /// by URL: the sitemaps read, not those still queued.
    pub async fn sitemap_outcomes(&self) -> io::Result<Vec<(String, String)>> {
        let mut outcomes = Vec::new();
        for prefix in self.shards().await?.iter() {
            let pairs = self.scan_hash(&format!("{prefix}sitemaps")).await?;
            outcomes.extend(pairs.into_iter().filter(|(_, outcome)| !outcome.is_empty()));
        }
        outcomes.sort();
        outcomes.dedup();
        Ok(outcomes)
    }

    /// Every field of the hash `key` with its value, a thousand at a time
    /// (HSCAN: a field may come twice while the hash changes).
    async fn scan_hash(&self, key: &str) -> io::Result<Vec<(String, String)>> {
        let mut pairs = Vec::new();
        let mut cursor = "0".to_string();
        loop {
            let reply = self
                .call(key, async |conn: &mut Connection| {
                    conn.command(&["HSCAN", key, &cursor, "COUNT", "1000"])
                        .await
                })
                .await?;
            let mut parts = items(reply)?.into_iter();
            let (Some(next), Some(page)) = (parts.next(), parts.next()) else {
                return Err(unexpected("HSCAN"));
            };
            let page = page.into_items().ok_or_else(|| unexpected("HSCAN"))?;
            for pair in page.chunks(2) {
                if let [field, value] = pair
                    && let (Some(field), Some(value)) = (field.as_str(), value.as_str())
                {
                    pairs.push((field.to_string(), value.to_string()));
                }
            }
            cursor = next
                .as_str()
                .ok_or_else(|| unexpected("HSCAN"))?
                .to_string();
            if cursor == "0" {
                return Ok(pairs);
            }
        }
    }

    /// The crawl's counters, summed over its shards.
    pub async fn status(&self) -> io::Result<Status> {
        let mut status = Status::default();
        for (shard, prefix) in self.shards().await?.iter().enumerate() {
            let keys = [
                format!("{prefix}pending"),
                format!("{prefix}expired"),
                format!("{prefix}meta"),
                format!("{prefix}unreadable"),
            ];
            let reply = self
                .call(&keys[0], async |conn: &mut Connection| {
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
            let at = |i: usize| n.get(i).copied().unwrap_or(0);
            status.pending += at(0);
            status.expired += at(1);
            status.unreadable += at(5);
            // The crawl's own facts live on its first shard.
            if shard == 0 {
                status.created_ms = at(2);
                status.finished_ms = at(3);
                status.workers = at(4);
            }
        }
        Ok(status)
    }

    /// Counts a process's `workers` in the crawl's total, for the merged
    /// report.
    pub async fn add_workers(&self, workers: usize) -> io::Result<()> {
        let key = self.key("meta");
        let n = workers.to_string();
        self.call(&key, async |conn: &mut Connection| {
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

    /// Deletes every key of the crawl, on every shard. Returns how many
    /// there were.
    pub async fn clear(&self) -> io::Result<usize> {
        // Every shard's prefix, `stage3:{NAME}:` and `stage3:{NAME/N}:`
        // (a name has no `/`): found on every master even when the first
        // shard's `meta`, which lists them, is gone.
        let name = glob_escape(&self.url.name);
        let patterns = [
            format!("stage3:{{{name}}}:*"),
            format!("stage3:{{{name}/*}}:*"),
        ];
        let io = |e: Error| io::Error::other(format!("{}: {e}", self.url));
        let masters = self.nodes.masters().await.map_err(io)?;
        let mut deleted = 0;
        for pool in masters {
            for pattern in &patterns {
                let mut cursor = "0".to_string();
                loop {
                    let mut conn = pool.get().await.map_err(io)?;
                    let reply = conn
                        .command(&["SCAN", &cursor, "MATCH", pattern, "COUNT", "1000"])
                        .await
                        .map_err(io)?;
                    let mut parts = items(reply)?.into_iter();
                    let (Some(next), Some(keys)) = (parts.next(), parts.next()) else {
                        return Err(unexpected("SCAN"));
                    };
                    let keys: Vec<Frame> = keys.into_items().ok_or_else(|| unexpected("SCAN"))?;
                    // One UNLINK per slot: a cluster refuses keys of two.
                    let mut by_slot: HashMap<u16, Vec<&[u8]>> = HashMap::new();
                    for key in keys.iter().filter_map(Frame::as_bytes) {
                        by_slot.entry(key_slot(key)).or_default().push(key);
                    }
                    for keys in by_slot.into_values() {
                        let mut command: Vec<&[u8]> = vec![b"UNLINK"];
                        command.extend(keys);
                        let reply = conn.command(&command).await.map_err(io)?;
                        deleted += reply.as_integer().unwrap_or(0).max(0) as usize;
                    }
                    conn.release();
                    cursor = next.as_str().ok_or_else(|| unexpected("SCAN"))?.to_string();
                    if cursor == "0" {
                        break;
                    }
                }
            }
        }
        *self.shards.borrow_mut() = None;
        self.placed.borrow_mut().clear();
        self.told.borrow_mut().clear();
        Ok(deleted)
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
    fn gone(&self) -> io::Error {
        io::Error::other(format!(
            "the crawl at {} is gone from Redis (restarted without its data, flushed, evicted \
             or cleared): run Redis with persistence (appendonly yes) and \
             maxmemory-policy noeviction",
            self.url
        ))
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

/// What `offer_elsewhere` found: each page's shard, each link's, the
/// counts (num_urls, num_new_urls) of each page's links offered on other
/// shards, and what became of each of those links.
struct Offered {
    pages: Vec<usize>,
    link_shard: Vec<Vec<usize>>,
    elsewhere: Vec<(usize, usize)>,
    away: Vec<Vec<Option<Seen>>>,
}

/// One page's links as `see` takes them: a header (the page, its
/// fingerprint, the links' depth and redirects, how many links), then five
/// arguments per link, borrowed from the links themselves.
struct Group<'a> {
    from: &'a str,
    /// The fingerprint, depth, redirects and count, as text.
    header: [String; 4],
    links: Vec<&'a Link>,
}

impl<'a> Group<'a> {
    /// The links `links` of the page `from` (`None` for the roots).
    fn new(
        from: Option<&'a str>,
        depth: u32,
        redirects: u32,
        links: impl Iterator<Item = &'a Link>,
    ) -> Group<'a> {
        // A sitemap's lease is '~' and its URL; the pages it lists come
        // from its URL.
        let from = from.map_or("", |f| f.strip_prefix('~').unwrap_or(f));
        let links: Vec<&Link> = links.collect();
        let fingerprint = if from.is_empty() {
            String::new()
        } else {
            format!("{:016x}", fnv1a(from.as_bytes()))
        };
        Group {
            from,
            header: [
                fingerprint,
                depth.to_string(),
                redirects.to_string(),
                links.len().to_string(),
            ],
            links,
        }
    }

    /// The group as `see_group` reads it: the header, then the links.
    fn extend_args(&'a self, args: &mut Vec<&'a [u8]>) {
        args.push(self.from.as_bytes());
        args.extend(self.header.iter().map(String::as_bytes));
        self.extend_links(args);
    }

    /// The group as complete.lua reads it after its page's URL: the count
    /// of links, and only if there are any the rest of the header (the
    /// page is the URL completed) and the links.
    fn extend_page_args(&'a self, args: &mut Vec<&'a [u8]>) {
        let [fingerprint, depth, redirects, count] = &self.header;
        args.push(count.as_bytes());
        if !self.links.is_empty() {
            args.extend([fingerprint, depth, redirects].map(String::as_bytes));
            self.extend_links(args);
        }
    }

    fn extend_links(&'a self, args: &mut Vec<&'a [u8]>) {
        for link in &self.links {
            let flags: &[u8] = match (link.counts, link.robots) {
                _ if link.sitemap => b"s",
                (true, true) => b"cr",
                (true, false) => b"c",
                (false, true) => b"r",
                (false, false) => b"",
            };
            args.extend([
                link.url.as_bytes(),
                link.host.as_bytes(),
                link.variant.as_deref().unwrap_or("").as_bytes(),
                link.refused.unwrap_or("").as_bytes(),
                flags,
            ]);
        }
    }
}

/// The shard a link is offered on: its host's, given in turn by `place`
/// (the next of `given`, which placed the hosts of the links not refused,
/// in order). A link the rules refuse is never queued, so its host's line
/// does not matter: its shard is a hash of its host, the same in every
/// process, and it takes no turn in the placement of the hosts the crawl
/// fetches from.
fn link_shard(link: &Link, given: &mut impl Iterator<Item = usize>, shards: usize) -> usize {
    match link.refused {
        Some(_) => (fnv1a(link.host.as_bytes()) % shards as u64) as usize,
        None => given.next().unwrap_or(0),
    }
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

// ANCHOR: record_json
/// A URL's record as the report in Redis keeps it, as JSON: `=NUM_URLS
/// NUM_NEW_URLS` and the record the process sent, to which the URL (the
/// report's key) and the counts, which only Redis knew, are added back
/// (a process sends neither: see shared.rs's `frontier_record`); or
/// `-REASON` and the page that linked the URL, for a URL `see` refused.
/// Anything else is given back as it is, for the reader to call
/// unreadable.
fn record_json(url: &str, value: &str) -> String {
    let (head, rest) = value.split_once('\n').unwrap_or((value, ""));
    if let Some(reason) = head.strip_prefix('-') {
        let from = (!rest.is_empty()).then_some(rest);
        return serde_json::json!({"url": url, "skipped": reason, "from": from}).to_string();
    }
    let counts = head.strip_prefix('=').and_then(|c| c.split_once(' '));
    let parsed = serde_json::from_str::<serde_json::Value>(rest);
    match (counts, parsed) {
        (Some((urls, new)), Ok(mut record)) => {
            if let (Ok(urls), Ok(new), Some(fields)) = (
                urls.parse::<u64>(),
                new.parse::<u64>(),
                record.as_object_mut(),
            ) {
                fields.entry("url").or_insert_with(|| url.into());
                fields.insert("num_urls".into(), urls.into());
                fields.insert("num_new_urls".into(), new.into());
            }
            record.to_string()
        }
        _ => value.to_string(),
    }
}
// ANCHOR_END: record_json

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
