//! Runs the `gather` binary with a short unit and checks that the two tasks'
//! lines interleave: the second starts before the first ends.

use std::process::Command;

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gather"))
        .args(args)
        .output()
        .expect("the gather binary runs")
}

#[test]
fn the_two_sleeps_interleave() {
    let out = run(&["--unit-ms", "20"]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "start sleeping for 20ms",
            "start sleeping for 40ms",
            "end sleeping for 20ms",
            "end sleeping for 40ms",
        ]
    );
    assert_eq!(lines.len(), 5, "{stdout}");
    // The total varies from run to run; only its wording is fixed.
    let total = lines[4];
    assert!(total.starts_with("total: "), "{total}");
    assert!(
        total.ends_with(" for sleeps of 20ms and 40ms (one after the other would take 60ms)"),
        "{total}"
    );
}

#[test]
fn a_bad_unit_is_a_usage_error() {
    let out = run(&["--unit-ms", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr
            .starts_with("error: invalid value '0' for '--unit-ms <MS>': 0 is not in 1..=60000\n"),
        "{stderr}"
    );
    let out = run(&["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("error: unexpected argument '--frobnicate' found\n"),
        "{stderr}"
    );
}

#[test]
fn help_prints_usage() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("Usage: gather [OPTIONS]\n"), "{help}");
    assert!(help.contains("--unit-ms <MS>"), "{help}");
}
