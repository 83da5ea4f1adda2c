//! Proxies, as curl and reqwest take them: `--proxy URL`, or the
//! `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` environment
//! variables. An http URL goes to the proxy as a request in absolute form
//! (`GET http://host/path HTTP/1.1`); an https URL goes through a tunnel
//! the proxy opens with `CONNECT host:port`, and TLS (and HTTP/2, if the
//! server offers it) runs inside the tunnel as it would on a socket of its
//! own.

use std::net::IpAddr;
use std::time::Duration;

use base64::Engine;

use super::conn::Connection;
use super::error::FetchError;
use super::pool::Origin;

/// One proxy: where it is, and the credentials it wants, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proxy {
    /// The proxy's host: a name or an address.
    pub host: String,
    /// The proxy's port.
    pub port: u16,
    /// `Basic` credentials, encoded, from the URL's `user:password@`.
    pub authorization: Option<String>,
}

/// curl's default port for a proxy URL that names none.
const DEFAULT_PORT: u16 = 1080;

impl Proxy {
    /// A proxy from its URL: `http://[user:password@]host[:port]`, or the
    /// same without a scheme. Other schemes (https, socks5) are refused.
    pub fn parse(text: &str) -> Result<Proxy, String> {
        let with_scheme = if text.contains("://") {
            text.to_string()
        } else {
            format!("http://{text}")
        };
        let url = url::Url::parse(&with_scheme)
            .map_err(|e| format!("{text:?} is not a proxy URL: {e}"))?;
        if url.scheme() != "http" {
            return Err(format!(
                "{text:?}: only http:// proxies are supported, not {}://",
                url.scheme()
            ));
        }
        let host = url
            .host_str()
            .ok_or_else(|| format!("{text:?} names no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let decode = |s: &str| {
            percent_encoding_decode(s).ok_or_else(|| format!("{text:?}: bad percent-encoding"))
        };
        let authorization = if url.username().is_empty() {
            None
        } else {
            let user = decode(url.username())?;
            let password = decode(url.password().unwrap_or(""))?;
            let pair = format!("{user}:{password}");
            Some(base64::engine::general_purpose::STANDARD.encode(pair))
        };
        // The URL parser forgets a port that is its scheme's default
        // (`:80`): whether one was written is read from the text.
        let port = match url.port() {
            Some(port) => port,
            None if names_a_port(&with_scheme) => url.port_or_known_default().unwrap_or(80),
            None => DEFAULT_PORT,
        };
        Ok(Proxy {
            host,
            port,
            authorization,
        })
    }

    /// The proxy's origin, to connect to.
    pub(crate) fn origin(&self) -> Origin {
        Origin {
            scheme: "http".into(),
            host: self.host.clone(),
            port: self.port,
        }
    }

    /// The `Proxy-Authorization` header line, if the proxy wants one.
    pub(crate) fn authorization_line(&self) -> String {
        match &self.authorization {
            Some(credentials) => format!("Proxy-Authorization: Basic {credentials}\r\n"),
            None => String::new(),
        }
    }
}

/// Whether a proxy URL's authority ends with `:PORT`.
fn names_a_port(url: &str) -> bool {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme.split('/').next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    match host_port.rsplit_once(':') {
        Some((host, port)) => {
            !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!host.contains(':') || host.ends_with(']'))
        }
        None => false,
    }
}

/// `%XX` decoding of a URL's user or password.
fn percent_encoding_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

// ANCHOR: proxies
/// Which proxy, if any, each URL goes through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proxies {
    /// For http URLs.
    pub http: Option<Proxy>,
    /// For https URLs.
    pub https: Option<Proxy>,
    /// The hosts that are reached directly (`no_proxy`).
    pub no_proxy: NoProxy,
}

impl Proxies {
    /// One proxy for every URL (`--proxy`), `no_proxy` from the
    /// environment still honoured, as curl does.
    pub fn all(proxy: Proxy, no_proxy: NoProxy) -> Proxies {
        Proxies {
            http: Some(proxy.clone()),
            https: Some(proxy),
            no_proxy,
        }
    }

