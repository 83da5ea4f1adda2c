//! What Linux says about this process, from /proc/self.

use std::fs;
use std::io;

/// Memory, threads and descriptors at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Resident set size, bytes.
    pub rss: u64,
    pub threads: u64,
    pub descriptors: u64,
}

pub fn usage() -> io::Result<Usage> {
    let status = fs::read_to_string("/proc/self/status")?;
    Ok(Usage {
        rss: status_field(&status, "VmRSS")? * 1024,
        threads: status_field(&status, "Threads")?,
        descriptors: fs::read_dir("/proc/self/fd")?.count() as u64,
    })
}

impl Usage {
    /// The server child's report: `rss_before rss_after threads descriptors`.
    pub fn to_line(before: &Usage, after: &Usage) -> String {
        format!(
            "{} {} {} {}",
            before.rss, after.rss, after.threads, after.descriptors
        )
    }

    /// The parent's reading of [`to_line`](Self::to_line).
    pub fn from_line(line: &str) -> Option<(Usage, Usage)> {
        let numbers: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        let [rss_before, rss_after, threads, descriptors] = numbers[..] else {
            return None;
        };
        Some((
            Usage {
                rss: rss_before,
                ..Usage::default()
            },
            Usage {
                rss: rss_after,
                threads,
                descriptors,
            },
        ))
    }
}

fn status_field(status: &str, key: &str) -> io::Result<u64> {
    status
        .lines()
        .find_map(|line| {
            line.strip_prefix(key)?
                .strip_prefix(':')?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .ok_or_else(|| io::Error::other(format!("no {key} in /proc/self/status")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_line_round_trips() {
        let before = Usage {
            rss: 10,
            ..Usage::default()
        };
        let after = Usage {
            rss: 20,
            threads: 1,
            descriptors: 7,
        };
        let line = Usage::to_line(&before, &after);
        assert_eq!(line, "10 20 1 7");
        assert_eq!(Usage::from_line(&line), Some((before, after)));
        assert_eq!(Usage::from_line("1 2 3"), None);
        assert_eq!(Usage::from_line("1 2 3 x"), None);
    }
}
