//! Per-host limits: how many requests one host gets at once, how far apart
//! they start, and the robots.txt verdicts that come with them.
//!
//! The chapter's crawler has one FIFO queue and `max_tasks` workers; pointed
//! at one site, that is a hundred requests at once to one server. A polite
//! crawler caps each host at `--per-host` requests and spaces their starts
//! by `--delay` (or the site's Crawl-delay). The obvious way, a semaphore
//! per host that a worker acquires after `get`, head-of-line blocks: a
//! worker holding a URL of a busy host waits, and so does every URL of an
//! idle host behind it, until all the workers wait on the one busy host.
//!
//! So a worker never waits on a host. When its URL's host is busy it
//! *parks* the URL with the host and goes back to the queue for another.
//! A parked URL stays unfinished in the joinable queue (its `task_done` is
//! deferred), so `join` cannot mistake a crawl with parked URLs for a
//! finished one. A parked URL leaves its host's line in one of two ways:
//! the worker whose fetch of that host just ended takes it on the spot, or,
//! when only the delay holds it back, a timer puts it back on the queue
//! when the delay is over.
//!
//! With a delay, a host gets one request at a time, and the delay runs
//! from the end of one request to the start of the next, so that what the
//! server sees between two request starts is never less.
//!
//! robots.txt is per origin (scheme, host and port): the first worker to
//! meet an origin fetches its robots.txt, and URLs of that origin that
//! arrive meanwhile park until the verdict is in.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant};

use runtime::{JoinHandle, Queue, TaskBuilder};
use url::Url;

use crate::polite::robots::Robots;
pub use crate::polite::robots::RobotsOutcome;
use crate::polite::slow_down::{self, Decision, Jitter, Wait};
use crate::seams::Work;
use crate::skipped::SkipReason;
use crate::stats::Exception;

pub use crate::config::PoliteConfig;

/// A host as the per-host limits count it: name (or address) and port.
/// `http://h/` and `https://h/` on one port are one server.
pub type HostKey = (Box<str>, u16);

/// The host key of `url`; `None` for a URL without a host.
pub fn host_key(url: &Url) -> Option<HostKey> {
    Some((url.host_str()?.into(), url.port_or_known_default()?))
}

/// An origin as robots.txt covers it: `https://h:8443`.
fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// How one origin's robots.txt stands.
enum RobotsState {
    /// Being fetched; these URLs wait for the verdict.
    Fetching(Vec<Work>),
    /// The rules to obey.
    Known(Rc<Robots>),
    /// robots.txt could not be fetched at all: every URL of the origin
    /// fails with this, so the real error stays visible.
    Unreachable(Exception),
}

/// One host's line.
struct HostSlot {
    /// Requests started and not finished.
    active: usize,
    /// No request may start before this.
    next_start: Option<Instant>,
    /// The gap between starts: `--delay`, or the Crawl-delay if longer.
    delay: Duration,
    /// URLs waiting for this host, oldest first. Each is unfinished in the
    /// queue: its `task_done` comes when it has been fetched.
    parked: VecDeque<Work>,
    /// The task that puts the first parked URL back on the queue when the
    /// delay is over.
    timer: Option<JoinHandle<()>>,
    /// Slow-downs without `Retry-After` in a row: each doubles the next
    /// backoff; any other answer resets it.
    streak: u32,
}

/// What a worker does with the URL it took from the queue.
#[derive(Debug)]
pub enum Turn {
    /// Fetch it now: a slot of its host is taken; call
    /// [`Politeness::finish`] after.
    Fetch(Work),
    /// Fetch robots.txt for this origin first (the worker has become its
    /// fetcher), then call [`Politeness::robots_known`] or
    /// [`Politeness::robots_unreachable`], and admit the URL again.
    FetchRobots(Work, Url),
    /// Parked: leave it, and do not call `task_done` for it.
    Parked,
    /// Not to be fetched: robots.txt disallows it.
    Skip(Work, SkipReason),
    /// Its origin's robots.txt was unreachable: fail it with that error.
    Fail(Work, Exception),
}

/// What became of a URL whose server asked us to slow down.
#[derive(Debug)]
pub enum Slowed {
    /// It waits with its host, unfinished, and is asked again after this
    /// long.
    Waiting(Duration),
    /// It has waited enough: record it as it came.
    Record(Work),
    /// The server asked for a longer wait than we give: it fails so.
    Fail(Work, Exception),
}

