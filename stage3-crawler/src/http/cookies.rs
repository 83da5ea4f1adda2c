//! Cookies (RFC 6265), as a crawler keeps them: a jar per crawl, filled
//! from `Set-Cookie` and sent back in `Cookie`, so that a site that needs
//! its session is crawled whole. Domain and path matching, `Max-Age` and
//! `Expires`, `Secure`; `HttpOnly` and `SameSite` are for browsers, and
//! ignored. The public suffix list (the `psl` crate, Mozilla's list built
//! in) keeps a site from setting a cookie for `co.uk`, and the jar is
//! bounded: a server that sets a million cookies gets a few thousand.

use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use url::Url;

/// The most cookies the jar keeps, and per registrable domain: the
/// figures RFC 6265 asks a user agent to support at least.
pub const MAX_COOKIES: usize = 3000;
pub const MAX_PER_DOMAIN: usize = 50;
/// The largest cookie kept: its whole `Set-Cookie` line (the RFC's 4096).
pub const MAX_COOKIE_SIZE: usize = 4096;

/// One cookie.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Cookie {
    name: String,
    value: String,
    /// The host it was set by (host-only) or the domain it covers.
    domain: String,
    /// Its registrable domain, which its share of the jar is counted by.
    site: String,
    host_only: bool,
    path: String,
    secure: bool,
    /// `None`: a session cookie, kept for the crawl.
    expires: Option<SystemTime>,
    /// When it was first set, for the order of the `Cookie` header and
    /// for eviction: the oldest go first.
    created: u64,
}

// ANCHOR: jar
/// The cookies of one crawl.
#[derive(Debug, Default)]
pub struct Jar {
    cookies: Vec<Cookie>,
    /// Cookies set so far, to number them.
    counter: u64,
}

impl Jar {
    /// Stores what one `Set-Cookie` line of a response to `url` says,
    /// received at `now`. A line that is malformed, or sets a cookie for a
    /// domain the URL's host may not (another site, a public suffix), is
    /// ignored, as a browser ignores it.
    pub fn store(&mut self, url: &Url, line: &str, now: SystemTime) {
        let Some(host) = url.host_str().map(host_of) else {
            return;
        };
        // The whole line, attributes and all, within the cookie's size: a
        // path of 60 KiB would otherwise be kept 3,000 times.
        if line.len() > MAX_COOKIE_SIZE {
            return;
        }
        let Some(mut cookie) = parse(line, &host, url.path(), now) else {
            return;
        };
        // Replace the same cookie (name, domain, path), keeping its age.
        let same = |c: &Cookie| {
            c.name == cookie.name && c.domain == cookie.domain && c.path == cookie.path
        };
        if let Some(old) = self.cookies.iter().position(same) {
            cookie.created = self.cookies[old].created;
            self.cookies.remove(old);
        } else {
            self.counter += 1;
            cookie.created = self.counter;
        }
        // An expiry in the past is how a server deletes a cookie.
        if cookie.expires.is_some_and(|at| at <= now) {
            return;
        }
        self.cookies.push(cookie);
        self.evict(now);
    }

    /// The `Cookie` header for a request to `url` at `now`: the cookies
    /// whose domain and path match it (and, for `Secure` ones, only over
    /// https), longest path first, then oldest.
    pub fn header_for(&self, url: &Url, now: SystemTime) -> Option<String> {
        let host = host_of(url.host_str()?);
        let secure = url.scheme() == "https";
        let mut matching: Vec<&Cookie> = self
            .cookies
            .iter()
            .filter(|c| {
                let domain = if c.host_only {
                    c.domain == host
                } else {
                    domain_match(&host, &c.domain)
                };
                domain
                    && path_match(url.path(), &c.path)
                    && (secure || !c.secure)
                    && c.expires.is_none_or(|at| at > now)
            })
            .collect();
        if matching.is_empty() {
            return None;
        }
        matching.sort_by(|a, b| {
            b.path
                .len()
                .cmp(&a.path.len())
                .then(a.created.cmp(&b.created))
        });
        let pairs: Vec<String> = matching
            .iter()
            .map(|c| format!("{}={}", c.name, c.value))
            .collect();
        Some(pairs.join("; "))
    }
    // ANCHOR_END: jar

    /// How many cookies the jar holds.
    pub fn len(&self) -> usize {
        self.cookies.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.cookies.is_empty()
    }

