//! `--measure` in a process of its own, so nothing else runs beside it.

use std::process::Command;

#[test]
fn measures_the_stack_and_the_memory_of_idle_threads() {
    let output = Command::new(env!("CARGO_BIN_EXE_thread-per-fetch"))
        .args(["--measure", "200"])
        .env_remove("RUST_MIN_STACK")
        .output()
        .unwrap();
    assert!(output.status.success());
    let out = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], "200 idle threads, per thread:");
    // std's default stack for a new thread is 2 MiB.
    assert_eq!(lines[1], "  stack reserved (address space):  2048 KiB");
    let resident: f64 = lines[2]
        .strip_prefix("  memory in use (resident):")
        .and_then(|rest| rest.trim().strip_suffix(" KiB"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    // At least the one page a thread's stack must touch, and far less than
    // the stack it reserved.
    assert!((4.0..2048.0).contains(&resident), "{out}");
    assert!(lines[3].starts_with("  kernel stack:"), "{out}");
}

#[test]
fn bad_arguments_exit_with_2() {
    let output = Command::new(env!("CARGO_BIN_EXE_thread-per-fetch"))
        .args(["--measure", "none"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(
        err.starts_with("error: invalid value 'none' for '--measure <N>'"),
        "{err}"
    );
}
