//! The runtime's trace of a one-page fetch, as the book shows it: both
//! fetchers make the runtime do exactly the same things, and the trace has
//! every step of a task's life in order.

use std::sync::Mutex;

use log::{Level, Log, Metadata, Record};
use runtime::{TcpListener, TcpStream};
use stage2_coroutines::{Style, fetch};
use url::Url;

/// Keeps the runtime's log lines.
struct Capture(Mutex<Vec<String>>);

static CAPTURE: Capture = Capture(Mutex::new(Vec::new()));

impl Log for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "runtime" && metadata.level() <= Level::Trace
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            let line = record.args().to_string();
            self.0.lock().unwrap().push(line);
        }
    }

    fn flush(&self) {}
}

const PAGE: &[u8] = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hello</p>\n";

/// Serves one request from a task on the same runtime (as
/// examples/trace_fetch.rs does), fetches it, and returns the trace with
/// the port numbers taken out.
fn traced_fetch(style: Style) -> Vec<String> {
    CAPTURE.0.lock().unwrap().clear();
    let mut listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let response = runtime::run_until_complete(async move {
        runtime::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            read_head(&mut stream).await;
            stream.write_all(PAGE).await.unwrap();
        });
        runtime::spawn(async move { fetch(&url, style).await }).await
    })
    .unwrap()
    .unwrap()
    .unwrap();
    assert_eq!(response, PAGE);
    let lines = std::mem::take(&mut *CAPTURE.0.lock().unwrap());
    lines
        .into_iter()
        .map(|line| {
            // "127.0.0.1:41949" -> "127.0.0.1:PORT"
            match line.split_once("127.0.0.1:") {
                Some((before, after)) => {
                    let rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
                    format!("{before}127.0.0.1:PORT{rest}")
                }
                None => line,
            }
        })
        .collect()
}

async fn read_head(stream: &mut TcpStream) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await.unwrap() {
            0 => break,
            n => head.extend_from_slice(&buf[..n]),
        }
    }
}

/// Asserts that `steps` appear in `trace` in this order (other lines may
/// come between them).
fn assert_in_order(trace: &[String], steps: &[&str]) {
    let mut lines = trace.iter();
    for step in steps {
        assert!(
            lines.any(|line| line == step),
            "{step:?} missing or out of order in:\n{}",
            trace.join("\n")
        );
    }
}

#[test]
fn both_fetchers_trace_the_same_steps() {
    log::set_logger(&CAPTURE).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    let state_machine = traced_fetch(Style::StateMachine);
    let async_fn = traced_fetch(Style::Async);
    assert_eq!(state_machine, async_fn);
    // Task 1 is the server, task 2 the fetch, and task 0 `block_on`'s own
    // future, which awaits the fetch's JoinHandle.
    assert_in_order(
        &state_machine,
        &[
            "spawn task=2",
            "connect to 127.0.0.1:PORT started, token=2",
            "poll task=2 -> Pending",
            "reactor token=2 Read ready: waking its task",
            "wake task=2",
            "close token=2",
            "poll task=2 -> Ready",
            "wake task=0",
            "poll main -> Ready",
        ],
    );
}
