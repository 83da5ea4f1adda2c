//! `cargo run -p stage1-callbacks -- [URL] [--timeout SECS]`
//!
//! Prints each URL as it finishes (`error: URL (reason)` if it failed), then
//! the chapter's closing line. Exits with 0 if the root URL was fetched, 1 if
//! not, 2 for a bad command line.

use std::process::ExitCode;

use demo_site::DemoSite;
use stage1_callbacks::cli::{self, Command, USAGE};
use stage1_callbacks::{Options, crawl};
use url::Url;

fn main() -> ExitCode {
    env_logger::init();
    let args = match cli::parse(std::env::args().skip(1)) {
        Ok(Command::Crawl(args)) => args,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Kept alive until the crawl is over.
    let mut site = None;
    let root = match args.url {
        Some(url) => url,
        None => match start_demo_site() {
            Ok((started, url)) => {
                site = Some(started);
                url
            }
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::FAILURE;
            }
        },
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

fn start_demo_site() -> Result<(DemoSite, Url), String> {
    let site = DemoSite::start_default().map_err(|e| format!("cannot start the demo site: {e}"))?;
    let url = site.url("/");
    eprintln!("crawling the demo site at {url}");
    let url = Url::parse(&url).map_err(|e| format!("the demo site's URL {url} is bad: {e}"))?;
    Ok((site, url))
}
