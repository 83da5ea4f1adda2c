//! `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, and a password that
//! never reaches a log line.

use std::fmt;

/// Where the database is and who we are there.
#[derive(Clone, PartialEq, Eq)]
pub struct PgConfig {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
    password: Option<String>,
}

impl PgConfig {
    /// Parses a URL. A password in it wins; otherwise `env_password` (the
    /// caller passes `PGPASSWORD`, as libpq reads it) is used.
    pub fn parse(text: &str, env_password: Option<String>) -> Result<PgConfig, String> {
        // The error must not echo the URL: it may hold a password.
        let url = url::Url::parse(text).map_err(|e| format!("the --db value is not a URL: {e}"))?;
        if !matches!(url.scheme(), "postgres" | "postgresql") {
            return Err(format!(
                "--db takes a postgres:// URL, not {}://",
                url.scheme()
            ));
        }
        let decode = |s: &str| {
            percent_decode(s).ok_or_else(|| "the --db URL has a bad %-escape".to_string())
        };
        let user = decode(url.username())?;
        if user.is_empty() {
            return Err(
                "the --db URL needs a user, as in postgres://jobs@127.0.0.1:5432/jobs".into(),
            );
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or("the --db URL names no host")?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let database = url.path().trim_start_matches('/');
        let database = if database.is_empty() {
            user.clone()
        } else {
            decode(database)?
        };
        let password = match url.password() {
            Some(p) => Some(decode(p)?),
            None => env_password,
        };
        Ok(PgConfig {
            host,
            port: url.port().unwrap_or(5432),
            user,
            database,
            password,
        })
    }

    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }
}

/// The URL without its password: safe for logs and messages.
impl fmt::Display for PgConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "postgres://{}@{}:{}/{}",
            self.user, self.host, self.port, self.database
        )
    }
}

/// Like `Display`: a `{:?}` in a log line must not leak the password either.
impl fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let password = self.password.as_ref().map(|_| "<hidden>");
        f.debug_struct("PgConfig")
            .field("url", &self.to_string())
            .field("password", &password)
            .finish()
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next()?, bytes.next()?];
            let hex = std::str::from_utf8(&hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_never_show_the_password() {
        let config =
            PgConfig::parse("postgres://jobs:s%40cret@127.0.0.1:5433/queue", None).unwrap();
        assert_eq!(config.password(), Some("s@cret"));
        assert_eq!(config.to_string(), "postgres://jobs@127.0.0.1:5433/queue");
        let debug = format!("{config:?}");
        assert!(!debug.contains("cret"), "{debug}");
        // The environment's password, a default port and database.
        let config = PgConfig::parse("postgresql://jobs@localhost", Some("pw".into())).unwrap();
        assert_eq!(
            (config.port, config.database.as_str(), config.password()),
            (5432, "jobs", Some("pw"))
        );
    }

    #[test]
    fn bad_urls_are_refused_without_echoing_them() {
        for (text, error) in [
            (
                "mysql://u:hunter2@h/d",
                "--db takes a postgres:// URL, not mysql://",
            ),
            (
                "postgres://h/d",
                "the --db URL needs a user, as in postgres://jobs@127.0.0.1:5432/jobs",
            ),
            (
                "hunter2",
                "the --db value is not a URL: relative URL without a base",
            ),
            ("postgres://u:%zz@h/d", "the --db URL has a bad %-escape"),
        ] {
            assert_eq!(
                PgConfig::parse(text, None),
                Err(error.to_string()),
                "{text}"
            );
        }
    }
}
