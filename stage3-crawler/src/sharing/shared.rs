//! A crawl shared by many processes through a frontier in Redis
//! (`--frontier`): the same workers, fed from Redis instead of from the
//! lesson's queue in memory. It plugs into the lesson as its
//! [`WorkQueue`]: `get` takes what the feeder claimed, `task_done`
//! completes a URL in Redis, and `join` lasts until the whole crawl is
//! over.
//!
//! One task per process, the feeder, claims URLs under a lease and puts
//! them on the process's queue, never more than `max_tasks` at a time;
//! another renews the leases while their URLs are fetched. A worker that
//! finishes a URL completes it in Redis, with its record and its links, in
//! one script (on a cluster, one per shard its links go to). The crawl is
//! over when the frontier says no URL is queued or leased anywhere: the
//! chapter's `join`, summed over every process.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use runtime::Queue;
use url::Url;

use crate::keeping::journal::stat_json;
use crate::logging::CrawlLog;
use crate::polite::politeness::host_key;
use crate::polite::rules::WebRules;
use crate::polite::traps::variant_key;
use crate::records::Records;
use crate::report::reporting::json_skipped;
use crate::seams::{Found, Next, Outcome, Pending, Rules, Tag, Work, WorkQueue};
use crate::seen::SeenUrls;
use crate::sharing::frontier::{
    Claim, Completed, Completion, Frontier as Redis, Held, Leased, Link, MIN_LEASE, Seen,
};
use crate::skipped::{SkipReason, Skipped};
use crate::stats::{Exception, FetchStatistic};

mod completing;

use completing::{sitemap_link, with_kept_back};

/// How long giving back leases may try a lost Redis, on the way out.
const RELEASE_PATIENCE: Duration = Duration::from_secs(2);

/// The longest a feeder with nothing to do waits before asking again,
/// should the bell not ring (a lost subscription, a lease that runs out).
const MAX_WAIT: Duration = Duration::from_millis(250);

/// This process's part in a shared crawl.
pub struct Shared {
    frontier: Redis,
    /// How long a lease lasts; renewed every third of it.
    lease: Duration,
    /// The URLs this process holds leases on, with their tokens and hosts.
    held: RefCell<HashMap<String, (u64, String)>>,
    /// Put to when a lease is completed: the feeder may claim another.
    freed: Queue<()>,
    /// Why the crawl stopped before its end, if Redis was lost.
    stopped_by: RefCell<Option<String>>,
    /// URLs this process knows the frontier's seen set holds.
    seen_here: RefCell<SeenHere>,
    /// Completions waiting for the next batch, each with where its answer
    /// goes.
    completions: Queue<(Completion, runtime::oneshot::Sender<io::Result<Completed>>)>,
    /// Sitemaps this process found (`--sitemaps`) and has not yet offered
    /// to the frontier.
    sitemaps: RefCell<Vec<Url>>,
    /// How often a link this process did not know turned out seen, when
    /// last asked (see `keep_back_seen`), and batches since then.
    seen_rate: Cell<(f64, u32)>,
    /// Every link goes to Redis, none kept back: `--max-depth` with
    /// `--sitemaps`. A sitemap found after level 0 (on a host first reached
    /// deeper) lists pages at depth 1, and their links may be shorter paths
    /// to URLs that wait at a deeper level or as too deep, which only
    /// Redis knows.
    every_link: bool,
    /// Waits hosts asked of this process (429, 503), for the frontier to
    /// keep, so that every process waits.
    pauses: Queue<(String, Duration)>,
}

/// What a process that lost Redis says of the crawl's state.
pub const STATE_KEPT: &str =
    "The crawl's state is in Redis: run the command again to go on with it";

/// The most URLs completed in one script.
const MAX_BATCH: usize = 64;

// ANCHOR: seen_here
/// URLs this process knows are in the frontier's seen set, because Redis
/// took them from this process or gave them to it: most links on a page
/// lead to pages already seen (95% on the demo site), and a link found
/// here never goes to Redis, which then has nothing to decide about it.
/// Mercator's URL-seen cache is the classic of the kind.
///
/// The seen set only grows while a crawl lasts, so what is known here
/// stays true. The cache is bounded: two generations of
/// [`SEEN_HERE_GENERATION`] URLs each; when the newer is full, the older
/// is dropped. Each generation is a [`SeenUrls`], the lesson's own seen
/// set of 128-bit fingerprints: 16 bytes a URL however long it is.
#[derive(Default)]
struct SeenHere {
    newer: SeenUrls,
    older: SeenUrls,
}

