//! RESP, the Redis serialization protocol: one reply is one [`Frame`].
//!
//! The shape follows mini-redis's `frame.rs`: a parser that looks at a
//! buffer holding part of a reply, or one, or several, and either returns a
//! whole frame and how many bytes it used, or says "not all there yet".
//! Unlike mini-redis we parse in one pass (no separate `check`), because a
//! parse that stops at a missing byte throws away only a few allocations,
//! and we check every length against a limit *before* we trust it: a peer
//! claiming a 2^63-byte string gets an error, not an allocation.
//!
//! We send RESP2 (an array of bulk strings per command) and read both RESP2
//! and the RESP3 types a server may answer with after `HELLO 3`.

use std::fmt;

/// The longest bulk string we accept: Redis's own default for
/// `proto-max-bulk-len`.
pub const MAX_BULK: usize = 512 * 1024 * 1024;
/// The most elements in one array, map or set. A reply this large is a bug
/// or an attack; the frontier and the pipeline read in batches far smaller.
pub const MAX_ELEMENTS: usize = 1 << 24;
/// How deeply aggregates may nest. Stream replies nest four deep.
pub const MAX_DEPTH: usize = 32;
/// The longest simple line (`+OK`, `-ERR …`, `:42`).
pub const MAX_LINE: usize = 64 * 1024;
/// The most values in one whole reply, at every depth together. A claim of
/// [`MAX_ELEMENTS`] per aggregate would still let sixteen nested arrays of
/// four million nulls each cost gigabytes; every reply the frontier and the
/// pipeline ask for is paged (`COUNT 1000`, batches of hundreds), so a
/// million values is far above any of them and about 50 MB of frames.
pub const MAX_REPLY_VALUES: usize = 1 << 20;
/// The most bytes of bulk strings in one whole reply: Redis's own cap on one
/// string, for all of them together.
pub const MAX_REPLY_BYTES: usize = MAX_BULK;

/// One RESP value.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// `+OK`
    Simple(String),
    /// `-ERR message`: the server refused the command.
    Error(String),
    /// `:42`
    Integer(i64),
    /// `$5\r\nhello`
    Bulk(Vec<u8>),
    /// `*2\r\n…`
    Array(Vec<Frame>),
    /// `$-1`, `*-1` (RESP2) or `_` (RESP3).
    Null,
    /// RESP3 `,3.14`
    Double(f64),
    /// RESP3 `#t`
    Boolean(bool),
    /// RESP3 `%2\r\n…`: key, value pairs in order.
    Map(Vec<(Frame, Frame)>),
    /// RESP3 `~2\r\n…`
    Set(Vec<Frame>),
    /// RESP3 `>2\r\n…`: out-of-band data such as pub/sub messages.
    Push(Vec<Frame>),
}

/// Why a buffer is not RESP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// A byte that starts no RESP type.
    UnknownType(u8),
    /// A length or integer that is not a number.
    BadNumber(String),
    /// A length over our limit, or negative where only -1 is allowed.
    TooLong {
        /// What the length was for (a bulk string, an array...).
        what: &'static str,
        /// The length claimed.
        claimed: i64,
    },
    /// Aggregates nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A line longer than [`MAX_LINE`] without its `\r\n`.
    LineTooLong,
    /// A reply of more than [`MAX_REPLY_VALUES`] values, or
    /// [`MAX_REPLY_BYTES`] bytes of strings, in all.
    ReplyTooLarge,
    /// A bulk string not followed by `\r\n`, or a bad RESP3 literal.
    Malformed(&'static str),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::UnknownType(b) => write!(f, "unknown RESP type byte 0x{b:02x}"),
            FrameError::BadNumber(s) => write!(f, "not a RESP number: {s:?}"),
            FrameError::TooLong { what, claimed } => {
                write!(f, "{what} claims length {claimed}, over the limit")
            }
            FrameError::TooDeep => write!(f, "RESP aggregates nested over {MAX_DEPTH} deep"),
            FrameError::LineTooLong => write!(f, "RESP line over {MAX_LINE} bytes"),
            FrameError::ReplyTooLarge => write!(
                f,
                "RESP reply over {MAX_REPLY_VALUES} values or {MAX_REPLY_BYTES} bytes in all"
            ),
            FrameError::Malformed(what) => write!(f, "malformed RESP: {what}"),
        }
    }
}

