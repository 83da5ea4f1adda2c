//! Helpers the integration tests share.

#![allow(dead_code)] // each test file uses its own subset

use std::time::Duration;

use stage1_callbacks::{Options, Report, crawl};
use url::Url;

pub fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

/// Crawls from `root` with `timeout`, printing nothing.
pub fn crawl_from(root: &str, timeout: Duration) -> Report {
    let options = Options {
        timeout,
        ..Options::default()
    };
    crawl(url(root), options, |_| {}).unwrap()
}
