//! The scale benchmark's parts (`cargo run --release -p bench --bin
//! scale`): a crawl of the demo site's large mode, what it cost, and
//! whether its report is exact.
//!
//! A crawl of a million pages writes a report of a million lines, so the
//! report goes to a file and is checked from there, line by line: every
//! page of the site exactly once, nothing else fetched, and a summary that
//! agrees. The answer key is the large site's closed form (the index, the
//! two files every page links, and the numbered pages), kept as one bit
//! per page.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::Value;

use crate::child::Usage;

/// One crawl of a site of `pages` pages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// The site's numbered pages.
    pub pages: usize,
    /// URLs fetched (the report's statistics).
    pub fetched: u64,
    /// URLs seen: fetched or skipped.
    pub seen: u64,
    /// What the crawler's process cost.
    pub usage: Usage,
}

impl Point {
    /// Wall time per URL fetched, in seconds.
    pub fn secs_per_url(&self) -> f64 {
        self.usage.wall.as_secs_f64() / self.fetched.max(1) as f64
    }

    /// Peak RSS per URL seen, in bytes.
    pub fn rss_per_url(&self) -> f64 {
        self.usage.max_rss as f64 / self.seen.max(1) as f64
    }
}

/// What a report says: URLs fetched and seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted {
    pub fetched: u64,
    pub seen: u64,
}

/// The path of numbered page `n` (the demo site's `DIRS[n % 3]`).
fn page_path(n: usize) -> String {
    format!("/pages/{}/{n}.html", ["a", "b", "c"][n % 3])
}

/// Which page a path is: `Some(n)` for a numbered page, `None` for
/// anything else.
fn page_number(path: &str, pages: usize) -> Option<usize> {
    let n: usize = path
        .strip_prefix("/pages/")?
        .split_once('/')?
        .1
        .strip_suffix(".html")?
        .parse()
        .ok()?;
    (n < pages && page_path(n) == path).then_some(n)
}

/// The large site's URLs that are not numbered pages.
const OTHERS: [&str; 3] = ["/", "/static/logo.png", "/static/style.css"];

/// Checks stage 3's JSON Lines report (`--report json`) of a crawl of the
/// large site at `origin` with `pages` pages: each of the site's URLs
/// fetched once with status 200, nothing else fetched, only links off the
/// site skipped (other hosts, and schemes such as `mailto:`), and a summary
/// whose counts agree.
pub fn check_json_report(path: &Path, origin: &str, pages: usize) -> Result<Counted, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut pages_seen = vec![false; pages];
    let mut others_seen = [false; OTHERS.len()];
    let (mut fetched, mut skipped, mut summary) = (0u64, 0u64, None);
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        let at = || format!("{} line {}", path.display(), i + 1);
        let record: Value =
            serde_json::from_str(&line).map_err(|e| format!("{}: {e}: {line}", at()))?;
        if let Some(s) = record.get("summary") {
            summary = Some(s.clone());
            continue;
        }
        let url = record["url"]
            .as_str()
            .ok_or_else(|| format!("{}: no url: {line}", at()))?;
        if let Some(reason) = record.get("skipped") {
            let off_site = match reason.as_str() {
                Some("off-host") => !url.starts_with(origin),
                Some("scheme") => !url.starts_with("http"),
                _ => false,
            };
            if !off_site {
                return Err(format!("{}: skipped a URL of the site: {line}", at()));
            }
            skipped += 1;
            continue;
        }
        let path = url
            .strip_prefix(origin)
            .ok_or_else(|| format!("{}: fetched a URL off the site: {line}", at()))?;
        if record["status"] != 200 {
            return Err(format!("{}: not a 200: {line}", at()));
        }
        let slot = match page_number(path, pages) {
            Some(n) => &mut pages_seen[n],
            None => match OTHERS.iter().position(|o| *o == path) {
                Some(k) => &mut others_seen[k],
                None => return Err(format!("{}: not a URL of the site: {line}", at())),
            },
        };
        if std::mem::replace(slot, true) {
            return Err(format!("{}: reported twice: {url}", at()));
        }
        fetched += 1;
    }
    let missing = pages_seen.iter().filter(|seen| !**seen).count()
        + others_seen.iter().filter(|seen| !**seen).count();
    if missing > 0 {
        let first = (0..pages)
            .find(|&n| !pages_seen[n])
            .map_or_else(String::new, |n| format!(", {} for one", page_path(n)));
        return Err(format!(
            "{missing} URLs of the site are not in the report{first}"
        ));
    }
    let summary = summary.ok_or("the report has no summary")?;
    let seen = fetched + skipped;
    if summary["done"] != fetched || summary["seen"] != seen || summary["interrupted"] != false {
        return Err(format!(
            "the summary disagrees with the report ({fetched} fetched, {seen} seen): {summary}"
        ));
    }
    Ok(Counted { fetched, seen })
}

