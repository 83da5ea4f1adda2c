//! A WebSocket client on our runtime, as small as a bot needs: the
//! handshake, masked frames out, whole frames in. The load test's bots use
//! it; a browser is the real client.

use std::io;
use std::net::SocketAddr;

use runtime::TcpStream;

use crate::websocket::Opcode;

/// A connected player.
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
    /// A cheap, changing mask: RFC 6455 wants it unpredictable to stop
    /// cache poisoning through proxies, which loopback bots need not fear.
    mask: u32,
}

impl Client {
    /// Connects to the server at `addr` as the player `name` (a plain word:
    /// it goes into the URL as it is).
    pub async fn connect(addr: SocketAddr, name: &str) -> io::Result<Client> {
        let mut stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let request = format!(
            "GET /ws?name={name} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await?;
        let mut client = Client {
            stream,
            buf: Vec::new(),
            mask: 0x9E37_79B9 ^ name.len() as u32,
        };
        let head = loop {
            if let Some(end) = client.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&client.buf[..end]).into_owned();
                client.buf.drain(..end + 4);
                break head;
            }
            client.fill().await?;
        };
        if !head.starts_with("HTTP/1.1 101") {
            let status = head.lines().next().unwrap_or("").to_string();
            return Err(io::Error::other(format!("refused: {status}")));
        }
        Ok(client)
    }

    /// Sends a text message, masked as a client must.
    pub async fn send_text(&mut self, text: &str) -> io::Result<()> {
        self.send(Opcode::Text, text.as_bytes()).await
    }

    /// Sends one frame, masked, of at most 64 KiB.
    async fn send(&mut self, opcode: Opcode, payload: &[u8]) -> io::Result<()> {
        self.mask = self.mask.rotate_left(5).wrapping_add(0x6D2B_79F5);
        let mask = self.mask.to_be_bytes();
        let mut frame = vec![0x80 | opcode as u8];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n.min(0xFFFF) as u16).to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(
            payload
                .iter()
                .take(0xFFFF)
                .enumerate()
                .map(|(i, b)| b ^ mask[i % 4]),
        );
        self.stream.write_all(&frame).await
    }

    /// The next frame from the server: its opcode bits and payload. `None`
    /// when the server closed the connection. A ping is answered here, as
    /// a browser does by itself, and not returned.
    pub async fn frame(&mut self) -> io::Result<Option<(u8, Vec<u8>)>> {
        loop {
            if let Some((opcode, payload, used)) = parse_server_frame(&self.buf) {
                self.buf.drain(..used);
                if opcode == Opcode::Ping as u8 {
                    self.send(Opcode::Pong, &payload).await?;
                    continue;
                }
                return Ok(Some((opcode, payload)));
            }
            if self.fill().await? == 0 {
                return Ok(None);
            }
        }
    }

    /// Reads what has come, straight into `buf`. (A buffer on the stack
    /// would live in this future while it waits: ten thousand bots, each
    /// waiting with 64 KB, took 680 MB.)
    async fn fill(&mut self) -> io::Result<usize> {
        let start = self.buf.len();
        self.buf.resize(start + 4096, 0);
        let read = self.stream.read(&mut self.buf[start..]).await;
        self.buf.truncate(start + *read.as_ref().unwrap_or(&0));
        read
    }
}

/// A whole unmasked frame at the start of `buf`: opcode bits, payload and
/// the bytes it took.
fn parse_server_frame(buf: &[u8]) -> Option<(u8, Vec<u8>, usize)> {
    let (&first, &second) = (buf.first()?, buf.get(1)?);
    let (len, start): (usize, usize) = match second & 0x7F {
        126 => (
            usize::from(u16::from_be_bytes(buf.get(2..4)?.try_into().ok()?)),
            4,
        ),
        127 => (
            usize::try_from(u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?)).ok()?,
            10,
        ),
        n => (usize::from(n), 2),
    };
    let payload = buf.get(start..start.checked_add(len)?)?.to_vec();
    Some((first & 0x0F, payload, start + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_frames_only() {
        let frame = crate::websocket::text_frame("{\"you\":42}");
        let (opcode, payload, used) = parse_server_frame(&frame).unwrap();
        assert_eq!(
            (opcode, payload.as_slice(), used),
            (1, &b"{\"you\":42}"[..], frame.len())
        );
        assert_eq!(parse_server_frame(&frame[..frame.len() - 1]), None);
    }
}
