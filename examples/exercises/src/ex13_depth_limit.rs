//! Exercise 13 ★★: a depth limit that is exact under concurrency.
//!
//! A crawl that follows every link never ends on a site that generates
//! pages (calendars, search results). `--max-depth` stops it: the root is
//! depth 0, the links on it depth 1, and so on, where a URL's depth is the
//! length of the shortest chain of links from the root to it. `crawl`
//! below is stage 3's worker pool in miniature; it ignores `max_depth` and
//! reports every depth as 0.
//!
//! Make it fetch exactly the URLs within `max_depth` and report each one's
//! depth. The trap is concurrency: workers finish in any order, so a URL
//! can be found first through a long chain while the short chain's page is
//! still loading. The tests slow one page down to make that happen. A
//! crawl that processes one depth at a time (the queue's `join` tells you
//! when a depth is done) cannot be fooled.
//!
//! Read first: the book's "Coordinating Coroutines" (`join`), `crawl` and
//! `work` in stage3-crawler/src/crawling.rs, and `fetch_links` in
//! examples/exercises/src/support.rs.
//! Check: `cargo run -p exercises -- check 13`. Stuck: `... -- hint 13`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use runtime::{JoinHandle, Queue};
use stage3_crawler::http::{Client, ClientConfig};
use url::Url;

use crate::support::fetch_links;

/// What the workers share.
struct Crawler {
    root: Url,
    client: Client,
    q: Queue<Url>,
    seen_urls: RefCell<HashSet<Url>>,
    /// Every URL fetched (or failed), with its depth.
    done: RefCell<BTreeMap<String, usize>>,
}

/// Crawls the site from `root` with `max_tasks` workers, following links
/// at most `max_depth` deep. Returns every URL fetched, with its depth.
pub async fn crawl(root: Url, max_depth: usize, max_tasks: usize) -> BTreeMap<String, usize> {
    // TODO: honour `max_depth`, and know each URL's depth.
    let _ = max_depth;
    let crawler = Rc::new(Crawler {
        root: root.clone(),
        client: Client::new(ClientConfig::default()),
        q: Queue::new(),
        seen_urls: RefCell::default(),
        done: RefCell::default(),
    });
    crawler.add_url(root);
    let workers: Vec<JoinHandle<()>> = (0..max_tasks.max(1))
        .map(|_| runtime::spawn(Rc::clone(&crawler).work()))
        .collect();
    crawler.q.join().await;
    for worker in &workers {
        worker.cancel();
    }
    crawler.done.take()
}

impl Crawler {
    /// One worker: take a URL, fetch it, queue its new links, mark it done.
    async fn work(self: Rc<Self>) {
        loop {
            let url = self.q.get().await;
            let links = fetch_links(&self.client, &url, &self.root)
                .await
                .unwrap_or_default();
            self.done.borrow_mut().insert(url.to_string(), 0);
            for link in links {
                self.add_url(link);
            }
            let _ = self.q.task_done();
        }
    }

    fn add_url(&self, url: Url) {
        if self.seen_urls.borrow_mut().insert(url.clone()) {
            self.q.put_nowait(url);
        }
    }
}
