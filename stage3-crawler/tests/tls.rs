//! https: the demo site over TLS, certificates that do not verify, and
//! servers that break the handshake or the records after it. Every failure
//! ends as a statistic with a clear exception; nothing hangs.

mod common;

use std::collections::BTreeSet;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use common::{config, crawl, leaf_config, media_type};
use demo_site::{DemoSite, ExpectedUrl, SiteConfig};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use stage3_crawler::http::{Client, ClientConfig};
use stage3_crawler::logging::Level;
use stage3_crawler::{Config, Exception, FetchStatistic};
use url::Url;

fn tls_site() -> DemoSite {
    DemoSite::start(SiteConfig {
        tls: true,
        ..SiteConfig::default()
    })
    .unwrap()
}

/// The site's certificate, as `--ca-file` would read it.
fn site_roots(site: &DemoSite) -> Vec<CertificateDer<'static>> {
    let pem = site.cert_pem().expect("a TLS site");
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap()
}

/// `config` trusting the site's certificate.
fn trusting(site: &DemoSite, mut config: Config) -> Config {
    config.client.ca_certs = site_roots(site);
    config
}

fn failure(url: &str, kind: &'static str, message: &str) -> FetchStatistic {
    FetchStatistic::failure(
        url.to_string(),
        Exception {
            kind,
            message: message.into(),
        },
    )
}

fn sorted(mut stats: Vec<FetchStatistic>) -> Vec<FetchStatistic> {
    stats.sort_by(|a, b| a.url.cmp(&b.url));
    stats
}

/// Checks a crawl's statistics against the site's answer key, URL by URL.
fn assert_matches(stats: &[FetchStatistic], expected: &[ExpectedUrl]) {
    let found: BTreeSet<&str> = stats.iter().map(|s| s.url.as_str()).collect();
    let want: BTreeSet<&str> = expected.iter().map(|e| e.url.as_str()).collect();
    assert_eq!(found, want);
    assert_eq!(stats.len(), expected.len(), "a URL was recorded twice");
    for e in expected {
        let stat = stats.iter().find(|s| s.url == e.url).unwrap();
        assert_eq!(stat.exception, None, "{}", e.url);
        assert_eq!(stat.status, Some(e.status), "{}", e.url);
        assert_eq!(stat.next_url, e.location, "{}", e.url);
        assert_eq!(
            stat.content_type,
            e.content_type.as_deref().map(media_type),
            "{}",
            e.url
        );
    }
}

// ---------------------------------------------------------------------------
// The demo site over TLS.

#[test]
fn a_full_crawl_over_tls_finds_exactly_the_expected_urls() {
    let site = tls_site();
    let c = crawl(&[site.url("/")], trusting(&site, config()));
    let expected = site.expected();
    assert_matches(&c.stats, &expected);
    // One request per URL: "/" twice, once per scheme.
    let counters = site.counters();
    assert_eq!(counters.requests, expected.len() as u64);
    assert_eq!(counters.per_path["/"], 2);
    assert!(
        counters
            .per_path
            .iter()
            .all(|(path, &n)| n == 1 || path == "/"),
        "{:?}",
        counters.per_path
    );
    // Keep-alive over TLS: at most one https connection per worker, and
    // one plain one for the http URL.
    assert_eq!(c.connections, counters.connections);
    assert!(
        (2..=11).contains(&counters.connections),
        "{} connections",
        counters.connections
    );
    // The index links to the site over plain http once; that URL answers
    // 301 to the https index, which was fetched already. (`size` asks the
    // site in plain HTTP/1.0 on the same port: the same redirect.)
    let door = format!("http://127.0.0.1:{}/", site.addr().port());
    assert_eq!(
        *c.stat(&door),
        FetchStatistic {
            url: door.clone(),
            next_url: Some(site.url("/")),
            status: Some(301),
            exception: None,
            size: common::size(&site, "/"),
            content_type: Some("text/html".into()),
            encoding: None,
            num_urls: 0,
            num_new_urls: 0,
            wire_size: common::size(&site, "/"),
            protocol: Some("http/1.1"),
            recrawl: None,
        }
    );
}

#[test]
fn a_redirect_from_http_to_https_is_followed() {
    let site = tls_site();
    let http_root = format!("http://127.0.0.1:{}/", site.addr().port());
    let c = crawl(std::slice::from_ref(&http_root), trusting(&site, config()));
    // The plain-http root is the one URL of the answer key served in the
    // clear, so this crawl finds the same set.
    assert_matches(&c.stats, &site.expected());
    assert_eq!(
        c.log
            .iter()
            .find(|l| l.level == Level::Info)
            .map(|l| l.message.as_str()),
        Some(format!("redirect to {} from {http_root}", site.url("/")).as_str())
    );
    assert!(c.any_root_fetched);
}

