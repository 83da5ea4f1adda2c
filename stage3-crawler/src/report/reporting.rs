//! The report, in the layout of the chapter's `reporting.py` (`--report
//! text`), or as JSON Lines (`--report json`).

use crate::polite::slow_down::Wait;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::SystemTime;

use serde::Serialize;

use crate::polite::politeness::RobotsOutcome;
use crate::polite::sitemap::SitemapOutcome;
use crate::report::external_sort::SortedLines;
use crate::seams::Outcome;
use crate::skipped::{SkipReason, Skipped};
use crate::stats::FetchStatistic;
pub use crate::tally::{Counters, Line, Tally, classify, line_of};

/// The totals at the end of the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// URLs with a statistic.
    pub urls: usize,
    /// Seconds from the start of the crawl to its end.
    pub secs: f64,
    /// Workers.
    pub max_tasks: usize,
    /// URLs per second per worker.
    pub urls_per_sec_per_task: f64,
    /// URLs still queued.
    pub todo: usize,
    /// URLs done.
    pub done: usize,
    /// Every URL seen: `done` plus the skipped ones.
    pub seen: usize,
    /// Whether Ctrl-C ended the crawl.
    pub interrupted: bool,
    /// TCP connections opened.
    pub connections: u64,
    /// Counts by kind (`html`, `fail_timeout`, `skipped_off-host`...).
    pub counters: Counters,
    /// What each origin's robots.txt came to (none with --ignore-robots).
    pub robots: Vec<RobotsOutcome>,
    /// What each sitemap read came to (with --sitemaps).
    pub sitemaps: Vec<SitemapOutcome>,
    /// Each wait a host asked for (a 429 or 503), in order: the first
    /// ten thousand.
    pub waits: Vec<Wait>,
    /// The waits past those listed.
    pub waits_not_listed: u64,
}

/// One line of the text report: in a recrawl, with what became of the
/// URL at its end.
pub fn format_line(stat: &FetchStatistic, line: Line) -> String {
    let text = format_fields(stat, line);
    match stat.recrawl {
        Some(recrawled) => format!("{text} {}", recrawled.as_str()),
        None => text,
    }
}

/// The chapter's fields of a line of the text report.
fn format_fields(stat: &FetchStatistic, line: Line) -> String {
    let or_dash = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
    let status = stat.status.map_or("-".to_string(), |s| s.to_string());
    match line {
        Line::Error => format!(
            "{} error {}",
            stat.url,
            stat.exception.as_ref().map_or("", |e| e.message.as_str())
        ),
        Line::Redirect => format!("{} {status} redirect {}", stat.url, or_dash(&stat.next_url)),
        Line::Html => format!(
            "{} {status} {} {} {} {}/{}",
            stat.url,
            or_dash(&stat.content_type),
            or_dash(&stat.encoding),
            stat.size,
            stat.num_new_urls,
            stat.num_urls
        ),
        Line::Other => format!(
            "{} {status} {} {} {}",
            stat.url,
            or_dash(&stat.content_type),
            or_dash(&stat.encoding),
            stat.size
        ),
    }
}

/// What a report is made of: a crawler's, or a shared crawl's as the
/// frontier holds it (`--report-only`).
pub struct Crawl<'a> {
    /// The statistics, in any order: all of them, for the text report
    /// (the summary alone needs only the tally).
    pub done: &'a [FetchStatistic],
    /// The URLs skipped, in any order, likewise.
    pub skipped: &'a [Skipped],
    /// Their numbers.
    pub tally: Tally,
    /// Seconds from its start to its end.
    pub secs: f64,
    /// Workers.
    pub max_tasks: usize,
    /// URLs still queued.
    pub todo: usize,
    /// TCP connections opened.
    pub connections: u64,
    /// Whether it ended early.
    pub interrupted: bool,
    /// What each origin's robots.txt came to.
    pub robots: Vec<RobotsOutcome>,
    /// What each sitemap read came to.
    pub sitemaps: Vec<SitemapOutcome>,
    /// Each wait a host asked for: the first ten thousand.
    pub waits: Vec<Wait>,
    /// How many more.
    pub waits_unlisted: u64,
}

