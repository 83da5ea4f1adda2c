//! The crawl workloads, and the check that keeps the comparison honest: both
//! crawlers must find exactly the URLs the demo site says are there, with the
//! same statuses, in every round. A crawler that is fast because it skipped
//! pages would otherwise win.

use std::collections::BTreeSet;
use std::time::Duration;

use demo_site::{DemoSite, SiteConfig};

/// One crawl workload: a site, and how many tasks crawl it.
#[derive(Clone, Debug)]
pub struct Workload {
    /// `a` or `b`, as in the issue and the table.
    pub key: &'static str,
    pub title: &'static str,
    pub site: SiteConfig,
    pub max_tasks: usize,
}

impl Workload {
    /// (a) CPU-bound: about 2,000 pages of about 100 KB of HTML with 50 links
    /// each, answered at once. Parsing dominates.
    pub fn cpu_bound(pages: usize) -> Workload {
        Workload {
            key: "a",
            title: "CPU-bound crawl",
            site: SiteConfig {
                pages,
                fan_out: 50,
                page_size: 100_000,
                ..SiteConfig::default()
            },
            max_tasks: 100,
        }
    }

    /// (b) Latency-bound: 2,000 small pages, each answered after 20 ms,
    /// crawled by 100 tasks. Waiting dominates. Only the pages wait: the
    /// index, the directory listings that lead to the pages, the redirects
    /// and the other few dozen resources answer at once, so that 2,000 / 100
    /// delays is a true lower bound on the crawl, not just an estimate.
    pub fn latency_bound(pages: usize) -> Workload {
        Workload {
            key: "b",
            title: "latency-bound crawl",
            site: SiteConfig {
                pages,
                page_delay: Some(Duration::from_millis(20)),
                ..SiteConfig::default()
            },
            max_tasks: 100,
        }
    }

    /// The lower bound on wall time: every numbered page costs one page
    /// delay, and `max_tasks` of them wait at once. Zero for a site whose
    /// pages answer at once.
    pub fn latency_bound_secs(&self) -> f64 {
        let delay = self.site.page_delay.unwrap_or(self.site.delay);
        self.site.pages as f64 / self.max_tasks as f64 * delay.as_secs_f64()
    }
}

/// One URL as a crawler reports it: its URL and the status it got (`None`
/// when the fetch failed).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Visit {
    pub url: String,
    pub status: Option<u16>,
}

impl Visit {
    /// One line of the comparator's output: `STATUS URL`, or `- URL` for a
    /// failed fetch.
    pub fn to_line(&self) -> String {
        match self.status {
            Some(status) => format!("{status} {}", self.url),
            None => format!("- {}", self.url),
        }
    }
}

/// What a correct crawler finds on `site`.
pub fn expected_visits(site: &DemoSite) -> BTreeSet<Visit> {
    site.expected()
        .into_iter()
        .map(|e| Visit {
            url: e.url,
            status: Some(e.status),
        })
        .collect()
}

/// What a crawler reported: every URL with its status, and how long the
/// crawl took by the crawler's own clock, from starting its workers to the
/// end of its queue. Unlike the wall time, that leaves out starting the
/// process, writing the report, closing connections and exiting.
#[derive(Clone, Debug, PartialEq)]
pub struct Crawled {
    pub visits: Vec<Visit>,
    pub crawl_secs: f64,
}

/// The comparator's last line: how long its crawl took.
pub fn comparator_secs_line(secs: f64) -> String {
    format!("secs {secs:.6}")
}

/// Reads the comparator's output: [`Visit::to_line`] lines, then
/// [`comparator_secs_line`].
pub fn parse_comparator(stdout: &str) -> Result<Crawled, String> {
    let mut visits = Vec::new();
    let mut crawl_secs = None;
    for line in stdout.lines() {
        let (first, rest) = line
            .split_once(' ')
            .ok_or_else(|| format!("comparator output line without a space: {line:?}"))?;
        let status = match first {
            "secs" => {
                crawl_secs = Some(valid_secs(rest.parse().ok(), line)?);
                continue;
            }
            "-" => None,
            s => Some(
                s.parse()
                    .map_err(|e| format!("bad status in {line:?}: {e}"))?,
            ),
        };
        visits.push(Visit {
            url: rest.to_string(),
            status,
        });
    }
    let crawl_secs = crawl_secs.ok_or("the comparator did not say how long it took")?;
    Ok(Crawled { visits, crawl_secs })
}

fn valid_secs(secs: Option<f64>, line: &str) -> Result<f64, String> {
    match secs {
        Some(secs) if secs.is_finite() && secs >= 0.0 => Ok(secs),
        _ => Err(format!("no valid duration in {line:?}")),
    }
}

