//! The command line: `stage1-callbacks [URL] [--timeout SECS]`.

use std::time::Duration;

use url::Url;

pub const USAGE: &str = "\
usage: stage1-callbacks [URL] [--timeout SECS]

Crawls every page reachable from URL on the same host and port, with a
callback-driven fetcher per URL, and prints each URL as it is fetched. With
no URL, crawls a demo site that it starts on 127.0.0.1. Plain HTTP only.

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
    pub timeout: Duration,
}

/// Parses the arguments after the program name. The error is a message for
/// the user, to be followed by [`USAGE`].
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut parsed = Args {
        url: None,
        timeout: Duration::from_secs(10),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // Both `--timeout 5` and `--timeout=5`.
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_string(), Some(value)),
            _ => (arg.clone(), None),
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--timeout" => {
                let value = inline
                    .map(str::to_string)
                    .or_else(|| args.next())
                    .ok_or("--timeout needs a value")?;
                parsed.timeout = parse_timeout(&value)?;
            }
            _ if arg.starts_with('-') => return Err(format!("unknown option {arg}")),
            _ if parsed.url.is_some() => {
                return Err(format!("unexpected argument {arg}: one URL only"));
            }
            _ => parsed.url = Some(parse_url(&arg)?),
        }
    }
    Ok(Command::Crawl(parsed))
}

/// A root URL for the plain-HTTP crawlers (stages 1 and 2, which share it):
/// http with a host, or a message that says what to give instead.
pub fn parse_url(arg: &str) -> Result<Url, String> {
    let url = Url::parse(arg).map_err(|e| format!("{arg} is not a URL: {e}"))?;
    match url.scheme() {
        "http" if url.host().is_some() => Ok(url),
        "http" => Err(format!("{arg} has no host")),
        "https" => Err(format!(
            "{arg}: https is not supported; this crawler speaks plain HTTP only \
             (stage3-crawler speaks https), so give an http:// URL"
        )),
        other => Err(format!(
            "{arg}: unsupported scheme {other}; give an http:// URL"
        )),
    }
}

/// A `--timeout` value: a positive number of seconds, fractions allowed.
pub fn parse_timeout(value: &str) -> Result<Duration, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|secs| *secs > 0.0)
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| format!("--timeout {value}: expected a positive number of seconds"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults_to_the_demo_site_and_ten_seconds() {
        assert_eq!(
            parse_strs(&[]),
            Ok(Command::Crawl(Args {
                url: None,
                timeout: Duration::from_secs(10)
            }))
        );
    }

    #[test]
    fn a_url_and_a_timeout_both_ways() {
        let expected = Ok(Command::Crawl(Args {
            url: Some(Url::parse("http://127.0.0.1:8000/docs/").unwrap()),
            timeout: Duration::from_millis(2500),
        }));
        assert_eq!(
            parse_strs(&["http://127.0.0.1:8000/docs/", "--timeout", "2.5"]),
            expected
        );
        assert_eq!(
            parse_strs(&["--timeout=2.5", "http://127.0.0.1:8000/docs/"]),
            expected
        );
        assert_eq!(parse_strs(&["--timeout", "1", "--help"]), Ok(Command::Help));
        assert_eq!(parse_strs(&["-h"]), Ok(Command::Help));
    }

    #[test]
    fn bad_arguments_are_explained() {
        let cases: [(&[&str], &str); 9] = [
            (
                &["https://example.com/"],
                "https://example.com/: https is not supported; this crawler speaks plain HTTP \
                 only (stage3-crawler speaks https), so give an http:// URL",
            ),
            (
                &["ftp://example.com/"],
                "ftp://example.com/: unsupported scheme ftp; give an http:// URL",
            ),
            (
                &["example.com"],
                "example.com is not a URL: relative URL without a base",
            ),
            (&["http:"], "http: is not a URL: empty host"),
            (
                &["--timeout", "0"],
                "--timeout 0: expected a positive number of seconds",
            ),
            (
                &["--timeout", "-1"],
                "--timeout -1: expected a positive number of seconds",
            ),
            (
                &["--timeout=inf"],
                "--timeout inf: expected a positive number of seconds",
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
