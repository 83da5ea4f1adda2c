//! A real PostgreSQL for tests: `initdb` into a temporary directory and
//! `postgres` on a free port of 127.0.0.1, stopped and removed on drop.
//!
//! PostgreSQL refuses to run as root, and CI runs as root: then both run as
//! the `postgres` user that Debian's package creates, in a directory that
//! user owns. A missing PostgreSQL fails the test with what to install.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The superuser's password; logins over TCP use SCRAM-SHA-256 with it.
pub const PASSWORD: &str = "test-secret-8Zq";
/// A role that `pg_hba.conf` lets in without a password.
pub const TRUSTED: &str = "trusted";

const STARTUP: Duration = Duration::from_secs(60);

pub struct PgServer {
    base: PathBuf,
    port: u16,
    child: Option<Child>,
}

fn bin(name: &str) -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    versions.sort();
    match versions.last() {
        Some(version) => version.join("bin").join(name),
        None => panic!(
            "PostgreSQL is not installed: apt-get install postgresql \
             (.ci/test installs what .ci/packages.txt lists)"
        ),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|out| out.stdout.trim_ascii() == b"0")
        .unwrap_or(false)
}

/// A command run as `postgres` when we are root, else as ourselves.
fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

impl PgServer {
    pub fn start() -> PgServer {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir().join(format!(
            "jobs-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let pwfile = base.join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&base)
                .status()
                .unwrap();
            assert!(status.success(), "chown the test directory to postgres");
        }
        let out = as_postgres(&bin("initdb"))
            .arg("-D")
            .arg(base.join("data"))
            .args(["-U", "postgres", "--auth=trust", "--no-sync"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .unwrap_or_else(|e| panic!("cannot run initdb ({e}): apt-get install postgresql"));
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // TCP logins need SCRAM, but for the one trusted role.
        std::fs::write(
            base.join("data/pg_hba.conf"),
            format!(
                "local all all trust\n\
                 host all {TRUSTED} 127.0.0.1/32 trust\n\
                 host all all 127.0.0.1/32 scram-sha-256\n"
            ),
        )
        .unwrap();
        let mut server = PgServer {
            base,
            port: free_port(),
            child: None,
        };
        // A port found free may be taken before the server binds it (other
        // tests start servers and open sockets all the while): the server
        // then exits at once, and another port is tried.
        for tries_left in (0..PORT_TRIES).rev() {
            match server.launch() {
                Ok(()) => return server,
                Err(why) if tries_left > 0 => {
                    eprintln!("postgres on port {}: {why}; another port", server.port);
                    server.port = free_port();
                }
                Err(why) => panic!("postgres on port {}: {why}", server.port),
            }
        }
        unreachable!("the last try panics")
    }

    /// Starts the server on its port; an error if it exits at startup, a
    /// panic if it never answers.
    fn launch(&mut self) -> Result<(), String> {
        let child = as_postgres(&bin("postgres"))
            .arg("-D")
            .arg(self.base.join("data"))
            .arg("-k")
            .arg(&self.base)
            .args(["-p", &self.port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + STARTUP;
        loop {
            let ready = Command::new(bin("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ready {
                return Ok(());
            }
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(format!("exited at startup ({status})"));
            }
            assert!(
                Instant::now() < deadline,
                "postgres did not start in {STARTUP:?}"
            );
            std::thread::sleep(Duration::from_millis(50)); // polling, with a deadline
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The superuser's URL, password included.
    pub fn url(&self) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }

    /// Stops the server (a fast shutdown: sessions are cut off).
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = std::fs::read_to_string(self.base.join("data/postmaster.pid"))
            .ok()
            .and_then(|text| text.lines().next().map(str::to_string));
        if let Some(pid) = pid {
            let _ = Command::new("kill").args(["-INT", &pid]).status();
        }
        let deadline = Instant::now() + STARTUP;
        while child.try_wait().ok().flatten().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20)); // polling, with a deadline
        }
        let _ = child.wait();
    }

    /// Stops and starts again, same port, same data.
    pub fn restart(&mut self) {
        self.stop();
        self.start_again();
    }

    /// Starts a stopped server again.
    pub fn start_again(&mut self) {
        if self.child.is_none()
            && let Err(why) = self.launch()
        {
            panic!("postgres on port {}, started again: {why}", self.port);
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// How many ports a server is tried on before its start fails.
const PORT_TRIES: usize = 5;

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind a free port on 127.0.0.1")
}
