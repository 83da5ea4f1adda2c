//! The crawler assembled: the lesson's [`Crawler`] with the real web's
//! features plugged into its seams, as the settings ([`Config`]) ask. The
//! lesson never names a feature; this module names them all:
//!
//! | seam | plugged in here |
//! |---|---|
//! | `WorkQueue` | the lesson's [`LocalQueue`], or [`SharedQueue`] with `--frontier`; [`Levels`] around it with `--max-depth`; [`Turns`] (per-host limits, delays, robots.txt) around that; [`SitemapReader`] around all, with `--sitemaps` |
//! | `Rules` | [`WebRules`]: hosts, `--exclude`, traps, robots.txt |
//! | `WorkQueue`, with `--loops` | [`Shards`] around each loop's [`LocalQueue`]: its hosts' URLs stay, the others go to their loops |
//! | `WorkQueue`, with `--recrawl` | [`Recrawl`] around the lesson's queue (or its levels): each statistic says `not-modified`, `changed` or `new` |
//! | `Observer` | the [`Journal`], with `--state` |
//! | `http::HearExchanges` | the WARC archive, with `--warc` |

use std::collections::HashSet;
use std::io;
use std::rc::Rc;

use runtime::Queue;
use url::Url;

use crate::config::Config;
use crate::cores::shards::{Shard, Shards};
use crate::crawling::{Crawler, Parts};
use crate::http::{Client, HearExchanges};
use crate::keeping::journal::{Journal, Replayed};
use crate::keeping::recrawl::Recrawl;
use crate::logging::CrawlLog;
use crate::polite::depth::Levels;
use crate::polite::politeness::RobotsOutcome;
use crate::polite::rules::WebRules;
use crate::polite::sitemap::SitemapOutcome;
use crate::polite::sitemaps::SitemapReader;
use crate::polite::slow_down::Wait;
use crate::polite::turns::Turns;
use crate::queue::LocalQueue;
use crate::records::Records;
use crate::report::reporting::{Crawl, Reported};
use crate::seams::{Observer, Outcome, Rules, Tag, Work, WorkQueue};
use crate::sharing::shared::{Local, Shared, SharedQueue};
use crate::skipped::{SkipReason, Skipped};

/// What a crawler is built with besides its roots and settings.
#[derive(Default)]
pub struct Plugins {
    /// `--state`: the journal, and what it held.
    pub journal: Option<(Rc<Journal>, Replayed)>,
    /// `--frontier`: this process's part in a shared crawl, whose roots
    /// the frontier queued already.
    pub shared: Option<Shared>,
    /// `--warc`: who hears every exchange.
    pub exchanges: Option<Rc<dyn HearExchanges>>,
    /// `--loops`: this loop's part of a crawl spread over several.
    pub shard: Option<Shard>,
}

impl Crawler {
    /// A crawler with `roots` already queued. Fragments are dropped from the
    /// roots; their hosts (and non-default ports) define the site.
    pub fn new(roots: Vec<Url>, config: Config) -> io::Result<Crawler> {
        build(roots, config, Plugins::default()).map(|(crawler, _)| crawler)
    }
}

/// What was plugged into a crawler's seams, for the report and for a
/// crawl taken up again.
pub struct Plugged {
    rules: Rc<WebRules>,
    /// The lesson's queue, unless the crawl is shared.
    local: Option<Rc<LocalQueue>>,
    /// Its levels, with `--max-depth`.
    levels: Option<Rc<Levels>>,
    /// With `--loops`: this loop's part.
    shards: Option<Rc<Shards>>,
    /// The client, to send a recrawl's validators.
    client: Rc<Client>,
}

impl Plugged {
    /// Queues a URL first seen as a root, or linked from `from`: through
    /// the levels, if there are any.
    fn add_url(&self, url: Url, from: Option<&Rc<str>>, max_redirect: u32, tag: Tag) {
        match (&self.levels, &self.shards, &self.local) {
            (Some(levels), _, _) => levels.add_url(url, from, max_redirect, tag),
            (None, Some(shards), _) => shards.add_here(url, from, max_redirect, tag),
            (None, None, Some(local)) => local.add_url(url, from, max_redirect, tag),
            (None, None, None) => {}
        }
    }
}

/// What the report and the program ask of a crawler about its features.
impl Crawler {
    fn features(&self) -> Option<&Plugged> {
        self.plugged::<Plugged>()
    }