/// Something whose report can be written as it stands: a crawler, during
/// its crawl or after it.
pub trait Reported {
    /// Calls `f` with what the report is made of, had the crawl ended with
    /// `outcome`.
    fn with_crawl<R>(&self, outcome: Outcome, f: impl FnOnce(&Crawl<'_>) -> R) -> R;
}

impl<T: Reported> Reported for std::rc::Rc<T> {
    fn with_crawl<R>(&self, outcome: Outcome, f: impl FnOnce(&Crawl<'_>) -> R) -> R {
        (**self).with_crawl(outcome, f)
    }
}

/// The totals and counters for a finished (or interrupted) crawl.
pub fn summary(crawler: &impl Reported, outcome: Outcome) -> Summary {
    crawler.with_crawl(outcome, summary_of)
}

/// The totals and counters of `crawl`.
pub fn summary_of(crawl: &Crawl<'_>) -> Summary {
    let tally = &crawl.tally;
    let speed = if crawl.secs > 0.0 && crawl.max_tasks > 0 {
        tally.done as f64 / crawl.secs / crawl.max_tasks as f64
    } else {
        0.0
    };
    Summary {
        urls: tally.done,
        secs: crawl.secs,
        max_tasks: crawl.max_tasks,
        urls_per_sec_per_task: speed,
        todo: crawl.todo,
        done: tally.done,
        seen: tally.done + tally.skipped,
        interrupted: crawl.interrupted,
        connections: crawl.connections,
        counters: tally.counters.clone(),
        robots: crawl.robots.clone(),
        sitemaps: crawl.sitemaps.clone(),
        waits: crawl.waits.clone(),
        waits_not_listed: crawl.waits_unlisted,
    }
}

/// Writes the text report: every URL fetched, sorted; the skipped ones
/// counted by reason (and each listed, with `list_skipped`); then the
/// totals and counters. From the records `crawler` kept, so only with
/// `Config::keep_records` (the default); a crawler that keeps none feeds
/// a [`TextReport`] as it goes instead, as the command line does.
pub fn report(
    crawler: &impl Reported,
    outcome: Outcome,
    list_skipped: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    crawler.with_crawl(outcome, |crawl| report_of(crawl, list_skipped, out))
}

/// Writes the text report of `crawl`.
pub fn report_of(crawl: &Crawl<'_>, list_skipped: bool, out: &mut dyn Write) -> io::Result<()> {
    let mut text = TextReport::new(list_skipped);
    for stat in crawl.done {
        text.stat(stat)?;
    }
    for skipped in crawl.skipped {
        text.skip(skipped)?;
    }
    text.write(&summary_of(crawl), out)
}

/// How many bytes of report lines a [`TextReport`] holds in memory before
/// it sorts them and writes them to a temporary file.
const TEXT_REPORT_MEMORY: usize = 16 * 1024 * 1024;

/// Skipped URLs a report lists per reason, at most. A sitemap can name
/// millions of URLs past `--max-pages`; listing each is no use to anyone.
/// Past the limit, one closing record per reason says how many more there
/// were, and the summary's counters still count every one, so seen =
/// fetched + failed + skipped holds in the numbers.
pub const MAX_LISTED_SKIPS: usize = 100_000;

/// Counts skipped URLs per reason, to list only the first
/// [`MAX_LISTED_SKIPS`] of each.
#[derive(Debug, Default)]
pub struct SkipListing {
    counts: BTreeMap<SkipReason, usize>,
}

impl SkipListing {
    /// Counts one skipped URL of `reason`; whether to list it.
    pub fn list(&mut self, reason: SkipReason) -> bool {
        let count = self.counts.entry(reason).or_default();
        *count += 1;
        *count <= MAX_LISTED_SKIPS
    }

    /// For each reason past the limit, how many were not listed.
    pub fn more(&self) -> impl Iterator<Item = (SkipReason, usize)> + '_ {
        self.counts
            .iter()
            .filter(|&(_, &n)| n > MAX_LISTED_SKIPS)
            .map(|(&reason, &n)| (reason, n - MAX_LISTED_SKIPS))
    }

    /// The JSON closing records: `{"skipped":"max-pages","more":N}`.
    pub fn json_more(&self) -> impl Iterator<Item = String> + '_ {
        // Written by hand: the field order is part of the format.
        self.more()
            .map(|(reason, more)| format!(r#"{{"skipped":"{}","more":{more}}}"#, reason.name()))
    }
}

/// The text report, built as the crawl goes: each statistic becomes its
/// line at once, and the lines are sorted by URL in bounded memory
/// (`SortedLines`), so that a crawl of millions of pages does not keep
/// millions of statistics to print them at the end. Each kind of line
/// (fetched, and skipped for each reason when listed) has its own budget.
#[derive(Debug)]
pub struct TextReport {
    lines: SortedLines,
    /// Skipped URLs by reason: how many, and (with `list_skipped`) their
    /// lines.
    skipped: BTreeMap<SkipReason, (usize, Option<SortedLines>)>,
    list_skipped: bool,
}

impl TextReport {
    /// An empty report; `list_skipped` lists each skipped URL, not only
    /// their counts.
    pub fn new(list_skipped: bool) -> TextReport {
        TextReport::with_memory(list_skipped, TEXT_REPORT_MEMORY)
    }

    /// The same, holding at most about `memory` bytes of lines at a time.
    pub fn with_memory(list_skipped: bool, memory: usize) -> TextReport {
        TextReport {
            lines: SortedLines::new(memory),
            skipped: BTreeMap::new(),
            list_skipped,
        }
    }

    /// Adds a statistic's line.
    pub fn stat(&mut self, stat: &FetchStatistic) -> io::Result<()> {
        self.lines
            .push(stat.url.len(), format_line(stat, line_of(stat)))
    }

    /// Counts a skipped URL, and lists it with `list_skipped`.
    pub fn skip(&mut self, skipped: &Skipped) -> io::Result<()> {
        let list_skipped = self.list_skipped;
        let (count, lines) = self.skipped.entry(skipped.reason).or_insert_with(|| {
            let lines = list_skipped.then(|| SortedLines::new(TEXT_REPORT_MEMORY));
            (0, lines)
        });
        *count += 1;
        match lines {
            Some(lines) if *count <= MAX_LISTED_SKIPS => {
                let from = skipped.from.as_deref().unwrap_or("(root)");
                let line = format!("  {} from {from}", skipped.url);
                lines.push(2 + skipped.url.len(), line)
            }
            _ => Ok(()),
        }
    }

    /// Writes the report: every URL fetched, sorted; the skipped ones
    /// counted by reason (and listed); then `summary`.
    pub fn write(self, summary: &Summary, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "*** Report ***")?;
        for line in self.lines.into_sorted()? {
            writeln!(out, "{}", line?)?;
        }
        for (reason, (count, lines)) in self.skipped {
            writeln!(out, "Skipped ({}): {count} urls", reason.name())?;
            let listed = lines.is_some();
            for line in lines
                .map(SortedLines::into_sorted)
                .transpose()?
                .into_iter()
                .flatten()
            {
                writeln!(out, "{}", line?)?;
            }
            if listed && count > MAX_LISTED_SKIPS {
                writeln!(
                    out,
                    "  ... and {} more, not listed (at most {MAX_LISTED_SKIPS} per reason)",
                    count - MAX_LISTED_SKIPS
                )?;
            }
        }
        let s = summary;
        for robots in &s.robots {
            writeln!(out, "robots.txt of {robots}")?;
        }
        for sitemap in &s.sitemaps {
            writeln!(out, "sitemap {}: {}", sitemap.url, sitemap.outcome)?;
        }
        for wait in &s.waits {
            writeln!(out, "{wait}")?;
        }
        if s.waits_not_listed > 0 {
            writeln!(out, "... and {} more waits, not listed", s.waits_not_listed)?;
        }
        writeln!(
            out,
            "Finished {} urls in {:.3} secs (max_tasks={}) ({:.3} urls/sec/task)",
            s.urls, s.secs, s.max_tasks, s.urls_per_sec_per_task
        )?;
        for (key, count) in &s.counters.0 {
            writeln!(out, "{count:>10} {key}")?;
        }
        writeln!(out, "Todo: {}", s.todo)?;
        writeln!(out, "Done: {}", s.done)?;
        writeln!(out, "Seen: {}", s.seen)?;
        writeln!(out, "Date: {} UTC", ctime(SystemTime::now()))
    }
}

/// One statistic as a JSON object on one line.
pub fn json_line(stat: &FetchStatistic) -> String {
    // Serializing plain strings and numbers cannot fail; if it somehow did,
    // an empty object keeps the stream line-per-stat.
    serde_json::to_string(stat).unwrap_or_else(|_| "{}".into())
}

/// One skipped URL as a JSON object on one line.
pub fn json_skipped(skipped: &Skipped) -> String {
    serde_json::to_string(skipped).unwrap_or_else(|_| "{}".into())
}

/// The final JSON line: `{"summary": {...}}`.
pub fn json_summary(summary: &Summary) -> String {
    #[derive(Serialize)]
    struct Wrapper<'a> {
        summary: &'a Summary,
    }
    serde_json::to_string(&Wrapper { summary }).unwrap_or_else(|_| "{}".into())
}

pub use crawl_kit::dates::{ctime, iso8601};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Exception;

