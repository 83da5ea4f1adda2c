//! WebSockets (RFC 6455), server side, without I/O: the opening handshake,
//! frames out, and a decoder for the frames a client sends. The server's
//! tasks own the sockets and feed this module bytes; it never waits.
//!
//! We write it ourselves rather than take a crate: it is small, and it is
//! where a reader sees what a WebSocket is (an HTTP request that turns
//! into a stream of length-prefixed, masked frames).

use std::fmt;

use sha1::{Digest, Sha1};

/// The GUID every server appends to the client's key (RFC 6455, 1.3).
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Close codes (RFC 6455, 7.4.1).
pub const CLOSE_NORMAL: u16 = 1000;
/// The endpoint is going away (a server shutting down).
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// The peer broke the protocol.
pub const CLOSE_PROTOCOL: u16 = 1002;
/// A text message that is not UTF-8.
pub const CLOSE_INVALID_DATA: u16 = 1007;
/// The peer broke a rule of this server (here: it stopped reading).
pub const CLOSE_POLICY: u16 = 1008;
/// A frame or message larger than this server takes.
pub const CLOSE_TOO_BIG: u16 = 1009;

// ANCHOR: handshake
/// Why a request is not a WebSocket handshake we accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandshakeError {
    /// A required header is missing or wrong: answer 400.
    Bad(&'static str),
    /// The client speaks another version: answer 426 with ours.
    Version,
}

impl HandshakeError {
    /// The HTTP status to answer with.
    pub fn status(&self) -> u16 {
        match self {
            HandshakeError::Bad(_) => 400,
            HandshakeError::Version => 426,
        }
    }
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::Bad(what) => write!(f, "not a WebSocket handshake: {what}"),
            HandshakeError::Version => f.write_str("only WebSocket version 13 is spoken here"),
        }
    }
}

impl std::error::Error for HandshakeError {}

/// Checks an upgrade request's headers (name, value) and returns the
/// `101 Switching Protocols` response to send. The method (GET) and the
/// path are the caller's business.
pub fn handshake(headers: &[(String, Vec<u8>)]) -> Result<Vec<u8>, HandshakeError> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    };
    let has_token = |name: &str, token: &str| {
        header(name).is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    };
    if !has_token("upgrade", "websocket") {
        return Err(HandshakeError::Bad("no Upgrade: websocket"));
    }
    if !has_token("connection", "upgrade") {
        return Err(HandshakeError::Bad("no Connection: upgrade"));
    }
    if header("sec-websocket-version").map(str::trim) != Some("13") {
        return Err(HandshakeError::Version);
    }
    // RFC 6455 11.3.1: the key may not appear more than once. Two keys
    // would leave the server to pick which one to prove it read.
    let keys = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-key"))
        .count();
    if keys > 1 {
        return Err(HandshakeError::Bad("more than one Sec-WebSocket-Key"));
    }
    let key = header("sec-websocket-key")
        .map(str::trim)
        .ok_or(HandshakeError::Bad("no Sec-WebSocket-Key"))?;
    // The key is 16 random bytes in base64: 24 characters, two of them `=`.
    if key.len() != 24 || !key.ends_with("==") || !key[..22].bytes().all(is_base64) {
        return Err(HandshakeError::Bad(
            "a Sec-WebSocket-Key that is not 16 bytes of base64",
        ));
    }
    Ok(format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\n\r\n",
        accept_key(key)
    )
    .into_bytes())
}

/// The `Sec-WebSocket-Accept` value for a client's key: proof that the
/// server read the key, so a cache or a confused server cannot fake it.
pub fn accept_key(key: &str) -> String {
    let digest = Sha1::new()
        .chain_update(key.as_bytes())
        .chain_update(GUID.as_bytes())
        .finalize();
    base64(&digest)
}
// ANCHOR_END: handshake

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn is_base64(b: u8) -> bool {
    BASE64.contains(&b)
}

