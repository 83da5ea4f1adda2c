//! Reading what a test binary printed: which tests passed, which failed,
//! and why. Stable Rust's test harness has no machine-readable output, so
//! this reads its human-readable one, which has been stable for years:
//!
//! ```text
//! test ex04_state_machine::a_refused_connect_is_the_error ... FAILED
//! ...
//! ---- ex04_state_machine::a_refused_connect_is_the_error stdout ----
//! thread '...' panicked at tests/check/ex04_state_machine.rs:44:5:
//! assertion `left == right` failed
//! ```

use std::collections::BTreeMap;

/// How one test ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// With the panic message and where it happened, if the output had it.
    Failed(String),
    /// Started but never reported: the run was stopped (a hang).
    Unfinished,
}

/// The outcome of every test the binary listed, by full name.
pub type Results = BTreeMap<String, Outcome>;

/// The test names in the output of `--list` (`NAME: test` lines).
pub fn parse_list(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

/// Reads a run's output. Tests in `expected` that the output never
/// reports are `Unfinished`.
pub fn parse_run(output: &str, expected: &[String]) -> Results {
    let mut results: Results = expected
        .iter()
        .map(|name| (name.clone(), Outcome::Unfinished))
        .collect();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, status)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let outcome = match status.trim() {
            "ok" => Outcome::Passed,
            "FAILED" => Outcome::Failed(String::new()),
            _ => continue,
        };
        results.insert(name.to_string(), outcome);
    }
    for (name, message) in failure_messages(output) {
        if let Some(Outcome::Failed(slot)) = results.get_mut(&name) {
            *slot = message;
        }
    }
    results
}

/// The `---- NAME stdout ----` sections, reduced to the panic message and
/// its location.
fn failure_messages(output: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for line in output.lines() {
        let header = line
            .strip_prefix("---- ")
            .and_then(|l| l.strip_suffix(" stdout ----"));
        // A section ends at the next header, or at the summary list.
        let section_ends =
            header.is_some() || line == "failures:" || line.starts_with("test result:");
        if section_ends && let Some((name, lines)) = current.take() {
            found.push((name, tidy(&lines)));
        }
        if let Some(name) = header {
            current = Some((name.to_string(), Vec::new()));
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
        }
    }
    if let Some((name, lines)) = current {
        found.push((name, tidy(&lines)));
    }
    found
}

/// Keeps the message, puts the location last, and drops the noise
/// (backtrace notes, blank lines).
fn tidy(lines: &[&str]) -> String {
    let mut location = None;
    let mut message = Vec::new();
    for line in lines {
        if line.starts_with("note: ") || line.starts_with("stack backtrace:") {
            break;
        }
        // `thread 'NAME' (ID) panicked at FILE:LINE:COL:` (older Rust
        // versions print no id).
        if line.starts_with("thread '")
            && let Some((_, at)) = line.split_once(" panicked at ")
        {
            location = Some(at.trim_end_matches(':').to_string());
            continue;
        }
        if !line.trim().is_empty() {
            message.push(line.to_string());
        }
    }
    if let Some(location) = location {
        message.push(format!("at {location}"));
    }
    message.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "\
running 3 tests
test ex04_state_machine::a ... ok
test ex04_state_machine::b ... FAILED
test ex04_state_machine::c ... FAILED

failures:

---- ex04_state_machine::b stdout ----

thread 'ex04_state_machine::b' (1234) panicked at examples/exercises/tests/check/ex04_state_machine.rs:44:5:
assertion `left == right` failed: Get is not written yet
  left: Other
 right: ConnectionRefused
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

---- ex04_state_machine::c stdout ----
thread 'ex04_state_machine::c' (1235) panicked at src/ex04.rs:1:1:
not yet implemented

failures:
    ex04_state_machine::b
    ex04_state_machine::c

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
";

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn outcomes_and_messages() {
        let expected = names(&[
            "ex04_state_machine::a",
            "ex04_state_machine::b",
            "ex04_state_machine::c",
            "ex04_state_machine::d",
        ]);
        let results = parse_run(RUN, &expected);
        assert_eq!(results["ex04_state_machine::a"], Outcome::Passed);
        assert_eq!(
            results["ex04_state_machine::b"],
            Outcome::Failed(
                "assertion `left == right` failed: Get is not written yet\n  left: Other\n right: ConnectionRefused\nat examples/exercises/tests/check/ex04_state_machine.rs:44:5"
                    .into()
            )
        );
        assert_eq!(
            results["ex04_state_machine::c"],
            Outcome::Failed("not yet implemented\nat src/ex04.rs:1:1".into())
        );
        assert_eq!(results["ex04_state_machine::d"], Outcome::Unfinished);
    }

    #[test]
    fn the_list_format() {
        let list = "ex01_a::x: test\nex01_a::y: test\n\n2 tests, 0 benchmarks\n";
        assert_eq!(parse_list(list), names(&["ex01_a::x", "ex01_a::y"]));
    }

    #[test]
    fn a_serial_run_prints_the_status_later_on_the_same_line() {
        // With one test thread the harness prints "test NAME ... " first,
        // and the status when the test ends.
        let results = parse_run("test ex01_a::x ... ok\n", &names(&["ex01_a::x"]));
        assert_eq!(results["ex01_a::x"], Outcome::Passed);
    }
}
