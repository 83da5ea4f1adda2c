//! Proxies: crawls through a real tinyproxy give the report a direct crawl
//! gives, and tinyproxy's own log shows every request went through it
//! (robots.txt too); http as requests in absolute form, https through
//! CONNECT tunnels. A proxy that wants credentials, refuses a tunnel or
//! drops it is a clear error. The command line reads the environment as
//! curl does, and `no_proxy` and `--no-proxy` keep requests direct.

mod common;

use std::io::{Read, Write};

use common::tinyproxy::Tinyproxy;
use common::{Crawl, config, crawl};
use demo_site::{DemoSite, SiteConfig};
use regex::Regex;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use stage3_crawler::http::{Client, ClientConfig, NoProxy, Proxies, Proxy};
use stage3_crawler::{Config, FetchStatistic};
use url::Url;

/// Every URL through `proxy`.
fn via(proxy: &Tinyproxy) -> Proxies {
    Proxies::all(Proxy::parse(&proxy.url()).unwrap(), NoProxy::default())
}

/// A polite crawl (robots.txt too) of the site without its faults, whose
/// answers a proxy rewrites (a dropped connection becomes the proxy's own
/// error page).
fn polite() -> Config {
    let mut c = config();
    c.polite.robots = true;
    c.polite.per_host = 4;
    c.exclude = Some(Regex::new("/fault/").unwrap());
    c
}

/// The statistics by URL, without `num_new_urls`, which says which page
/// found a link first: the order of a crawl with several requests at once.
fn sorted(c: &Crawl) -> Vec<FetchStatistic> {
    let mut stats: Vec<FetchStatistic> = c
        .stats
        .iter()
        .map(|s| FetchStatistic {
            num_new_urls: 0,
            ..s.clone()
        })
        .collect();
    stats.sort_by(|a, b| a.url.cmp(&b.url));
    stats
}

/// Fails with the statistics that differ, not all of them.
fn assert_same(proxied: &Crawl, direct: &Crawl) {
    let (a, b) = (sorted(proxied), sorted(direct));
    let only = |x: &[FetchStatistic], y: &[FetchStatistic]| -> Vec<FetchStatistic> {
        x.iter().filter(|s| !y.contains(s)).cloned().collect()
    };
    assert_eq!(
        (only(&a, &b), only(&b, &a)),
        (Vec::new(), Vec::new()),
        "(proxied only, direct only)"
    );
}

#[test]
fn an_http_crawl_through_tinyproxy_sends_every_request_through_it() {
    let site = DemoSite::start(SiteConfig::default()).unwrap();
    let direct = crawl(&[site.url("/")], polite());
    site.reset_counters();
    let proxy = Tinyproxy::start("http", "");
    let mut c = polite();
    c.client.proxies = via(&proxy);
    let proxied = crawl(&[site.url("/")], c);
    let requests = site.counters().requests;
    let log = proxy.stop();

    assert_same(&proxied, &direct);
    // Every request the site saw was one the proxy took, and the proxy
    // took nothing else.
    assert_eq!(log.len() as u64, requests, "{log:#?}");
    assert!(log.iter().all(|l| l.starts_with("GET http://127.0.0.1:")));
    let robots = format!("GET {} HTTP/1.1", site.url("/robots.txt"));
    assert!(log.contains(&robots), "{log:#?}");
    for stat in &proxied.stats {
        let line = format!("GET {} HTTP/1.1", stat.url);
        assert!(log.contains(&line), "{line} not in {log:#?}");
    }
}

