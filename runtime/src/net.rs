//! Non-blocking TCP sockets driven by the reactor.
//!
//! Each operation is a `poll_*` method, which a hand-written state machine
//! can call (stage 2 does), and an `async fn` wrapper for everyone else.
//! They all go through [`Registration::poll_io`]: try the system call, and
//! if it would block, wait for the selector to say the socket is ready.

use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, ToSocketAddrs};
use std::os::fd::AsFd;
use std::task::{Context, Poll};

use log::trace;

use crate::blocking::spawn_blocking;
use crate::reactor::{Direction, Registration};

/// A TCP connection, registered with the running runtime. Dropping it
/// deregisters and closes the socket.
pub struct TcpStream {
    io: Registration<mio::net::TcpStream>,
}

impl TcpStream {
    // ANCHOR: start_connect
    /// Starts a non-blocking connect and registers the socket. The connect
    /// is finished when [`poll_connect`](Self::poll_connect) returns
    /// `Ready(Ok(()))`: the chapter's `sock.connect` with
    /// `setblocking(False)`, which raises `BlockingIOError` and carries on in
    /// the background.
    pub fn start_connect(addr: SocketAddr) -> io::Result<TcpStream> {
        let io = Registration::new(mio::net::TcpStream::connect(addr)?)?;
        trace!(target: "runtime", "connect to {addr} started, token={}", io.token().0);
        Ok(TcpStream { io })
    }
    // ANCHOR_END: start_connect

    // ANCHOR: poll_connect
    /// Completes a connect begun by [`start_connect`](Self::start_connect).
    /// A socket becomes writable when the connect finishes either way, so on
    /// writable we ask the socket whether it failed (`take_error`) and
    /// whether it is really connected (`peer_addr`).
    pub fn poll_connect(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_io(cx, Direction::Write, |io| {
            if let Some(err) = io.take_error()? {
                return Err(err);
            }
            match io.peer_addr() {
                Ok(_) => Ok(()),
                // Not yet: wait for the next writable event.
                Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                    Err(io::ErrorKind::WouldBlock.into())
                }
                Err(e) => Err(e),
            }
        })
    }
    // ANCHOR_END: poll_connect

    /// Connects to `addr`.
    pub async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
        let mut stream = TcpStream::start_connect(addr)?;
        poll_fn(|cx| stream.poll_connect(cx)).await?;
        Ok(stream)
    }

    /// Resolves `host` off the loop thread, then connects to each address in
    /// turn until one accepts. The error names the host when all fail.
    pub async fn connect_host(host: &str, port: u16) -> io::Result<TcpStream> {
        let addrs = resolve(host, port).await?;
        let mut last_err = None;
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("{host} has no addresses"))
        }))
    }

    /// Reads into `buf`, waiting until at least one byte (or EOF, `Ok(0)`)
    /// is there.
    pub fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let len = buf.len();
        self.io.poll_read(cx, len, |mut io| io.read(buf))
    }

    /// Writes some of `buf`, waiting until the socket takes at least a byte.
    /// Returns how many it took, which may be fewer than `buf.len()`.
    pub fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io
            .poll_io(cx, Direction::Write, |mut io| io.write(buf))
    }

    /// Reads some bytes; `Ok(0)` means the peer closed its side.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_read(cx, buf)).await
    }

    /// Writes some bytes; see [`poll_write`](Self::poll_write).
    pub async fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_write(cx, buf)).await
    }

    /// Writes all of `buf`. The chapter's `sock.send(request)` ignores how
    /// many bytes `send` took; a large request on a slow socket would be cut
    /// short. This keeps going until every byte is written.
    pub async fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write(buf).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => buf = &buf[n..],
            }
        }
        Ok(())
    }

    /// Reads until EOF, appending to `out`. Returns the number of bytes read.
    pub async fn read_to_end(&mut self, out: &mut Vec<u8>) -> io::Result<usize> {
        let mut chunk = [0u8; 16 * 1024];
        let start = out.len();
        loop {
            match self.read(&mut chunk).await? {
                0 => return Ok(out.len() - start),
                n => out.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Registers a connected std socket with the running runtime: the other
    /// end of [`into_std`](Self::into_std), on another loop.
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        let io = Registration::new(mio::net::TcpStream::from_std(stream))?;
        trace!(target: "runtime", "adopted a socket, token={}", io.token().0);
        Ok(TcpStream { io })
    }

    /// The socket, taken out of this loop to be handed to another
    /// ([`Loops`](crate::Loops)), which adopts it with
    /// [`from_std`](Self::from_std). It is the same connection: a copy of
    /// its descriptor leaves, and this one is deregistered and closed.
    /// Bytes the peer already sent stay in the kernel for the new owner.
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        let fd = self.io.get_ref().as_fd().try_clone_to_owned()?;
        Ok(std::net::TcpStream::from(fd))
    }

    /// Shuts down one or both halves of the connection.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }

    /// The address of the other end.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// The address of this end.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// Turns Nagle's algorithm off (`true`) or on: small writes go out at once.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.get_ref().set_nodelay(nodelay)
    }

    /// The event-loop token, as the trace log shows it.
    pub fn token(&self) -> mio::Token {
        self.io.token()
    }
}

/// The socket itself, for the options this type does not wrap (a send
/// buffer's size, say, through `socket2::SockRef`). Reading or writing
/// through it behind the reactor's back would leave the registration's
/// idea of readiness stale: use it for options only.
impl std::os::fd::AsFd for TcpStream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.io.get_ref().as_fd()
    }
}

