//! Content and transfer codings: undoing gzip, deflate and br, with a cap
//! on what comes out.
//!
//! Compression saves a crawl most of its bytes on the wire (HTML shrinks
//! four- to tenfold), so the client asks for it. It also opens a door: a
//! few kilobytes of gzip can inflate to gigabytes (a "decompression bomb").
//! `--max-body` therefore limits the decoded size as well as the bytes
//! received: decoding runs through a fixed buffer and stops the moment the
//! output would pass the limit, so a bomb costs at most `--max-body` of
//! memory and fails with a reason that says what happened.

use std::fmt;
use std::io::{self, Read};

use flate2::read::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};

/// What a body over `--max-body` comes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    /// The URL fails: a page cut short is not the page.
    Fail,
    /// The body is cut at the limit and marked truncated: for a file of
    /// which the first part is worth reading alone.
    Cut,
    /// [`Cut`](Cap::Cut), but never before this many bytes, whatever
    /// `--max-body` says: a robots.txt, whose first 500 KiB must be obeyed
    /// however long it is (RFC 9309 2.5).
    CutNoSooner(u64),
}

impl Cap {
    /// The most of a body read, and decoded, under `max_body`.
    pub fn limit(self, max_body: u64) -> u64 {
        match self {
            Cap::Fail | Cap::Cut => max_body,
            Cap::CutNoSooner(at_least) => max_body.max(at_least),
        }
    }

    /// Whether a body over the limit is cut, not failed.
    pub fn cuts(self) -> bool {
        !matches!(self, Cap::Fail)
    }
}

/// What the client sends in `Accept-Encoding`.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// Bytes decoded per read: the most memory decoding holds beyond the body.
const CHUNK: usize = 16 * 1024;

/// Which header named a coding: a transfer coding (`Transfer-Encoding`,
/// a property of this one message) or a content coding
/// (`Content-Encoding`, a property of the page).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// `Transfer-Encoding`, less its final `chunked`.
    Transfer,
    /// `Content-Encoding`.
    Content,
}

/// Why a body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// A coding we do not speak (`compress`, `zstd` ...), and where.
    Unsupported(Layer, String),
    /// The stream is corrupt or cut short.
    Corrupt {
        /// The coding being undone.
        coding: String,
        /// What its decoder said.
        message: String,
    },
    /// Decoded, it would pass this many bytes.
    TooLarge {
        /// The limit (`--max-body`).
        limit: u64,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Unsupported(Layer::Content, coding) => {
                write!(f, "unsupported Content-Encoding {coding:?}")
            }
            DecodeError::Unsupported(Layer::Transfer, coding) => {
                write!(f, "unsupported transfer coding {coding:?}")
            }
            DecodeError::Corrupt { coding, message } => {
                write!(f, "{coding} body is corrupt: {message}")
            }
            DecodeError::TooLarge { limit } => write!(
                f,
                "decoded body larger than the {limit}-byte limit (--max-body): \
                 a compression bomb?"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

// ANCHOR: decode_body
/// Undoes `content_encoding` (the header's value; `None` or `identity`:
/// nothing to undo) on `body`. Codings listed together (`gzip, br`) were
/// applied in that order, so they are undone last first. The result may
/// not pass `max` bytes.
pub fn decode_body(
    content_encoding: Option<&str>,
    body: Vec<u8>,
    max: u64,
) -> Result<Vec<u8>, DecodeError> {
    let codings = codings(content_encoding.into_iter());
    undo(Layer::Content, &codings, body, max, Cap::Fail)
}

/// The codings named by every field line of a list-valued header, in the
/// order they were applied: lines with the same name form one list (RFC
/// 9110 section 5.3), so `identity` then `gzip` on two lines is `gzip`.
/// Lower-cased; `identity` and empty items dropped.
pub fn codings<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    values
        .flat_map(|value| value.split(','))
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect()
}

/// Undoes `codings` (applied in that order, so undone last first) on
/// `body`; no step, and not the result, may pass `max` bytes. With
/// [`Cap::Cut`], for a body of which only the first part matters (perhaps
/// itself cut short), what decodes within `max` bytes is kept, and a stream
/// that ends early or goes on past `max` ends the decoding there instead of
/// failing it. A coding we do not speak fails either way: nothing of such a
/// body can be read.
pub fn undo(
    layer: Layer,
    codings: &[String],
    body: Vec<u8>,
    max: u64,
    cap: Cap,
) -> Result<Vec<u8>, DecodeError> {
    let prefix = cap.cuts();
    let mut body = body;
    for coding in codings.iter().rev() {
        body = decode_one(layer, coding, &body, max, prefix)?;
    }
    if body.len() as u64 > max {
        if !prefix {
            return Err(DecodeError::TooLarge { limit: max });
        }
        body.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    }
    Ok(body)
}

/// Undoes one coding, reading the decoder a chunk at a time and stopping
/// as soon as the output passes `max`: with an error, or, for a `prefix`,
/// with the first `max` bytes (and a corrupt or cut stream then ends the
/// output where it broke).
fn decode_one(
    layer: Layer,
    coding: &str,
    body: &[u8],
    max: u64,
    prefix: bool,
) -> Result<Vec<u8>, DecodeError> {
    let mut decoder: Box<dyn Read + '_> = match coding {
        "gzip" | "x-gzip" => Box::new(MultiGzDecoder::new(body)),
        // "deflate" means zlib-wrapped, but some servers send it raw: the
        // first byte of a zlib stream says so (RFC 1950: CM 8, and a header
        // whose 16 bits are a multiple of 31).
        "deflate" if is_zlib(body) => Box::new(ZlibDecoder::new(body)),
        "deflate" => Box::new(DeflateDecoder::new(body)),
        "br" => Box::new(brotli::Decompressor::new(body, CHUNK)),
        other => return Err(DecodeError::Unsupported(layer, other.to_string())),
    };
    let corrupt = |e: io::Error| DecodeError::Corrupt {
        coding: coding.to_string(),
        message: e.to_string(),
    };
    let mut out = Vec::new();
    let mut chunk = vec![0; CHUNK];
    loop {
        let n = match decoder.read(&mut chunk) {
            Ok(n) => n,
            Err(_) if prefix => return Ok(out),
            Err(e) => return Err(corrupt(e)),
        };
        if n == 0 {
            return Ok(out);
        }
        if (out.len() + n) as u64 > max {
            if prefix {
                let room = usize::try_from(max).unwrap_or(usize::MAX) - out.len();
                out.extend_from_slice(&chunk[..room]);
                return Ok(out);
            }
            return Err(DecodeError::TooLarge { limit: max });
        }
        out.extend_from_slice(&chunk[..n]);
    }
}
// ANCHOR_END: decode_body

