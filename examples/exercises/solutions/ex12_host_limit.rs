//! Exercise 12 ★★: a per-host concurrency limit for the crawler
//! (reference solution).
//!
//! One semaphore per host, made on first use and forgotten when its last
//! permit comes back with nobody waiting, so that a crawl of a million
//! hosts does not keep a million semaphores.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use url::Url;

use crate::ex11_semaphore::{Permit, Semaphore};

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
    /// Hosts with a permit out or a task waiting.
    hosts: HashMap<String, Host>,
    /// The most permits each host ever had out at once.
    peaks: BTreeMap<String, usize>,
}

struct Host {
    semaphore: Semaphore,
    active: usize,
}

/// The right to send one request to one host; dropping it gives it back.
pub struct HostPermit {
    key: String,
    limiter: HostLimiter,
    /// Dropped before the bookkeeping in `Drop`, so the semaphore has the
    /// permit back when we look at it.
    permit: Option<Permit>,
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
        let key = host_key(url);
        let semaphore = {
            let mut state = self.state.borrow_mut();
            let host = state.hosts.entry(key.clone()).or_insert_with(|| Host {
                semaphore: Semaphore::new(self.per_host),
                active: 0,
            });
            host.semaphore.clone()
        };
        // Declared before the wait, so dropped after it if `acquire` is
        // cancelled: by then the semaphore has any permit back.
        let mut waiting = Waiting {
            limiter: self,
            key: &key,
            armed: true,
        };
        let permit = semaphore.acquire().await;
        waiting.armed = false;
        drop(waiting);
        let mut state = self.state.borrow_mut();
        // The entry is still there (a host with a waiter is never
        // forgotten), but `entry` costs nothing and needs no such argument.
        let host = state.hosts.entry(key.clone()).or_insert_with(|| Host {
            semaphore: semaphore.clone(),
            active: 0,
        });
        host.active += 1;
        let active = host.active;
        let peak = state.peaks.entry(key.clone()).or_default();
        *peak = (*peak).max(active);
        HostPermit {
            key,
            limiter: self.clone(),
            permit: Some(permit),
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
        self.state.borrow().hosts.len()
    }
}

impl HostLimiter {
    /// Forgets `key`'s host if nobody has or wants one of its permits.
    fn forget_if_idle(&self, key: &str) {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return;
        };
        let idle = state.hosts.get(key).is_some_and(|host| {
            host.active == 0
                && host.semaphore.waiting() == 0
                && host.semaphore.available() == self.per_host
        });
        if idle {
            state.hosts.remove(key);
        }
    }
}

/// An `acquire` that is waiting. Dropped while armed (the acquire was
/// cancelled), it checks whether the host went idle: a waiter handed a
/// permit and cancelled before it took it gives the permit back, and no
/// `HostPermit` is left to notice.
struct Waiting<'a> {
    limiter: &'a HostLimiter,
    key: &'a str,
    armed: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.limiter.forget_if_idle(self.key);
        }
    }
}

impl Drop for HostPermit {
    fn drop(&mut self) {
        // Give the permit back first (this may wake a waiter), then forget
        // the host if nobody has or wants one.
        drop(self.permit.take());
        if let Ok(mut state) = self.limiter.state.try_borrow_mut()
            && let Some(host) = state.hosts.get_mut(&self.key)
        {
            host.active -= 1;
        }
        self.limiter.forget_if_idle(&self.key);
    }
}
