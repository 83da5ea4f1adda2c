//! What `list` remembers between runs, so that it answers in a moment
//! rather than running all sixteen exercises' tests (16 s on two cores).
//!
//! Each exercise's score is kept with a fingerprint of the files that
//! decide it: the learner's file, its tests, and what every exercise
//! shares (the support module, the tests' common code, the crate's
//! manifest). While the fingerprint matches, the score stands; an edit to
//! any of those files runs that exercise's tests again. A change outside
//! the exercises crate (the runtime, a stage) is not seen: `list --fresh`
//! runs everything. A run that hung is never remembered.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::catalog::Exercise;
use crate::harness;

/// The files besides an exercise's own that its score depends on.
const SHARED: &[&str] = &[
    "Cargo.toml",
    "src/lib.rs",
    "src/support.rs",
    "tests/check/main.rs",
    "tests/check/common.rs",
];

/// A score and the fingerprint it was measured at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Score {
    pub fingerprint: String,
    pub passed: usize,
    pub total: usize,
}

/// The remembered scores, by module.
pub struct Remembered {
    path: Option<PathBuf>,
    scores: BTreeMap<String, Score>,
}

impl Remembered {
    /// The scores kept beside the runner's executable (in cargo's target
    /// directory, so `cargo clean` forgets them too). A missing or
    /// unreadable file remembers nothing.
    pub fn load() -> Remembered {
        let path = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.join("exercises-status.json")));
        let mut remembered = match &path {
            Some(path) => Remembered::read(path),
            None => Remembered::empty(),
        };
        remembered.path = path;
        remembered
    }

    fn empty() -> Remembered {
        Remembered {
            path: None,
            scores: BTreeMap::new(),
        }
    }

    fn read(path: &Path) -> Remembered {
        let mut remembered = Remembered::empty();
        let Ok(text) = std::fs::read_to_string(path) else {
            return remembered;
        };
        let Ok(Value::Object(entries)) = serde_json::from_str::<Value>(&text) else {
            return remembered;
        };
        for (module, entry) in entries {
            let score = (|| {
                Some(Score {
                    fingerprint: entry["fingerprint"].as_str()?.to_string(),
                    passed: usize::try_from(entry["passed"].as_u64()?).ok()?,
                    total: usize::try_from(entry["total"].as_u64()?).ok()?,
                })
            })();
            if let Some(score) = score {
                remembered.scores.insert(module, score);
            }
        }
        remembered
    }

    /// The exercise's score, if it was measured at `fingerprint`.
    pub fn get(&self, exercise: &Exercise, fingerprint: &str) -> Option<&Score> {
        self.scores
            .get(&exercise.module())
            .filter(|score| score.fingerprint == fingerprint)
    }

    pub fn set(&mut self, exercise: &Exercise, score: Score) {
        self.scores.insert(exercise.module(), score);
    }

    /// Writes the scores back. Failing to is not worth an error: the next
    /// `list` runs the tests again.
    pub fn save(&self) {
        let Some(path) = &self.path else { return };
        let entries: serde_json::Map<String, Value> = self
            .scores
            .iter()
            .map(|(module, s)| {
                let entry = json!({
                    "fingerprint": s.fingerprint, "passed": s.passed, "total": s.total
                });
                (module.clone(), entry)
            })
            .collect();
        let text = serde_json::to_string_pretty(&Value::Object(entries)).unwrap_or_default();
        let _ = std::fs::write(path, text);
    }
}

/// A hash of the files that decide the exercise's score, or `None` if one
/// cannot be read (then nothing is remembered for it).
pub fn fingerprint(exercise: &Exercise) -> Option<String> {
    fingerprint_in(harness::crate_dir(), exercise)
}

fn fingerprint_in(dir: &Path, exercise: &Exercise) -> Option<String> {
    let module = exercise.module();
    let own = [
        format!("src/{module}.rs"),
        format!("tests/check/{module}.rs"),
    ];
    let mut hasher = DefaultHasher::new();
    for file in own.iter().map(String::as_str).chain(SHARED.iter().copied()) {
        let bytes = std::fs::read(dir.join(file)).ok()?;
        hasher.write(file.as_bytes());
        hasher.write_usize(bytes.len());
        hasher.write(&bytes);
    }
    Some(format!("{:016x}", hasher.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    /// A throwaway copy of the files a fingerprint reads.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("exercises-{name}-{}", std::process::id()));
        for file in SHARED.iter().map(|f| f.to_string()).chain([
            "src/ex10_select.rs".into(),
            "tests/check/ex10_select.rs".into(),
        ]) {
            let to = dir.join(&file);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(&to, format!("// {file}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn an_edit_to_the_exercise_or_what_it_shares_changes_the_fingerprint() {
        let dir = scratch("fingerprint");
        let ten = catalog::find("10").unwrap();
        let first = fingerprint_in(&dir, ten).unwrap();
        assert_eq!(fingerprint_in(&dir, ten).unwrap(), first);
        std::fs::write(dir.join("src/ex10_select.rs"), "// solved\n").unwrap();
        let second = fingerprint_in(&dir, ten).unwrap();
        assert_ne!(second, first);
        std::fs::write(dir.join("src/support.rs"), "// changed\n").unwrap();
        assert_ne!(fingerprint_in(&dir, ten).unwrap(), second);
        // Another exercise's files are not there: nothing to remember.
        assert_eq!(fingerprint_in(&dir, catalog::find("11").unwrap()), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn scores_survive_a_save_and_a_bad_file_remembers_nothing() {
        let dir = scratch("scores");
        let path = dir.join("status.json");
        let ten = catalog::find("10").unwrap();
        let score = Score {
            fingerprint: "abc".into(),
            passed: 2,
            total: 3,
        };
        let mut remembered = Remembered::read(&path);
        remembered.path = Some(path.clone());
        remembered.set(ten, score.clone());
        remembered.save();
        let again = Remembered::read(&path);
        assert_eq!(again.get(ten, "abc"), Some(&score));
        assert_eq!(again.get(ten, "abd"), None);
        std::fs::write(&path, "{ not json").unwrap();
        assert_eq!(Remembered::read(&path).get(ten, "abc"), None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
