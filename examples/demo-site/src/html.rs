//! A tiny HTML writer that remembers every link it writes.
//!
//! The site's answer key ([`crate::DemoSite::expected`]) is computed from the
//! link lists that this writer records, not by re-parsing the HTML. Writing the
//! markup and recording the link happen in the same call, so the two cannot
//! drift apart; a test (`tests/expected.rs`) re-parses every served page with
//! html5ever to prove it.

/// Escapes text for use between tags.
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes text for use inside a double-quoted attribute value.
pub(crate) fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            _ => out.push(c),
        }
    }
    out
}

/// What goes into `<head>` besides the title.
#[derive(Default)]
pub(crate) struct Head<'a> {
    /// Emits `<meta charset="...">` as the first thing in `<head>`.
    pub meta_charset: Option<&'static str>,
    /// Emits `<base href="...">`, which changes how relative links resolve.
    pub base: Option<&'a str>,
    /// Full pages link the stylesheet and icon and get a header and footer;
    /// small pages (errors, redirect bodies) get nothing but their own links.
    pub chrome: bool,
}

/// An HTML document under construction.
pub(crate) struct Html {
    out: String,
    /// Every `href` written so far, as the HTML parser will report it
    /// (entity-decoded), in document order. Does not include `<base href>`.
    links: Vec<String>,
    base: Option<String>,
    meta_charset: Option<&'static str>,
    chrome: bool,
    /// Where prose padding is inserted by [`Html::finish_padded`].
    pad_at: Option<usize>,
}

/// A finished document: the text plus the facts the answer key needs.
pub(crate) struct Document {
    pub text: String,
    pub links: Vec<String>,
    pub base: Option<String>,
    pub meta_charset: Option<&'static str>,
}

impl Html {
    /// Starts a document: doctype, `<head>`, and the opening of `<body>`.
    pub fn new(title: &str, head: Head<'_>) -> Html {
        let mut h = Html {
            out: String::with_capacity(4096),
            links: Vec::new(),
            base: None,
            meta_charset: head.meta_charset,
            chrome: head.chrome,
            pad_at: None,
        };
        h.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n");
        if let Some(charset) = head.meta_charset {
            h.raw(&format!("<meta charset=\"{}\">\n", escape_attr(charset)));
        }
        h.raw(&format!("<title>{}</title>\n", escape_text(title)));
        if let Some(base) = head.base {
            h.raw(&format!("<base href=\"{}\">\n", escape_attr(base)));
            h.base = Some(base.to_string());
        }
        if head.chrome {
            h.head_link("stylesheet", "/static/style.css");
            h.head_link("icon", "/static/logo.png");
        }
        h.raw("</head>\n<body>\n");
        if head.chrome {
            h.raw("<header id=\"top\">");
            h.a("/", "demo-site");
            h.raw(" <img src=\"/static/logo.png\" alt=\"\" width=\"16\" height=\"16\"></header>\n");
            h.raw("<main>\n");
        }
        h.raw(&format!("<h1>{}</h1>\n", escape_text(title)));
        h
    }

    /// Appends markup verbatim. Must not contain `href`s (use [`Html::raw_link`]).
    pub fn raw(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    /// Appends a paragraph of escaped text.
    pub fn p(&mut self, text: &str) {
        self.out.push_str("<p>");
        self.out.push_str(&escape_text(text));
        self.out.push_str("</p>\n");
    }

    /// Appends `<a href="href">text</a>` and records the link.
    pub fn a(&mut self, href: &str, text: &str) {
        self.out.push_str(&format!(
            "<a href=\"{}\">{}</a>",
            escape_attr(href),
            escape_text(text)
        ));
        self.links.push(href.to_string());
    }

    /// Appends a list item holding a link followed by a short note.
    pub fn li_a(&mut self, href: &str, text: &str, note: &str) {
        self.raw("<li>");
        self.a(href, text);
        if !note.is_empty() {
            self.raw(" - ");
            self.raw(&escape_text(note));
        }
        self.raw("</li>\n");
    }

    /// Appends hand-written link markup whose single `href` decodes to `href`.
    /// Used for unusual spellings (single quotes, upper case, entities, spaces)
    /// that [`Html::a`] would never produce.
    pub fn raw_link(&mut self, markup: &str, href: &str) {
        self.out.push_str(markup);
        self.links.push(href.to_string());
    }

    fn head_link(&mut self, rel: &str, href: &str) {
        self.out.push_str(&format!(
            "<link rel=\"{rel}\" href=\"{}\">\n",
            escape_attr(href)
        ));
        self.links.push(href.to_string());
    }

    /// Marks the spot where [`Html::finish_padded`] will insert prose.
    pub fn padding_here(&mut self) {
        self.pad_at = Some(self.out.len());
    }

    /// Closes the document.
    pub fn finish(mut self) -> Document {
        if self.chrome {
            self.raw("</main>\n<footer><p>");
            self.a("#top", "Back to top");
            self.raw(" | ");
            self.a("/", "Home");
            self.raw("</p></footer>\n");
        }
        self.raw("</body>\n</html>\n");
        Document {
            text: self.out,
            links: self.links,
            base: self.base,
            meta_charset: self.meta_charset,
        }
    }

    /// Closes the document, inserting prose at the padding mark (or before
    /// the footer) so that the whole document is about `target_len` bytes.
    pub fn finish_padded(self, target_len: usize, seed: u64) -> Document {
        let pad_at = self.pad_at.unwrap_or(self.out.len());
        let mut doc = self.finish();
        let missing = target_len.saturating_sub(doc.text.len());
        let padding = crate::prose::paragraphs(missing, seed);
        doc.text.insert_str(pad_at, &padding);
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_text("a<b>&c\""), "a&lt;b&gt;&amp;c\"");
        assert_eq!(escape_attr("a&b\"c<"), "a&amp;b&quot;c&lt;");
    }

    #[test]
    fn records_links_in_order() {
        let mut h = Html::new(
            "T",
            Head {
                chrome: true,
                base: Some("/x/"),
                ..Head::default()
            },
        );
        h.a("1.html?a=1&b=2", "one");
        let doc = h.finish();
        assert_eq!(
            doc.links,
            [
                "/static/style.css",
                "/static/logo.png",
                "/",
                "1.html?a=1&b=2",
                "#top",
                "/"
            ]
        );
        assert_eq!(doc.base.as_deref(), Some("/x/"));
        assert!(doc.text.contains("href=\"1.html?a=1&amp;b=2\""));
    }

    #[test]
    fn padding_reaches_target() {
        let mut h = Html::new("T", Head::default());
        h.padding_here();
        let doc = h.finish_padded(5_000, 7);
        assert!(doc.text.len().abs_diff(5_000) < 100, "{}", doc.text.len());
    }
}
