//! Fixed resources: static files, the XHTML page, and the charset pages.

use super::{HTML_NO_CHARSET, HTML_UTF8, Resource, chrome};
use crate::html::{Head, Html};

/// The PNG served as `/static/logo.png`: 16x16 pixels, 139 bytes.
pub(super) const LOGO_PNG: &[u8] = include_bytes!("../../assets/logo.png");

pub(super) const STYLE_CSS: &str = "\
/* demo-site stylesheet. url() below is CSS, not an href: crawlers ignore it. */
body { font-family: Georgia, serif; max-width: 42em; margin: 2em auto; line-height: 1.5; }
header { background: url(/static/logo.png) no-repeat left center; padding-left: 24px; }
code { background: #f2f2f2; padding: 0 0.2em; }
footer { margin-top: 3em; font-size: small; }
";

pub(super) fn page_xhtml() -> Resource {
    let text = "\
<?xml version=\"1.0\" encoding=\"utf-8\"?>
<!DOCTYPE html>
<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">
<head>
<title>An XHTML page</title>
<link rel=\"stylesheet\" href=\"/static/style.css\" />
</head>
<body>
<h1>An XHTML page</h1>
<p>This page is served as application/xhtml+xml. Its links count like any other.</p>
<p><a href=\"content/from-xhtml.html\">A page only this one links to</a> | <a href=\"/\">Home</a></p>
</body>
</html>
";
    Resource {
        links: vec![
            "/static/style.css".to_string(),
            "content/from-xhtml.html".to_string(),
            "/".to_string(),
        ],
        ..Resource::opaque(
            "application/xhtml+xml; charset=utf-8",
            text.as_bytes().to_vec(),
        )
    }
}

pub(super) fn notes_txt() -> String {
    "Notes about demo-site\n\
     =====================\n\
     \n\
     This file is served as text/plain. It contains markup, but a crawler must not\n\
     look for links in it, because it is not HTML:\n\
     \n\
     <a href=\"/not-a-link/plain-text.html\">not a link</a>\n"
        .to_string()
}

const ACCENTED: &str = "Cr\u{e8}me br\u{fb}l\u{e9}e at the caf\u{e9}: a na\u{ef}ve \
                        r\u{e9}sum\u{e9} of \u{201c}smart quotes\u{201d}.";

pub(super) fn charset_utf8_header() -> Resource {
    let mut h = Html::new("UTF-8, declared in the header", chrome());
    h.p("This page is sent as text/html; charset=utf-8 and has no meta element.");
    h.p(&format!(
        "{ACCENTED} Also \u{3b1}\u{3b2}\u{3b3} and \u{65e5}\u{672c}\u{8a9e}."
    ));
    Resource::html(200, HTML_UTF8, h.finish(), false)
}

pub(super) fn charset_meta_ascii() -> Resource {
    let mut h = Html::new(
        "ASCII, declared in a meta element",
        Head {
            meta_charset: Some("ascii"),
            ..chrome()
        },
    );
    h.p("This page is sent as text/html without a charset and declares meta charset=ascii. Every byte is below 0x80.");
    Resource::html(200, HTML_NO_CHARSET, h.finish(), false)
}

pub(super) fn charset_meta_latin1() -> Resource {
    let mut h = Html::new(
        "Latin-1, declared in a meta element",
        Head {
            meta_charset: Some("iso-8859-1"),
            ..chrome()
        },
    );
    h.p("This page is sent as text/html without a charset and declares meta charset=iso-8859-1. Accented letters are single bytes, so the body is not valid UTF-8:");
    h.p("Caf\u{e9}, cr\u{e8}me br\u{fb}l\u{e9}e, na\u{ef}ve.");
    h.raw("<p>");
    h.a(
        "from-latin1.html",
        "A page that only this Latin-1 page links to",
    );
    h.raw("</p>\n");
    let doc = h.finish();
    let body = encode_single_byte(&doc.text, Charset::Latin1);
    Resource::markup(200, HTML_NO_CHARSET, body, doc, false)
}

pub(super) fn charset_header_windows_1252() -> Resource {
    let mut h = Html::new("Windows-1252, declared in the header", chrome());
    h.p("This page is sent as text/html; charset=windows-1252 and has no meta element. Its curly quotes are the bytes 0x93 and 0x94:");
    h.p(ACCENTED);
    let doc = h.finish();
    let body = encode_single_byte(&doc.text, Charset::Windows1252);
    Resource::markup(200, "text/html; charset=windows-1252", body, doc, false)
}

pub(super) fn charset_none() -> Resource {
    let mut h = Html::new("No declared charset", chrome());
    h.p("This page is sent as text/html with no charset and has no meta element. The body happens to be UTF-8:");
    h.p(ACCENTED);
    Resource::html(200, HTML_NO_CHARSET, h.finish(), false)
}

#[derive(Clone, Copy)]
enum Charset {
    Latin1,
    Windows1252,
}

/// Encodes text in a single-byte charset. Only the few characters our pages
/// use need to be representable; anything else becomes `?`.
fn encode_single_byte(text: &str, charset: Charset) -> Vec<u8> {
    text.chars()
        .map(|c| match (charset, c) {
            (Charset::Windows1252, '\u{201c}') => 0x93,
            (Charset::Windows1252, '\u{201d}') => 0x94,
            (Charset::Latin1, '\u{201c}' | '\u{201d}') => b'"',
            (_, c) => u8::try_from(u32::from(c)).unwrap_or(b'?'),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_byte_encodings() {
        assert_eq!(
            encode_single_byte("\u{e9}\u{201c}x\u{201d}\u{3b1}", Charset::Windows1252),
            [0xE9, 0x93, b'x', 0x94, b'?']
        );
        assert_eq!(
            encode_single_byte("\u{e9}\u{201c}", Charset::Latin1),
            [0xE9, b'"']
        );
    }

    #[test]
    fn logo_is_a_png() {
        assert!(LOGO_PNG.starts_with(b"\x89PNG\r\n\x1a\n"));
    }
}
