//! `handout DIR`: the class copy of the repository. Every file git tracks
//! or would track, but for the solutions and the planted wrong answers; the book's
//! appendix without its Solution folds; and a history of one commit,
//! tagged `starters` (what `reset` goes back to), so that no solution is
//! in any file or any commit. The copy builds, and `cargo test --workspace`
//! passes there: the catalog's tests know a class copy.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness;

/// What a class copy leaves out, from the repository's root.
const LEFT_OUT: [&str; 2] = ["examples/exercises/solutions/", "examples/exercises/wrong/"];

/// The appendix whose Solution folds are taken out.
const APPENDIX: &str = "book/src/appendix/exercises.md";

/// Writes the class copy to `dir`, which must not exist or be empty.
pub fn write(dir: &Path) -> Result<bool, String> {
    let root = harness::crate_dir()
        .join("../..")
        .canonicalize()
        .map_err(|e| format!("the repository: {e}"))?;
    if dir.exists() && dir.read_dir().map_or(true, |mut d| d.next().is_some()) {
        return Err(format!(
            "{} exists and is not empty: give a new folder",
            dir.display()
        ));
    }
    // What git tracks, and new files it would track: the work tree as a
    // commit would hold it.
    let files = git(
        &root,
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
    )?;
    let mut copied = 0;
    for file in files.split('\0').filter(|f| !f.is_empty()) {
        if LEFT_OUT.iter().any(|out| file.starts_with(out)) {
            continue;
        }
        let (from, to) = (root.join(file), dir.join(file));
        // A file git tracks may be deleted in the work tree, unstaged.
        if !from.is_file() {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", to.display()))?;
        copied += 1;
    }
    let appendix = dir.join(APPENDIX);
    let text = std::fs::read_to_string(&appendix).map_err(|e| format!("{APPENDIX}: {e}"))?;
    std::fs::write(&appendix, without_solutions(&text)).map_err(|e| format!("{APPENDIX}: {e}"))?;
    let leaks = solutions_in(&root, dir)?;
    if !leaks.is_empty() {
        return Err(format!(
            "the class copy would hold a solution: {}",
            leaks.join(", ")
        ));
    }
    git(dir, &["init", "--quiet"])?;
    git(dir, &["add", "--all"])?;
    git(
        dir,
        &[
            "-c",
            "user.name=exercises handout",
            "-c",
            "user.email=handout@localhost",
            "commit",
            "--quiet",
            "--message",
            "The course, as handed out: the starters, the tests and the runner",
        ],
    )?;
    git(dir, &["tag", "starters"])?;
    println!(
        "A class copy in {}: {copied} files, one commit (tagged `starters`), no \
         solutions. Students run `cargo run -p exercises -- list` there; grade a \
         student's copy from this tree with `cargo run -p exercises -- grade COPY`.",
        dir.display()
    );
    Ok(true)
}

/// The appendix without its `<details>` folds whose summary says
/// "Solution", and the blank line after each.
fn without_solutions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let folds_a_solution = line == "<details>"
            && lines
                .peek()
                .is_some_and(|next| next.starts_with("<summary>Solution"));
        if !folds_a_solution {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        for inner in lines.by_ref() {
            if inner == "</details>" {
                break;
            }
        }
        if lines.peek() == Some(&"") {
            lines.next();
        }
    }
    out
}

/// The solutions whose text a file of the copy holds, by name.
fn solutions_in(root: &Path, copy: &Path) -> Result<Vec<String>, String> {
    let solutions: Vec<(String, String)> = std::fs::read_dir(root.join(LEFT_OUT[0]))
        .map_err(|e| format!("solutions/: {e}"))?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let text = std::fs::read_to_string(&path).ok()?;
            // Past the header, which the starter shares.
            let body = text.lines().skip_while(|l| l.starts_with("//!")).collect();
            Some((path.file_name()?.to_str()?.to_string(), body))
        })
        .collect();
    let mut leaks = Vec::new();
    for file in walk(copy) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let text: String = text.lines().skip_while(|l| l.starts_with("//!")).collect();
        for (name, body) in &solutions {
            if !body.is_empty() && text.contains(body.as_str()) {
                leaks.push(format!("{name} in {}", file.display()));
            }
        }
    }
    Ok(leaks)
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// Runs git in `dir`; its output, or a sentence saying what failed.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("could not run git: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("git {}: {e}", args.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_solution_folds_go_and_the_rest_stays() {
        let appendix = "## Exercise 01 {#e1}\n\nGoal.\n\n<details>\n<summary>Hint 1</summary>\n\n\
                        A hint.\n</details>\n\n<details>\n<summary>Solution (x.rs)</summary>\n\n\
                        ```rust\n{{#include x.rs}}\n```\n</details>\n\n## Exercise 02 {#e2}\n";
        assert_eq!(
            without_solutions(appendix),
            "## Exercise 01 {#e1}\n\nGoal.\n\n<details>\n<summary>Hint 1</summary>\n\n\
             A hint.\n</details>\n\n## Exercise 02 {#e2}\n"
        );
    }
}
