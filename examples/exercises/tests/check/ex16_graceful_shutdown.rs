use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;

use demo_site::{DemoSite, SiteConfig};
use exercises::ex16_graceful_shutdown::{Event, Report, Shutdown, crawl, on_ctrl_c};
use url::Url;

use crate::common::{block_on, expected_urls, links_of};

fn site() -> (DemoSite, Url) {
    let site = DemoSite::start(SiteConfig {
        pages: 30,
        ..SiteConfig::default()
    })
    .unwrap();
    let root = Url::parse(&site.url("/")).unwrap();
    (site, root)
}

/// The URLs the root's page queues, in the order it queues them.
fn root_links(root: &Url) -> Vec<String> {
    links_of(root, root)
        .into_iter()
        .filter(|l| l != root)
        .map(|l| l.to_string())
        .collect()
}

fn set<'a>(urls: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
    urls.into_iter().cloned().collect()
}

#[test]
fn without_a_shutdown_the_whole_site_is_crawled() {
    let (site, root) = site();
    let report = block_on("crawl", crawl(root, 4, Shutdown::new(), |_| {}));
    assert_eq!(
        report,
        Report {
            fetched: set(&expected_urls(&site)),
            abandoned: BTreeSet::new(),
            interrupted: false,
        }
    );
}

#[test]
fn a_shutdown_after_the_root_abandons_everything_it_queued() {
    let (_site, root) = site();
    let shutdown = Shutdown::new();
    let (trigger, root_url) = (shutdown.clone(), root.clone());
    let report = block_on(
        "crawl",
        crawl(root.clone(), 4, shutdown, move |event| {
            if let Event::Finished(url) = event
                && *url == root_url
            {
                trigger.trigger();
            }
        }),
    );
    assert_eq!(report.fetched, set([&root.to_string()]), "fetched");
    assert_eq!(report.abandoned, set(&root_links(&root)), "abandoned");
    assert!(report.interrupted);
}

#[test]
fn fetches_in_progress_finish_and_their_links_are_not_queued() {
    let (_site, root) = site();
    let shutdown = Shutdown::new();
    let trigger = shutdown.clone();
    // Every event, and where in the list the shutdown came.
    let log: Rc<RefCell<Vec<(bool, Url)>>> = Rc::default();
    let trigger_at = Rc::new(Cell::new(None));
    let (their_log, their_trigger_at) = (Rc::clone(&log), Rc::clone(&trigger_at));
    let report = block_on(
        "crawl",
        crawl(root.clone(), 4, shutdown, move |event| {
            let mut log = their_log.borrow_mut();
            match event {
                Event::Started(url) => log.push((true, url.clone())),
                Event::Finished(url) => log.push((false, url.clone())),
            }
            // The shutdown comes as the fifth fetch starts. How many are
            // in flight then depends on how fast the server answers; the
            // log says, and the checks below follow it.
            if log.iter().filter(|(started, _)| *started).count() == 5
                && their_trigger_at.get().is_none()
            {
                their_trigger_at.set(Some(log.len()));
                trigger.trigger();
            }
        }),
    );
    let log = log.take();
    let trigger_at = trigger_at
        .get()
        .expect("the crawl should have started five fetches");
    let started: BTreeSet<String> = log
        .iter()
        .filter(|(s, _)| *s)
        .map(|(_, u)| u.to_string())
        .collect();
    assert_eq!(started.len(), 5, "no fetch may start after the shutdown");
    assert_eq!(
        report.fetched, started,
        "every fetch that started finished, and no other"
    );
    // What was queued: the root, and the links of the pages that finished
    // before the shutdown. Pages finishing later queue nothing.
    let mut queued = set([&root.to_string()]);
    for (_, page) in log[..trigger_at].iter().filter(|(s, _)| !*s) {
        queued.extend(links_of(page, &root).iter().map(Url::to_string));
    }
    let accounted: BTreeSet<String> = report.fetched.union(&report.abandoned).cloned().collect();
    assert_eq!(
        accounted, queued,
        "fetched and abandoned together are exactly what was queued"
    );
    assert!(report.fetched.is_disjoint(&report.abandoned));
    assert!(report.interrupted);
}

#[test]
fn a_shutdown_before_the_crawl_queues_nothing() {
    let (_site, root) = site();
    let shutdown = Shutdown::new();
    shutdown.trigger();
    let report = block_on("crawl", crawl(root.clone(), 4, shutdown, |_| {}));
    assert_eq!(
        report,
        Report {
            fetched: BTreeSet::new(),
            abandoned: BTreeSet::new(),
            interrupted: true,
        }
    );
}

#[test]
fn ctrl_c_triggers_the_shutdown() {
    let triggered = block_on("ctrl-c", async {
        let shutdown = Shutdown::new();
        let watcher = on_ctrl_c(shutdown.clone()).expect("install the Ctrl-C handler");
        signal_hook::low_level::raise(signal_hook::consts::SIGINT).unwrap();
        watcher.await.unwrap();
        shutdown.is_triggered()
    });
    assert!(triggered);
}
