//! The comparator: the crawler a Rust developer would write without our
//! runtime, on tokio's current-thread runtime and reqwest (with its
//! connection pool), parsing pages with html5ever into an `RcDom`.
//!
//! It follows stage 3's rules, so the two do the same work:
//! - `max_tasks` workers take URLs from one queue; the crawl is over when
//!   every URL put on the queue has been handled, and then the workers are
//!   stopped (the chapter's `join`, then cancel);
//! - the crawler handles redirects itself: reqwest's redirect policy is
//!   `none`, and a 300/301/302/303/307/308 response's `Location` is resolved
//!   against the request URL and queued with one redirect less to go;
//! - a 200 response served as HTML, XHTML or XML is parsed, and every `href`
//!   is followed: resolved against `<base href>` or the page URL, fragment
//!   dropped, http(s) only, same host and port as the root only;
//! - URLs are deduplicated by their serialization;
//! - a network error is retried, up to four tries in all.
//!
//! Nothing here is tuned to lose: the pool, keep-alive and HTTP/1.1 handling
//! are reqwest's defaults, and the queue is tokio's own channel.

use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bench::crawl::Visit;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use tokio::sync::{Mutex as AsyncMutex, Notify, mpsc};
use tokio::task::JoinSet;
use url::Url;

const MAX_REDIRECT: u32 = 10;
const MAX_TRIES: u32 = 4;

/// Crawls everything reachable from `root` on its host with `max_tasks`
/// workers, and returns every URL visited with its status, and how long
/// the crawl took from starting the workers to the end of the queue (the
/// span stage 3's summary reports as `secs`).
pub fn crawl(root: Url, max_tasks: usize) -> io::Result<(Vec<Visit>, Duration)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(Crawler::run(root, max_tasks.max(1)))
}

struct Crawler {
    root: Url,
    client: reqwest::Client,
    seen: Mutex<HashSet<String>>,
    todo: mpsc::UnboundedSender<(Url, u32)>,
    /// URLs queued and not yet handled; the crawl is over at zero.
    unfinished: AtomicUsize,
    finished: Notify,
    done: Mutex<Vec<Visit>>,
}

impl Crawler {
    async fn run(root: Url, max_tasks: usize) -> io::Result<(Vec<Visit>, Duration)> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(io::Error::other)?;
        let (todo, queue) = mpsc::unbounded_channel();
        let crawler = Arc::new(Crawler {
            root: root.clone(),
            client,
            seen: Mutex::default(),
            todo,
            unfinished: AtomicUsize::new(0),
            finished: Notify::new(),
            done: Mutex::default(),
        });
        crawler.add_url(root, MAX_REDIRECT);
        let queue = Arc::new(AsyncMutex::new(queue));
        let mut workers = JoinSet::new();
        for _ in 0..max_tasks {
            workers.spawn(crawler.clone().work(queue.clone()));
        }
        let started = Instant::now();
        // `notify_one` keeps a permit if nobody is waiting yet, so a crawl
        // that ends before we get here is not missed.
        crawler.finished.notified().await;
        let took = started.elapsed();
        workers.shutdown().await;
        let done = std::mem::take(&mut *lock(&crawler.done));
        Ok((done, took))
    }

    async fn work(self: Arc<Self>, queue: Arc<AsyncMutex<mpsc::UnboundedReceiver<(Url, u32)>>>) {
        loop {
            let next = queue.lock().await.recv().await;
            let Some((url, max_redirect)) = next else {
                return;
            };
            self.fetch(url, max_redirect).await;
            if self.unfinished.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.finished.notify_one();
            }
        }
    }

    /// Queues `url` unless it was seen before. Returns whether it was new.
    fn add_url(&self, url: Url, max_redirect: u32) -> bool {
        if !lock(&self.seen).insert(url.as_str().to_string()) {
            return false;
        }
        self.unfinished.fetch_add(1, Ordering::AcqRel);
        // The receiver lives as long as the crawl, so this cannot fail.
        let _ = self.todo.send((url, max_redirect));
        true
    }

    fn record(&self, url: &Url, status: Option<u16>) {
        lock(&self.done).push(Visit {
            url: url.as_str().to_string(),
            status,
        });
    }

    async fn fetch(&self, url: Url, max_redirect: u32) {
        let mut tries = 0;
        let response = loop {
            tries += 1;
            match self.client.get(url.clone()).send().await {
                Ok(response) => break response,
                Err(e) if tries < MAX_TRIES => log(&url, &e),
                Err(e) => {
                    log(&url, &e);
                    return self.record(&url, None);
                }
            }
        };
        let status = response.status().as_u16();
        if matches!(status, 300 | 301 | 302 | 303 | 307 | 308) {
            let next = response
                .headers()
                .get(LOCATION)
                .and_then(|location| location.to_str().ok())
                .and_then(|location| url.join(location.trim_ascii()).ok());
            // Read the (small) body so the connection goes back to the pool.
            let _ = response.bytes().await;
            self.record(&url, Some(status));
            if let Some(mut next) = next
                && max_redirect > 0
                && self.same_host(&next)
            {
                next.set_fragment(None);
                self.add_url(next, max_redirect - 1);
            }
            return;
        }
        let markup = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|ct| ct.to_str().ok())
            .is_some_and(is_markup);
        let body = match response.bytes().await {
            Ok(body) => body,
            Err(e) => {
                log(&url, &e);
                return self.record(&url, None);
            }
        };
        self.record(&url, Some(status));
        if status == 200 && markup {
            // Every link is ASCII; a lossy decode is enough to find them.
            let text = String::from_utf8_lossy(&body);
            for link in links::extract(&text, &url) {
                if self.same_host(&link) {
                    self.add_url(link, MAX_REDIRECT);
                }
            }
        }
    }

    fn same_host(&self, url: &Url) -> bool {
        url.host() == self.root.host()
            && url.port_or_known_default() == self.root.port_or_known_default()
    }
}

