//! A smoke test of the benchmark that CI can afford: the comparator crawls a
//! small demo site and must find exactly its URLs, and every micro-benchmark
//! runs on both runtimes with a tiny n and fills a table of the right shape.
//! No timing is asserted: speed lives in `cargo bench -p bench`.

#[path = "../benches/compare/comparator.rs"]
mod comparator;
#[path = "../benches/compare/tokio_micro.rs"]
mod tokio_micro;

use bench::crawl::{self, Visit};
use bench::micro::{self, Micro};
use bench::table::{self, Row, Target, Unit};
use demo_site::{DemoSite, SiteConfig};
use url::Url;

#[test]
fn the_comparator_finds_exactly_the_demo_site() {
    let site = DemoSite::start_default().unwrap();
    let root = Url::parse(&site.url("/")).unwrap();
    let (found, _) = comparator::crawl(root, 10).unwrap();
    let expected = crawl::expected_visits(&site);
    assert_eq!(
        crawl::check_visits("the comparator", &found, &expected),
        Ok(())
    );
    // Every URL fetched once: redirects handled by the crawler, no retries.
    assert_eq!(site.counters().requests, expected.len() as u64);
}

#[test]
fn the_comparator_finds_exactly_a_small_cpu_workload() {
    // The CPU-bound workload's shape (50 links a page, big pages), small.
    let config = SiteConfig {
        pages: 30,
        ..crawl::Workload::cpu_bound(30).site
    };
    let site = DemoSite::start(config).unwrap();
    let root = Url::parse(&site.url("/")).unwrap();
    let (found, _) = comparator::crawl(root, 3).unwrap();
    assert_eq!(
        crawl::check_visits("the comparator", &found, &crawl::expected_visits(&site)),
        Ok(())
    );
}

#[test]
fn the_comparator_reports_failures_with_no_status() {
    // Nothing listens on port 1: every try fails, and the crawl still ends.
    let root = Url::parse("http://127.0.0.1:1/").unwrap();
    let (found, _) = comparator::crawl(root, 2).unwrap();
    assert_eq!(
        found,
        [Visit {
            url: "http://127.0.0.1:1/".into(),
            status: None
        }]
    );
}

#[test]
fn every_micro_benchmark_runs_on_both_runtimes_and_fills_the_table() {
    let mut rows = Vec::new();
    for which in Micro::ALL {
        let ours = micro::ours(which, 500).unwrap();
        let theirs = tokio_micro::run(which, 500).unwrap();
        for r in [ours, theirs] {
            assert!(r.value.is_finite() && r.rss > 0, "{which:?}: {r:?}");
        }
        rows.push(Row {
            what: format!("(c) {}", which.name()),
            unit: if which == Micro::Idle {
                Unit::Bytes
            } else {
                Unit::Nanos
            },
            ours: Some(ours.value),
            theirs: Some(theirs.value),
            target: (which == Micro::Idle).then_some(Target::RatioAtMost(1.0)),
        });
    }
    let rendered = table::render("ours", "tokio", &rows);
    let lines: Vec<&str> = rendered.lines().collect();
    assert_eq!(lines.len(), 2 + Micro::ALL.len(), "{rendered}");
    for line in &lines {
        assert!(line.starts_with("| ") || line.starts_with("|---"), "{line}");
        assert_eq!(line.matches('|').count(), 7, "{line}");
    }
    for (line, which) in lines[2..].iter().zip(Micro::ALL) {
        assert!(
            line.starts_with(&format!("| (c) {} | ", which.name())),
            "{line}"
        );
        assert!(!line.contains("not run"), "{line}");
    }
}

#[test]
fn the_scale_harness_checks_a_real_crawl_of_the_large_site_exactly() {
    // The scale binary, in quick form, on stage 3's debug build (built
    // beside it by `cargo test --workspace`), without the peer.
    let scale = std::path::Path::new(env!("CARGO_BIN_EXE_scale"));
    let stage3 = scale.with_file_name("stage3-crawler");
    let out = std::process::Command::new(scale)
        .args([
            "--sizes",
            "300,1000",
            "--no-write",
            "--spider",
            "/nonexistent",
        ])
        .arg("--stage3")
        .arg(&stage3)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Both reports of both sizes were checked against the site, and the
    // table has a row each: 303 and 1,003 URLs, 61 and 201 links to other
    // hosts, and the 3 of other schemes (mailto:, ftp:, javascript:).
    for row in [
        "| 300 | stage 3, --report json | 303 | 367 |",
        "| 300 | stage 3, --report text | 303 | 367 |",
        "| 1000 | stage 3, --report json | 1003 | 1207 |",
        "| 1000 | stage 3, --report text | 1003 | 1207 |",
    ] {
        assert!(stdout.contains(row), "{row} not in\n{stdout}");
    }
    assert!(!stdout.contains("spider-rs"), "{stdout}");
}
