//! A real `redis-server` for tests: started on a free port of 127.0.0.1 in
//! a temporary directory, stopped (and the directory removed) on drop; and
//! a real Redis Cluster of such servers ([`RedisCluster`]).
//!
//! Behind the `test-server` feature, for this crate's tests and for every
//! crate that tests against Redis (`[dev-dependencies] redis-client = {
//! features = ["test-server"] }`). A missing `redis-server` is a failure
//! that says what to install, never a skipped test.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::url::RedisUrl;

/// How long a server may take to start answering.
const STARTUP: Duration = Duration::from_secs(20);

/// A running `redis-server`.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    appendonly: bool,
    /// Extra arguments for `redis-server` (cluster mode).
    extra: Vec<String>,
}

impl RedisServer {
    /// Starts a throwaway server: no snapshots, no append-only file.
    pub fn start() -> RedisServer {
        RedisServer::start_with(false)
    }

    /// Starts a server that keeps its data across [`restart`](Self::restart)
    /// when `appendonly` is true.
    pub fn start_with(appendonly: bool) -> RedisServer {
        RedisServer::start_args(appendonly, Vec::new())
    }

    /// Starts a throwaway server with more arguments for `redis-server`
    /// (`--rename-command`, `--requirepass`, ...).
    pub fn start_with_args(args: &[&str]) -> RedisServer {
        RedisServer::start_args(false, args.iter().map(|s| s.to_string()).collect())
    }

    fn start_args(appendonly: bool, extra: Vec<String>) -> RedisServer {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "redis-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the server's directory");
        let cluster = extra.iter().any(|a| a == "--cluster-enabled");
        let mut server = RedisServer {
            child: None,
            port: free_port(cluster),
            dir,
            appendonly,
            extra,
        };
        // A port found free may be taken before the server binds it (other
        // tests start servers and open sockets all the while): the server
        // then exits at once, and another port is tried. Anything else
        // that stops it is the same every time, and fails on the last try.
        for tries_left in (0..PORT_TRIES).rev() {
            match server.launch() {
                Ok(()) => return server,
                Err(why) if tries_left > 0 => {
                    eprintln!("redis-server on port {}: {why}; another port", server.port);
                    server.port = free_port(cluster);
                }
                Err(why) => panic!("redis-server on port {}: {why}", server.port),
            }
        }
        unreachable!("the last try panics")
    }

    /// Starts the server on its port; an error if it exits at startup
    /// (with the end of its log), a panic if it never answers.
    fn launch(&mut self) -> Result<(), String> {
        let appendonly = if self.appendonly { "yes" } else { "no" };
        let log = self.dir.join("redis.log");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--logfile")
            .arg(&log)
            .args(["--save", "", "--appendonly", appendonly])
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start redis-server ({e}): install it with `apt-get install redis-server` \
                     (.ci/test installs what .ci/packages.txt lists)"
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + STARTUP;
        loop {
            if ping(self.addr()) {
                return Ok(());
            }
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let last = text.lines().rev().take(3).collect::<Vec<_>>();
                let last: Vec<&str> = last.into_iter().rev().collect();
                return Err(format!(
                    "exited at startup ({status}): {}",
                    last.join(" / ")
                ));
            }
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not answer PING within {STARTUP:?}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20)); // polling, with a deadline
        }
    }

    /// The port it listens on, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// `redis://127.0.0.1:PORT/name`.
    pub fn url(&self, name: &str) -> RedisUrl {
        RedisUrl {
            host: "127.0.0.1".into(),
            port: self.port,
            name: name.into(),
        }
    }

    /// Kills the server at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and directory.
    pub fn restart(&mut self) {
        self.kill();
        if let Err(why) = self.launch() {
            panic!("redis-server on port {}, restarted: {why}", self.port);
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// How many ports a server is tried on before its start fails.
const PORT_TRIES: usize = 5;

/// A port nobody listens on right now, and for a cluster node, whose bus
/// port (10,000 above it) nobody does either. Another program could take
/// it before the server binds; the server then exits, and `start_args`
/// tries another.
fn free_port(cluster: bool) -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port on 127.0.0.1");
        let port = listener
            .local_addr()
            .expect("a bound socket's address")
            .port();
        if !cluster {
            return port;
        }
        let bus_free = port
            .checked_add(10_000)
            .is_some_and(|bus| TcpListener::bind(("127.0.0.1", bus)).is_ok());
        if bus_free {
            return port;
        }
    }
}

/// A blocking `PING`, true on `+PONG`.
fn ping(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}

/// A Redis Cluster of `redis-server`s on 127.0.0.1, each a master with no
/// replica, its slots given out by `redis-cli --cluster create`; stopped on
/// drop.
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts `masters` servers in cluster mode, joins them into one
    /// cluster, and waits until every node says the cluster is ok.
    pub fn start(masters: usize) -> RedisCluster {
        RedisCluster::start_with(masters, false)
    }

    /// Starts a cluster whose nodes keep their data, and their place in
    /// the cluster, across [`RedisServer::restart`] when `appendonly` is
    /// true.
    pub fn start_with(masters: usize, appendonly: bool) -> RedisCluster {
        let nodes: Vec<RedisServer> = (0..masters)
            .map(|_| {
                let extra = [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                ];
                RedisServer::start_args(appendonly, extra.iter().map(|s| s.to_string()).collect())
            })
            .collect();
        let mut create = Command::new("redis-cli");
        create.args(["--cluster", "create"]);
        create.args(nodes.iter().map(|n| n.addr().to_string()));
        create.args(["--cluster-replicas", "0", "--cluster-yes"]);
        let out = create
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run redis-cli ({e}): install redis-tools"));
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = RedisCluster { nodes };
        cluster.wait_until_ok();
        cluster
    }

    /// Waits until every node says the cluster is ok (after it was made,
    /// or after a node restarted).
    pub fn wait_until_ok(&self) {
        let deadline = Instant::now() + STARTUP;
        for node in &self.nodes {
            while !cluster_ok(node.addr()) {
                assert!(
                    Instant::now() < deadline,
                    "the cluster on {} is not ok within {STARTUP:?}",
                    node.addr()
                );
                std::thread::sleep(Duration::from_millis(20)); // polling, with a deadline
            }
        }
    }

    /// Its servers.
    pub fn nodes(&mut self) -> &mut [RedisServer] {
        &mut self.nodes
    }

    /// `redis://127.0.0.1:PORT/name` for its first node: any node will do.
    pub fn url(&self, name: &str) -> RedisUrl {
        self.nodes[0].url(name)
    }
}

/// Whether the node at `addr` answers `CLUSTER INFO` with
/// `cluster_state:ok`.
fn cluster_ok(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream.write_all(b"CLUSTER INFO\r\n").is_err() {
        return false;
    }
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    // A bulk string: read until its end, or the first line that says ok.
    while let Ok(n) = stream.read(&mut chunk) {
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&reply);
        if text.contains("cluster_state:ok") {
            return true;
        }
        if text.contains("cluster_state:fail") {
            return false;
        }
    }
    false
}
