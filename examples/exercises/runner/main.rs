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
//! hint NN 2     the second: what each of your failing tests shows
//! hint NN 3     the third: the recipe
//! verify        for CI: every starter fails its tests, every solution passes,
//!               every planted wrong answer is caught
//! reset NN      exercise NN's starter back as the course gave it
//! handout DIR   a class copy of the repository, without the solutions
//! grade COPY    a student's copy graded: their files, this tree's tests
//! ```

mod catalog;
mod handout;
mod harness;
mod libtest;
mod report;
mod status;
mod watch;

use std::path::{Path, PathBuf};
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
    /// `hint NN 2` runs its tests and says what each failing one shows;
    /// `hint NN 3` is the recipe.
    Hint {
        /// The exercise's number, as in 03.
        number: String,
        /// Which hint: 1 (the default), 2 or 3.
        #[arg(default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=3))]
        level: u8,
    },
    /// Check that every starter fails, every solution passes, and every
    /// planted wrong answer is caught (CI).
    Verify,
    /// Put exercise NN's starter back, as the course gave it (a class
    /// copy's `starters` tag, else the last commit); your version is kept
    /// beside cargo's target folder.
    Reset {
        /// The exercise's number, as in 03.
        number: String,
    },
    /// Write a class copy of the repository to DIR: no solutions, no
    /// planted wrong answers, no solution in the book, a fresh history.
    Handout {
        /// A folder that does not exist yet, or is empty.
        dir: PathBuf,
    },
    /// Grade a student's copy: its src/exNN_*.rs files only, against this
    /// tree's tests and runner (editing the tests or the runner in the
    /// copy changes nothing).
    Grade {
        /// The student's copy of the repository (or of the class copy).
        copy: PathBuf,
        /// text for a person; json or junit (XML) for an autograder.
        #[arg(long, value_enum, default_value_t = Format::Junit)]
        format: Format,
    },
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
        Command::Reset { number } => with_exercise(&number, reset),
        Command::Handout { dir } => handout::write(&dir),
        Command::Grade { copy, format } => grade(&copy, format),
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
    report_on(&binary, exercises, format, true)
}

/// Grades the student's copy at `copy`: every exercise, their files in
/// this tree's place.
fn grade(copy: &Path, format: Format) -> Result<bool, String> {
    let src = copy.join("examples/exercises/src");
    if !src.is_dir() {
        return Err(format!(
            "{} is not a copy of the course: it has no examples/exercises/src/",
            copy.display()
        ));
    }
    let src = src
        .canonicalize()
        .map_err(|e| format!("{}: {e}", src.display()))?;
    let binary = harness::build(Side::Graded(Box::leak(src.into_boxed_path())))?;
    let all: Vec<&Exercise> = EXERCISES.iter().collect();
    report_on(&binary, &all, format, false)
}

