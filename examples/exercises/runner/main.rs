//! The exercise runner: `cargo run -p exercises -- COMMAND`.
//!
//! ```text
//! list          every exercise, its difficulty and chapter, and whether your
//!               version passes its tests (remembered while your files do
//!               not change; list --fresh runs them all)
//! check NN      runs exercise NN's tests against your src/exNN_*.rs and says
//!               what passes and what still fails
//! check --all --format json|junit
//!               every exercise, for an autograder
//! watch NN      check NN, then again each time you save the file
//! hint NN       the first hint for exercise NN: which idea, where to look
//! hint NN 2     the second: the recipe
//! verify        for CI: every starter fails its tests, every solution passes,
//!               every planted wrong answer is caught
//! ```

mod catalog;
mod harness;
mod libtest;
mod report;
mod status;
mod watch;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use catalog::{EXERCISES, Exercise, PLANTED};
use harness::{Side, TestBinary};
use libtest::{Outcome, Results};
use report::Checked;
use status::{Remembered, Score};

/// The exercise runner: `cargo run -p exercises -- COMMAND`.
#[derive(Debug, Parser)]
#[command(name = "exercises", bin_name = "cargo run -p exercises --")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The exercises, with difficulty, chapter and your status.
    List {
        /// Run every exercise's tests, rather than trust the scores
        /// remembered from runs on the same files.
        #[arg(long)]
        fresh: bool,
    },
    /// Run exercise NN's tests against your code (src/exNN_*.rs).
    Check {
        /// The exercise's number, as in 03.
        #[arg(required_unless_present = "all")]
        number: Option<String>,
        /// Every exercise.
        #[arg(long, conflicts_with = "number")]
        all: bool,
        /// text for a person; json or junit (XML) for an autograder.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Check exercise NN, then again each time its file is saved.
    Watch {
        /// The exercise's number, as in 03.
        number: String,
    },
    /// Show exercise NN's first hint (which idea applies, where to look);
    /// `hint NN 2` shows the second (the recipe).
    Hint {
        /// The exercise's number, as in 03.
        number: String,
        /// Which hint: 1 (the default) or 2.
        #[arg(default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
        level: u8,
    },
    /// Check that every starter fails, every solution passes, and every
    /// planted wrong answer is caught (CI).
    Verify,
}

/// How `check` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Junit,
}

