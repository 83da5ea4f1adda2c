//! The server side, run in a second process (`c10k __server N`): one task
//! per accepted connection, all on one thread.
//!
//! It talks to the parent over its stdout: first the port, then, once N
//! connections are open, what they cost it, then, once all N have closed,
//! `closed`.

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::rc::Rc;
use std::time::Duration;

use runtime::{Queue, TcpListener, TcpStream, run_until_complete, sleep, spawn};

use crate::proc::{self, Usage};

/// The hidden subcommand that runs the server: `c10k __server N`.
pub const SUBCOMMAND: &str = "__server";

/// The server process, as the parent sees it.
pub struct ServerProcess {
    child: Child,
    stdout: BufReader<ChildStdout>,
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Starts this program again as the server for `n` connections, and
    /// waits until it listens.
    pub fn start(n: u64) -> io::Result<ServerProcess> {
        let mut child = Command::new(std::env::current_exe()?)
            .args([SUBCOMMAND, &n.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("the server's stdout is missing"))?;
        let mut server = ServerProcess {
            child,
            stdout: BufReader::new(stdout),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let port = server.next_line()?;
        let port = port
            .parse()
            .map_err(|_| io::Error::other(format!("the server said {port:?}, not its port")))?;
        server.addr.set_port(port);
        Ok(server)
    }

    fn next_line(&mut self) -> io::Result<String> {
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            return Err(io::Error::other("the server process ended early"));
        }
        Ok(line.trim_end().to_string())
    }

    /// What the server reported once every connection was open: its usage
    /// before the first and with all of them.
    pub fn usage(&mut self) -> io::Result<(Usage, Usage)> {
        let line = self.next_line()?;
        Usage::from_line(&line)
            .ok_or_else(|| io::Error::other(format!("the server said {line:?}, not its usage")))
    }

    /// Waits for the server to see every connection closed, and to exit.
    pub fn finish(mut self) -> io::Result<()> {
        let line = self.next_line()?;
        let status = self.child.wait()?;
        if line != "closed" || !status.success() {
            return Err(io::Error::other(format!(
                "the server ended badly ({status}), saying {line:?}"
            )));
        }
        Ok(())
    }
}

impl Drop for ServerProcess {
    /// Stops the server if we give up early (connections failed, or an
    /// error): it would otherwise wait forever for connections that are not
    /// coming. After [`finish`](ServerProcess::finish) it has exited, and
    /// this does nothing.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the connection tasks tell the main task.
#[derive(Default)]
struct Progress {
    echoed: Cell<u64>,
    all_echoed: Queue<()>,
    closed: Queue<()>,
}

/// Runs the server for `n` connections, then exits.
pub fn run(n: u64) -> io::Result<()> {
    let mut listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let mut out = io::stdout();
    writeln!(out, "{}", listener.local_addr()?.port())?;
    out.flush()?;
    run_until_complete(async move {
        let before = proc::usage()?;
        let progress = Rc::new(Progress::default());
        let acceptor = spawn({
            let progress = progress.clone();
            async move { accept_loop(&mut listener, n, progress).await }
        });
        progress.all_echoed.get().await;
        let after = proc::usage()?;
        writeln!(out, "{}", Usage::to_line(&before, &after))?;
        out.flush()?;
        for _ in 0..n {
            progress.closed.get().await;
        }
        acceptor.cancel();
        writeln!(out, "closed")?;
        out.flush()
    })?
}

const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Accepts forever, one task per connection.
async fn accept_loop(listener: &mut TcpListener, n: u64, progress: Rc<Progress>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                spawn(serve(stream, n, progress.clone()));
            }
            // Out of descriptors, say: the listener stays readable, so
            // pause rather than spin.
            Err(e) => {
                log::warn!("accept failed: {e}; retrying in {ACCEPT_BACKOFF:?}");
                sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

/// Echoes the client's byte, then waits for the client to close.
async fn serve(mut stream: TcpStream, n: u64, progress: Rc<Progress>) {
    let mut buf = [0u8; 64];
    let echoed = async {
        let got = stream.read(&mut buf).await?;
        stream.write_all(buf.get(..got).unwrap_or_default()).await
    }
    .await;
    match echoed {
        Ok(()) => {
            progress.echoed.set(progress.echoed.get() + 1);
            if progress.echoed.get() == n {
                progress.all_echoed.put_nowait(());
            }
            // Hold the connection until the client closes it.
            while let Ok(got) = stream.read(&mut buf).await
                && got > 0
            {}
        }
        Err(e) => log::warn!("a connection failed before its echo: {e}"),
    }
    progress.closed.put_nowait(());
}
