//! Sitemaps (sitemaps.org): the lists of URLs a site publishes for
//! crawlers, and the indexes of such lists.
//!
//! A sitemap is a `<urlset>` of `<url><loc>…</loc></url>` entries, or a
//! `<sitemapindex>` of `<sitemap><loc>…</loc></sitemap>` pointing at more
//! sitemaps, often gzipped (`.xml.gz`, served as a gzip file rather than
//! with a Content-Encoding). The protocol caps a file at 50,000 URLs and
//! 50 MiB; so do we, so that a hostile sitemap with a million entries
//! costs no more than an honest one. The XML is read with a pull parser,
//! keeping only the `<loc>` values. The protocol's other form, a text
//! file of one URL per line, is read too.

use std::fmt;

use quick_xml::Reader;
use quick_xml::events::Event;
use url::Url;

use crate::http::decode_body;

/// What reading one sitemap came to, for the report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SitemapOutcome {
    /// The sitemap.
    pub url: String,
    /// "12 URLs", "an index of 3 sitemaps", "404: not read" ...
    pub outcome: String,
}

/// A sitemap keeps at most this many URLs (the protocol's limit); the
/// rest are counted and dropped.
pub const MAX_SITEMAP_URLS: usize = 50_000;

/// A sitemap is at most this large, decoded (the protocol's 50 MiB).
pub const MAX_SITEMAP_BYTES: u64 = 50 * 1024 * 1024;

/// Which of the two kinds a sitemap is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SitemapKind {
    /// A list of pages.
    UrlSet,
    /// A list of more sitemaps.
    Index,
}

/// A parsed sitemap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sitemap {
    /// Pages, or more sitemaps.
    pub kind: SitemapKind,
    /// The `<loc>` values, resolved against the sitemap's URL, without
    /// fragments.
    pub locs: Vec<Url>,
    /// `<loc>` entries past [`MAX_SITEMAP_URLS`], not kept.
    pub dropped: usize,
    /// `<loc>` values that are not URLs.
    pub invalid: usize,
}

/// Why a sitemap could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SitemapError {
    /// Gzip that does not inflate, or inflates past the cap.
    Decode(String),
    /// Not well-formed XML.
    Xml(String),
    /// XML, but neither a `<urlset>` nor a `<sitemapindex>`.
    NotASitemap,
}

impl fmt::Display for SitemapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SitemapError::Decode(e) => write!(f, "sitemap does not decode: {e}"),
            SitemapError::Xml(e) => write!(f, "sitemap is not well-formed XML: {e}"),
            SitemapError::NotASitemap => f.write_str("not a sitemap (no urlset or sitemapindex)"),
        }
    }
}

impl std::error::Error for SitemapError {}

/// Parses a sitemap fetched from `sitemap_url`: XML, or the protocol's
/// text form (one URL per line). A gzipped one is recognised by its first
/// two bytes and inflated, up to the cap.
pub fn parse_sitemap(body: &[u8], sitemap_url: &Url) -> Result<Sitemap, SitemapError> {
    let inflated;
    let body = if body.starts_with(&[0x1f, 0x8b]) {
        inflated = decode_body(Some("gzip"), body.to_vec(), MAX_SITEMAP_BYTES)
            .map_err(|e| SitemapError::Decode(e.to_string()))?;
        &inflated[..]
    } else {
        body
    };
    if !looks_like_xml(body) {
        return parse_text(body, sitemap_url);
    }
    let mut reader = Reader::from_reader(body);
    let mut sitemap = Sitemap {
        kind: SitemapKind::UrlSet,
        locs: Vec::new(),
        dropped: 0,
        invalid: 0,
    };
    let mut root = None;
    // The text of the `<loc>` being read, if inside one.
    let mut loc: Option<String> = None;
    loop {
        match reader.read_event() {
            Err(e) => return Err(SitemapError::Xml(e.to_string())),
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => {
                let name = e.local_name();
                match (root, name.as_ref()) {
                    (None, "urlset") => root = Some(SitemapKind::UrlSet),
                    (None, "sitemapindex") => root = Some(SitemapKind::Index),
                    (None, _) => return Err(SitemapError::NotASitemap),
                    (Some(_), "loc") => loc = Some(String::new()),
                    _ => {}
                }
            }
            Ok(Event::Empty(_)) if root.is_none() => return Err(SitemapError::NotASitemap),
            Ok(Event::Text(t)) => append(&mut loc, &t.into_inner()),
            Ok(Event::CData(t)) => append(&mut loc, &t.into_inner()),
            Ok(Event::GeneralRef(r)) => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c),
                    _ => predefined(&r.into_inner()),
                };
                if let Some(c) = resolved {
                    append(&mut loc, c.encode_utf8(&mut [0; 4]));
                }
            }
            Ok(Event::End(e)) if e.local_name().as_ref() == "loc" => {
                if let Some(text) = loc.take() {
                    add(&mut sitemap, text.trim(), sitemap_url);
                }
            }
            Ok(_) => {}
        }
    }
    sitemap.kind = root.ok_or(SitemapError::NotASitemap)?;
    Ok(sitemap)
}

/// Whether a sitemap is XML rather than the protocol's other form, a text
/// file of one URL per line: XML starts with `<`, after any BOM and space.
fn looks_like_xml(body: &[u8]) -> bool {
    let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
}

