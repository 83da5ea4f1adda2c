//! The binary, stopped by real signals.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;

use common::{Client, PATIENCE, request, temp_store};

/// The running binary and its output, line by line.
struct Service {
    child: Child,
    addr: SocketAddr,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
}

fn lines(from: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Service {
    fn start(store: &Path, extra: &[&str]) -> Service {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jobs-pipeline"));
        command
            .args(["--port", "0", "--store"])
            .arg(store)
            .args(extra);
        Service::spawn(command)
    }

    /// The service with its files limited to `kib` KiB (`ulimit -f`), as on
    /// a full disk: a write past it fails with EFBIG. SIGXFSZ, which the
    /// kernel also sends, is ignored, as a service would (its default is to
    /// kill the process). Root ignores file modes, not this limit.
    fn start_with_file_limit(store: &Path, kib: u32) -> Service {
        let mut command = Command::new("bash");
        command
            .arg("-c")
            .arg(format!(
                "trap '' XFSZ; ulimit -f {kib}; exec \"$0\" --port 0 --store \"$1\""
            ))
            .arg(env!("CARGO_BIN_EXE_jobs-pipeline"))
            .arg(store);
        Service::spawn(command)
    }

    fn spawn(mut command: Command) -> Service {
        let mut child = command
            .env("RUST_LOG", "jobs_pipeline=debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = lines(child.stdout.take().unwrap());
        let stderr = lines(child.stderr.take().unwrap());
        let first = stdout.recv_timeout(PATIENCE).unwrap();
        let addr = first
            .strip_prefix("jobs-pipeline: listening on http://")
            .and_then(|rest| rest.split_once("/jobs"))
            .unwrap_or_else(|| panic!("{first}"))
            .0
            .parse()
            .unwrap();
        let service = Service {
            child,
            addr,
            stdout,
            stderr,
        };
        service.expect_line(&format!(
            "try: curl -i -d '{{\"name\": \"resize\", \"priority\": 3}}' http://{addr}/jobs"
        ));
        service
    }

    fn expect_line(&self, line: &str) {
        assert_eq!(self.stdout.recv_timeout(PATIENCE).unwrap(), line);
    }

    /// Waits until the service logs `needle` on stderr.
    fn wait_for_log(&self, needle: &str) {
        loop {
            let line = self
                .stderr
                .recv_timeout(PATIENCE)
                .expect("the log line comes");
            if line.contains(needle) {
                return;
            }
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn wait(mut self) -> (ExitStatus, Vec<String>) {
        // A watchdog: a service that never exits fails the test, not CI.
        let pid = self.child.id();
        let (done, finished) = mpsc::channel::<()>();
        thread::spawn(move || {
            if finished.recv_timeout(PATIENCE).is_err() {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        });
        let status = self.child.wait().unwrap();
        let _ = done.send(());
        (status, self.stdout.iter().collect())
    }
}

#[test]
fn ctrl_c_stops_accepting_and_stores_every_accepted_job() {
    let store = temp_store("sigint");
    let service = Service::start(&store, &[]);
    let addr = service.addr;
    for i in 1..=5 {
        let reply = request(
            addr,
            "POST",
            "/jobs",
            Some(&format!(r#"{{"name": "j{i}", "priority": {i}}}"#)),
        )
        .unwrap();
        assert_eq!(reply.status, 202);
    }
    // A keep-alive connection, left idle after one job.
    let mut idle = Client::connect(addr).unwrap();
    let reply = idle
        .send(
            "POST",
            "/jobs",
            Some(r#"{"name": "j6", "priority": 0}"#),
            false,
        )
        .unwrap();
    assert_eq!(reply.body, r#"{"id":6,"name":"j6","priority":0}"#);

    service.signal("INT");
    let (status, rest) = service.wait();
    assert!(status.success(), "{status}");
    let store_name = store.display().to_string();
    assert_eq!(
        rest,
        [
            "shutting down: no longer accepting connections; finishing open requests".to_string(),
            "connections at shutdown: 1 idle, closed; 0 busy, finished their request; 0 cut off after the grace period".to_string(),
            format!("drained the queue: 6 jobs stored this run; {store_name} holds 6 jobs"),
        ]
    );
    let lines: Vec<String> = std::fs::read_to_string(&store)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0], r#"{"id":1,"name":"j1","priority":1}"#);
    assert_eq!(lines[5], r#"{"id":6,"name":"j6","priority":0}"#);
    // The port is closed.
    assert!(request(addr, "GET", "/jobs", None).is_err());
    std::fs::remove_file(&store).unwrap();
}

#[test]
fn a_second_ctrl_c_exits_at_once() {
    let store = temp_store("second-sigint");
    let service = Service::start(&store, &["--grace-ms", "600000"]);
    // Half a request: shutdown will wait for the rest, for ten minutes.
    let mut stalled = Client::connect(service.addr).unwrap();
    let partial = b"POST /jobs HTTP/1.1\r\nContent-Length: 40\r\n\r\n{";
    stalled.write_raw(partial).unwrap();
    service.wait_for_log(&format!("read {} bytes of a request so far", partial.len()));
    service.signal("INT");
    service.expect_line("shutting down: no longer accepting connections; finishing open requests");
    service.signal("INT");
    let (status, rest) = service.wait();
    assert_eq!(status.code(), Some(130));
    assert!(rest.is_empty(), "{rest:?}");
    std::fs::remove_file(&store).unwrap();
}

#[test]
fn sigterm_works_like_ctrl_c() {
    let store = temp_store("sigterm");
    let service = Service::start(&store, &[]);
    service.signal("TERM");
    let (status, rest) = service.wait();
    assert!(status.success());
    assert_eq!(
        rest[0],
        "shutting down: no longer accepting connections; finishing open requests"
    );
    assert_eq!(
        rest[2],
        format!(
            "drained the queue: 0 jobs stored this run; {} holds 0 jobs",
            store.display()
        )
    );
    std::fs::remove_file(&store).unwrap();
}

#[test]
fn bad_arguments_are_usage_errors() {
    for (args, message) in [
        (
            &["--port", "x"][..],
            "error: invalid value 'x' for '--port <PORT>': invalid digit found in string",
        ),
        (
            &["--grace-ms"][..],
            "error: a value is required for '--grace-ms <MS>' but none was supplied",
        ),
        (
            &["--bogus"][..],
            "error: unexpected argument '--bogus' found",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_jobs-pipeline"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with(&format!("{message}\n")), "{stderr}");
    }
}

#[test]
fn a_corrupt_store_stops_the_start_with_the_line_named() {
    let store = temp_store("corrupt");
    std::fs::write(&store, "{\"id\":1,\"name\":\"a\",\"priority\":0}\noops\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_jobs-pipeline"))
        .args(["--port", "0", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "jobs-pipeline: {} line 2: not a job: expected value at line 1 column 1\n",
            store.display()
        )
    );
    std::fs::remove_file(&store).unwrap();
}

#[test]
fn a_store_holding_the_highest_id_starts_with_a_warning_and_refuses_new_jobs() {
    let store = temp_store("highest-id");
    std::fs::write(
        &store,
        "{\"id\":18446744073709551615,\"name\":\"a\",\"priority\":0}\n",
    )
    .unwrap();
    let service = Service::start(&store, &[]);
    assert_eq!(
        service.stderr.recv_timeout(PATIENCE).unwrap(),
        format!(
            "jobs-pipeline: {} holds job id 18446744073709551615, the highest there is: new jobs will be refused",
            store.display()
        )
    );
    let reply = request(
        service.addr,
        "POST",
        "/jobs",
        Some(r#"{"name": "b", "priority": 1}"#),
    )
    .unwrap();
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (
            507,
            r#"{"error":"the store has used every job id; it accepts no new jobs"}"#
        )
    );
    service.signal("INT");
    let (status, rest) = service.wait();
    assert!(status.success(), "{status}");
    assert_eq!(
        rest[2],
        format!(
            "drained the queue: 0 jobs stored this run; {} holds 1 job",
            store.display()
        )
    );
    std::fs::remove_file(&store).unwrap();
}

/// A full disk (issue 42): a 202 means the job is in the file. Once the
/// store cannot write, jobs get 507 and are not stored; the file keeps only
/// whole lines, and after space is freed the service starts again and holds
/// exactly the jobs that got a 202.
#[test]
fn on_a_full_disk_a_202_is_a_stored_job_and_the_rest_get_507() {
    let store = temp_store("full-disk");
    let service = Service::start_with_file_limit(&store, 4);
    let addr = service.addr;
    let mut accepted = Vec::new();
    let mut refused = 0;
    // Each line is about 60 bytes: 4 KiB hold about seventy.
    for i in 0..150 {
        let body = format!(r#"{{"name": "job-{i:03}-padding-to-make-it-longer", "priority": 1}}"#);
        let reply = request(addr, "POST", "/jobs", Some(&body)).unwrap();
        match reply.status {
            202 => {
                assert_eq!(refused, 0, "a 202 after a 507: {}", reply.body);
                accepted.push(reply.body);
            }
            507 => {
                assert!(
                    reply
                        .body
                        .contains("the store could not write the job, which is not stored"),
                    "{}",
                    reply.body
                );
                refused += 1;
            }
            other => panic!("{other}: {}", reply.body),
        }
    }
    assert!(
        !accepted.is_empty() && refused > 0,
        "{} / {refused}",
        accepted.len()
    );
    service.signal("INT");
    let (status, stdout) = service.wait();
    assert!(
        !status.success(),
        "the store failed: the exit status says so"
    );
    assert!(
        stdout
            .iter()
            .any(|l| l.contains(&format!("{refused} jobs refused with 507"))),
        "{stdout:?}"
    );
    // The file: exactly the 202'd jobs, each a whole line.
    let text = std::fs::read_to_string(&store).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, accepted);
    // Space freed (no limit): the service starts, and lists them.
    let service = Service::start(&store, &[]);
    let listed = request(service.addr, "GET", "/jobs", None).unwrap();
    assert_eq!(listed.body, format!("[{}]", accepted.join(",")));
    service.signal("INT");
    assert!(service.wait().0.success());
    std::fs::remove_file(&store).unwrap();
}