#[test]
fn fault_paths_over_tls_end_as_the_same_stats() {
    let site = tls_site();
    let timeouts = Config {
        max_tries: 1,
        client: ClientConfig {
            read_timeout: Duration::from_millis(300),
            ..config().client
        },
        ..leaf_config()
    };
    let paths = [
        "/fault/close-mid-body",
        "/fault/garbage",
        "/fault/hang",
        "/fault/short-body",
    ];
    let c = crawl(&paths.map(|p| site.url(p)), trusting(&site, timeouts));
    assert_eq!(
        sorted(c.stats.clone()),
        [
            failure(
                &site.url(paths[0]),
                "truncated",
                "connection closed in the middle of a chunked body"
            ),
            failure(
                &site.url(paths[1]),
                "malformed",
                "malformed response head: invalid HTTP version"
            ),
            failure(&site.url(paths[2]), "timeout", "read timed out after 300ms"),
            failure(
                &site.url(paths[3]),
                "truncated",
                "connection closed after 100 of 500 body bytes"
            ),
        ]
    );
}

#[test]
fn the_pool_keys_connections_by_scheme_host_and_port() {
    let site = tls_site();
    let client = Client::new(ClientConfig {
        ca_certs: site_roots(&site),
        ..config().client
    });
    let https = Url::parse(&site.url("/static/style.css")).unwrap();
    let mut http = https.clone();
    http.set_scheme("http").unwrap();
    let statuses = runtime::run_until_complete(async {
        let mut statuses = Vec::new();
        for url in [&https, &http, &https, &http] {
            statuses.push(client.get(url).await.unwrap().status);
        }
        statuses
    })
    .unwrap();
    assert_eq!(statuses, [200, 301, 200, 301]);
    // Same host and port, two schemes: two connections, each reused once.
    assert_eq!(client.connections_opened(), 2);
    assert_eq!(site.counters().connections, 2);
    assert_eq!(client.idle_connections(), 2);
}

// ---------------------------------------------------------------------------
// Certificates.

#[test]
fn an_untrusted_certificate_is_a_stat_and_the_crawl_goes_on() {
    let untrusted = tls_site();
    let plain = DemoSite::start_default().unwrap();
    let root = untrusted.url("/");
    // The bundled roots only: the site's self-signed certificate is not
    // among them.
    let c = crawl(&[root.clone(), plain.url("/")], config());
    let message = "certificate verify failed for 127.0.0.1: unknown issuer \
                   (no trusted root signed it; see --ca-file)";
    assert_eq!(*c.stat(&root), failure(&root, "certificate", message));
    // The rest of the crawl is untouched.
    let others: Vec<FetchStatistic> = c.stats.iter().filter(|s| s.url != root).cloned().collect();
    assert_matches(&others, &plain.expected());
    // Not retried: a certificate does not get better by asking again.
    assert_eq!(untrusted.counters().connections, 1);
    assert_eq!(untrusted.counters().requests, 0);
    assert_eq!(c.logged(Level::Warn), [format!("{root} failed: {message}")]);
}

#[test]
fn a_name_the_certificate_does_not_carry_is_a_stat() {
    let site = tls_site();
    let port = site.addr().port();
    let mut config = trusting(&site, leaf_config());
    config.client.resolve = [
        (("other.test".to_string(), port), site.addr().ip()),
        (("localhost".to_string(), port), site.addr().ip()),
    ]
    .into();
    let wrong = format!("https://other.test:{port}/redirect/target.html");
    let right = format!("https://localhost:{port}/redirect/target.html");
    let c = crawl(&[wrong.clone(), right.clone()], config);
    assert_eq!(
        *c.stat(&wrong),
        failure(
            &wrong,
            "certificate",
            "certificate verify failed for other.test: certificate not valid for name \
             \"other.test\"; certificate is only valid for IpAddress(127.0.0.1) or \
             DnsName(\"localhost\")"
        )
    );
    // The same server under a name the certificate carries (SNI and the
    // check both use the URL's host).
    assert_eq!(c.stat(&right).status, Some(200));
    assert_eq!(c.stats.len(), 2);
}

#[test]
fn a_ca_certificate_used_as_the_leaf_is_explained() {
    // What `openssl req -x509` makes by default: a self-signed certificate
    // that says it is a CA. Trusted (it is its own root), it is still
    // refused as the server's own certificate.
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server_config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    let server_config = Arc::new(server_config);
    let (addr, server) = serve_tls(server_config);
    let mut config = config();
    config.max_tries = 1;
    config.client.ca_certs = vec![cert.der().clone()];
    let (url, c) = crawl_one(addr, config);
    server.join().unwrap();
    assert_eq!(
        c.stats,
        [failure(
            &url,
            "certificate",
            "certificate verify failed for 127.0.0.1: the server presents a CA certificate \
             as its own. rustls refuses a CA certificate as the server's (leaf) certificate, \
             which curl and OpenSSL accept; the server needs a leaf certificate (CA:FALSE) \
             signed by that CA"
        )]
    );
}

/// A TLS server for one connection, with `config`: it runs the handshake
/// as far as the client lets it.
fn serve_tls(config: Arc<rustls::ServerConfig>) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let thread = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut conn = rustls::ServerConnection::new(config).unwrap();
        while conn.is_handshaking() {
            if conn.complete_io(&mut s).is_err() {
                break;
            }
        }
    });
    (addr, thread)
}

