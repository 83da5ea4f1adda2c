//! A crawl spread over several loops (`--loops N`): a crawler on each,
//! built as one loop's is, with [`Shards`](crate::cores::shards::Shards) plugged
//! in beneath its per-host turns; the report made on the thread that
//! started them, as each loop sends it its records.
//!
//! Each loop's crawler is built on its own thread, from settings that
//! cross threads (`Config`, the roots): its `Rc`s never leave it. What
//! comes back is `Send` by construction: each statistic and skipped URL as
//! it is recorded ([`Heard`]), and at the end what the report needs
//! besides ([`Part`]).

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicIsize;
use std::task::Poll;
use std::time::Instant;

use runtime::{LoopHandle, Loops, RemoteJoin, mpsc};
use url::Url;

use crate::assembly::{self, Plugins};
use crate::config::Config;
use crate::cores::shards::{self, Message, Shard};
use crate::crawling::Crawler;
use crate::http::HearExchanges;
use crate::keeping::archive::ArchiveHandle;
use crate::polite::politeness::RobotsOutcome;
use crate::polite::sitemap::SitemapOutcome;
use crate::polite::slow_down::Wait;
use crate::records::Records;
use crate::report::reporting::{Crawl, Reported};
use crate::seams::Outcome;
use crate::skipped::Skipped;
use crate::stats::FetchStatistic;

/// A record, as a loop sends it to the report.
#[derive(Debug)]
pub enum Heard {
    /// A URL fetched, or failed.
    Stat(FetchStatistic),
    /// A URL skipped.
    Skip(Skipped),
}

/// What one loop's crawl came to, besides its records.
#[derive(Debug)]
pub struct Part {
    outcome: Outcome,
    robots: Vec<RobotsOutcome>,
    sitemaps: Vec<SitemapOutcome>,
    waits: Vec<Wait>,
    waits_unlisted: u64,
    connections: u64,
}

/// A crawl running on several loops.
pub struct Spread {
    loops: Loops,
    pending: Arc<AtomicIsize>,
    parts: Vec<RemoteJoin<io::Result<Part>>>,
    inboxes: Vec<mpsc::Sender<Message>>,
    started: Instant,
}

// ANCHOR: start
/// Starts a crawl of `roots` on `loops` loops, each with `config`'s
/// workers and limits. Every record goes to `heard`.
pub fn start(
    roots: &[Url],
    config: &Config,
    loops: usize,
    heard: &mpsc::Sender<Heard>,
    archive: Option<&ArchiveHandle>,
) -> io::Result<Spread> {
    // `--max-pages` is counted across the loops, by the shards: each
    // loop's own queue counts none.
    let (shards, inboxes, pending) = shards::shards(loops, config.max_pages);
    let mut config = config.clone();
    config.max_pages = None;
    let started = Loops::start(loops)?;
    let parts = started
        .handles()
        .iter()
        .zip(shards)
        .map(|(handle, shard)| {
            let archive = archive.cloned();
            crawl_on(
                handle,
                roots.to_vec(),
                config.clone(),
                shard,
                heard,
                archive,
            )
        })
        .collect();
    Ok(Spread {
        loops: started,
        pending,
        parts,
        inboxes,
        started: Instant::now(),
    })
}

/// This loop's crawler, built and run on it.
fn crawl_on(
    handle: &LoopHandle,
    roots: Vec<Url>,
    config: Config,
    shard: Shard,
    heard: &mpsc::Sender<Heard>,
    archive: Option<ArchiveHandle>,
) -> RemoteJoin<io::Result<Part>> {
    let heard = heard.clone();
    handle.spawn_with(move || async move {
        let plugins = Plugins {
            shard: Some(shard),
            // Every loop's exchanges go to the one archive's queue.
            exchanges: archive.map(|a| Rc::new(a) as Rc<dyn HearExchanges>),
            ..Plugins::default()
        };
        let (crawler, _) = assembly::build(roots, config, plugins)?;
        let crawler = Rc::new(crawler);
        let stats = heard.clone();
        // The main thread is there until every part is in: a send cannot
        // fail before then.
        crawler.on_stat(move |stat| drop(stats.send(Heard::Stat(stat.clone()))));
        crawler.on_skip(move |skip| drop(heard.send(Heard::Skip(skip.clone()))));
        let Some(shards) = crawler.shards().cloned() else {
            return Err(io::Error::other(
                "a loop's crawler was built without its shard",
            ));
        };
        let outcome = crawler.crawl_until(shards.stopped()).await;
        Ok(part(&crawler, outcome))
    })
}
// ANCHOR_END: start