impl Drop for TcpStream {
    fn drop(&mut self) {
        // The registration deregisters and closes the socket after this.
        trace!(target: "runtime", "close token={}", self.io.token().0);
    }
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpStream")
            .field("token", &self.io.token().0)
            .field("local", &self.io.get_ref().local_addr().ok())
            .field("peer", &self.io.get_ref().peer_addr().ok())
            .finish()
    }
}

/// A listening socket. It registers with the runtime on the first
/// `accept`, so a program can bind, print its port, and only then start the
/// runtime.
#[derive(Debug)]
pub struct TcpListener {
    state: Listener,
}

/// A listener before and after its first `accept`.
#[derive(Debug)]
enum Listener {
    Bound(mio::net::TcpListener),
    Registered(Registration<mio::net::TcpListener>),
    /// Only while moving from one to the other, or if registering failed.
    Gone,
}

impl TcpListener {
    /// Binds to `addr`; port 0 picks a free port.
    pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
        Ok(TcpListener {
            state: Listener::Bound(mio::net::TcpListener::bind(addr)?),
        })
    }

    /// A listening std socket, made elsewhere (with a listen backlog of
    /// its own, say): it registers with the runtime on the first `accept`.
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        Ok(TcpListener {
            state: Listener::Bound(mio::net::TcpListener::from_std(listener)),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match &self.state {
            Listener::Bound(io) => io.local_addr(),
            Listener::Registered(io) => io.get_ref().local_addr(),
            Listener::Gone => Err(listener_gone()),
        }
    }

    /// Waits for the next connection.
    pub fn poll_accept(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        if let Listener::Bound(_) = self.state
            && let Listener::Bound(io) = std::mem::replace(&mut self.state, Listener::Gone)
        {
            self.state = Listener::Registered(Registration::new(io)?);
        }
        let Listener::Registered(listener) = &self.state else {
            return Poll::Ready(Err(listener_gone()));
        };
        let (io, peer) = match listener.poll_io(cx, Direction::Read, |io| io.accept()) {
            Poll::Ready(Ok(pair)) => pair,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        };
        let io = Registration::new(io)?;
        trace!(target: "runtime", "accepted {peer}, token={}", io.token().0);
        Poll::Ready(Ok((TcpStream { io }, peer)))
    }

    /// Waits for the next connection.
    pub async fn accept(&mut self) -> io::Result<(TcpStream, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }
}

fn listener_gone() -> io::Error {
    io::Error::other("the listener could not be registered with the runtime")
}

/// Looks up `host`'s addresses without blocking the loop. An IP literal is
/// parsed in place; a name goes to the system resolver on a helper thread
/// (see [`spawn_blocking`](crate::spawn_blocking)), because `getaddrinfo` has no non-blocking form.
pub async fn resolve(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = literal.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let owned = host.to_string();
    let addrs = spawn_blocking(move || (owned.as_str(), port).to_socket_addrs())
        .await?
        .map_err(|e| io::Error::new(e.kind(), format!("cannot resolve {host}: {e}")))?;
    Ok(addrs.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_until_complete;

    #[test]
    fn echo_round_trip_over_loopback() {
        let got = run_until_complete(async {
            let mut listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let addr = listener.local_addr().unwrap();
            let server = crate::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = Vec::new();
                s.read_to_end(&mut buf).await.unwrap();
                s.write_all(&buf).await.unwrap();
            });
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(b"hello").await.unwrap();
            c.shutdown(Shutdown::Write).unwrap();
            let mut back = Vec::new();
            c.read_to_end(&mut back).await.unwrap();
            server.await.unwrap();
            back
        })
        .unwrap();
        assert_eq!(got, b"hello");
    }

    #[test]
    fn a_connection_accepted_on_one_loop_is_served_on_another() {
        let other = crate::Loops::start(1).unwrap();
        let there = other.handles()[0].clone();
        let got = run_until_complete(async move {
            let mut listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let addr = listener.local_addr().unwrap();
            let client = std::thread::spawn(move || {
                use std::io::{Read, Write};
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                c.write_all(b"hello").unwrap();
                c.shutdown(Shutdown::Write).unwrap();
                let mut back = Vec::new();
                c.read_to_end(&mut back).unwrap();
                back
            });
            let (accepted, _) = listener.accept().await.unwrap();
            let handed = accepted.into_std().unwrap();
            there
                .spawn_with(move || async move {
                    let mut s = TcpStream::from_std(handed).unwrap();
                    let mut buf = Vec::new();
                    s.read_to_end(&mut buf).await.unwrap();
                    s.write_all(&buf).await.unwrap();
                })
                .await
                .unwrap();
            client.join().unwrap()
        })
        .unwrap();
        assert_eq!(got, b"hello");
        other.join();
    }

    #[test]
    fn resolve_parses_literals_and_names() {
        let (v4, v6, named) = run_until_complete(async {
            (
                resolve("127.0.0.1", 80).await.unwrap(),
                resolve("[::1]", 81).await.unwrap(),
                resolve("localhost", 82).await.unwrap(),
            )
        })
        .unwrap();
        assert_eq!(v4, ["127.0.0.1:80".parse().unwrap()]);
        assert_eq!(v6, ["[::1]:81".parse().unwrap()]);
        assert!(
            named.iter().all(|a| a.port() == 82 && a.ip().is_loopback()),
            "{named:?}"
        );
    }

    #[test]
    fn a_bad_name_is_an_error_naming_the_host() {
        let err = run_until_complete(resolve("no such host.invalid", 80))
            .unwrap()
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot resolve no such host.invalid"),
            "{err}"
        );
    }
}
