//! `demo-site`: serve the demo site until interrupted.
//!
//! Prints the site's URL as the first line on stdout (so scripts can read
//! it) and then serves until Ctrl-C, which simply ends the process.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use demo_site::{
    DemoSite, MAX_FAN_OUT, MAX_KEPT_BYTES, MAX_LARGE_PAGES, MAX_PAGE_SIZE, MAX_PAGES, SiteConfig,
};

/// Serves a deterministic test website on 127.0.0.1 until Ctrl-C.
///
/// Set RUST_LOG=debug to log every request to stderr.
#[derive(Debug, Parser)]
#[command(name = "demo-site")]
struct Args {
    /// Port to listen on; 0 picks a free port.
    #[arg(long, value_name = "N", default_value_t = 0)]
    port: u16,
    /// Number of numbered pages (at most 100000; 1000000000 with --large).
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = pages)]
    pages: usize,
    /// Links from each page to other pages (at most 1000).
    #[arg(long = "fan-out", value_name = "N", default_value_t = 5, value_parser = fan_out)]
    fan_out: usize,
    /// Average page size in bytes (at most 10000000, 10 MB).
    #[arg(long = "page-size", value_name = "BYTES", default_value_t = 2000, value_parser = page_size)]
    page_size: usize,
    /// Delay before every response, in ms (at most a day).
    #[arg(long = "delay-ms", value_name = "N", default_value_t = 0, value_parser = millis)]
    delay_ms: u64,
    /// Delay before each numbered page, in ms, overriding --delay-ms for them.
    #[arg(long = "page-delay-ms", value_name = "N", value_parser = millis)]
    page_delay_ms: Option<u64>,
    /// Delay for one path, overriding --delay-ms (repeatable).
    #[arg(long = "path-delay", value_name = "PATH=MS", value_parser = parse_path_delay)]
    path_delay: Vec<(String, Duration)>,
    /// Close the connection after every response.
    #[arg(long = "no-keep-alive")]
    no_keep_alive: bool,
    /// Serve https with a self-signed certificate made at start; plain http
    /// on the same port redirects to it.
    #[arg(long)]
    tls: bool,
    /// With --tls, write the certificate (PEM) to FILE, for a client to
    /// trust (stage3-crawler --ca-file FILE).
    #[arg(long = "cert-out", value_name = "FILE", requires = "tls")]
    cert_out: Option<PathBuf>,
    /// Polite mode: a robots.txt with rules for stage3-crawler, sitemaps,
    /// compressed responses (br, gzip, deflate), a compression bomb and a
    /// calendar trap, under /polite/ (linked from the index).
    #[arg(long)]
    polite: bool,
    /// With --polite, the Crawl-delay robots.txt asks of stage3-crawler.
    #[arg(long = "crawl-delay-ms", value_name = "N", value_parser = millis, requires = "polite")]
    crawl_delay_ms: Option<u64>,
    /// Large mode, for crawls of millions of pages (--pages 1000000): just
    /// the index and the numbered pages, each generated per request and
    /// never kept, and no per-request counts.
    #[arg(long, conflicts_with = "polite")]
    large: bool,
    /// Send an ETag and a Last-Modified with every page, and answer
    /// 304 Not Modified to a request that sends them back unchanged (for
    /// testing a crawler's --recrawl).
    #[arg(long)]
    validators: bool,
    /// With --validators, numbered pages 0 to N-1 revised (a paragraph and
    /// a link to /changes.html more, a new ETag, a later Last-Modified), as
    /// if they had changed since the site was last crawled.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "validators")]
    revised: usize,
}

impl Args {
    /// The limits one option's parser cannot check alone: outside large
    /// mode the site keeps every page, so it has fewer of them.
    fn check(self) -> Result<Args, clap::Error> {
        if !self.large && self.pages > MAX_PAGES {
            return Err(Args::command().error(
                clap::error::ErrorKind::ValueValidation,
                format!(
                    "invalid value '{}' for '--pages <N>': at most {MAX_PAGES} without --large \
                     (a normal site keeps every page in memory)",
                    self.pages
                ),
            ));
        }
        let kept = self.pages.saturating_mul(self.page_size);
        if !self.large && kept > MAX_KEPT_BYTES {
            return Err(Args::command().error(
                clap::error::ErrorKind::ValueValidation,
                format!(
                    "--pages {} times --page-size {} is {kept} bytes: at most {MAX_KEPT_BYTES} \
                     without --large (a normal site keeps every page in memory)",
                    self.pages, self.page_size
                ),
            ));
        }
        Ok(self)
    }

