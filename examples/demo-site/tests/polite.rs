//! Polite mode: robots.txt, sitemaps, compressed answers and the bomb. The
//! default site is untouched.

mod common;

use std::io::Read;
use std::time::Duration;

use common::{Client, get};
use demo_site::{DemoSite, SiteConfig};

fn polite(crawl_delay: Option<Duration>) -> DemoSite {
    DemoSite::start(SiteConfig {
        polite: true,
        crawl_delay,
        ..SiteConfig::default()
    })
    .unwrap()
}

/// Sends a GET with `Accept-Encoding: accept` and reads the answer.
fn get_encoded(site: &DemoSite, path: &str, accept: &str) -> common::Response {
    let mut client = Client::connect(site.addr());
    client.send(
        format!("GET {path} HTTP/1.1\r\nHost: test\r\nAccept-Encoding: {accept}\r\n\r\n")
            .as_bytes(),
    );
    client.read_response(false).unwrap()
}

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(body)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn the_default_site_has_no_robots_txt_and_does_not_compress() {
    let site = DemoSite::start_default().unwrap();
    assert_eq!(get(site.addr(), "/robots.txt").status, 404);
    let r = get_encoded(&site, "/", "gzip, br");
    assert_eq!(r.header("content-encoding"), None);
    assert!(site.expected_disallowed().is_empty());
    assert!(site.expected_from_sitemaps().is_empty());
}

#[test]
fn robots_txt_names_a_group_for_the_crawler() {
    let site = polite(Some(Duration::from_millis(250)));
    let r = get(site.addr(), "/robots.txt");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    let text = r.text();
    assert!(text.contains("User-agent: *\nDisallow: /\n"), "{text}");
    assert!(
        text.contains(
            "User-agent: stage3-crawler\nDisallow: /polite/private/\n\
             Allow: /polite/private/open.html\nDisallow: /*.pdf$\n\
             Disallow: /polite/search\nCrawl-delay: 0.25\n"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("Sitemap: {}/sitemap.xml\n", site.base_url())));
}

#[test]
fn each_coding_is_chosen_as_the_client_asks_and_decodes_to_the_page() {
    let site = polite(None);
    let plain = get(site.addr(), "/").body;
    let br = get_encoded(&site, "/", "gzip, deflate, br");
    assert_eq!(br.header("content-encoding"), Some("br"));
    assert_eq!(br.header("vary"), Some("Accept-Encoding"));
    let mut out = Vec::new();
    brotli::Decompressor::new(&br.body[..], 4096)
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(out, plain);
    assert!(br.body.len() < plain.len());

    let gz = get_encoded(&site, "/", "br;q=0, gzip");
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&gz.body), plain);

    let deflate = get_encoded(&site, "/", "deflate");
    assert_eq!(deflate.header("content-encoding"), Some("deflate"));
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(&deflate.body[..])
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(out, plain);

    let identity = get_encoded(&site, "/", "identity");
    assert_eq!(identity.header("content-encoding"), None);
    assert_eq!(identity.body, plain);
    // Images are not compressed.
    let png = get_encoded(&site, "/static/logo.png", "gzip");
    assert_eq!(png.header("content-encoding"), None);
}

#[test]
fn the_sitemap_index_points_at_a_gzipped_sitemap() {
    let site = polite(None);
    let index = get(site.addr(), "/sitemap.xml").text();
    let gz_url = format!("{}/polite/sitemaps/pages.xml.gz", site.base_url());
    assert!(index.contains("<sitemapindex"), "{index}");
    assert!(index.contains(&format!("<loc>{gz_url}</loc>")), "{index}");
    let gz = get(site.addr(), "/polite/sitemaps/pages.xml.gz");
    assert_eq!(gz.header("content-type"), Some("application/gzip"));
    let xml = String::from_utf8(gunzip(&gz.body)).unwrap();
    for url in site.expected_from_sitemaps() {
        assert!(xml.contains(&format!("<loc>{url}</loc>")), "{url} in {xml}");
    }
    assert_eq!(xml.matches("<loc>").count(), 5);
}

#[test]
fn the_bomb_is_small_on_the_wire_and_a_gibibyte_inflated() {
    let site = polite(None);
    let r = get_encoded(&site, "/polite/bomb.html", "gzip");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert!(r.body.len() < 2 << 20, "{}", r.body.len());
    let mut decoder = flate2::read::MultiGzDecoder::new(&r.body[..]);
    let inflated = std::io::copy(&mut decoder, &mut std::io::sink()).unwrap();
    assert_eq!(inflated, 1 << 30);
    // Asked for without gzip, it is a small page.
    let r = get_encoded(&site, "/polite/bomb.html", "br");
    assert_ne!(r.header("content-encoding"), Some("gzip"));
}

#[test]
fn the_answer_key_obeys_robots_txt() {
    let site = polite(None);
    let base = site.base_url();
    let found: Vec<String> = site.expected().into_iter().map(|e| e.url).collect();
    for path in [
        "/polite/",
        "/polite/private/open.html",
        "/polite/files/report.pdf?download=1",
        "/polite/bomb.html",
        "/polite/calendar?month=2026-11",
        "/polite/deep/a/",
    ] {
        assert!(found.contains(&format!("{base}{path}")), "{path}");
    }
    assert_eq!(
        found.len(),
        DemoSite::start_default().unwrap().expected().len() + 6
    );
    assert_eq!(
        site.expected_disallowed(),
        [
            format!("{base}/polite/files/report.pdf"),
            format!("{base}/polite/private/secret.html"),
            format!("{base}/polite/search?q=crawler"),
        ]
    );
}

#[test]
fn the_calendar_links_its_neighbours_forever() {
    let site = polite(None);
    let page = get(site.addr(), "/polite/calendar?month=2026-12").text();
    assert!(page.contains("calendar?month=2026-11"), "{page}");
    assert!(page.contains("calendar?month=2027-01"), "{page}");
}

#[test]
fn the_request_log_is_in_order_of_arrival() {
    let site = polite(None);
    get(site.addr(), "/robots.txt");
    get(site.addr(), "/polite/");
    let log = site.counters().request_log;
    let paths: Vec<&str> = log.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(paths, ["/robots.txt", "/polite/"]);
    assert!(log[0].0 <= log[1].0);
}
