//! WARC 1.1 (ISO 28500:2017), the web archive format of the Internet
//! Archive, Heritrix, wget's `--warc-file` and Common Crawl: what the
//! crawler fetched, kept as the bytes that crossed the wire.
//!
//! A WARC file is a sequence of records, each a block of named fields
//! (like an HTTP head) and a content block:
//!
//! ```text
//! WARC/1.1
//! WARC-Type: response
//! WARC-Record-ID: <urn:uuid:…>
//! WARC-Target-URI: http://example.org/
//! Content-Length: 1234
//!
//! HTTP/1.1 200 OK          ← the block: here, the response as received
//! …
//! (two CRLFs end the record)
//! ```
//!
//! This module only makes records, as bytes: it does no I/O, so that the
//! tests can check every byte. The `archive` module writes them, off the
//! loop thread. We write the format by hand: it is a page of code, and the
//! Rust crates for it either leave out the digests archivists check or
//! bring a date library and a parser we do not need.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use flate2::Compression;
use flate2::write::GzEncoder;
use ring::rand::{SecureRandom, SystemRandom};
use sha1::{Digest, Sha1};

use crate::http::Protocol;

pub use crate::http::Exchange;

/// What the `warcinfo` record at the start of a file says about the crawl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// The file's name, without its directory.
    pub filename: String,
    /// The command line, as the user typed it.
    pub command_line: String,
    /// The robots policy: `obey` or `ignore`.
    pub robots: &'static str,
    /// The User-Agent the crawler sends.
    pub user_agent: String,
    /// The crawl's generation (`--recrawl`): 0 for its first crawl, and
    /// then not written.
    pub generation: u32,
}

/// A record that holds a payload whole: what a `revisit` record points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Original {
    /// Its `WARC-Record-ID`.
    pub id: String,
    /// Its `WARC-Target-URI`.
    pub uri: String,
    /// Its `WARC-Date`.
    pub date: String,
    /// Its `WARC-Payload-Digest`.
    pub digest: String,
    /// The validators in its HTTP head: what a recrawl sends, so that a
    /// `304` vouches for exactly this record.
    pub validators: Option<crate::http::Validators>,
}

