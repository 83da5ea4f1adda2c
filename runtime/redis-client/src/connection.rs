//! One connection to Redis: send commands, read their replies in order.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use runtime::TcpStream;

use crate::frame::{self, Frame, FrameError};

/// What can go wrong talking to Redis.
#[derive(Debug)]
pub enum Error {
    /// The connection failed or closed. The connection is unusable.
    Io(io::Error),
    /// The server sent bytes that are not RESP. The connection is unusable.
    Protocol(FrameError),
    /// The server refused the command (`-ERR …`, `-NOSCRIPT …`). The
    /// connection is fine.
    Server(String),
    /// The reply has a shape the command does not expect.
    Unexpected {
        /// The command sent.
        command: String,
        /// What came back.
        reply: Frame,
    },
}

impl Error {
    /// Whether the connection should be dropped: after an I/O or framing
    /// error we no longer know where the next reply starts.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::Io(_) | Error::Protocol(_))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "redis connection: {e}"),
            Error::Protocol(e) => write!(f, "redis protocol: {e}"),
            Error::Server(message) => write!(f, "redis: {message}"),
            Error::Unexpected { command, reply } => {
                // A reply can be megabytes: an error line shows its start,
                // and formatting stops there rather than after the whole.
                let mut start = Start {
                    text: String::new(),
                    cut: false,
                };
                let _ = fmt::write(&mut start, format_args!("{reply:?}"));
                let more = if start.cut { "..." } else { "" };
                write!(
                    f,
                    "redis: unexpected reply to {command}: {}{more}",
                    start.text
                )
            }
        }
    }
}

impl std::error::Error for Error {}

/// How much of an unexpected reply an error message shows, in bytes.
const SHOWN_REPLY: usize = 300;

/// The first [`SHOWN_REPLY`] bytes of what is written to it; a write past
/// them fails, which ends the formatting.
struct Start {
    text: String,
    cut: bool,
}

impl fmt::Write for Start {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = SHOWN_REPLY - self.text.len();
        if s.len() <= room {
            self.text.push_str(s);
            return Ok(());
        }
        let end = (0..=room)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        self.text.push_str(&s[..end]);
        self.cut = true;
        Err(fmt::Error)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => e,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// The least a read asks for.
const CHUNK: usize = 16 * 1024;

/// Read buffers grown past this by a big reply are given back after it.
const BIG_CHUNK: usize = 1024 * 1024;

/// A connection, with the bytes read but not yet parsed.
pub struct Connection {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Where each read lands, kept with the connection rather than on the
    /// stack of `read_frame`: a buffer on the stack across an `.await`
    /// would make every future that awaits a reply 16 KiB larger. It grows
    /// with a big reply (see `read_frame`) and shrinks back after it.
    chunk: Vec<u8>,
    addr: SocketAddr,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("addr", &self.addr)
            .finish()
    }
}