// ---------------------------------------------------------------------------
// Servers that break TLS. Each serves `tries` connections, one after the
// other, reading the client's first record before misbehaving.

fn serve(
    tries: usize,
    misbehave: impl Fn(&mut TcpStream) + Send + 'static,
) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let thread = thread::spawn(move || {
        for _ in 0..tries {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            read_record(&mut s).unwrap();
            misbehave(&mut s);
        }
    });
    (addr, thread)
}

/// Reads one TLS record (the ClientHello): a 5-byte header whose last two
/// bytes are the length, then that many bytes.
fn read_record(s: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut header = [0u8; 5];
    s.read_exact(&mut header)?;
    let mut body = vec![0; usize::from(u16::from_be_bytes([header[3], header[4]]))];
    s.read_exact(&mut body)?;
    Ok(body)
}

/// Closes our side, then waits for the client to close its side, so that
/// the client sees our bytes and a clean end, not a reset.
fn close_gracefully(s: &mut TcpStream) {
    let _ = s.shutdown(Shutdown::Write);
    let _ = io::copy(s, &mut io::sink());
}

fn crawl_one(addr: SocketAddr, config: Config) -> (String, common::Crawl) {
    let url = format!("https://{addr}/");
    let c = crawl(std::slice::from_ref(&url), config);
    (url, c)
}

#[test]
fn a_handshake_that_hangs_ends_at_the_connect_timeout() {
    // Reads the ClientHello, then says nothing until the client gives up.
    let (addr, server) = serve(1, |s| {
        let _ = io::copy(s, &mut io::sink());
    });
    let (url, c) = crawl_one(
        addr,
        Config {
            max_tries: 1,
            client: ClientConfig {
                connect_timeout: Duration::from_millis(300),
                ..config().client
            },
            ..config()
        },
    );
    server.join().unwrap();
    assert_eq!(
        c.stats,
        [failure(
            &url,
            "timeout",
            "TLS handshake timed out after 300ms"
        )]
    );
    assert_eq!(
        c.logged(Level::Error),
        [format!("{url} failed after 1 tries")]
    );
}

#[test]
fn a_connection_closed_during_the_handshake_is_retried_then_fails() {
    // Closes the connection right after the ClientHello.
    let (addr, server) = serve(2, |_| {});
    let (url, c) = crawl_one(
        addr,
        Config {
            max_tries: 2,
            ..config()
        },
    );
    server.join().unwrap();
    let message = "connection closed during the TLS handshake";
    assert_eq!(c.stats, [failure(&url, "tls", message)]);
    assert_eq!(
        c.logged(Level::Info),
        [1, 2].map(|n| format!("try {n} for {url} raised {message}"))
    );
    assert_eq!(c.connections, 2);
}

#[test]
fn a_malformed_record_during_the_handshake_is_a_stat() {
    let (addr, server) = serve(1, |s| {
        let _ = s.write_all(b"\xff\xfeTHIS IS NOT TLS\r\n");
        close_gracefully(s);
    });
    let (url, c) = crawl_one(
        addr,
        Config {
            max_tries: 1,
            ..config()
        },
    );
    server.join().unwrap();
    assert_eq!(
        c.stats,
        [failure(
            &url,
            "tls",
            "TLS handshake failed: received corrupt message of type InvalidContentType"
        )]
    );
}

#[test]
fn https_to_a_plain_http_server_says_so() {
    let site = DemoSite::start_default().unwrap();
    let url = site.url("/").replace("http://", "https://");
    let c = crawl(
        std::slice::from_ref(&url),
        Config {
            max_tries: 1,
            ..config()
        },
    );
    assert_eq!(
        c.stats,
        [failure(
            &url,
            "tls",
            "TLS handshake failed: the server answered in plain HTTP"
        )]
    );
    assert!(!c.any_root_fetched);
}

/// A key and a certificate for `127.0.0.1`, for a TLS server of our own.
fn identity() -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (cert.der().clone(), key)
}

#[test]
fn a_malformed_record_after_the_handshake_is_a_stat() {
    // A real TLS server that completes the handshake, reads the request,
    // then writes bytes that are no TLS record at all.
    let (cert, key) = identity();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server_config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.clone()], key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let conn = rustls::ServerConnection::new(server_config).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tls.read(&mut buf).unwrap();
            assert!(n > 0, "closed before the request");
            request.extend_from_slice(&buf[..n]);
        }
        tls.sock
            .write_all(b"\xff\xfeTHIS IS NOT A TLS RECORD")
            .unwrap();
        close_gracefully(&mut tls.sock);
    });
    let mut config = Config {
        max_tries: 1,
        ..config()
    };
    config.client.ca_certs = vec![cert];
    let (url, c) = crawl_one(addr, config);
    server.join().unwrap();
    assert_eq!(
        c.stats,
        [failure(
            &url,
            "tls",
            "TLS error while reading: received corrupt message of type InvalidContentType"
        )]
    );
}