fn is_zlib(body: &[u8]) -> bool {
    match body {
        [cmf, flg, ..] => cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use std::io::Write;

    const TEXT: &[u8] = b"<html><body>hello, hello, hello, compressed world</body></html>";

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn raw_deflate(data: &[u8]) -> Vec<u8> {
        let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn br(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        w.write_all(data).unwrap();
        drop(w);
        out
    }

    #[test]
    fn each_coding_round_trips() {
        let max = 1 << 20;
        assert_eq!(decode_body(None, TEXT.to_vec(), max).unwrap(), TEXT);
        assert_eq!(
            decode_body(Some("identity"), TEXT.to_vec(), max).unwrap(),
            TEXT
        );
        assert_eq!(decode_body(Some("gzip"), gzip(TEXT), max).unwrap(), TEXT);
        assert_eq!(
            decode_body(Some(" X-GZIP "), gzip(TEXT), max).unwrap(),
            TEXT
        );
        assert_eq!(decode_body(Some("deflate"), zlib(TEXT), max).unwrap(), TEXT);
        assert_eq!(
            decode_body(Some("deflate"), raw_deflate(TEXT), max).unwrap(),
            TEXT
        );
        assert_eq!(decode_body(Some("br"), br(TEXT), max).unwrap(), TEXT);
    }

    #[test]
    fn stacked_codings_are_undone_last_first() {
        let body = br(&gzip(TEXT));
        assert_eq!(decode_body(Some("gzip, br"), body, 1 << 20).unwrap(), TEXT);
        // Two gzip members one after the other are one body, as gzip says.
        let mut two = gzip(b"ab");
        two.extend(gzip(b"cd"));
        assert_eq!(decode_body(Some("gzip"), two, 100).unwrap(), b"abcd");
    }

    #[test]
    fn unknown_and_corrupt_streams_say_what_is_wrong() {
        assert_eq!(
            decode_body(Some("zstd"), TEXT.to_vec(), 100),
            Err(DecodeError::Unsupported(Layer::Content, "zstd".into()))
        );
        let e = decode_body(Some("gzip"), b"not gzip at all".to_vec(), 100).unwrap_err();
        assert!(
            matches!(&e, DecodeError::Corrupt { coding, .. } if coding == "gzip"),
            "{e}"
        );
        let mut cut = gzip(TEXT);
        cut.truncate(cut.len() - 6);
        let e = decode_body(Some("gzip"), cut, 1 << 20).unwrap_err();
        assert!(matches!(e, DecodeError::Corrupt { .. }), "{e}");
        let mut cut = br(TEXT);
        cut.truncate(cut.len() / 2);
        let e = decode_body(Some("br"), cut, 1 << 20).unwrap_err();
        assert!(matches!(e, DecodeError::Corrupt { .. }), "{e}");
        assert!(e.to_string().starts_with("br body is corrupt: "), "{e}");
    }

    #[test]
    fn the_limit_is_exact() {
        let body = gzip(TEXT);
        let len = TEXT.len() as u64;
        assert_eq!(decode_body(Some("gzip"), body.clone(), len).unwrap(), TEXT);
        assert_eq!(
            decode_body(Some("gzip"), body, len - 1),
            Err(DecodeError::TooLarge { limit: len - 1 })
        );
        assert_eq!(
            decode_body(None, TEXT.to_vec(), len - 1),
            Err(DecodeError::TooLarge { limit: len - 1 })
        );
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        // 64 MiB of zeros, compressed without ever holding them.
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            e.write_all(&zeros).unwrap();
        }
        let bomb = e.finish().unwrap();
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        let e = decode_body(Some("gzip"), bomb, 1 << 20).unwrap_err();
        assert_eq!(e, DecodeError::TooLarge { limit: 1 << 20 });
        assert!(e.to_string().contains("compression bomb"), "{e}");
    }
}