    /// Keeps the jar within its bounds: the expired go, then the oldest of
    /// a domain past its share, then the oldest of all.
    fn evict(&mut self, now: SystemTime) {
        self.cookies.retain(|c| c.expires.is_none_or(|at| at > now));
        let Some(newest) = self.cookies.last() else {
            return;
        };
        let of_site: Vec<u64> = self
            .cookies
            .iter()
            .filter(|c| c.site == newest.site)
            .map(|c| c.created)
            .collect();
        if of_site.len() > MAX_PER_DOMAIN {
            let oldest = *of_site.iter().min().expect("more than fifty");
            self.cookies.retain(|c| c.created != oldest);
        }
        if self.cookies.len() > MAX_COOKIES {
            let oldest = self.cookies.iter().map(|c| c.created).min();
            self.cookies.retain(|c| Some(c.created) != oldest);
        }
    }
}

/// A URL's host as cookies compare it: lower case, without the brackets
/// of an IPv6 address.
fn host_of(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// The domain a cookie's site is counted under: its registrable domain
/// (`example.co.uk` for `www.example.co.uk`), or itself.
fn registrable(domain: &str) -> &str {
    psl::domain_str(domain).unwrap_or(domain)
}

/// Whether `domain` is a public suffix (`com`, `co.uk`, `github.io`), or
/// a name under no known suffix at all (`test`): no site may set a cookie
/// for all of it.
fn is_public_suffix(domain: &str) -> bool {
    psl::suffix_str(domain).is_some_and(|suffix| suffix == domain)
}

/// RFC 6265 section 5.1.3: `host` is `domain`, or a name below it; never
/// for an IP address.
fn domain_match(host: &str, domain: &str) -> bool {
    host == domain
        || (host.parse::<IpAddr>().is_err()
            && host
                .strip_suffix(domain)
                .is_some_and(|rest| rest.ends_with('.')))
}

/// Section 5.1.4: the cookie's path is the request's, or a prefix of it
/// that ends at a `/`.
fn path_match(request: &str, cookie: &str) -> bool {
    request == cookie
        || (request.starts_with(cookie)
            && (cookie.ends_with('/') || request[cookie.len()..].starts_with('/')))
}

/// Section 5.1.4: the directory of the request's path.
fn default_path(path: &str) -> String {
    match path.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(i) => path[..i].to_string(),
    }
}

