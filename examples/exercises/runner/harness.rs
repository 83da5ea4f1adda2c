//! Building the test binary once and running it, one exercise at a time,
//! with a time limit.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::libtest::{self, Results};

/// How long one exercise's tests may run. Each test guards itself at 30 s
/// (see tests/check/common.rs); this catches what the guard cannot, such
/// as a test blocked outside the runtime.
const RUN_LIMIT: Duration = Duration::from_secs(90);

/// Which code the tests run against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// src/exNN_*.rs: the learner's files.
    Starter,
    /// solutions/exNN_*.rs.
    Solution,
    /// The solutions, with the plants of one round of wrong/ in place
    /// of those that have one (wrong/exNN_*.R.plant, R the round).
    Wrong(u32),
    /// A student's files, from the src/ folder of their copy (`grade`).
    Graded(&'static Path),
}

impl Side {
    fn features(self) -> &'static str {
        match self {
            Side::Starter => "check",
            Side::Solution => "check,solutions",
            Side::Wrong(_) => "check,wrong",
            Side::Graded(_) => "check,graded",
        }
    }
}

/// The exercises' test binary, built for one side.
pub struct TestBinary {
    path: PathBuf,
    /// Every test it holds.
    tests: Vec<String>,
}

/// Cargo's target folder: `CARGO_TARGET_DIR`, or the workspace's.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate_dir().join("../../target"))
}

/// The exercises crate's directory.
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the test binary for `side` and lists its tests. Compiler
/// messages go to the terminal as cargo renders them. Fails with a
/// sentence that says what went wrong.
pub fn build(side: Side) -> Result<TestBinary, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    // Run from `cargo run`, the runner has the variables cargo sets for
    // the package it runs (CARGO_MANIFEST_DIR, CARGO_PKG_*, OUT_DIR...).
    // Handed down to the inner `cargo test`, they reach the build scripts
    // it runs, and ring's watches them: each build then sees them change
    // from the last, and rebuilds ring and all above it (rustls, stage 3,
    // the exercises), 15 to 55 s a check with nothing changed.
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(inherited_from_cargo_run) {
            command.env_remove(&name);
        }
    }
    // The first build compiles the whole workspace, minutes on a small
    // machine: cargo says what it is building then, rather than sitting
    // silent. Later builds take a second, and say nothing.
    let cold = !target_dir()
        .join("debug/deps")
        .read_dir()
        .is_ok_and(|mut deps| {
            deps.any(|entry| {
                entry.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("check-"))
            })
        });
    if cold {
        eprintln!("Building the exercises and what they use, once: a few minutes the first time.");
    }
    command.args([
        "test",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ]);
    if !cold {
        command.arg("--quiet");
    }
    let output = command
        .arg("--manifest-path")
        .arg(crate_dir().join("Cargo.toml"))
        .args(["--features", side.features(), "--test", "check"])
        // Read by build.rs; every side sets the round, so that going from
        // one side to another rebuilds only what the feature changes.
        .env(
            "EXERCISES_WRONG_ROUND",
            match side {
                Side::Wrong(round) => round.to_string(),
                _ => "1".to_string(),
            },
        )
        .envs(match side {
            Side::Graded(from) => Some(("EXERCISES_GRADE_FROM", from.as_os_str())),
            _ => None,
        })
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the exercises do not compile ({side:?} side): fix the errors above first"
        ));
    }
    let path = executable(&String::from_utf8_lossy(&output.stdout))
        .ok_or("cargo built the tests but did not say where the test binary is")?;
    let list = Command::new(&path)
        .args(["--list", "--format", "terse"])
        .output()
        .map_err(|e| format!("could not run {}: {e}", path.display()))?;
    let tests = libtest::parse_list(&String::from_utf8_lossy(&list.stdout));
    Ok(TestBinary { path, tests })
}

/// Whether `name` is a variable `cargo run` sets for the package it runs,
/// which no build of another command should see. `CARGO` itself (which
/// cargo to run) and the user's own settings (`CARGO_HOME`,
/// `CARGO_TARGET_DIR`...) stay.
fn inherited_from_cargo_run(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || matches!(
            name,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_MANIFEST_LINKS"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_RUSTC_CURRENT_DIR"
                | "OUT_DIR"
        )
}

/// The test binary's path, from cargo's JSON messages.
fn executable(json_lines: &str) -> Option<PathBuf> {
    json_lines
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "check")
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
}

impl TestBinary {
    /// The tests of the exercise whose module is `module`.
    pub fn tests_of(&self, module: &str) -> Vec<String> {
        let prefix = format!("{module}::");
        self.tests
            .iter()
            .filter(|t| t.starts_with(&prefix))
            .cloned()
            .collect()
    }

    /// Every module that has tests.
    pub fn modules(&self) -> Vec<String> {
        let mut modules: Vec<String> = self
            .tests
            .iter()
            .filter_map(|t| t.split_once("::").map(|(m, _)| m.to_string()))
            .filter(|m| m != "common")
            .collect();
        modules.dedup();
        modules
    }

    /// Runs the tests of `module` and reads their outcomes.
    pub fn run(&self, module: &str) -> Result<Results, String> {
        let expected = self.tests_of(module);
        let child = Command::new(&self.path)
            .arg(format!("{module}::"))
            // The panic message is what a learner needs; a backtrace of
            // the test harness is not.
            .env("RUST_BACKTRACE", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("could not run {}: {e}", self.path.display()))?;
        let output = wait_with_limit(child, RUN_LIMIT)
            .map_err(|e| format!("running {}: {e}", self.path.display()))?;
        Ok(libtest::parse_run(&output, &expected))
    }
}

/// Collects a child's output until it exits, killing it at `limit`.
fn wait_with_limit(mut child: Child, limit: Duration) -> io::Result<String> {
    // Read both pipes on threads, so that a chatty child never blocks on a
    // full pipe while we wait for it.
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|mut pipe| {
        thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            text
        })
    })
    .collect();
    let deadline = Instant::now() + limit;
    while child.try_wait()?.is_none() {
        if Instant::now() >= deadline {
            // Killing is the point here; the tests it cuts short are
            // reported as unfinished.
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let mut text = Vec::new();
    for reader in readers {
        text.extend(reader.join().unwrap_or_default());
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_is_found_in_cargos_messages() {
        let messages = r#"{"reason":"compiler-artifact","target":{"name":"exercises"},"executable":null}
{"reason":"compiler-artifact","target":{"name":"check"},"executable":"/t/debug/deps/check-abc"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            executable(messages),
            Some(PathBuf::from("/t/debug/deps/check-abc"))
        );
        assert_eq!(executable("not json\n"), None);
    }

    #[test]
    fn a_child_that_outlives_its_limit_is_killed() {
        let child = Command::new("sh")
            .args(["-c", "echo started; exec sleep 600"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Returning at all is the proof of the kill: the child would
        // otherwise run for ten minutes.
        let output = wait_with_limit(child, Duration::from_millis(200)).unwrap();
        // Whatever it printed before the kill is kept (on a busy machine
        // it may not have printed yet).
        assert!(output.is_empty() || output == "started\n", "{output:?}");
    }
}
