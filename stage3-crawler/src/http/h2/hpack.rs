//! HPACK (RFC 7541), HTTP/2's header compression, by hand: the decoder a
//! response's header block needs, and the little encoder a GET needs.
//!
//! A header block is a list of instructions, each starting with a byte
//! whose top bits say what it is:
//!
//! | bits | instruction |
//! |---|---|
//! | `1xxxxxxx` | a field from the table, by index |
//! | `01xxxxxx` | a literal field, then added to the dynamic table |
//! | `001xxxxx` | a new size for the dynamic table |
//! | `0000xxxx`, `0001xxxx` | a literal field, not added ("never" indexed for the second) |
//!
//! The table is the static one (61 fields every HTTP/2 peer knows, index
//! 1 to 61) followed by the dynamic one (what this connection's blocks
//! added, newest first, from index 62). Both ends keep the same dynamic
//! table by decoding every block, in order; a block skipped is a table out
//! of step, which is why the connection decodes even the blocks of streams
//! it has given up on.

use std::collections::VecDeque;
use std::fmt;

use super::huffman::{self, HuffmanError};

/// The static table (RFC 7541 Appendix A), index 1 first.
#[rustfmt::skip]
const STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// A field's size in the table: its name and value, plus 32 bytes for the
/// bookkeeping RFC 7541 assumes.
pub(crate) fn field_size(name: &[u8], value: &[u8]) -> usize {
    name.len() + value.len() + 32
}

/// Why a header block cannot be decoded: the connection is over
/// (COMPRESSION_ERROR), since the tables may now differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum HpackError {
    /// An integer that does not end, or does not fit.
    Integer,
    /// A string longer than what is left of the block.
    Truncated,
    /// Index 0, or one past the end of the table.
    Index(usize),
    /// A Huffman-coded string that is not valid.
    Huffman(HuffmanError),
    /// A table size update past what we allowed.
    TableSize { asked: usize, allowed: usize },
    /// A table size update after the block's first field.
    LateTableSize,
}

impl fmt::Display for HpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HpackError::Integer => f.write_str("an integer that does not fit"),
            HpackError::Truncated => f.write_str("a string longer than the block"),
            HpackError::Index(i) => write!(f, "index {i}, which is not in the table"),
            HpackError::Huffman(HuffmanError::BadCode) => {
                f.write_str("a Huffman-coded string with bits that are no code")
            }
            HpackError::Huffman(HuffmanError::Eos) => {
                f.write_str("a Huffman-coded string with EOS inside it")
            }
            HpackError::Huffman(HuffmanError::BadPadding) => {
                f.write_str("a Huffman-coded string with bad padding")
            }
            HpackError::TableSize { asked, allowed } => write!(
                f,
                "a dynamic table size update to {asked} bytes, past the {allowed} we allowed"
            ),
            HpackError::LateTableSize => {
                f.write_str("a dynamic table size update after the block's first field")
            }
        }
    }
}

