//! Replies a hostile (or broken) server could send that are large but
//! well-formed RESP (issue 33): the client refuses them with an error that
//! names the limit, and stays within 200 MB of memory doing so. Each case
//! runs in a child process (this test binary, run again), so that the peak
//! of the process (`VmHWM`) is the case's alone, not the other tests'.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;
use std::thread;

use redis_client::{Connection, Error};
use runtime::run_until_complete;

/// The environment variable that makes this binary run one case as a child.
const CHILD: &str = "HOSTILE_REPLY_CASE";

/// Writes the hostile reply `case` to `out`, a piece at a time (so that
/// the server's memory does not count against the client's), until done or
/// the client has gone.
fn write_reply(case: &str, out: &mut impl Write) -> std::io::Result<()> {
    // A million nulls at a time.
    let nulls = |out: &mut dyn Write, n: usize| -> std::io::Result<()> {
        let piece = b"_\r\n".repeat(1_000_000);
        for _ in 0..n / 1_000_000 {
            out.write_all(&piece)?;
        }
        Ok(())
    };
    match case {
        // An array of 16 million nulls: 48 MB on the wire.
        "nulls" => {
            out.write_all(b"*16000000\r\n")?;
            nulls(out, 16_000_000)
        }
        // Sixteen nested arrays of four million nulls each: an array of
        // two, whose first item is four million nulls and whose second is
        // the next level.
        "nested" => {
            for _ in 0..16 {
                out.write_all(b"*2\r\n*4000000\r\n")?;
                nulls(out, 4_000_000)?;
            }
            out.write_all(b"_\r\n")
        }
        other => panic!("no case {other}"),
    }
}

/// Serves one connection: reads the command's first line, then writes the
/// reply until the client goes.
fn serve(case: &'static str) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(stream.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut stream = stream;
        let _ = write_reply(case, &mut stream);
    });
    addr
}

/// The child: sends PING to the hostile server, prints the error and the
/// process's peak memory.
fn child(case: &'static str) {
    let addr = serve(case);
    let error = run_until_complete(async move {
        let mut conn = Connection::connect(addr).await.unwrap();
        conn.command(&["PING"]).await.unwrap_err()
    })
    .unwrap();
    assert!(matches!(error, Error::Protocol(_)), "{error}");
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse::<u64>()
        .unwrap();
    // On lines of their own: libtest has written "test NAME ... " already.
    println!("\nhostile error: {error}");
    println!("hostile peak: {peak}");
}

/// Runs `case` in a child process; returns its error line and peak in kB.
fn in_child(test: &str, case: &str) -> (String, u64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD, case)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |prefix: &str| {
        stdout
            .lines()
            .find_map(|l| l.split_once(prefix).map(|(_, rest)| rest))
            .unwrap_or_else(|| panic!("no {prefix:?} in {stdout}"))
            .to_string()
    };
    (
        line("hostile error: "),
        line("hostile peak: ").parse().unwrap(),
    )
}

fn check(test: &str, case: &'static str) {
    if let Ok(which) = std::env::var(CHILD) {
        if which == case {
            child(case);
        }
        return;
    }
    let (error, peak_kb) = in_child(test, case);
    assert_eq!(
        error,
        "redis protocol: RESP reply over 1048576 values or 536870912 bytes in all"
    );
    // The whole process, the server thread's pieces included.
    assert!(peak_kb < 200 * 1024, "peak {peak_kb} kB");
}

#[test]
fn sixteen_million_nulls_are_refused_in_bounded_memory() {
    check(
        "sixteen_million_nulls_are_refused_in_bounded_memory",
        "nulls",
    );
}

#[test]
fn nested_arrays_of_millions_are_refused_in_bounded_memory() {
    check(
        "nested_arrays_of_millions_are_refused_in_bounded_memory",
        "nested",
    );
}