#[test]
fn an_https_crawl_goes_through_connect_tunnels() {
    let site = DemoSite::start(SiteConfig {
        tls: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let mut c = polite();
    // The site links to itself once over plain http; that one would go
    // to the proxy as a GET. Here, only tunnels.
    c.exclude = Some(Regex::new("/fault/|^http://").unwrap());
    c.client.ca_certs = CertificateDer::pem_slice_iter(site.cert_pem().unwrap().as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    let direct = crawl(&[site.url("/")], c.clone());
    let proxy = Tinyproxy::start("https", "");
    c.client.proxies = via(&proxy);
    let proxied = crawl(&[site.url("/")], c);
    let log = proxy.stop();

    assert_same(&proxied, &direct);
    // The proxy saw tunnels only, one per connection the crawler opened:
    // what went through them, it could not read.
    let tunnel = format!("CONNECT 127.0.0.1:{} HTTP/1.1", site.addr().port());
    assert!(log.iter().all(|l| *l == tunnel), "{log:#?}");
    assert_eq!(log.len() as u64, proxied.connections);
}

/// Gets `url` once through `proxies`.
fn get_through(proxies: Proxies, url: &str) -> Result<u16, String> {
    let client = Client::new(ClientConfig {
        proxies,
        ..ClientConfig::default()
    });
    let url = Url::parse(url).unwrap();
    runtime::run_until_complete(client.get(&url))
        .unwrap()
        .map(|r| r.status)
        .map_err(|e| format!("{}: {e}", e.kind()))
}

#[test]
fn a_proxy_that_wants_credentials_gets_them_from_the_url() {
    let site = DemoSite::start(SiteConfig::default()).unwrap();
    let proxy = Tinyproxy::start("auth", "BasicAuth crawler s3cret");
    let (port, page) = (proxy.port, site.url("/"));
    let with = |url: &str| Proxies::all(Proxy::parse(url).unwrap(), NoProxy::default());
    assert_eq!(
        get_through(with(&format!("http://127.0.0.1:{port}")), &page),
        Err(format!(
            "proxy: the proxy 127.0.0.1:{port} refused GET {page}: 407: it wants credentials \
             (user:password@ in the proxy URL)"
        ))
    );
    // Wrong ones: tinyproxy answers 401, as a site would (RFC 9110 says
    // 407), so this one is the page's status as far as anyone can tell.
    assert_eq!(
        get_through(
            with(&format!("http://crawler:wrong@127.0.0.1:{port}")),
            &page
        ),
        Ok(401)
    );
    assert_eq!(
        get_through(
            with(&format!("http://crawler:s3cret@127.0.0.1:{port}")),
            &page
        ),
        Ok(200)
    );
    // A tunnel needs them too.
    let https = format!("https://127.0.0.1:{}/", site.addr().port());
    assert_eq!(
        get_through(with(&format!("http://127.0.0.1:{port}")), &https),
        Err(format!(
            "proxy: the proxy 127.0.0.1:{port} refused CONNECT to 127.0.0.1:{}: 407: it wants \
             credentials (user:password@ in the proxy URL)",
            site.addr().port()
        ))
    );
    proxy.stop();
}

#[test]
fn a_proxy_that_refuses_a_tunnel_or_drops_it_is_a_clear_error() {
    // tinyproxy opens tunnels to port 443 only, here.
    let proxy = Tinyproxy::start("ports", "ConnectPort 443");
    let port = proxy.port;
    assert_eq!(
        get_through(via(&proxy), "https://127.0.0.1:8443/"),
        Err(format!(
            "proxy: the proxy 127.0.0.1:{port} refused CONNECT to 127.0.0.1:8443: 403: it does \
             not allow it"
        ))
    );
    proxy.stop();

    // A proxy that reads CONNECT and hangs up.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        while !got.ends_with(b"\r\n\r\n") {
            match s.read(&mut buf).unwrap() {
                0 => break,
                n => got.extend_from_slice(&buf[..n]),
            }
        }
        s.flush().unwrap();
        String::from_utf8(got).unwrap()
    });
    let hangs_up = Proxies::all(
        Proxy::parse(&format!("http://{addr}")).unwrap(),
        NoProxy::default(),
    );
    assert_eq!(
        get_through(hangs_up, "https://site.test/"),
        Err(format!(
            "io: the proxy 127.0.0.1:{} closed the connection instead of answering CONNECT",
            addr.port()
        ))
    );
    assert_eq!(
        server.join().unwrap(),
        "CONNECT site.test:443 HTTP/1.1\r\nHost: site.test:443\r\n\r\n"
    );
}

#[test]
fn the_command_line_reads_the_environment_as_curl_does() {
    let site = DemoSite::start(SiteConfig::default()).unwrap();
    let root = site.url("/redirect/target.html");
    // Runs the crawler with `env`, and says how many requests `proxy`
    // took.
    let run = |env: &[(&str, String)], args: &[&str]| {
        let proxy = Tinyproxy::start("cli", "");
        let mut command = common::stage3();
        command
            .arg(&root)
            .args(["--exclude", "/$|/static/", "-q", "--progress", "never"])
            .args(args);
        for (name, value) in env {
            command.env(name, value.replace("PROXY", &proxy.url()));
        }
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        proxy.stop().len()
    };
    let http_proxy = ("http_proxy", "PROXY".to_string());
    // robots.txt, then the page.
    assert_eq!(run(std::slice::from_ref(&http_proxy), &[]), 2);
    assert_eq!(run(&[("HTTP_PROXY", "PROXY".into())], &[]), 2);
    assert_eq!(run(&[("ALL_PROXY", "PROXY".into())], &[]), 2);
    // https_proxy is for https URLs only.
    assert_eq!(run(&[("https_proxy", "PROXY".into())], &[]), 0);
    assert_eq!(
        run(&[http_proxy.clone(), ("no_proxy", "127.0.0.1".into())], &[]),
        0
    );
    assert_eq!(
        run(
            &[http_proxy.clone(), ("NO_PROXY", "127.0.0.0/8".into())],
            &[]
        ),
        0
    );
    assert_eq!(run(std::slice::from_ref(&http_proxy), &["--no-proxy"]), 0);
    // --proxy needs no environment.
    let proxy = Tinyproxy::start("flag", "");
    let out = common::stage3()
        .arg(&root)
        .args(["--exclude", "/$|/static/", "-q", "--progress", "never"])
        .args(["--proxy", &proxy.url()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(proxy.stop().len(), 2);
    // A variable that is no proxy URL is a usage error that names it.
    let out = common::stage3()
        .arg(&root)
        .env("https_proxy", "socks5://127.0.0.1:1080")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "HTTPS_PROXY: \"socks5://127.0.0.1:1080\": only http:// proxies are supported, not \
             socks5://"
        ),
        "{stderr}"
    );
}

#[test]
fn resolve_pins_the_proxy_by_its_own_port() {
    // The proxy is named, and --resolve says where the name is.
    let site = DemoSite::start(SiteConfig::default()).unwrap();
    let proxy = Tinyproxy::start("resolve", "");
    let mut resolve = std::collections::HashMap::new();
    resolve.insert(
        ("proxy.test".to_string(), proxy.port),
        "127.0.0.1".parse().unwrap(),
    );
    let client = Client::new(ClientConfig {
        proxies: Proxies::all(
            Proxy::parse(&format!("http://proxy.test:{}", proxy.port)).unwrap(),
            NoProxy::default(),
        ),
        resolve,
        ..ClientConfig::default()
    });
    let page = Url::parse(&site.url("/")).unwrap();
    let status = runtime::run_until_complete(client.get(&page))
        .unwrap()
        .map(|r| r.status);
    assert_eq!(status, Ok(200));
    assert_eq!(proxy.stop(), [format!("GET {page} HTTP/1.1")]);
}
