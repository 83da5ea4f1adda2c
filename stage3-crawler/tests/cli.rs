//! The command line, run as a real process: arguments, exit codes, the two
//! report formats, logs on stderr, Ctrl-C and the progress line.

mod common;

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use demo_site::{DemoSite, SiteConfig};
use regex::Regex;

fn crawler() -> Command {
    common::stage3()
}

fn run(args: &[&str]) -> Output {
    crawler().args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    for (args, phrase) in [
        (&["--max-tries", "0"][..], "--max-tries"),
        (&["--max_tasks", "zero"], "--max-tasks"),
        (
            &["ftp://example.com/"],
            "ftp://example.com/: unsupported scheme ftp; give an http:// URL or an https:// URL",
        ),
        (&["--exclude", "("], "--exclude"),
        (&["--resolve", "example.test:80"], "is not HOST:PORT:ADDR"),
        (&["--bogus"], "--bogus"),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains(phrase), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// What a newcomer types by mistake gets an answer in their terms, whole:
/// a negative number is a bad value for its option (not a flag, with a tip
/// that would crawl a host called "-5"), a root that cannot be a host is a
/// usage error (not a DNS failure), and a mistyped flag's usage line shows
/// the common form, not the suggested flag as if it were required.
#[test]
fn newcomers_mistakes_are_usage_errors_in_their_terms() {
    for (args, expected) in [
        (
            &["--max-tasks", "-5"][..],
            "error: invalid value '-5' for '--max-tasks <N>': -5 is not in 1..=100000\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["--max-pages", "-1"],
            "error: invalid value '-1' for '--max-pages <N>': -1 is not in 1..9223372036854775807\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["-5"],
            "error: invalid value '-5' for '[ROOT]...': -5: \"-5\" cannot be a host name \
             (its label \"-5\" starts or ends with a hyphen)\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["8000"],
            "error: invalid value '8000' for '[ROOT]...': 8000 is a number, not a host \
             (an address has four parts: 127.0.0.1)\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["http://exa mple.com/"],
            "error: invalid value 'http://exa mple.com/' for '[ROOT]...': http://exa mple.com/ \
             is not a URL: its host, \"exa mple.com\", has a space in it\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["--frobnicate"],
            "error: unexpected argument '--frobnicate' found\n\n  \
             tip: a similar argument exists: '--frontier'\n\n\
             Usage: stage3-crawler [OPTIONS] [ROOT]...\n\n\
             For more information, try '--help'.\n",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stderr), expected, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_explains_every_option() {
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    for option in [
        "--max-redirect",
        "--max-tries",
        "--max-tasks",
        "--exclude",
        "--strict",
        "--lenient",
        "--verbose",
        "--quiet",
        "--connect-timeout",
        "--read-timeout",
        "--fetch-timeout",
        "--max-body",
        "--max-pages",
        "--report",
        "--progress",
        "--resolve",
        "--ca-file",
        "--parse-threads",
        "Exit status",
    ] {
        assert!(help.contains(option), "{option} missing from --help");
    }
}

#[test]
fn with_no_root_it_crawls_the_demo_site() {
    let out = run(&["-q", "--max-tasks", "10"]);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    let started = Regex::new(
        r"^No root given: crawling the demo site, started in-process at http://127\.0\.0\.1:\d+/\n$",
    )
    .unwrap();
    assert!(started.is_match(&err), "{err}");
    let report = text(&out.stdout);
    assert!(report.starts_with("*** Report ***\n"), "{report}");
    assert!(report.contains("\nDone: 138\n"), "{report}");
}

#[test]
fn the_text_report_follows_the_chapters_layout() {
    let site = DemoSite::start_default().unwrap();
    let out = run(&[
        &site.url("/redirect/chain/4"),
        "--exclude",
        "/$|/static/",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let report = text(&out.stdout);
    let lines: Vec<&str> = report.lines().collect();
    let base = site.base_url();
    let want_head = [
        "*** Report ***".to_string(),
        format!("{base}/redirect/chain/4 307 redirect {base}/redirect/chain/5"),
        format!("{base}/redirect/chain/5 308 redirect {base}/redirect/target.html"),
        format!("{base}/redirect/target.html 200 text/html utf-8 575 0/1"),
    ];
    assert_eq!(lines[..4], want_head, "{report}");
    // The target links to `/` and two static files, all --exclude'd:
    // counted, and listed only with -v.
    assert_eq!(lines[4], "Skipped (excluded): 3 urls");
    // Each origin's robots.txt: the demo site has none.
    assert_eq!(lines[5], format!("robots.txt of {base}: 404: no rules"));
    let lines = [&lines[..5], &lines[6..]].concat();
    let finished = Regex::new(
        r"^Finished 3 urls in \d+\.\d{3} secs \(max_tasks=100\) \(\d+\.\d{3} urls/sec/task\)$",
    )
    .unwrap();
    assert!(finished.is_match(lines[5]), "{}", lines[5]);
    assert_eq!(
        lines[6..13],
        [
            "         1 html",
            "       575 html_bytes",
            "         2 redirect",
            "         3 skipped_excluded",
            "Todo: 0",
            "Done: 3",
            "Seen: 6",
        ]
    );
    let date = Regex::new(r"^Date: \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4} UTC$").unwrap();
    assert!(date.is_match(lines[13]), "{}", lines[13]);
    assert_eq!(lines.len(), 14);
}

#[test]
fn the_json_report_is_one_object_per_url_then_a_summary() {
    let site = DemoSite::start_default().unwrap();
    let out = run(&[
        &site.url("/redirect/chain/5"),
        &site.url("/fault/drop"),
        "--exclude",
        "/$|/static/",
        "--max-tries",
        "1",
        "--report",
        "json",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Three statistics, three skipped URLs (the page's links to `/` and two
    // static files, all --exclude'd), then the summary.
    assert_eq!(lines.len(), 7);
    let fields = [
        "url",
        "next_url",
        "status",
        "exception",
        "size",
        "content_type",
        "encoding",
        "num_urls",
        "num_new_urls",
        "wire_size",
        "protocol",
    ];
    let (stats, skipped): (Vec<_>, Vec<_>) = lines[..6]
        .iter()
        .cloned()
        .partition(|l| l.get("skipped").is_none());
    let mut skipped: Vec<(String, String, String)> = skipped
        .iter()
        .map(|s| {
            let field = |k: &str| s[k].as_str().unwrap().to_string();
            (field("url"), field("skipped"), field("from"))
        })
        .collect();
    skipped.sort();
    let target = site.url("/redirect/target.html");
    assert_eq!(
        skipped,
        ["/", "/static/logo.png", "/static/style.css"].map(|path| (
            site.url(path),
            "excluded".to_string(),
            target.clone()
        ))
    );
    let mut stats = stats;
    stats.sort_by_key(|s| s["url"].as_str().unwrap().to_string());
    for stat in &stats {
        let keys: Vec<&str> = stat
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut want = fields.to_vec();
        want.sort();
        let mut keys = keys;
        keys.sort();
        assert_eq!(keys, want);
    }
    let drop = &stats[0];
    assert_eq!(drop["url"], site.url("/fault/drop").as_str());
    assert_eq!(drop["status"], serde_json::Value::Null);
    assert_eq!(drop["exception"], "connection closed before the response");
    let redirect = &stats[1];
    assert_eq!(redirect["status"], 308);
    assert_eq!(
        redirect["next_url"],
        site.url("/redirect/target.html").as_str()
    );
    let page = &stats[2];
    assert_eq!(page["next_url"], serde_json::Value::Null);
    assert_eq!(page["exception"], serde_json::Value::Null);
    assert_eq!(page["encoding"], "utf-8");
    let summary = &lines[6]["summary"];
    assert_eq!(summary["done"], 3);
    assert_eq!(summary["seen"], 6);
    assert_eq!(summary["todo"], 0);
    assert_eq!(summary["max_tasks"], 100);
    assert_eq!(summary["interrupted"], false);
    assert_eq!(
        summary["counters"],
        serde_json::json!({"fail": 1, "fail_closed": 1, "html": 1, "html_bytes": 575, "redirect": 1,
                           "skipped_excluded": 3})
    );
}

#[test]
fn logs_go_to_stderr_with_the_chapters_phrases() {
    let site = DemoSite::start_default().unwrap();
    let out = run(&[&site.url("/redirect/chain/3"), "--max-redirect", "0"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        format!(
            "ERROR crawling: redirect limit reached for {} from {}\n",
            site.url("/redirect/chain/4"),
            site.url("/redirect/chain/3")
        )
    );
    assert!(text(&out.stdout).starts_with("*** Report ***"));
}

#[test]
fn exit_1_when_no_root_could_be_fetched() {
    let out = run(&["http://127.0.0.1:1/", "--max-tries", "1", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(
        report.contains("\nhttp://127.0.0.1:1/ error connect to 127.0.0.1:1 failed: "),
        "{report}"
    );
    assert!(report.contains("         1 fail_connect\n"), "{report}");
    // A certificate that does not verify is not a fetch either.
    let site = DemoSite::start(SiteConfig {
        tls: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let out = run(&[&site.url("/"), "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(
        report.contains(&format!(
            "{} error certificate verify failed for 127.0.0.1: unknown issuer",
            site.url("/")
        )),
        "{report}"
    );
    assert!(report.contains("         1 fail_certificate\n"), "{report}");
}

/// A file in the system's temporary directory that is removed on drop.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, contents: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!("stage3-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn ca_file_trusts_the_demo_sites_certificate() {
    let site = DemoSite::start(SiteConfig {
        tls: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let pem = TempFile::new("site.pem", site.cert_pem().unwrap().as_bytes());
    let out = run(&[
        &site.url("/redirect/chain/5"),
        "--ca-file",
        pem.path(),
        "--exclude",
        "/$|/static/",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let base = site.base_url();
    assert!(
        report.starts_with(&format!(
            "*** Report ***\n\
             {base}/redirect/chain/5 308 redirect {base}/redirect/target.html\n\
             {base}/redirect/target.html 200 text/html utf-8 575 0/1\n"
        )),
        "{report}"
    );
}

#[test]
fn a_bad_ca_file_is_a_usage_error() {
    let empty = TempFile::new("empty.pem", b"no certificate here\n");
    let key_only = TempFile::new(
        "key.pem",
        b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    );
    let bad_base64 = TempFile::new(
        "bad.pem",
        b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
    );
    let not_a_cert = TempFile::new(
        "junk.pem",
        b"-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n",
    );
    let missing = std::env::temp_dir().join("stage3-no-such-file.pem");
    let missing = missing.to_str().unwrap();
    for (path, phrase) in [
        (empty.path(), "holds no certificate"),
        (key_only.path(), "holds no certificate"),
        (bad_base64.path(), "is not valid PEM"),
        (not_a_cert.path(), "is not a usable X.509 certificate"),
        (missing, "cannot read"),
    ] {
        let out = run(&["--ca-file", path, "http://127.0.0.1:1/"]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        let err = text(&out.stderr);
        assert!(err.starts_with("error: "), "{path}: {err}");
        assert!(err.contains("--ca-file"), "{path}: {err}");
        assert!(err.contains(phrase), "{path}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// `--progress always` shows the line even when the crawl is over before
/// its first redraw (the demo site takes about 50 ms, the line is redrawn
/// every 250): the last line, with the crawl's final numbers, stays.
#[test]
fn progress_always_shows_the_final_line_of_a_short_crawl() {
    let site = DemoSite::start_default().unwrap();
    let out = run(&[
        &site.url("/"),
        "-q",
        "--progress",
        "always",
        "--report",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let fetched = stdout
        .lines()
        .filter(|l| l.starts_with("{\"url\"") && !l.contains("\"skipped\""))
        .count();
    assert!(stdout.contains(&format!("\"done\":{fetched},")), "{stdout}");
    let err = text(&out.stderr);
    let last =
        Regex::new(r"\r\x1b\[K(\d+) done, 0 queued, 0 in flight, \d+ errors, \d+\.\d pages/s\n$")
            .unwrap();
    let done: usize = last.captures(&err).unwrap_or_else(|| panic!("{err:?}"))[1]
        .parse()
        .unwrap();
    assert_eq!(done, fetched);
    // One line, ended: drawn over in place before it, never twice ended.
    assert_eq!(err.matches('\n').count(), 1, "{err:?}");
}

#[test]
fn ctrl_c_prints_interrupted_and_the_report_and_exits_130() {
    // Slow enough that the crawl is still running when we interrupt it.
    let site = DemoSite::start(SiteConfig {
        delay: Duration::from_millis(100),
        ..SiteConfig::default()
    })
    .unwrap();
    let mut child = crawler()
        .args([
            &site.url("/"),
            "--max-tasks",
            "2",
            "--progress",
            "always",
            "-q",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the progress line: then the crawl (and the Ctrl-C handler)
    // is running.
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !text(&seen).contains("in flight") {
        let n = stderr.read(&mut buf).unwrap();
        assert!(n > 0, "stderr closed early: {}", text(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    let progress =
        Regex::new(r"\r\x1b\[K\d+ done, \d+ queued, [0-2] in flight, \d+ errors, \d+\.\d pages/s")
            .unwrap();
    assert!(progress.is_match(&text(&seen)), "{:?}", text(&seen));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    stderr.read_to_end(&mut seen).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(text(&seen).ends_with("Interrupted\n"), "{:?}", text(&seen));
    let report = text(&out.stdout);
    assert!(report.starts_with("*** Report ***\n"), "{report}");
    let done: usize = Regex::new(r"\nDone: (\d+)\n")
        .unwrap()
        .captures(&report)
        .unwrap()[1]
        .parse()
        .unwrap();
    assert!(done >= 1 && done < site.expected().len(), "{done}");
}

/// Paths are whatever bytes the OS accepts (issue 33): a `--warc` file and
/// a `--state` directory whose names are not UTF-8 are used as given, and
/// the warcinfo record, which is text, shows the name with U+FFFD.
#[test]
fn paths_that_are_not_utf8_are_used_as_given() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let dir = std::env::temp_dir().join(format!("stage3-{}-not-utf8", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let warc = dir.join(OsStr::from_bytes(b"\xff.warc"));
    let state = dir.join(OsStr::from_bytes(b"state-\xfe"));
    let site = DemoSite::start_default().unwrap();
    let out = crawler()
        .args([
            &site.url("/"),
            "-q",
            "--progress",
            "never",
            "--max-pages",
            "3",
        ])
        .arg("--warc")
        .arg(&warc)
        .arg("--state")
        .arg(&state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(state.is_dir());
    // A `.warc` name: written uncompressed, its warcinfo record first.
    let archive = std::fs::read(&warc).unwrap();
    let warcinfo = &archive[..archive.len().min(4096)];
    let shown = format!("--warc '{}/\u{FFFD}.warc'", dir.display());
    assert!(
        String::from_utf8_lossy(warcinfo).contains(&shown),
        "{}",
        String::from_utf8_lossy(warcinfo)
    );
    // A CA file is read from any path too, and named in the error the same way.
    let pem = dir.join(OsStr::from_bytes(b"\xff.pem"));
    let out = crawler().arg("--ca-file").arg(&pem).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let shown = format!("{}/\u{FFFD}.pem", dir.display());
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: invalid value '{shown}' for '--ca-file <PEM>': cannot read {shown}: \
             No such file or directory (os error 2)\n\nFor more information, try '--help'.\n"
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
