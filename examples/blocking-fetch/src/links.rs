//! Links, with std only: a small scanner for `href` attributes, and URL
//! resolution for links that stay on one `http://host:port` origin.
//!
//! These examples are about blocking I/O, so they carry no HTML parser. This
//! scanner skips comments, scripts and styles, reads quoted and unquoted
//! attribute values, decodes the common character references, and honours
//! `<base href>`, which is enough for the demo site (a test checks that it
//! finds the same URLs as the site's answer key). The crawlers in the
//! stages use a real HTML parser and the `url` crate instead.

use std::collections::HashSet;

/// The same-origin links in `html`, a page at `page` (path and query) on
/// `origin` (`http://host:port`), as paths with their queries, in document
/// order, without duplicates. Fragments are dropped.
pub fn site_links(html: &str, origin: &str, page: &str) -> Vec<String> {
    let authority = origin.strip_prefix("http://").unwrap_or(origin);
    let hrefs = hrefs(html);
    let base = hrefs
        .iter()
        .find(|(is_base, _)| *is_base)
        .and_then(|(_, href)| resolve(authority, page, href))
        .unwrap_or_else(|| page.to_string());
    let mut seen = HashSet::new();
    hrefs
        .iter()
        .filter_map(|(is_base, href)| resolve(authority, if *is_base { page } else { &base }, href))
        .filter(|path| seen.insert(path.clone()))
        .collect()
}

/// Every `href` attribute outside comments, scripts and styles, decoded,
/// with whether it is on a `<base>` element.
fn hrefs(html: &str) -> Vec<(bool, String)> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        if let Some(comment) = rest.strip_prefix("!--") {
            rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
            continue;
        }
        let name_len = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if name_len == 0 {
            continue; // an end tag, a doctype, or a `<` in text
        }
        let name = rest[..name_len].to_ascii_lowercase();
        let end = tag_end(rest);
        if let Some(value) = attribute(&rest[name_len..end], "href") {
            found.push((name == "base", decode(value)));
        }
        rest = &rest[end..];
        if name == "script" || name == "style" {
            // Their text is not markup: skip to the end tag.
            let close = format!("</{name}");
            rest = find_ascii_ci(rest, &close).map_or("", |at| &rest[at..]);
        }
    }
    found
}

/// Where `needle` (ASCII) first occurs in `haystack`, ignoring ASCII case.
fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Where the tag that `tag` starts (after its `<`) ends: the index of its
/// `>`, not counting one inside a quoted value.
fn tag_end(tag: &str) -> usize {
    let mut quote = None;
    for (i, c) in tag.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return i,
            _ => {}
        }
    }
    tag.len()
}

/// The raw value of attribute `wanted` among `attrs`, if present.
fn attribute<'a>(attrs: &'a str, wanted: &str) -> Option<&'a str> {
    let mut rest = attrs;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
        if rest.is_empty() {
            return None;
        }
        let name_len = rest
            .find(|c: char| c.is_ascii_whitespace() || c == '=' || c == '/')
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        rest = rest[name_len..].trim_start();
        let value = match rest.strip_prefix('=') {
            None => "",
            Some(after) => {
                let after = after.trim_start();
                let (value, remaining) = match after.chars().next() {
                    Some(q @ ('"' | '\'')) => {
                        let inner = &after[1..];
                        let close = inner.find(q).unwrap_or(inner.len());
                        (&inner[..close], inner.get(close + 1..).unwrap_or(""))
                    }
                    _ => {
                        let close = after
                            .find(|c: char| c.is_ascii_whitespace())
                            .unwrap_or(after.len());
                        (&after[..close], &after[close..])
                    }
                };
                rest = remaining;
                value
            }
        };
        // Each round consumes a name or an `=`, so the loop ends.
        if name.eq_ignore_ascii_case(wanted) {
            return Some(value);
        }
    }
}

/// Decodes `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;` and numeric
/// references; anything else is kept as written.
fn decode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let reference = rest.find(';').map(|semi| (&rest[1..semi], semi));
        let decoded = reference.and_then(|(name, semi)| {
            let c = match name {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                _ => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code)?
                }
            };
            Some((c, semi))
        });
        match decoded {
            Some((c, semi)) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Resolves `href` against `base` (a path on `authority`): the path and
/// query it points to, if it stays on `http://authority`.
fn resolve(authority: &str, base: &str, href: &str) -> Option<String> {
    let href = href.trim_ascii();
    let href = href.split('#').next().unwrap_or_default();
    let target = if let Some((scheme, rest)) = split_scheme(href) {
        if !scheme.eq_ignore_ascii_case("http") {
            return None; // https, mailto:, javascript:, ...
        }
        same_origin_path(authority, rest.strip_prefix("//")?)?
    } else if let Some(rest) = href.strip_prefix("//") {
        same_origin_path(authority, rest)?
    } else if href.is_empty() {
        base.to_string()
    } else if href.starts_with('/') {
        href.to_string()
    } else if href.starts_with('?') {
        format!("{}{href}", base.split('?').next().unwrap_or_default())
    } else {
        let base_path = base.split('?').next().unwrap_or_default();
        let dir = base_path
            .rfind('/')
            .map_or("/", |slash| &base_path[..=slash]);
        format!("{dir}{href}")
    };
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target.as_str(), None),
    };
    let path = remove_dot_segments(path);
    Some(match query {
        Some(query) => format!("{path}?{query}"),
        None => path,
    })
}