    /// What each origin's robots.txt came to, in the order they were
    /// fetched.
    pub fn robots_outcomes(&self) -> Vec<RobotsOutcome> {
        self.features()
            .map(|p| p.rules.robots_outcomes())
            .unwrap_or_default()
    }

    /// Each wait a host asked for (a 429 or 503), in order: the first
    /// ten thousand.
    pub fn waits(&self) -> Vec<Wait> {
        self.features()
            .map(|p| p.rules.waits().0)
            .unwrap_or_default()
    }

    /// The waits past the ones [`waits`](Self::waits) lists.
    pub fn waits_unlisted(&self) -> u64 {
        self.features().map_or(0, |p| p.rules.waits().1)
    }

    /// What each sitemap read came to, in the order they were read.
    pub fn sitemap_outcomes(&self) -> Vec<SitemapOutcome> {
        self.features()
            .map(|p| p.rules.sitemap_outcomes())
            .unwrap_or_default()
    }

    /// Every URL this process has seen: fetched, failed or skipped.
    pub fn seen(&self) -> usize {
        self.features()
            .and_then(|p| p.local.as_ref())
            .map_or(0, |local| local.seen())
    }

    /// Whether the crawl is shared through a frontier.
    pub fn is_shared(&self) -> bool {
        self.features().is_some_and(|p| p.local.is_none())
    }

    /// With `--loops`, this loop's part of the crawl.
    pub fn shards(&self) -> Option<&Rc<Shards>> {
        self.features().and_then(|p| p.shards.as_ref())
    }

    /// Why a shared crawl stopped before its end ([`Outcome::Lost`]).
    pub fn stopped_by(&self) -> Option<String> {
        self.queue().stopped_by()
    }
}

