//! HTTP/2's frames (RFC 9113 section 4): a 9-byte header, then a payload.
//! Reading and writing them is all this file does; what a frame means to a
//! connection is `connection.rs`'s business.

/// The frame header's size: length (24 bits), type, flags, stream id.
pub(crate) const HEADER_LEN: usize = 9;

/// What every connection opens with, before its first SETTINGS frame.
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The largest frame payload we accept (and the smallest a peer may
/// allow): RFC 9113's default `SETTINGS_MAX_FRAME_SIZE`.
pub(crate) const MAX_FRAME: usize = 16_384;

/// Frame types (RFC 9113 section 6).
pub(crate) mod kind {
    pub(crate) const DATA: u8 = 0x0;
    pub(crate) const HEADERS: u8 = 0x1;
    pub(crate) const PRIORITY: u8 = 0x2;
    pub(crate) const RST_STREAM: u8 = 0x3;
    pub(crate) const SETTINGS: u8 = 0x4;
    pub(crate) const PUSH_PROMISE: u8 = 0x5;
    pub(crate) const PING: u8 = 0x6;
    pub(crate) const GOAWAY: u8 = 0x7;
    pub(crate) const WINDOW_UPDATE: u8 = 0x8;
    pub(crate) const CONTINUATION: u8 = 0x9;
}

/// Frame flags. Each applies to some types only.
pub(crate) mod flag {
    /// DATA, HEADERS: the last frame the sender sends on this stream.
    pub(crate) const END_STREAM: u8 = 0x1;
    /// SETTINGS, PING: this frame answers one of ours.
    pub(crate) const ACK: u8 = 0x1;
    /// HEADERS, CONTINUATION: the header block is complete.
    pub(crate) const END_HEADERS: u8 = 0x4;
    /// DATA, HEADERS: the payload starts with a pad length.
    pub(crate) const PADDED: u8 = 0x8;
    /// HEADERS: the payload starts with priority fields.
    pub(crate) const PRIORITY: u8 = 0x20;
}

/// SETTINGS parameters (RFC 9113 section 6.5.2).
pub(crate) mod setting {
    pub(crate) const HEADER_TABLE_SIZE: u16 = 0x1;
    pub(crate) const ENABLE_PUSH: u16 = 0x2;
    pub(crate) const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub(crate) const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub(crate) const MAX_FRAME_SIZE: u16 = 0x5;
    pub(crate) const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// The error codes RST_STREAM and GOAWAY carry (RFC 9113 section 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    NoError,
    ProtocolError,
    InternalError,
    FlowControlError,
    SettingsTimeout,
    StreamClosed,
    FrameSizeError,
    RefusedStream,
    Cancel,
    CompressionError,
    ConnectError,
    EnhanceYourCalm,
    InadequateSecurity,
    Http11Required,
    /// A code RFC 9113 does not name; peers may send any.
    Other(u32),
}

impl Reason {
    pub(crate) fn code(self) -> u32 {
        match self {
            Reason::NoError => 0x0,
            Reason::ProtocolError => 0x1,
            Reason::InternalError => 0x2,
            Reason::FlowControlError => 0x3,
            Reason::SettingsTimeout => 0x4,
            Reason::StreamClosed => 0x5,
            Reason::FrameSizeError => 0x6,
            Reason::RefusedStream => 0x7,
            Reason::Cancel => 0x8,
            Reason::CompressionError => 0x9,
            Reason::ConnectError => 0xa,
            Reason::EnhanceYourCalm => 0xb,
            Reason::InadequateSecurity => 0xc,
            Reason::Http11Required => 0xd,
            Reason::Other(code) => code,
        }
    }

    pub(crate) fn from_code(code: u32) -> Reason {
        [
            Reason::NoError,
            Reason::ProtocolError,
            Reason::InternalError,
            Reason::FlowControlError,
            Reason::SettingsTimeout,
            Reason::StreamClosed,
            Reason::FrameSizeError,
            Reason::RefusedStream,
            Reason::Cancel,
            Reason::CompressionError,
            Reason::ConnectError,
            Reason::EnhanceYourCalm,
            Reason::InadequateSecurity,
            Reason::Http11Required,
        ]
        .into_iter()
        .find(|r| r.code() == code)
        .unwrap_or(Reason::Other(code))
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Other(code) => write!(f, "error code {code:#x}"),
            named => {
                let name = format!("{named:?}");
                // ProtocolError -> PROTOCOL_ERROR, as the RFC spells them.
                let mut out = String::new();
                for (i, c) in name.chars().enumerate() {
                    if c.is_ascii_uppercase() && i > 0 {
                        out.push('_');
                    }
                    out.push(c.to_ascii_uppercase());
                }
                f.write_str(if out == "HTTP11_REQUIRED" {
                    "HTTP_1_1_REQUIRED"
                } else {
                    &out
                })
            }
        }
    }
}

// ANCHOR: head
/// A frame's 9-byte header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    /// The payload's length.
    pub(crate) len: usize,
    pub(crate) kind: u8,
    pub(crate) flags: u8,
    /// 0 for the connection itself; odd for streams we open.
    pub(crate) stream: u32,
}

