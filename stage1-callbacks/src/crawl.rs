//! The crawl: one fetcher for the root, and the loop that runs until
//! `urls_todo` is empty. The state the fetchers share is in
//! [`crate::state`]; the chapter's `stopped = True` becomes
//! [`EventLoop::stop`].

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Instant;

use crawl_kit::report::{Outcome, Report};
use runtime::EventLoop;
use url::Url;

use crate::fetcher::Fetcher;
use crate::state::{Crawl, Options};

// ANCHOR: crawl
/// Crawls every page reachable from `root` on the same host and port, with a
/// [`Fetcher`] per URL and no limit on how many run at once, calling
/// `on_outcome` as each URL finishes. Fails only if the event loop does.
pub fn crawl(
    root: Url,
    options: Options,
    mut on_outcome: impl FnMut(&Outcome) + 'static,
) -> io::Result<Report> {
    let start = Instant::now();
    let mut event_loop = EventLoop::new()?;
    // Blocking, but only once, before the loop starts: every URL we follow
    // is on this host and port (see `links::same_host`).
    let addr = match resolve(&root) {
        Ok(addr) => addr,
        Err(reason) => {
            let outcome = Outcome::Failed(root, reason);
            on_outcome(&outcome);
            return Ok(Report {
                outcomes: vec![outcome],
                seen_urls: 1,
                concurrency: 1,
                elapsed: start.elapsed(),
            });
        }
    };
    let crawl = Rc::new(RefCell::new(Crawl::new(addr, options, on_outcome)));
    crawl.borrow_mut().add(&root);
    Fetcher::new(root, Rc::clone(&crawl)).fetch(&mut event_loop);
    // Returns when the last fetcher calls `stop`.
    event_loop.run()?;

    let mut crawl = crawl.borrow_mut();
    Ok(Report {
        outcomes: crawl.take_outcomes(),
        seen_urls: crawl.seen_urls.len(),
        concurrency: crawl.concurrency,
        elapsed: start.elapsed(),
    })
}
// ANCHOR_END: crawl

/// The first address of the root's host, or why there is none.
fn resolve(root: &Url) -> Result<SocketAddr, String> {
    if root.scheme() != "http" {
        return Err(format!(
            "{} is not supported: this crawler speaks plain HTTP only",
            root.scheme()
        ));
    }
    let addrs = root
        .socket_addrs(|| None)
        .map_err(|e| format!("cannot resolve {}: {e}", host_of(root)))?;
    addrs
        .first()
        .copied()
        .ok_or_else(|| format!("{} has no addresses", host_of(root)))
}

fn host_of(url: &Url) -> &str {
    url.host_str().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn only_http_roots_resolve() {
        assert_eq!(
            resolve(&url("https://127.0.0.1/")),
            Err("https is not supported: this crawler speaks plain HTTP only".into())
        );
        assert_eq!(
            resolve(&url("http://127.0.0.1:8000/x")),
            Ok("127.0.0.1:8000".parse().unwrap())
        );
        assert_eq!(
            resolve(&url("http://[::1]/")),
            Ok("[::1]:80".parse().unwrap())
        );
    }

    #[test]
    fn an_unresolvable_root_is_one_failed_outcome() {
        let root = url("http://no-such-host.invalid/");
        let report = crawl(root.clone(), Options::default(), |_| {}).unwrap();
        assert_eq!(report.outcomes.len(), 1);
        let Outcome::Failed(failed, reason) = &report.outcomes[0] else {
            panic!("{:?}", report.outcomes);
        };
        assert_eq!(failed, &root);
        assert!(
            reason.starts_with("cannot resolve no-such-host.invalid: "),
            "{reason}"
        );
    }
}
