//! `cargo run -p stage1-callbacks -- [URL] [--timeout SECS]`
//!
//! Prints each URL as it finishes (`error: URL (reason)` if it failed), then
//! the chapter's closing line. Exits with 0 if the root URL was fetched, 1 if
//! not, 2 for a bad command line.

use std::process::ExitCode;

use clap::Parser;
use demo_site::DemoSite;
use stage1_callbacks::cli::Args;
use stage1_callbacks::{Options, crawl};

fn main() -> ExitCode {
    env_logger::init();
    let args = Args::parse();
    // The given root, or the demo site's, kept alive until the crawl is over.
    let (root, site) = match DemoSite::root_or_start(args.url) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("error: cannot start the demo site: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = Options {
        timeout: args.timeout,
        ..Options::default()
    };
    let report = match crawl(root.clone(), options, |outcome| println!("{outcome}")) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: the event loop failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", report.summary());
    drop(site);
    if report.fetched(&root) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
