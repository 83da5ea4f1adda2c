//! The binary: what it prints and how it exits.

use std::process::Output;

use demo_site::DemoSite;
use demo_site::testing::{self, refusing_addr};

fn run(args: &[&str]) -> Output {
    testing::run(env!("CARGO_BIN_EXE_stage1-callbacks"), args).unwrap()
}

fn stdout(output: &Output) -> String {
    testing::text(&output.stdout)
}

fn stderr(output: &Output) -> String {
    testing::text(&output.stderr)
}

#[track_caller]
fn closing_line(line: &str) -> (String, usize) {
    testing::closing_line(line).unwrap_or_else(|| panic!("not a closing line: {line}"))
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
    // The two pages not in UTF-8 are fetched and not searched, and say so;
    // nothing on a normal run of the demo site is an error.
    let not_utf8 = [
        "/charset/header-windows-1252.html",
        "/charset/meta-latin1.html",
    ];
    let mut want: Vec<String> = site
        .expected()
        .into_iter()
        .filter(|e| e.url != site.url("/charset/from-latin1.html"))
        .map(|e| match not_utf8.iter().find(|p| site.url(p) == e.url) {
            Some(_) => format!("{} (not searched for links: body is not UTF-8)", e.url),
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
    let (_socket, addr) = refusing_addr().unwrap();
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
    assert_eq!(
        stderr(&output),
        "error: invalid value 'https://example.com/' for '[URL]': https://example.com/: \
         unsupported scheme https; give an http:// URL (this crawler speaks plain HTTP only; \
         stage3-crawler speaks https)\n\nFor more information, try '--help'.\n"
    );
    for (args, value) in [
        (&["--timeout", "soon"][..], "soon"),
        (
            &["--timeout", "10000000000000000000"],
            "10000000000000000000",
        ),
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2));
        assert!(
            stderr(&output).starts_with(&format!(
                "error: invalid value '{value}' for '--timeout <SECS>': expected a number of \
                 seconds from 0.001 (a millisecond) to 86400 (one day)\n"
            )),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn help_is_printed_and_exits_with_0() {
    let output = run(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let help = stdout(&output);
    assert!(
        help.contains("Usage: stage1-callbacks [OPTIONS] [URL]\n"),
        "{help}"
    );
    assert!(help.contains("--timeout <SECS>"), "{help}");
}
