//! Helpers the integration tests share. (The misbehaving servers are in
//! `demo_site::testing`, shared with the other stages.)

#![allow(dead_code)] // each test file uses its own subset

use std::time::Duration;

use stage2_coroutines::{Options, Report, Style, crawl};
use url::Url;

pub fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

/// Crawls from `root` on a fresh runtime.
pub fn crawl_from(root: &str, style: Style, timeout: Duration) -> Report {
    let options = Options {
        style,
        timeout,
        ..Options::default()
    };
    runtime::run_until_complete(crawl(url(root), options, |_| {})).unwrap()
}
