//! Runs `c10k` with 200 connections under each kind of open-files limit.

use std::process::Command;

/// Runs the binary under `ulimit` arguments given to sh, and returns its
/// lines, with the wrapped ones joined again.
fn run_with_ulimit(ulimit: &str, connections: u32) -> Vec<String> {
    let out = Command::new("sh")
        .args([
            "-c",
            &format!("ulimit {ulimit} && exec \"$0\" --connections {connections}"),
            env!("CARGO_BIN_EXE_c10k"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut lines: Vec<String> = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        match (line.strip_prefix("  "), lines.last_mut()) {
            (Some(rest), Some(last)) => {
                last.push(' ');
                last.push_str(rest);
            }
            _ => lines.push(line.to_string()),
        }
    }
    lines
}

/// Replaces every run of digits (with their separators) by `#`, for lines
/// whose numbers vary: ports, durations, bytes.
fn normalise(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            // A separator belongs to the number only between two digits.
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (matches!(chars[i], ',' | '.')
                        && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            out.push('#');
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Checks the part of the output after the open-files report, for `n`
/// connections.
fn check_run(lines: &[String], n: u64) {
    let shown = n.to_string();
    assert_eq!(
        normalise(&lines[0]),
        "server: #:#, a second copy of this program, one task per accepted connection"
    );
    assert_eq!(
        lines[1],
        "connecting, at most 100 handshakes at a time (the listen backlog holds 128)"
    );
    let took = normalise(&lines[2]);
    assert!(
        ["ns", "µs", "ms", "s"]
            .iter()
            .any(|unit| took
                == format!("all # connections open after #{unit}, each has echoed a byte")),
        "{}",
        lines[2]
    );
    assert!(lines[2].starts_with(&format!("all {shown} connections open after ")));
    for (line, side) in lines[3..5].iter().zip(["client", "server"]) {
        assert_eq!(
            normalise(line),
            format!(
                "{side} process: # thread, # open file descriptors; RSS grew by # bytes, # per \
                 connection"
            )
        );
        // One thread did it all, and held one end of every connection.
        let (threads, rest) = line
            .strip_prefix(&format!("{side} process: "))
            .and_then(|rest| rest.split_once(" thread, "))
            .unwrap();
        assert_eq!(threads, "1", "{line}");
        let fds: u64 = rest
            .split(' ')
            .next()
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap();
        assert!(fds >= n, "{line}");
    }
    assert_eq!(
        lines[5],
        "(RSS counts what each process holds for its tasks and sockets; the kernel's own socket \
         memory is not in it)"
    );
    assert_eq!(lines[6], format!("closed all {shown} connections"));
    assert_eq!(lines.len(), 7);
}

#[test]
fn two_hundred_connections_within_the_limit() {
    let lines = run_with_ulimit("-Sn 1000", 200);
    assert_eq!(
        lines[..3],
        [
            "c10k: 200 concurrent TCP connections, each end held by one thread",
            "open files: each process holds one end of every connection, so 200 connections \
             need 264 descriptors with 64 spare",
            "open files: the limit of 1,000 is enough",
        ]
    );
    check_run(&lines[3..], 200);
}

#[test]
fn the_soft_limit_is_raised_when_the_hard_limit_allows() {
    let lines = run_with_ulimit("-Sn 100", 200);
    assert!(
        lines[2].starts_with("open files: raised the limit from 100 to 264 (the hard limit is "),
        "{}",
        lines[2]
    );
    check_run(&lines[3..], 200);
}

#[test]
fn a_hard_limit_that_cannot_be_raised_means_fewer_connections() {
    // Lowering the hard limit is allowed to everyone; raising it back needs
    // CAP_SYS_RESOURCE, which this test may or may not have.
    let lines = run_with_ulimit("-n 100", 200);
    if lines[2]
        .starts_with("open files: raised the limit from 100 and the hard limit from 100 to 264")
    {
        check_run(&lines[3..], 200);
        return;
    }
    assert_eq!(
        lines[2..6],
        [
            "open files: the limit is 100 and the hard limit 100; raising the hard limit needs \
             CAP_SYS_RESOURCE, which root normally has, and this process does not (Operation not \
             permitted (os error 1))",
            "open files: to allow more, raise the hard limit where it is set: `ulimit -Hn 30000` \
             in a root shell that then starts this program, a `nofile` line in \
             /etc/security/limits.conf, LimitNOFILE= in a systemd unit, or `--ulimit nofile=` \
             for a container",
            "open files: using 100 descriptors, room for 36 connections",
            "running with 36 connections instead of 200",
        ]
    );
    check_run(&lines[6..], 36);
}

#[test]
fn bad_arguments_are_usage_errors() {
    let out = Command::new(env!("CARGO_BIN_EXE_c10k"))
        .args(["--connections", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "error: invalid value '0' for '--connections <N>': 0 is not in 1..=1000000\n"
        ),
        "{stderr}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_c10k"))
        .args(["__server", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("error: invalid value 'x' for '<N>'"),
        "{stderr}"
    );
}
