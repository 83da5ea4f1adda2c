//! The real web's answer to the lesson's question "may a URL be followed"
//! ([`Rules`]): the chapter's host rules and `--exclude`, and the rules
//! that the demo site never needed: crawler traps ([`crate::polite::traps`]) and
//! robots.txt ([`crate::polite::politeness`]). Beside it, what the queue's
//! wrappers ask: when a URL may start (per-host limits and delays, and
//! robots.txt fetched first: the queue's `Turns`), and the sitemaps to
//! read and what each holds (its `SitemapReader`), which are work like a
//! page but no URL of the report.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::time::Duration;

use regex::Regex;
use runtime::{Queue, catch_unwind};
use url::Url;

use crate::config::Config;
use crate::http::{Cap, Client};
use crate::logging::CrawlLog;
use crate::polite::host::HostRules;
use crate::polite::politeness::{self, Politeness, RobotsOutcome, Slowed};
use crate::polite::robots::{Robots, RobotsSource, product_token};
use crate::polite::robots_fetch::{RobotsFetch, fetch_robots};
use crate::polite::sitemap::{Sitemap, SitemapKind, SitemapOutcome, parse_sitemap};
use crate::polite::slow_down::Wait;
use crate::polite::traps::Traps;
use crate::seams::{Pending, Rules, Tag, Work};
use crate::skipped::SkipReason;
use crate::stats::Exception;

/// Sitemaps read at most, however many indexes list.
const MAX_SITEMAPS: usize = 1_000;

/// URLs taken from sitemaps in one crawl at most (or `--max-pages`, if
/// lower): the sitemap budget. A sitemap may name 50,000 URLs and an index
/// 50,000 sitemaps; a crawl seeded with more than this many is not what
/// anyone asked for, and would hold them all in its queue and seen set.
/// Once it is spent, no more sitemaps are read, and a sitemap's URLs past
/// it are dropped, as those past the protocol's 50,000 are, and counted in
/// its outcome.
pub const SITEMAP_URL_BUDGET: usize = 200_000;

/// The rules of a crawl of the real web.
pub struct WebRules {
    hosts: HostRules,
    exclude: Option<Regex>,
    /// Guards against sites that make up URLs forever.
    traps: Traps,
    /// Per-host limits and robots.txt.
    polite: Politeness,
    /// Seed the crawl from sitemaps (`--sitemaps`).
    sitemaps: bool,
    /// Sitemaps queued, so that none is read twice.
    sitemaps_queued: RefCell<HashSet<String>>,
    /// With a shared frontier, the sitemaps found go there, not on the
    /// queue: `Some` of those not yet taken.
    sitemaps_found: RefCell<Option<Vec<Url>>>,
    /// What each sitemap read came to, for the report.
    sitemap_outcomes: RefCell<Vec<SitemapOutcome>>,
    /// URLs sitemaps may still hand the crawl (see [`SITEMAP_URL_BUDGET`]).
    sitemap_budget: Cell<usize>,
    /// Tries for robots.txt and sitemaps, as for pages.
    max_tries: u32,
    user_agent: String,
    /// Where sitemaps to read go: the crawl's queue, unless a wrapper of
    /// it says otherwise (see [`send_sitemaps_to`](Self::send_sitemaps_to)).
    sitemap_sink: RefCell<Box<dyn Fn(Work)>>,
    client: Rc<Client>,
    log: Rc<CrawlLog>,
    /// Who hears each robots.txt verdict (the journal, with `--state`).
    listeners: RefCell<Vec<RobotsListener>>,
    /// Who hears each wait a host asks for: in a shared crawl, the
    /// frontier, so that every process waits.
    pause_listener: RefCell<Option<PauseListener>>,
}

/// Someone who hears what each origin's robots.txt said, as it is read.
type RobotsListener = Box<dyn Fn(&RobotsOutcome, &RobotsSource)>;

/// Who hears each wait a host asks for.
type PauseListener = Box<dyn Fn(&Url, Duration)>;

