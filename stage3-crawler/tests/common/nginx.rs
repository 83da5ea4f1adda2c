//! A real nginx (Debian's package, which `.ci/test` installs) serving a
//! directory over TLS with HTTP/2 and HTTP/1.1 on a free port of
//! 127.0.0.1, with an access log that says, per request, which protocol
//! and which connection carried it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The nginx binary: Debian puts it in /usr/sbin, which is not on every
/// user's PATH.
const NGINX: &str = "/usr/sbin/nginx";

pub struct Nginx {
    dir: PathBuf,
    /// The https port (TLS, h2 and http/1.1 by ALPN).
    pub port: u16,
    /// A plain-http port on the same worker, for [`Nginx::log`]'s
    /// sentinel request.
    plain: u16,
    /// The certificate, as `--ca-file` would read it.
    pub cert_pem: String,
}

/// A port free right now (the listener is closed when this returns; nginx
/// binds it a moment later).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Nginx {
    /// Starts nginx serving `root`, with `extra` added to its server block.
    /// It runs as a daemon: when the command returns, its sockets listen.
    pub fn start(name: &str, root: &Path, extra: &str) -> Nginx {
        let dir = std::env::temp_dir().join(format!("nginx-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let certified =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()])
                .unwrap();
        let cert_pem = certified.cert.pem();
        std::fs::write(dir.join("cert.pem"), &cert_pem).unwrap();
        std::fs::write(dir.join("key.pem"), certified.signing_key.serialize_pem()).unwrap();
        let (port, plain) = (free_port(), free_port());
        let d = dir.display();
        let root = root.display();
        // One worker, so that the sentinel request is served after every
        // request before it (see `log`).
        let conf = format!(
            "daemon on;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{}}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format crawl '$server_protocol $connection $status $request_uri';
    access_log {d}/access.log crawl;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    gzip on;
    server {{
        listen 127.0.0.1:{port} ssl http2;
        listen 127.0.0.1:{plain};
        ssl_certificate {d}/cert.pem;
        ssl_certificate_key {d}/key.pem;
        root {root};
        {extra}
    }}
}}
"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let out = Command::new(NGINX)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run {NGINX} (.ci/test installs it): {e}"));
        assert!(
            out.status.success(),
            "nginx did not start: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
        Nginx {
            dir,
            port,
            plain,
            cert_pem,
        }
    }

    /// `https://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// The access log so far: `PROTOCOL CONNECTION STATUS URI` per
    /// request. A request answered is logged by the worker in the same
    /// turn of its loop that sent the answer's last bytes; so once a
    /// sentinel request, sent after them, has its answer, every earlier
    /// request is in the log. The sentinel's own line is left out.
    pub fn log(&self) -> Vec<String> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.plain)).unwrap();
        s.write_all(b"GET /__sentinel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        s.read_to_end(&mut Vec::new()).unwrap();
        std::fs::read_to_string(self.dir.join("access.log"))
            .unwrap()
            .lines()
            .filter(|line| !line.ends_with(" /__sentinel"))
            .map(str::to_string)
            .collect()
    }

    /// Empties the access log (nginx appends to the file it has open).
    pub fn clear_log(&self) {
        let _ = self.log();
        std::fs::File::create(self.dir.join("access.log")).unwrap();
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = Command::new(NGINX)
            .arg("-p")
            .arg(&self.dir)
            .arg("-c")
            .arg(self.dir.join("nginx.conf"))
            .args(["-s", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