fn main() -> ExitCode {
    let result = match Args::parse().command {
        Command::List { fresh } => list(fresh),
        Command::Check {
            number: Some(number),
            format,
            ..
        } => with_exercise(&number, |e| check(&[e], format)),
        Command::Check { format, .. } => {
            let all: Vec<&Exercise> = EXERCISES.iter().collect();
            check(&all, format)
        }
        Command::Watch { number } => with_exercise(&number, watch),
        Command::Hint { number, level } => with_exercise(&number, |e| hint(e, level)),
        Command::Verify => verify(),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn with_exercise(
    number: &str,
    command: impl FnOnce(&'static Exercise) -> Result<bool, String>,
) -> Result<bool, String> {
    match catalog::find(number) {
        Some(exercise) => command(exercise),
        None => Err(format!(
            "no exercise {number:?}: they are numbered 01 to {:02} (see `list`)",
            EXERCISES.len()
        )),
    }
}

/// Passed and total, for one exercise's results.
fn score(results: &Results) -> (usize, usize) {
    let passed = results.values().filter(|o| **o == Outcome::Passed).count();
    (passed, results.len())
}

/// Runs the exercises' tests and prints them in `format`; true if every
/// one is solved. Each score is remembered for `list`.
fn check(exercises: &[&'static Exercise], format: Format) -> Result<bool, String> {
    let binary = harness::build(Side::Starter)?;
    let mut remembered = Remembered::load();
    let mut checked = Vec::with_capacity(exercises.len());
    for &exercise in exercises {
        let results = binary.run(&exercise.module())?;
        if results.is_empty() {
            return Err(format!("no tests found for {}", exercise.module()));
        }
        remember(&mut remembered, exercise, &results);
        let one = Checked { exercise, results };
        if format == Format::Text {
            print_check(&one);
        }
        checked.push(one);
    }
    remembered.save();
    match format {
        Format::Text if checked.len() > 1 => {
            let solved = checked.iter().filter(|c| c.solved()).count();
            println!("{solved} of {} exercises solved.", checked.len());
        }
        Format::Text => {}
        Format::Json => println!("{}", report::json(&checked)),
        Format::Junit => print!("{}", report::junit(&checked)),
    }
    Ok(checked.iter().all(Checked::solved))
}

/// One exercise's tests, PASS or FAIL with the message, for a person.
fn print_check(checked: &Checked<'_>) {
    let exercise = checked.exercise;
    println!(
        "Exercise {} {}  {}",
        exercise.number,
        exercise.difficulty(),
        exercise.title
    );
    println!("  edit:  {}", exercise.starter_path());
    println!("  tests: {}", exercise.tests_path());
    println!();
    for (name, outcome) in &checked.results {
        let short = name.split_once("::").map_or(name.as_str(), |(_, t)| t);
        match outcome {
            Outcome::Passed => println!("  PASS  {short}"),
            Outcome::Failed(message) => {
                println!("  FAIL  {short}");
                for line in message.lines() {
                    println!("          {line}");
                }
            }
            Outcome::Unfinished => {
                println!("  FAIL  {short}\n          did not finish: stopped after the time limit")
            }
        }
    }
    println!();
    let (passed, total) = checked.score();
    if checked.solved() {
        println!(
            "All {total} tests pass: exercise {} is solved. Compare with {}.",
            exercise.number,
            exercise.solution_path()
        );
    } else {
        println!(
            "{passed} of {total} tests pass; {} still failing. Stuck? cargo run -p exercises -- hint {}",
            total - passed,
            exercise.number
        );
    }
}

/// Keeps a score for `list`, unless a test hung (a hang may be the
/// machine's, not the code's).
fn remember(remembered: &mut Remembered, exercise: &Exercise, results: &Results) {
    if results.values().any(|o| *o == Outcome::Unfinished) {
        return;
    }
    if let Some(fingerprint) = status::fingerprint(exercise) {
        let (passed, total) = score(results);
        remembered.set(
            exercise,
            Score {
                fingerprint,
                passed,
                total,
            },
        );
    }
}

/// Checks, then checks again after every save, until Ctrl-C.
fn watch(exercise: &'static Exercise) -> Result<bool, String> {
    let dir = harness::crate_dir();
    let file = dir.join(format!("src/{}.rs", exercise.module()));
    let mut watched = watch::Watched::new(vec![file, dir.join("src/support.rs")]);
    loop {
        // A file that does not compile is reported, and watched all the
        // same: the next save may mend it.
        if let Err(message) = check(&[exercise], Format::Text) {
            println!("error: {message}");
        }
        println!();
        println!(
            "Watching {}: save it to check again; Ctrl-C to stop.",
            exercise.starter_path()
        );
        watched.wait();
        println!();
        println!("{} changed: checking again.", exercise.starter_path());
        println!();
    }
}

/// Hints come in two steps, so that a learner earns the second: the first
/// names the idea and where to look, the second is the recipe.
fn hint(exercise: &Exercise, level: u8) -> Result<bool, String> {
    println!("{} {}", exercise.heading(), exercise.difficulty());
    println!();
    println!("{}", wrap(&format!("Goal: {}", exercise.goal), 76));
    println!();
    if level == 1 {
        println!("{}", wrap(&format!("Hint 1 of 2: {}", exercise.nudge), 76));
        println!();
        println!(
            "Still stuck after trying? cargo run -p exercises -- hint {} 2",
            exercise.number
        );
    } else {
        println!("{}", wrap(&format!("Hint 2 of 2: {}", exercise.hint), 76));
    }
    println!();
    println!(
        "Read the chapter book/src/{} and the file you edit, {}.",
        exercise.chapter,
        exercise.starter_path()
    );
    println!(
        "The book's entry (with the solution, folded): book/src/appendix/exercises.md#{}",
        exercise.anchor()
    );
    Ok(true)
}

fn list(fresh: bool) -> Result<bool, String> {
    let mut remembered = Remembered::load();
    // Built only if some score is not remembered.
    let mut binary: Option<TestBinary> = None;
    let mut scores = Vec::with_capacity(EXERCISES.len());
    let mut kept = 0;
    for exercise in EXERCISES {
        let fingerprint = status::fingerprint(exercise);
        let known = fingerprint
            .as_deref()
            .and_then(|f| remembered.get(exercise, f))
            .filter(|_| !fresh);
        if let Some(score) = known {
            kept += 1;
            scores.push((score.passed, score.total));
            continue;
        }
        let binary = match &mut binary {
            Some(binary) => binary,
            None => binary.insert(harness::build(Side::Starter)?),
        };
        let results = binary.run(&exercise.module())?;
        remember(&mut remembered, exercise, &results);
        scores.push(score(&results));
    }
    remembered.save();
    println!(
        "{:<3} {:<46} {:<4} {:<33} status",
        "no.", "exercise", "", "chapter"
    );
    let mut solved = 0;
    for (exercise, (passed, total)) in EXERCISES.iter().zip(scores) {
        let status = if total > 0 && passed == total {
            solved += 1;
            "done".to_string()
        } else {
            format!("{passed}/{total} tests pass")
        };
        println!(
            "{:<3} {:<46} {:<4} {:<33} {status}",
            exercise.number,
            exercise.title,
            exercise.difficulty(),
            exercise.chapter_title()
        );
    }
    println!();
    println!(
        "{solved} of {} solved. Start one with: cargo run -p exercises -- check NN",
        EXERCISES.len()
    );
    if kept > 0 {
        println!(
            "({kept} scores remembered from runs on the same files; `list --fresh` runs every test)"
        );
    }
    Ok(true)
}

/// `text` broken into lines of at most `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.join("\n")
}

/// One side of one exercise, as `verify` judges it.
fn verdict(side: Side, results: &Results) -> (String, bool) {
    let (passed, total) = score(results);
    let unfinished = results
        .values()
        .filter(|o| **o == Outcome::Unfinished)
        .count();
    let failed = total - passed;
    let ok = match side {
        // A starter must leave something to do, and must not hang doing it.
        Side::Starter => failed > 0 && unfinished == 0,
        Side::Solution | Side::Wrong(_) => total > 0 && passed == total,
    };
    let mut text = match side {
        Side::Starter => format!("fails {failed} of {total}"),
        Side::Solution | Side::Wrong(_) => format!("passes {passed} of {total}"),
    };
    if unfinished > 0 {
        text.push_str(&format!(", {unfinished} hung"));
    }
    (text, ok)
}

fn verify() -> Result<bool, String> {
    let starters = harness::build(Side::Starter)?;
    let solutions = harness::build(Side::Solution)?;
    let mut all_ok = true;
    // Tests for an exercise the catalog does not know would never be run.
    for module in starters.modules() {
        if !EXERCISES.iter().any(|e| e.module() == module) {
            println!("tests/check/{module}.rs: not an exercise in runner/catalog.rs");
            all_ok = false;
        }
    }
    println!(
        "{:<26} {:<22} {:<22} verdict",
        "exercise", "starter", "solution"
    );
    for exercise in EXERCISES {
        let starter_results = starters.run(&exercise.module())?;
        let solution_results = solutions.run(&exercise.module())?;
        let (starter, starter_ok) = verdict(Side::Starter, &starter_results);
        let (solution, solution_ok) = verdict(Side::Solution, &solution_results);
        let ok = starter_ok && solution_ok;
        all_ok &= ok;
        println!(
            "{:<26} {:<22} {:<22} {}",
            exercise.module(),
            starter,
            solution,
            if ok { "ok" } else { "WRONG" }
        );
        if !solution_ok {
            print_failures(&solution_results);
        }
    }
    println!();
    let mut rounds: Vec<u32> = PLANTED.iter().map(|p| p.round).collect();
    rounds.sort();
    rounds.dedup();
    for round in rounds {
        let wrong = harness::build(Side::Wrong(round))?;
        for planted in PLANTED.iter().filter(|p| p.round == round) {
            let exercise = catalog::find(planted.number)
                .ok_or_else(|| format!("PLANTED names no exercise {}", planted.number))?;
            let results = wrong.run(&exercise.module())?;
            let (caught, missed) = caught(planted.caught_by, &exercise.module(), &results);
            all_ok &= missed.is_empty();
            println!(
                "planted in {} ({}): {}",
                exercise.module(),
                planted.trap,
                if missed.is_empty() {
                    format!("caught by {}: ok", caught.join(", "))
                } else {
                    format!("NOT CAUGHT by {}: WRONG", missed.join(", "))
                }
            );
        }
    }
    println!();
    if all_ok {
        println!(
            "verify: all {} exercises OK: every starter fails its tests, every solution passes them, \
             every planted wrong answer is caught",
            EXERCISES.len()
        );
    } else {
        println!(
            "verify: FAILED: a starter passes (or hangs), a solution fails, or a planted wrong \
             answer passes; see WRONG above"
        );
    }
    Ok(all_ok)
}

/// Of the tests that must catch a planted wrong answer, those that failed
/// on it and those that did not (passed, hung, or do not exist).
fn caught<'a>(tests: &[&'a str], module: &str, results: &Results) -> (Vec<&'a str>, Vec<&'a str>) {
    tests.iter().partition(|test| {
        matches!(
            results.get(&format!("{module}::{test}")),
            Some(Outcome::Failed(_))
        )
    })
}

/// A solution's failing tests, with their messages, for CI logs.
fn print_failures(results: &Results) {
    for (name, outcome) in results {
        match outcome {
            Outcome::Failed(message) => println!("    {name}: {message}"),
            Outcome::Unfinished => println!("    {name}: did not finish"),
            Outcome::Passed => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_long_words_whole() {
        assert_eq!(wrap("aa bb cc dd", 5), "aa bb\ncc dd");
        assert_eq!(
            wrap("a `Transfer-Encoding` b", 6),
            "a\n`Transfer-Encoding`\nb"
        );
        assert_eq!(wrap("", 5), "");
    }

    #[test]
    fn verdicts() {
        let results = |outcomes: &[Outcome]| -> Results {
            outcomes
                .iter()
                .enumerate()
                .map(|(i, o)| (format!("t{i}"), o.clone()))
                .collect()
        };
        let failed = Outcome::Failed(String::new());
        let mixed = results(&[Outcome::Passed, failed.clone()]);
        assert_eq!(
            verdict(Side::Starter, &mixed),
            ("fails 1 of 2".to_string(), true)
        );
        assert_eq!(
            verdict(Side::Solution, &mixed),
            ("passes 1 of 2".to_string(), false)
        );
        let all = results(&[Outcome::Passed, Outcome::Passed]);
        assert!(
            !verdict(Side::Starter, &all).1,
            "a starter that passes is wrong"
        );
        assert!(verdict(Side::Solution, &all).1);
        let hung = results(&[failed, Outcome::Unfinished]);
        assert_eq!(
            verdict(Side::Starter, &hung),
            ("fails 2 of 2, 1 hung".to_string(), false)
        );
        assert!(
            !verdict(Side::Solution, &results(&[])).1,
            "no tests is no pass"
        );
    }

    #[test]
    fn a_planted_answer_is_caught_only_by_a_test_that_fails() {
        let results: Results = [
            ("m::a".to_string(), Outcome::Failed("no".into())),
            ("m::b".to_string(), Outcome::Passed),
            ("m::c".to_string(), Outcome::Unfinished),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            caught(&["a", "b", "c", "d"], "m", &results),
            (vec!["a"], vec!["b", "c", "d"])
        );
    }
}
