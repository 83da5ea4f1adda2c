//! Two builds of the exercises put other code in the learners' place, as
//! one generated file of modules that src/lib.rs includes:
//!
//! - `wrong`: every exercise's reference solution, with the planted wrong
//!   answer of one round in place where that exercise has one
//!   (wrong/exNN_name.R.plant, R the round that `EXERCISES_WRONG_ROUND`
//!   names, 1 if unset), in OUT_DIR/wrong.rs. `verify` builds one round at
//!   a time: an exercise with two plants needs two builds, since its
//!   module can hold only one wrong answer at once. A plant is the change
//!   alone, not a second copy of the solution, so a solution that changes
//!   carries its plants along, and a plant whose text the solution no
//!   longer holds stops the build with a message naming it.
//! - `graded`: a student's files (`EXERCISES_GRADE_FROM`, the src/ folder
//!   of their copy), in OUT_DIR/graded.rs, so that `grade` runs this
//!   tree's tests and runner on them: nothing else of the student's copy
//!   is read.

use std::path::Path;

fn main() {
    // Only the folders there are: a class copy has no solutions/ or
    // wrong/, and a folder that is watched and missing reruns this script
    // on every build.
    for folder in ["wrong", "solutions"] {
        if Path::new(folder).is_dir() {
            println!("cargo::rerun-if-changed={folder}");
        }
    }
    println!("cargo::rerun-if-env-changed=EXERCISES_WRONG_ROUND");
    println!("cargo::rerun-if-env-changed=EXERCISES_GRADE_FROM");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    if std::env::var_os("CARGO_FEATURE_WRONG").is_some() {
        std::fs::write(Path::new(&out).join("wrong.rs"), wrong()).expect("OUT_DIR");
    }
    if std::env::var_os("CARGO_FEATURE_GRADED").is_some() {
        std::fs::write(Path::new(&out).join("graded.rs"), graded()).expect("OUT_DIR");
    }
}

/// The exercises' modules, `exNN_name`, as files of `folder` name them.
fn modules_in(folder: &Path) -> Vec<String> {
    let mut modules: Vec<String> = std::fs::read_dir(folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|entry| entry.expect("a readable folder").path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .filter(|stem| stem.starts_with("ex"))
        .collect();
    modules.sort();
    modules
}

/// The solutions, with the plants of this round.
fn wrong() -> String {
    let round: u32 = match std::env::var("EXERCISES_WRONG_ROUND") {
        Ok(round) => round
            .parse()
            .expect("EXERCISES_WRONG_ROUND is a round's number"),
        Err(_) => 1,
    };
    let mut wrong = String::new();
    for module in modules_in(Path::new("solutions")) {
        let solution_path = Path::new("solutions").join(format!("{module}.rs"));
        let mut solution = std::fs::read_to_string(&solution_path).expect("a readable solution");
        let plant_path = Path::new("wrong").join(format!("{module}.{round}.plant"));
        if let Ok(text) = std::fs::read_to_string(&plant_path) {
            let (replace, with) = parse(&text).unwrap_or_else(|| {
                panic!(
                    "{}: needs a `--- replace` and a `+++ with` section",
                    plant_path.display()
                )
            });
            assert_eq!(
                solution.matches(replace.as_str()).count(),
                1,
                "{}: its `--- replace` text must occur exactly once in {}",
                plant_path.display(),
                solution_path.display()
            );
            solution = solution.replacen(replace.as_str(), &with, 1);
        }
        wrong.push_str(&as_inline_module(&module, &solution));
    }
    wrong
}

/// A student's files, one for each exercise this tree has.
fn graded() -> String {
    let from = std::env::var("EXERCISES_GRADE_FROM")
        .expect("the graded feature reads the student's src/ from EXERCISES_GRADE_FROM");
    let from = Path::new(&from);
    println!("cargo::rerun-if-changed={}", from.display());
    let mut graded = String::new();
    for module in modules_in(Path::new("src")) {
        let path = from.join(format!("{module}.rs"));
        let file = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("the student's {}: {e}", path.display()));
        graded.push_str(&as_inline_module(&module, &file));
    }
    graded
}

/// `pub mod MODULE { ... }` holding `file`: its inner doc comment dropped,
/// and its inner attributes (`#![allow(unsafe_code)]`) made the module's
/// own, since `include!` takes items only.
fn as_inline_module(module: &str, file: &str) -> String {
    let mut attributes = String::new();
    let mut body = String::new();
    for line in file.lines() {
        if line.starts_with("//!") {
            continue;
        }
        match line.strip_prefix("#![") {
            Some(rest) => attributes.push_str(&format!("#[{rest}\n")),
            None => body.push_str(&format!("{line}\n")),
        }
    }
    format!("{attributes}pub mod {module} {{\n{body}}}\n")
}

/// The two sections of a plant: the text to replace and its replacement.
/// Lines starting with `#` before them say what the trap is.
fn parse(text: &str) -> Option<(String, String)> {
    let (_, rest) = text.split_once("--- replace\n")?;
    let (replace, with) = rest.split_once("+++ with\n")?;
    Some((replace.to_string(), with.to_string()))
}
