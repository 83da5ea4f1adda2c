//! Exercise 12 ★★: a per-host concurrency limit for the crawler.
//!
//! Stage 3 runs `max_tasks` workers, 100 by default, and on a one-host crawl
//! all 100 can hit the same server at once. Polite crawlers allow a few
//! requests per host at a time, however many workers they run. Workers call
//! `HostLimiter::acquire(&url)` before each request and hold the permit
//! until the response is in.
//!
//! Right now `acquire` never waits. Make it wait while the URL's host has
//! `per_host` permits out, and forget a host once it has no permit out and
//! nobody waiting for one (or the limiter grows with every host the crawl
//! ever touched). This builds on exercise 11: a semaphore per host does the
//! waiting, so do 11 first.
//!
//! Read first: the book's "Coordinating Coroutines", `work` and `fetch` in
//! stage3-crawler/src/crawling.rs, and your src/ex11_semaphore.rs.
//! Check: `cargo run -p exercises -- check 12`. Stuck: `... -- hint 12`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use url::Url;

/// What requests are counted by: host and port.
pub fn host_key(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or_default()
    )
}

/// At most `per_host` permits per host at once. Cloning gives another
/// handle to the same limiter.
#[derive(Clone)]
pub struct HostLimiter {
    per_host: usize,
    state: Rc<RefCell<State>>,
}

#[derive(Default)]
struct State {
    /// Permits out, per host. TODO: and a way to wait for one.
    active: HashMap<String, usize>,
    /// The most permits each host ever had out at once.
    peaks: BTreeMap<String, usize>,
}

/// The right to send one request to one host; dropping it gives it back.
pub struct HostPermit {
    key: String,
    limiter: HostLimiter,
}

impl HostLimiter {
    pub fn new(per_host: usize) -> HostLimiter {
        HostLimiter {
            per_host: per_host.max(1),
            state: Rc::default(),
        }
    }

    /// Waits until `url`'s host has fewer than `per_host` permits out.
    pub async fn acquire(&self, url: &Url) -> HostPermit {
        // TODO: wait while the host has `self.per_host` permits out.
        let key = host_key(url);
        let mut state = self.state.borrow_mut();
        let active = state.active.entry(key.clone()).or_default();
        *active += 1;
        let active = *active;
        let peak = state.peaks.entry(key.clone()).or_default();
        *peak = (*peak).max(active);
        HostPermit {
            key,
            limiter: self.clone(),
        }
    }

    /// The limit.
    pub fn per_host(&self) -> usize {
        self.per_host
    }

    /// The most permits `key` (see [`host_key`]) ever had out at once.
    pub fn peak(&self, key: &str) -> usize {
        self.state.borrow().peaks.get(key).copied().unwrap_or(0)
    }

    /// Hosts the limiter keeps state for right now.
    pub fn hosts_tracked(&self) -> usize {
        self.state.borrow().active.len()
    }
}

impl Drop for HostPermit {
    fn drop(&mut self) {
        // TODO: let a waiter for this host go ahead; forget idle hosts.
        if let Some(active) = self.limiter.state.borrow_mut().active.get_mut(&self.key) {
            *active -= 1;
        }
    }
}
