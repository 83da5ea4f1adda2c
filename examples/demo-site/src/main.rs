//! `demo-site`: serve the demo site until interrupted.
//!
//! Prints the site's URL as the first line on stdout (so scripts can read
//! it) and then serves until Ctrl-C, which simply ends the process.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use demo_site::{DemoSite, SiteConfig};

const USAGE: &str = "\
Usage: demo-site [OPTIONS]

Serves a deterministic test website on 127.0.0.1 until Ctrl-C.

Options:
  --port N              port to listen on; 0 picks a free port [default: 0]
  --pages N             number of numbered pages [default: 100]
  --fan-out N           links from each page to other pages [default: 5]
  --page-size BYTES     average page size in bytes [default: 2000]
  --delay-ms N          delay before every response, in ms [default: 0]
  --page-delay-ms N     delay before each numbered page, in ms, overriding
                        --delay-ms for them
  --path-delay PATH=MS  delay for one path, overriding --delay-ms (repeatable)
  --no-keep-alive       close the connection after every response
  --tls                 serve https with a self-signed certificate made at
                        start; plain http on the same port redirects to it
  --cert-out FILE       with --tls, write the certificate (PEM) to FILE, for
                        a client to trust (stage3-crawler --ca-file FILE)
  -h, --help            print this help

Set RUST_LOG=debug to log every request to stderr.";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Command {
    /// Serve the site; in TLS mode, maybe write the certificate somewhere.
    Serve(SiteConfig, Option<PathBuf>),
    Help,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut config = SiteConfig::default();
    let mut cert_out = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // Accept both `--port 8000` and `--port=8000`.
        let (name, inline_value) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_string(), Some(value.to_string()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline_value
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--port" => config.port = number(&name, &value()?)?,
            "--pages" => config.pages = number(&name, &value()?)?,
            "--fan-out" => config.fan_out = number(&name, &value()?)?,
            "--page-size" => config.page_size = number(&name, &value()?)?,
            "--delay-ms" => config.delay = Duration::from_millis(number(&name, &value()?)?),
            "--page-delay-ms" => {
                config.page_delay = Some(Duration::from_millis(number(&name, &value()?)?));
            }
            "--path-delay" => {
                let spec = value()?;
                let (path, ms) = spec
                    .rsplit_once('=')
                    .filter(|(path, _)| path.starts_with('/'))
                    .ok_or_else(|| {
                        format!(
                            "--path-delay wants PATH=MS with PATH starting with '/', got {spec:?}"
                        )
                    })?;
                let ms: u64 = number("--path-delay", ms)?;
                config
                    .path_delays
                    .push((path.to_string(), Duration::from_millis(ms)));
            }
            "--no-keep-alive" if inline_value.is_none() => config.keep_alive = false,
            "--no-keep-alive" => return Err("--no-keep-alive takes no value".to_string()),
            "--tls" if inline_value.is_none() => config.tls = true,
            "--tls" => return Err("--tls takes no value".to_string()),
            "--cert-out" => cert_out = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    if cert_out.is_some() && !config.tls {
        return Err("--cert-out needs --tls".to_string());
    }
    Ok(Command::Serve(config, cert_out))
}

fn number<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{name} wants a non-negative whole number in range, got {value:?}"))
}

fn main() -> ExitCode {
    let (config, cert_out) = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Serve(config, cert_out)) => (config, cert_out),
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("demo-site: error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();

    let on_off = |on| if on { "on" } else { "off" };
    let page_delay = config
        .page_delay
        .map(|delay| format!(" ({} ms for numbered pages)", delay.as_millis()))
        .unwrap_or_default();
    let summary = format!(
        "{} pages, fan-out {}, ~{} bytes per page, delay {} ms{page_delay}, keep-alive {}, tls {}",
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
    // Written before the URL is printed: a script that waits for the URL
    // can then use the file at once.
    if let (Some(path), Some(pem)) = (&cert_out, site.cert_pem())
        && let Err(e) = std::fs::write(path, pem)
    {
        eprintln!("demo-site: error: cannot write {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    println!("{}/", site.base_url());
    eprintln!("demo-site: serving {summary}");
    eprintln!(
        "demo-site: {} URLs to discover; press Ctrl-C to stop",
        site.expected().len()
    );
    // The server runs on its own threads; this one just waits forever.
    // Ctrl-C's default action ends the process, which is all we need.
    loop {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, String> {
        parse_args(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults() {
        assert_eq!(parse(&[]), Ok(Command::Serve(SiteConfig::default(), None)));
    }

    #[test]
    fn all_options() {
        let Ok(Command::Serve(config, cert_out)) = parse(&[
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
        ]) else {
            panic!("did not parse");
        };
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
            }
        );
        assert_eq!(cert_out, Some(PathBuf::from("/tmp/site.pem")));
    }

    #[test]
    fn help() {
        assert_eq!(parse(&["--pages", "3", "--help"]), Ok(Command::Help));
        assert_eq!(parse(&["-h"]), Ok(Command::Help));
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
            &["--tls=yes"],
            &["--cert-out", "x.pem"],
            &["--tls", "--cert-out"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
