use std::rc::Rc;
use std::time::Duration;

use demo_site::{DemoSite, SiteConfig};
use exercises::ex12_host_limit::{HostLimiter, host_key};
use runtime::Queue;
use stage3_crawler::http::{Client, ClientConfig};
use url::Url;

use crate::common::block_on;

/// Fetches `urls` with `workers` workers sharing one client and one
/// limiter, as stage 3's crawler would with the limiter in `fetch`.
/// Returns the statuses in the order the URLs were given.
fn fetch_all(urls: &[Url], workers: usize, limiter: &HostLimiter) -> Vec<u16> {
    block_on("the workers", async {
        let client = Rc::new(Client::new(ClientConfig::default()));
        let q: Queue<(usize, Url)> = Queue::new();
        for (i, url) in urls.iter().enumerate() {
            q.put_nowait((i, url.clone()));
        }
        let statuses = Rc::new(std::cell::RefCell::new(vec![0u16; urls.len()]));
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (q, client, limiter, statuses) = (
                    q.clone(),
                    Rc::clone(&client),
                    limiter.clone(),
                    Rc::clone(&statuses),
                );
                runtime::spawn(async move {
                    while let Some((i, url)) = q.get_nowait() {
                        let _permit = limiter.acquire(&url).await;
                        let status = client.get(&url).await.map_or(0, |r| r.status);
                        statuses.borrow_mut()[i] = status;
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.await.unwrap();
        }
        statuses.take()
    })
}

fn pages(site: &DemoSite, n: usize) -> Vec<Url> {
    (0..n)
        .map(|i| {
            Url::parse(&site.url(&format!("/pages/{}/{i}.html", ["a", "b", "c"][i % 3]))).unwrap()
        })
        .collect()
}

/// A site that takes a moment over every answer, so that a request is
/// surely still in flight when the next worker asks for a permit. (On
/// loopback a fast server can answer before the task that asked even
/// yields, and a limit that is never reached proves nothing.)
fn slow_site() -> DemoSite {
    DemoSite::start(SiteConfig {
        delay: Duration::from_millis(50),
        ..SiteConfig::default()
    })
    .unwrap()
}

#[test]
fn two_hosts_two_requests_each_at_a_time() {
    let (a, b) = (slow_site(), slow_site());
    // Interleaved, so that the first eight workers start on both hosts.
    let urls: Vec<Url> = pages(&a, 20)
        .into_iter()
        .zip(pages(&b, 20))
        .flat_map(|(x, y)| [x, y])
        .collect();
    let limiter = HostLimiter::new(2);
    let statuses = fetch_all(&urls, 8, &limiter);
    assert_eq!(statuses, vec![200; 40]);
    for site in [&a, &b] {
        let key = host_key(&Url::parse(&site.url("/")).unwrap());
        assert_eq!(
            limiter.peak(&key),
            2,
            "the most permits out at once for {key}"
        );
        let counters = site.counters();
        assert_eq!(counters.requests, 20, "requests to {key}");
        assert!(
            counters.peak_in_flight <= 2,
            "{key} saw {} requests at once",
            counters.peak_in_flight
        );
    }
    assert_eq!(limiter.hosts_tracked(), 0, "idle hosts must be forgotten");
}

#[test]
fn a_limit_of_one_serialises_a_host() {
    let site = slow_site();
    let limiter = HostLimiter::new(1);
    let statuses = fetch_all(&pages(&site, 10), 5, &limiter);
    assert_eq!(statuses, vec![200; 10]);
    assert_eq!(site.counters().peak_in_flight, 1);
    assert_eq!(
        limiter.peak(&host_key(&Url::parse(&site.url("/")).unwrap())),
        1
    );
    assert_eq!(limiter.hosts_tracked(), 0);
}

#[test]
fn host_keys_include_the_port() {
    let key = |u: &str| host_key(&Url::parse(u).unwrap());
    assert_eq!(key("http://Example.com/a"), "example.com:80");
    assert_eq!(key("http://127.0.0.1:8000/"), "127.0.0.1:8000");
    assert_ne!(key("http://h:1/"), key("http://h:2/"));
}

/// A waiter handed a permit and cancelled before it took it gives the
/// permit back (exercise 11's semaphore does that); the host is then idle,
/// with no `HostPermit` left to notice, and must still be forgotten.
#[test]
fn a_host_whose_last_waiter_was_cancelled_is_forgotten() {
    let tracked = block_on("a cancelled waiter", async {
        let limiter = HostLimiter::new(1);
        let url = Url::parse("http://example.com/").unwrap();
        let held = limiter.acquire(&url).await;
        let (l, u) = (limiter.clone(), url.clone());
        let waiter = runtime::spawn(async move { drop(l.acquire(&u).await) });
        runtime::yield_now().await; // the waiter is in line
        drop(held); // its permit is handed to the waiter...
        waiter.cancel(); // ...which is dropped before it takes it
        limiter.hosts_tracked()
    });
    assert_eq!(
        tracked, 0,
        "an idle host must be forgotten, also when its last waiter was cancelled: \
         what runs when `acquire` is dropped while it waits?"
    );
}

/// A permit given back while someone waits is that waiter's from that
/// moment, though the waiter has not run yet: the host is not idle, and a
/// task that asks now must wait its turn. Forget the host then, and the
/// next `acquire` makes it a new semaphore, with a second permit.
#[test]
fn a_permit_handed_to_a_waiter_still_holds_the_host() {
    use std::cell::Cell;

    /// Counts a permit taken: `out` now, and the most ever out at once.
    fn took(out: &std::cell::Cell<usize>, most: &std::cell::Cell<usize>) {
        out.set(out.get() + 1);
        most.set(most.get().max(out.get()));
    }

    let (most, peak, tracked) = block_on("a handed-over permit", async {
        let limiter = HostLimiter::new(1);
        let url = Url::parse("http://example.com/").unwrap();
        // Counted here, not by the limiter.
        let out = Rc::new(Cell::new(0usize));
        let most = Rc::new(Cell::new(0usize));
        let held = limiter.acquire(&url).await;
        took(&out, &most);
        let (l, u, o, m) = (
            limiter.clone(),
            url.clone(),
            Rc::clone(&out),
            Rc::clone(&most),
        );
        let waiter = runtime::spawn(async move {
            let permit = l.acquire(&u).await;
            took(&o, &m);
            o.set(o.get() - 1);
            drop(permit);
        });
        runtime::yield_now().await; // the waiter is in line
        out.set(out.get() - 1);
        drop(held); // its permit is handed to the waiter, which has not run yet
        // The host's one permit is the waiter's: this must wait for it.
        let second = limiter.acquire(&url).await;
        took(&out, &most);
        waiter.await.unwrap();
        out.set(out.get() - 1);
        drop(second);
        (
            most.get(),
            limiter.peak(&host_key(&url)),
            limiter.hosts_tracked(),
        )
    });
    assert_eq!(
        most, 1,
        "two permits for one host with a limit of one: a permit handed to a waiter \
         that has not run yet is still out, so is its host idle?"
    );
    assert_eq!(peak, 1, "the limiter's own peak for the host");
    assert_eq!(tracked, 0, "idle hosts must be forgotten");
}
