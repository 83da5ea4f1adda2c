//! `cargo run -p stage2-coroutines -- [URL] [--style state-machine|async] [--timeout SECS]`

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use demo_site::DemoSite;
use stage2_coroutines::cli::Args;
use stage2_coroutines::{Options, crawl};

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
        style: args.style,
        timeout: args.timeout,
        max_tasks: args.max_tasks as usize,
    };
    let report = match runtime::run_until_complete(crawl(root.clone(), options, |outcome| {
        print_line(&outcome.to_string())
    })) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: the runtime failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    print_line(&report.summary());
    drop(site);
    if report.fetched(&root) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Prints a line to stdout. A reader that went away (`| head`) is not our
/// error, so write errors are ignored rather than panicking as `println!`
/// does; the crawl finishes either way.
fn print_line(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}
