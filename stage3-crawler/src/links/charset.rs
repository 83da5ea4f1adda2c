//! Turning body bytes into text: which encoding, in the order the issue
//! fixes (the `Content-Type` charset, then a byte-order mark, then
//! `<meta charset>`, then UTF-8), and decoding with `encoding_rs`.
//!
//! The chapter let aiohttp guess (`response.text()`), and recorded the
//! header's charset or `utf-8`. We record the label that decided, as the
//! page declared it, lower-cased: a page that says `ascii` is recorded as
//! `ascii`, even though browsers (and `encoding_rs`) decode it as
//! windows-1252.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8};

/// How far into the body to look for `<meta charset>`, as browsers do.
const META_PRESCAN: usize = 1024;

/// A decoded body.
#[derive(Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// The body as text.
    pub text: Cow<'a, str>,
    /// The label that decided, lower-cased, or `utf-8`.
    pub encoding: String,
}

// ANCHOR: decode
/// Decodes `body`, given the `charset` parameter of its `Content-Type` if it
/// had one. A label `encoding_rs` does not know is passed over, as if it
/// were not there. Malformed bytes become U+FFFD; decoding never fails.
pub fn decode<'a>(body: &'a [u8], header_charset: Option<&str>) -> Decoded<'a> {
    if let Some(label) = header_charset
        && let Some(encoding) = Encoding::for_label(label.trim().as_bytes())
    {
        let (text, _) = encoding.decode_without_bom_handling(body);
        return Decoded {
            text,
            encoding: label.trim().to_ascii_lowercase(),
        };
    }
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        let rest = body.get(bom_len..).unwrap_or_default();
        let (text, _) = encoding.decode_without_bom_handling(rest);
        return Decoded {
            text,
            encoding: encoding.name().to_ascii_lowercase(),
        };
    }
    if let Some(label) = meta_charset(body)
        && let Some(encoding) = Encoding::for_label(label.as_bytes())
    {
        // A page cannot declare UTF-16 in ASCII bytes and mean it: the HTML
        // standard reads such a declaration as UTF-8.
        let encoding = encoding.output_encoding();
        let (text, _) = encoding.decode_without_bom_handling(body);
        return Decoded {
            text,
            encoding: label.to_ascii_lowercase(),
        };
    }
    let (text, _) = UTF_8.decode_without_bom_handling(body);
    Decoded {
        text,
        encoding: "utf-8".to_string(),
    }
}
// ANCHOR_END: decode

/// The `charset` parameter of a `Content-Type` value, unquoted.
pub fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(|c| c == '"' || c == '\''))
            .filter(|v| !v.is_empty())
    })
}

/// The media type of a `Content-Type` value, as sent, without parameters.
pub fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or("").trim()
}