// ANCHOR: kept
/// How the response of an exchange is kept (WARC 1.1, section 6.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept<'a> {
    /// Whole, in a `response` record: its head and its payload.
    Whole,
    /// The server said `304 Not Modified`: a `revisit` record (the head
    /// alone) pointing at the record that holds the page.
    NotModified(&'a Original),
    /// The payload is in the archive already, byte for byte: a `revisit`
    /// record (the head alone) pointing at the record that holds it.
    IdenticalPayload(&'a Original),
}
// ANCHOR_END: kept

/// The profile of a revisit whose server said the page had not changed.
pub const SERVER_NOT_MODIFIED: &str = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
/// The profile of a revisit whose payload's digest matched a record's.
pub const IDENTICAL_PAYLOAD_DIGEST: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// The `warcinfo` field that names a recrawl's generation.
pub const GENERATION_FIELD: &str = "recrawl-generation";

/// The gzip level of a `.warc.gz` (see [`RecordWriter::new`]).
pub const GZIP_LEVEL: u32 = 6;

/// The records of one file: they share the `warcinfo` record's id.
#[derive(Debug)]
pub struct RecordWriter {
    warcinfo_id: String,
    gzip: bool,
}

impl RecordWriter {
    /// The maker of one file's records. With `gzip`, each record is a gzip
    /// member of its own, so that a reader can seek to any record (the
    /// `.warc.gz` convention).
    pub fn new(gzip: bool) -> RecordWriter {
        RecordWriter {
            warcinfo_id: record_id(),
            gzip,
        }
    }

    /// Writes the `warcinfo` record, which begins the file.
    pub fn warcinfo(&self, info: &Info, date: SystemTime, out: &mut dyn Write) -> io::Result<()> {
        let mut fields = String::new();
        for (name, value) in [
            (
                "software",
                concat!("stage3-crawler/", env!("CARGO_PKG_VERSION")),
            ),
            ("format", "WARC File Format 1.1"),
            (
                "conformsTo",
                "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            ),
            ("robots", info.robots),
            ("http-header-user-agent", &info.user_agent),
            ("command-line", &info.command_line),
        ] {
            let _ = write!(fields, "{name}: {}\r\n", one_line(value));
        }
        // Which run of a crawl the records after this one belong to: a
        // recrawl that resumes counts only its own (see `scan`).
        if info.generation > 0 {
            let _ = write!(fields, "{GENERATION_FIELD}: {}\r\n", info.generation);
        }
        let mut made = Made::default();
        self.record(
            &[
                ("WARC-Type", "warcinfo".into()),
                ("WARC-Record-ID", self.warcinfo_id.clone()),
                ("WARC-Date", warc_date(date)),
                ("WARC-Filename", one_line(&info.filename)),
                ("Content-Type", "application/warc-fields".into()),
            ],
            vec![Cow::Owned(fields.into_bytes())],
            None,
            &mut made,
        )?;
        made.write_to(out)
    }

    #[cfg(test)]
    /// Writes the `response` and `request` records of one exchange, the
    /// response whole: what [`make`](Self::make) makes, written at once.
    pub fn exchange(&self, exchange: &Exchange, out: &mut dyn Write) -> io::Result<()> {
        let digest = sha1_digest(&exchange.body);
        self.make(exchange, &digest, &record_id(), Kept::Whole)?
            .write_to(out)
    }

    // ANCHOR: exchange
    /// Makes the `response` (or `revisit`, as `kept` says; its id
    /// `response_id`) and `request` records of one exchange, whose payload
    /// has the digest `payload_digest`, each naming the other as
    /// `WARC-Concurrent-To`,
    /// side by side: the digests (and, for `.warc.gz`, the compression)
    /// done, and nothing written yet, so that an archiver does this work in
    /// parallel with the others and only the writing takes turns.
    pub fn make<'a>(
        &self,
        exchange: &'a Exchange,
        payload_digest: &str,
        response_id: &str,
        kept: Kept<'_>,
    ) -> io::Result<Made<'a>> {
        let request_id = record_id();
        let date = warc_date(exchange.date);
        let common = |kind: &str, id: &str, other: &str| {
            let mut fields = vec![
                ("WARC-Type", kind.to_string()),
                ("WARC-Record-ID", id.to_string()),
                ("WARC-Date", date.clone()),
                ("WARC-Target-URI", one_line(&exchange.url)),
                ("WARC-Warcinfo-ID", self.warcinfo_id.clone()),
                ("WARC-Concurrent-To", other.to_string()),
            ];
            if let Some(ip) = exchange.peer {
                fields.push(("WARC-IP-Address", ip.to_string()));
            }
            // The head is written as HTTP/1.1 would have sent it; this says
            // what really crossed the wire, as Common Crawl and Heritrix do.
            if exchange.protocol == Protocol::H2 {
                fields.push(("WARC-Protocol", "h2".to_string()));
            }
            fields
        };
        let kind = match kept {
            Kept::Whole => "response",
            Kept::NotModified(_) | Kept::IdenticalPayload(_) => "revisit",
        };
        let mut response = common(kind, response_id, &request_id);
        response.push(("Content-Type", "application/http;msgtype=response".into()));
        let head = response_head(&exchange.head, exchange.chunked, exchange.body.len());
        let mut made = Made::default();
        match kept {
            Kept::Whole => {
                if exchange.truncated {
                    // The record holds less than the response had (WARC
                    // 1.1, 5.13).
                    response.push(("WARC-Truncated", "length".into()));
                }
                let body = Cow::Borrowed(exchange.body.as_slice());
                let block = vec![Cow::Owned(head), body];
                self.record(&response, block, Some(payload_digest), &mut made)?;
            }
            Kept::NotModified(original) | Kept::IdenticalPayload(original) => {
                let (profile, digest) = match kept {
                    // A 304 has no payload of its own.
                    Kept::NotModified(_) => (SERVER_NOT_MODIFIED, None),
                    _ => (IDENTICAL_PAYLOAD_DIGEST, Some(payload_digest)),
                };
                response.extend([
                    ("WARC-Profile", profile.to_string()),
                    ("WARC-Refers-To", original.id.clone()),
                    ("WARC-Refers-To-Target-URI", one_line(&original.uri)),
                    ("WARC-Refers-To-Date", original.date.clone()),
                ]);
                self.record(&response, vec![Cow::Owned(head)], digest, &mut made)?;
            }
        }
        let mut request = common("request", &request_id, response_id);
        request.push(("Content-Type", "application/http;msgtype=request".into()));
        // The request has no body to digest: GET.
        let sent = Cow::Borrowed(exchange.request.as_slice());
        self.record(&request, vec![sent], None, &mut made)?;
        Ok(made)
    }
    // ANCHOR_END: exchange

    /// One record, added to `made`: the version line, `fields`, the
    /// block's length and digest (and `payload_digest`, the digest of the
    /// payload, if it has one), the block (in parts, so that a
    /// body is never copied to be joined to its head), and the two CRLFs
    /// that end every record. With gzip the record is compressed into a
    /// member of its own.
    fn record<'a>(
        &self,
        fields: &[(&str, String)],
        block: Vec<Cow<'a, [u8]>>,
        payload_digest: Option<&str>,
        made: &mut Made<'a>,
    ) -> io::Result<()> {
        let mut head = String::from("WARC/1.1\r\n");
        for (name, value) in fields {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        let mut digest = Sha1::new();
        for part in &block {
            digest.update(part);
        }
        let _ = write!(
            head,
            "WARC-Block-Digest: sha1:{}\r\n",
            base32(&digest.finalize())
        );
        if let Some(digest) = payload_digest {
            let _ = write!(head, "WARC-Payload-Digest: {digest}\r\n");
        }
        let length: usize = block.iter().map(|part| part.len()).sum();
        let _ = write!(head, "Content-Length: {length}\r\n\r\n");
        let mut parts = Vec::with_capacity(block.len() + 2);
        parts.push(Cow::Owned(head.into_bytes()));
        parts.extend(block);
        parts.push(Cow::Borrowed(&b"\r\n\r\n"[..]));
        if self.gzip {
            let mut member = GzEncoder::new(Vec::new(), Compression::new(GZIP_LEVEL));
            for part in &parts {
                member.write_all(part)?;
            }
            made.parts.push(Cow::Owned(member.finish()?));
        } else {
            made.parts.extend(parts);
        }
        Ok(())
    }
}