/// URLs per generation: 200,000 in all, about 6 MB.
const SEEN_HERE_GENERATION: usize = 100_000;

impl SeenHere {
    fn contains(&self, url: &str) -> bool {
        self.newer.contains(url) || self.older.contains(url)
    }

    fn insert(&mut self, url: &str) {
        if self.newer.len() >= SEEN_HERE_GENERATION {
            self.older = std::mem::take(&mut self.newer);
        }
        self.newer.insert(url);
    }
}
// ANCHOR_END: seen_here

impl Shared {
    /// This process's part in the crawl of `frontier`, whose leases last
    /// `lease`; `every_link` if no link may be kept back (see the field).
    pub fn new(frontier: Redis, lease: Duration, every_link: bool) -> Shared {
        Shared {
            frontier,
            lease: lease.max(MIN_LEASE),
            held: RefCell::new(HashMap::new()),
            freed: Queue::new(),
            stopped_by: RefCell::new(None),
            seen_here: RefCell::new(SeenHere::default()),
            completions: Queue::new(),
            sitemaps: RefCell::new(Vec::new()),
            seen_rate: Cell::new((1.0, 0)),
            every_link,
            pauses: Queue::new(),
        }
    }

    /// Where the crawl's rules tell each wait a host asked for (a 429 or
    /// 503 with its `Retry-After`, or the backoff): the frontier keeps it,
    /// and no process is handed the host's URLs before it is over.
    pub fn pauses(&self) -> impl Fn(&Url, Duration) + 'static {
        let pauses = self.pauses.clone();
        move |url, wait| pauses.put_nowait((host_of(url), wait))
    }

    fn held(&self) -> Vec<Held> {
        self.held
            .borrow()
            .iter()
            .map(|(url, (token, host))| Held {
                url: url.clone(),
                host: host.clone(),
                token: *token,
            })
            .collect()
    }
}

/// A statistic as the frontier's report keeps it: the journal's form
/// (`stat_json`, which keeps the exception's kind: the merged report counts
/// failures by kind) less the URL, which is the report's key, the counts,
/// which only Redis knows (`Frontier::records` puts all three back), and
/// the fields with no value. Every byte of it passes through the completion
/// script, whose cost to Redis is mostly its arguments: about 90 bytes for
/// a page, where the whole form has 250.
fn frontier_record(stat: &FetchStatistic) -> String {
    let mut record = stat_json(stat);
    if let Some(fields) = record.as_object_mut() {
        fields.retain(|name, value| {
            !value.is_null() && !matches!(name.as_str(), "url" | "num_urls" | "num_new_urls")
        });
    }
    record.to_string()
}

/// Forgets a lease of ours, unless it was replaced: this process may have
/// claimed the URL again, under a new token, after the old lease ran out.
fn release_held(shared: &Shared, url: &str, token: u64) {
    let mut held = shared.held.borrow_mut();
    if held.get(url).is_some_and(|(t, _)| *t == token) {
        held.remove(url);
    }
    drop(held);
    shared.freed.put_nowait(());
}

/// The host key the frontier's per-host lines use: `host:port`.
fn host_of(url: &Url) -> String {
    host_key(url).map_or_else(String::new, |(host, port)| format!("{host}:{port}"))
}

/// A root, for the frontier's first step: fetched whatever the rules say.
pub fn root_link(root: &Url) -> Link {
    Link {
        sitemap: false,
        url: root.to_string(),
        host: host_of(root),
        variant: None,
        refused: None,
        robots: false,
        counts: false,
    }
}

