//! What `check --format json` and `check --format junit` print: every
//! test of every exercise checked, with its outcome and message, for an
//! autograder (GitHub Classroom and most CI systems read a command's exit
//! status, and JUnit XML or JSON for the details).

use std::fmt::Write as _;

use serde_json::json;

use crate::catalog::Exercise;
use crate::libtest::{Outcome, Results};

/// One exercise and what its tests did.
pub struct Checked<'a> {
    pub exercise: &'a Exercise,
    pub results: Results,
}

impl Checked<'_> {
    /// (passed, total).
    pub fn score(&self) -> (usize, usize) {
        let passed = self
            .results
            .values()
            .filter(|o| **o == Outcome::Passed)
            .count();
        (passed, self.results.len())
    }

    pub fn solved(&self) -> bool {
        let (passed, total) = self.score();
        total > 0 && passed == total
    }
}

/// The test's name without its module.
fn short(name: &str) -> &str {
    name.split_once("::").map_or(name, |(_, t)| t)
}

/// One JSON document: per exercise its number, title, file, score and
/// tests; then the totals.
pub fn json(checked: &[Checked<'_>]) -> String {
    let exercises: Vec<_> = checked
        .iter()
        .map(|c| {
            let (passed, total) = c.score();
            let tests: Vec<_> = c
                .results
                .iter()
                .map(|(name, outcome)| {
                    let (outcome, message) = match outcome {
                        Outcome::Passed => ("passed", None),
                        Outcome::Failed(message) => ("failed", Some(message.as_str())),
                        Outcome::Unfinished => ("unfinished", Some("did not finish")),
                    };
                    json!({ "name": short(name), "outcome": outcome, "message": message })
                })
                .collect();
            json!({
                "number": c.exercise.number,
                "title": c.exercise.title,
                "file": c.exercise.starter_path(),
                "solved": c.solved(),
                "passed": passed,
                "total": total,
                "tests": tests,
            })
        })
        .collect();
    let solved = checked.iter().filter(|c| c.solved()).count();
    let document = json!({
        "exercises": exercises,
        "solved": solved,
        "checked": checked.len(),
    });
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

/// JUnit XML: a test suite per exercise, a test case per test, a
/// `<failure>` (or `<error>`, for a test that never finished) with the
/// message.
pub fn junit(checked: &[Checked<'_>]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let (tests, failures) = checked.iter().fold((0, 0), |(t, f), c| {
        let (passed, total) = c.score();
        (t + total, f + total - passed)
    });
    let _ = writeln!(
        xml,
        "<testsuites name=\"exercises\" tests=\"{tests}\" failures=\"{failures}\">"
    );
    for c in checked {
        let (passed, total) = c.score();
        let module = c.exercise.module();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{total}\" failures=\"{}\">",
            escape(&module),
            total - passed
        );
        for (name, outcome) in &c.results {
            let case = format!(
                "<testcase classname=\"{}\" name=\"{}\"",
                escape(&module),
                escape(short(name))
            );
            match outcome {
                Outcome::Passed => {
                    let _ = writeln!(xml, "    {case}/>");
                }
                Outcome::Failed(message) => {
                    let first = message.lines().next().unwrap_or_default();
                    let _ = writeln!(
                        xml,
                        "    {case}>\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                        escape(first),
                        escape(message)
                    );
                }
                Outcome::Unfinished => {
                    let _ = writeln!(
                        xml,
                        "    {case}>\n      <error message=\"did not finish\">stopped after the time limit</error>\n    </testcase>"
                    );
                }
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Text for XML content and attribute values; characters XML 1.0 cannot
/// hold at all (control characters a panic message might carry) become
/// U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    fn sample() -> Vec<Checked<'static>> {
        let results: Results = [
            ("ex11_semaphore::a".to_string(), Outcome::Passed),
            (
                "ex11_semaphore::b".to_string(),
                Outcome::Failed("left <1> & \"2\"\nat t.rs:1:1".into()),
            ),
            ("ex11_semaphore::c".to_string(), Outcome::Unfinished),
        ]
        .into_iter()
        .collect();
        let done: Results = [("ex10_select::x".to_string(), Outcome::Passed)]
            .into_iter()
            .collect();
        vec![
            Checked {
                exercise: catalog::find("10").unwrap(),
                results: done,
            },
            Checked {
                exercise: catalog::find("11").unwrap(),
                results,
            },
        ]
    }

    #[test]
    fn json_has_every_test_and_the_totals() {
        let value: serde_json::Value = serde_json::from_str(&json(&sample())).unwrap();
        assert_eq!(value["solved"], 1);
        assert_eq!(value["checked"], 2);
        let eleven = &value["exercises"][1];
        assert_eq!(eleven["number"], "11");
        assert_eq!(eleven["file"], "examples/exercises/src/ex11_semaphore.rs");
        assert_eq!(
            (eleven["passed"].clone(), eleven["total"].clone()),
            (1.into(), 3.into())
        );
        assert_eq!(eleven["solved"], false);
        assert_eq!(
            eleven["tests"],
            json!([
                { "name": "a", "outcome": "passed", "message": null },
                { "name": "b", "outcome": "failed", "message": "left <1> & \"2\"\nat t.rs:1:1" },
                { "name": "c", "outcome": "unfinished", "message": "did not finish" },
            ])
        );
    }

    #[test]
    fn junit_escapes_and_counts() {
        assert_eq!(
            junit(&sample()),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<testsuites name=\"exercises\" tests=\"4\" failures=\"2\">
  <testsuite name=\"ex10_select\" tests=\"1\" failures=\"0\">
    <testcase classname=\"ex10_select\" name=\"x\"/>
  </testsuite>
  <testsuite name=\"ex11_semaphore\" tests=\"3\" failures=\"2\">
    <testcase classname=\"ex11_semaphore\" name=\"a\"/>
    <testcase classname=\"ex11_semaphore\" name=\"b\">
      <failure message=\"left &lt;1&gt; &amp; &quot;2&quot;\">left &lt;1&gt; &amp; &quot;2&quot;
at t.rs:1:1</failure>
    </testcase>
    <testcase classname=\"ex11_semaphore\" name=\"c\">
      <error message=\"did not finish\">stopped after the time limit</error>
    </testcase>
  </testsuite>
</testsuites>
"
        );
        assert_eq!(escape("a\u{1b}b"), "a\u{FFFD}b");
    }
}
