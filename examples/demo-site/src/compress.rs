//! Compressed responses, in polite mode: what a real server sends a client
//! that says `Accept-Encoding: gzip, deflate, br`, and one response that no
//! client should decode without a limit.

use std::io::Write;
use std::sync::OnceLock;

use flate2::Compression;
use flate2::write::{GzEncoder, ZlibEncoder};

/// A content coding the site can apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Coding {
    Br,
    Gzip,
    Deflate,
}

impl Coding {
    /// The token for `Content-Encoding`.
    pub(crate) fn token(self) -> &'static str {
        match self {
            Coding::Br => "br",
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
        }
    }
}

/// The coding to answer `accept_encoding` with: `br` if the client takes
/// it, else `gzip`, else `deflate`, else none.
pub(crate) fn choose(accept_encoding: Option<&str>) -> Option<Coding> {
    [Coding::Br, Coding::Gzip, Coding::Deflate]
        .into_iter()
        .find(|&coding| accepts(accept_encoding, coding))
}

/// Whether `accept_encoding` takes `coding`: named, or covered by `*`,
/// and not refused with `q=0` (RFC 9110).
pub(crate) fn accepts(accept_encoding: Option<&str>, coding: Coding) -> bool {
    let Some(accept) = accept_encoding else {
        return false;
    };
    // `(name, refused)` for each item of the list.
    let offered: Vec<(String, bool)> = accept
        .split(',')
        .filter_map(|item| {
            let mut parts = item.split(';');
            let name = parts.next()?.trim().to_ascii_lowercase();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            Some((name, refused))
        })
        .collect();
    let named = offered.iter().find(|(name, _)| name == coding.token());
    let star = offered.iter().find(|(name, _)| name == "*");
    named.or(star).is_some_and(|(_, refused)| !refused)
}

/// Whether a response of this type is worth compressing: text and XML,
/// not images or files that are compressed already.
pub(crate) fn compressible(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| ct.starts_with("text/") || ct.contains("xml"))
}

/// `body` in `coding`.
pub(crate) fn compress(coding: Coding, body: &[u8]) -> Vec<u8> {
    match coding {
        Coding::Gzip => gzip(body),
        Coding::Deflate => {
            let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
            // Writing to a Vec cannot fail.
            let _ = e.write_all(body);
            e.finish().unwrap_or_default()
        }
        Coding::Br => {
            let mut out = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
                let _ = w.write_all(body);
            }
            out
        }
    }
}

/// `body` gzip-compressed.
pub(crate) fn gzip(body: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    let _ = e.write_all(body);
    e.finish().unwrap_or_default()
}

/// What the bomb inflates to: a gibibyte.
pub(crate) const BOMB_SIZE: u64 = 1 << 30;

/// A gzip body of about a megabyte that inflates to [`BOMB_SIZE`] zeros.
/// Compressing a gibibyte would take seconds; instead one member holding a
/// mebibyte of zeros is compressed once and repeated 1024 times, which
/// gzip allows (a gzip file is a sequence of members, decoded one after
/// the other).
pub(crate) fn bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| {
        let member = gzip(&vec![0u8; 1 << 20]);
        member.repeat((BOMB_SIZE >> 20) as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_best_coding_the_client_takes() {
        assert_eq!(choose(None), None);
        assert_eq!(choose(Some("identity")), None);
        assert_eq!(choose(Some("gzip, deflate, br")), Some(Coding::Br));
        assert_eq!(choose(Some("GZIP, deflate")), Some(Coding::Gzip));
        assert_eq!(choose(Some("deflate")), Some(Coding::Deflate));
        assert_eq!(choose(Some("br;q=0, gzip;q=0.5")), Some(Coding::Gzip));
        assert_eq!(choose(Some("*")), Some(Coding::Br));
        assert_eq!(choose(Some("*;q=0, deflate")), Some(Coding::Deflate));
    }

    #[test]
    fn the_bomb_inflates_to_a_gibibyte() {
        let bomb = bomb();
        assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
        let mut decoder = flate2::read::MultiGzDecoder::new(bomb);
        let mut chunk = vec![0; 1 << 16];
        let mut total = 0u64;
        loop {
            let n = decoder.read(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        assert_eq!(total, BOMB_SIZE);
    }

    #[test]
    fn each_coding_round_trips() {
        let text = b"<p>hello hello hello</p>";
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&compress(Coding::Gzip, text)[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, text);
        out.clear();
        flate2::read::ZlibDecoder::new(&compress(Coding::Deflate, text)[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, text);
        out.clear();
        brotli::Decompressor::new(&compress(Coding::Br, text)[..], 4096)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, text);
    }
}
