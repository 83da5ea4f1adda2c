//! The binary: what it prints and how it exits.

use std::process::Output;

use demo_site::DemoSite;
use demo_site::testing;

fn run(args: &[&str]) -> Output {
    testing::run(env!("CARGO_BIN_EXE_stage2-coroutines"), args).unwrap()
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
    for style in ["state-machine", "async"] {
        let output = run(&[&root, "--style", style]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let out = stdout(&output);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 137 + 1);
        assert_eq!(lines[0], root);
        // Nothing on a normal run of the demo site is an error; the two
        // pages not in UTF-8 say they were not searched, and why.
        assert!(!lines.iter().any(|l| l.starts_with("error")), "{out}");
        let mut unsearched: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.contains(" (not searched for links: "))
            .collect();
        unsearched.sort_unstable();
        assert_eq!(
            unsearched,
            [
                format!(
                    "{} (not searched for links: body is not UTF-8)",
                    site.url("/charset/header-windows-1252.html")
                ),
                format!(
                    "{} (not searched for links: body is not UTF-8)",
                    site.url("/charset/meta-latin1.html")
                ),
            ]
        );
        let (summary, concurrency) = closing_line(lines[137]);
        assert_eq!(
            summary,
            "137 URLs fetched in X.Xs, achieved concurrency = C"
        );
        assert!(concurrency > 1);
    }
}

#[test]
fn a_root_that_times_out_exits_with_1() {
    let site = DemoSite::start_default().unwrap();
    let hang = site.url("/fault/hang");
    let output = run(&["--timeout", "0.2", &hang]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("error: {hang} (timed out after 200ms)"));
    assert_eq!(
        closing_line(lines[1]),
        (
            "1 URLs fetched in X.Xs, achieved concurrency = C".to_string(),
            1
        )
    );
    assert_eq!(lines.len(), 2);
}

#[test]
fn https_is_refused_with_a_clear_message() {
    let output = run(&["https://example.com/"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).is_empty());
    assert_eq!(
        stderr(&output),
        "error: invalid value 'https://example.com/' for '[URL]': https://example.com/: \
         unsupported scheme https; give an http:// URL (this crawler speaks plain HTTP only; \
         stage3-crawler speaks https)\n\nFor more information, try '--help'.\n"
    );
}

#[test]
fn help_and_bad_options() {
    let output = run(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("Usage: stage2-coroutines [OPTIONS] [URL]\n"));
    let output = run(&["--style", "threads"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with(
            "error: invalid value 'threads' for '--style <STYLE>': unknown style \"threads\": \
             expected state-machine or async\n"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn with_no_url_it_crawls_its_own_demo_site() {
    let output = run(&["--style", "async"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.starts_with("crawling the demo site at http://127.0.0.1:"),
        "{err}"
    );
    let out = stdout(&output);
    let last = out.lines().last().unwrap();
    assert_eq!(
        closing_line(last).0,
        "137 URLs fetched in X.Xs, achieved concurrency = C"
    );
}
