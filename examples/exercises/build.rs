//! With the `wrong` feature: the planted wrong answers of wrong/, each a
//! reference solution with one change, written to OUT_DIR for src/lib.rs
//! to include. A plant is the change alone (wrong/exNN_name.plant), not a
//! second copy of the solution, so a solution that changes carries its
//! plant along, and a plant whose text the solution no longer holds stops
//! the build with a message naming it.

use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=wrong");
    println!("cargo::rerun-if-changed=solutions");
    if std::env::var_os("CARGO_FEATURE_WRONG").is_none() {
        return;
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let plants = std::fs::read_dir("wrong").expect("examples/exercises/wrong/");
    for plant in plants {
        let path = plant.expect("a readable wrong/").path();
        if path.extension().is_none_or(|e| e != "plant") {
            continue;
        }
        let module = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a plant's name");
        let text = std::fs::read_to_string(&path).expect("a readable plant");
        let (replace, with) = parse(&text).unwrap_or_else(|| {
            panic!(
                "{}: needs a `--- replace` and a `+++ with` section",
                path.display()
            )
        });
        let solution_path = Path::new("solutions").join(format!("{module}.rs"));
        let solution = std::fs::read_to_string(&solution_path).expect("the plant's solution");
        assert_eq!(
            solution.matches(replace.as_str()).count(),
            1,
            "{}: its `--- replace` text must occur exactly once in {}",
            path.display(),
            solution_path.display()
        );
        // `include!` takes items, not a file's inner doc comment.
        let body: String = solution
            .replacen(replace.as_str(), &with, 1)
            .lines()
            .filter(|line| !line.starts_with("//!"))
            .map(|line| format!("{line}\n"))
            .collect();
        std::fs::write(Path::new(&out).join(format!("{module}.rs")), body).expect("OUT_DIR");
    }
}

/// The two sections of a plant: the text to replace and its replacement.
/// Lines starting with `#` before them say what the trap is.
fn parse(text: &str) -> Option<(String, String)> {
    let (_, rest) = text.split_once("--- replace\n")?;
    let (replace, with) = rest.split_once("+++ with\n")?;
    Some((replace.to_string(), with.to_string()))
}
