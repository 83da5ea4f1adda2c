//! Cookies: a site whose pages need the session cookie its front page sets
//! is crawled whole, and only with cookies on; a cookie a site sets for a
//! public suffix (`co.uk`) never reaches another site under it. The server
//! records the `Cookie` header of every request it gets.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, TcpListener};
use std::sync::{Arc, Mutex};

use common::{config, crawl};
use stage3_crawler::Config;

/// Every request: (host, path, Cookie header or "").
type Log = Arc<Mutex<Vec<(String, String, String)>>>;

/// A server for two names, `www.site.co.uk` and `www.other.co.uk`, on
/// one port. The site's front page sets the session cookie (and tries a
/// cookie for all of `co.uk`); its other pages answer 403 without the
/// session.
fn serve() -> (u16, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&log);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let log = Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split(' ').nth(1).unwrap_or("").to_string();
                    let mut headers = HashMap::new();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                        if let Some((n, v)) = h.split_once(':') {
                            headers.insert(n.trim().to_ascii_lowercase(), v.trim().to_string());
                        }
                    }
                    let host = headers.get("host").cloned().unwrap_or_default();
                    let host = host.split(':').next().unwrap_or("").to_string();
                    let cookie = headers.get("cookie").cloned().unwrap_or_default();
                    log.lock()
                        .unwrap()
                        .push((host.clone(), path.clone(), cookie.clone()));
                    let (status, extra, body) = match (host.as_str(), path.as_str()) {
                        ("www.site.co.uk", "/") => (
                            200,
                            "Set-Cookie: session=abc123; Path=/; HttpOnly\r\n\
                             Set-Cookie: evil=1; Domain=co.uk; Path=/\r\n",
                            format!(
                                "<a href=/a>a</a> <a href=/b>b</a> \
                                 <a href=http://www.other.co.uk:{port}/next>next</a>"
                            ),
                        ),
                        ("www.site.co.uk", "/a" | "/b" | "/c") => {
                            if cookie.split("; ").any(|c| c == "session=abc123") {
                                (200, "", "<a href=/c>c</a>".to_string())
                            } else {
                                (403, "", "no session".to_string())
                            }
                        }
                        ("www.other.co.uk", "/" | "/next") => (200, "", String::new()),
                        _ => (404, "", String::new()),
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: text/html\r\n{extra}\
                         Content-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, log)
}

fn resolving(port: u16) -> Config {
    let mut c = config();
    let local: IpAddr = "127.0.0.1".parse().unwrap();
    for host in ["www.site.co.uk", "www.other.co.uk"] {
        c.client.resolve.insert((host.to_string(), port), local);
    }
    c
}

#[test]
fn a_site_that_needs_its_session_cookie_is_crawled_whole() {
    let (port, log) = serve();
    let roots = [
        format!("http://www.site.co.uk:{port}/"),
        format!("http://www.other.co.uk:{port}/"),
    ];
    let c = crawl(&roots, resolving(port));
    let statuses: Vec<(String, Option<u16>)> = {
        let mut s: Vec<_> = c.stats.iter().map(|s| (s.url.clone(), s.status)).collect();
        s.sort();
        s
    };
    let site = |p: &str| format!("http://www.site.co.uk:{port}{p}");
    let other = |p: &str| format!("http://www.other.co.uk:{port}{p}");
    assert_eq!(
        statuses,
        [
            (other("/"), Some(200)),
            (other("/next"), Some(200)),
            (site("/"), Some(200)),
            (site("/a"), Some(200)),
            (site("/b"), Some(200)),
            (site("/c"), Some(200)),
        ]
    );
    let log = log.lock().unwrap();
    for (host, path, cookie) in log.iter() {
        let want = match (host.as_str(), path.as_str()) {
            // Before its first answer, the site has set nothing.
            ("www.site.co.uk", "/") => "",
            ("www.site.co.uk", _) => "session=abc123",
            // The cookie for all of co.uk was refused: the other site
            // under it gets nothing.
            _ => "",
        };
        assert_eq!(cookie, want, "{host}{path}");
    }
}

#[test]
fn without_cookies_the_session_pages_are_refused() {
    let (port, log) = serve();
    let mut c = resolving(port);
    c.client.cookies = false;
    let root = format!("http://www.site.co.uk:{port}/");
    let crawl = crawl(std::slice::from_ref(&root), c);
    assert_eq!(
        crawl
            .stat(&format!("http://www.site.co.uk:{port}/a"))
            .status,
        Some(403)
    );
    assert_eq!(
        crawl
            .stat(&format!("http://www.site.co.uk:{port}/b"))
            .status,
        Some(403)
    );
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .all(|(_, _, cookie)| cookie.is_empty())
    );
}

/// Keeps every exchange's request, as the archive would.
struct Requests(std::cell::RefCell<Vec<String>>);

impl stage3_crawler::http::HearExchanges for Requests {
    fn exchange(
        &self,
        exchange: stage3_crawler::http::Exchange,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>> {
        self.0
            .borrow_mut()
            .push(String::from_utf8(exchange.request).unwrap());
        Box::pin(async {})
    }
}

#[test]
fn the_archive_keeps_the_cookie_header_as_sent() {
    let (port, _log) = serve();
    let client = stage3_crawler::http::Client::new(resolving(port).client);
    let heard = std::rc::Rc::new(Requests(Default::default()));
    client.hear_exchanges(heard.clone());
    let front = url::Url::parse(&format!("http://www.site.co.uk:{port}/")).unwrap();
    let page = url::Url::parse(&format!("http://www.site.co.uk:{port}/a")).unwrap();
    runtime::run_until_complete(async {
        client.get(&front).await.unwrap();
        assert_eq!(client.get(&page).await.unwrap().status, 200);
    })
    .unwrap();
    let requests = heard.0.borrow();
    assert!(!requests[0].contains("Cookie:"), "{}", requests[0]);
    assert!(
        requests[1].contains("\r\nCookie: session=abc123\r\n"),
        "{}",
        requests[1]
    );
}
