//! A robots.txt over the size cap (issue 33): RFC 9309 section 2.5 asks a
//! crawler to parse at least the first 500 KiB and obey those rules. A
//! bigger file must never mean fewer rules, however it comes: plain, in one
//! huge chunk, or gzipped until it inflates past `--max-body`.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;

use common::crawl;
use common::static_site::{Answer, StaticSite};
use flate2::Compression;
use flate2::write::GzEncoder;
use stage3_crawler::Config;
use stage3_crawler::skipped::SkipReason;

/// The tests' config, obeying robots.txt.
fn config() -> Config {
    let mut config = common::config();
    config.polite.robots = true;
    config
}

/// The rules, then comment lines to make the file `size` bytes long.
fn robots_txt(size: usize) -> Vec<u8> {
    let mut text = b"User-agent: *\nDisallow: /secret\n".to_vec();
    let filler = b"# a robots.txt that goes on and on, as some do\n";
    while text.len() < size {
        text.extend_from_slice(filler);
    }
    text
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn response(fields: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 200 OK\r\n{fields}Connection: close\r\n\r\n").into_bytes();
    out.extend_from_slice(body);
    out
}

/// A site whose robots.txt is `robots` (a whole response), whose `/` links
/// to `/secret/a` and `/open`, and which counts the requests per path.
fn site(robots: Vec<u8>) -> (SocketAddr, StaticSite) {
    let site = StaticSite::start(vec![
        ("/robots.txt", Answer::raw(robots)),
        ("/", Answer::links(&["/secret/a", "/open"])),
        ("/open", Answer::text(200, "ok")),
        ("/secret/a", Answer::text(200, "ok")),
    ]);
    (site.addr, site)
}

/// Crawls the site and checks that `/secret/a` was obeyed away, from the
/// first 500 KiB of the file.
fn obeyed(robots: Vec<u8>) {
    obeyed_under(robots, 10 * 1024 * 1024);
}

/// [`obeyed`], with `--max-body` at `max_body`.
fn obeyed_under(robots: Vec<u8>, max_body: u64) {
    let (addr, seen) = site(robots);
    let root = format!("http://{addr}/");
    let mut capped = config();
    capped.client.max_body = max_body;
    let c = crawl(std::slice::from_ref(&root), capped);
    let skipped: Vec<(&str, SkipReason)> = c.skipped.iter().map(|s| (&*s.url, s.reason)).collect();
    let secret = format!("http://{addr}/secret/a");
    assert_eq!(skipped, [(secret.as_str(), SkipReason::Robots)]);
    assert_eq!(
        c.urls(),
        [root.clone(), format!("http://{addr}/open")]
            .into_iter()
            .collect()
    );
    let want: BTreeMap<String, usize> = [("/robots.txt", 1), ("/", 1), ("/open", 1)]
        .into_iter()
        .map(|(p, n)| (p.to_string(), n))
        .collect();
    assert_eq!(seen.counts(), want);
    assert_eq!(c.robots.len(), 1);
    assert_eq!(
        (
            c.robots[0].status,
            c.robots[0].verdict.as_str(),
            c.robots[0].rules
        ),
        (
            Some(200),
            "1 rule, from the first 500 KiB of a longer file",
            1
        )
    );
}

#[test]
fn a_12_mb_robots_txt_is_obeyed_from_its_first_500_kib() {
    let body = robots_txt(12 * 1024 * 1024);
    obeyed(response(
        &format!(
            "Content-Type: text/plain\r\nContent-Length: {}\r\n",
            body.len()
        ),
        &body,
    ));
}

#[test]
fn a_max_body_below_500_kib_still_reads_the_first_500_kib() {
    // --max-body fails a page past it; a robots.txt is cut there, but
    // never before the 500 KiB RFC 9309 asks a crawler to obey: the one
    // rule here comes after 200 KiB of comments.
    let filler = robots_txt(12 * 1024 * 1024);
    let mut body = b"# comments first\n".repeat(200 * 1024 / 17);
    body.extend_from_slice(&filler);
    obeyed_under(
        response(
            &format!(
                "Content-Type: text/plain\r\nContent-Length: {}\r\n",
                body.len()
            ),
            &body,
        ),
        100 * 1024,
    );
}

#[test]
fn one_12_mb_chunk_is_cut_inside_the_chunk() {
    let body = robots_txt(12 * 1024 * 1024);
    let mut chunked = format!("{:x}\r\n", body.len()).into_bytes();
    chunked.extend_from_slice(&body);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    obeyed(response(
        "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n",
        &chunked,
    ));
}

#[test]
fn a_robots_txt_that_inflates_to_20_mb_is_obeyed_too() {
    let body = gzip(&robots_txt(20 * 1024 * 1024));
    obeyed(response(
        &format!(
            "Content-Type: text/plain\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n",
            body.len()
        ),
        &body,
    ));
}

#[test]
fn a_small_robots_txt_says_nothing_of_a_cut() {
    let (addr, _) = site(response(
        "Content-Type: text/plain\r\nContent-Length: 32\r\n",
        b"User-agent: *\nDisallow: /secret\n",
    ));
    let root = format!("http://{addr}/");
    let c = crawl(std::slice::from_ref(&root), config());
    assert_eq!(c.robots[0].verdict, "1 rule");
}