impl std::error::Error for FrameError {}

// ANCHOR: parse
/// Parses the frame at the start of `buf`. `Ok(None)`: incomplete, read
/// more; `Ok(Some((frame, used)))`: the frame took `used` bytes.
pub fn parse(buf: &[u8]) -> Result<Option<(Frame, usize)>, FrameError> {
    let mut cursor = Cursor {
        buf,
        pos: 0,
        values: 0,
        bytes: 0,
    };
    match cursor.frame(0)? {
        Some(frame) => Ok(Some((frame, cursor.pos))),
        None => Ok(None),
    }
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Values parsed so far in this reply, at every depth.
    values: usize,
    /// Bytes of bulk strings parsed so far in this reply.
    bytes: usize,
}

impl Cursor<'_> {
    fn frame(&mut self, depth: usize) -> Result<Option<Frame>, FrameError> {
        if depth > MAX_DEPTH {
            return Err(FrameError::TooDeep);
        }
        // Counted as parsed, before anything is allocated for the value:
        // the whole reply is bounded, not only each aggregate's claim.
        self.values += 1;
        if self.values > MAX_REPLY_VALUES {
            return Err(FrameError::ReplyTooLarge);
        }
        let Some(&kind) = self.buf.get(self.pos) else {
            return Ok(None);
        };
        self.pos += 1;
        let Some(line) = self.line()? else {
            return Ok(None);
        };
        let frame = match kind {
            b'+' => Frame::Simple(String::from_utf8_lossy(line).into_owned()),
            b'-' => Frame::Error(String::from_utf8_lossy(line).into_owned()),
            b':' => Frame::Integer(number(line)?),
            b'$' | b'=' | b'!' => {
                // Bulk, verbatim and blob error all carry a length-prefixed
                // body; we read verbatim as bulk and blob errors as errors.
                let len = number(line)?;
                if len == -1 && kind == b'$' {
                    return Ok(Some(Frame::Null));
                }
                let len = limit(len, MAX_BULK, "bulk string")?;
                self.bytes += len;
                if self.bytes > MAX_REPLY_BYTES {
                    return Err(FrameError::ReplyTooLarge);
                }
                let Some(body) = self.take(len)? else {
                    return Ok(None);
                };
                match kind {
                    b'!' => Frame::Error(String::from_utf8_lossy(body).into_owned()),
                    _ => Frame::Bulk(body.to_vec()),
                }
            }
            b'*' | b'~' | b'>' => {
                let len = number(line)?;
                if len == -1 && kind == b'*' {
                    return Ok(Some(Frame::Null));
                }
                let len = limit(len, MAX_ELEMENTS, "array")?;
                let Some(items) = self.items(len, depth)? else {
                    return Ok(None);
                };
                match kind {
                    b'*' => Frame::Array(items),
                    b'~' => Frame::Set(items),
                    _ => Frame::Push(items),
                }
            }
            b'%' => {
                let len = limit(number(line)?, MAX_ELEMENTS / 2, "map")?;
                let Some(items) = self.items(2 * len, depth)? else {
                    return Ok(None);
                };
                let mut pairs = Vec::with_capacity(len);
                let mut items = items.into_iter();
                while let (Some(k), Some(v)) = (items.next(), items.next()) {
                    pairs.push((k, v));
                }
                Frame::Map(pairs)
            }
            b'_' => Frame::Null,
            b'#' => match line {
                b"t" => Frame::Boolean(true),
                b"f" => Frame::Boolean(false),
                _ => return Err(FrameError::Malformed("boolean is not t or f")),
            },
            b',' => {
                let text = std::str::from_utf8(line)
                    .map_err(|_| FrameError::Malformed("double is not text"))?;
                let value = match text {
                    "inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    _ => text
                        .parse()
                        .map_err(|_| FrameError::BadNumber(text.into()))?,
                };
                Frame::Double(value)
            }
            // A big number does not fit an i64; its digits are kept as text.
            b'(' => Frame::Bulk(line.to_vec()),
            other => return Err(FrameError::UnknownType(other)),
        };
        Ok(Some(frame))
    }

    /// `len` frames in a row. The vector grows as frames arrive rather than
    /// being sized by the claimed length: a claim costs nothing until the
    /// bytes that back it are here.
    fn items(&mut self, len: usize, depth: usize) -> Result<Option<Vec<Frame>>, FrameError> {
        let mut items = Vec::new();
        for _ in 0..len {
            match self.frame(depth + 1)? {
                Some(item) => items.push(item),
                None => return Ok(None),
            }
        }
        Ok(Some(items))
    }

    /// The bytes up to the next `\r\n`, which is consumed.
    fn line(&mut self) -> Result<Option<&[u8]>, FrameError> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        match rest.windows(2).position(|w| w == b"\r\n") {
            Some(end) if end > MAX_LINE => Err(FrameError::LineTooLong),
            Some(end) => {
                self.pos += end + 2;
                Ok(rest.get(..end))
            }
            None if rest.len() > MAX_LINE => Err(FrameError::LineTooLong),
            None => Ok(None),
        }
    }

    /// `len` bytes and the `\r\n` after them.
    fn take(&mut self, len: usize) -> Result<Option<&[u8]>, FrameError> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let (Some(body), Some(end)) = (rest.get(..len), rest.get(len..len + 2)) else {
            return Ok(None);
        };
        if end != b"\r\n" {
            return Err(FrameError::Malformed("bulk string not followed by CRLF"));
        }
        self.pos += len + 2;
        Ok(Some(body))
    }
}
// ANCHOR_END: parse

