//! Exercise 13 ★★: a depth limit that is exact under concurrency
//! (reference solution).
//!
//! One depth at a time: queue every URL of depth `d`, wait for the queue's
//! `join`, and only then queue the new links found, as depth `d + 1`. When
//! a depth starts, every URL of smaller depth has been fetched and marked
//! seen, so a URL is always first found through a shortest chain.

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
    /// The depth being crawled now.
    depth: RefCell<usize>,
    /// Whether this depth's links are wanted (false at `max_depth`).
    follow: RefCell<bool>,
    /// New links found at this depth, in the order found: the next depth.
    next: RefCell<Vec<Url>>,
}

/// Crawls the site from `root` with `max_tasks` workers, following links
/// at most `max_depth` deep. Returns every URL fetched, with its depth.
pub async fn crawl(root: Url, max_depth: usize, max_tasks: usize) -> BTreeMap<String, usize> {
    let crawler = Rc::new(Crawler {
        root: root.clone(),
        client: Client::new(ClientConfig::default()),
        q: Queue::new(),
        seen_urls: RefCell::default(),
        done: RefCell::default(),
        depth: RefCell::new(0),
        follow: RefCell::new(true),
        next: RefCell::default(),
    });
    let workers: Vec<JoinHandle<()>> = (0..max_tasks.max(1))
        .map(|_| runtime::spawn(Rc::clone(&crawler).work()))
        .collect();
    crawler.seen_urls.borrow_mut().insert(root.clone());
    let mut level = vec![root];
    for depth in 0..=max_depth {
        if level.is_empty() {
            break;
        }
        *crawler.depth.borrow_mut() = depth;
        *crawler.follow.borrow_mut() = depth < max_depth;
        for url in level {
            crawler.q.put_nowait(url);
        }
        // Every URL of this depth is fetched, and its links collected.
        crawler.q.join().await;
        level = crawler.next.take();
    }
    for worker in &workers {
        worker.cancel();
    }
    crawler.done.take()
}

impl Crawler {
    /// One worker: take a URL, fetch it, note its new links for the next
    /// depth, mark it done.
    async fn work(self: Rc<Self>) {
        loop {
            let url = self.q.get().await;
            let links = fetch_links(&self.client, &url, &self.root)
                .await
                .unwrap_or_default();
            let depth = *self.depth.borrow();
            self.done.borrow_mut().insert(url.to_string(), depth);
            if *self.follow.borrow() {
                for link in links {
                    if self.seen_urls.borrow_mut().insert(link.clone()) {
                        self.next.borrow_mut().push(link);
                    }
                }
            }
            let _ = self.q.task_done();
        }
    }
}