impl Shared {
    // ANCHOR: feed
    /// Claims URLs from the frontier for this process's workers until the
    /// whole crawl is over, or Redis is lost for good.
    async fn feed(&self, crawl: &impl Crawl) -> io::Result<()> {
        loop {
            let free = crawl.max_tasks().saturating_sub(self.held.borrow().len());
            if free == 0 {
                self.freed.get().await;
                continue;
            }
            while self.freed.get_nowait().is_some() {}
            match self.frontier.claim(free).await? {
                Claim::Finished => {
                    // Our own last completions may have ended it: let their
                    // workers keep what they found before they are cancelled.
                    self.idle().await;
                    return Ok(());
                }
                Claim::Work(leased) => self.take(crawl, leased).await,
                Claim::Wait(wait) => {
                    // While ours work, their completions claim for them:
                    // wait until none is left working, or a host's delay
                    // or a lease ends. Idle, wait for those or for another
                    // process to ring (our own completions ring too, and
                    // heeding them would claim again for each).
                    let wait = wait.min(MAX_WAIT);
                    if self.held.borrow().is_empty() {
                        self.frontier.wait_for_news(wait).await;
                    } else {
                        let _ = runtime::select(self.idle(), runtime::sleep(wait)).await;
                    }
                }
            }
        }
    }
    // ANCHOR_END: feed

    /// Waits until this process holds no URL: none of its workers has a
    /// completion left to claim for it.
    async fn idle(&self) {
        while !self.held.borrow().is_empty() {
            self.freed.get().await;
        }
    }

    /// Hands claimed URLs to this process's workers, holding their leases.
    async fn take(&self, crawl: &impl Crawl, leased: Vec<Leased>) {
        for leased in leased {
            // Claimed, so queued, so seen (a sitemap's key is not a URL).
            if !leased.url.starts_with('~') {
                self.seen_here.borrow_mut().insert(&leased.url);
            }
            let work = leased_work(&leased.work, leased.token);
            self.held
                .borrow_mut()
                .insert(leased.url.clone(), (leased.token, leased.host.clone()));
            match work {
                Some(work) => crawl.queue().put_nowait(work),
                None => self.complete_unreadable(crawl, &leased).await,
            }
        }
    }

    // ANCHOR: keep_back_seen
    /// The batch's links that this process did not know are seen, asked
    /// of Redis first with plain reads (`Frontier::seen_already`): those
    /// seen are kept back, as the links known here are, and the script
    /// gets only the others. With many processes each knows a smaller
    /// share of the crawl (eight processes, an eighth), so most links a
    /// process sends are seen already, and a link costs Redis several
    /// times more in a script than in an `HMGET`. Asked only when it pays:
    /// when enough links would be kept back, as often as they were last
    /// time (and every 32nd batch regardless, to learn again). A link
    /// whose answer is more than "seen" stays: a query (its count is
    /// Redis's), a redirect's target (a shorter path), a sitemap. Returns,
    /// for each completion, where the links it kept back were.
    async fn keep_back_seen(
        &self,
        crawl: &impl Crawl,
        batch: &mut [Completion],
    ) -> Vec<Vec<usize>> {
        let mut kept = vec![Vec::new(); batch.len()];
        let asked: Vec<(usize, usize)> = batch
            .iter()
            .enumerate()
            .flat_map(|(c, completion)| {
                completion
                    .links
                    .iter()
                    .enumerate()
                    .filter_map(move |(i, l)| {
                        let plain =
                            !l.sitemap && l.variant.is_none() && (l.counts || l.refused.is_some());
                        plain.then_some((c, i))
                    })
            })
            .collect();
        let (rate, skipped) = self.seen_rate.get();
        let worth = !self.every_link
            && asked.len() >= 16
            && (rate * asked.len() as f64 >= 8.0 || skipped >= 32);
        if !worth {
            self.seen_rate.set((rate, skipped + 1));
            return kept;
        }
        let links: Vec<(&Link, &str)> = asked
            .iter()
            .map(|&(c, i)| (&batch[c].links[i], batch[c].url.as_str()))
            .collect();
        let Ok(seen) = self.frontier.seen_already(&links).await else {
            return kept; // the script will tell
        };
        let hits = seen.iter().filter(|&&s| s).count();
        crawl.log().debug(format_args!(
            "{hits} of {} links were seen by other processes: kept back",
            asked.len()
        ));
        self.seen_rate
            .set((0.7 * rate + 0.3 * hits as f64 / asked.len() as f64, 0));
        for (&(c, i), seen) in asked.iter().zip(seen) {
            if seen {
                kept[c].push(i);
            }
        }
        let mut seen_here = self.seen_here.borrow_mut();
        for (completion, kept) in batch.iter_mut().zip(&kept) {
            for &i in kept.iter().rev() {
                let link = completion.links.remove(i);
                completion.known += usize::from(link.counts);
                seen_here.insert(&link.url);
            }
        }
        kept
    }
    // ANCHOR_END: keep_back_seen