/// A text sitemap: one absolute URL per line. Anything else in it counts
/// as invalid; a file with no URL at all is not a sitemap.
fn parse_text(body: &[u8], sitemap_url: &Url) -> Result<Sitemap, SitemapError> {
    let text = String::from_utf8_lossy(body);
    let mut sitemap = Sitemap {
        kind: SitemapKind::UrlSet,
        locs: Vec::new(),
        dropped: 0,
        invalid: 0,
    };
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match Url::parse(line) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {
                add(&mut sitemap, line, sitemap_url)
            }
            _ => sitemap.invalid += 1,
        }
    }
    if sitemap.locs.is_empty() && sitemap.dropped == 0 {
        return Err(SitemapError::NotASitemap);
    }
    Ok(sitemap)
}

/// Adds `text` to the `<loc>` being read, if any, within reason: no URL
/// is longer than a few kilobytes.
fn append(loc: &mut Option<String>, text: &str) {
    if let Some(loc) = loc
        && loc.len() + text.len() <= 64 * 1024
    {
        loc.push_str(text);
    }
}

/// The five entities XML predefines.
fn predefined(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => None,
    }
}

fn add(sitemap: &mut Sitemap, loc: &str, base: &Url) {
    if sitemap.locs.len() >= MAX_SITEMAP_URLS {
        sitemap.dropped += 1;
        return;
    }
    match base.join(loc) {
        Ok(mut url) if !loc.is_empty() => {
            url.set_fragment(None);
            sitemap.locs.push(url);
        }
        _ => sitemap.invalid += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn base() -> Url {
        Url::parse("http://h/sitemap.xml").unwrap()
    }

    fn urls(s: &Sitemap) -> Vec<&str> {
        s.locs.iter().map(Url::as_str).collect()
    }

    #[test]
    fn a_urlset_and_an_index() {
        let xml = r#"<?xml version="1.0"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
              <url><loc> http://h/a </loc><lastmod>2026-01-01</lastmod></url>
              <url><loc>/b#frag</loc></url>
            </urlset>"#;
        let s = parse_sitemap(xml.as_bytes(), &base()).unwrap();
        assert_eq!(s.kind, SitemapKind::UrlSet);
        assert_eq!(urls(&s), ["http://h/a", "http://h/b"]);
        let xml = r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
              <sitemap><loc>http://h/s1.xml.gz</loc></sitemap></sitemapindex>"#;
        let s = parse_sitemap(xml.as_bytes(), &base()).unwrap();
        assert_eq!(s.kind, SitemapKind::Index);
        assert_eq!(urls(&s), ["http://h/s1.xml.gz"]);
    }

    #[test]
    fn prefixes_entities_and_cdata() {
        let xml = r#"<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
              <sm:url><sm:loc>http://h/q?a=1&amp;b=2</sm:loc></sm:url>
              <sm:url><sm:loc><![CDATA[http://h/c?x=<y>]]></sm:loc></sm:url>
              <sm:url><sm:loc>http://h/&#233;</sm:loc></sm:url>
            </sm:urlset>"#;
        let s = parse_sitemap(xml.as_bytes(), &base()).unwrap();
        assert_eq!(
            urls(&s),
            [
                "http://h/q?a=1&b=2",
                "http://h/c?x=%3Cy%3E",
                "http://h/%C3%A9"
            ]
        );
    }

    #[test]
    fn gzipped_sitemaps_are_inflated() {
        let xml = b"<urlset><url><loc>http://h/z</loc></url></urlset>";
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(xml).unwrap();
        let gz = e.finish().unwrap();
        let s = parse_sitemap(&gz, &base()).unwrap();
        assert_eq!(urls(&s), ["http://h/z"]);
        let cut = &gz[..gz.len() - 4];
        assert!(matches!(
            parse_sitemap(cut, &base()),
            Err(SitemapError::Decode(_))
        ));
    }

    #[test]
    fn a_huge_sitemap_keeps_the_protocols_limit() {
        let mut xml = String::from("<urlset>");
        for i in 0..60_000 {
            xml.push_str(&format!("<url><loc>http://h/{i}</loc></url>"));
        }
        xml.push_str("<url><loc>http://[bad</loc></url></urlset>");
        let s = parse_sitemap(xml.as_bytes(), &base()).unwrap();
        assert_eq!(s.locs.len(), MAX_SITEMAP_URLS);
        assert_eq!(s.dropped, 10_001);
        let xml = "<urlset><url><loc>http://[bad</loc></url><url><loc></loc></url></urlset>";
        let s = parse_sitemap(xml.as_bytes(), &base()).unwrap();
        assert_eq!((s.locs.len(), s.invalid), (0, 2));
    }

    #[test]
    fn a_text_sitemap_is_one_url_per_line() {
        let text = "http://h/a\r\n\n  https://h/b#x  \nnot a url\nftp://h/c\n";
        let s = parse_sitemap(text.as_bytes(), &base()).unwrap();
        assert_eq!(s.kind, SitemapKind::UrlSet);
        assert_eq!(urls(&s), ["http://h/a", "https://h/b"]);
        assert_eq!(s.invalid, 2);
        assert!(parse_sitemap(b"just some words", &base()).is_err());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bad in [
            &b"<html><body>no</body></html>"[..],
            b"<urlset><url><loc>http://h/a</url>",
            b"\x00\xff\xfe garbage",
            b"",
            b"<br/>",
        ] {
            assert!(parse_sitemap(bad, &base()).is_err(), "{bad:?}");
        }
    }
}