    /// The proxies the environment names, as curl reads it: `http_proxy`
    /// for http URLs, `https_proxy` for https, `all_proxy` for either when
    /// its own is unset, `no_proxy` for the hosts to reach directly. The
    /// lower-case name wins over the upper-case one, which curl does not
    /// read for http but reqwest and Go do; `HTTP_PROXY` is ignored in a
    /// CGI program (`REQUEST_METHOD` set), where a request's `Proxy:`
    /// header would have put it there (httpoxy).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Proxies, String> {
        let get = |name: &str| {
            let lower = var(&name.to_ascii_lowercase()).filter(|v| !v.is_empty());
            let cgi = name == "HTTP_PROXY" && var("REQUEST_METHOD").is_some();
            lower.or_else(|| {
                (!cgi)
                    .then(|| var(name).filter(|v| !v.is_empty()))
                    .flatten()
            })
        };
        let parse = |name: &str| -> Result<Option<Proxy>, String> {
            get(name)
                .map(|v| Proxy::parse(&v).map_err(|e| format!("{name}: {e}")))
                .transpose()
        };
        let all = parse("ALL_PROXY")?;
        Ok(Proxies {
            http: parse("HTTP_PROXY")?.or_else(|| all.clone()),
            https: parse("HTTPS_PROXY")?.or(all),
            no_proxy: NoProxy::parse(&get("NO_PROXY").unwrap_or_default()),
        })
    }

    /// The proxy for a request to `origin`, or `None` to go directly.
    pub(crate) fn for_origin(&self, origin: &Origin) -> Option<&Proxy> {
        let proxy = match origin.scheme.as_str() {
            "https" => self.https.as_ref(),
            _ => self.http.as_ref(),
        }?;
        (!self.no_proxy.matches(&origin.host)).then_some(proxy)
    }
}
// ANCHOR_END: proxies

/// The hosts `no_proxy` sends directly, as curl reads the list: `*` for
/// every host; a name for itself and every name below it (`example.com`
/// and `.example.com` both cover `www.example.com`); an IP address for
/// itself; an address with a prefix length (`10.0.0.0/8`) for its network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoProxy {
    all: bool,
    names: Vec<String>,
    networks: Vec<(IpAddr, u8)>,
}

impl NoProxy {
    /// Reads a comma-separated list; entries it cannot read are skipped.
    pub fn parse(list: &str) -> NoProxy {
        let mut no_proxy = NoProxy::default();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "*" {
                no_proxy.all = true;
                continue;
            }
            let (address, bits) = match entry.split_once('/') {
                Some((a, b)) => (a, b.parse::<u8>().ok()),
                None => (entry, None),
            };
            let address = address.trim_start_matches('[').trim_end_matches(']');
            if let Ok(ip) = address.parse::<IpAddr>() {
                let max = if ip.is_ipv4() { 32 } else { 128 };
                match bits {
                    // A prefix longer than the address: no network (curl
                    // ignores it too).
                    Some(bits) if bits > max => {}
                    bits => no_proxy.networks.push((ip, bits.unwrap_or(max))),
                }
            } else {
                let name = entry.trim_matches('.').to_ascii_lowercase();
                no_proxy.names.push(name);
            }
        }
        no_proxy
    }

    /// Whether `host` (a name or an address, as a URL has it) is reached
    /// directly.
    pub fn matches(&self, host: &str) -> bool {
        if self.all {
            return true;
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if let Ok(ip) = host.parse::<IpAddr>() {
            return self
                .networks
                .iter()
                .any(|&(net, bits)| same_network(ip, net, bits));
        }
        self.names.iter().any(|name| {
            host == *name
                || host
                    .strip_suffix(name.as_str())
                    .is_some_and(|rest| rest.ends_with('.'))
        })
    }
}

/// Whether `ip` is in the network `net/bits`.
fn same_network(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let (a, b, width) = match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(u32::from(a)), u128::from(u32::from(b)), 32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
        _ => return false,
    };
    let shift = width - u32::from(bits);
    shift >= width || (a >> shift) == (b >> shift)
}

// ANCHOR: tunnel
/// Asks the proxy on `conn` for a tunnel to `target`, and reads its
/// answer: any 2xx opens the tunnel, anything else is the proxy's refusal.
pub(crate) async fn tunnel(
    conn: &mut Connection,
    proxy: &Proxy,
    target: &Origin,
    read_timeout: Duration,
) -> Result<(), FetchError> {
    let authority = if target.host.contains(':') {
        format!("[{}]:{}", target.host, target.port)
    } else {
        format!("{}:{}", target.host, target.port)
    };
    let request = format!(
        "CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{}\r\n",
        proxy.authorization_line()
    );
    conn.send(request.as_bytes()).await?;
    let head = super::response::read_connect_answer(conn, read_timeout)
        .await
        .map_err(|e| match e {
            // Maybe a proxy restarting: worth another try, as a reset is.
            FetchError::Closed => FetchError::Io(format!(
                "the proxy {}:{} closed the connection instead of answering CONNECT",
                proxy.host, proxy.port
            )),
            other => other,
        })?;
    if (200..300).contains(&head.status) {
        return Ok(());
    }
    Err(refusal(
        proxy,
        head.status,
        &format!("CONNECT to {authority}"),
    ))
}
// ANCHOR_END: tunnel

