//! Which hosts belong to the crawl: the chapter's `host_okay`, strict and
//! lenient.
//!
//! The roots name the site. An IP address must match exactly. A name
//! matches, in strict mode, itself with a leading `www.` added or removed,
//! and in lenient mode anything that shares its last two labels
//! (`a.example.com` and `example.com`).
//!
//! One rule is ours, not the chapter's: a root with a non-default port
//! (`http://127.0.0.1:8000/`) claims only that port. A development server on
//! port 8000 and another on port 1 are different sites, even on one host;
//! the chapter ignored ports and would wander from one to the other.

use url::{Host, Url};

// ANCHOR: host_rules
/// The host rules, built from the roots.
#[derive(Clone, Debug)]
pub struct HostRules {
    strict: bool,
    /// `(key, port)`: the key is an IP literal, a lower-case host name
    /// (strict), or its last two labels (lenient). The port is `None` when
    /// the root used its scheme's default port.
    root_domains: Vec<(String, Option<u16>)>,
}

impl HostRules {
    /// The rules for `roots`: strict (`www.` or not) or lenient (last two labels).
    pub fn new<'a>(roots: impl IntoIterator<Item = &'a Url>, strict: bool) -> HostRules {
        let mut root_domains = Vec::new();
        for root in roots {
            let Some(host) = root.host() else { continue };
            let key = match host {
                Host::Domain(name) if !strict => lenient_host(name),
                Host::Domain(name) => name.to_string(),
                ip => ip.to_string(),
            };
            let entry = (key, root.port());
            if !root_domains.contains(&entry) {
                root_domains.push(entry);
            }
        }
        HostRules {
            strict,
            root_domains,
        }
    }

    /// Whether `url`'s host and port belong to the crawl.
    pub fn host_okay(&self, url: &Url) -> bool {
        let Some(host) = url.host() else { return false };
        // The url crate already lower-cased the name and dropped a default
        // port, so `port()` is `None` exactly when the default is in use.
        let port = url.port();
        // A scan, not a hash lookup: there are as many keys as roots, and a
        // lookup would need an owned key, an allocation per link.
        let ok = |key: &str| {
            self.root_domains
                .iter()
                .any(|(k, p)| k == key && *p == port)
        };
        match host {
            // An address is its own identity: no www., no suffixes. The
            // serialized form is the one `new` stored.
            Host::Ipv4(_) | Host::Ipv6(_) => url.host_str().is_some_and(ok),
            Host::Domain(name) if self.strict => ok(name) || ok(&toggle_www(name)),
            Host::Domain(name) => ok(&lenient_host(name)),
        }
    }
}
// ANCHOR_END: host_rules

/// `www.example.com` for `example.com`, and the other way round.
fn toggle_www(host: &str) -> String {
    match host.strip_prefix("www.") {
        Some(rest) => rest.to_string(),
        None => format!("www.{host}"),
    }
}

/// The last two labels: `a.b.example.com` gives `example.com`. (The chapter
/// joined them without the dot, so `ab.c` and `a.bc` collided.)
fn lenient_host(host: &str) -> String {
    let host = host.trim_end_matches('.');
    let mut labels = host.rsplitn(3, '.');
    match (labels.next(), labels.next()) {
        (Some(last), Some(second)) => format!("{second}.{last}"),
        _ => host.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(roots: &[&str], strict: bool) -> HostRules {
        let roots: Vec<Url> = roots.iter().map(|r| Url::parse(r).unwrap()).collect();
        HostRules::new(&roots, strict)
    }

    fn ok(rules: &HostRules, url: &str) -> bool {
        rules.host_okay(&Url::parse(url).unwrap())
    }

    #[test]
    fn strict_allows_www_added_or_removed() {
        let r = rules(&["http://example.com"], true);
        assert!(ok(&r, "http://example.com/x"));
        assert!(ok(&r, "http://WWW.Example.com/x"));
        assert!(!ok(&r, "http://foo.example.com"));
        assert!(!ok(&r, "http://www.www.example.com"));
        let r = rules(&["http://www.example.com"], true);
        assert!(ok(&r, "http://example.com/"));
        // "www." added to the root: the rule says yes, odd as it looks.
        assert!(ok(&r, "http://www.www.example.com/"));
        assert!(!ok(&r, "http://example.org/"));
    }

    #[test]
    fn lenient_compares_the_last_two_labels() {
        let r = rules(&["http://example.com"], false);
        assert!(ok(&r, "http://www.example.com"));
        assert!(ok(&r, "http://foo.bar.example.com"));
        assert!(!ok(&r, "http://example.org"));
        assert!(!ok(&r, "http://badexample.com"));
        assert_eq!(lenient_host("ab.c"), "ab.c");
        assert_ne!(lenient_host("x.ab.c"), lenient_host("x.a.bc"));
        assert_eq!(lenient_host("localhost"), "localhost");
    }

    #[test]
    fn ip_literals_match_exactly_in_both_modes() {
        for strict in [true, false] {
            let r = rules(&["http://127.0.0.1/", "http://[::1]/"], strict);
            assert!(ok(&r, "http://127.0.0.1/a"));
            assert!(ok(&r, "http://[::1]/a"));
            assert!(!ok(&r, "http://127.0.0.2/"));
            assert!(!ok(&r, "http://0.1/"));
        }
    }

    #[test]
    fn http_and_https_are_one_host() {
        for strict in [true, false] {
            let r = rules(&["https://example.com/"], strict);
            assert!(ok(&r, "http://example.com/a"));
            assert!(ok(&r, "https://www.example.com/a"));
            // One port serving both schemes, as the demo site's TLS mode.
            let r = rules(&["http://127.0.0.1:8443/"], strict);
            assert!(ok(&r, "https://127.0.0.1:8443/a"));
            assert!(!ok(&r, "https://127.0.0.1/a"));
        }
    }

    #[test]
    fn a_non_default_port_is_part_of_the_site() {
        let r = rules(&["http://127.0.0.1:8000/"], true);
        assert!(ok(&r, "http://127.0.0.1:8000/a"));
        assert!(!ok(&r, "http://127.0.0.1:1/"));
        assert!(!ok(&r, "http://127.0.0.1/"));
        let r = rules(&["http://example.com/"], true);
        assert!(ok(&r, "http://example.com:80/"));
        assert!(ok(&r, "https://example.com/"));
        assert!(!ok(&r, "http://example.com:8080/"));
    }
}