/// The robots.txt gate lets a URL on to its host, or decides for it.
enum Gate {
    Pass(Work),
    Stop(Turn),
}

/// The per-host state of a crawl. It shares the crawl's queue, to put
/// parked URLs back on it.
pub struct Politeness {
    config: PoliteConfig,
    queue: Queue<Work>,
    state: Rc<RefCell<State>>,
}

#[derive(Default)]
struct State {
    hosts: HashMap<HostKey, HostSlot>,
    robots: HashMap<String, RobotsState>,
    outcomes: Vec<RobotsOutcome>,
    /// How many times each URL waiting or done waiting has waited.
    waited: HashMap<String, u32>,
    /// The waits so far, for the report: the first ten thousand, and how
    /// many more.
    waits: Vec<Wait>,
    waits_unlisted: u64,
    jitter: Option<Jitter>,
}

impl Politeness {
    /// The per-host state for a crawl whose queue is `queue`.
    pub fn new(config: PoliteConfig, queue: Queue<Work>) -> Politeness {
        Politeness {
            config,
            queue,
            state: Rc::new(RefCell::new(State::default())),
        }
    }

    /// What robots.txt already says about `url`, if its origin's file is
    /// known: `Some(SkipReason::Robots)` if it is disallowed. Used when a link is seen,
    /// so that a disallowed URL is never queued.
    pub fn robots_refusal(&self, url: &Url) -> Option<SkipReason> {
        if !self.config.robots {
            return None;
        }
        match self.state.borrow().robots.get(&origin_key(url)) {
            Some(RobotsState::Known(robots)) if !robots.is_allowed(url) => Some(SkipReason::Robots),
            _ => None,
        }
    }

    // ANCHOR: admit
    /// Decides what happens to a URL a worker took from the queue.
    pub fn admit(&self, work: Work) -> Turn {
        if !self.config.robots {
            return self.host_gate(work);
        }
        match self.robots_gate(work) {
            Gate::Pass(work) => self.host_gate(work),
            Gate::Stop(admission) => admission,
        }
    }

    /// robots.txt first: unknown origin, fetch it; being fetched, wait.
    fn robots_gate(&self, work: Work) -> Gate {
        let mut state = self.state.borrow_mut();
        let origin = origin_key(&work.url);
        match state.robots.get_mut(&origin) {
            None => {
                state
                    .robots
                    .insert(origin, RobotsState::Fetching(Vec::new()));
                let mut robots_url = work.url.clone();
                robots_url.set_path("/robots.txt");
                robots_url.set_query(None);
                Gate::Stop(Turn::FetchRobots(work, robots_url))
            }
            Some(RobotsState::Fetching(waiting)) => {
                waiting.push(work);
                Gate::Stop(Turn::Parked)
            }
            Some(RobotsState::Known(robots)) if !robots.is_allowed(&work.url) => {
                Gate::Stop(Turn::Skip(work, SkipReason::Robots))
            }
            Some(RobotsState::Known(_)) => Gate::Pass(work),
            Some(RobotsState::Unreachable(e)) => Gate::Stop(Turn::Fail(work, e.clone())),
        }
    }

    /// Then the host's slots and its delay. A host's URLs start in the
    /// order they arrived: if some are parked, the oldest goes, and this
    /// one joins the end of the line.
    fn host_gate(&self, work: Work) -> Turn {
        let Some(key) = host_key(&work.url) else {
            // No host: the client will refuse it with a clear error.
            return Turn::Fetch(work);
        };
        let now = runtime::now();
        let mut state = self.state.borrow_mut();
        let slot = state
            .hosts
            .entry(key.clone())
            .or_insert_with(|| HostSlot::new(self.config.delay));
        if slot.active >= slot.capacity(self.config.per_host) || slot.waiting_for_delay(now) {
            slot.parked.push_back(work);
            self.arm_timer(&key, slot, now);
            return Turn::Parked;
        }
        let work = match slot.parked.pop_front() {
            Some(oldest) => {
                slot.parked.push_back(work);
                oldest
            }
            None => work,
        };
        slot.start(now);
        // The line behind it now waits for the delay: wake it when that is over.
        if !slot.parked.is_empty() {
            self.arm_timer(&key, slot, now);
        }
        Turn::Fetch(work)
    }
    // ANCHOR_END: admit

