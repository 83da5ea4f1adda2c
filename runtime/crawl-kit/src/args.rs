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
    Ok(url)
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
            Err("exa mple.com is not a URL: invalid international domain name".into())
        );
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