impl Head {
    /// The header at the front of `buf`, if all nine bytes are there.
    pub(crate) fn parse(buf: &[u8]) -> Option<Head> {
        let b = buf.get(..HEADER_LEN)?;
        Some(Head {
            len: usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            // The top bit is reserved and ignored on receipt.
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        })
    }

    /// Appends a frame with this header and `payload` to `out`.
    pub(crate) fn write(kind: u8, flags: u8, stream: u32, payload: &[u8], out: &mut Vec<u8>) {
        let len = payload.len();
        debug_assert!(len < 1 << 24, "a frame payload fits 24 bits");
        out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
        out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
        out.extend_from_slice(payload);
    }
}
// ANCHOR_END: head

/// A SETTINGS frame with `pairs`.
pub(crate) fn settings(pairs: &[(u16, u32)], out: &mut Vec<u8>) {
    let mut payload = Vec::with_capacity(pairs.len() * 6);
    for (id, value) in pairs {
        payload.extend_from_slice(&id.to_be_bytes());
        payload.extend_from_slice(&value.to_be_bytes());
    }
    Head::write(kind::SETTINGS, 0, 0, &payload, out);
}

/// The `(identifier, value)` pairs of a SETTINGS payload, or `None` if its
/// length is not a multiple of six.
pub(crate) fn parse_settings(payload: &[u8]) -> Option<Vec<(u16, u32)>> {
    if !payload.len().is_multiple_of(6) {
        return None;
    }
    Some(
        payload
            .chunks_exact(6)
            .map(|c| {
                (
                    u16::from_be_bytes([c[0], c[1]]),
                    u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
                )
            })
            .collect(),
    )
}

/// A WINDOW_UPDATE frame for `stream` (0: the connection).
pub(crate) fn window_update(stream: u32, increment: u32, out: &mut Vec<u8>) {
    Head::write(
        kind::WINDOW_UPDATE,
        0,
        stream,
        &(increment & 0x7fff_ffff).to_be_bytes(),
        out,
    );
}

/// An RST_STREAM frame.
pub(crate) fn rst_stream(stream: u32, reason: Reason, out: &mut Vec<u8>) {
    Head::write(
        kind::RST_STREAM,
        0,
        stream,
        &reason.code().to_be_bytes(),
        out,
    );
}

/// A GOAWAY frame: the last stream the peer opened that we processed
/// (always 0 for a client: a server opens none), and why.
pub(crate) fn goaway(reason: Reason, out: &mut Vec<u8>) {
    let mut payload = [0u8; 8];
    payload[4..].copy_from_slice(&reason.code().to_be_bytes());
    Head::write(kind::GOAWAY, 0, 0, &payload, out);
}

/// The payload without its padding, for DATA and HEADERS frames with
/// `PADDED`; `None` when the pad length is longer than the frame.
pub(crate) fn unpadded(flags: u8, payload: &[u8]) -> Option<&[u8]> {
    if flags & flag::PADDED == 0 {
        return Some(payload);
    }
    let (&pad, rest) = payload.split_first()?;
    rest.len()
        .checked_sub(usize::from(pad))
        .map(|len| &rest[..len])
}

/// A 32-bit big-endian number at the front of `payload`, if it has four
/// bytes.
pub(crate) fn u32_at(payload: &[u8], at: usize) -> Option<u32> {
    let b = payload.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_round_trips_and_ignores_the_reserved_bit() {
        let mut out = Vec::new();
        Head::write(kind::HEADERS, flag::END_HEADERS, 3, b"abc", &mut out);
        assert_eq!(out.len(), HEADER_LEN + 3);
        let head = Head::parse(&out).unwrap();
        assert_eq!(
            head,
            Head {
                len: 3,
                kind: kind::HEADERS,
                flags: flag::END_HEADERS,
                stream: 3
            }
        );
        out[5] |= 0x80;
        assert_eq!(Head::parse(&out).unwrap().stream, 3);
        assert_eq!(Head::parse(&out[..8]), None);
    }

    #[test]
    fn padding_is_removed_and_too_much_is_refused() {
        assert_eq!(unpadded(0, b"abc"), Some(&b"abc"[..]));
        assert_eq!(unpadded(flag::PADDED, b"\x01abc"), Some(&b"ab"[..]));
        assert_eq!(unpadded(flag::PADDED, b"\x04abc"), None);
        assert_eq!(unpadded(flag::PADDED, b""), None);
    }

    #[test]
    fn settings_round_trip_and_reasons_are_named_as_the_rfc_names_them() {
        let mut out = Vec::new();
        settings(
            &[
                (setting::ENABLE_PUSH, 0),
                (setting::MAX_FRAME_SIZE, 1 << 20),
            ],
            &mut out,
        );
        let pairs = parse_settings(&out[HEADER_LEN..]).unwrap();
        assert_eq!(pairs, [(2, 0), (5, 1 << 20)]);
        assert_eq!(parse_settings(b"12345"), None);
        assert_eq!(Reason::ProtocolError.to_string(), "PROTOCOL_ERROR");
        assert_eq!(Reason::Http11Required.to_string(), "HTTP_1_1_REQUIRED");
        assert_eq!(Reason::from_code(0xb), Reason::EnhanceYourCalm);
        assert_eq!(Reason::from_code(0x99).to_string(), "error code 0x99");
    }
}