    /// A fetch of `url` has ended: its slot is free. Returns the next
    /// parked URL of that host if it may start now; the worker fetches it
    /// at once, without a trip through the queue.
    pub fn finish(&self, url: &Url) -> Option<Work> {
        let key = host_key(url)?;
        let now = runtime::now();
        let mut state = self.state.borrow_mut();
        let slot = state.hosts.get_mut(&key)?;
        slot.active = slot.active.saturating_sub(1);
        slot.ended(now);
        if slot.parked.is_empty() {
            return None;
        }
        if slot.waiting_for_delay(now) {
            self.arm_timer(&key, slot, now);
            return None;
        }
        let next = slot.parked.pop_front()?;
        slot.start(now);
        Some(next)
    }

    /// When only the delay holds a host's line back (a slot is free), a
    /// timer puts its oldest parked URL back on the queue when the delay is
    /// over. One timer per host at most. The URL is put before its earlier
    /// `task_done`, so the queue's count of unfinished work never dips to
    /// zero on the way.
    fn arm_timer(&self, key: &HostKey, slot: &mut HostSlot, now: Instant) {
        let armed = slot.timer.as_ref().is_some_and(|t| !t.is_finished());
        if armed || slot.active >= slot.capacity(self.config.per_host) {
            return;
        }
        let Some(at) = slot.next_start.filter(|&at| at > now) else {
            return;
        };
        let (state, queue, key) = (Rc::clone(&self.state), self.queue.clone(), key.clone());
        let name = format!("delay {}:{}", key.0, key.1);
        slot.timer = Some(TaskBuilder::new().name(name).spawn(async move {
            runtime::sleep_until(at).await;
            let work = state
                .borrow_mut()
                .hosts
                .get_mut(&key)
                .and_then(|slot| slot.parked.pop_front());
            if let Some(work) = work {
                queue.put_nowait(work);
                // The put above is the URL's new place in the queue; this
                // ends its old one.
                let _ = queue.task_done();
            }
        }));
    }

    /// The worker that fetched `origin`'s robots.txt reports the rules. The
    /// URLs that waited go back on the queue (or are skipped, if the rules
    /// refuse them, by the worker that takes them). A Crawl-delay, cut to
    /// `--max-crawl-delay`, becomes the host's delay if it is longer than
    /// `--delay`, counted from now: the robots.txt request was a request.
    pub fn robots_known(&self, url: &Url, robots: Robots, mut outcome: RobotsOutcome) {
        let asked = robots.crawl_delay();
        let delay = asked.map(|d| d.min(self.config.max_crawl_delay));
        outcome.crawl_delay = asked;
        outcome.capped = asked.is_some_and(|d| d > self.config.max_crawl_delay);
        outcome.rules = robots.rule_count();
        if let (Some(delay), Some(key)) = (delay, host_key(url)) {
            let mut state = self.state.borrow_mut();
            let slot = state
                .hosts
                .entry(key.clone())
                .or_insert_with(|| HostSlot::new(self.config.delay));
            slot.delay = slot.delay.max(delay);
            let now = runtime::now();
            // Not sooner than a wait the host asked for (a 429 on its
            // other origin).
            let at = runtime::saturating_add(now, slot.delay);
            slot.next_start = Some(slot.next_start.map_or(at, |t| t.max(at)));
            // URLs of the host's other origin (http beside https) may be
            // parked already: they now wait for the delay, so wake them then.
            if !slot.parked.is_empty() {
                self.arm_timer(&key, slot, now);
            }
        }
        self.settle(url, RobotsState::Known(Rc::new(robots)), outcome);
    }

    /// A crawl resumed (`--state`) that had fetched `url`: its host waits
    /// its `--delay` before the next request, as if a request had just
    /// ended (the crawl cannot know how long ago the last one did).
    pub fn wait_before_next(&self, url: &Url) {
        let Some(key) = host_key(url) else { return };
        let mut state = self.state.borrow_mut();
        let slot = state
            .hosts
            .entry(key)
            .or_insert_with(|| HostSlot::new(self.config.delay));
        if slot.next_start.is_none() {
            slot.ended(runtime::now());
        }
    }

    /// robots.txt could not be fetched at all (DNS, refused, TLS, timeout):
    /// the origin's URLs fail with that error.
    pub fn robots_unreachable(&self, url: &Url, error: Exception, outcome: RobotsOutcome) {
        self.settle(url, RobotsState::Unreachable(error), outcome);
    }

