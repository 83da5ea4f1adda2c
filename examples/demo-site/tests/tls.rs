//! The TLS mode: the same site over https with a certificate made at start,
//! and plain HTTP on the same port redirected there.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{Client, hrefs};
use demo_site::{DemoSite, SiteConfig};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

const WAIT: Duration = Duration::from_secs(10);

fn tls_site() -> DemoSite {
    DemoSite::start(SiteConfig {
        tls: true,
        ..SiteConfig::default()
    })
    .unwrap()
}

fn pem(site: &DemoSite) -> &str {
    site.cert_pem().expect("a TLS site has a certificate")
}

#[test]
fn only_a_tls_site_has_a_certificate() {
    assert_eq!(DemoSite::start_default().unwrap().cert_pem(), None);
    let site = tls_site();
    let pem = pem(&site);
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----\n"), "{pem}");
    assert_eq!(CertificateDer::pem_slice_iter(pem.as_bytes()).count(), 1);
    // Each start makes a new one.
    assert_ne!(tls_site().cert_pem(), Some(pem));
}

#[test]
fn the_site_is_served_over_https_to_both_of_its_names() {
    let site = tls_site();
    let origin = site.base_url();
    assert_eq!(origin, format!("https://127.0.0.1:{}", site.addr().port()));
    for name in ["127.0.0.1", "localhost"] {
        let mut client = Client::connect_tls(site.addr(), name, pem(&site));
        let index = client.get("/");
        assert_eq!(index.status, 200, "{name}");
        let links = hrefs(&index.body);
        // Absolute links say https, and so does the upper-case spelling.
        assert!(links.contains(&format!("{origin}/")), "{links:?}");
        let upper = format!("HTTPS://127.0.0.1:{}/feed.xml", site.addr().port());
        assert!(links.contains(&upper), "{links:?}");
        // Keep-alive works over TLS too.
        let logo = client.get("/static/logo.png");
        assert_eq!(logo.header("content-type"), Some("image/png"));
        assert_eq!(logo.body.len(), 139);
    }
    assert_eq!(site.counters().connections, 2);
    assert_eq!(site.counters().requests, 4);
}

#[test]
fn plain_http_on_the_tls_port_is_redirected_to_https() {
    let site = tls_site();
    let mut client = Client::connect(site.addr());
    let target = "/pages/a/0.html?from=index&lang=en";
    let moved = client.get(target);
    let https = site.url(target);
    assert_eq!(moved.status, 301);
    assert_eq!(moved.header("location"), Some(https.as_str()));
    assert_eq!(hrefs(&moved.body), [https.as_str()]);
    // Every path, fault paths included: nothing but the redirect is served
    // in the clear. The connection stays open for more.
    assert_eq!(client.get("/fault/hang").status, 301);
    assert_eq!(site.counters().connections, 1);
}

#[test]
fn a_client_that_trusts_another_certificate_is_refused() {
    let site = tls_site();
    let other = tls_site();
    let mut client = Client::connect_tls(site.addr(), "127.0.0.1", pem(&other));
    let err = client.send_fails(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n");
    // Both certificates name the same issuer (CN=demo-site), so the client
    // finds a root for it, whose key did not sign this one.
    assert_eq!(err.to_string(), "invalid peer certificate: BadSignature");
    // The site carries on for everyone else.
    let mut client = Client::connect_tls(site.addr(), "127.0.0.1", pem(&site));
    assert_eq!(client.get("/").status, 200);
}

#[test]
fn the_certificate_names_only_the_loopback_address_and_localhost() {
    let site = tls_site();
    let mut client = Client::connect_tls(site.addr(), "other.test", pem(&site));
    let err = client.send_fails(b"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n");
    assert_eq!(
        err.to_string(),
        "invalid peer certificate: certificate not valid for name \"other.test\"; \
         certificate is only valid for IpAddress(127.0.0.1) or DnsName(\"localhost\")"
    );
}

#[test]
fn fault_paths_end_with_close_notify_over_tls() {
    let site = tls_site();
    for (path, want) in [
        ("/fault/close-mid-body", &b"HTTP/1.1 200 OK\r\n"[..]),
        ("/fault/short-body", b"HTTP/1.1 200 OK\r\n"),
        ("/fault/garbage", b"\xff\xfeTHIS IS NOT HTTP"),
        ("/fault/drop", b""),
    ] {
        let mut client = Client::connect_tls(site.addr(), "localhost", pem(&site));
        client.send(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
        // A clean end of stream: the site said close_notify before closing.
        let (bytes, clean) = client.read_to_close();
        assert!(clean, "{path}");
        assert!(bytes.starts_with(want), "{path}: {bytes:?}");
    }
}

/// Runs `site.shutdown()` on another thread and fails if it takes too long.
fn shutdown_promptly(site: DemoSite) {
    let (done_tx, done_rx) = mpsc::channel();
    thread::spawn(move || {
        site.shutdown();
        let _ = done_tx.send(());
    });
    assert!(
        done_rx.recv_timeout(WAIT).is_ok(),
        "shutdown did not finish within {WAIT:?}"
    );
}

#[test]
fn half_a_handshake_or_a_hanging_request_does_not_block_shutdown() {
    let site = tls_site();
    // The first byte of a TLS record, and then nothing.
    let mut stalled = TcpStream::connect(site.addr()).unwrap();
    stalled.write_all(&[0x16]).unwrap();
    // Silence: the site waits for the first byte.
    let silent = TcpStream::connect(site.addr()).unwrap();
    let mut hanging = Client::connect_tls(site.addr(), "localhost", pem(&site));
    hanging.send(b"GET /fault/hang HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(site.wait_until(WAIT, |c| c.requests == 1 && c.connections == 3));
    shutdown_promptly(site);
    stalled.set_read_timeout(Some(WAIT)).unwrap();
    let mut rest = Vec::new();
    // Closed, not reset, and without a byte from the site.
    assert_eq!(stalled.read_to_end(&mut rest).unwrap(), 0);
    drop(silent);
    let (bytes, _) = hanging.read_to_close();
    assert!(bytes.is_empty());
}

#[test]
fn a_plain_site_answers_a_tls_hello_with_400() {
    // A TLS client that dialled a plain site: the hello is not HTTP.
    let site = DemoSite::start_default().unwrap();
    let mut s = TcpStream::connect(site.addr()).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(b"\x16\x03\x01\x00\x05hello\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let read = s.read_to_end(&mut answer);
    assert!(
        read.is_ok()
            || read
                .as_ref()
                .is_err_and(|e| e.kind() == ErrorKind::ConnectionReset),
        "{read:?}"
    );
    assert!(
        answer.starts_with(b"HTTP/1.1 400 Bad Request\r\n"),
        "{answer:?}"
    );
}
