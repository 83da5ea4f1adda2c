//! What the site serves: index, pages, redirects, errors, content types,
//! charsets, and that it serves the same bytes every time.

mod common;

use common::{Client, Framing, get, hrefs, parse_html};
use demo_site::{DemoSite, SiteConfig};

#[test]
fn index_explains_every_section_and_links_into_it() {
    let site = DemoSite::start_default().unwrap();
    let index = get(site.addr(), "/");
    assert_eq!(index.status, 200);
    assert_eq!(
        index.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let text = index.text();
    for heading in [
        "Pages",
        "Redirects",
        "Errors",
        "Content types",
        "Charsets",
        "Framing",
        "Fault paths (not linked)",
    ] {
        assert!(
            text.contains(&format!("{heading}</h2>")),
            "section {heading}"
        );
    }
    let links = hrefs(&index.body);
    for target in [
        "/pages/a/",
        "/pages/b/",
        "/pages/c/",
        "/pages/a/0.html",
        "/redirect/chain/1",
        "/redirect/alias",
        "/redirect/loop/a",
        "/missing.html",
        "/error/500",
        "/static/logo.png",
        "/static/style.css",
        "/feed.xml",
        "/page.xhtml",
        "/base.html",
        "/charset/meta-latin1.html",
        "/framing/large.html",
    ] {
        assert!(links.iter().any(|l| l == target), "index links to {target}");
    }
    // Fault paths are described but never linked, and the link-lookalikes
    // are not links.
    assert!(text.contains("<code>/fault/hang</code>"));
    assert!(links.iter().all(|l| !l.contains("/fault/")));
    assert!(links.iter().all(|l| !l.contains("/not-a-link/")));
    assert!(text.contains("/not-a-link/comment.html"));
}

#[test]
fn pages_use_every_link_form() {
    let site = DemoSite::start_default().unwrap();
    let origin = site.base_url();
    let mut client = Client::connect(site.addr());
    let mut all = Vec::new();
    for n in 0..100 {
        let dir = ["a", "b", "c"][n % 3];
        let page = client.get(&format!("/pages/{dir}/{n}.html"));
        assert_eq!(page.status, 200);
        all.extend(hrefs(&page.body));
    }
    let has = |what: &str, test: &dyn Fn(&str) -> bool| {
        assert!(all.iter().any(|h| test(h)), "no {what} link on any page");
    };
    let relative = |h: &str| {
        h.trim_end_matches(".html")
            .bytes()
            .all(|b| b.is_ascii_digit())
    };
    has("relative", &|h| relative(h) && h.ends_with(".html"));
    has("parent-relative", &|h| h.starts_with("../"));
    has("root-relative", &|h| h.starts_with("/pages/"));
    has("absolute", &|h| h.starts_with(&format!("{origin}/pages/")));
    has("protocol-relative", &|h| h.starts_with("//127.0.0.1:"));
    has("fragment", &|h| h.contains(".html#"));
    has("directory", &|h| h == "./");
    has("other-host", &|h| h.starts_with("http://example.com/"));
    has("https other-host", &|h| {
        h.starts_with("https://other.invalid/")
    });
    has("mailto", &|h| h.starts_with("mailto:"));
    has("ftp", &|h| h.starts_with("ftp:"));
    has("javascript", &|h| h.starts_with("javascript:"));
}

#[test]
fn redirects_carry_location_and_a_matching_link() {
    let site = DemoSite::start_default().unwrap();
    let origin = site.base_url();
    let absolute = format!("{origin}/redirect/chain/2");
    let cases = [
        ("/redirect/chain/1", 301, absolute.as_str()),
        ("/redirect/chain/2", 302, "3"),
        ("/redirect/chain/3", 303, "/redirect/chain/4"),
        ("/redirect/chain/4", 307, "./5"),
        ("/redirect/chain/5", 308, "../target.html"),
        ("/redirect/alias", 302, "target.html"),
        ("/redirect/fragment", 301, "/redirect/target.html#landed"),
        ("/redirect/loop/a", 302, "b"),
        ("/redirect/loop/b", 307, "/redirect/loop/a"),
        ("/redirect/offsite", 302, "http://example.com/"),
    ];
    let mut client = Client::connect(site.addr());
    for (path, status, location) in cases {
        let response = client.get(path);
        assert_eq!(response.status, status, "{path}");
        assert_eq!(response.header("location"), Some(location), "{path}");
        assert_eq!(hrefs(&response.body), [location], "{path}");
    }
    assert_eq!(client.get("/redirect/target.html").status, 200);
}

#[test]
fn errors_link_only_to_the_index() {
    let site = DemoSite::start_default().unwrap();
    for (path, status) in [
        ("/missing.html", 404),
        ("/no/such/page", 404),
        ("/pages/a/1.html", 404), // page 1 lives in b
        ("/pages/", 404),
        ("/error/500", 500),
    ] {
        let response = get(site.addr(), path);
        assert_eq!(response.status, status, "{path}");
        assert_eq!(hrefs(&response.body), ["/"], "{path}");
    }
}

#[test]
fn content_types() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());

    let logo = client.get("/static/logo.png");
    assert_eq!(logo.header("content-type"), Some("image/png"));
    assert!(logo.body.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(std::str::from_utf8(&logo.body).is_err());

    let css = client.get("/static/style.css");
    assert_eq!(css.header("content-type"), Some("text/css"));
    assert!(css.text().contains("body {"));

    let feed = client.get("/feed.xml");
    assert_eq!(
        feed.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    assert!(feed.text().starts_with("<?xml"));
    assert!(hrefs(&feed.body).contains(&"/content/from-feed.html".to_string()));

    let xhtml = client.get("/page.xhtml");
    assert_eq!(
        xhtml.header("content-type"),
        Some("application/xhtml+xml; charset=utf-8")
    );
    assert!(hrefs(&xhtml.body).contains(&"content/from-xhtml.html".to_string()));

    let notes = client.get("/notes.txt");
    assert_eq!(
        notes.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert!(
        notes
            .text()
            .contains("<a href=\"/not-a-link/plain-text.html\">")
    );

    let base = client.get("/base.html");
    assert_eq!(parse_html(&base.body).base.as_deref(), Some("/pages/b/"));
    assert!(hrefs(&base.body).contains(&"base-target.html".to_string()));
    assert_eq!(client.get("/pages/b/base-target.html").status, 200);
    assert_eq!(client.get("/base-target.html").status, 404);
}

/// (path, Content-Type, meta charset, bytes that must appear, valid UTF-8)
type CharsetCase = (
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static [u8],
    bool,
);

#[test]
fn charsets() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    #[rustfmt::skip]
    let cases: [CharsetCase; 5] = [
        ("/charset/utf8-header.html", "text/html; charset=utf-8", None, "é".as_bytes(), true),
        ("/charset/meta-ascii.html", "text/html", Some("ascii"), b"ascii", true),
        ("/charset/meta-latin1.html", "text/html", Some("iso-8859-1"), b"Caf\xe9", false),
        ("/charset/header-windows-1252.html", "text/html; charset=windows-1252", None, b"\x93smart quotes\x94", false),
        ("/charset/none.html", "text/html", None, "é".as_bytes(), true),
    ];
    for (path, content_type, meta, bytes, utf8) in cases {
        let page = client.get(path);
        assert_eq!(page.header("content-type"), Some(content_type), "{path}");
        assert_eq!(
            parse_html(&page.body).meta_charset.as_deref(),
            meta,
            "{path}"
        );
        assert!(page.body.windows(bytes.len()).any(|w| w == bytes), "{path}");
        assert_eq!(std::str::from_utf8(&page.body).is_ok(), utf8, "{path}");
    }
    let ascii = client.get("/charset/meta-ascii.html");
    assert!(ascii.body.is_ascii());
    // The Latin-1 page is the only way to the page after it.
    let latin1 = client.get("/charset/meta-latin1.html");
    assert!(hrefs(&latin1.body).contains(&"from-latin1.html".to_string()));
}

#[test]
fn pages_average_page_size() {
    let site = DemoSite::start(SiteConfig {
        pages: 30,
        page_size: 100_000,
        ..SiteConfig::default()
    })
    .unwrap();
    let mut client = Client::connect(site.addr());
    let total: usize = (0..30)
        .map(|n| client.get(&format!("/pages/{}/{n}.html", ["a", "b", "c"][n % 3])))
        .map(|page| {
            assert!(page.body.len() >= 40_000, "{}", page.body.len());
            page.body.len()
        })
        .sum();
    let average = total / 30;
    assert!((99_000..=101_000).contains(&average), "average {average}");
}

#[test]
fn framing_of_special_pages() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    let empty = client.get("/framing/empty.html");
    assert_eq!(
        (empty.framing, empty.body.len()),
        (Framing::ContentLength, 0)
    );
    assert_eq!(empty.header("content-length"), Some("0"));
    let empty_chunked = client.get("/framing/empty-chunked.html");
    assert_eq!(
        (empty_chunked.framing, empty_chunked.body.len()),
        (Framing::Chunked, 0)
    );
    let large = client.get("/framing/large.html");
    assert_eq!(
        (large.framing, large.body.len()),
        (Framing::Chunked, 256 * 1024)
    );
    assert!(large.text().ends_with("</html>\n"));
}

/// Fetches every URL of the site with raw HTTP/1.1 and returns the raw
/// response bytes, head included.
fn snapshot(site: &DemoSite) -> Vec<(String, Vec<u8>)> {
    site.expected()
        .into_iter()
        .map(|e| {
            let target = e.url.strip_prefix(&site.base_url()).unwrap().to_string();
            let request = format!("GET {target} HTTP/1.1\r\nConnection: close\r\n\r\n");
            let bytes = common::raw_exchange(site.addr(), request.as_bytes());
            (target, bytes)
        })
        .collect()
}

#[test]
fn two_starts_serve_identical_bytes() {
    // Absolute links contain the port, so run the second site on the port
    // the first one used.
    let first = DemoSite::start_default().unwrap();
    let port = first.addr().port();
    let before = snapshot(&first);
    first.shutdown();
    let second = DemoSite::start(SiteConfig {
        port,
        ..SiteConfig::default()
    })
    .unwrap();
    let after = snapshot(&second);
    assert_eq!(before.len(), 138);
    for ((path, a), (_, b)) in before.iter().zip(&after) {
        assert!(a == b, "{path} differs between runs");
    }
    assert_eq!(before, after);
}