impl WebRules {
    /// The rules `config` asks for, for a crawl of `roots` whose queue is
    /// `q`: robots.txt and sitemaps are fetched with `client`.
    pub fn new(
        config: &Config,
        roots: &[Url],
        q: &Queue<Work>,
        client: &Rc<Client>,
        log: &Rc<CrawlLog>,
    ) -> WebRules {
        WebRules {
            hosts: HostRules::new(roots, config.strict),
            exclude: config.exclude.clone(),
            traps: Traps::new(config.traps),
            polite: Politeness::new(config.polite.clone(), q.clone()),
            sitemaps: config.sitemaps,
            sitemaps_queued: RefCell::new(HashSet::new()),
            sitemaps_found: RefCell::new(None),
            sitemap_outcomes: RefCell::new(Vec::new()),
            sitemap_budget: Cell::new(
                config
                    .max_pages
                    .map_or(SITEMAP_URL_BUDGET, |max| max.min(SITEMAP_URL_BUDGET)),
            ),
            max_tries: config.max_tries,
            user_agent: config.client.user_agent.clone(),
            sitemap_sink: RefCell::new(Box::new({
                let q = q.clone();
                move |work| q.put_nowait(work)
            })),
            client: Rc::clone(client),
            log: Rc::clone(log),
            listeners: RefCell::new(Vec::new()),
            pause_listener: RefCell::new(None),
        }
    }

    /// Calls `f` with what each origin's robots.txt said, as it is read
    /// (the journal keeps it, to resume without asking again).
    pub fn on_robots(&self, f: impl Fn(&RobotsOutcome, &RobotsSource) + 'static) {
        self.listeners.borrow_mut().push(Box::new(f));
    }

    /// Sitemaps to read go to `sink` (`--max-depth` holds level 0 open for
    /// each) rather than straight on the queue.
    pub fn send_sitemaps_to(&self, sink: impl Fn(Work) + 'static) {
        *self.sitemap_sink.borrow_mut() = Box::new(sink);
    }

    /// A shared crawl: the sitemaps found are the frontier's to queue, so
    /// that each is read once in the whole crawl, by whichever process
    /// claims it (see [`Rules::take_found_sitemaps`]).
    pub fn hand_sitemaps_to_frontier(&self) {
        *self.sitemaps_found.borrow_mut() = Some(Vec::new());
    }

    /// With `--sitemaps`, the default place of each root's sitemap;
    /// robots.txt may name more (see `learn_robots`).
    pub fn queue_root_sitemaps(&self, roots: &[Url]) {
        if self.sitemaps {
            for root in roots {
                if let Ok(sitemap) = root.join("/sitemap.xml") {
                    self.queue_sitemap(sitemap);
                }
            }
        }
    }

    /// Fetches the robots.txt of `url`'s origin and hands the verdict to the
    /// per-host rules, which release the URLs that waited for it. It always
    /// settles, even if the fetch panics: those URLs must not wait forever.
    async fn learn_robots(&self, url: Url, robots_url: Url) {
        let token = product_token(&self.user_agent);
        let fetch = fetch_robots(&self.client, robots_url, token, self.max_tries, &self.log);
        match catch_unwind(fetch).await {
            Ok(RobotsFetch::Known(robots, outcome, source)) => {
                for listener in self.listeners.borrow().iter() {
                    listener(&outcome, &source);
                }
                // The report lists every origin's verdict; the log need
                // not, unless asked (-v).
                self.log.debug(format_args!(
                    "robots.txt of {}: {}",
                    outcome.origin, outcome.verdict
                ));
                self.queue_robots_sitemaps(&url, &robots, &outcome.origin);
                self.polite.robots_known(&url, robots, outcome)
            }
            Ok(RobotsFetch::Unreachable(error, outcome)) => {
                self.log.warn(format_args!(
                    "robots.txt of {}: {}",
                    outcome.origin, outcome.verdict
                ));
                self.polite.robots_unreachable(&url, error, outcome)
            }
            Err(panic) => {
                self.log.error(format_args!(
                    "fetching robots.txt for {url} panicked: {panic}"
                ));
                let error = Exception {
                    kind: "internal",
                    message: format!("internal error: {panic}"),
                };
                let outcome = RobotsOutcome {
                    origin: url.origin().ascii_serialization(),
                    status: None,
                    verdict: format!("unreachable: {}", error.message),
                    rules: 0,
                    crawl_delay: None,
                    capped: false,
                };
                self.polite.robots_unreachable(&url, error, outcome)
            }
        }
    }

    /// What an origin's robots.txt said in an earlier run (`--state`),
    /// without asking again.
    pub fn robots_known(&self, outcome: RobotsOutcome, source: RobotsSource) {
        let Ok(origin) = Url::parse(&outcome.origin) else {
            return;
        };
        let robots = source.rules(product_token(&self.user_agent));
        self.queue_robots_sitemaps(&origin, &robots, &outcome.origin);
        self.polite.robots_known(&origin, robots, outcome);
    }

    /// A host fetched from in an earlier run waits its delay before the
    /// first request of this one, as if the last one had just ended.
    pub fn wait_before_next(&self, url: &Url) {
        self.polite.wait_before_next(url);
    }