// ANCHOR: parse
/// Section 5.2: one `Set-Cookie` line, from a response by `host` for
/// `path`, as a cookie, or `None` if it is to be ignored.
fn parse(line: &str, host: &str, path: &str, now: SystemTime) -> Option<Cookie> {
    let mut parts = line.split(';');
    let (name, value) = parts.next()?.split_once('=')?;
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() {
        return None;
    }
    let mut cookie = Cookie {
        name: name.to_string(),
        value: value.to_string(),
        domain: host.to_string(),
        site: String::new(),
        host_only: true,
        path: default_path(path),
        secure: false,
        expires: None,
        created: 0,
    };
    let mut max_age = None;
    for attribute in parts {
        let (key, val) = attribute.split_once('=').unwrap_or((attribute, ""));
        let (key, val) = (key.trim(), val.trim());
        match key.to_ascii_lowercase().as_str() {
            "expires" => {
                if let Some(at) = crawl_kit::dates::parse_http_date(val) {
                    cookie.expires = Some(at);
                }
            }
            "max-age" => {
                if let Ok(secs) = val.parse::<i64>() {
                    max_age = Some(secs);
                }
            }
            "domain" if !val.is_empty() => {
                cookie.domain = val.trim_start_matches('.').to_ascii_lowercase();
                cookie.host_only = false;
            }
            "path" if val.starts_with('/') => cookie.path = val.to_string(),
            "secure" => cookie.secure = true,
            // HttpOnly, SameSite and the rest are for browsers.
            _ => {}
        }
    }
    // Max-Age wins over Expires; zero or less deletes the cookie.
    if let Some(secs) = max_age {
        cookie.expires = Some(match u64::try_from(secs) {
            // Past what a time can hold: as late as it can be, near enough.
            Ok(secs) if secs > 0 => now
                .checked_add(Duration::from_secs(secs))
                .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 86_400)))
                .unwrap_or(now),
            _ => SystemTime::UNIX_EPOCH,
        });
    }
    if !cookie.host_only {
        // A public suffix may be named only by itself (a host that is one).
        if is_public_suffix(&cookie.domain) {
            if cookie.domain != host {
                return None;
            }
            cookie.host_only = true;
        }
        if !domain_match(host, &cookie.domain) {
            return None;
        }
    }
    cookie.site = registrable(&cookie.domain).to_string();
    Some(cookie)
}
// ANCHOR_END: parse

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_772_355_900)
    }

    #[test]
    fn a_cookie_goes_back_to_its_host_and_path() {
        let mut jar = Jar::default();
        jar.store(
            &url("http://www.example.com/shop/cart"),
            "id=1; Path=/shop",
            now(),
        );
        jar.store(&url("http://www.example.com/a/b"), "dir=2", now());
        let cookie = |u: &str| jar.header_for(&url(u), now());
        assert_eq!(
            cookie("http://www.example.com/shop/x").as_deref(),
            Some("id=1")
        );
        assert_eq!(cookie("http://www.example.com/shopping"), None);
        assert_eq!(
            cookie("http://www.example.com/a/c").as_deref(),
            Some("dir=2")
        );
        // Host-only: not for another host of the same site.
        assert_eq!(cookie("http://api.example.com/shop/x"), None);
    }

    #[test]
    fn a_domain_cookie_covers_the_names_below_it_and_never_a_public_suffix() {
        let mut jar = Jar::default();
        let from = url("https://www.example.co.uk/");
        jar.store(&from, "site=1; Domain=.example.co.uk", now());
        jar.store(&from, "evil=1; Domain=co.uk", now());
        jar.store(&from, "other=1; Domain=other.co.uk", now());
        assert_eq!(jar.len(), 1);
        assert_eq!(
            jar.header_for(&url("https://shop.example.co.uk/"), now())
                .as_deref(),
            Some("site=1")
        );
        assert_eq!(
            jar.header_for(&url("https://www.other.co.uk/"), now()),
            None
        );
        // A name under no known suffix is its own public suffix.
        jar.store(&url("http://a.test/"), "t=1; Domain=test", now());
        assert_eq!(jar.header_for(&url("http://b.test/"), now()), None);
        // An address: host-only, always.
        jar.store(&url("http://127.0.0.1:8000/"), "ip=1; Domain=0.0.1", now());
        assert_eq!(jar.header_for(&url("http://127.0.0.1:8000/"), now()), None);
    }

    #[test]
    fn expiry_secure_and_replacement() {
        let mut jar = Jar::default();
        let from = url("https://example.com/");
        jar.store(&from, "a=1; Max-Age=60", now());
        jar.store(&from, "s=1; Secure", now());
        jar.store(&from, "old=1; Expires=Thu, 01 Jan 1970 00:00:01 GMT", now());
        assert_eq!(jar.header_for(&from, now()).as_deref(), Some("a=1; s=1"));
        assert_eq!(
            jar.header_for(&url("http://example.com/"), now())
                .as_deref(),
            Some("a=1")
        );
        let later = now() + Duration::from_secs(61);
        assert_eq!(jar.header_for(&from, later).as_deref(), Some("s=1"));
        // The same name, domain and path replaces; Max-Age=0 deletes.
        jar.store(&from, "s=2; Secure", now());
        assert_eq!(jar.header_for(&from, later).as_deref(), Some("s=2"));
        jar.store(&from, "s=x; Secure; Max-Age=0", now());
        assert_eq!(jar.header_for(&from, later), None);
        for bad in ["", "=x", "novalue", "; Path=/"] {
            jar.store(&from, bad, now());
        }
        assert_eq!(jar.len(), 1);
    }

    #[test]
    fn server_dates_delete_and_huge_ages_keep() {
        let mut jar = Jar::default();
        let from = url("http://example.com/");
        jar.store(&from, "sid=1", now());
        jar.store(&from, "sid=; Expires=Thu, 01-Jan-1970 00:00:00 GMT", now());
        assert_eq!(jar.header_for(&from, now()), None);
        jar.store(&from, "old=1", now());
        jar.store(&from, "old=; Expires=Mon, 01 Jan 1900 00:00:00 GMT", now());
        assert_eq!(jar.header_for(&from, now()), None);
        jar.store(&from, "long=1; Max-Age=9223372036854775807", now());
        assert_eq!(jar.header_for(&from, now()).as_deref(), Some("long=1"));
        let long_path = format!("p=1; Path=/{}", "x".repeat(MAX_COOKIE_SIZE));
        jar.store(&from, &long_path, now());
        assert_eq!(jar.len(), 1);
    }

    #[test]
    fn the_jar_is_bounded() {
        let mut jar = Jar::default();
        let one_site = url("http://example.com/");
        for i in 0..1000 {
            jar.store(&one_site, &format!("c{i}=v"), now());
        }
        assert_eq!(jar.len(), MAX_PER_DOMAIN);
        // The newest are kept.
        let header = jar.header_for(&one_site, now()).unwrap();
        assert!(header.starts_with("c950=v; "), "{header}");
        for site in 0..100 {
            let from = url(&format!("http://site{site}.example/"));
            for i in 0..50 {
                jar.store(&from, &format!("c{i}=v"), now());
            }
        }
        // The oldest went first: example.com's.
        assert_eq!(jar.len(), MAX_COOKIES);
        assert_eq!(jar.header_for(&one_site, now()), None);
        let big = format!("big={}", "x".repeat(MAX_COOKIE_SIZE));
        jar.store(&one_site, &big, now());
        assert_eq!(jar.header_for(&one_site, now()), None);
    }
}