/// Reads an integer with an `prefix`-bit prefix (RFC 7541 section 5.1)
/// from the front of `input`; returns it and the bytes it took.
fn integer(input: &[u8], prefix: u8) -> Result<(usize, usize), HpackError> {
    let max = (1usize << prefix) - 1;
    let first = usize::from(*input.first().ok_or(HpackError::Truncated)?) & max;
    if first < max {
        return Ok((first, 1));
    }
    let mut value = max;
    // Four more bytes carry 28 bits: more than any size we accept.
    for (i, &byte) in input.iter().enumerate().skip(1).take(4) {
        value += usize::from(byte & 0x7f) << (7 * (i - 1));
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(HpackError::Integer)
}

/// Reads a string literal (section 5.2) from the front of `input` into
/// `out`; returns the bytes it took.
fn string(input: &[u8], out: &mut Vec<u8>) -> Result<usize, HpackError> {
    let (len, at) = integer(input, 7)?;
    let bytes = input.get(at..at + len).ok_or(HpackError::Truncated)?;
    if input[0] & 0x80 != 0 {
        huffman::decode(bytes, out).map_err(HpackError::Huffman)?;
    } else {
        out.extend_from_slice(bytes);
    }
    Ok(at + len)
}

// ANCHOR: decoder
/// The decoding side of one connection: the dynamic table the server's
/// encoder fills.
pub(crate) struct Decoder {
    /// Newest first: index 62 is `table[0]`.
    table: VecDeque<(Vec<u8>, Vec<u8>)>,
    /// The table's size, counted as [`field_size`] counts.
    size: usize,
    /// The size the server's encoder chose (a table size update), at most
    /// `allowed`.
    max: usize,
    /// What our SETTINGS_HEADER_TABLE_SIZE allowed.
    allowed: usize,
}

impl Decoder {
    pub(crate) fn new(allowed: usize) -> Decoder {
        Decoder {
            table: VecDeque::new(),
            size: 0,
            max: allowed,
            allowed,
        }
    }

    /// Decodes a whole header block, calling `field` with each name and
    /// value in order.
    pub(crate) fn decode(
        &mut self,
        mut block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut first = true;
        let (mut name, mut value) = (Vec::new(), Vec::new());
        while let Some(&byte) = block.first() {
            let taken = if byte & 0x80 != 0 {
                // An indexed field.
                let (index, taken) = integer(block, 7)?;
                let (n, v) = self.entry(index)?;
                field(n, v);
                taken
            } else if byte & 0xe0 == 0x20 {
                // A table size update: only before the block's fields.
                if !first {
                    return Err(HpackError::LateTableSize);
                }
                let (asked, taken) = integer(block, 5)?;
                if asked > self.allowed {
                    return Err(HpackError::TableSize {
                        asked,
                        allowed: self.allowed,
                    });
                }
                self.max = asked;
                self.evict(0);
                block = &block[taken..];
                continue;
            } else {
                // A literal: with incremental indexing (01), or without
                // (0000, 0001). Its name is an index, or a string after.
                let indexing = byte & 0xc0 == 0x40;
                let (index, mut taken) = integer(block, if indexing { 6 } else { 4 })?;
                name.clear();
                value.clear();
                if index == 0 {
                    taken += string(&block[taken..], &mut name)?;
                } else {
                    name.extend_from_slice(self.entry(index)?.0);
                }
                taken += string(&block[taken..], &mut value)?;
                field(&name, &value);
                if indexing {
                    self.insert(&name, &value);
                }
                taken
            };
            first = false;
            block = &block[taken..];
        }
        Ok(())
    }

    /// The field at `index` (1-based): static, then dynamic.
    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        match index {
            0 => Err(HpackError::Index(0)),
            1..=61 => Ok(STATIC[index - 1]),
            _ => self
                .table
                .get(index - 62)
                .map(|(n, v)| (n.as_slice(), v.as_slice()))
                .ok_or(HpackError::Index(index)),
        }
    }

    /// Adds a field, evicting the oldest until it fits; a field larger than
    /// the whole table empties it and is not kept (section 4.4).
    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = field_size(name, value);
        self.evict(size);
        if size <= self.max {
            self.table.push_front((name.to_vec(), value.to_vec()));
            self.size += size;
        }
    }

    /// Evicts the oldest fields until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max {
            let Some((n, v)) = self.table.pop_back() else {
                break;
            };
            self.size -= field_size(&n, &v);
        }
    }
}
// ANCHOR_END: decoder

/// Encodes a request's fields. Each name a GET sends is in the static
/// table; a field found there whole is one byte, one whose name is there
/// is that index and its value as a plain literal, and nothing is added to
/// the dynamic table, which `size_update` sets to 0 in the connection's
/// first block so that no peer's limit can matter.
pub(crate) fn encode(fields: &[(&[u8], &[u8])], size_update: bool, out: &mut Vec<u8>) {
    if size_update {
        out.push(0x20);
    }
    for &(name, value) in fields {
        if let Some(i) = STATIC.iter().position(|&f| f == (name, value)) {
            push_integer(i + 1, 7, 0x80, out);
            continue;
        }
        match STATIC.iter().position(|&(n, _)| n == name) {
            Some(i) => push_integer(i + 1, 4, 0x00, out),
            None => {
                out.push(0x00);
                push_string(name, out);
            }
        }
        push_string(value, out);
    }
}

fn push_string(bytes: &[u8], out: &mut Vec<u8>) {
    push_integer(bytes.len(), 7, 0x00, out);
    out.extend_from_slice(bytes);
}