    fn settle(&self, url: &Url, verdict: RobotsState, outcome: RobotsOutcome) {
        let waiting = {
            let mut state = self.state.borrow_mut();
            state.outcomes.push(outcome);
            match state.robots.insert(origin_key(url), verdict) {
                Some(RobotsState::Fetching(waiting)) => waiting,
                _ => Vec::new(),
            }
        };
        for work in waiting {
            self.queue.put_nowait(work);
            let _ = self.queue.task_done();
        }
    }

    /// The delay between two requests to `url`'s host, once its rules are
    /// known: `--delay`, or a longer Crawl-delay. `None` while its
    /// robots.txt is not known (a shared crawl tells the other processes
    /// only what it knows).
    pub fn host_delay(&self, url: &Url) -> Option<Duration> {
        let state = self.state.borrow();
        if self.config.robots
            && !matches!(
                state.robots.get(&origin_key(url)),
                Some(RobotsState::Known(_) | RobotsState::Unreachable(_))
            )
        {
            return None;
        }
        let slot = host_key(url).and_then(|key| state.hosts.get(&key));
        Some(slot.map_or(self.config.delay, |slot| slot.delay))
    }

    // ANCHOR: slowed
    /// The server answered `work`'s URL with `status` (429 or 503) and
    /// `retry_after`: the URL waits with its host, first in its line, and
    /// the host starts nothing before the wait is over (its other hosts'
    /// lines go on); or the URL is done.
    pub fn slowed(&self, work: Work, status: u16, retry_after: Option<Duration>) -> Slowed {
        let Some(key) = host_key(&work.url) else {
            return Slowed::Record(work);
        };
        let mut state = self.state.borrow_mut();
        let url = work.url.to_string();
        let waited = state.waited.get(&url).copied().unwrap_or(0);
        let streak = state.hosts.get(&key).map_or(0, |slot| slot.streak);
        let jitter = state.jitter.get_or_insert_with(Jitter::new).next();
        let cap = self.config.max_crawl_delay;
        let (wait, why) = match slow_down::decide(status, retry_after, waited, streak, cap, jitter)
        {
            Decision::Record => {
                state.waited.remove(&url);
                return Slowed::Record(work);
            }
            Decision::Fail(message) => {
                state.waited.remove(&url);
                let kind = "slow_down";
                return Slowed::Fail(work, Exception { kind, message });
            }
            Decision::Wait(wait, why) => (wait, why),
        };
        state.waited.insert(url.clone(), waited + 1);
        let until = runtime::saturating_add(runtime::now(), wait);
        let slot = state
            .hosts
            .entry(key.clone())
            .or_insert_with(|| HostSlot::new(self.config.delay));
        if retry_after.is_none() {
            slot.streak += 1;
        }
        slot.next_start = Some(slot.next_start.map_or(until, |at| at.max(until)));
        slot.parked.push_front(work);
        if state.waits.len() < slow_down::MAX_LISTED_WAITS {
            state.waits.push(Wait {
                host: format!("{}:{}", key.0, key.1),
                url,
                why,
                wait,
            });
        } else {
            state.waits_unlisted += 1;
        }
        Slowed::Waiting(wait)
    }
    // ANCHOR_END: slowed

    /// `url`'s host answered it with anything but a slow-down: the host's
    /// backoff starts again from the beginning.
    pub fn answered(&self, url: &Url) {
        let mut state = self.state.borrow_mut();
        if !state.waited.is_empty() {
            state.waited.remove(url.as_str());
        }
        if let Some(slot) = host_key(url).and_then(|key| state.hosts.get_mut(&key)) {
            slot.streak = 0;
        }
    }

    /// The waits so far, in order (the first ten thousand), and how many
    /// more there were.
    pub fn waits(&self) -> (Vec<Wait>, u64) {
        let state = self.state.borrow();
        (state.waits.clone(), state.waits_unlisted)
    }

    /// The robots.txt outcomes so far, one per origin, in the order they
    /// were settled.
    pub fn robots_outcomes(&self) -> Vec<RobotsOutcome> {
        self.state.borrow().outcomes.clone()
    }

