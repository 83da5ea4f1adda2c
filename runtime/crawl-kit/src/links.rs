//! Which links a page has, and which of them a crawler may follow.
//!
//! The chapter leaves `parse_links` out ("not shown") and, in its full
//! source, finds links with a regular expression. A regular expression also
//! finds `href`s inside comments, scripts and escaped text, and misses
//! unquoted ones (`<a href=x>`). We parse the page with html5ever, the HTML parser that
//! Servo uses, and read the `href` attribute of every element.
//!
//! All three stages share these rules, so they crawl the same set of URLs.
//! Stages 1 and 2 find hrefs with [`extract_links`]'s tree walk; stage 3
//! finds them with its own scanner and hands them to [`resolve_hrefs`].

use std::borrow::Cow;
use std::collections::HashSet;

use html5ever::tendril::TendrilSink;
use html5ever::{ParseOpts, local_name, ns, parse_document};
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use url::Url;

// ANCHOR: extract_links
/// Every href in the document (every element's href attribute: `<a>`,
/// `<link>`, `<area>`, and in application/xml bodies any element with href),
/// resolved against the document's first `<base href>` (itself resolved
/// against `page_url`) or `page_url`; fragments dropped; only http and https
/// kept; duplicates within the page removed, first occurrence order kept.
pub fn extract_links(html: &str, page_url: &Url) -> Vec<Url> {
    let dom = parse_document(RcDom::default(), ParseOpts::default()).one(html);
    // `dom` stays alive until the end of this function: dropping it would
    // detach the children of the nodes we walk (see design.md).
    let hrefs = hrefs_in_order(&dom.document);
    resolve_hrefs(&hrefs, page_url)
}
// ANCHOR_END: extract_links

// ANCHOR: resolve_hrefs
/// The link rules proper, shared by every way of finding hrefs: resolve
/// each against the page's base, drop fragments, keep http and https, drop
/// duplicates in page order.
pub fn resolve_hrefs(hrefs: &[Href], page_url: &Url) -> Vec<Url> {
    resolve_all(hrefs, page_url)
        .into_iter()
        .filter_map(|link| match link {
            Link::Url(url) if matches!(url.scheme(), "http" | "https") => Some(url),
            _ => None,
        })
        .collect()
}

/// What an href came to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// A URL, of any scheme (`mailto:`, `javascript:` too).
    Url(Url),
    /// An href that is not a URL at all (`http://[::1`), as written.
    Invalid(String),
}

/// Every href of the page resolved against its base, fragments dropped,
/// without duplicates, in page order, whatever its scheme; the hrefs that
/// are not URLs come back as written, each once. Stage 3 accounts for every
/// one of them; stages 1 and 2 keep the http(s) URLs ([`resolve_hrefs`]).
pub fn resolve_all(hrefs: &[Href], page_url: &Url) -> Vec<Link> {
    resolve_all_encoded(hrefs, page_url, None)
}

/// How a page in a legacy encoding encodes a URL's query: the URL standard,
/// as HTML applies it, writes the query of every link of a document in the
/// document's own encoding (`?q=テスト` on a Shift_JIS page is
/// `?q=%83e%83X%83g`, what a browser requests), and only the query.
pub type QueryEncoding<'a> = &'a dyn Fn(&str) -> Cow<'_, [u8]>;

/// [`resolve_all`], for a page whose queries are encoded by `query` (`None`:
/// UTF-8, as for a page in UTF-8 or UTF-16).
pub fn resolve_all_encoded(
    hrefs: &[Href],
    page_url: &Url,
    query: Option<QueryEncoding<'_>>,
) -> Vec<Link> {
    let resolve = |base: &Url, href: &str| resolve_in(base, href, query);
    // `<base href>` changes how every other link resolves. Its own href is
    // resolved against the page URL, as the HTML standard says, and a base
    // that cannot serve as one (`javascript:...`, `data:...`, anything a
    // relative URL cannot be joined to) is ignored: the page URL is the
    // base, as the standard's fallback base URL is.
    let base = hrefs
        .iter()
        .find(|href| href.is_base)
        .and_then(|href| resolve(page_url, &href.value))
        .filter(|base| !base.cannot_be_a_base() && !matches!(base.scheme(), "javascript" | "data"))
        .unwrap_or_else(|| page_url.clone());

    let mut seen = HashSet::new();
    let mut links = Vec::new();
    for href in hrefs {
        let against = if href.is_base { page_url } else { &base };
        let link = match resolve(against, &href.value) {
            Some(url) => Link::Url(url),
            None => Link::Invalid(href.value.trim_ascii().to_string()),
        };
        if seen.insert(link.clone()) {
            links.push(link);
        }
    }
    links
}
// ANCHOR_END: resolve_hrefs