impl Connection {
    /// Connects to the server at `addr`.
    pub async fn connect(addr: SocketAddr) -> Result<Connection, Error> {
        let stream = TcpStream::connect(addr).await.map_err(|e| {
            Error::Io(io::Error::new(
                e.kind(),
                format!("cannot connect to redis at {addr}: {e}"),
            ))
        })?;
        // Commands are small and we wait for each answer: do not let Nagle
        // hold one back.
        stream.set_nodelay(true)?;
        Ok(Connection {
            stream,
            buf: Vec::with_capacity(4096),
            chunk: vec![0; CHUNK],
            addr,
        })
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sends one command and returns its reply. An error reply is
    /// [`Error::Server`].
    pub async fn command<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<Frame, Error> {
        let mut out = Vec::new();
        frame::encode_command(args, &mut out);
        trace_bytes(">", &out);
        self.stream.write_all(&out).await?;
        match self.read_frame().await? {
            Frame::Error(message) => Err(Error::Server(message)),
            reply => Ok(reply),
        }
    }

    // ANCHOR: pipeline
    /// Sends several commands in one write and reads their replies, in
    /// order: one round trip instead of `commands.len()`. Each reply is
    /// `Ok` or the server's error for that command alone; the others still
    /// ran (a pipeline is not a transaction: see `MULTI` or `EVAL`).
    pub async fn pipeline<A: AsRef<[u8]>>(
        &mut self,
        commands: &[Vec<A>],
    ) -> Result<Vec<Result<Frame, Error>>, Error> {
        let mut out = Vec::new();
        for command in commands {
            frame::encode_command(command, &mut out);
        }
        trace_bytes(">", &out);
        self.stream.write_all(&out).await?;
        let mut replies = Vec::with_capacity(commands.len());
        for _ in commands {
            replies.push(match self.read_frame().await? {
                Frame::Error(message) => Err(Error::Server(message)),
                reply => Ok(reply),
            });
        }
        Ok(replies)
    }
    // ANCHOR_END: pipeline

    /// Waits for the next message on a connection that has `SUBSCRIBE`d
    /// to a channel: `["message", channel, payload]`. Cancelling the wait
    /// (a timeout) loses nothing: bytes already read stay in the buffer.
    pub async fn receive(&mut self) -> Result<Frame, Error> {
        match self.read_frame().await? {
            Frame::Error(message) => Err(Error::Server(message)),
            frame => Ok(frame),
        }
    }

    /// Reads the next whole frame, reading from the socket as needed.
    ///
    /// An incomplete frame is parsed again from its start after each read,
    /// so each read asks for at least as much as is already held: a reply
    /// of n bytes is then parsed a handful of times, not once per 16 KiB.
    /// (With fixed 16 KiB reads a 400,000-element reply, 7 MB, took 4.8 s
    /// to read, all of it on the loop's thread.)
    async fn read_frame(&mut self) -> Result<Frame, Error> {
        loop {
            if let Some((frame, used)) = frame::parse(&self.buf).map_err(Error::Protocol)? {
                trace_bytes("<", self.buf.get(..used).unwrap_or_default());
                self.buf.drain(..used);
                if self.chunk.len() > BIG_CHUNK {
                    self.chunk = vec![0; CHUNK];
                    self.buf.shrink_to(CHUNK);
                }
                return Ok(frame);
            }
            let want = self.buf.len().max(CHUNK);
            if self.chunk.len() < want {
                self.chunk.resize(want, 0);
            }
            match self.stream.read(&mut self.chunk[..want]).await? {
                0 => {
                    return Err(Error::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("redis at {} closed the connection", self.addr),
                    )));
                }
                n => self
                    .buf
                    .extend_from_slice(self.chunk.get(..n).unwrap_or_default()),
            }
        }
    }
}

/// Logs the bytes on the wire at trace level (`RUST_LOG=redis_client=trace`),
/// `\r\n` shown as such, so that a reader can see RESP itself. Long values
/// are cut short.
fn trace_bytes(direction: &str, bytes: &[u8]) {
    if !log::log_enabled!(target: "redis_client", log::Level::Trace) {
        return;
    }
    const SHOWN: usize = 300;
    let mut text = String::new();
    for &b in bytes.iter().take(SHOWN) {
        text.extend(std::ascii::escape_default(b).map(char::from));
    }
    if bytes.len() > SHOWN {
        text.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    log::trace!(target: "redis_client", "{direction} {text}");
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn an_unexpected_reply_is_shown_cut_short() {
        let error = Error::Unexpected {
            command: "HSCAN".into(),
            reply: Frame::Array(vec![Frame::Null; 1_000_000]),
        };
        let text = error.to_string();
        let prefix = "redis: unexpected reply to HSCAN: Array([Null, Null, ";
        assert!(text.starts_with(prefix), "{text}");
        assert!(text.ends_with("..."), "{text}");
        assert_eq!(
            text.len(),
            "redis: unexpected reply to HSCAN: ".len() + SHOWN_REPLY + 3
        );
        let small = Error::Unexpected {
            command: "GET".into(),
            reply: Frame::Integer(1),
        };
        assert_eq!(
            small.to_string(),
            "redis: unexpected reply to GET: Integer(1)"
        );
    }
}