/// Standard base64 with padding: three bytes become four characters.
fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// What a frame carries (RFC 6455, 5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    /// The next part of a fragmented message.
    Continuation = 0x0,
    /// A text message (UTF-8), or its first part.
    Text = 0x1,
    /// A binary message, or its first part.
    Binary = 0x2,
    /// The close handshake.
    Close = 0x8,
    /// Are you there?
    Ping = 0x9,
    /// Yes.
    Pong = 0xA,
}

impl Opcode {
    fn from_bits(bits: u8) -> Option<Opcode> {
        Some(match bits {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xA => Opcode::Pong,
            _ => return None,
        })
    }

    fn is_control(self) -> bool {
        self as u8 & 0x8 != 0
    }
}

// ANCHOR: encode
/// Appends one whole, final frame as a server sends it: never masked, the
/// length in 7 bits, or 16, or 64.
pub fn encode_frame(opcode: Opcode, payload: &[u8], out: &mut Vec<u8>) {
    out.push(0x80 | opcode as u8);
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n <= 0xFFFF => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}
// ANCHOR_END: encode

/// A text frame.
pub fn text_frame(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 10);
    encode_frame(Opcode::Text, text.as_bytes(), &mut out);
    out
}

/// A ping, which the client answers with a pong of the same `payload`.
pub fn ping_frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_frame(Opcode::Ping, payload, &mut out);
    out
}

/// A pong answering a ping with `payload`.
pub fn pong_frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_frame(Opcode::Pong, payload, &mut out);
    out
}

/// A close frame: the code, then a reason, cut at a character boundary
/// so that the payload fits a control frame's 125 bytes.
pub fn close_frame(code: u16, reason: &str) -> Vec<u8> {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let mut payload = code.to_be_bytes().to_vec();
    payload.extend_from_slice(&reason.as_bytes()[..end]);
    let mut out = Vec::new();
    encode_frame(Opcode::Close, &payload, &mut out);
    out
}

/// A whole message from the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Text, checked to be UTF-8.
    Text(String),
    /// Bytes.
    Binary(Vec<u8>),
    /// A ping, to answer with a pong of the same payload.
    Ping(Vec<u8>),
    /// A pong.
    Pong(Vec<u8>),
    /// The client closes, with a code and reason if it gave one.
    Close(Option<(u16, String)>),
}

/// The client broke the protocol: close with `code`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError {
    /// The close code to send.
    pub code: u16,
    /// Why, for the close frame and the log.
    pub reason: &'static str,
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason, self.code)
    }
}

impl std::error::Error for ProtocolError {}

fn error(code: u16, reason: &'static str) -> ProtocolError {
    ProtocolError { code, reason }
}

/// The fixed part of a frame, read before its payload.
struct Header {
    fin: bool,
    opcode: Opcode,
    mask: [u8; 4],
    len: usize,
    /// Bytes of header: 2 to 14.
    size: usize,
}

// ANCHOR: decoder
/// Turns the bytes a client sends into whole messages. The caller appends
/// what it reads with [`push`](Self::push) and takes messages with
/// [`next_message`](Self::next_message) until it says `None` (more bytes needed). Memory
/// is bounded: at most one frame past `max_frame` is never buffered, and a
/// message past `max_message` is refused.
pub struct Decoder {
    max_frame: usize,
    max_message: usize,
    /// Bytes read; those before `start` are decoded. Decoding moves
    /// `start` on, and only `push` moves the rest to the front, once per
    /// read: draining each frame off the front instead moved the whole
    /// buffer per frame, and a client sending small frames as fast as
    /// loopback takes them cost the server 500 frames times 4 KiB per read.
    buf: Vec<u8>,
    start: usize,
    /// A fragmented message being put together: its opcode and payload.
    partial: Option<(Opcode, Vec<u8>)>,
}

impl Decoder {
    /// A decoder that refuses frames over `max_frame` bytes and messages
    /// over `max_message` (close code 1009).
    pub fn new(max_frame: usize, max_message: usize) -> Decoder {
        Decoder {
            max_frame,
            max_message,
            buf: Vec::new(),
            start: 0,
            partial: None,
        }
    }