/// Records made and not yet written: their bytes in order, the bodies
/// borrowed from the exchange rather than copied.
#[derive(Debug, Default)]
pub struct Made<'a> {
    parts: Vec<Cow<'a, [u8]>>,
}

impl Made<'_> {
    /// Writes every part, in order.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        for part in &self.parts {
            out.write_all(part)?;
        }
        Ok(())
    }

    /// How many bytes [`write_to`](Self::write_to) writes.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|part| part.len()).sum()
    }
}

/// What a resuming crawl needs to know of a record it reads back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// `WARC-Type`.
    pub kind: String,
    /// `WARC-Target-URI`, if it has one.
    pub target_uri: Option<String>,
    /// `Content-Length`: the length of the block after the head.
    pub length: u64,
    /// `WARC-Record-ID`.
    pub id: Option<String>,
    /// `WARC-Date`.
    pub date: Option<String>,
    /// `WARC-Payload-Digest`.
    pub payload_digest: Option<String>,
    /// Whether it has `WARC-Truncated`: its payload is not whole.
    pub truncated: bool,
    /// For a revisit, the record it points at: `WARC-Refers-To`,
    /// `-Target-URI`, `-Date`.
    pub refers_to: Option<(String, String, String)>,
    /// For a response, the HTTP status its block begins with (read by the
    /// scan, not from the head).
    pub status: Option<u16>,
    /// For a response, the validators in its HTTP head (read by the scan).
    pub validators: Option<crate::http::Validators>,
    /// For a `warcinfo`, the generation its fields name (read by the
    /// scan); 0 when they name none.
    pub generation: u32,
}