    fn stat(url: &str) -> FetchStatistic {
        FetchStatistic {
            url: url.into(),
            next_url: None,
            status: Some(200),
            exception: None,
            size: 10,
            content_type: Some("text/html".into()),
            encoding: Some("utf-8".into()),
            num_urls: 3,
            num_new_urls: 2,
            wire_size: 10,
            protocol: Some("http/1.1"),
            recrawl: None,
        }
    }

    #[test]
    fn a_count_too_big_to_add_stays_at_the_most_there_is() {
        // Sizes come back from journals and from Redis: anything.
        let mut c = Counters::default();
        c.add("bytes", u64::MAX);
        c.add("bytes", 1);
        assert_eq!(c.get("bytes"), u64::MAX);
    }

    #[test]
    fn lines_and_counters() {
        let mut c = Counters::default();
        let html = stat("http://h/");
        assert_eq!(classify(&html, &mut c), Line::Html);
        assert_eq!(
            format_line(&html, Line::Html),
            "http://h/ 200 text/html utf-8 10 2/3"
        );
        let redirect = FetchStatistic {
            next_url: Some("http://h/b".into()),
            status: Some(301),
            ..stat("http://h/a")
        };
        assert_eq!(classify(&redirect, &mut c), Line::Redirect);
        assert_eq!(
            format_line(&redirect, Line::Redirect),
            "http://h/a 301 redirect http://h/b"
        );
        let missing = FetchStatistic {
            status: Some(404),
            size: 5,
            ..stat("http://h/x")
        };
        assert_eq!(classify(&missing, &mut c), Line::Other);
        assert_eq!(
            format_line(&missing, Line::Other),
            "http://h/x 404 text/html utf-8 5"
        );
        let png = FetchStatistic {
            content_type: Some("image/png".into()),
            encoding: None,
            ..stat("http://h/p.png")
        };
        assert_eq!(classify(&png, &mut c), Line::Other);
        assert_eq!(
            format_line(&png, Line::Other),
            "http://h/p.png 200 image/png - 10"
        );
        let failed = FetchStatistic::failure(
            "http://h/f".into(),
            Exception {
                kind: "closed",
                message: "connection closed before the response".into(),
            },
        );
        assert_eq!(classify(&failed, &mut c), Line::Error);
        assert_eq!(
            format_line(&failed, Line::Error),
            "http://h/f error connection closed before the response"
        );
        let want: BTreeMap<String, u64> = [
            ("error", 1),
            ("error_bytes", 5),
            ("fail", 1),
            ("fail_closed", 1),
            ("html", 1),
            ("html_bytes", 10),
            ("other", 1),
            ("other_bytes", 10),
            ("redirect", 1),
            ("status_404", 1),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(c.0, want);
    }

    #[test]
    fn a_reason_lists_at_most_its_limit_and_says_how_many_more() {
        let skip = |url: String, reason| Skipped {
            url,
            reason,
            from: Some("http://h/".into()),
        };
        let mut skipped: Vec<Skipped> = (0..MAX_LISTED_SKIPS + 3)
            .map(|n| skip(format!("http://h/mp/{n:06}"), SkipReason::MaxPages))
            .collect();
        skipped.push(skip("http://x/".into(), SkipReason::OffHost));
        let done = [stat("http://h/")];
        let crawl = Crawl {
            done: &done,
            skipped: &skipped,
            tally: Tally::of(&done, &skipped),
            secs: 1.0,
            max_tasks: 1,
            todo: 0,
            connections: 1,
            interrupted: false,
            robots: Vec::new(),
            sitemaps: Vec::new(),
            waits: Vec::new(),
            waits_unlisted: 0,
        };
        let mut out = Vec::new();
        report_of(&crawl, true, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let listed = text
            .lines()
            .filter(|l| l.starts_with("  http://h/mp/"))
            .count();
        assert_eq!(listed, MAX_LISTED_SKIPS);
        assert!(
            text.contains(
                "Skipped (max-pages): 100003 urls\n  http://h/mp/000000 from http://h/\n"
            )
        );
        assert!(text.contains(
            "  http://h/mp/099999 from http://h/\n  ... and 3 more, not listed (at most 100000 per reason)\n"
        ));
        assert!(text.contains("Skipped (off-host): 1 urls\n  http://x/ from http://h/\n"));
        // The counters count every one.
        assert!(
            text.contains("skipped_max-pages"),
            "{}",
            &text[text.len() - 600..]
        );
        let mut listing = SkipListing::default();
        let listed = skipped.iter().filter(|s| listing.list(s.reason)).count();
        assert_eq!(listed, MAX_LISTED_SKIPS + 1);
        assert_eq!(
            listing.json_more().collect::<Vec<_>>(),
            [r#"{"skipped":"max-pages","more":3}"#]
        );
    }

    #[test]
    fn json_keeps_nulls_and_field_order() {
        let failed = FetchStatistic::failure(
            "http://h/f".into(),
            Exception {
                kind: "closed",
                message: "gone".into(),
            },
        );
        assert_eq!(
            json_line(&failed),
            r#"{"url":"http://h/f","next_url":null,"status":null,"exception":"gone","size":0,"content_type":null,"encoding":null,"num_urls":0,"num_new_urls":0,"wire_size":0,"protocol":null}"#
        );
    }
}