    // ANCHOR: offer_sitemaps
    /// With `--sitemaps`: the sitemaps this process found since its last
    /// batch (the roots', and those the robots.txt files it reads name)
    /// go to the frontier as links of each completion of the batch, before
    /// it counts its page out, so that the crawl cannot end while they
    /// wait: any completion whose lease is still ours queues them, and
    /// the frontier queues each sitemap once. Kept here until one of them
    /// is done: leases lost, or Redis failing, offer them again with the
    /// next batch. (A process that dies with them here loses nothing:
    /// whoever reads those robots.txt files again finds them again.)
    /// Returns how many were offered.
    fn offer_sitemaps(&self, crawl: &impl Crawl, batch: &mut [Completion]) -> usize {
        let mut sitemaps = self.sitemaps.borrow_mut();
        sitemaps.extend(crawl.rules().take_found_sitemaps());
        for completion in batch.iter_mut() {
            // After the page's own links, whose answers come first.
            completion.links.extend(sitemaps.iter().map(sitemap_link));
        }
        sitemaps.len()
    }
    // ANCHOR_END: offer_sitemaps

    /// Work nobody can fetch (written by something else, or damaged):
    /// completed as a failure, so that it is reported and the crawl goes
    /// on, rather than stopping every process that claims it.
    async fn complete_unreadable(&self, crawl: &impl Crawl, leased: &Leased) {
        let (url, token) = (leased.url.as_str(), leased.token);
        crawl.log().error(format_args!(
            "the frontier holds work this crawler cannot read: {}",
            leased.work
        ));
        let stat = FetchStatistic::failure(
            url.to_string(),
            Exception {
                kind: "internal",
                message: "the frontier held work this crawler cannot read".into(),
            },
        );
        let record = frontier_record(&stat);
        let completion = Completion {
            url: url.to_string(),
            host: leased.host.clone(),
            token,
            delay: None,
            record,
            known: 0,
            depth: 0,
            redirects: 0,
            links: Vec::new(),
        };
        match self.frontier.complete(completion).await {
            Ok(Completed::Done { .. }) => crawl.keep_statistic(stat),
            Ok(Completed::Lost) => {}
            Err(e) => crawl.log().error(format_args!("completing {url}: {e}")),
        }
        release_held(self, url, token);
    }

    // ANCHOR: complete_batches
    /// Completes what the workers finished, in batches: each call takes
    /// every completion waiting (up to [`MAX_BATCH`]) and runs one script
    /// for them all, since a script's own cost in Redis is more than the
    /// commands it runs. While one batch is out, the next gathers, so the
    /// busier the process, the bigger the batches. The same script claims
    /// work for the workers the batch frees, so a busy process makes one
    /// script call per batch, not two.
    async fn complete_batches(&self, crawl: &impl Crawl) -> std::convert::Infallible {
        loop {
            let first = self.completions.get().await;
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match self.completions.get_nowait() {
                    Some(more) => batch.push(more),
                    None => break,
                }
            }
            let (mut completions, answers): (Vec<Completion>, Vec<_>) = batch.into_iter().unzip();
            let kept_back = self.keep_back_seen(crawl, &mut completions).await;
            let offered = self.offer_sitemaps(crawl, &mut completions);
            for _ in &answers {
                let _ = self.completions.task_done();
            }
            // Every worker that is not holding a URL once this batch is
            // done (the batch's own are still held until then).
            let held = self.held.borrow().len().saturating_sub(completions.len());
            let wanted = crawl.max_tasks().saturating_sub(held);
            match self.frontier.complete_many(&completions, wanted).await {
                Ok((done, claimed)) => {
                    if done.iter().any(|d| matches!(d, Completed::Done { .. })) {
                        self.sitemaps.borrow_mut().drain(..offered);
                    }
                    self.take(crawl, claimed).await;
                    for ((answer, done), kept) in answers.into_iter().zip(done).zip(kept_back) {
                        answer.send(Ok(with_kept_back(done, &kept)));
                    }
                }
                Err(e) => {
                    for answer in answers {
                        answer.send(Err(io::Error::new(e.kind(), e.to_string())));
                    }
                }
            }
        }
    }
    // ANCHOR_END: complete_batches

    /// Tells the frontier each wait a host asked of this process, as they
    /// come, for as long as the crawl runs. A wait Redis did not hear is
    /// still this process's own.
    async fn tell_pauses(&self, crawl: &impl Crawl) -> std::convert::Infallible {
        loop {
            let (host, wait) = self.pauses.get().await;
            let _ = self.pauses.task_done();
            if let Err(e) = self.frontier.pause(&host, wait).await {
                crawl.log().warn(format_args!(
                    "telling the frontier {host} asked us to wait: {e}"
                ));
            }
        }
    }

    /// Extends this process's leases, every third of a lease, for as long
    /// as the crawl runs.
    async fn renew_leases(&self, crawl: &impl Crawl) -> std::convert::Infallible {
        loop {
            runtime::sleep(self.lease / 3).await;
            if let Err(e) = self.frontier.renew(&self.held()).await {
                crawl.log().warn(format_args!("renewing leases: {e}"));
            }
        }
    }

    /// Gives back the leases of the URLs this process did not finish (an
    /// interrupt, or Redis lost), so that others need not wait for them to
    /// run out. If Redis is gone, they run out.
    async fn release_leases(&self, crawl: &impl Crawl) {
        let held = self.held();
        // A Redis that was lost has had its patience already.
        self.frontier.set_patience(RELEASE_PATIENCE);
        match self.frontier.release(&held).await {
            Ok(n) if n > 0 => crawl.log().info(format_args!(
                "gave {n} unfinished URLs back to the frontier"
            )),
            Ok(_) => {}
            Err(e) => crawl.log().warn(format_args!(
                "could not give back {} URLs ({e}): their leases will run out",
                held.len()
            )),
        }
    }
}