    fn config(&self) -> SiteConfig {
        SiteConfig {
            port: self.port,
            pages: self.pages,
            fan_out: self.fan_out,
            page_size: self.page_size,
            delay: Duration::from_millis(self.delay_ms),
            page_delay: self.page_delay_ms.map(Duration::from_millis),
            path_delays: self.path_delay.clone(),
            keep_alive: !self.no_keep_alive,
            tls: self.tls,
            polite: self.polite,
            crawl_delay: self.crawl_delay_ms.map(Duration::from_millis),
            large: self.large,
            validators: self.validators,
        }
    }
}

/// A delay in milliseconds, at most a day.
fn millis(value: &str) -> Result<u64, String> {
    value
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms <= 86_400_000)
        .ok_or_else(|| "a whole number of milliseconds, at most 86400000 (a day)".into())
}

/// A number of pages, at most large mode's limit; [`Args::check`] applies
/// the smaller one of the normal mode.
fn pages(value: &str) -> Result<usize, String> {
    at_most(value, MAX_LARGE_PAGES).ok_or_else(|| {
        format!("a whole number of pages, at most {MAX_PAGES} ({MAX_LARGE_PAGES} with --large)")
    })
}

/// A fan-out: more links would make each page a long list of them.
fn fan_out(value: &str) -> Result<usize, String> {
    at_most(value, MAX_FAN_OUT)
        .ok_or_else(|| format!("a whole number of links, at most {MAX_FAN_OUT}"))
}

/// A page size: each page is generated whole, in memory.
fn page_size(value: &str) -> Result<usize, String> {
    at_most(value, MAX_PAGE_SIZE)
        .ok_or_else(|| format!("a whole number of bytes, at most {MAX_PAGE_SIZE} (10 MB)"))
}

/// `value` as a whole number from 0 to `max`.
fn at_most(value: &str, max: usize) -> Option<usize> {
    value.parse::<usize>().ok().filter(|n| *n <= max)
}

/// `PATH=MS`, PATH starting with `/` (it may hold `=` itself).
fn parse_path_delay(spec: &str) -> Result<(String, Duration), String> {
    let (path, ms) = spec
        .rsplit_once('=')
        .filter(|(path, _)| path.starts_with('/'))
        .ok_or("PATH=MS with PATH starting with '/'")?;
    Ok((path.to_string(), Duration::from_millis(millis(ms)?)))
}