fn number(line: &[u8]) -> Result<i64, FrameError> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| FrameError::BadNumber(String::from_utf8_lossy(line).into_owned()))
}

fn limit(claimed: i64, max: usize, what: &'static str) -> Result<usize, FrameError> {
    usize::try_from(claimed)
        .ok()
        .filter(|n| *n <= max)
        .ok_or(FrameError::TooLong { what, claimed })
}

// ANCHOR: encode
/// Appends a command to `out` the way every client sends one: an array of
/// bulk strings, so that any byte, `\r\n` included, can be an argument.
pub fn encode_command<A: AsRef<[u8]>>(args: &[A], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        let arg = arg.as_ref();
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}
// ANCHOR_END: encode

impl Frame {
    /// The bytes of a bulk or simple string.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Frame::Bulk(b) => Some(b),
            Frame::Simple(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    /// A bulk or simple string as UTF-8 text.
    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }

    /// The integer, if this is an integer frame.
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            Frame::Integer(n) => Some(*n),
            _ => None,
        }
    }

    /// The elements of an array, set or push; a map's keys and values in
    /// turn, which is how RESP2 sends the same data.
    pub fn into_items(self) -> Option<Vec<Frame>> {
        match self {
            Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => Some(items),
            Frame::Map(pairs) => Some(pairs.into_iter().flat_map(|(k, v)| [k, v]).collect()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Frame {
        Frame::Bulk(s.as_bytes().to_vec())
    }

    #[test]
    fn every_resp2_type_parses() {
        let buf = b"*5\r\n+OK\r\n-ERR no\r\n:-7\r\n$3\r\na\r\n\r\n$-1\r\n";
        let (frame, used) = parse(buf).unwrap().unwrap();
        assert_eq!(used, buf.len());
        assert_eq!(
            frame,
            Frame::Array(vec![
                Frame::Simple("OK".into()),
                Frame::Error("ERR no".into()),
                Frame::Integer(-7),
                bulk("a\r\n"),
                Frame::Null,
            ])
        );
        assert_eq!(parse(b"*-1\r\n").unwrap(), Some((Frame::Null, 5)));
    }

    #[test]
    fn resp3_types_parse() {
        let buf = b"%2\r\n+a\r\n#t\r\n+b\r\n,1.5\r\n~1\r\n_\r\n>1\r\n(123456789012345678901234567890\r\n=7\r\ntxt:abc\r\n!4\r\nOops\r\n";
        let (map, used) = parse(buf).unwrap().unwrap();
        assert_eq!(
            map,
            Frame::Map(vec![
                (Frame::Simple("a".into()), Frame::Boolean(true)),
                (Frame::Simple("b".into()), Frame::Double(1.5)),
            ])
        );
        let (set, more) = parse(&buf[used..]).unwrap().unwrap();
        assert_eq!(set, Frame::Set(vec![Frame::Null]));
        let rest = &buf[used + more..];
        let (push, more) = parse(rest).unwrap().unwrap();
        assert_eq!(
            push,
            Frame::Push(vec![bulk("123456789012345678901234567890")])
        );
        let rest = &rest[more..];
        let (verbatim, more) = parse(rest).unwrap().unwrap();
        assert_eq!(verbatim, bulk("txt:abc"));
        assert_eq!(
            parse(&rest[more..]).unwrap().unwrap().0,
            Frame::Error("Oops".into())
        );
    }

    #[test]
    fn every_prefix_of_a_frame_is_incomplete() {
        let buf = b"*2\r\n$5\r\nhello\r\n*1\r\n:1\r\n";
        for cut in 0..buf.len() {
            assert_eq!(parse(&buf[..cut]), Ok(None), "cut at {cut}");
        }
        assert!(parse(buf).unwrap().is_some());
    }

    #[test]
    fn huge_claims_are_errors_not_allocations() {
        assert_eq!(
            parse(b"$9223372036854775807\r\n"),
            Err(FrameError::TooLong {
                what: "bulk string",
                claimed: i64::MAX
            })
        );
        assert_eq!(
            parse(b"*9223372036854775807\r\n"),
            Err(FrameError::TooLong {
                what: "array",
                claimed: i64::MAX
            })
        );
        assert_eq!(
            parse(b"$-2\r\n"),
            Err(FrameError::TooLong {
                what: "bulk string",
                claimed: -2
            })
        );
        // Within the limit, but not yet here: wait, allocating nothing.
        assert_eq!(parse(b"*16777216\r\n:1\r\n"), Ok(None));
        assert_eq!(
            parse(b"$99999999999999999999\r\n"),
            Err(FrameError::BadNumber("99999999999999999999".into()))
        );
    }

    #[test]
    fn a_whole_reply_is_bounded_at_every_depth_together() {
        // The array itself is one value: MAX - 1 nulls in it make MAX.
        let array = |n: usize| {
            let mut out = format!("*{n}\r\n").into_bytes();
            out.extend(b"_\r\n".repeat(n));
            out
        };
        let fits = array(MAX_REPLY_VALUES - 1);
        assert!(matches!(parse(&fits), Ok(Some((Frame::Array(_), used))) if used == fits.len()));
        assert_eq!(
            parse(&array(MAX_REPLY_VALUES)),
            Err(FrameError::ReplyTooLarge)
        );
        // Two nested arrays of half the limit each: each claim is small,
        // together they pass it.
        let half = MAX_REPLY_VALUES / 2;
        let mut nested = b"*2\r\n".to_vec();
        nested.extend(array(half));
        nested.extend(array(half));
        assert_eq!(parse(&nested), Err(FrameError::ReplyTooLarge));
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert_eq!(parse(b"?x\r\n"), Err(FrameError::UnknownType(b'?')));
        assert_eq!(
            parse(b"$1\r\nab\r\n"),
            Err(FrameError::Malformed("bulk string not followed by CRLF"))
        );
        assert_eq!(
            parse(b"#x\r\n"),
            Err(FrameError::Malformed("boolean is not t or f"))
        );
        let deep = "*1\r\n".repeat(MAX_DEPTH + 2);
        assert_eq!(parse(deep.as_bytes()), Err(FrameError::TooDeep));
        let long = vec![b'+'; MAX_LINE + 2];
        assert_eq!(parse(&long), Err(FrameError::LineTooLong));
    }

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        let mut out = Vec::new();
        encode_command(&[&b"SET"[..], b"k", b"a\r\nb"], &mut out);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n");
        // What we send parses back as what we meant.
        assert_eq!(
            parse(&out).unwrap().unwrap().0,
            Frame::Array(vec![bulk("SET"), bulk("k"), bulk("a\r\nb")])
        );
    }
}
