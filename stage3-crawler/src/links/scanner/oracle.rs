//! The oracle: html5ever's tokenizer, which is the definition of right for
//! [`scan_hrefs`](super::scan_hrefs).
//!
//! Stage 3 does not use it to crawl. The scanner's tests and fuzz targets
//! compare the scanner with it, and the book's Finding Links chapter shows it
//! as the step between the tree walk and the scanner. It is public for those
//! two readers.

use std::cell::{Cell, RefCell};

use crawl_kit::links::{Href, resolve_hrefs};
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::{local_name, ns};
use url::Url;

// ANCHOR: scan_links
/// The same links as [`extract_links`](crawl_kit::links::extract_links)
/// (the tree walk stages 1 and 2 use), found by html5ever's tokenizer
/// alone, without building a tree.
///
/// A crawler needs tags and attributes, not a document: the tree costs about
/// as much again as the tokenizing, and the tree builder slows down sharply
/// on deeply nested markup, which a hostile page can send. Stage 3 goes one
/// step further with its own scanner ([`scan_hrefs`](super::scan_hrefs)),
/// and tests it against this function's [`tokenizer_hrefs`]. The one thing the tree builder did for us that we must now do ourselves is
/// tell the tokenizer where raw text starts, so that an `href` written inside
/// a `<script>`, `<style>` or `<title>` is not taken for a tag.
pub fn scan_links(html: &str, page_url: &Url) -> Vec<Url> {
    resolve_hrefs(&tokenizer_hrefs(html), page_url)
}

/// Every `href` in `html` in document order, found by html5ever's
/// tokenizer.
pub fn tokenizer_hrefs(html: &str) -> Vec<Href> {
    let tokenizer = Tokenizer::new(HrefSink::default(), TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(html.into());
    // The sink never asks to stop (no `<script>` is run), so `feed` consumes
    // everything; `end` flushes the last token.
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.hrefs.take()
}

/// Collects hrefs from start tags, and switches the tokenizer into the raw
/// text states that the HTML tree builder would select.
#[derive(Default)]
struct HrefSink {
    hrefs: RefCell<Vec<Href>>,
    /// Inside `<svg>` or `<math>`, where `<style>` and `<title>` are ordinary
    /// elements.
    foreign_depth: Cell<usize>,
}

impl TokenSink for HrefSink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let Token::TagToken(tag) = token else {
            return TokenSinkResult::Continue;
        };
        let foreign = matches!(tag.name, local_name!("svg") | local_name!("math"));
        if tag.kind == TagKind::EndTag {
            if foreign {
                self.foreign_depth
                    .set(self.foreign_depth.get().saturating_sub(1));
            }
            return TokenSinkResult::Continue;
        }
        if let Some(attr) = tag
            .attrs
            .iter()
            .find(|attr| attr.name.ns == ns!() && attr.name.local == local_name!("href"))
        {
            self.hrefs.borrow_mut().push(Href {
                value: attr.value.to_string(),
                is_base: tag.name == local_name!("base") && self.foreign_depth.get() == 0,
            });
        }
        if foreign && !tag.self_closing {
            self.foreign_depth.set(self.foreign_depth.get() + 1);
        }
        if self.foreign_depth.get() > 0 {
            return TokenSinkResult::Continue;
        }
        match tag.name {
            local_name!("script") => TokenSinkResult::RawData(RawKind::ScriptData),
            local_name!("style")
            | local_name!("xmp")
            | local_name!("iframe")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript") => TokenSinkResult::RawData(RawKind::Rawtext),
            local_name!("title") | local_name!("textarea") => {
                TokenSinkResult::RawData(RawKind::Rcdata)
            }
            local_name!("plaintext") => TokenSinkResult::Plaintext,
            _ => TokenSinkResult::Continue,
        }
    }
}
// ANCHOR_END: scan_links

#[cfg(test)]
mod tests {
    use super::*;
    use crawl_kit::links::extract_links;

    /// The tokenizer alone finds what the tree walk finds, on the pages the
    /// link rules are tested with and the ones where the tree builder's raw
    /// text switching matters.
    #[test]
    fn the_tokenizer_agrees_with_the_tree_walk() {
        let page = Url::parse("http://example.com/dir/page.html").unwrap();
        for html in [
            r#"<title><a href="/t">no</a></title>
            <script>var s = '<a href="/s">no</a>';</script>
            <style>a[href="/st"] {}</style>
            <textarea><a href="/ta">no</a></textarea>
            <noscript><a href="/ns">no</a></noscript>
            <svg><style><a href="/svg-style">yes</a></style><a href="/svg-a">yes</a></svg>
            <math><title><a href="/math-title">yes</a></title></math>
            <a href="/after">yes</a>"#,
            r#"<a href="other.html">r</a><a href="http://example.com/abs.html">a</a>
            <a href="sub/deeper.html?q=1&amp;r=2">sub</a>"#,
            r##"<a href="#top">t</a><a href="">e</a><a href="other.html#section">o</a>"##,
            r#"<html><head><base href="/pages/b/"></head>
            <body><a href="target.html">t</a><a href="/abs.html">a</a></body></html>"#,
            r#"<base href="sub/"><a href="x.html">x</a>"#,
            r#"<base href="/first/"><base href="/second/"><a href="x">x</a>"#,
            r#"<base target="_blank"><base href="http://[::1"><a href="x.html">x</a>"#,
            r#"<a href="mailto:a@example.com">m</a><a href="HTTPS://Example.COM/s">s</a>"#,
            "<a href=\"  /feed.xml\n\">w</a><a href=\"\tother.html \">t</a>",
            r##"<a href="/b">1</a><a href="/a">2</a><a href="/b#x">3</a><a href="/./a">4</a>"##,
            r#"<html><head><link rel="stylesheet" href="/style.css"></head>
            <body><map><area href="/area.html"></map><A HREF='/upper.html'>u</A>
            <custom-el href="/custom.html"></custom-el><img src="/not-href.png"></body></html>"#,
            r#"<?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom"><link href="/feed.xml" rel="self"/>
            <entry><link href="content/from-feed.html"/></entry></feed>"#,
            r#"<!-- <a href="/comment.html">c</a> -->
            <p>&lt;a href="/text.html"&gt;</p><a name="no-href">n</a>"#,
            "",
            "\u{0}\u{fffd}<<<>>>&&&<a href",
        ] {
            assert_eq!(
                scan_links(html, &page),
                extract_links(html, &page),
                "on {html:?}"
            );
        }
    }
}