/// Checks the text report of the same crawl, as far as memory is its
/// point: one line per URL of the site, and the chapter's "Finished N urls".
pub fn check_text_report(path: &Path, origin: &str, pages: usize) -> Result<Counted, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let want = (pages + OTHERS.len()) as u64;
    let (mut lines, mut finished, mut seen) = (0u64, None, None);
    for line in BufReader::new(file).lines() {
        let line = line.map_err(|e: io::Error| e.to_string())?;
        if line.starts_with(origin) {
            lines += 1;
        } else if let Some(rest) = line.strip_prefix("Finished ") {
            finished = rest.split(' ').next().and_then(|n| n.parse::<u64>().ok());
        } else if let Some(n) = line.strip_prefix("Seen: ") {
            seen = n.parse::<u64>().ok();
        }
    }
    match (finished, seen) {
        (Some(n), Some(seen)) if n == want && lines == want => Ok(Counted { fetched: n, seen }),
        _ => Err(format!(
            "the text report has {lines} lines of the site and says {finished:?} \
             finished, {seen:?} seen; the site has {want} URLs"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report file that removes itself.
    struct Report(std::path::PathBuf);

    impl Report {
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Report {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn write(lines: &[String]) -> Report {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "bench-scale-{}-{}.jsonl",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        Report(path)
    }

    fn stat(path: &str) -> String {
        format!(r#"{{"url":"http://h:1{path}","status":200}}"#)
    }

    fn report(pages: usize) -> Vec<String> {
        let mut lines: Vec<String> = OTHERS.iter().map(|p| stat(p)).collect();
        lines.extend((0..pages).map(|n| stat(&page_path(n))));
        lines.push(r#"{"url":"http://example.com/x","skipped":"off-host"}"#.into());
        lines.push(r#"{"url":"mailto:a@example.com","skipped":"scheme"}"#.into());
        let done = pages + 3;
        lines.push(format!(
            r#"{{"summary":{{"done":{done},"seen":{},"interrupted":false}}}}"#,
            done + 2
        ));
        lines
    }

    #[test]
    fn an_exact_report_passes_and_anything_else_fails() {
        let good = write(&report(5));
        assert_eq!(
            check_json_report(good.path(), "http://h:1", 5),
            Ok(Counted {
                fetched: 8,
                seen: 10
            })
        );
        // One page missing, one twice, one too many, a wrong summary.
        let mut missing = report(5);
        missing.remove(4);
        let mut twice = report(5);
        twice.insert(4, stat(&page_path(1)));
        let mut extra = report(5);
        extra.insert(0, stat("/pages/a/6.html"));
        let mut wrong = report(5);
        wrong.pop();
        wrong.push(r#"{"summary":{"done":7,"seen":10,"interrupted":false}}"#.into());
        // A site's own URL skipped for its scheme is not a link off the site.
        let mut own = report(5);
        own.insert(0, r#"{"url":"http://h:1/x","skipped":"scheme"}"#.into());
        for (what, lines) in [
            ("missing", missing),
            ("twice", twice),
            ("extra", extra),
            ("wrong", wrong),
            ("own", own),
        ] {
            let file = write(&lines);
            assert!(
                check_json_report(file.path(), "http://h:1", 5).is_err(),
                "{what}"
            );
        }
    }

    #[test]
    fn page_numbers_are_read_strictly() {
        assert_eq!(page_number("/pages/b/4.html", 10), Some(4));
        for bad in [
            "/pages/a/4.html",
            "/pages/b/04.html",
            "/pages/b/40.html",
            "/x",
        ] {
            assert_eq!(page_number(bad, 10), None, "{bad}");
        }
    }
}