    /// A URL queued in an earlier run: the trap guards count it, done or
    /// not.
    pub fn counted(&self, url: &Url) {
        self.traps.admit(url);
    }

    /// With `--sitemaps`, queues the sitemaps a robots.txt names.
    fn queue_robots_sitemaps(&self, url: &Url, robots: &Robots, origin: &str) {
        if !self.sitemaps {
            return;
        }
        for line in robots.sitemaps() {
            match url.join(line) {
                Ok(sitemap) => self.queue_sitemap(sitemap),
                Err(e) => self.log.warn(format_args!(
                    "robots.txt of {origin}: bad Sitemap {line:?}: {e}"
                )),
            }
        }
    }

    // ANCHOR: sitemaps
    /// Queues a sitemap to read, once, if it is on the crawl's hosts. It
    /// is work like a page (a host slot, robots.txt), but not a URL of the
    /// crawl: it is in no statistic and no skipped record.
    fn queue_sitemap(&self, url: Url) {
        if !self.hosts.host_okay(&url) {
            return self
                .log
                .info(format_args!("not reading sitemap {url}: another host"));
        }
        let mut queued = self.sitemaps_queued.borrow_mut();
        if queued.len() >= MAX_SITEMAPS || !queued.insert(url.to_string()) {
            return;
        }
        if let Some(found) = self.sitemaps_found.borrow_mut().as_mut() {
            return found.push(url);
        }
        // Read in level 0: its URLs are depth 1.
        (self.sitemap_sink.borrow())(Work {
            url,
            max_redirect: 0,
            from: None,
            tag: Tag {
                sitemap: true,
                ..Tag::root()
            },
        });
    }

    /// Reads one sitemap: an index queues the sitemaps it lists; a list of
    /// pages is handed back, for the crawler to see each as a link at
    /// depth 1 from the sitemap, so that every rule (hosts, robots.txt,
    /// depth) applies.
    pub async fn read(&self, url: &Url) -> Vec<Url> {
        let mut pages = Vec::new();
        if self.sitemap_budget.get() == 0 {
            // Not fetched at all: the crawl has all the URLs it will take.
            let outcome = "not read: the sitemap budget is spent".to_string();
            self.sitemap_outcomes.borrow_mut().push(SitemapOutcome {
                url: url.to_string(),
                outcome,
            });
            return pages;
        }
        let outcome = match self
            .client
            .get_retrying(url, self.max_tries, Cap::Fail)
            .await
        {
            Err(e) => format!("failed: {e}"),
            Ok(response) if response.status != 200 => format!("{}: not read", response.status),
            Ok(response) => match parse_sitemap(&response.body, url) {
                Err(e) => e.to_string(),
                Ok(sitemap) => self.follow_sitemap(sitemap, &mut pages),
            },
        };
        self.log.debug(format_args!("sitemap {url}: {outcome}"));
        self.sitemap_outcomes.borrow_mut().push(SitemapOutcome {
            url: url.to_string(),
            outcome,
        });
        pages
    }

    fn follow_sitemap(&self, sitemap: Sitemap, pages: &mut Vec<Url>) -> String {
        let count = sitemap.locs.len();
        let mut outcome = match sitemap.kind {
            SitemapKind::Index => {
                for child in sitemap.locs {
                    self.queue_sitemap(child);
                }
                format!("an index of {count} sitemaps")
            }
            SitemapKind::UrlSet => {
                let budget = self.sitemap_budget.get();
                *pages = sitemap.locs;
                let over = pages.len().saturating_sub(budget);
                pages.truncate(budget);
                self.sitemap_budget.set(budget - pages.len());
                if over > 0 {
                    format!("{count} URLs, {over} past the sitemap budget dropped")
                } else {
                    format!("{count} URLs")
                }
            }
        };
        if sitemap.dropped > 0 {
            outcome.push_str(&format!(", {} past the limit dropped", sitemap.dropped));
        }
        if sitemap.invalid > 0 {
            outcome.push_str(&format!(", {} invalid", sitemap.invalid));
        }
        outcome
    }
    // ANCHOR_END: sitemaps
}

impl Rules for WebRules {
    fn refusal_by_url(&self, url: &Url) -> Option<SkipReason> {
        if let Some(exclude) = &self.exclude
            && exclude.is_match(url.as_str())
        {
            return Some(SkipReason::Excluded);
        }
        if !matches!(url.scheme(), "http" | "https") {
            return Some(SkipReason::Scheme);
        }
        if !self.hosts.host_okay(url) {
            return Some(SkipReason::OffHost);
        }
        self.traps.check_shape(url)
    }

