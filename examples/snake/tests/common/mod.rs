//! A WebSocket client for the tests, on blocking std sockets, so that it
//! shares nothing with the server's code but the RFC: the handshake,
//! masked frames out, frames in, pings answered as a browser answers them.

// Each test file uses its own part of this.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use snake::view::Screen;

pub fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// A WebSocket client: the handshake, masked frames out, frames in.
pub struct Client {
    pub stream: TcpStream,
    buf: Vec<u8>,
    /// What the frames so far have shown.
    pub screen: Screen,
}

pub const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

impl Client {
    pub fn open(addr: SocketAddr, name: &str) -> Client {
        Client::open_on(connect(addr), name)
    }

    /// A client whose socket takes little before the server must wait:
    /// a receive buffer of 4 KiB, set before it connects (the window it
    /// offers is fixed at the handshake).
    pub fn open_small(addr: SocketAddr, name: &str) -> Client {
        let socket =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        socket.connect(&addr.into()).unwrap();
        let stream: TcpStream = socket.into();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Client::open_on(stream, name)
    }

    pub fn open_on(stream: TcpStream, name: &str) -> Client {
        let mut client = Client {
            stream,
            buf: Vec::new(),
            screen: Screen::default(),
        };
        client.send_head(&format!(
            "GET /ws?name={name} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ));
        let head = client.read_head();
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        // The RFC's own example: this key's accept value.
        assert!(
            head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
            "{head}"
        );
        client
    }

    pub fn raw(addr: SocketAddr) -> Client {
        Client {
            stream: connect(addr),
            buf: Vec::new(),
            screen: Screen::default(),
        }
    }

    pub fn send_head(&mut self, head: &str) {
        self.stream.write_all(head.as_bytes()).unwrap();
    }

    pub fn read_head(&mut self) -> String {
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8(self.buf[..end + 4].to_vec()).unwrap();
                self.buf.drain(..end + 4);
                return head;
            }
            self.fill();
        }
    }

    pub fn fill(&mut self) -> usize {
        let mut chunk = [0u8; 65536];
        let n = self.stream.read(&mut chunk).unwrap();
        self.buf.extend_from_slice(&chunk[..n]);
        n
    }

    /// Sends a frame, masked as a client must (unless `masked` is false,
    /// to break the rule on purpose).
    pub fn send(&mut self, opcode: u8, payload: &[u8], masked: bool) {
        self.stream
            .write_all(&client_frame(opcode, payload, masked))
            .unwrap();
    }

    pub fn text(&mut self, text: &str) {
        self.send(0x1, text.as_bytes(), true);
    }

    /// The next frame from the server: its opcode and payload. Server
    /// frames are never masked. A ping is answered here, as a browser
    /// does by itself, and not returned.
    pub fn frame(&mut self) -> (u8, Vec<u8>) {
        loop {
            let (opcode, payload) = self.frame_as_is();
            if opcode != 0x9 {
                return (opcode, payload);
            }
            self.send(0xA, &payload, true);
        }
    }

    /// The next frame from the server, a ping too, unanswered.
    pub fn frame_as_is(&mut self) -> (u8, Vec<u8>) {
        loop {
            if let Some((opcode, payload, used)) = parse(&self.buf) {
                self.buf.drain(..used);
                return (opcode, payload);
            }
            assert!(self.fill() > 0, "the server closed without a close frame");
        }
    }

    /// The next tick's frame, applied to what this client has seen:
    /// returns the screen, and whether the frame was full.
    pub fn tick(&mut self) -> (&Screen, bool) {
        loop {
            let (opcode, payload) = self.frame();
            if opcode == 0x2 {
                let full = self.screen.apply(&payload).unwrap();
                return (&self.screen, full);
            }
        }
    }

    /// The close frame the server sends: its code. Anything before it
    /// (states still on their way) is skipped.
    pub fn close_code(&mut self) -> u16 {
        loop {
            let (opcode, payload) = self.frame();
            if opcode == 0x8 {
                return u16::from_be_bytes([payload[0], payload[1]]);
            }
        }
    }

    /// True once the server has closed the TCP connection.
    pub fn at_eof(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(_) => return false,
            }
        }
    }
}

/// A frame as a client sends it: masked, unless `masked` is false.
pub fn client_frame(opcode: u8, payload: &[u8], masked: bool) -> Vec<u8> {
    let mut frame = vec![0x80 | opcode];
    let mask_bit = if masked { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => frame.push(mask_bit | n as u8),
        n if n < 65536 => {
            frame.push(mask_bit | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(mask_bit | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    if masked {
        let mask = [0x12, 0x34, 0x56, 0x78];
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    } else {
        frame.extend_from_slice(payload);
    }
    frame
}

/// A whole server frame at the start of `buf`: opcode, payload, and the
/// bytes it took.
pub fn parse(buf: &[u8]) -> Option<(u8, Vec<u8>, usize)> {
    if buf.len() < 2 {
        return None;
    }
    assert_eq!(buf[1] & 0x80, 0, "a server frame is never masked");
    let (len, start) = match buf[1] & 0x7f {
        126 => (
            u16::from_be_bytes(buf.get(2..4)?.try_into().ok()?) as usize,
            4,
        ),
        127 => (
            u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    let payload = buf.get(start..start + len)?.to_vec();
    Some((buf[0] & 0x0f, payload, start + len))
}

pub fn hello(client: &mut Client) -> u64 {
    hello_of_size(client, (40, 30))
}

/// The server's first message: the player's id, and the size of its view.
pub fn hello_of_size(client: &mut Client, view: (usize, usize)) -> u64 {
    let (opcode, payload) = client.frame();
    assert_eq!(opcode, 0x1);
    let v: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(v["view"], serde_json::json!([view.0, view.1]));
    v["you"].as_u64().unwrap()
}