/// The charset a `<meta>` tag declares in the first kilobyte: either
/// `<meta charset="x">` or `<meta http-equiv="Content-Type"
/// content="text/html; charset=x">`. A simplified form of the HTML
/// standard's prescan: it skips comments and looks only at `<meta` tags.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = body.get(..META_PRESCAN).unwrap_or(body);
    let mut i = 0;
    while i < head.len() {
        let rest = &head[i..];
        if rest.starts_with(b"<!--") {
            i += find(rest, b"-->").map_or(rest.len(), |end| end + 3);
        } else if rest.len() > 5
            && rest[..5].eq_ignore_ascii_case(b"<meta")
            && matches!(rest[5], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/')
        {
            let (attrs, len) = attributes(&rest[5..]);
            if let Some(charset) = charset_of(&attrs) {
                return Some(charset);
            }
            i += 5 + len;
        } else {
            i += 1;
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The charset named by one meta tag's attributes, if any.
fn charset_of(attrs: &[(String, String)]) -> Option<String> {
    let get = |name: &str| attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    if let Some(charset) = get("charset") {
        let charset = charset.trim();
        return (!charset.is_empty()).then(|| charset.to_string());
    }
    let is_content_type = get("http-equiv").is_some_and(|v| v.eq_ignore_ascii_case("content-type"));
    if is_content_type && let Some(content) = get("content") {
        return charset_param(content).map(str::to_string);
    }
    None
}

/// Parses `name=value` attributes up to the closing `>`. Returns them with
/// lower-case names, and how many bytes the tag used.
fn attributes(tag: &[u8]) -> (Vec<(String, String)>, usize) {
    let mut attrs = Vec::new();
    let mut i = 0;
    let at = |i: usize| tag.get(i).copied();
    loop {
        while at(i).is_some_and(|b| b.is_ascii_whitespace() || b == b'/') {
            i += 1;
        }
        match at(i) {
            None => return (attrs, i),
            Some(b'>') => return (attrs, i + 1),
            Some(_) => {}
        }
        let start = i;
        while at(i).is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b'=' | b'>' | b'/')) {
            i += 1;
        }
        let name = String::from_utf8_lossy(&tag[start..i]).to_ascii_lowercase();
        while at(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        let mut value = String::new();
        if at(i) == Some(b'=') {
            i += 1;
            while at(i).is_some_and(|b| b.is_ascii_whitespace()) {
                i += 1;
            }
            let (raw, end) = match at(i) {
                Some(q @ (b'"' | b'\'')) => {
                    let open = i + 1;
                    let close = tag[open..]
                        .iter()
                        .position(|&b| b == q)
                        .map_or(tag.len(), |p| open + p);
                    (&tag[open..close], (close + 1).min(tag.len()))
                }
                _ => {
                    let open = i;
                    let mut close = i;
                    while tag
                        .get(close)
                        .is_some_and(|&b| !b.is_ascii_whitespace() && b != b'>')
                    {
                        close += 1;
                    }
                    (&tag[open..close], close)
                }
            };
            value = String::from_utf8_lossy(raw).into_owned();
            i = end;
        }
        if name.is_empty() {
            i += 1; // a stray byte we could not read as a name: skip it
        } else {
            attrs.push((name, value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_then_bom_then_meta_then_utf8() {
        let d = decode(b"caf\xe9", Some("ISO-8859-1"));
        assert_eq!(
            (d.text.as_ref(), d.encoding.as_str()),
            ("café", "iso-8859-1")
        );
        let d = decode(b"\xef\xbb\xbfhi", None);
        assert_eq!((d.text.as_ref(), d.encoding.as_str()), ("hi", "utf-8"));
        let d = decode(b"\xff\xfeh\0i\0", None);
        assert_eq!((d.text.as_ref(), d.encoding.as_str()), ("hi", "utf-16le"));
        let page = b"<html><head><meta charset=\"ASCII\"></head>x\x93y";
        let d = decode(page, None);
        assert_eq!(d.encoding, "ascii");
        assert!(d.text.ends_with("x\u{201c}y"), "{}", d.text);
        let d = decode("plain é".as_bytes(), None);
        assert_eq!((d.text.as_ref(), d.encoding.as_str()), ("plain é", "utf-8"));
    }

    #[test]
    fn an_unknown_header_label_is_passed_over() {
        let d = decode(b"<meta charset=latin1>\xe9", Some("x-unknown"));
        assert_eq!(d.encoding, "latin1");
        assert!(d.text.ends_with('é'));
    }

    #[test]
    fn meta_forms() {
        let m = |s: &str| meta_charset(s.as_bytes());
        assert_eq!(m("<meta charset=utf-8>"), Some("utf-8".into()));
        assert_eq!(
            m("<META CHARSET='Windows-1252'/>"),
            Some("Windows-1252".into())
        );
        assert_eq!(
            m(r#"<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">"#),
            Some("iso-8859-1".into())
        );
        assert_eq!(m(r#"<meta content="text/html; charset=koi8-r">"#), None);
        assert_eq!(m("<!-- <meta charset=koi8-r> --><p>"), None);
        assert_eq!(m("<metadata charset=koi8-r>"), None);
        assert_eq!(m("<meta name=x><meta charset=\"\">"), None);
        // Malformed tags end without panicking.
        for junk in [
            "<meta",
            "<meta ",
            "<meta charset=",
            "<meta a='",
            "<meta =x",
            "<!--",
        ] {
            let _ = m(junk);
        }
    }

    #[test]
    fn a_meta_utf16_is_read_as_utf8() {
        let d = decode("<meta charset=utf-16>é".as_bytes(), None);
        assert_eq!(d.encoding, "utf-16");
        assert!(d.text.ends_with('é'));
    }

    #[test]
    fn content_type_parts() {
        assert_eq!(charset_param("text/html; charset=\"UTF-8\""), Some("UTF-8"));
        assert_eq!(charset_param("text/html;Charset=ascii"), Some("ascii"));
        assert_eq!(charset_param("text/html"), None);
        assert_eq!(charset_param("text/html; charset="), None);
        assert_eq!(media_type(" Text/HTML ; charset=x"), "Text/HTML");
        assert_eq!(media_type("foo"), "foo");
    }
}