/// The value of the head field `name` (the first, compared
/// case-insensitively), in the head that starts `record`.
fn field<'a>(record: &'a [u8], name: &str) -> Option<&'a str> {
    let end = record.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&record[..end]).ok()?;
    head.split("\r\n").skip(1).find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Checks that `head` is a WARC record's head (version line, fields, the
/// blank line) with a `Content-Length`, and says what the record is. The
/// block that follows is the caller's to check: it can be gigabytes, and
/// is read through, never held.
pub fn parse_head(head: &[u8]) -> Option<Parsed> {
    if !head.starts_with(b"WARC/") || !head.ends_with(b"\r\n\r\n") {
        return None;
    }
    let text = |name| field(head, name).map(str::to_string);
    let refers_to = match (
        text("WARC-Refers-To"),
        text("WARC-Refers-To-Target-URI"),
        text("WARC-Refers-To-Date"),
    ) {
        (Some(id), Some(uri), Some(date)) => Some((id, uri, date)),
        _ => None,
    };
    Some(Parsed {
        kind: field(head, "WARC-Type")?.to_string(),
        target_uri: text("WARC-Target-URI"),
        length: field(head, "Content-Length")?.parse().ok()?,
        id: text("WARC-Record-ID"),
        date: text("WARC-Date"),
        payload_digest: text("WARC-Payload-Digest"),
        truncated: field(head, "WARC-Truncated").is_some(),
        refers_to,
        status: None,
        validators: None,
        generation: 0,
    })
}

// ANCHOR: response_head
/// The response head for the archive. It is the head as received, except
/// when the body came chunked: the record holds the body de-chunked (WARC
/// 1.1 defines the payload as the body with the transfer coding removed),
/// so the head must not announce chunks that are not there. `chunked` is
/// dropped from `Transfer-Encoding` (and the header with it, if nothing is
/// left), any `Content-Length` is dropped (a chunked response's is
/// meaningless), and a `Content-Length` with the de-chunked length is
/// added, which is what readers such as warcio expect.
fn response_head(head: &[u8], chunked: bool, body_len: usize) -> Vec<u8> {
    if !chunked {
        return head.to_vec();
    }
    let mut out = Vec::with_capacity(head.len() + 32);
    let mut lines = head.split_inclusive(|&b| b == b'\n');
    if let Some(status_line) = lines.next() {
        out.extend_from_slice(status_line);
    }
    // Whether the header being read is one we drop: its folded
    // continuation lines go with it.
    let mut dropping = false;
    for line in lines {
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        let content = content.strip_suffix(b"\r").unwrap_or(content);
        if content.is_empty() {
            let _ = write!(out, "Content-Length: {body_len}\r\n\r\n");
            return out;
        }
        if content[0] == b' ' || content[0] == b'\t' {
            if !dropping {
                out.extend_from_slice(line);
            }
            continue;
        }
        let name = content.split(|&b| b == b':').next().unwrap_or(content);
        let name = name.trim_ascii();
        dropping = false;
        if name.eq_ignore_ascii_case(b"content-length") {
            dropping = true;
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            dropping = true;
            let value = &content[name.len().min(content.len())..];
            let value = String::from_utf8_lossy(value);
            let rest: Vec<&str> = value
                .trim_start_matches(|c: char| c == ':' || c.is_whitespace())
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("chunked"))
                .collect();
            if !rest.is_empty() {
                let _ = write!(out, "Transfer-Encoding: {}\r\n", rest.join(", "));
            }
        } else {
            out.extend_from_slice(line);
        }
    }
    // A head always ends with a blank line; this is for a caller that
    // passed less.
    out
}
// ANCHOR_END: response_head