    /// Every URL parked with a host or waiting for a robots.txt, taken out:
    /// what an interrupt leaves unfinished. Stops the timers.
    pub fn drain(&self) -> Vec<Work> {
        let mut state = self.state.borrow_mut();
        let mut drained = Vec::new();
        for slot in state.hosts.values_mut() {
            if let Some(timer) = slot.timer.take() {
                timer.cancel();
            }
            drained.extend(slot.parked.drain(..));
        }
        for robots in state.robots.values_mut() {
            if let RobotsState::Fetching(waiting) = robots {
                drained.append(waiting);
            }
        }
        drained
    }
}

impl HostSlot {
    fn new(delay: Duration) -> HostSlot {
        HostSlot {
            active: 0,
            next_start: None,
            delay,
            parked: VecDeque::new(),
            timer: None,
            streak: 0,
        }
    }

    /// Requests at once: `--per-host`, but one at a time when the host
    /// has a delay. A delay counted between the starts of overlapping
    /// requests is not what the server sees (one may spend longer
    /// connecting than the next), so with a delay each request waits for
    /// the one before to end, and then for the delay: the server never
    /// sees two requests start closer together than that.
    fn capacity(&self, per_host: usize) -> usize {
        if self.delay.is_zero() { per_host } else { 1 }
    }

    /// A request ended now: with a delay, the next may start that long
    /// after (or later, if the host asked us to wait longer).
    fn ended(&mut self, now: Instant) {
        if !self.delay.is_zero() {
            let at = runtime::saturating_add(now, self.delay);
            self.next_start = Some(self.next_start.map_or(at, |t| t.max(at)));
        }
    }

    /// Whether the delay since the last start is still running.
    fn waiting_for_delay(&self, now: Instant) -> bool {
        self.next_start.is_some_and(|at| now < at)
    }

    /// A request starts now.
    fn start(&mut self, now: Instant) {
        self.active += 1;
        if !self.delay.is_zero() {
            self.next_start = Some(runtime::saturating_add(now, self.delay));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seams::Tag;

    fn work(url: &str) -> Work {
        Work {
            url: Url::parse(url).unwrap(),
            max_redirect: 10,
            from: None,
            tag: Tag::default(),
        }
    }

    #[test]
    fn the_report_lists_ten_thousand_waits_and_counts_the_rest() {
        let polite = Politeness::new(PoliteConfig::default(), Queue::new());
        let no_wait = Some(Duration::ZERO);
        for i in 0..slow_down::MAX_LISTED_WAITS + 5 {
            let url = format!("http://h{i}.test/");
            assert!(matches!(
                polite.slowed(work(&url), 429, no_wait),
                Slowed::Waiting(_)
            ));
        }
        let (listed, more) = polite.waits();
        assert_eq!((listed.len(), more), (slow_down::MAX_LISTED_WAITS, 5));
        // A URL waits three times, and its fourth slow-down is its result.
        let url = "http://one.test/";
        for _ in 0..slow_down::MAX_WAITS {
            assert!(matches!(
                polite.slowed(work(url), 503, no_wait),
                Slowed::Waiting(_)
            ));
        }
        assert!(matches!(
            polite.slowed(work(url), 503, no_wait),
            Slowed::Record(_)
        ));
        // Its count starts again: it was done.
        assert!(matches!(
            polite.slowed(work(url), 503, no_wait),
            Slowed::Waiting(_)
        ));
    }

    #[test]
    fn a_crawl_delay_learned_later_never_shortens_a_wait_asked_for() {
        let config = PoliteConfig {
            robots: true,
            ..PoliteConfig::default()
        };
        let polite = Politeness::new(config, Queue::new());
        let url = "https://h.test/page";
        let asked = Some(Duration::from_secs(20));
        assert!(matches!(
            polite.slowed(work(url), 429, asked),
            Slowed::Waiting(_)
        ));
        let key = host_key(&Url::parse(url).unwrap()).unwrap();
        let until = polite.state.borrow().hosts[&key].next_start.unwrap();
        // The robots.txt of the host's other origin asks for one second.
        let robots = Robots::parse(b"User-agent: *\nCrawl-delay: 1\n", "stage3-crawler");
        let outcome = RobotsOutcome {
            origin: "http://h.test".into(),
            status: Some(200),
            verdict: "1 rules".into(),
            rules: 0,
            crawl_delay: None,
            capped: false,
        };
        let other = Url::parse("http://h.test/robots.txt").unwrap();
        polite.robots_known(&other, robots, outcome);
        assert_eq!(polite.state.borrow().hosts[&key].next_start, Some(until));
    }
}
