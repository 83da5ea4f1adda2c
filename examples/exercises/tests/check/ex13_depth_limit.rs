use std::time::Duration;

use demo_site::{DemoSite, SiteConfig};
use exercises::ex13_depth_limit::crawl;
use url::Url;

use crate::common::{block_on, depths, expected_urls};

fn site(pages: usize, path_delays: Vec<(String, Duration)>) -> (DemoSite, Url) {
    let site = DemoSite::start(SiteConfig {
        pages,
        path_delays,
        ..SiteConfig::default()
    })
    .unwrap();
    let root = Url::parse(&site.url("/")).unwrap();
    (site, root)
}

#[test]
fn depth_zero_is_the_root_alone() {
    let (_site, root) = site(30, Vec::new());
    let found = block_on("crawl", crawl(root.clone(), 0, 8));
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        [(root.to_string(), 0)]
    );
}

#[test]
fn depth_one_is_the_root_and_its_links() {
    let (_site, root) = site(30, Vec::new());
    let found = block_on("crawl", crawl(root.clone(), 1, 8));
    assert_eq!(found, depths(&root, 1));
}

#[test]
fn a_slow_short_path_does_not_lose_to_a_fast_long_one() {
    // /pages/b/ lists every page in b at depth 2. With it slow, the b pages
    // are found first at depth 3, through a pages that link to them.
    let (_site, root) = site(
        30,
        vec![("/pages/b/".to_string(), Duration::from_millis(300))],
    );
    let found = block_on("crawl", crawl(root.clone(), 3, 8));
    let expected = depths(&root, 3);
    let wrong: Vec<String> = found
        .iter()
        .filter(|&(url, depth)| expected.get(url) != Some(depth))
        .map(|(url, depth)| format!("{url} at depth {depth}, expected {:?}", expected.get(url)))
        .collect();
    assert!(wrong.is_empty(), "wrong depths:\n{}", wrong.join("\n"));
    assert_eq!(found, expected);
}

#[test]
fn a_deep_enough_limit_finds_the_whole_site() {
    let (site, root) = site(30, Vec::new());
    let found = block_on("crawl", crawl(root.clone(), 100, 8));
    assert_eq!(
        found.keys().cloned().collect::<Vec<_>>(),
        expected_urls(&site)
    );
    assert_eq!(found, depths(&root, 100));
}