/// A field value on one line: a URL or a command line with a line break
/// in it would end the record's head early.
fn one_line(value: &str) -> String {
    value.replace(['\r', '\n'], " ")
}

/// `sha1:` and the base32 of the SHA-1 digest, the form archivists' tools
/// expect. SHA-1 is broken for signatures, but here it names content, as
/// it does in every crawl archive, and the readers check exactly this.
pub fn sha1_digest(data: &[u8]) -> String {
    format!("sha1:{}", base32(&Sha1::digest(data)))
}

/// RFC 4648 base32, upper case, with padding.
fn base32(data: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(data.len().div_ceil(5) * 8);
    for group in data.chunks(5) {
        let mut bytes = [0u8; 5];
        bytes[..group.len()].copy_from_slice(group);
        let bits = bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        // 8 bits per input byte, 5 per output character, rounded up.
        let chars = (group.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(char::from(ALPHABET[(bits >> (35 - 5 * i) & 31) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A fresh `<urn:uuid:…>` (a random, version 4 UUID).
pub fn record_id() -> String {
    let mut bytes = [0u8; 16];
    // The system's random source does not fail on Linux once it has
    // started; if it ever did, ids would still differ by the counter.
    if SystemRandom::new().fill(&mut bytes).is_err() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes[..8].copy_from_slice(&nanos.to_be_bytes());
        bytes[8..].copy_from_slice(&n.to_be_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // the RFC 9562 variant
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// A time as WARC writes it: ISO 8601 in UTC, to the second.
pub fn warc_date(time: SystemTime) -> String {
    crawl_kit::dates::iso8601(time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::time::Duration;

    #[test]
    fn base32_matches_rfc_4648() {
        for (input, expected) in [
            ("", ""),
            ("f", "MY======"),
            ("fo", "MZXQ===="),
            ("foo", "MZXW6==="),
            ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ] {
            assert_eq!(base32(input.as_bytes()), expected, "{input:?}");
        }
    }

    #[test]
    fn sha1_of_nothing_is_the_well_known_digest() {
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn record_ids_are_version_4_uuids() {
        let (a, b) = (record_id(), record_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&a[24..25], "4", "{a}");
        assert!("89ab".contains(&a[29..30]), "{a}");
    }

    #[test]
    fn a_chunked_head_announces_the_dechunked_length() {
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n \
                     folded\r\nContent-Length: 99\r\nServer: t\r\n\r\n";
        assert_eq!(
            String::from_utf8(response_head(head, true, 5)).unwrap(),
            "HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nServer: t\r\nContent-Length: 5\r\n\r\n"
        );
        let head = b"HTTP/1.1 200 OK\nTransfer-Encoding: gzip, chunked\n\n";
        assert_eq!(
            String::from_utf8(response_head(head, true, 0)).unwrap(),
            "HTTP/1.1 200 OK\nTransfer-Encoding: gzip\r\nContent-Length: 0\r\n\r\n"
        );
        // Not chunked: the head as it came, byte for byte.
        let head = b"HTTP/1.0 200 OK\nContent-Length: 3\n\n";
        assert_eq!(response_head(head, false, 3), head);
    }

    fn exchange() -> Exchange {
        Exchange {
            url: "http://127.0.0.1:8000/a".into(),
            date: UNIX_EPOCH + Duration::from_secs(1_764_000_000),
            peer: Some("127.0.0.1".parse().unwrap()),
            request: b"GET /a HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n".to_vec(),
            head: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n".to_vec(),
            protocol: crate::http::Protocol::Http11,
            chunked: false,
            body: b"hi".to_vec(),
            truncated: false,
        }
    }

    /// The records of `bytes` as (head, block) pairs, split by their
    /// Content-Length, checking the two CRLFs after each.
    fn split(mut bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut records = Vec::new();
        while !bytes.is_empty() {
            let end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let head = String::from_utf8(bytes[..end].to_vec()).unwrap();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .unwrap()
                .parse()
                .unwrap();
            records.push((head, bytes[end..end + len].to_vec()));
            assert_eq!(&bytes[end + len..end + len + 4], b"\r\n\r\n");
            bytes = &bytes[end + len + 4..];
        }
        records
    }

    #[test]
    fn an_exchange_is_a_response_and_a_request_naming_each_other() {
        let info = Info {
            filename: "crawl.warc".into(),
            command_line: "stage3-crawler --warc crawl.warc\nx".into(),
            robots: "obey",
            user_agent: "stage3-crawler/0.1.0".into(),
            generation: 0,
        };
        let records = RecordWriter::new(false);
        let mut all = Vec::new();
        records.warcinfo(&info, UNIX_EPOCH, &mut all).unwrap();
        records.exchange(&exchange(), &mut all).unwrap();
        let split = split(&all);
        assert_eq!(split.len(), 3);
        let field = |i: usize, name: &str| -> String {
            let prefix = format!("{name}: ");
            split[i]
                .0
                .lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .unwrap_or_else(|| panic!("{name} in {}", split[i].0))
                .to_string()
        };
        assert!(
            split[0]
                .0
                .starts_with("WARC/1.1\r\nWARC-Type: warcinfo\r\n")
        );
        assert_eq!(field(0, "WARC-Date"), "1970-01-01T00:00:00Z");
        assert!(
            String::from_utf8_lossy(&split[0].1)
                .contains("command-line: stage3-crawler --warc crawl.warc x\r\n")
        );
        assert_eq!(field(1, "WARC-Type"), "response");
        assert_eq!(field(2, "WARC-Type"), "request");
        assert_eq!(field(1, "WARC-Concurrent-To"), field(2, "WARC-Record-ID"));
        assert_eq!(field(2, "WARC-Concurrent-To"), field(1, "WARC-Record-ID"));
        assert_eq!(field(1, "WARC-Warcinfo-ID"), field(0, "WARC-Record-ID"));
        assert_eq!(field(1, "WARC-Date"), "2025-11-24T16:00:00Z");
        assert_eq!(field(1, "WARC-IP-Address"), "127.0.0.1");
        assert_eq!(field(1, "WARC-Target-URI"), "http://127.0.0.1:8000/a");
        assert_eq!(
            split[1].1,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi".to_vec()
        );
        assert_eq!(field(1, "WARC-Payload-Digest"), sha1_digest(b"hi"));
        assert_eq!(field(1, "WARC-Block-Digest"), sha1_digest(&split[1].1));
        assert_eq!(split[2].1, exchange().request);
    }

    #[test]
    fn gzip_records_are_members_of_their_own() {
        let info = Info {
            filename: "crawl.warc.gz".into(),
            command_line: String::new(),
            robots: "ignore",
            user_agent: String::new(),
            generation: 2,
        };
        let records = RecordWriter::new(true);
        let (mut warcinfo, mut pair) = (Vec::new(), Vec::new());
        records.warcinfo(&info, UNIX_EPOCH, &mut warcinfo).unwrap();
        records.exchange(&exchange(), &mut pair).unwrap();
        // The warcinfo record decompresses on its own.
        let mut one = String::new();
        flate2::read::GzDecoder::new(&warcinfo[..])
            .read_to_string(&mut one)
            .unwrap();
        assert!(one.starts_with("WARC/1.1\r\nWARC-Type: warcinfo"));
        // And the whole file is a series of members.
        let mut all = Vec::new();
        flate2::read::MultiGzDecoder::new(&[warcinfo, pair].concat()[..])
            .read_to_end(&mut all)
            .unwrap();
        assert_eq!(split(&all).len(), 3);
    }
}
