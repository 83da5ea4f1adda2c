//! Fetching one origin's robots.txt, and what each answer means (RFC 9309
//! §2.3.1): the rules of a 2xx; no rules for a 4xx; complete disallow for
//! a 5xx; up to five redirects followed. A connection that fails after the
//! retries is not an answer at all: the origin's URLs then fail with that
//! error, so the user sees the real cause.

use url::Url;

use crate::http::{Cap, Client, Response};
use crate::logging::CrawlLog;
use crate::polite::politeness::RobotsOutcome;
use crate::polite::robots::{MAX_ROBOTS_BYTES, Robots, RobotsSource};
use crate::stats::Exception;

/// Redirects followed for a robots.txt, as the RFC asks at least.
const MAX_ROBOTS_REDIRECTS: usize = 5;

/// What fetching an origin's robots.txt came to.
#[derive(Debug)]
pub enum RobotsFetch {
    /// Rules to obey (perhaps none, perhaps everything disallowed), and
    /// what they were made from.
    Known(Robots, RobotsOutcome, RobotsSource),
    /// No answer: every URL of the origin fails with this.
    Unreachable(Exception, RobotsOutcome),
}

// ANCHOR: fetch_robots
/// Fetches `robots_url` for the crawler whose product token is `token`,
/// trying network errors up to `max_tries` times, as pages are.
pub async fn fetch_robots(
    client: &Client,
    robots_url: Url,
    token: &str,
    max_tries: u32,
    log: &CrawlLog,
) -> RobotsFetch {
    let origin = robots_url.origin().ascii_serialization();
    let mut url = robots_url;
    for _ in 0..=MAX_ROBOTS_REDIRECTS {
        // A file over --max-body is cut there, not refused, and never
        // before its first 500 KiB, which must be obeyed however long it
        // is (RFC 9309 2.5): a bigger robots.txt never means fewer rules.
        let cap = Cap::CutNoSooner(MAX_ROBOTS_BYTES as u64);
        let response = match client.get_retrying(&url, max_tries, cap).await {
            Ok(response) => response,
            Err(error) => {
                let exception = error.to_exception();
                let verdict = format!("unreachable: {}", exception.message);
                return RobotsFetch::Unreachable(exception, outcome(&origin, None, verdict));
            }
        };
        match response.status {
            200..=299 => return parsed(&response, token, &origin),
            300..=399 => match redirect_target(&url, &response) {
                Some(next) => url = next,
                None => return no_file(&origin, response.status),
            },
            500..=599 => {
                let verdict = format!("{}: complete disallow", response.status);
                return known(
                    RobotsSource::DisallowAll,
                    &origin,
                    Some(response.status),
                    verdict,
                );
            }
            // 4xx, and statuses the RFC does not name: no rules.
            status => return no_file(&origin, status),
        }
    }
    log.warn(format_args!(
        "{origin}/robots.txt: more than {MAX_ROBOTS_REDIRECTS} redirects"
    ));
    let verdict = "too many redirects: no rules".to_string();
    known(RobotsSource::AllowAll, &origin, None, verdict)
}
// ANCHOR_END: fetch_robots

fn parsed(response: &Response, token: &str, origin: &str) -> RobotsFetch {
    let body = &response.body[..response.body.len().min(MAX_ROBOTS_BYTES)];
    let source = RobotsSource::File(RobotsSource::text_of(body));
    let robots = source.rules(token);
    let mut verdict = match robots.rule_count() {
        1 => "1 rule".to_string(),
        n => format!("{n} rules"),
    };
    if response.truncated || response.body.len() > MAX_ROBOTS_BYTES {
        verdict.push_str(&format!(
            ", from the first {} KiB of a longer file",
            body.len() / 1024
        ));
    }
    RobotsFetch::Known(
        robots,
        outcome(origin, Some(response.status), verdict),
        source,
    )
}

fn no_file(origin: &str, status: u16) -> RobotsFetch {
    let verdict = format!("{status}: no rules");
    known(RobotsSource::AllowAll, origin, Some(status), verdict)
}

fn redirect_target(url: &Url, response: &Response) -> Option<Url> {
    url.join(response.header("location")?.trim()).ok()
}

fn known(source: RobotsSource, origin: &str, status: Option<u16>, verdict: String) -> RobotsFetch {
    // Rules of no file do not depend on who reads them.
    let robots = source.rules("");
    RobotsFetch::Known(robots, outcome(origin, status, verdict), source)
}

fn outcome(origin: &str, status: Option<u16>, verdict: String) -> RobotsOutcome {
    RobotsOutcome {
        origin: origin.to_string(),
        status,
        verdict,
        rules: 0,
        crawl_delay: None,
        capped: false,
    }
}