/// Reads stage 3's `--report json` output: one object per URL with `url`
/// and `status` (null when the fetch failed), or with `skipped` for a URL
/// seen and not fetched (not a visit), then a `{"summary": ...}` line,
/// whose `secs` is the crawl time.
pub fn parse_stage3_json(stdout: &str) -> Result<Crawled, String> {
    let mut visits = Vec::new();
    let mut crawl_secs = None;
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("stage 3 printed a line that is not JSON ({e}): {line:?}"))?;
        if let Some(summary) = value.get("summary") {
            let secs = summary.get("secs").and_then(|s| s.as_f64());
            crawl_secs = Some(valid_secs(secs, line)?);
            continue;
        }
        if value.get("skipped").is_some() {
            continue;
        }
        let url = value
            .get("url")
            .and_then(|u| u.as_str())
            .ok_or_else(|| format!("stage 3 JSON line without a url: {line:?}"))?;
        let status = match value.get("status") {
            Some(serde_json::Value::Null) | None => None,
            Some(s) => Some(
                s.as_u64()
                    .and_then(|s| u16::try_from(s).ok())
                    .ok_or_else(|| format!("stage 3 JSON line with a bad status: {line:?}"))?,
            ),
        };
        visits.push(Visit {
            url: url.to_string(),
            status,
        });
    }
    let crawl_secs = crawl_secs.ok_or("stage 3 printed no summary")?;
    Ok(Crawled { visits, crawl_secs })
}

/// Checks that `found` is exactly `expected`: no URL missing, none extra,
/// none twice, every status the same. The error lists the differences.
pub fn check_visits(who: &str, found: &[Visit], expected: &BTreeSet<Visit>) -> Result<(), String> {
    let set: BTreeSet<Visit> = found.iter().cloned().collect();
    let mut problems = Vec::new();
    if set.len() != found.len() {
        problems.push(format!(
            "{} URLs reported more than once",
            found.len() - set.len()
        ));
    }
    let missing: Vec<_> = expected.difference(&set).collect();
    let extra: Vec<_> = set.difference(expected).collect();
    for (label, list) in [("missing", &missing), ("unexpected", &extra)] {
        if !list.is_empty() {
            let shown: Vec<String> = list.iter().take(10).map(|v| v.to_line()).collect();
            problems.push(format!(
                "{} {label} (first {}): {}",
                list.len(),
                shown.len(),
                shown.join(", ")
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{who} did not find exactly the demo site's {} URLs: {}",
            expected.len(),
            problems.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(status: Option<u16>, url: &str) -> Visit {
        Visit {
            url: url.into(),
            status,
        }
    }

    #[test]
    fn comparator_lines_round_trip() {
        let visits = vec![visit(Some(200), "http://h/"), visit(None, "http://h/x")];
        let mut text: String = visits.iter().map(|v| v.to_line() + "\n").collect();
        assert_eq!(text, "200 http://h/\n- http://h/x\n");
        // The crawl time is required.
        assert!(parse_comparator(&text).is_err());
        text.push_str(&comparator_secs_line(0.25));
        assert_eq!(
            parse_comparator(&text),
            Ok(Crawled {
                visits,
                crawl_secs: 0.25
            })
        );
        assert!(parse_comparator("200\n").is_err());
        assert!(parse_comparator("abc http://h/\n").is_err());
        assert!(parse_comparator("secs soon\n").is_err());
    }

    #[test]
    fn stage3_json_lines_skip_the_summary_and_skipped_urls() {
        let out = r#"{"url":"http://h/","next_url":null,"status":200,"exception":null}
{"url":"http://h/f","next_url":null,"status":null,"exception":"gone"}
{"url":"http://elsewhere/","skipped":"off-host","from":"http://h/"}
{"summary":{"urls":2,"secs":0.5}}
"#;
        assert_eq!(
            parse_stage3_json(out),
            Ok(Crawled {
                visits: vec![visit(Some(200), "http://h/"), visit(None, "http://h/f")],
                crawl_secs: 0.5
            })
        );
        assert!(parse_stage3_json(r#"{"summary":{"urls":2}}"#).is_err());
        assert!(parse_stage3_json("Finished 2 urls\n").is_err());
        assert!(parse_stage3_json(r#"{"status":200}"#).is_err());
    }

    #[test]
    fn check_reports_missing_extra_and_duplicates() {
        let expected: BTreeSet<Visit> = [
            visit(Some(200), "http://h/"),
            visit(Some(404), "http://h/m"),
        ]
        .into_iter()
        .collect();
        let exact: Vec<Visit> = expected.iter().cloned().collect();
        assert_eq!(check_visits("x", &exact, &expected), Ok(()));
        let wrong = vec![
            visit(Some(200), "http://h/"),
            visit(Some(200), "http://h/"),
            visit(Some(200), "http://h/m"),
        ];
        assert_eq!(
            check_visits("x", &wrong, &expected),
            Err(
                "x did not find exactly the demo site's 2 URLs: 1 URLs reported more than once; \
                 1 missing (first 1): 404 http://h/m; 1 unexpected (first 1): 200 http://h/m"
                    .into()
            )
        );
    }

    #[test]
    fn the_naive_latency_bound() {
        assert_eq!(Workload::latency_bound(2000).latency_bound_secs(), 0.4);
        assert_eq!(Workload::cpu_bound(2000).latency_bound_secs(), 0.0);
    }
}
