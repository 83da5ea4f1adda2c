//! The binary: what it prints and how it exits.

mod common;

use std::process::{Command, Output};

use common::refusing_addr;
use demo_site::DemoSite;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stage1-callbacks"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// The closing line with the time replaced by X.X, and the concurrency.
fn closing_line(line: &str) -> (String, usize) {
    let (head, concurrency) = line.rsplit_once(" = ").unwrap();
    let (count, time) = head.split_once(" URLs fetched in ").unwrap();
    let (secs, rest) = time.split_once('s').unwrap();
    assert!(secs.parse::<f64>().is_ok(), "{line}");
    (
        format!("{count} URLs fetched in X.Xs{rest} = C"),
        concurrency.parse().unwrap(),
    )
}

#[test]
fn crawls_a_site_and_prints_each_url_then_a_summary() {
    let site = DemoSite::start_default().unwrap();
    let root = site.url("/");
    let output = run(&[&root]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 137 + 1);
    assert_eq!(lines[0], root);
    let mut printed: Vec<String> = lines[..137].iter().map(|l| l.to_string()).collect();
    printed.sort_unstable();
    let not_utf8 = [
        "/charset/header-windows-1252.html",
        "/charset/meta-latin1.html",
        "/static/logo.png",
    ];
    let mut want: Vec<String> = site
        .expected()
        .into_iter()
        .filter(|e| e.url != site.url("/charset/from-latin1.html"))
        .map(|e| match not_utf8.iter().find(|p| site.url(p) == e.url) {
            Some(_) => format!("error: {} (body is not UTF-8)", e.url),
            None => e.url,
        })
        .collect();
    want.sort_unstable();
    assert_eq!(printed, want);
    let (summary, concurrency) = closing_line(lines[137]);
    assert_eq!(
        summary,
        "137 URLs fetched in X.Xs, achieved concurrency = C"
    );
    assert!(concurrency > 1);
}

#[test]
fn with_no_argument_it_crawls_its_own_demo_site() {
    let output = run(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    let root = err
        .strip_prefix("crawling the demo site at ")
        .and_then(|rest| rest.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("{err}"));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first(), Some(&root));
    assert_eq!(lines.len(), 138);
    let (summary, _) = closing_line(lines[137]);
    assert_eq!(
        summary,
        "137 URLs fetched in X.Xs, achieved concurrency = C"
    );
}

#[test]
fn an_unreachable_root_exits_with_1() {
    let (_socket, addr) = refusing_addr();
    let root = format!("http://{addr}/");
    let output = run(&[&root]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!("error: {root} (connect: Connection refused (os error 111))")
    );
    assert_eq!(lines.len(), 2);
    let (summary, concurrency) = closing_line(lines[1]);
    assert_eq!(summary, "1 URLs fetched in X.Xs, achieved concurrency = C");
    assert_eq!(concurrency, 1);
}

#[test]
fn a_root_that_times_out_exits_with_1() {
    let site = DemoSite::start_default().unwrap();
    let root = site.url("/fault/hang");
    let output = run(&[&root, "--timeout", "0.2"]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert_eq!(
        out.lines().next(),
        Some(format!("error: {root} (timed out after 200ms)").as_str())
    );
}

#[test]
fn https_and_bad_options_are_refused_with_2() {
    let output = run(&["https://example.com/"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "");
    assert!(
        stderr(&output).starts_with(
            "error: https://example.com/: https is not supported; this crawler speaks plain \
             HTTP only (stage3-crawler speaks https), so give an http:// URL\n\nusage: stage1-callbacks"
        ),
        "{}",
        stderr(&output)
    );
    let output = run(&["--timeout", "soon"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .starts_with("error: --timeout soon: expected a positive number of seconds\n")
    );
}

#[test]
fn help_is_printed_and_exits_with_0() {
    let output = run(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).starts_with("usage: stage1-callbacks [URL] [--timeout SECS]\n"));
}