fn push_integer(mut value: usize, prefix: u8, bits: u8, out: &mut Vec<u8>) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(bits | value as u8);
        return;
    }
    out.push(bits | max as u8);
    value -= max;
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut fields = Vec::new();
        d.decode(block, |n, v| {
            fields.push((
                String::from_utf8(n.to_vec()).unwrap(),
                String::from_utf8(v.to_vec()).unwrap(),
            ))
        })?;
        Ok(fields)
    }

    fn fields(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn table(d: &Decoder) -> Vec<(String, String)> {
        d.table
            .iter()
            .map(|(n, v)| {
                (
                    String::from_utf8(n.clone()).unwrap(),
                    String::from_utf8(v.clone()).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn the_rfc_requests_with_huffman_decode_and_fill_the_table() {
        // RFC 7541 C.4.1 to C.4.3.
        let mut d = Decoder::new(4096);
        let block = [
            0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab,
            0x90, 0xf4, 0xff,
        ];
        let want = [
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ];
        assert_eq!(decode(&mut d, &block).unwrap(), fields(&want));
        let block = [
            0x82, 0x86, 0x84, 0xbe, 0x58, 0x86, 0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf,
        ];
        let got = decode(&mut d, &block).unwrap();
        assert_eq!(got[4], ("cache-control".into(), "no-cache".into()));
        let block = [
            0x82, 0x87, 0x85, 0xbf, 0x40, 0x88, 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xa9, 0x7d, 0x7f,
            0x89, 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xb8, 0xe8, 0xb4, 0xbf,
        ];
        let got = decode(&mut d, &block).unwrap();
        assert_eq!(got[4], ("custom-key".into(), "custom-value".into()));
        assert_eq!(
            table(&d),
            fields(&[
                ("custom-key", "custom-value"),
                ("cache-control", "no-cache"),
                (":authority", "www.example.com"),
            ])
        );
        assert_eq!(d.size, 164);
    }

    #[test]
    fn the_rfc_responses_evict_the_oldest_fields() {
        // RFC 7541 C.6.1 to C.6.3, with a 256-byte table.
        let mut d = Decoder::new(256);
        let block = [
            0x48, 0x82, 0x64, 0x02, 0x58, 0x85, 0xae, 0xc3, 0x77, 0x1a, 0x4b, 0x61, 0x96, 0xd0,
            0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81,
            0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff, 0x6e, 0x91, 0x9d, 0x29, 0xad, 0x17, 0x18,
            0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82, 0xae, 0x43, 0xd3,
        ];
        assert_eq!(
            decode(&mut d, &block).unwrap(),
            fields(&[
                (":status", "302"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("location", "https://www.example.com"),
            ])
        );
        let block = [0x48, 0x83, 0x64, 0x0e, 0xff, 0xc1, 0xc0, 0xbf];
        assert_eq!(
            decode(&mut d, &block).unwrap()[0],
            (":status".into(), "307".into())
        );
        let block = [
            0x88, 0xc1, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20,
            0x05, 0x95, 0x04, 0x0b, 0x81, 0x66, 0xe0, 0x84, 0xa6, 0x2d, 0x1b, 0xff, 0xc0, 0x5a,
            0x83, 0x9b, 0xd9, 0xab, 0x77, 0xad, 0x94, 0xe7, 0x82, 0x1d, 0xd7, 0xf2, 0xe6, 0xc7,
            0xb3, 0x35, 0xdf, 0xdf, 0xcd, 0x5b, 0x39, 0x60, 0xd5, 0xaf, 0x27, 0x08, 0x7f, 0x36,
            0x72, 0xc1, 0xab, 0x27, 0x0f, 0xb5, 0x29, 0x1f, 0x95, 0x87, 0x31, 0x60, 0x65, 0xc0,
            0x03, 0xed, 0x4e, 0xe5, 0xb1, 0x06, 0x3d, 0x50, 0x07,
        ];
        let got = decode(&mut d, &block).unwrap();
        assert_eq!(
            got[5],
            (
                "set-cookie".into(),
                "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1".into()
            )
        );
        assert_eq!(
            table(&d),
            fields(&[
                (
                    "set-cookie",
                    "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
                ),
                ("content-encoding", "gzip"),
                ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ])
        );
        assert_eq!(d.size, 215);
    }

    #[test]
    fn what_a_server_may_not_send_is_an_error() {
        let mut d = Decoder::new(4096);
        assert_eq!(decode(&mut d, &[0x80]), Err(HpackError::Index(0)));
        assert_eq!(decode(&mut d, &[0xbe]), Err(HpackError::Index(62)));
        // A table size update to 8,192, past 4,096.
        assert_eq!(
            decode(&mut d, &[0x3f, 0xe1, 0x3f]),
            Err(HpackError::TableSize {
                asked: 8192,
                allowed: 4096
            })
        );
        assert_eq!(
            decode(&mut d, &[0x88, 0x20]),
            Err(HpackError::LateTableSize)
        );
        // A string that claims 10 bytes and has 2.
        assert_eq!(
            decode(&mut d, &[0x00, 0x0a, b'a', b'b']),
            Err(HpackError::Truncated)
        );
        // An integer that never ends.
        assert_eq!(
            decode(&mut d, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            Err(HpackError::Integer)
        );
        // A size update to 0 empties the table; then to 100 is allowed.
        decode(&mut d, &[0x40, 0x01, b'a', 0x01, b'b']).unwrap();
        assert_eq!(d.size, 34);
        decode(&mut d, &[0x20, 0x3f, 0x45]).unwrap();
        assert_eq!((d.size, d.max), (0, 100));
    }

    #[test]
    fn a_request_encodes_and_decodes_back() {
        let request: [(&[u8], &[u8]); 5] = [
            (b":method", b"GET"),
            (b":scheme", b"https"),
            (b":path", b"/a/b?c=d"),
            (b"accept-encoding", b"gzip, deflate, br"),
            (b"x-long", &[b'v'; 300]),
        ];
        let mut block = Vec::new();
        encode(&request, true, &mut block);
        // The size update, then :method GET and :scheme https as one byte each.
        assert_eq!(block[..3], [0x20, 0x82, 0x87]);
        let mut d = Decoder::new(4096);
        let mut got = Vec::new();
        d.decode(&block, |n, v| got.push((n.to_vec(), v.to_vec())))
            .unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> = request
            .iter()
            .map(|(n, v)| (n.to_vec(), v.to_vec()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(d.size, 0);
    }
}
