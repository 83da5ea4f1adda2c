//! What each option's value may be: durations, sizes, roots, `--resolve`, `--ca-file` and the rest, each parsed with the error a user reads.

use super::*;

/// `--frontier redis://HOST[:PORT]/NAME`.
pub(super) fn parse_frontier(s: &str) -> Result<RedisUrl, String> {
    RedisUrl::parse(s)
}

/// Adds `http://` to a root that has no scheme, as `crawl.py`'s `fix_url`,
/// and refuses any scheme but http and https (`mailto:a@host` is not a
/// host called `mailto`).
pub fn parse_root(root: &str) -> Result<Url, String> {
    let mut url = crawl_kit::args::parse_root(root, &["http", "https"])?;
    url.set_fragment(None);
    Ok(url)
}

pub(super) fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| e.to_string())
}

/// `250ms`, `10s`, `1.5s`, `2m`, or a bare number of seconds; more than a
/// day is surely a mistake, and a usage error.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    duration(s, false)
}

pub(super) fn duration(s: &str, zero_is_fine: bool) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (try 500ms, 10s or 1m)"))?;
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        other => return Err(format!("unknown unit {other:?} (use ms, s or m)")),
    };
    let duration = Duration::try_from_secs_f64(value * scale)
        .ok()
        .filter(|d| zero_is_fine || !d.is_zero())
        .ok_or_else(|| format!("{s:?} is not a usable duration"))?;
    if duration > MAX_DURATION {
        return Err(format!("{s:?} is longer than a day"));
    }
    Ok(duration)
}

/// A duration that may be zero: `--delay 0` (or `0s`, `0ms`) means no gap.
pub fn parse_gap(s: &str) -> Result<Duration, String> {
    duration(s, true)
}

/// A User-Agent goes into a request header as it is: printable ASCII only,
/// so that no one can end the header early with a line break.
pub fn parse_user_agent(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("the User-Agent may not be empty".into());
    }
    if let Some(c) = s.chars().find(|c| !(c.is_ascii_graphic() || *c == ' ')) {
        return Err(format!(
            "the User-Agent may hold printable ASCII only, not {c:?}"
        ));
    }
    Ok(s.to_string())
}

/// A byte count with an optional binary suffix: `512`, `64K`, `10MiB`, `1G`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a size (try 500K or 10MiB)"))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => return Err(format!("unknown unit {other:?} (use K, MiB or G)")),
    };
    value
        .checked_mul(scale)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// `HOST:PORT:ADDR`, where ADDR is an IPv4 address or an IPv6 one (with or
/// without brackets).
pub fn parse_resolve(s: &str) -> Result<Resolve, String> {
    let mut parts = s.splitn(3, ':');
    let (Some(host), Some(port), Some(addr)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("{s:?} is not HOST:PORT:ADDR"));
    };
    if host.is_empty() {
        return Err(format!("{s:?} has no host"));
    }
    let port: u16 = port
        .parse()
        .map_err(|_| format!("{port:?} is not a port number"))?;
    let addr: IpAddr = addr
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .map_err(|_| format!("{addr:?} is not an IP address"))?;
    Ok(Resolve {
        host: host.to_ascii_lowercase(),
        port,
        addr,
    })
}

/// The largest `--ca-file` read. A bundle of every public root is about
/// 200 KB; this leaves room for any real one, and keeps `/dev/zero` out.
pub(super) const MAX_CA_FILE: u64 = 10 * 1024 * 1024;

// ANCHOR: parse_ca_file
/// Reads a `--ca-file`: one or more PEM certificates, each usable as a
/// root. Anything else is a usage error, caught before the crawl starts.
pub fn parse_ca_file(file: &Path) -> Result<CaFile, String> {
    let pem = read_bounded(file, MAX_CA_FILE)?;
    // Messages show the path; one that is not UTF-8 shows U+FFFD there.
    let path = file.display();
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{path} is not valid PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "{path} holds no certificate (no -----BEGIN CERTIFICATE----- block)"
        ));
    }
    for (n, cert) in certs.iter().enumerate() {
        RootCertStore::empty().add(cert.clone()).map_err(|e| {
            let why = match e {
                rustls::Error::InvalidCertificate(reason) => reason.to_string(),
                other => other.to_string(),
            };
            format!(
                "certificate {} in {path} is not a usable X.509 certificate: {why}",
                n + 1
            )
        })?;
    }
    Ok(CaFile {
        path: file.to_path_buf(),
        certs,
    })
}
// ANCHOR_END: parse_ca_file

/// Reads a regular file of at most `limit` bytes. A FIFO would block the
/// command line forever (even opening one waits for a writer, so its type
/// is checked first, by name) and a device could be endless, so only a
/// regular file is read, and never more than the limit.
pub(super) fn read_bounded(file_path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let path = file_path.display();
    let is_file = |metadata: io::Result<std::fs::Metadata>| match metadata
        .map_err(|e| format!("cannot read {path}: {e}"))?
    {
        m if m.is_file() => Ok(()),
        _ => Err(format!("{path} is not a regular file")),
    };
    is_file(std::fs::metadata(file_path))?;
    let file = std::fs::File::open(file_path).map_err(|e| format!("cannot read {path}: {e}"))?;
    is_file(file.metadata())?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{path} is larger than {limit} bytes"));
    }
    Ok(bytes)
}

/// A `--proxy` URL.
pub fn parse_proxy(value: &str) -> Result<crate::http::Proxy, String> {
    crate::http::Proxy::parse(value)
}
