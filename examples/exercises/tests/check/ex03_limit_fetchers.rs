use std::cell::RefCell;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::rc::Rc;

use demo_site::{DemoSite, SiteConfig};
use exercises::ex03_limit_fetchers::Limiter;
use exercises::support::{callback_get, is_markup, parse_response};
use runtime::EventLoop;
use url::Url;

use crate::common::{expected_urls, turn_until};

/// Fetches `paths` through a limiter of `max`, submitting them all up
/// front. Returns the limiter, the order the jobs started in, and each
/// path's status.
fn fetch_all(site: &DemoSite, paths: &[String], max: usize) -> (Limiter, Vec<usize>, Vec<u16>) {
    let mut event_loop = EventLoop::new().unwrap();
    let limiter = Limiter::new(max);
    let started = Rc::new(RefCell::new(Vec::new()));
    let statuses = Rc::new(RefCell::new(vec![0u16; paths.len()]));
    let addr = site.addr();
    for (i, path) in paths.iter().enumerate() {
        let (started, statuses, path) = (Rc::clone(&started), Rc::clone(&statuses), path.clone());
        limiter.submit(&mut event_loop, move |el, slot| {
            started.borrow_mut().push(i);
            callback_get(el, addr, &path, move |el, raw| {
                let status = raw
                    .ok()
                    .and_then(|raw| parse_response(&raw).ok())
                    .map_or(0, |r| r.status);
                statuses.borrow_mut()[i] = status;
                slot.release(el);
            });
        });
    }
    turn_until(&mut event_loop, "the fetches", || {
        statuses.borrow().iter().all(|&s| s != 0)
    });
    let started = started.take();
    let statuses = statuses.take();
    (limiter, started, statuses)
}

fn pages(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("/pages/{}/{i}.html", ["a", "b", "c"][i % 3]))
        .collect()
}

#[test]
fn thirty_fetches_four_at_a_time() {
    let site = DemoSite::start_default().unwrap();
    let (limiter, started, statuses) = fetch_all(&site, &pages(30), 4);
    assert_eq!(statuses, [200; 30]);
    assert_eq!(limiter.peak(), 4, "the most jobs running at once");
    assert_eq!(
        started,
        (0..30).collect::<Vec<_>>(),
        "jobs must start in the order they were submitted"
    );
    assert!(
        site.counters().peak_in_flight <= 4,
        "the server saw {} requests at once",
        site.counters().peak_in_flight
    );
    assert_eq!((limiter.running(), limiter.waiting()), (0, 0));
}

#[test]
fn a_limit_of_one_runs_jobs_one_after_another() {
    let site = DemoSite::start_default().unwrap();
    let (limiter, started, statuses) = fetch_all(&site, &pages(5), 1);
    assert_eq!(statuses, [200; 5]);
    assert_eq!(limiter.peak(), 1);
    assert_eq!(started, [0, 1, 2, 3, 4]);
    assert_eq!(site.counters().peak_in_flight, 1);
}

/// A whole callback crawl whose jobs submit more jobs: what stage 1 would
/// look like with a limit.
struct Crawl {
    addr: SocketAddr,
    root: Url,
    limiter: Limiter,
    seen: RefCell<BTreeSet<String>>,
    done: RefCell<usize>,
}

fn crawl_url(crawl: &Rc<Crawl>, event_loop: &mut EventLoop, url: Url) {
    if !crawl.seen.borrow_mut().insert(url.to_string()) {
        return;
    }
    let crawl = Rc::clone(crawl);
    let theirs = Rc::clone(&crawl);
    crawl.limiter.submit(event_loop, move |el, slot| {
        let target = url[url::Position::BeforePath..url::Position::AfterQuery].to_string();
        callback_get(el, theirs.addr, &target, move |el, raw| {
            let response = raw.ok().and_then(|raw| parse_response(&raw).ok());
            let links = match response {
                Some(r) if r.content_type.as_deref().is_some_and(is_markup) => {
                    let charset = r
                        .content_type
                        .as_deref()
                        .and_then(stage3_crawler::charset::charset_param);
                    stage3_crawler::parsing::parse_page(&r.body, charset, &url).links
                }
                _ => Vec::new(),
            };
            for link in links {
                if link.scheme() == "http" && crawl_kit::links::same_host(&link, &theirs.root) {
                    crawl_url(&theirs, el, link);
                }
            }
            *theirs.done.borrow_mut() += 1;
            slot.release(el);
        });
    });
}

#[test]
fn a_crawl_whose_jobs_submit_jobs_finds_the_whole_site() {
    let site = DemoSite::start(SiteConfig {
        pages: 30,
        ..SiteConfig::default()
    })
    .unwrap();
    let root = Url::parse(&site.url("/")).unwrap();
    let crawl = Rc::new(Crawl {
        addr: site.addr(),
        root: root.clone(),
        limiter: Limiter::new(3),
        seen: RefCell::default(),
        done: RefCell::new(0),
    });
    let mut event_loop = EventLoop::new().unwrap();
    crawl_url(&crawl, &mut event_loop, root);
    turn_until(&mut event_loop, "the crawl", || {
        *crawl.done.borrow() == crawl.seen.borrow().len()
    });
    let found: Vec<String> = crawl.seen.borrow().iter().cloned().collect();
    assert_eq!(found, expected_urls(&site));
    assert_eq!(crawl.limiter.peak(), 3, "the most fetches at once");
    assert!(site.counters().peak_in_flight <= 3);
}

/// A job may release its slot, or submit another job, before it returns:
/// the hint's warning, "end every borrow before you call a job", is what
/// this checks. A job called while the limiter's state is still borrowed
/// panics with "already borrowed" at the first call back into it.
#[test]
fn a_job_that_releases_or_submits_at_once_is_fine() {
    let mut event_loop = EventLoop::new().unwrap();
    let limiter = Limiter::new(1);
    let log = Rc::new(RefCell::new(Vec::new()));
    // Released inside the job, while `submit` is still on the stack.
    let first = Rc::clone(&log);
    limiter.submit(&mut event_loop, move |el, slot| {
        first.borrow_mut().push("first");
        slot.release(el);
    });
    // A keeps its slot for now.
    let kept = Rc::new(RefCell::new(None));
    let (a_log, a_kept) = (Rc::clone(&log), Rc::clone(&kept));
    limiter.submit(&mut event_loop, move |_, slot| {
        a_log.borrow_mut().push("a");
        *a_kept.borrow_mut() = Some(slot);
    });
    // B waits; it runs inside A's release, submits C and releases, so C
    // runs inside B's release.
    let (b_log, handle) = (Rc::clone(&log), limiter.clone());
    limiter.submit(&mut event_loop, move |el, slot| {
        b_log.borrow_mut().push("b");
        let c_log = Rc::clone(&b_log);
        handle.submit(el, move |el, slot| {
            c_log.borrow_mut().push("c");
            slot.release(el);
        });
        slot.release(el);
    });
    assert_eq!((limiter.running(), limiter.waiting()), (1, 1));
    let slot = kept.borrow_mut().take().expect("A got its slot");
    slot.release(&mut event_loop);
    assert_eq!(*log.borrow(), ["first", "a", "b", "c"]);
    assert_eq!((limiter.running(), limiter.waiting()), (0, 0));
}
