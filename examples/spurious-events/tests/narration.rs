//! Runs the binary and checks its narration line by line.

use std::process::Command;

const SCENE_1: &str = "\
1. An event with no data behind it
reader: read -> WouldBlock; parked until the next readable event
main: fire a readable event by hand; no byte was sent
main: a read that trusts the event fails: operation would block
reader: woken; read -> WouldBlock; parked until the next readable event
main: the peer writes \"hello\"
reader: woken; read -> 5 bytes \"hello\"

2. Two readers, one socket, one message
reader A: read -> WouldBlock; parked until the next readable event
reader B: read -> WouldBlock; parked until the next readable event
main: the peer writes \"ping\"; the kernel reports both descriptors readable
";

/// Which reader the kernel's event list names first is up to the kernel, so
/// the test accepts either, as long as the first one woken gets the message
/// and the other gets `WouldBlock` and then the second message.
fn scene_2_end(first: &str, second: &str) -> String {
    format!(
        "{first}: woken; read -> 4 bytes \"ping\"\n\
         {second}: woken; read -> WouldBlock; parked until the next readable event\n\
         main: both were woken and only one found data; the peer writes \"pong\"\n\
         {second}: woken; read -> 4 bytes \"pong\"\n"
    )
}

#[test]
fn the_narration_is_exact() {
    let out = Command::new(env!("CARGO_BIN_EXE_spurious-events"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let a_first = format!("{SCENE_1}{}", scene_2_end("reader A", "reader B"));
    let b_first = format!("{SCENE_1}{}", scene_2_end("reader B", "reader A"));
    assert!(stdout == a_first || stdout == b_first, "{stdout}");
}

#[test]
fn an_unknown_argument_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_spurious-events"))
        .arg("--frobnicate")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("error: unexpected argument '--frobnicate' found\n"),
        "{stderr}"
    );
}