/// `http:...` -> `("http", "...")`, if `href` starts with a scheme.
fn split_scheme(href: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = href.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    valid.then_some((scheme, rest))
}

/// The path and query of `host:port/path?query`, if the authority is ours.
fn same_origin_path(authority: &str, rest: &str) -> Option<String> {
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (theirs, path) = rest.split_at(end);
    if !theirs.eq_ignore_ascii_case(authority) {
        return None;
    }
    Some(if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    })
}

/// Resolves `.` and `..` segments: `/a/./b/../c` is `/a/c`.
fn remove_dot_segments(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut out: Vec<&str> = Vec::new();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." | ".." => {
                if *segment == ".." {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            other => out.push(other),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod links_tests {
    use super::*;

    const ORIGIN: &str = "http://127.0.0.1:8000";

    fn links(html: &str) -> Vec<String> {
        site_links(html, ORIGIN, "/dir/page.html?x=1")
    }

    #[test]
    fn relative_absolute_root_relative_and_dots() {
        let html = r#"<a href="other.html">1</a><a href="/root.html">2</a>
            <a href="http://127.0.0.1:8000/abs">3</a><a href="HTTP://127.0.0.1:8000/up">4</a>
            <a href="../parent.html">5</a><a href="./sub/./x/../y.html">6</a>
            <a href="//127.0.0.1:8000/proto-relative">7</a><a href="?q=2">8</a>
            <a href="http://127.0.0.1:8000">9</a>"#;
        assert_eq!(
            links(html),
            [
                "/dir/other.html",
                "/root.html",
                "/abs",
                "/up",
                "/parent.html",
                "/dir/sub/y.html",
                "/proto-relative",
                "/dir/page.html?q=2",
                "/",
            ]
        );
    }

    #[test]
    fn fragments_empty_hrefs_and_whitespace() {
        let html = "<a href=\"#top\">1</a><a href=\"\">2</a><a href=\"  /feed.xml\n\">3</a>\
                    <a href='/feed.xml#latest'>4</a><A HREF=/unquoted.html>5</A>";
        assert_eq!(
            links(html),
            ["/dir/page.html?x=1", "/feed.xml", "/unquoted.html"]
        );
    }

    #[test]
    fn other_origins_and_schemes_are_dropped() {
        let html = r#"<a href="http://example.com/">1</a><a href="https://127.0.0.1:8000/">2</a>
            <a href="http://127.0.0.1:8001/">3</a><a href="mailto:a@b">4</a>
            <a href="javascript:void(0)">5</a><a href="ftp://x/">6</a><a href="tel:+1">7</a>"#;
        assert!(links(html).is_empty());
    }

    #[test]
    fn comments_scripts_and_text_are_not_links() {
        let html = r#"<!-- <a href="/c.html"> --><script>x = '<a href="/s.html">';</script>
            <STYLE>a[href="/css.html"] {}</STYLE><p>&lt;a href="/t.html"&gt;</p>
            <a name="no-href">n</a><img src="/i.png" alt="a > b"><a href="/real.html">r</a>"#;
        assert_eq!(links(html), ["/real.html"]);
    }

    #[test]
    fn base_href_and_references() {
        let html = r#"<base href="/pages/b/"><a href="t.html?a=1&amp;b=2">t</a>
            <a title='x"y' href="&#47;slash.html">s</a>"#;
        assert_eq!(
            links(html),
            ["/pages/b/", "/pages/b/t.html?a=1&b=2", "/slash.html"]
        );
    }

    #[test]
    fn duplicates_keep_the_first() {
        let html = r#"<a href="/b">1</a><a href="/a">2</a><a href="/./b">3</a>"#;
        assert_eq!(links(html), ["/b", "/a"]);
    }

    #[test]
    fn malformed_markup_ends_quietly() {
        for html in [
            "<",
            "<a href=\"/x",
            "<a href=",
            "<!--",
            "<script>",
            "&",
            "<a =>",
            "<a href='&#xFFFFFFFF;'>",
        ] {
            let _ = links(html);
        }
        assert_eq!(links("<a href=\"/x"), ["/x"]);
    }

    #[test]
    fn dot_segments() {
        for (path, want) in [
            ("/", "/"),
            ("/a/b/../c", "/a/c"),
            ("/a/b/..", "/a/"),
            ("/a/./", "/a/"),
            ("/../../x", "/x"),
            ("/static/../feed.xml", "/feed.xml"),
        ] {
            assert_eq!(remove_dot_segments(path), want, "{path}");
        }
    }
}
