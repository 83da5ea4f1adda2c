//! `kill -USR1 PID` prints the running crawler's task table and the crawl
//! goes on.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use demo_site::testing::read_request;

/// A site whose `/` links to `/a` and `/b`, which never answer. Each
/// request's path goes to the channel.
fn stuck_site() -> (SocketAddr, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let tx = tx.clone();
            thread::spawn(move || serve(stream, &tx));
        }
    });
    (addr, rx)
}

fn serve(stream: TcpStream, tx: &mpsc::Sender<String>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    while let Some(request) = read_request(&mut reader) {
        let path = request.split(' ').nth(1).unwrap_or("").to_string();
        let _ = tx.send(path.clone());
        if path != "/" {
            // Never answer; return when the client closes.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
            return;
        }
        let body = "<a href=/a>a</a><a href=/b>b</a>";
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    }
}

#[test]
fn sigusr1_prints_the_task_table_and_the_crawl_goes_on() {
    let (addr, requests) = stuck_site();
    let mut child = common::stage3()
        .args([
            &format!("http://{addr}/"),
            "--max-tasks",
            "2",
            "--ignore-robots",
            "-q",
            "--progress",
            "never",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines_tx, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    // Both workers are stuck on a page: the crawl is under way.
    let mut seen: Vec<String> = (0..3)
        .map(|_| requests.recv_timeout(Duration::from_secs(60)).unwrap())
        .collect();
    seen.sort();
    assert_eq!(seen, ["/", "/a", "/b"]);

    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-USR1", &pid])
            .status()
            .unwrap()
            .success()
    );
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a line on stderr")
    };
    assert_eq!(next(), "tasks (SIGUSR1):");
    assert_eq!(
        next().split_whitespace().collect::<Vec<_>>(),
        ["task", "state", "name", "waits", "on", "spawned", "at"]
    );
    // Columns are two or more spaces apart.
    let rows: Vec<Vec<String>> = (0..2)
        .map(|_| {
            next()
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect();
    let summary: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[2].as_str(), r[1].as_str()))
        .collect();
    // The crawl's tasks: both workers, each waiting for its page, that is
    // for its socket to be readable (and for the timers that bound it).
    assert_eq!(summary, [("worker-0", "Waiting"), ("worker-1", "Waiting")]);
    for row in &rows {
        assert_eq!(row.len(), 5, "{rows:?}");
        let socket = row[3].split(", ").find(|w| w.starts_with("socket "));
        let token = socket
            .and_then(|s| s.strip_prefix("socket "))
            .and_then(|s| s.strip_suffix(" (read)"));
        assert!(
            token.is_some_and(|t| t.parse::<usize>().is_ok()),
            "{rows:?}"
        );
        assert!(
            row[4].starts_with("stage3-crawler/src/crawling.rs:"),
            "{rows:?}"
        );
    }

    // Still alive and crawling: Ctrl-C ends it as usual.
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(child.wait().unwrap().code(), Some(130));
}