/// What the shared crawl asks of the crawl it feeds.
trait Crawl {
    /// This process's queue, which the feeder fills.
    fn queue(&self) -> &Queue<Work>;
    /// Its rules.
    fn rules(&self) -> &WebRules;
    /// Its log.
    fn log(&self) -> &CrawlLog;
    /// Redirects a URL may follow, from a page's link.
    fn max_redirect(&self) -> u32;
    /// Its workers.
    fn max_tasks(&self) -> usize;
    /// Adds a statistic to this process's report.
    fn keep_statistic(&self, stat: FetchStatistic);
    /// Adds a skipped URL to this process's report.
    fn keep_skip(&self, skipped: Skipped);
}

/// This process's side of a shared crawl: its queue, rules, records, log.
pub struct Local {
    /// The queue the feeder fills and the workers take from.
    pub q: Queue<Work>,
    /// The rules.
    pub rules: Rc<WebRules>,
    /// This process's report.
    pub records: Rc<Records>,
    /// The log.
    pub log: Rc<CrawlLog>,
    /// Redirects a link may follow.
    pub max_redirect: u32,
    /// Workers.
    pub max_tasks: usize,
}

impl Crawl for Local {
    fn queue(&self) -> &Queue<Work> {
        &self.q
    }

    fn rules(&self) -> &WebRules {
        &self.rules
    }

    fn log(&self) -> &CrawlLog {
        &self.log
    }

    fn max_redirect(&self) -> u32 {
        self.max_redirect
    }

    fn max_tasks(&self) -> usize {
        self.max_tasks
    }

    fn keep_statistic(&self, stat: FetchStatistic) {
        self.records.keep_statistic(stat);
    }

    fn keep_skip(&self, skipped: Skipped) {
        self.records.keep_skip(skipped);
    }
}

// ANCHOR: shared_queue
/// The crawl's queue when `--frontier` is given: Redis feeds this
/// process's queue, and hears what became of each URL it fed.
pub struct SharedQueue {
    shared: Shared,
    local: Local,
}

impl Shared {
    /// The crawl's queue, this process's part of the crawl fed by Redis.
    pub fn into_queue(self, local: Local) -> SharedQueue {
        SharedQueue {
            shared: self,
            local,
        }
    }
}