fn is_markup(content_type: &str) -> bool {
    let media_type = content_type.split(';').next().unwrap_or("").trim();
    ["text/html", "application/xhtml+xml", "application/xml"]
        .iter()
        .any(|t| media_type.eq_ignore_ascii_case(t))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn log(url: &Url, error: &reqwest::Error) {
    eprintln!("comparator: {url}: {error}");
}

/// Links, with html5ever and markup5ever_rcdom: parse into a DOM, walk it.
mod links {
    use std::collections::HashSet;

    use html5ever::tendril::TendrilSink;
    use html5ever::{ParseOpts, local_name, ns, parse_document};
    use markup5ever_rcdom::{NodeData, RcDom};
    use url::Url;

    /// Every element's `href`, resolved against the first `<base href>` (or
    /// the page), fragment dropped, http(s) only, each URL once.
    pub fn extract(html: &str, page: &Url) -> Vec<Url> {
        let dom = parse_document(RcDom::default(), ParseOpts::default()).one(html);
        let mut hrefs = Vec::new();
        // An explicit stack: a recursive walk overflows on deep nesting.
        let mut stack = vec![dom.document.clone()];
        while let Some(node) = stack.pop() {
            if let NodeData::Element { name, attrs, .. } = &node.data {
                let href = attrs
                    .borrow()
                    .iter()
                    .find(|a| a.name.ns == ns!() && a.name.local == local_name!("href"))
                    .map(|a| a.value.to_string());
                if let Some(href) = href {
                    let is_base = name.ns == ns!(html) && name.local == local_name!("base");
                    hrefs.push((href, is_base));
                }
            }
            stack.extend(node.children.borrow().iter().rev().cloned());
        }
        let base = hrefs
            .iter()
            .find(|(_, is_base)| *is_base)
            .and_then(|(href, _)| page.join(href.trim_ascii()).ok())
            .unwrap_or_else(|| page.clone());
        let mut seen = HashSet::new();
        let mut links = Vec::new();
        for (href, is_base) in &hrefs {
            let against = if *is_base { page } else { &base };
            let Ok(mut url) = against.join(href.trim_ascii()) else {
                continue;
            };
            url.set_fragment(None);
            if matches!(url.scheme(), "http" | "https") && seen.insert(url.clone()) {
                links.push(url);
            }
        }
        links
    }
}
