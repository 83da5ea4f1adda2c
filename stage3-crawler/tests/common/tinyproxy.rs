//! A real HTTP proxy, tinyproxy (Debian's package, which `.ci/test`
//! installs), on a free port of 127.0.0.1, in the foreground, its log read
//! from its stdout: the tests check there that every request went through
//! it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub struct Tinyproxy {
    child: Child,
    pub port: u16,
    dir: std::path::PathBuf,
    log: Arc<Mutex<Vec<String>>>,
    reader: Option<JoinHandle<()>>,
}

impl Tinyproxy {
    /// Starts tinyproxy with `extra` lines added to its configuration
    /// (`BasicAuth user password`, `ConnectPort 443`); returns once it
    /// says it accepts connections.
    pub fn start(name: &str, extra: &str) -> Tinyproxy {
        let dir = std::env::temp_dir().join(format!("tinyproxy-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // No LogFile: in the foreground, the log goes to stdout.
        let conf = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 60\nLogLevel Info\nMaxClients 100\n\
             Allow 127.0.0.1\nDisableViaHeader Yes\n{extra}\n"
        );
        std::fs::write(dir.join("tinyproxy.conf"), conf).unwrap();
        let mut child = Command::new("/usr/bin/tinyproxy")
            .arg("-d")
            .arg("-c")
            .arg(dir.join("tinyproxy.conf"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run tinyproxy (.ci/test installs it): {e}"));
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut log = Vec::new();
        loop {
            match lines.next() {
                Some(Ok(line)) => {
                    let ready = line.contains("Accepting connections");
                    log.push(line);
                    if ready {
                        break;
                    }
                }
                _ => panic!("tinyproxy stopped before accepting connections: {log:#?}"),
            }
        }
        let log = Arc::new(Mutex::new(log));
        let shared = Arc::clone(&log);
        let reader = std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                shared.lock().unwrap().push(line);
            }
        });
        Tinyproxy {
            child,
            port,
            dir,
            log,
            reader: Some(reader),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops the proxy and returns what it logged, to its last line: the
    /// requests it took, as `GET http://... HTTP/1.1` or `CONNECT
    /// host:port HTTP/1.1`.
    pub fn stop(mut self) -> Vec<String> {
        self.terminate();
        let log = self.log.lock().unwrap();
        log.iter()
            .filter_map(|line| line.split_once("): ").map(|(_, request)| request))
            .filter(|request| request.ends_with(" HTTP/1.1") || request.ends_with(" HTTP/1.0"))
            .map(str::to_string)
            .collect()
    }

    /// SIGTERM, which lets it write out its log, then waits for its end.
    fn terminate(&mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        if self.reader.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