    /// Appends bytes read from the client.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.drain(..self.start);
        self.start = 0;
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message, `None` if more bytes are needed, or the
    /// rule the client broke. After an error the connection is closed:
    /// the decoder is not used again.
    pub fn next_message(&mut self) -> Result<Option<Message>, ProtocolError> {
        loop {
            let Some(header) = self.header()? else {
                return Ok(None);
            };
            let pending = &self.buf[self.start..];
            let Some(frame) = pending.get(header.size..header.size + header.len) else {
                return Ok(None); // the payload is still on its way
            };
            let payload: Vec<u8> = frame
                .iter()
                .enumerate()
                .map(|(i, b)| b ^ header.mask[i % 4])
                .collect();
            self.start += header.size + header.len;
            if let Some(message) = self.frame(header.fin, header.opcode, payload)? {
                return Ok(Some(message));
            }
        }
    }

    /// Reads and checks the next frame's header, if it is all here. Sizes
    /// are checked here, before any payload is waited for: a frame that
    /// claims 2^63 bytes is refused as soon as its header arrives.
    fn header(&self) -> Result<Option<Header>, ProtocolError> {
        let buf = &self.buf[self.start..];
        let [first, second, ..] = buf[..] else {
            return Ok(None);
        };
        if first & 0x70 != 0 {
            return Err(error(CLOSE_PROTOCOL, "reserved bits set"));
        }
        let opcode =
            Opcode::from_bits(first & 0x0F).ok_or(error(CLOSE_PROTOCOL, "a reserved opcode"))?;
        if second & 0x80 == 0 {
            return Err(error(CLOSE_PROTOCOL, "a client frame must be masked"));
        }
        let fin = first & 0x80 != 0;
        let (len, at) = match second & 0x7F {
            126 => match buf.get(2..4) {
                Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
                None => return Ok(None),
            },
            127 => match buf.get(2..10) {
                Some(b) => (u64::from_be_bytes(b.try_into().unwrap_or_default()), 10),
                None => return Ok(None),
            },
            n => (u64::from(n), 2),
        };
        if opcode.is_control() && (len > 125 || !fin) {
            return Err(error(
                CLOSE_PROTOCOL,
                "a control frame over 125 bytes or fragmented",
            ));
        }
        if len >> 63 != 0 {
            return Err(error(
                CLOSE_PROTOCOL,
                "a 64-bit length with its top bit set",
            ));
        }
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > self.max_frame {
            return Err(error(
                CLOSE_TOO_BIG,
                "a frame larger than this server takes",
            ));
        }
        let Some(mask) = buf.get(at..at + 4) else {
            return Ok(None);
        };
        Ok(Some(Header {
            fin,
            opcode,
            mask: [mask[0], mask[1], mask[2], mask[3]],
            len,
            size: at + 4,
        }))
    }

    /// One frame's payload: a whole message, part of one, or a control
    /// frame (which may come between the parts of a message).
    fn frame(
        &mut self,
        fin: bool,
        opcode: Opcode,
        payload: Vec<u8>,
    ) -> Result<Option<Message>, ProtocolError> {
        match opcode {
            Opcode::Ping => Ok(Some(Message::Ping(payload))),
            Opcode::Pong => Ok(Some(Message::Pong(payload))),
            Opcode::Close => close_message(&payload).map(Some),
            Opcode::Text | Opcode::Binary => {
                if self.partial.is_some() {
                    return Err(error(
                        CLOSE_PROTOCOL,
                        "a new message before the last one ended",
                    ));
                }
                self.partial = Some((opcode, Vec::new()));
                self.append(fin, payload)
            }
            Opcode::Continuation => {
                if self.partial.is_none() {
                    return Err(error(CLOSE_PROTOCOL, "a continuation of no message"));
                }
                self.append(fin, payload)
            }
        }
    }