/// The error for a proxy that answered `status` instead of doing `what`.
pub(crate) fn refusal(proxy: &Proxy, status: u16, what: &str) -> FetchError {
    let why = match status {
        407 if proxy.authorization.is_some() => {
            "407: it did not accept the credentials in the proxy URL".to_string()
        }
        407 => "407: it wants credentials (user:password@ in the proxy URL)".to_string(),
        403 => "403: it does not allow it".to_string(),
        other => other.to_string(),
    };
    FetchError::Proxy(format!(
        "the proxy {}:{} refused {what}: {why}",
        proxy.host, proxy.port
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_are_read_as_curl_reads_them() {
        let p = Proxy::parse("http://user:p%40ss@proxy.test:3128/").unwrap();
        assert_eq!((p.host.as_str(), p.port), ("proxy.test", 3128));
        // base64("user:p@ss")
        assert_eq!(p.authorization.as_deref(), Some("dXNlcjpwQHNz"));
        let p = Proxy::parse("127.0.0.1").unwrap();
        assert_eq!(
            (p.host.as_str(), p.port, p.authorization),
            ("127.0.0.1", 1080, None)
        );
        // A port written as the scheme's default is still the port.
        assert_eq!(Proxy::parse("http://proxy.corp:80").unwrap().port, 80);
        assert_eq!(Proxy::parse("u:p@proxy.corp:80/").unwrap().port, 80);
        assert_eq!(Proxy::parse("http://[::1]:80").unwrap().port, 80);
        assert_eq!(Proxy::parse("http://[::1]").unwrap().port, 1080);
        assert_eq!(
            Proxy::parse("socks5://127.0.0.1:1080").unwrap_err(),
            "\"socks5://127.0.0.1:1080\": only http:// proxies are supported, not socks5://"
        );
    }

    #[test]
    fn the_environment_is_read_lower_case_first_and_all_proxy_fills_in() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let p = Proxies::from_env(env(&[
            ("http_proxy", "http://lower:1"),
            ("HTTP_PROXY", "http://upper:2"),
            ("ALL_PROXY", "http://all:3"),
            ("no_proxy", "internal.test"),
        ]))
        .unwrap();
        assert_eq!(p.http.unwrap().host, "lower");
        assert_eq!(p.https.unwrap().host, "all");
        assert!(p.no_proxy.matches("www.internal.test"));
        // httpoxy: a CGI program ignores HTTP_PROXY.
        let p = Proxies::from_env(env(&[
            ("HTTP_PROXY", "http://from-a-header:2"),
            ("REQUEST_METHOD", "GET"),
        ]))
        .unwrap();
        assert_eq!(p.http, None);
        assert_eq!(
            Proxies::from_env(env(&[("https_proxy", "ftp://x")])).unwrap_err(),
            "HTTPS_PROXY: \"ftp://x\": only http:// proxies are supported, not ftp://"
        );
    }

    #[test]
    fn a_refusal_says_what_the_proxy_wanted() {
        let bare = Proxy::parse("127.0.0.1:3128").unwrap();
        let with = Proxy::parse("u:p@127.0.0.1:3128").unwrap();
        let said = |p: &Proxy, status| refusal(p, status, "CONNECT to h:443").to_string();
        assert_eq!(
            said(&bare, 407),
            "the proxy 127.0.0.1:3128 refused CONNECT to h:443: 407: it wants credentials \
             (user:password@ in the proxy URL)"
        );
        assert_eq!(
            said(&with, 407),
            "the proxy 127.0.0.1:3128 refused CONNECT to h:443: 407: it did not accept the \
             credentials in the proxy URL"
        );
        assert_eq!(
            said(&bare, 502),
            "the proxy 127.0.0.1:3128 refused CONNECT to h:443: 502"
        );
    }

    #[test]
    fn no_proxy_matches_names_domains_addresses_and_networks() {
        let n = NoProxy::parse("example.com, .other.test, 10.0.0.0/8, ::1, 192.168.1.5");
        for host in [
            "example.com",
            "www.example.com",
            "EXAMPLE.COM.",
            "a.b.other.test",
            "other.test",
        ] {
            assert!(n.matches(host), "{host}");
        }
        for host in [
            "notexample.com",
            "example.com.evil",
            "test",
            "11.0.0.1",
            "192.168.1.6",
        ] {
            assert!(!n.matches(host), "{host}");
        }
        assert!(n.matches("10.200.3.4"));
        assert!(n.matches("::1"));
        assert!(n.matches("192.168.1.5"));
        assert!(NoProxy::parse("example.org.").matches("www.example.org"));
        assert!(!NoProxy::parse("10.0.0.1/99").matches("10.0.0.1"));
        assert!(NoProxy::parse("*").matches("anything.test"));
        assert!(!NoProxy::parse("").matches("anything.test"));
    }
}
