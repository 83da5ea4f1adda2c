//! The command line: `stage2-coroutines [URL] [--style STYLE] [--timeout SECS]`.

use std::time::Duration;

use clap::Parser;
use crawl_kit::args::{parse_root, parse_timeout};
use url::Url;

use crate::Style;

/// Crawls every page reachable from URL on the same host and port, a task per URL,
/// and prints each URL as it is fetched. Plain HTTP only.
#[derive(Debug, PartialEq, Parser)]
#[command(name = "stage2-coroutines", version, allow_negative_numbers = true)]
pub struct Args {
    /// Where to start (`http://` is added when there is no scheme). With no
    /// URL, crawls a demo site that it starts on 127.0.0.1.
    #[arg(value_name = "URL", value_parser = parse_url)]
    pub url: Option<Url>,
    /// Which fetcher runs: `state-machine` (hand-written futures) or `async`
    /// (the same fetcher as async fn).
    #[arg(long, value_name = "STYLE", default_value = "state-machine")]
    pub style: Style,
    /// Give up on a URL after SECS seconds (fractions allowed).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// Run at most N fetchers at once; other URLs wait their turn. (The
    /// chapter starts one for every link at once.)
    #[arg(long = "max-tasks", alias = "max_tasks", value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_tasks: u32,
}

/// A root URL for the plain-HTTP crawlers: http with a host.
fn parse_url(arg: &str) -> Result<Url, String> {
    parse_root(arg, &["http"]).map_err(|e| {
        if arg.starts_with("https:") {
            format!("{e} (this crawler speaks plain HTTP only; stage3-crawler speaks https)")
        } else {
            e
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        let argv = std::iter::once("stage2-coroutines").chain(args.iter().copied());
        Args::try_parse_from(argv).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults() {
        assert_eq!(
            parse(&[]),
            Ok(Args {
                url: None,
                style: Style::StateMachine,
                timeout: Duration::from_secs(10),
                max_tasks: 100,
            })
        );
    }

    #[test]
    fn every_option_both_ways() {
        let expected = Ok(Args {
            url: Some(Url::parse("http://127.0.0.1:8000/").unwrap()),
            style: Style::Async,
            timeout: Duration::from_millis(2500),
            max_tasks: 100,
        });
        let spaced = [
            "--style",
            "async",
            "http://127.0.0.1:8000/",
            "--timeout",
            "2.5",
        ];
        assert_eq!(parse(&spaced), expected);
        let inline = ["127.0.0.1:8000", "--timeout=2.5", "--style=async"];
        assert_eq!(parse(&inline), expected);
    }

    #[test]
    fn bad_arguments_are_explained() {
        let cases: [(&[&str], &str); 5] = [
            (
                &["https://example.com/"],
                "https://example.com/: unsupported scheme https; give an http:// URL \
                 (this crawler speaks plain HTTP only; stage3-crawler speaks https)",
            ),
            (
                &["--style", "generator"],
                "unknown style \"generator\": expected state-machine or async",
            ),
            (
                &["--timeout", "NaN"],
                "expected a number of seconds from 0.001 (a millisecond) to 86400 (one day)",
            ),
            (&["--timeout"], "a value is required for '--timeout <SECS>'"),
            (
                &["http://a/", "http://b/"],
                "unexpected argument 'http://b/'",
            ),
        ];
        for (args, message) in cases {
            let error = parse(args).unwrap_err();
            assert!(error.contains(message), "{args:?}: {error}");
        }
    }
}