impl WorkQueue for SharedQueue {
    fn get(&self) -> Pending<'_, Work> {
        Box::pin(self.local.q.get())
    }

    fn task_done(&self, work: Work, found: Found) -> Pending<'_, ()> {
        Box::pin(async move {
            let completed = self.shared.complete_fetched(&self.local, &work, found);
            if let Err(panic) = runtime::catch_unwind(completed).await {
                self.local.log.error(format_args!(
                    "recording what {} led to panicked: {panic}",
                    work.url
                ));
            }
            self.local.finish_one();
        })
    }

    fn join(&self) -> Pending<'_, Outcome> {
        Box::pin(async move {
            let (shared, crawl) = (&self.shared, &self.local);
            // The renewer and the completer run as long as the feeder:
            // neither ends the other but by ending.
            let beside = runtime::select(
                runtime::select(shared.renew_leases(crawl), shared.tell_pauses(crawl)),
                shared.complete_batches(crawl),
            );
            match runtime::select(shared.feed(crawl), beside).await {
                runtime::Either::Left(Ok(())) => Outcome::Completed,
                runtime::Either::Left(Err(e)) => {
                    crawl.log().error(format_args!("{e}"));
                    // Where the crawl's state is: still in Redis (run the
                    // command again), unless the crawl is gone from it.
                    let stopped = match e.kind() {
                        io::ErrorKind::NotFound => e.to_string(),
                        _ => format!("{e}. {STATE_KEPT}"),
                    };
                    *shared.stopped_by.borrow_mut() = Some(stopped);
                    Outcome::Lost
                }
                runtime::Either::Right(runtime::Either::Left(runtime::Either::Left(never)))
                | runtime::Either::Right(runtime::Either::Left(runtime::Either::Right(never)))
                | runtime::Either::Right(runtime::Either::Right(never)) => match never {},
            }
        })
    }

    // ANCHOR_END: shared_queue

    fn close(&self, outcome: Outcome, unfinished: Vec<Work>) -> Pending<'_, ()> {
        Box::pin(async move {
            if outcome == Outcome::Completed {
                return;
            }
            self.shared.release_leases(&self.local).await;
            // What this process was fetching or held queued: interrupted,
            // in its report (another process fetches them).
            let queued = std::iter::from_fn(|| self.local.q.get_nowait());
            for work in unfinished.into_iter().chain(queued) {
                if work.tag.in_report() {
                    self.local.records.record_skip(Skipped {
                        url: work.url.into(),
                        reason: SkipReason::Interrupted,
                        from: work.from.map(|f| f.to_string()),
                    });
                }
            }
        })
    }

    fn is_new(&self, _url: &Url) -> bool {
        // Redis knows; its answer replaces the page's counts.
        true
    }

    fn qsize(&self) -> usize {
        self.local.q.qsize()
    }

    fn skip(&self, work: Work, reason: SkipReason) -> Pending<'_, ()> {
        Box::pin(async move {
            self.shared
                .complete_skipped(&self.local, &work, reason)
                .await;
            self.local.finish_one();
        })
    }

    fn done_listing(&self, work: Work, listed: Option<Vec<Url>>) -> Pending<'_, ()> {
        Box::pin(async move {
            self.shared
                .complete_sitemap(&self.local, &work, listed)
                .await;
            self.local.finish_one();
        })
    }

    fn stopped_by(&self) -> Option<String> {
        self.shared.stopped_by.borrow().clone()
    }
}

impl Local {
    /// Marks one URL done on this process's queue: what it came to was
    /// told (to Redis, and to this process's report) first.
    fn finish_one(&self) {
        self.records.settled();
        if let Err(e) = self.q.task_done() {
            self.log.error(format_args!("{e}"));
        }
    }
}

/// The work a claim returned, in the frontier's four lines (URL, the
/// page that linked it or nothing, depth, redirects; a sitemap's URL
/// after a '~'); `None` if it cannot be read.
fn leased_work(text: &str, token: u64) -> Option<Work> {
    let mut lines = text.split('\n');
    let (url, from, depth, redirects) =
        (lines.next()?, lines.next()?, lines.next()?, lines.next()?);
    if lines.next().is_some() {
        return None;
    }
    let (url, sitemap) = match url.strip_prefix('~') {
        Some(url) => (url, true),
        None => (url, false),
    };
    Some(Work {
        url: Url::parse(url).ok()?,
        max_redirect: redirects.parse().ok()?,
        from: (!from.is_empty()).then(|| Rc::from(from)),
        tag: Tag {
            depth: depth.parse().ok()?,
            sitemap,
            lease: Some(token),
        },
    })
}
