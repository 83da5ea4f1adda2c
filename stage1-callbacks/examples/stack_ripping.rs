//! Stack ripping, for real: a bug in `parse_links` makes it panic inside
//! `read_response`, and the backtrace shows how little it knows.
//!
//! ```text
//! RUST_BACKTRACE=1 cargo run -p stage1-callbacks --example stack_ripping
//! ```
//!
//! The chapter imagines the same bug in Python and shows its traceback.
//! book/gen/stage1-stack-ripping.sh runs this and keeps only our frames.

use demo_site::DemoSite;
use stage1_callbacks::{Options, crawl};
use url::Url;

// ANCHOR: buggy_parse_links
/// A `parse_links` with a bug: it fails on the first page it is given.
fn parse_links(_html: &str, _url: &Url) -> Vec<Url> {
    panic!("parse error")
}
// ANCHOR_END: buggy_parse_links

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let site = DemoSite::start_default()?;
    let root = Url::parse(&site.url("/"))?;
    let options = Options {
        parse_links,
        ..Options::default()
    };
    let report = crawl(root, options, |outcome| println!("{outcome}"))?;
    println!("{}", report.summary());
    Ok(())
}
