//! `cargo run -p stage2-coroutines -- [URL] [--style state-machine|async] [--timeout SECS]`

use std::io::Write;
use std::process::ExitCode;

use demo_site::DemoSite;
use stage2_coroutines::cli::{self, Command, USAGE};
use stage2_coroutines::{Options, crawl};

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
        None => match DemoSite::start_default() {
            Ok(started) => {
                let url = started.url("/");
                eprintln!("crawling the demo site at {url}");
                site = Some(started);
                match url.parse() {
                    Ok(url) => url,
                    Err(e) => {
                        eprintln!("error: the demo site's URL {url} does not parse: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            Err(e) => {
                eprintln!("error: cannot start the demo site: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let options = Options {
        style: args.style,
        timeout: args.timeout,
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