fn main() -> ExitCode {
    let args = Args::parse().check().unwrap_or_else(|e| e.exit());
    let (config, cert_out, revised) = (args.config(), args.cert_out, args.revised);
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();

    let on_off = |on| if on { "on" } else { "off" };
    let page_delay = config
        .page_delay
        .map(|delay| format!(" ({} ms for numbered pages)", delay.as_millis()))
        .unwrap_or_default();
    let summary = format!(
        "{}{} pages, fan-out {}, ~{} bytes per page, delay {} ms{page_delay}, keep-alive {}, tls {}",
        if config.large { "large mode: " } else { "" },
        config.pages,
        config.fan_out,
        config.page_size,
        config.delay.as_millis(),
        on_off(config.keep_alive),
        on_off(config.tls),
    );
    let site = match DemoSite::start(config) {
        Ok(site) => site,
        Err(e) => {
            eprintln!("demo-site: error: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    site.revise_pages(revised);
    // Written before the URL is printed: a script that waits for the URL
    // can then use the file at once.
    if let (Some(path), Some(pem)) = (&cert_out, site.cert_pem())
        && let Err(e) = std::fs::write(path, pem)
    {
        eprintln!("demo-site: error: cannot write {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    // Counted before the URL is printed, for the same reason: if making
    // the answer key (every page of a normal site) fails, no script has
    // been told the site is up. The answer key of a large site would take
    // as long as a crawl of it.
    let to_discover = if site.is_large() {
        site.expected_large_len()
    } else {
        site.expected().len()
    };
    println!("{}/", site.base_url());
    eprintln!("demo-site: serving {summary}");
    eprintln!("demo-site: {to_discover} URLs to discover; press Ctrl-C to stop");
    // The server runs on its own threads; this one just waits forever.
    // Ctrl-C's default action ends the process, which is all we need.
    loop {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(SiteConfig, Option<PathBuf>), clap::Error> {
        Args::try_parse_from(std::iter::once("demo-site").chain(args.iter().copied()))
            .and_then(Args::check)
            .map(|args| (args.config(), args.cert_out))
    }

    #[test]
    fn defaults() {
        assert_eq!(parse(&[]).unwrap(), (SiteConfig::default(), None));
    }

    #[test]
    fn all_options() {
        let (config, cert_out) = parse(&[
            "--port",
            "8000",
            "--pages=7",
            "--fan-out",
            "2",
            "--page-size",
            "100000",
            "--delay-ms",
            "5",
            "--page-delay-ms",
            "20",
            "--path-delay",
            "/a?b=c=30",
            "--no-keep-alive",
            "--tls",
            "--cert-out",
            "/tmp/site.pem",
            "--large",
            "--validators",
        ])
        .unwrap();
        assert_eq!(
            config,
            SiteConfig {
                pages: 7,
                fan_out: 2,
                page_size: 100_000,
                delay: Duration::from_millis(5),
                page_delay: Some(Duration::from_millis(20)),
                path_delays: vec![("/a?b=c".to_string(), Duration::from_millis(30))],
                keep_alive: false,
                port: 8000,
                tls: true,
                polite: false,
                crawl_delay: None,
                large: true,
                validators: true,
            }
        );
        assert_eq!(cert_out, Some(PathBuf::from("/tmp/site.pem")));
    }

    #[test]
    fn help() {
        assert_eq!(
            parse(&["--pages", "3", "--help"]).unwrap_err().exit_code(),
            0
        );
        assert_eq!(parse(&["-h"]).unwrap_err().exit_code(), 0);
    }

    #[test]
    fn the_largest_sites_and_pages_are_accepted() {
        let (config, _) = parse(&[
            "--pages",
            "100000",
            "--fan-out",
            "1000",
            "--page-size",
            "10000",
        ])
        .unwrap();
        assert_eq!(
            (config.pages, config.fan_out, config.page_size),
            (MAX_PAGES, MAX_FAN_OUT, MAX_KEPT_BYTES / MAX_PAGES)
        );
        let (config, _) = parse(&["--pages", "100", "--page-size", "10000000"]).unwrap();
        assert_eq!(config.pages * config.page_size, MAX_KEPT_BYTES);
        assert_eq!(config.page_size, MAX_PAGE_SIZE);
        // Each within its limit, but together a terabyte: only in large
        // mode, which keeps nothing.
        let error = parse(&["--pages", "100000", "--page-size", "10000000"]).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert_eq!(
            error.to_string().lines().next().unwrap(),
            "error: --pages 100000 times --page-size 10000000 is 1000000000000 bytes: at most \
             1000000000 without --large (a normal site keeps every page in memory)"
        );
        let (config, _) =
            parse(&["--pages", "100000", "--page-size", "10000000", "--large"]).unwrap();
        assert!(config.large);
        // --large may come after --pages.
        let (config, _) = parse(&["--pages", "1000000000", "--large"]).unwrap();
        assert_eq!((config.pages, config.large), (MAX_LARGE_PAGES, true));
    }

    #[test]
    fn sizes_over_their_limits_are_usage_errors() {
        let fan_out = "for '--fan-out <N>': a whole number of links, at most 1000";
        let page_size =
            "for '--page-size <BYTES>': a whole number of bytes, at most 10000000 (10 MB)";
        let pages =
            "for '--pages <N>': a whole number of pages, at most 100000 (1000000000 with --large)";
        let normal_pages = "for '--pages <N>': at most 100000 without --large \
                            (a normal site keeps every page in memory)";
        for (bad, value, message) in [
            (&["--fan-out", "1001"][..], "1001", fan_out),
            (
                &["--fan-out", "18446744073709551615"],
                "18446744073709551615",
                fan_out,
            ),
            (&["--page-size", "10000001"], "10000001", page_size),
            (
                &["--page-size", "100000000000000"],
                "100000000000000",
                page_size,
            ),
            (&["--pages", "100001"], "100001", normal_pages),
            (&["--pages", "1000000000"], "1000000000", normal_pages),
            (&["--pages", "1000000000000"], "1000000000000", pages),
            (&["--large", "--pages", "1000000001"], "1000000001", pages),
            (
                &["--large", "--pages", "18446744073709551615"],
                "18446744073709551615",
                pages,
            ),
        ] {
            let error = parse(bad).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{bad:?}");
            assert_eq!(
                error.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{bad:?}"
            );
            assert_eq!(
                error.to_string().lines().next().unwrap(),
                format!("error: invalid value '{value}' {message}"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn errors() {
        for bad in [
            &["--port"][..],
            &["--port", "70000"],
            &["--pages", "-1"],
            &["--pages", "x"],
            &["--bogus"],
            &["8000"],
            &["--no-keep-alive=yes"],
            &["--path-delay", "nopath=3"],
            &["--path-delay", "/x"],
            &["--path-delay", "/x=soon"],
            &["--delay-ms", "86400001"],
            &["--tls=yes"],
            &["--cert-out", "x.pem"],
            &["--tls", "--cert-out"],
            &["--large", "--polite"],
        ] {
            assert_eq!(parse(bad).unwrap_err().exit_code(), 2, "{bad:?}");
        }
    }
}