fn part(crawler: &Crawler, outcome: Outcome) -> Part {
    Part {
        outcome,
        robots: crawler.robots_outcomes(),
        sitemaps: crawler.sitemap_outcomes(),
        waits: crawler.waits(),
        waits_unlisted: crawler.waits_unlisted(),
        connections: crawler.connections_opened(),
    }
}

impl Spread {
    /// The work pending across the loops, for the progress line.
    pub fn pending(&self) -> Arc<AtomicIsize> {
        Arc::clone(&self.pending)
    }

    /// A sender that stops the crawl (Ctrl-C), for any thread.
    pub fn stopper(&self) -> Stopper {
        Stopper(self.inboxes.clone())
    }

    /// Waits for every loop's part, taking in what `heard` brings the while
    /// into `records`; the first loop that fails ends the wait with its
    /// error. Then the loops' threads are waited for.
    pub async fn finish(
        self,
        heard: &mut mpsc::Receiver<Heard>,
        records: &Records,
    ) -> io::Result<Ended> {
        let Spread {
            loops,
            pending: _,
            parts,
            inboxes: _,
            started,
        } = self;
        let take_in = |heard: Heard| match heard {
            Heard::Stat(stat) => records.record_statistic(stat),
            Heard::Skip(skip) => records.record_skip(skip),
        };
        let feed = async {
            while let Some(h) = heard.recv().await {
                take_in(h);
            }
            std::future::pending().await
        };
        let parts = match runtime::select(feed, all(parts)).await {
            runtime::Either::Left(never) => never,
            runtime::Either::Right(parts) => parts?,
        };
        // Each loop sent its records before its part: they are all here.
        while let Some(h) = heard.try_recv() {
            take_in(h);
        }
        let secs = started.elapsed().as_secs_f64();
        // Their crawls are over; their threads end as their inboxes do.
        loops.join();
        Ok(Ended { parts, secs })
    }
}

/// Stops a crawl on several loops.
#[derive(Clone, Debug)]
pub struct Stopper(Vec<mpsc::Sender<Message>>);

impl Stopper {
    /// Tells every loop to stop crawling.
    pub fn stop(&self) {
        for inbox in &self.0 {
            let _ = inbox.send(Message::Stop);
        }
    }
}

/// Every part, in the loops' order, or the first loop's error.
async fn all(mut joins: Vec<RemoteJoin<io::Result<Part>>>) -> io::Result<Vec<Part>> {
    let mut parts: Vec<Option<Part>> = joins.iter().map(|_| None).collect();
    poll_fn(|cx| {
        for (i, join) in joins.iter_mut().enumerate() {
            if parts[i].is_some() {
                continue;
            }
            match Pin::new(join).poll(cx) {
                Poll::Pending => {}
                Poll::Ready(Ok(Ok(part))) => parts[i] = Some(part),
                Poll::Ready(Ok(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Err(e)) => {
                    return Poll::Ready(Err(io::Error::other(format!("loop {i}: {e}"))));
                }
            }
        }
        if parts.iter().all(Option::is_some) {
            Poll::Ready(Ok(parts.iter_mut().flat_map(Option::take).collect()))
        } else {
            Poll::Pending
        }
    })
    .await
}

/// A crawl on several loops, over: every loop's part.
#[derive(Debug)]
pub struct Ended {
    parts: Vec<Part>,
    secs: f64,
}

impl Ended {
    /// Interrupted if any loop was.
    pub fn outcome(&self) -> Outcome {
        self.parts
            .iter()
            .map(|p| p.outcome)
            .find(|o| *o != Outcome::Completed)
            .unwrap_or(Outcome::Completed)
    }
}

/// The report of a crawl on several loops: its records, taken in on the
/// main thread, and each loop's part.
pub struct Merged<'a> {
    /// Every statistic and skipped URL.
    pub records: &'a Records,
    /// The parts.
    pub ended: &'a Ended,
    /// Workers on all loops.
    pub max_tasks: usize,
}

impl Reported for Merged<'_> {
    fn with_crawl<R>(&self, outcome: Outcome, f: impl FnOnce(&Crawl<'_>) -> R) -> R {
        let done = self.records.done();
        let skipped = self.records.skipped();
        let parts = &self.ended.parts;
        f(&Crawl {
            done: &done,
            skipped: &skipped,
            tally: self.records.tally(),
            secs: self.ended.secs,
            max_tasks: self.max_tasks,
            todo: 0,
            connections: parts.iter().map(|p| p.connections).sum(),
            interrupted: outcome != Outcome::Completed,
            robots: parts.iter().flat_map(|p| p.robots.clone()).collect(),
            sitemaps: parts.iter().flat_map(|p| p.sitemaps.clone()).collect(),
            waits: parts.iter().flat_map(|p| p.waits.clone()).collect(),
            waits_unlisted: parts.iter().map(|p| p.waits_unlisted).sum(),
        })
    }
}