    /// Adds a data frame's payload to the message; on the last frame,
    /// returns the message, checking text as UTF-8 only then (a character
    /// may be split between two frames).
    fn append(&mut self, fin: bool, payload: Vec<u8>) -> Result<Option<Message>, ProtocolError> {
        let Some((_, message)) = self.partial.as_mut() else {
            return Ok(None);
        };
        if message.len() + payload.len() > self.max_message {
            return Err(error(
                CLOSE_TOO_BIG,
                "a message larger than this server takes",
            ));
        }
        message.extend_from_slice(&payload);
        if !fin {
            return Ok(None);
        }
        let Some((opcode, message)) = self.partial.take() else {
            return Ok(None);
        };
        Ok(Some(match opcode {
            Opcode::Text => Message::Text(
                String::from_utf8(message)
                    .map_err(|_| error(CLOSE_INVALID_DATA, "text that is not UTF-8"))?,
            ),
            _ => Message::Binary(message),
        }))
    }
}
// ANCHOR_END: decoder

/// A close frame's payload: empty, or a code that may be sent and a UTF-8
/// reason.
fn close_message(payload: &[u8]) -> Result<Message, ProtocolError> {
    match payload {
        [] => Ok(Message::Close(None)),
        [_] => Err(error(CLOSE_PROTOCOL, "a close frame of one byte")),
        [high, low, reason @ ..] => {
            let code = u16::from_be_bytes([*high, *low]);
            // 1005, 1006 and 1015 only ever appear in APIs, never on the
            // wire; below 1000 and the unassigned ones are not codes.
            let allowed = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
            if !allowed {
                return Err(error(CLOSE_PROTOCOL, "a close code that may not be sent"));
            }
            let reason = std::str::from_utf8(reason)
                .map_err(|_| error(CLOSE_INVALID_DATA, "a close reason that is not UTF-8"))?;
            Ok(Message::Close(Some((code, reason.to_string()))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client frame: masked, as a client must send it.
    fn client(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![if fin { 0x80 } else { 0 } | opcode];
        match payload.len() {
            n if n < 126 => out.push(0x80 | n as u8),
            n if n <= 0xFFFF => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(0x80 | 127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = [0xA1, 0xB2, 0xC3, 0xD4];
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        out
    }

    fn decode(bytes: &[u8]) -> Result<Vec<Message>, ProtocolError> {
        let mut decoder = Decoder::new(1024, 4096);
        decoder.push(bytes);
        let mut messages = Vec::new();
        while let Some(message) = decoder.next_message()? {
            messages.push(message);
        }
        Ok(messages)
    }

    fn code(bytes: &[u8]) -> u16 {
        decode(bytes).unwrap_err().code
    }

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn the_rfcs_example_key() {
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn handshakes() {
        let good = [
            ("Host", "x"),
            ("Upgrade", "WebSocket"),
            ("Connection", "keep-alive, Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "13"),
        ];
        let reply = String::from_utf8(handshake(&headers(&good)).unwrap()).unwrap();
        assert!(reply.starts_with("HTTP/1.1 101 Switching Protocols\r\n"));
        assert!(reply.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
        let without = |name: &str| {
            headers(
                &good
                    .iter()
                    .copied()
                    .filter(|(n, _)| *n != name)
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            handshake(&without("Sec-WebSocket-Key"))
                .unwrap_err()
                .status(),
            400
        );
        assert_eq!(handshake(&without("Upgrade")).unwrap_err().status(), 400);
        assert_eq!(handshake(&without("Connection")).unwrap_err().status(), 400);
        assert_eq!(
            handshake(&without("Sec-WebSocket-Version")).unwrap_err(),
            HandshakeError::Version
        );
        let mut short_key = good;
        short_key[3].1 = "c2hvcnQ=";
        assert_eq!(handshake(&headers(&short_key)).unwrap_err().status(), 400);
    }

    #[test]
    fn server_frames_use_the_shortest_length() {
        for (len, header) in [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10)] {
            let mut out = Vec::new();
            encode_frame(Opcode::Binary, &vec![7; len], &mut out);
            assert_eq!(out.len(), header + len, "{len}");
            assert_eq!(out[0], 0x82);
            assert_eq!(out[1] & 0x80, 0, "never masked");
        }
        let close = close_frame(1001, &"é".repeat(100));
        assert_eq!(close[1] as usize, close.len() - 2);
        assert!(close.len() - 2 <= 125);
        assert!(
            std::str::from_utf8(&close[4..]).is_ok(),
            "cut at a character boundary"
        );
    }

    #[test]
    fn messages_split_anywhere_come_out_whole() {
        let mut stream = client(true, 0x1, b"up");
        stream.extend(client(true, 0x9, b"hi"));
        stream.extend(client(false, 0x1, "ré".as_bytes().get(..2).unwrap()));
        stream.extend(client(true, 0xA, b""));
        stream.extend(client(true, 0x0, "ré".as_bytes().get(2..).unwrap()));
        stream.extend(client(true, 0x2, &[0; 300]));
        stream.extend(client(true, 0x8, &[0x03, 0xE8, b'o', b'k']));
        let want = vec![
            Message::Text("up".into()),
            Message::Ping(b"hi".to_vec()),
            Message::Pong(Vec::new()),
            Message::Text("ré".into()),
            Message::Binary(vec![0; 300]),
            Message::Close(Some((1000, "ok".into()))),
        ];
        assert_eq!(decode(&stream).unwrap(), want);
        // One byte at a time, the same messages.
        let mut decoder = Decoder::new(1024, 4096);
        let mut got = Vec::new();
        for byte in &stream {
            decoder.push(&[*byte]);
            while let Some(message) = decoder.next_message().unwrap() {
                got.push(message);
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn broken_rules_get_their_close_codes() {
        let unmasked = [0x81, 0x02, b'u', b'p'];
        assert_eq!(code(&unmasked), 1002);
        let mut rsv = client(true, 0x1, b"x");
        rsv[0] |= 0x40;
        assert_eq!(code(&rsv), 1002);
        assert_eq!(code(&client(true, 0x3, b"")), 1002, "a reserved opcode");
        assert_eq!(code(&client(true, 0x9, &[0; 126])), 1002, "a long ping");
        assert_eq!(code(&client(false, 0x9, b"")), 1002, "a fragmented ping");
        assert_eq!(
            code(&client(true, 0x0, b"x")),
            1002,
            "a continuation of nothing"
        );
        let mut twice = client(false, 0x1, b"a");
        twice.extend(client(true, 0x1, b"b"));
        assert_eq!(code(&twice), 1002, "a new message inside another");
        assert_eq!(code(&client(true, 0x1, &[0xFF])), 1007);
        assert_eq!(code(&client(true, 0x8, &[3])), 1002, "a one-byte close");
        for bad in [999u16, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            assert_eq!(code(&client(true, 0x8, &bad.to_be_bytes())), 1002, "{bad}");
        }
        let mut bad_reason = 1000u16.to_be_bytes().to_vec();
        bad_reason.push(0xC3);
        assert_eq!(code(&client(true, 0x8, &bad_reason)), 1007);
        assert_eq!(
            decode(&client(true, 0x8, &4000u16.to_be_bytes()))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn sizes_are_checked_before_the_bytes_arrive() {
        // A header claiming 2^63 bytes, and nothing after it.
        let mut huge = vec![0x82, 0x80 | 127];
        huge.extend_from_slice(&(1u64 << 63).to_be_bytes());
        assert_eq!(code(&huge), 1002);
        let mut big = vec![0x82, 0x80 | 127];
        big.extend_from_slice(&(1u64 << 40).to_be_bytes());
        assert_eq!(code(&big), 1009);
        assert_eq!(code(&client(true, 0x2, &[0; 1025])), 1009, "over max_frame");
        let mut long = Vec::new();
        for _ in 0..4 {
            long.extend(client(
                false,
                if long.is_empty() { 0x2 } else { 0x0 },
                &[0; 1000],
            ));
        }
        long.extend(client(true, 0x0, &[0; 1000]));
        assert_eq!(code(&long), 1009, "over max_message");
    }
}
