//! Compressed answers from real servers: decoded to the byte, both sizes
//! reported, and broken or unknown encodings failing with their reason.

mod common;

use std::io::Write;

use common::static_site::{Answer, StaticSite};
use flate2::Compression;
use flate2::write::GzEncoder;

const PAGE: &str =
    "<html><body><a href=/b>b</a> and a long, long, long, long sentence</body></html>";

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn encoded(coding: &str, body: Vec<u8>) -> Answer {
    let mut answer = Answer::links(&[]);
    answer
        .headers
        .push(("Content-Encoding".into(), coding.into()));
    answer.body = body;
    answer
}

#[test]
fn a_gzipped_page_is_decoded_and_its_links_followed() {
    let site = StaticSite::start(vec![
        ("/", encoded("gzip", gzip(PAGE.as_bytes()))),
        ("/b", Answer::links(&[])),
    ]);
    let crawl = common::crawl(&[site.url("/")], common::config());
    let root = crawl.stat(&site.url("/"));
    assert_eq!(root.size, PAGE.len() as u64);
    assert_eq!(root.wire_size, gzip(PAGE.as_bytes()).len() as u64);
    assert_eq!(root.num_urls, 1);
    assert_eq!(crawl.stat(&site.url("/b")).status, Some(200));
}

#[test]
fn broken_and_unknown_encodings_fail_with_their_reason() {
    let mut cut = gzip(PAGE.as_bytes());
    cut.truncate(cut.len() - 8);
    let site = StaticSite::start(vec![
        ("/", Answer::links(&["/corrupt", "/cut", "/zstd"])),
        ("/corrupt", encoded("gzip", b"this is not gzip".to_vec())),
        ("/cut", encoded("gzip", cut)),
        ("/zstd", encoded("zstd", PAGE.as_bytes().to_vec())),
    ]);
    let crawl = common::crawl(&[site.url("/")], common::config());
    for (path, message) in [
        ("/corrupt", "gzip body is corrupt: "),
        ("/cut", "gzip body is corrupt: "),
        ("/zstd", "unsupported Content-Encoding \"zstd\""),
    ] {
        let stat = crawl.stat(&site.url(path));
        let exception = stat.exception.as_ref().expect("a failure");
        assert_eq!(exception.kind, "decode", "{path}");
        assert!(
            exception.message.starts_with(message),
            "{path}: {exception:?}"
        );
        // Not retried: the same bytes would come back.
        assert_eq!(site.requests().iter().filter(|p| *p == path).count(), 1);
    }
}

#[test]
fn the_decoded_size_is_capped_by_max_body() {
    // 4 MiB of zeros in a few kilobytes; --max-body 1 MiB.
    let bomb = gzip(&vec![0; 4 << 20]);
    assert!(bomb.len() < 64 << 10);
    let site = StaticSite::start(vec![("/", encoded("gzip", bomb))]);
    let mut config = common::config();
    config.client.max_body = 1 << 20;
    let crawl = common::crawl(&[site.url("/")], config);
    let stat = crawl.stat(&site.url("/"));
    let exception = stat.exception.as_ref().unwrap();
    assert_eq!(exception.kind, "too_large");
    assert_eq!(
        exception.message,
        "decoded body larger than the 1048576-byte limit (--max-body): a compression bomb?"
    );
    assert_eq!(stat.status, Some(200));
}
