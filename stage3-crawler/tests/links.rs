//! Links a hostile page can hold (issue 33): a `<base href>` that cannot be
//! a base, hrefs of other schemes, hrefs that are not URLs at all. No link
//! found on a page is dropped without a record: each is fetched, or
//! reported skipped with its reason, once.

mod common;

use std::collections::BTreeSet;

use common::static_site::{Answer, StaticSite};
use common::{config, crawl};
use stage3_crawler::SkipReason;

/// A site whose `/` is `page`, and whose `/a` is a small text.
fn site(page: String) -> (String, StaticSite) {
    let site = StaticSite::start(vec![
        ("/", Answer::with_type(200, "text/html", page.into_bytes())),
        ("/a", Answer::text(200, "ok")),
    ]);
    (site.url("/"), site)
}

#[test]
fn a_javascript_base_is_ignored_and_every_href_is_accounted_for() {
    let long = format!("http://[{}", "1".repeat(100));
    let page = format!(
        r#"<base href="javascript:alert(1)//"><a href="a">a</a> <a href="http://[::1">v6</a>
           <a href="mailto:x@y">m</a> <a href="{long}">long</a> <a href="a#again">a</a>"#
    );
    let (root, _site) = site(page);
    let mut config = config();
    config.traps.max_url_length = 30;
    let c = crawl(std::slice::from_ref(&root), config);
    // The base cannot be one: `a` resolves against the page, and is fetched.
    let fetched: BTreeSet<String> = [root.clone(), format!("{root}a")].into_iter().collect();
    assert_eq!(c.urls(), fetched);
    let skipped: BTreeSet<(&str, SkipReason, Option<&str>)> = c
        .skipped
        .iter()
        .map(|s| (&*s.url, s.reason, s.from.as_deref()))
        .collect();
    let from = Some(root.as_str());
    let cut = &long[..30];
    let want: BTreeSet<(&str, SkipReason, Option<&str>)> = [
        ("javascript:alert(1)//", SkipReason::Scheme, from),
        ("http://[::1", SkipReason::InvalidUrl, from),
        ("mailto:x@y", SkipReason::Scheme, from),
        (cut, SkipReason::InvalidUrl, from),
    ]
    .into_iter()
    .collect();
    assert_eq!(skipped, want);
    assert_eq!(c.skipped.len(), 4, "each once");
    assert_eq!(c.seen, 6);
    // The page's count is of the links the crawl may follow: `a` alone.
    assert_eq!(c.stat(&root).num_urls, 1);
}
