//! The command line: `stage1-callbacks [URL] [--timeout SECS]`.

use std::time::Duration;

use clap::Parser;
use crawl_kit::args::{parse_root, parse_timeout};
use url::Url;

/// Crawls every page reachable from URL on the same host and port, with a
/// callback-driven fetcher per URL, and prints each URL as it is fetched.
/// Plain HTTP only.
#[derive(Debug, PartialEq, Parser)]
#[command(name = "stage1-callbacks", version, allow_negative_numbers = true)]
pub struct Args {
    /// Where to start (`http://` is added when there is no scheme). With no
    /// URL, crawls a demo site that it starts on 127.0.0.1.
    #[arg(value_name = "URL", value_parser = parse_url)]
    pub url: Option<Url>,
    /// Give up on a URL after SECS seconds (fractions allowed).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_timeout)]
    pub timeout: Duration,
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
        let argv = std::iter::once("stage1-callbacks").chain(args.iter().copied());
        Args::try_parse_from(argv).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_to_the_demo_site_and_ten_seconds() {
        assert_eq!(
            parse(&[]),
            Ok(Args {
                url: None,
                timeout: Duration::from_secs(10)
            })
        );
    }

    #[test]
    fn a_url_and_a_timeout_both_ways() {
        let expected = Ok(Args {
            url: Some(Url::parse("http://127.0.0.1:8000/docs/").unwrap()),
            timeout: Duration::from_millis(2500),
        });
        assert_eq!(
            parse(&["http://127.0.0.1:8000/docs/", "--timeout", "2.5"]),
            expected
        );
        assert_eq!(parse(&["--timeout=2.5", "127.0.0.1:8000/docs/"]), expected);
    }

    #[test]
    fn bad_arguments_are_explained() {
        let cases: [(&[&str], &str); 6] = [
            (
                &["https://example.com/"],
                "https://example.com/: unsupported scheme https; give an http:// URL \
                 (this crawler speaks plain HTTP only; stage3-crawler speaks https)",
            ),
            (
                &["mailto:a@example.com"],
                "mailto:a@example.com: unsupported scheme mailto; give an http:// URL",
            ),
            (&["http:"], "http: is not a URL: empty host"),
            (
                &["--timeout", "0"],
                "expected a number of seconds from 0.001 (a millisecond) to 86400 (one day)",
            ),
            (
                &["--timeout", "10000000000000000000"],
                "expected a number of seconds from 0.001 (a millisecond) to 86400 (one day)",
            ),
            (
                &["http://a/", "http://b/"],
                "unexpected argument 'http://b/'",
            ),
        ];
        for (args, message) in cases {
            let error = parse(args).unwrap_err();
            assert!(error.contains(message), "{args:?}: {error}");
        }
        assert!(parse(&["--verbose"]).unwrap_err().contains("--verbose"));
    }
}