// ANCHOR: same_host
/// Same scheme-independent host and same port (`port_or_known_default`).
///
/// `http://h/` and `https://h:80/` count as the same host; `http://h/` and
/// `https://h/` do not, because their default ports differ (80 and 443).
pub fn same_host(a: &Url, b: &Url) -> bool {
    a.host() == b.host() && a.port_or_known_default() == b.port_or_known_default()
}
// ANCHOR_END: same_host

/// One `href` attribute, as the parser decoded it (entities expanded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Href {
    /// The attribute's value, character references decoded.
    pub value: String,
    /// Whether it sits on a `<base>` element (outside `<svg>` and `<math>`).
    pub is_base: bool,
}

/// The `href` of every element in document order.
///
/// The walk is iterative, with an explicit stack: html5ever builds a tree as
/// deep as the page's nesting, and a recursive walk of a page with a hundred
/// thousand nested `<div>`s would overflow the thread's stack.
fn hrefs_in_order(document: &Handle) -> Vec<Href> {
    let mut hrefs = Vec::new();
    let mut stack = vec![document.clone()];
    while let Some(node) = stack.pop() {
        if let NodeData::Element { name, attrs, .. } = &node.data {
            let is_base = name.ns == ns!(html) && name.local == local_name!("base");
            let href = attrs
                .borrow()
                .iter()
                .find(|attr| attr.name.ns == ns!() && attr.name.local == local_name!("href"))
                .map(|attr| attr.value.to_string());
            if let Some(value) = href {
                hrefs.push(Href { value, is_base });
            }
        }
        // Children pushed in reverse, so the first child is popped first and
        // the links come out in document order.
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    hrefs
}

/// Resolves `href` against `base` without its fragment, or `None` if it is
/// not a valid URL, its query encoded by `query`. Surrounding whitespace is
/// not part of an href (the HTML standard strips it).
fn resolve_in(base: &Url, href: &str, query: Option<QueryEncoding<'_>>) -> Option<Url> {
    let mut url = Url::options()
        .base_url(Some(base))
        .encoding_override(query)
        .parse(href.trim_ascii())
        .ok()?;
    url.set_fragment(None);
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "http://example.com/dir/page.html";

    fn links(html: &str) -> Vec<String> {
        links_at(PAGE, html)
    }

    /// The links the tree walk finds. (Stage 3's `scanner::oracle` tests
    /// check that html5ever's tokenizer alone agrees with this walk.)
    fn links_at(page: &str, html: &str) -> Vec<String> {
        let page = Url::parse(page).unwrap();
        extract_links(html, &page)
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn raw_text_and_foreign_content_agree() {
        let html = r#"<title><a href="/t">no</a></title>
            <script>var s = '<a href="/s">no</a>';</script>
            <style>a[href="/st"] {}</style>
            <textarea><a href="/ta">no</a></textarea>
            <noscript><a href="/ns">no</a></noscript>
            <svg><style><a href="/svg-style">yes</a></style><a href="/svg-a">yes</a></svg>
            <math><title><a href="/math-title">yes</a></title></math>
            <a href="/after">yes</a>"#;
        assert_eq!(
            links(html),
            [
                "http://example.com/svg-style",
                "http://example.com/svg-a",
                "http://example.com/math-title",
                "http://example.com/after"
            ]
        );
    }

    #[test]
    fn relative_absolute_and_root_relative() {
        let html = r#"<a href="other.html">r</a>
            <a href="http://example.com/abs.html">a</a>
            <a href="/root.html">root</a>
            <a href="sub/deeper.html?q=1&amp;r=2">sub</a>"#;
        assert_eq!(
            links(html),
            [
                "http://example.com/dir/other.html",
                "http://example.com/abs.html",
                "http://example.com/root.html",
                "http://example.com/dir/sub/deeper.html?q=1&r=2",
            ]
        );
    }

    #[test]
    fn dot_segments_are_resolved() {
        let html = r#"<a href="../up.html">u</a><a href="./here.html">h</a>
            <a href="/a/../b/./c.html">c</a><a href="../../../../too-far.html">f</a>"#;
        assert_eq!(
            links(html),
            [
                "http://example.com/up.html",
                "http://example.com/dir/here.html",
                "http://example.com/b/c.html",
                "http://example.com/too-far.html",
            ]
        );
    }

    #[test]
    fn fragments_are_dropped_and_empty_href_is_the_page() {
        let html = r##"<a href="#top">t</a><a href="">e</a>
            <a href="other.html#section">o</a>"##;
        assert_eq!(
            links(html),
            [
                "http://example.com/dir/page.html",
                "http://example.com/dir/other.html",
            ]
        );
    }

    #[test]
    fn fragment_of_the_page_url_is_dropped_too() {
        assert_eq!(
            links_at("http://example.com/p.html#frag", r#"<a href="">x</a>"#),
            ["http://example.com/p.html"]
        );
    }

    #[test]
    fn base_href_changes_resolution_and_is_itself_a_link() {
        let html = r#"<html><head><base href="/pages/b/"></head>
            <body><a href="target.html">t</a><a href="/abs.html">a</a></body></html>"#;
        assert_eq!(
            links(html),
            [
                "http://example.com/pages/b/",
                "http://example.com/pages/b/target.html",
                "http://example.com/abs.html",
            ]
        );
    }

    #[test]
    fn relative_base_href_resolves_against_the_page() {
        // Resolving "sub/" against itself would give /dir/sub/sub/.
        let html = r#"<base href="sub/"><a href="x.html">x</a>"#;
        assert_eq!(
            links(html),
            [
                "http://example.com/dir/sub/",
                "http://example.com/dir/sub/x.html"
            ]
        );
    }

    #[test]
    fn only_the_first_base_counts() {
        let html = r#"<base href="/first/"><base href="/second/"><a href="x">x</a>"#;
        assert_eq!(
            links(html),
            [
                "http://example.com/first/",
                "http://example.com/second/",
                "http://example.com/first/x",
            ]
        );
    }

    #[test]
    fn base_without_href_or_with_a_bad_href_is_ignored() {
        let html = r#"<base target="_blank"><base href="http://[::1"><a href="x.html">x</a>"#;
        assert_eq!(links(html), ["http://example.com/dir/x.html"]);
    }

    #[test]
    fn a_base_that_cannot_be_one_falls_back_to_the_page() {
        // `javascript:` and `data:` bases, and any URL a relative reference
        // cannot be joined to: the links resolve against the page, none lost.
        for base in ["javascript:alert(1)//", "data:text/html,x", "mailto:a@b"] {
            let html = format!(r#"<base href="{base}"><a href="x.html">x</a><a href="/y">y</a>"#);
            assert_eq!(
                links(&html),
                ["http://example.com/dir/x.html", "http://example.com/y"],
                "{base}"
            );
        }
    }

    #[test]
    fn resolve_all_keeps_every_scheme_and_the_hrefs_that_are_not_urls() {
        let page = Url::parse(PAGE).unwrap();
        let hrefs = [
            ("mailto:a@b", false),
            ("x.html", false),
            (" http://[::1 ", false),
            ("tel:+1", false),
            ("x.html#f", false),
            ("http://[::1", false),
        ]
        .map(|(value, is_base)| Href {
            value: value.to_string(),
            is_base,
        });
        let url = |s: &str| Link::Url(Url::parse(s).unwrap());
        assert_eq!(
            resolve_all(&hrefs, &page),
            [
                url("mailto:a@b"),
                url("http://example.com/dir/x.html"),
                Link::Invalid("http://[::1".into()),
                url("tel:+1"),
            ]
        );
        assert_eq!(
            resolve_hrefs(&hrefs, &page),
            [Url::parse("http://example.com/dir/x.html").unwrap()]
        );
    }

    #[test]
    fn base_on_another_host_moves_relative_links_there() {
        let html = r#"<base href="https://cdn.example.org/v2/"><a href="lib.js">l</a>"#;
        assert_eq!(
            links(html),
            [
                "https://cdn.example.org/v2/",
                "https://cdn.example.org/v2/lib.js"
            ]
        );
    }

    #[test]
    fn non_http_schemes_are_dropped() {
        let html = r#"<a href="mailto:a@example.com">m</a><a href="ftp://ftp.example.com/">f</a>
            <a href="javascript:void(0)">j</a><a href="tel:+15555550100">t</a>
            <a href="data:text/html,hi">d</a><a href="HTTPS://Example.COM/s">s</a>"#;
        assert_eq!(links(html), ["https://example.com/s"]);
    }

    #[test]
    fn malformed_hrefs_are_ignored() {
        let html = r#"<a href="http://[::1">v6</a><a href="http://exa mple.com/">space</a>
            <a href="http://:80/">no host</a><a href="http://example.com:99999/">port</a>
            <a href="ok.html">ok</a>"#;
        assert_eq!(links(html), ["http://example.com/dir/ok.html"]);
    }

    #[test]
    fn whitespace_around_href_is_trimmed() {
        let html = "<a href=\"  /feed.xml\n\">w</a><a href=\"\tother.html \">t</a>";
        assert_eq!(
            links(html),
            [
                "http://example.com/feed.xml",
                "http://example.com/dir/other.html"
            ]
        );
    }

    #[test]
    fn duplicates_are_removed_keeping_first_order() {
        let html = r##"<a href="/b">1</a><a href="/a">2</a><a href="/b#x">3</a>
            <a href="/./a">4</a><a href="HTTP://EXAMPLE.COM/b">5</a><a href="/c">6</a>"##;
        assert_eq!(
            links(html),
            [
                "http://example.com/b",
                "http://example.com/a",
                "http://example.com/c"
            ]
        );
    }

    #[test]
    fn every_element_with_href_counts() {
        let html = r#"<html><head><link rel="stylesheet" href="/style.css"></head>
            <body><map><area href="/area.html"></map><A HREF='/upper.html'>u</A>
            <custom-el href="/custom.html"></custom-el><img src="/not-href.png"></body></html>"#;
        assert_eq!(
            links(html),
            [
                "http://example.com/style.css",
                "http://example.com/area.html",
                "http://example.com/upper.html",
                "http://example.com/custom.html",
            ]
        );
    }

    #[test]
    fn xml_bodies_count_every_element_with_href() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <link href="/feed.xml" rel="self"/>
              <entry><link href="content/from-feed.html"/></entry>
            </feed>"#;
        assert_eq!(
            links(xml),
            [
                "http://example.com/feed.xml",
                "http://example.com/dir/content/from-feed.html",
            ]
        );
    }

    #[test]
    fn comments_scripts_and_text_are_not_links() {
        let html = r#"<!-- <a href="/comment.html">c</a> -->
            <script>var s = '<a href="/script.html">x</a>';</script>
            <p>&lt;a href="/text.html"&gt;</p><a name="no-href">n</a>"#;
        assert!(links(html).is_empty());
    }

    #[test]
    fn entities_in_href_are_decoded() {
        let html = r#"<a href="/search?a=1&amp;b=2">s</a>"#;
        assert_eq!(links(html), ["http://example.com/search?a=1&b=2"]);
    }

    #[test]
    fn garbage_and_empty_input_give_no_links() {
        assert!(links("").is_empty());
        assert!(links("\u{0}\u{fffd}<<<>>>&&&<a href").is_empty());
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        // Deeper than a recursive walk survives on a 2 MiB test thread.
        // `<span>`, not `<div>`: html5ever checks the open elements for a `<p>`
        // at every `<div>`, which makes deep `<div>`s quadratic to parse.
        let depth = 100_000;
        let html = format!(
            "{}<a href=\"/deep.html\">d</a>{}",
            "<span>".repeat(depth),
            "</span>".repeat(depth)
        );
        assert_eq!(links(&html), ["http://example.com/deep.html"]);
    }

    #[test]
    fn same_host_compares_host_and_effective_port() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(same_host(&u("http://h.com/a"), &u("http://h.com/b?q")));
        assert!(same_host(&u("http://h.com/"), &u("http://h.com:80/")));
        assert!(same_host(&u("http://h.com:443/"), &u("https://h.com/")));
        assert!(same_host(&u("http://H.COM/"), &u("http://h.com/")));
        assert!(!same_host(&u("http://h.com/"), &u("https://h.com/")));
        assert!(!same_host(&u("http://h.com/"), &u("http://www.h.com/")));
        assert!(!same_host(
            &u("http://127.0.0.1:8000/"),
            &u("http://127.0.0.1:8001/")
        ));
        assert!(!same_host(&u("http://127.0.0.1/"), &u("http://localhost/")));
    }
}