/// Builds a crawler of `roots` with `plugins`. If the journal held a crawl
/// already, that crawl is to be taken up: call [`Resume::take_up`] once
/// the report's sinks are in place, and before the crawl starts.
pub fn build(
    roots: Vec<Url>,
    mut config: Config,
    plugins: Plugins,
) -> io::Result<(Crawler, Option<Resume>)> {
    let roots: Vec<Url> = roots
        .into_iter()
        .map(|mut root| {
            root.set_fragment(None);
            root
        })
        .collect();
    config.client.max_idle = config.max_tasks;
    // Shared, the frontier in Redis keeps the levels of --max-depth, for
    // every process at once: the rules here have none of their own.
    if plugins.shared.is_some() {
        config.max_depth = None;
    }
    let q = Queue::new();
    let log = Rc::new(CrawlLog::default());
    let client = Rc::new(Client::new(config.client.clone()));
    if let Some(listener) = plugins.exchanges {
        client.hear_exchanges(listener);
    }
    let (journal, replayed) = match plugins.journal {
        Some((journal, replayed)) => (Some(journal), Some(replayed)),
        None => (None, None),
    };
    // The sessions of the crawl's earlier runs, and its cookies from now
    // on, kept in the journal.
    if let Some(replayed) = &replayed {
        for (url, line, at) in &replayed.cookies {
            if let Ok(url) = Url::parse(url) {
                client.restore_cookie(&url, line, *at);
            }
        }
    }
    if let Some(journal) = &journal {
        let cookies = Rc::clone(journal);
        client.hear_cookies(Box::new(move |url, line, at| {
            cookies.cookie(url.as_str(), line, at)
        }));
        let journal = Rc::clone(journal);
        client.hear_validators(Box::new(move |url, validators| {
            journal.validators(url.as_str(), validators)
        }));
    }
    let rules = Rc::new(WebRules::new(&config, &roots, &q, &client, &log));
    if let Some(journal) = &journal {
        let journal = Rc::clone(journal);
        rules.on_robots(move |outcome, source| journal.robots(outcome, source));
    }
    let observers: Vec<Rc<dyn Observer>> = journal
        .iter()
        .map(|j| Rc::clone(j) as Rc<dyn Observer>)
        .collect();
    let records = Rc::new(Records::new(&roots, config.keep_records, observers));
    let shared = plugins.shared.is_some();
    let (base, plugged): (Rc<dyn WorkQueue>, Plugged) = match plugins.shared {
        Some(shared) => {
            // A host's wait is every process's.
            rules.on_pause(shared.pauses());
            let queue: SharedQueue = shared.into_queue(Local {
                q,
                rules: Rc::clone(&rules),
                records: Rc::clone(&records),
                log: Rc::clone(&log),
                max_redirect: config.max_redirect,
                max_tasks: config.max_tasks,
            });
            let plugged = Plugged {
                rules: Rc::clone(&rules),
                local: None,
                levels: None,
                shards: None,
                client: Rc::clone(&client),
            };
            (Rc::new(queue), plugged)
        }
        None => {
            let local = Rc::new(LocalQueue::new(
                q,
                &config,
                Rc::clone(&rules) as Rc<dyn Rules>,
                Rc::clone(&records),
                Rc::clone(&log),
            ));
            let levels = config.max_depth.map(|max| {
                let levels = Rc::new(Levels::new(Rc::clone(&local), max, Rc::clone(&log)));
                rules.send_sitemaps_to(Levels::hold_for(&levels));
                levels
            });
            // Several loops: the command line refuses --max-depth with
            // them, so the shards wrap the lesson's queue itself.
            let shards = plugins
                .shard
                .map(|shard| Shards::new(Rc::clone(&local), shard));
            let mut base: Rc<dyn WorkQueue> = match (&levels, &shards) {
                (Some(levels), _) => Rc::clone(levels) as Rc<dyn WorkQueue>,
                (None, Some(shards)) => Rc::clone(shards) as Rc<dyn WorkQueue>,
                (None, None) => Rc::clone(&local) as Rc<dyn WorkQueue>,
            };
            // A recrawl names what became of each URL since the last one.
            if let Some(replayed) = replayed.as_ref().filter(|r| r.generation > 0) {
                let known = replayed.known.iter().map(|q| q.url.clone()).collect();
                let answered = replayed.answered.clone();
                base = Rc::new(Recrawl::new(base, known, answered));
            }
            let plugged = Plugged {
                rules: Rc::clone(&rules),
                local: Some(local),
                levels,
                shards,
                client: Rc::clone(&client),
            };
            (base, plugged)
        }
    };
    let turns: Rc<dyn WorkQueue> = Rc::new(Turns::new(base, Rc::clone(&rules)));
    let queue: Rc<dyn WorkQueue> = if config.sitemaps {
        Rc::new(SitemapReader::new(
            turns,
            Rc::clone(&rules),
            Rc::clone(&log),
        ))
    } else {
        turns
    };
    let replayed = replayed.filter(|r| !r.is_empty());
    let resume = if shared {
        // The frontier queued the roots when the crawl was created.
        None
    } else if let Some(replayed) = replayed {
        Some(Resume { replayed })
    } else {
        // The roots are fetched whatever the rules say: the user asked.
        // With several loops, each queues those of its own hosts.
        for root in &roots {
            if plugged.shards.as_ref().is_none_or(|s| s.owns(root)) {
                plugged.add_url(root.clone(), None, config.max_redirect, Tag::root());
            }
        }
        None
    };
    if let Some(shards) = &plugged.shards {
        shards.begin();
    }
    if shared {
        // Read once in the whole crawl, not once in each process.
        rules.hand_sitemaps_to_frontier();
    }
    rules.queue_root_sitemaps(&roots);
    records.settled();
    let crawler = Crawler::assemble(
        roots,
        config,
        Parts {
            q: queue,
            rules: rules as Rc<dyn Rules>,
            records,
            client,
            log,
            plugged: Some(Rc::new(plugged)),
        },
    )?;
    Ok((crawler, resume))
}

/// A crawl to take up from its journal (`--state`).
pub struct Resume {
    replayed: Replayed,
}

