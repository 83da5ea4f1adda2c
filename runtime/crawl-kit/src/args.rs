//! Command-line values the crawlers share: a root URL and a timeout. Each
//! is a clap `value_parser`, so a bad value is a usage error (exit 2) that
//! names the option.

use std::time::Duration;

use url::Url;

/// The longest duration any option accepts. Longer is surely a typo, and a
/// deadline that far away is as good as none; refusing it at parse time
/// also keeps `Instant + duration` far from overflowing.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// A root URL with one of `schemes` and a host.
///
/// What a user types is often not a URL: `example.org`, `example.org:8080`
/// or `localhost:8000/docs`. A root with no scheme gets `http://`. Only that:
/// a root with any other scheme (`mailto:a@host`, `ftp://host/`) is an
/// error, never a host named `mailto`.
pub fn parse_root(arg: &str, schemes: &[&str]) -> Result<Url, String> {
    let with_scheme = if has_scheme(arg) {
        arg.to_string()
    } else {
        format!("http://{arg}")
    };
    let written = host_as_written(&with_scheme);
    if written.contains(char::is_whitespace) {
        return Err(format!(
            "{arg} is not a URL: its host, {written:?}, has a space in it"
        ));
    }
    let url = Url::parse(&with_scheme).map_err(|e| format!("{arg} is not a URL: {e}"))?;
    if !schemes.contains(&url.scheme()) {
        return Err(format!(
            "{arg}: unsupported scheme {}; give {}",
            url.scheme(),
            schemes
                .iter()
                .map(|s| format!("an {s}:// URL"))
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{arg} has no host"));
    }
    // The URL standard reads a bare number as an IPv4 address (`5` is
    // 0.0.0.5): on a command line it is a mistyped option or port, not a
    // machine anyone meant.
    if !written.is_empty() && written.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{arg} is a number, not a host (an address has four parts: 127.0.0.1)"
        ));
    }
    if let Some(url::Host::Domain(domain)) = url.host() {
        // RFC 1123: a label of a host name neither starts nor ends with a
        // hyphen. Such a name could never resolve; saying so here beats a
        // DNS failure later (and catches `-5` typed for an option's value).
        if let Some(label) = domain
            .split('.')
            .find(|label| label.starts_with('-') || label.ends_with('-'))
        {
            return Err(format!(
                "{arg}: {domain:?} cannot be a host name (its label {label:?} starts or ends with a hyphen)"
            ));
        }
    }
    Ok(url)
}

/// The host of `url` as the user wrote it, before the URL parser reads
/// it: after `scheme://` and any `user@`, up to the port, path, query or
/// fragment. Empty if there is none.
fn host_as_written(url: &str) -> &str {
    let Some((_, rest)) = url.split_once("://") else {
        return "";
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if host.starts_with('[') {
        // An IPv6 literal: its colons are not a port's.
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.split(':').next().unwrap_or_default()
}

/// Whether `arg` starts with a scheme: letters (then letters, digits, `+`,
/// `-`, `.`) and a colon that does not begin a port (`host:8000`).
fn has_scheme(arg: &str) -> bool {
    let Some((before, after)) = arg.split_once(':') else {
        return false;
    };
    let is_scheme = before.starts_with(|c: char| c.is_ascii_alphabetic())
        && before
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let port_digits = after.split(['/', '?', '#']).next().unwrap_or_default();
    let is_port = !port_digits.is_empty() && port_digits.bytes().all(|b| b.is_ascii_digit());
    is_scheme && !is_port
}

/// The shortest timeout: the timers' grain.
const MIN_DURATION: Duration = Duration::from_millis(1);

/// A timeout in seconds: at least a millisecond, fractions allowed, at
/// most one day.
pub fn parse_timeout(value: &str) -> Result<Duration, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|secs| *secs > 0.0)
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        // Timers count whole milliseconds: anything shorter (1e-10, which
        // even rounds to no time at all) would time out every fetch at once.
        .filter(|duration| *duration >= MIN_DURATION && *duration <= MAX_DURATION)
        .ok_or_else(|| {
            "expected a number of seconds from 0.001 (a millisecond) to 86400 (one day)".into()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(arg: &str) -> Result<String, String> {
        parse_root(arg, &["http"]).map(String::from)
    }

    #[test]
    fn a_root_without_a_scheme_gets_http() {
        assert_eq!(http("example.com"), Ok("http://example.com/".into()));
        assert_eq!(
            http("example.com:8080"),
            Ok("http://example.com:8080/".into())
        );
        assert_eq!(
            http("localhost:8000/docs?x#y"),
            Ok("http://localhost:8000/docs?x#y".into())
        );
        assert_eq!(http("127.0.0.1:1/"), Ok("http://127.0.0.1:1/".into()));
        assert_eq!(
            http("HTTP://Example.COM/a"),
            Ok("http://example.com/a".into())
        );
    }

    #[test]
    fn any_other_scheme_is_refused() {
        for (arg, scheme) in [
            ("mailto:a@host", "mailto"),
            ("ftp://example.com/", "ftp"),
            ("javascript:void(0)", "javascript"),
            ("data:text/html,hi", "data"),
            ("file:///etc/passwd", "file"),
            ("https://example.com/", "https"),
        ] {
            assert_eq!(
                http(arg),
                Err(format!(
                    "{arg}: unsupported scheme {scheme}; give an http:// URL"
                ))
            );
        }
        assert_eq!(
            parse_root("ftp://h/", &["http", "https"]),
            Err("ftp://h/: unsupported scheme ftp; give an http:// URL or an https:// URL".into())
        );
    }

    #[test]
    fn malformed_roots_are_explained() {
        assert_eq!(http("http:"), Err("http: is not a URL: empty host".into()));
        assert_eq!(
            http("exa mple.com"),
            Err(r#"exa mple.com is not a URL: its host, "exa mple.com", has a space in it"#.into())
        );
        assert_eq!(
            http("http://exa mple.com/"),
            Err(
                r#"http://exa mple.com/ is not a URL: its host, "exa mple.com", has a space in it"#
                    .into()
            )
        );
        assert_eq!(
            http("-5"),
            Err(
                r#"-5: "-5" cannot be a host name (its label "-5" starts or ends with a hyphen)"#
                    .into()
            )
        );
        assert_eq!(
            http("http://a.b-/x"),
            Err(r#"http://a.b-/x: "a.b-" cannot be a host name (its label "b-" starts or ends with a hyphen)"#.into())
        );
        for number in ["5", "100", "http://5/", "5:8000"] {
            assert_eq!(
                http(number),
                Err(format!(
                    "{number} is a number, not a host (an address has four parts: 127.0.0.1)"
                ))
            );
        }
        // A space after the host is the path's business, and an address
        // in brackets keeps its colons.
        assert_eq!(
            http("example.com/a b"),
            Ok("http://example.com/a%20b".into())
        );
        assert_eq!(http("[::1]:8000/"), Ok("http://[::1]:8000/".into()));
        assert_eq!(http("a-b.example"), Ok("http://a-b.example/".into()));
        assert_eq!(
            http("example.com:99999"),
            Err("example.com:99999 is not a URL: invalid port number".into())
        );
    }

    #[test]
    fn timeouts_are_positive_and_at_most_a_day() {
        assert_eq!(parse_timeout("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_timeout("86400"), Ok(MAX_DURATION));
        assert_eq!(parse_timeout("0.001"), Ok(MIN_DURATION));
        for bad in [
            "0", "-1", "NaN", "inf", "86400.5", "1e19", "ten", "", "1e-10", "5e-324",
        ] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }
}
