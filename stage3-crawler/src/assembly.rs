//! The crawler assembled: the lesson's [`Crawler`] with the real web's
//! features plugged into its seams, as the settings ([`Config`]) ask. The
//! lesson never names a feature; this module names them all:
//!
//! | seam | plugged in here |
//! |---|---|
//! | `Rules` | [`WebRules`]: hosts, `--exclude`, traps, depth, robots.txt, per-host limits, sitemaps |
//! | `Frontier` | [`Shared`], with `--frontier` |
//! | `Observer` | the [`Journal`], with `--state` |
//! | `http::HearExchanges` | the WARC archive, with `--warc` |

use std::collections::HashSet;
use std::io;
use std::rc::Rc;

use runtime::Queue;
use url::Url;

use crate::config::Config;
use crate::crawling::{Crawler, Parts};
use crate::http::{Client, HearExchanges};
use crate::journal::{Journal, Replayed};
use crate::logging::CrawlLog;
use crate::records::Records;
use crate::reporting::{Crawl, Reported};
use crate::rules::WebRules;
use crate::seams::{Crawl as _, Frontier, Observer, Outcome, Rules, Work};
use crate::shared::Shared;
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
}

impl Crawler {
    /// A crawler with `roots` already queued. Fragments are dropped from the
    /// roots; their hosts (and non-default ports) define the site.
    pub fn new(roots: Vec<Url>, config: Config) -> io::Result<Crawler> {
        build(roots, config, Plugins::default()).map(|(crawler, _)| crawler)
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
    let rules = Rc::new(WebRules::new(
        &config,
        &roots,
        &q,
        &client,
        &log,
        journal.clone(),
    ));
    let observers: Vec<Rc<dyn Observer>> = journal
        .iter()
        .map(|j| Rc::clone(j) as Rc<dyn Observer>)
        .collect();
    let shared = plugins.shared.is_some();
    let records = Records::new(&roots, config.keep_records, observers);
    let crawler = Crawler::assemble(
        roots.clone(),
        config,
        Parts {
            q,
            rules: Rc::clone(&rules) as Rc<dyn Rules>,
            frontier: plugins.shared.map(|s| Rc::new(s) as Rc<dyn Frontier>),
            records,
            client,
            log,
        },
    )?;
    let replayed = replayed.filter(|r| !r.is_empty());
    let resume = if shared {
        // The frontier queued the roots when the crawl was created.
        None
    } else if let Some(replayed) = replayed {
        Some(Resume {
            rules: Rc::clone(&rules),
            replayed,
        })
    } else {
        crawler.queue_roots();
        None
    };
    if shared {
        // Read once in the whole crawl, not once in each process.
        rules.hand_sitemaps_to_frontier();
    }
    rules.queue_root_sitemaps(&roots);
    crawler.records().settled();
    Ok((crawler, resume))
}

/// A crawl to take up from its journal (`--state`).
pub struct Resume {
    rules: Rc<WebRules>,
    replayed: Replayed,
}

impl Resume {
    // ANCHOR: resume
    /// Takes up a crawl from its journal: its statistics and skipped URLs
    /// go into the report (and to the report's sinks) as if they had just
    /// happened; every URL it queued is seen; and those not done go back on
    /// the queue, in the order they were first queued. The fetches that
    /// were in flight when it stopped are among them.
    pub fn take_up(self, crawler: &Crawler) {
        let Resume { rules, replayed } = self;
        let records = crawler.records();
        let mut finished: HashSet<&str> = HashSet::new();
        for stat in &replayed.done {
            finished.insert(&stat.url);
            records.keep_statistic(stat.clone());
        }
        for skipped in &replayed.skipped {
            finished.insert(&skipped.url);
            records.keep_skip(skipped.clone());
        }
        for url in &finished {
            crawler.mark_seen(url);
        }
        let mut again = 0;
        for queued in &replayed.queued {
            let Ok(url) = Url::parse(&queued.url) else {
                continue; // it parsed when it was queued
            };
            // The trap guards count what was queued, done or not.
            rules.counted(&url);
            if !crawler.mark_seen(&queued.url) {
                continue; // done or skipped
            }
            // The journal is a file, and a file can be edited: the rules
            // hold for every URL the crawler fetches, whatever its source.
            // (A root is fetched whatever the host rules say, but it is
            // http or https.)
            let refused = match queued.from {
                Some(_) => crawler.refusal(&url),
                None => (!matches!(url.scheme(), "http" | "https")).then_some(SkipReason::Scheme),
            };
            if let Some(reason) = refused {
                records.record_skip(Skipped {
                    url: url.to_string(),
                    reason,
                    from: queued.from.clone(),
                });
                continue;
            }
            rules.requeued(&url, queued.depth);
            crawler.requeue(Work {
                url,
                max_redirect: queued.redirects,
                from: queued.from.as_deref().map(Rc::from),
                depth: queued.depth,
                sitemap: false,
                lease: None,
            });
            again += 1;
        }
        // With --max-depth: what was set aside as too deep, and has not
        // been queued (a shorter path) or skipped since, stays aside.
        if rules.limits_depth() {
            for aside in &replayed.aside {
                if crawler.mark_seen(aside.url.as_str()) {
                    let from = aside.from.as_deref().map(Rc::from);
                    rules.keep_aside(&aside.url, aside.depth, from.as_ref());
                }
            }
        }
        crawler.set_queued(replayed.queued.len());
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
        crawler.log().info(format_args!(
            "resuming: {} URLs done, {} skipped, {again} to fetch{}",
            replayed.done.len(),
            replayed.skipped.len(),
            if replayed.cut > 0 {
                format!(
                    " (the journal's last {} bytes, torn by a crash, were cut off)",
                    replayed.cut
                )
            } else {
                String::new()
            }
        ));
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
        })
    }
}