impl Resume {
    // ANCHOR: resume
    /// Takes up a crawl from its journal: its statistics and skipped URLs
    /// go into the report (and to the report's sinks) as if they had just
    /// happened; every URL it queued is seen; and those not done go back on
    /// the queue, in the order they were first queued. The fetches that
    /// were in flight when it stopped are among them. A recrawl's known
    /// URLs come first, each asked for with its validators.
    pub fn take_up(self, crawler: &Crawler) {
        let Resume { replayed } = self;
        let Some(Plugged {
            rules,
            local: Some(local),
            levels,
            client,
            ..
        }) = crawler.features()
        else {
            return;
        };
        let records = crawler.records();
        let mut finished: HashSet<&str> = HashSet::new();
        for stat in &replayed.done {
            finished.insert(&stat.url);
            records.keep_statistic(stat.clone());
        }
        for skipped in replayed.skipped.iter().chain(&replayed.known_skipped) {
            if finished.insert(&skipped.url) {
                records.keep_skip(skipped.clone());
            }
        }
        for url in &finished {
            local.mark_seen(url);
        }
        let mut again = 0;
        let mut asked_if_changed = 0;
        for queued in replayed.known.iter().chain(&replayed.queued) {
            let Ok(url) = Url::parse(&queued.url) else {
                continue; // it parsed when it was queued
            };
            if !local.mark_seen(&queued.url) {
                // Done or skipped: the trap guards count what was queued.
                rules.counted(&url);
                continue;
            }
            // The journal is a file, and a file can be edited: the rules
            // hold for every URL the crawler fetches, whatever its source.
            // (A root is fetched whatever the host rules say, but it is
            // http or https.) Asked before the URL is counted, as a link's
            // are: what was queued before it.
            let refused = match queued.from {
                Some(_) => crawler.refusal(&url),
                None => (!matches!(url.scheme(), "http" | "https")).then_some(SkipReason::Scheme),
            };
            if refused.is_none() {
                rules.counted(&url);
            }
            if let Some(reason) = refused {
                records.record_skip(Skipped {
                    url: url.to_string(),
                    reason,
                    from: queued.from.clone(),
                });
                continue;
            }
            if replayed.generation > 0
                && let Some(validators) = replayed.validators.get(&queued.url)
            {
                client.revalidate(&url, validators.clone());
                asked_if_changed += 1;
            }
            if let Some(levels) = levels {
                levels.requeued(&url, queued.depth);
            }
            local.requeue(Work {
                url,
                max_redirect: queued.redirects,
                from: queued.from.as_deref().map(Rc::from),
                tag: Tag::at_depth(queued.depth),
            });
            again += 1;
        }
        // With --max-depth: what was set aside as too deep, and has not
        // been queued (a shorter path) or skipped since, stays aside.
        if let Some(levels) = levels {
            for aside in replayed.known_aside.iter().chain(&replayed.aside) {
                if local.mark_seen(aside.url.as_str()) {
                    let from = aside.from.as_deref().map(Rc::from);
                    levels.keep_aside(&aside.url, aside.depth, from.as_ref());
                }
            }
        }
        local.set_queued(replayed.known.len() + replayed.queued.len());
        // The rules each origin's robots.txt gave, without asking again;
        // and every host the crawl had fetched from waits its delay before
        // the first request of this run, as if the last one had just ended.
        for (outcome, source) in replayed.robots {
            rules.robots_known(outcome, source);
        }
        for stat in &replayed.done {
            if let Ok(url) = Url::parse(&stat.url) {
                rules.wait_before_next(&url);
            }
        }
        let cut = if replayed.cut > 0 {
            format!(
                " (the journal's last {} bytes, torn by a crash, were cut off)",
                replayed.cut
            )
        } else {
            String::new()
        };
        let (done, skipped) = (
            replayed.done.len(),
            replayed.skipped.len() + replayed.known_skipped.len(),
        );
        match replayed.generation {
            0 => crawler.log().info(format_args!(
                "resuming: {done} URLs done, {skipped} skipped, {again} to fetch{cut}"
            )),
            n => crawler.log().info(format_args!(
                "recrawl {n}: {done} URLs done, {skipped} skipped, {again} to fetch, \
                 {asked_if_changed} of them only if changed{cut}"
            )),
        }
    }
    // ANCHOR_END: resume
}

/// A crawler's report is what it has recorded so far, and what its rules
/// came to.
impl Reported for Crawler {
    fn with_crawl<R>(&self, outcome: Outcome, f: impl FnOnce(&Crawl<'_>) -> R) -> R {
        let done = self.done();
        let skipped = self.skipped();
        f(&Crawl {
            done: &done,
            skipped: &skipped,
            tally: self.tally(),
            secs: self.elapsed().as_secs_f64(),
            max_tasks: self.config().max_tasks,
            todo: self.todo(),
            connections: self.connections_opened(),
            interrupted: outcome != Outcome::Completed,
            robots: self.robots_outcomes(),
            sitemaps: self.sitemap_outcomes(),
            waits: self.waits(),
            waits_unlisted: self.waits_unlisted(),
        })
    }
}