/// Runs `exercises`' tests in `binary` and prints them in `format`; true
/// if every one is solved. With `keep`, each score is remembered for
/// `list` (the learner's own files, not a student's being graded).
fn report_on(
    binary: &TestBinary,
    exercises: &[&'static Exercise],
    format: Format,
    keep: bool,
) -> Result<bool, String> {
    let mut remembered = Remembered::load();
    let mut checked = Vec::with_capacity(exercises.len());
    for &exercise in exercises {
        let results = binary.run(&exercise.module())?;
        if results.is_empty() {
            return Err(format!("no tests found for {}", exercise.module()));
        }
        if keep {
            remember(&mut remembered, exercise, &results);
        }
        let one = Checked { exercise, results };
        if format == Format::Text {
            print_check(&one);
        }
        checked.push(one);
    }
    if keep {
        remembered.save();
    }
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

/// Puts the starter back from git: the class copy's first commit (tag
/// `starters`) where there is one, else the last commit. The learner's
/// version goes to target/exercises-reset/ first, so nothing is lost.
fn reset(exercise: &'static Exercise) -> Result<bool, String> {
    let root = harness::crate_dir().join("../..");
    let path = exercise.starter_path();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .output()
            .map_err(|e| format!("could not run git: {e}"))
    };
    let tagged = git(&["rev-parse", "--quiet", "--verify", "refs/tags/starters"])?
        .status
        .success();
    let base = if tagged { "starters" } else { "HEAD" };
    let shown = git(&["show", &format!("{base}:{path}")])?;
    if !shown.status.success() {
        return Err(format!(
            "git has no {path} at {base}: {}",
            String::from_utf8_lossy(&shown.stderr).trim()
        ));
    }
    let file = root.join(&path);
    let mine = std::fs::read(&file).map_err(|e| format!("{path}: {e}"))?;
    if mine == shown.stdout {
        println!("{path} is the starter already: nothing to reset.");
        return Ok(true);
    }
    let kept_dir = root.join("target/exercises-reset");
    std::fs::create_dir_all(&kept_dir).map_err(|e| format!("{}: {e}", kept_dir.display()))?;
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let kept = kept_dir.join(format!("{}.{seconds}.rs", exercise.module()));
    std::fs::write(&kept, &mine).map_err(|e| format!("{}: {e}", kept.display()))?;
    std::fs::write(&file, &shown.stdout).map_err(|e| format!("{path}: {e}"))?;
    println!(
        "{path} is the starter again ({base}); your version is in {}.",
        kept.display()
    );
    Ok(true)
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
        // A class copy has no solutions to compare with.
        let root = harness::crate_dir().join("../..");
        let compare = if root.join(exercise.solution_path()).is_file() {
            format!(" Compare with {}.", exercise.solution_path())
        } else {
            String::new()
        };
        println!(
            "All {total} tests pass: exercise {} is solved.{compare}",
            exercise.number,
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

/// Checks, then checks again after every save, until Ctrl-C. Enter shows
/// the next hint. Watched: the file the learner edits, the files of the
/// exercises it builds on, the helpers, and the exercise's tests (a
/// teacher's change to them counts too).
fn watch(exercise: &'static Exercise) -> Result<bool, String> {
    let dir = harness::crate_dir();
    let mut files = vec![
        dir.join(format!("src/{}.rs", exercise.module())),
        dir.join("src/support.rs"),
        dir.join(format!("tests/check/{}.rs", exercise.module())),
    ];
    for number in exercise.builds_on {
        let other = catalog::find(number).ok_or("builds_on names no exercise")?;
        files.push(dir.join(format!("src/{}.rs", other.module())));
    }
    let mut watched = watch::Watched::new(files);
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut level = 0;
    let mut checking = true;
    loop {
        if checking {
            // A file that does not compile is reported, and watched all
            // the same: the next save may mend it.
            if let Err(message) = check(&[exercise], Format::Text) {
                println!("error: {message}");
            }
        }
        println!();
        println!(
            "Watching {}: save it to check again; Enter for {}; Ctrl-C to stop.",
            exercise.starter_path(),
            if level < 3 {
                "the next hint"
            } else {
                "the recipe again"
            }
        );
        match watched.wait_or_line(&lines) {
            watch::Woken::Saved => {
                println!();
                println!("Saved: checking again.");
                println!();
                checking = true;
            }
            watch::Woken::Line(_) => {
                level = (level + 1).min(3);
                println!();
                hint(exercise, level)?;
                checking = false;
            }
        }
    }
}

/// Hints come in three steps, so that a learner earns each: the first
/// names the idea and where to look; the second runs the tests and says,
/// for each that fails, what its failure shows; the third is the recipe.
fn hint(exercise: &Exercise, level: u8) -> Result<bool, String> {
    println!("{} {}", exercise.heading(), exercise.difficulty());
    println!();
    println!("{}", wrap(&format!("Goal: {}", exercise.goal), 76));
    println!();
    match level {
        1 => println!("{}", wrap(&format!("Hint 1 of 3: {}", exercise.nudge), 76)),
        2 => {
            let binary = harness::build(Side::Starter)?;
            let results = binary.run(&exercise.module())?;
            let failing: Vec<&str> = results
                .iter()
                .filter(|(_, outcome)| **outcome != Outcome::Passed)
                .filter_map(|(name, _)| name.split_once("::").map(|(_, test)| test))
                .collect();
            if failing.is_empty() {
                println!("Hint 2 of 3: every test passes. Nothing to point at: it is solved.");
            } else {
                println!("Hint 2 of 3, what each failing test shows:");
                for test in failing {
                    println!();
                    println!("  {test}");
                    println!("{}", indent(&wrap(pointer(exercise, test), 72), "    "));
                }
            }
        }
        _ => println!("{}", wrap(&format!("Hint 3 of 3: {}", exercise.hint), 76)),
    }
    println!();
    if level < 3 {
        println!(
            "Still stuck after trying? cargo run -p exercises -- hint {} {}",
            exercise.number,
            level + 1
        );
    }
    println!(
        "Read the chapter book/src/{} and the file you edit, {}.",
        exercise.chapter,
        exercise.starter_path()
    );
    println!(
        "The book's entry: book/src/appendix/exercises.md#{}",
        exercise.anchor()
    );
    Ok(true)
}

/// What a failing `test` of `exercise` shows.
fn pointer(exercise: &Exercise, test: &str) -> &'static str {
    exercise
        .pointers
        .iter()
        .find(|(name, _)| *name == test)
        .map_or(
            "(no pointer for this test: its message says what it saw)",
            |(_, text)| text,
        )
}

/// Every line of `text` with `prefix` in front.
fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| format!("{prefix}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
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
        Side::Solution | Side::Wrong(_) | Side::Graded(_) => total > 0 && passed == total,
    };
    let mut text = match side {
        Side::Starter => format!("fails {failed} of {total}"),
        Side::Solution | Side::Wrong(_) | Side::Graded(_) => {
            format!("passes {passed} of {total}")
        }
    };
    if unfinished > 0 {
        text.push_str(&format!(", {unfinished} hung"));
    }
    (text, ok)
}

fn verify() -> Result<bool, String> {
    if !harness::crate_dir().join("solutions").is_dir() {
        return Err(
            "verify checks the solutions and the planted wrong answers, which a class \
             copy does not have: `check --all` checks your own files"
                .into(),
        );
    }
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
