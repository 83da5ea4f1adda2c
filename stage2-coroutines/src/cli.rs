//! The command line.

use std::time::Duration;

use url::Url;

use stage1_callbacks::cli::{parse_timeout, parse_url};

use crate::Style;

pub const USAGE: &str = "\
usage: stage2-coroutines [URL] [--style state-machine|async] [--timeout SECS]

Crawls every page reachable from URL on the same host, a task per URL, and
prints each URL as it is fetched. With no URL, crawls a demo site that it
starts on 127.0.0.1. Plain HTTP only.

  --style STYLE    state-machine: hand-written futures (the default)
                   async: the same fetcher as async fn
  --timeout SECS   give up on a URL after SECS seconds [default: 10]
  -h, --help       print this help";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    Help,
    Crawl(Args),
}

#[derive(Debug, PartialEq)]
pub struct Args {
    /// `None`: crawl the demo site.
    pub url: Option<Url>,
    pub style: Style,
    pub timeout: Duration,
}

/// Parses the arguments after the program name. The error is a message for
/// the user, to be followed by [`USAGE`].
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut parsed = Args {
        url: None,
        style: Style::default(),
        timeout: Duration::from_secs(10),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // Both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_string(), Some(value.to_string()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--style" => parsed.style = value("--style")?.parse()?,
            "--timeout" => parsed.timeout = parse_timeout(&value("--timeout")?)?,
            _ if arg.starts_with('-') => return Err(format!("unknown option {arg}")),
            _ if parsed.url.is_some() => {
                return Err(format!("unexpected argument {arg}: one URL only"));
            }
            _ => parsed.url = Some(parse_url(&arg)?),
        }
    }
    Ok(Command::Crawl(parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults() {
        assert_eq!(
            parse_strs(&[]),
            Ok(Command::Crawl(Args {
                url: None,
                style: Style::StateMachine,
                timeout: Duration::from_secs(10)
            }))
        );
    }

    #[test]
    fn every_option_both_ways() {
        let expected = Command::Crawl(Args {
            url: Some(Url::parse("http://127.0.0.1:8000/").unwrap()),
            style: Style::Async,
            timeout: Duration::from_millis(2500),
        });
        let spaced = [
            "--style",
            "async",
            "http://127.0.0.1:8000/",
            "--timeout",
            "2.5",
        ];
        assert_eq!(parse_strs(&spaced), Ok(expected));
        let inline = ["http://127.0.0.1:8000/", "--timeout=2.5", "--style=async"];
        assert!(
            matches!(parse_strs(&inline), Ok(Command::Crawl(a)) if a.style == Style::Async && a.timeout == Duration::from_millis(2500))
        );
        assert_eq!(parse_strs(&["--style", "async", "-h"]), Ok(Command::Help));
    }

    #[test]
    fn bad_arguments_are_explained() {
        let cases: [(&[&str], &str); 8] = [
            (
                &["https://example.com/"],
                "https://example.com/: https is not supported; this crawler speaks plain HTTP only \
                 (stage3-crawler speaks https), so give an http:// URL",
            ),
            (
                &["ftp://example.com/"],
                "ftp://example.com/: unsupported scheme ftp; give an http:// URL",
            ),
            (
                &["example.com"],
                "example.com is not a URL: relative URL without a base",
            ),
            (
                &["--style", "generator"],
                "unknown style \"generator\": expected state-machine or async",
            ),
            (
                &["--timeout", "0"],
                "--timeout 0: expected a positive number of seconds",
            ),
            (
                &["--timeout", "NaN"],
                "--timeout NaN: expected a positive number of seconds",
            ),
            (&["--timeout"], "--timeout needs a value"),
            (
                &["http://a/", "http://b/"],
                "unexpected argument http://b/: one URL only",
            ),
        ];
        for (args, message) in cases {
            assert_eq!(parse_strs(args), Err(message.to_string()), "{args:?}");
        }
        assert_eq!(
            parse_strs(&["--verbose"]),
            Err("unknown option --verbose".into())
        );
    }
}
