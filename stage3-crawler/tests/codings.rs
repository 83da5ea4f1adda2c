//! Transfer and content codings as hostile servers send them (issue 33):
//! a transfer coding stacked under `chunked`, one the client does not
//! speak, and a list-valued header split over several field lines. A body
//! is never parsed with a coding still on it: every coding is undone, or
//! the URL fails and says which coding.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;

use common::static_site::{Answer, StaticSite};
use common::{config, crawl};
use flate2::Compression;
use flate2::write::GzEncoder;
use stage3_crawler::Config;
use stage3_crawler::politeness::PoliteConfig;

/// The page every case serves at `/`: two links, each to a page the server
/// also serves, so a crawl that decoded the page fetches exactly three URLs.
const PAGE: &str = "<!doctype html><title>t</title><a href=\"/a\">a</a> <a href=\"/b\">b</a>";

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `bytes` as one chunk, then the last chunk.
fn chunked(bytes: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n0\r\n\r\n");
    out
}

/// A site that answers `/` with `root` (a whole response, head and body)
/// and `/a` and `/b` with a small page, and counts the requests for each
/// path.
fn server(root: Vec<u8>) -> (SocketAddr, StaticSite) {
    let site = StaticSite::start(vec![
        ("/", Answer::raw(root)),
        ("/a", Answer::text(200, "ok")),
        ("/b", Answer::text(200, "ok")),
    ]);
    (site.addr, site)
}

fn quiet() -> Config {
    Config {
        polite: PoliteConfig {
            robots: false,
            ..PoliteConfig::default()
        },
        ..config()
    }
}

fn head(fields: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{fields}Connection: close\r\n\r\n"
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn requests(site: &StaticSite) -> BTreeMap<String, usize> {
    site.counts()
}

fn counts(paths: &[&str]) -> BTreeMap<String, usize> {
    paths.iter().map(|p| (p.to_string(), 1)).collect()
}

#[test]
fn gzip_under_chunked_is_undone_and_the_links_are_found() {
    let body = chunked(&gzip(PAGE.as_bytes()));
    let (addr, seen) = server(head("Transfer-Encoding: gzip, chunked\r\n", &body));
    let root = format!("http://{addr}/");
    let c = crawl(std::slice::from_ref(&root), quiet());
    let stat = c.stat(&root);
    assert_eq!(
        (stat.status, stat.size, stat.num_urls, &stat.exception),
        (Some(200), PAGE.len() as u64, 2, &None)
    );
    assert_eq!(requests(&seen), counts(&["/", "/a", "/b"]));
}

#[test]
fn transfer_codings_on_two_lines_are_one_list() {
    // `Transfer-Encoding: gzip` then `Transfer-Encoding: chunked`: the
    // list is "gzip, chunked", the body chunked and gzipped.
    let body = chunked(&gzip(PAGE.as_bytes()));
    let fields = "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n";
    let (addr, seen) = server(head(fields, &body));
    let root = format!("http://{addr}/");
    let c = crawl(std::slice::from_ref(&root), quiet());
    assert_eq!(c.stat(&root).num_urls, 2);
    assert_eq!(requests(&seen), counts(&["/", "/a", "/b"]));
}

#[test]
fn an_unsupported_transfer_coding_fails_the_url_and_names_it() {
    let body = chunked(PAGE.as_bytes());
    let (addr, seen) = server(head("Transfer-Encoding: x-custom, chunked\r\n", &body));
    let root = format!("http://{addr}/");
    let c = crawl(std::slice::from_ref(&root), quiet());
    let exception = c.stat(&root).exception.as_ref().expect("a failure");
    assert_eq!(
        exception.message,
        "unsupported transfer coding \"x-custom\""
    );
    assert_eq!(requests(&seen), counts(&["/"]));
}

#[test]
fn content_encoding_on_two_lines_is_one_list() {
    // `identity` on the first line, `gzip` on the second: the page is
    // gzipped, and reading only the first line would parse it compressed.
    let fields = format!(
        "Content-Encoding: identity\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n",
        gzip(PAGE.as_bytes()).len()
    );
    let (addr, seen) = server(head(&fields, &gzip(PAGE.as_bytes())));
    let root = format!("http://{addr}/");
    let c = crawl(std::slice::from_ref(&root), quiet());
    let stat = c.stat(&root);
    assert_eq!((stat.size, stat.num_urls), (PAGE.len() as u64, 2));
    assert_eq!(requests(&seen), counts(&["/", "/a", "/b"]));
}

#[test]
fn a_transfer_coding_stacked_on_a_content_coding_is_capped_like_one() {
    // gzip inside gzip: each step may reach --max-body, never more, so
    // stacking builds no bigger bomb than one coding would.
    let big = vec![b'a'; 200_000];
    let body = chunked(&gzip(&gzip(&big)));
    let fields = "Content-Encoding: gzip\r\nTransfer-Encoding: gzip, chunked\r\n";
    let (addr, _) = server(head(fields, &body));
    let root = format!("http://{addr}/");
    let mut capped = quiet();
    capped.client.max_body = 100_000;
    let c = crawl(std::slice::from_ref(&root), capped.clone());
    let exception = c.stat(&root).exception.as_ref().expect("a failure");
    assert_eq!(
        (exception.kind, exception.message.as_str()),
        (
            "too_large",
            "decoded body larger than the 100000-byte limit (--max-body): a compression bomb?"
        )
    );
    // Under the cap, both codings are undone: the page is the 200,000 a's.
    let (addr, _) = server(head(fields, &body));
    let root = format!("http://{addr}/");
    capped.client.max_body = 200_000;
    let c = crawl(std::slice::from_ref(&root), capped);
    let stat = c.stat(&root);
    assert_eq!((stat.size, &stat.exception), (200_000, &None));
}

#[test]
fn a_page_with_two_hundred_headers_is_a_page() {
    let fields: String = (0..200).map(|n| format!("X-Header-{n}: {n}\r\n")).collect();
    let fields = format!("{fields}Content-Length: {}\r\n", PAGE.len());
    let (addr, seen) = server(head(&fields, PAGE.as_bytes()));
    let root = format!("http://{addr}/");
    let c = crawl(std::slice::from_ref(&root), quiet());
    let stat = c.stat(&root);
    assert_eq!(
        (stat.status, stat.num_urls, &stat.exception),
        (Some(200), 2, &None)
    );
    assert_eq!(requests(&seen), counts(&["/", "/a", "/b"]));
}