    fn refusal(&self, url: &Url) -> Option<SkipReason> {
        self.refusal_by_url(url)
            .or_else(|| self.traps.check_variants(url))
    }

    fn refusal_known(&self, url: &Url) -> Option<SkipReason> {
        self.polite.robots_refusal(url)
    }

    fn queued(&self, url: &Url) {
        self.traps.admit(url);
    }

    fn host_delay(&self, url: &Url) -> Option<Duration> {
        self.polite.host_delay(url)
    }
}

/// What a worker does with a URL it took from the queue.
pub enum Admission<'a> {
    /// Fetch it now (its host's slot is taken: call [`WebRules::finish`]
    /// after).
    Fetch(Work),
    /// Wait for this (robots.txt of its origin, fetched by this worker),
    /// then ask again.
    After(Work, Pending<'a, ()>),
    /// The rules keep it, and put it back on the queue or hand it over
    /// through [`WebRules::finish`]: its `task_done` comes then.
    Parked,
    /// Not to be fetched, for this reason.
    Skip(Work, SkipReason),
    /// Failed without a request (its robots.txt was unreachable).
    Fail(Work, Exception),
    /// The crawler's own business (a sitemap robots.txt disallows): done,
    /// and in no record.
    Dropped(Work),
}

/// When a URL may start, for the queue's `Turns`.
impl WebRules {
    /// What a worker does with `work`, taken from the queue.
    pub fn admit(&self, work: Work) -> Admission<'_> {
        match self.polite.admit(work) {
            politeness::Turn::Fetch(work) => Admission::Fetch(work),
            politeness::Turn::Parked => Admission::Parked,
            politeness::Turn::FetchRobots(work, robots_url) => {
                let learn = self.learn_robots(work.url.clone(), robots_url);
                Admission::After(work, Box::pin(learn))
            }
            politeness::Turn::Skip(work, _) | politeness::Turn::Fail(work, _)
                if work.tag.sitemap =>
            {
                self.log
                    .info(format_args!("not reading sitemap {}: robots.txt", work.url));
                Admission::Dropped(work)
            }
            politeness::Turn::Skip(work, reason) => Admission::Skip(work, reason),
            politeness::Turn::Fail(work, exception) => Admission::Fail(work, exception),
        }
    }

    /// The fetch of `url` ended: the URL its host may start next, if any.
    pub fn finish(&self, url: &Url) -> Option<Work> {
        self.polite.finish(url)
    }

    /// The crawl is over: the URLs waiting their host's turn, unfinished.
    /// After `join`, none is; either way, this stops the timers.
    pub fn drain(&self) -> Vec<Work> {
        self.polite.drain()
    }

    /// What each origin's robots.txt came to, for the report.
    pub fn robots_outcomes(&self) -> Vec<RobotsOutcome> {
        self.polite.robots_outcomes()
    }

    /// The server answered `work` with `status`, a slow-down: what the
    /// client heard of `Retry-After`, and the host's line, decide. A wait
    /// is told to whoever listens (a shared crawl's frontier).
    pub fn slowed(&self, work: Work, status: u16) -> Slowed {
        let retry_after = self.client.take_slow_down(&work.url).flatten();
        let url = self
            .pause_listener
            .borrow()
            .is_some()
            .then(|| work.url.clone());
        let slowed = self.polite.slowed(work, status, retry_after);
        if let (Slowed::Waiting(wait), Some(url), Some(listener)) =
            (&slowed, url, self.pause_listener.borrow().as_ref())
        {
            listener(&url, *wait);
        }
        slowed
    }

    /// Tells `f` each wait a host asks for, with the URL that was answered
    /// so: a shared crawl's frontier keeps it, for every process.
    pub fn on_pause(&self, f: impl Fn(&Url, Duration) + 'static) {
        *self.pause_listener.borrow_mut() = Some(Box::new(f));
    }

    /// `url`'s host answered it with anything but a slow-down.
    pub fn answered(&self, url: &Url) {
        self.client.take_slow_down(url);
        self.polite.answered(url);
    }

    /// The waits hosts asked for, for the report: the first ten
    /// thousand, and how many more.
    pub fn waits(&self) -> (Vec<Wait>, u64) {
        self.polite.waits()
    }

    /// Sitemaps found since the last call, for a shared frontier to queue
    /// (`--sitemaps` with `--frontier`).
    pub fn take_found_sitemaps(&self) -> Vec<Url> {
        self.sitemaps_found
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// What each sitemap read came to, for the report.
    pub fn sitemap_outcomes(&self) -> Vec<SitemapOutcome> {
        self.sitemap_outcomes.borrow().clone()
    }
}
