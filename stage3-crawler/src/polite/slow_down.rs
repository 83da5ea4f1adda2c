//! "Slow down": a server that answers `429 Too Many Requests` or `503
//! Service Unavailable` is asking for fewer requests. With `Retry-After`
//! it says how long to wait; without, we back off that host, exponentially
//! and with jitter, and recover when it answers again. Either way the URL
//! waits with its host and is asked again then (not counted as a failed
//! try), the other hosts go on meanwhile, and the report names each wait.

use std::fmt;
use std::time::Duration;

use serde::{Serialize, Serializer};

/// How many times one URL waits; its next 429 or 503 is its result.
pub const MAX_WAITS: u32 = 3;

/// The most waits the report lists; past them, it counts them. A site
/// that answers 429 to a million URLs would otherwise fill memory with
/// their records.
pub const MAX_LISTED_WAITS: usize = 10_000;

/// The first backoff without `Retry-After`; each slow-down in a row from a
/// host doubles it, up to `--max-crawl-delay`.
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);

// ANCHOR: wait
/// One wait, for the report: which host, why, how long, for which URL.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Wait {
    /// `host:port`, as the per-host limits count hosts.
    pub host: String,
    /// The URL that was answered so, and is asked again after the wait.
    pub url: String,
    /// `429 with Retry-After: 2`, or `503 without Retry-After (backoff 2)`.
    pub why: String,
    /// How long the host waited (in JSON, seconds).
    #[serde(serialize_with = "seconds")]
    pub wait: Duration,
}
// ANCHOR_END: wait

impl fmt::Display for Wait {
    /// `127.0.0.1:8000 waited 2s: 429 with Retry-After: 2 (http://...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} waited {}s: {} ({})",
            self.host,
            self.wait.as_secs_f64(),
            self.why,
            self.url
        )
    }
}

fn seconds<S: Serializer>(wait: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(wait.as_secs_f64())
}

/// What a slow-down comes to.
#[derive(Debug, PartialEq)]
pub(crate) enum Decision {
    /// The host waits this long, for this reason; the URL is asked again.
    Wait(Duration, String),
    /// The server asked for longer than we wait: the URL fails, saying so.
    Fail(String),
    /// The URL has waited enough: its status is its result.
    Record,
}

// ANCHOR: decide
/// What to do with a `status` (429 or 503) for a URL that has waited
/// `waited` times already, from a host that has slowed us down `streak`
/// times in a row without saying for how long. `jitter`, in [0, 1),
/// spreads backoffs so that many crawlers told to slow down at once do
/// not all come back at once.
pub(crate) fn decide(
    status: u16,
    retry_after: Option<Duration>,
    waited: u32,
    streak: u32,
    cap: Duration,
    jitter: f64,
) -> Decision {
    if waited >= MAX_WAITS {
        return Decision::Record;
    }
    match retry_after {
        Some(wait) if wait > cap => Decision::Fail(format!(
            "the server answered {status} and asked to wait {}s (Retry-After), longer than \
             --max-crawl-delay ({}s)",
            wait.as_secs_f64(),
            cap.as_secs_f64()
        )),
        Some(wait) => Decision::Wait(
            wait,
            format!("{status} with Retry-After: {}", wait.as_secs_f64()),
        ),
        None => {
            let backoff = BACKOFF_BASE.saturating_mul(1 << streak.min(20)).min(cap);
            // "Equal jitter": half the backoff for sure, half at random.
            let wait = backoff.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0));
            Decision::Wait(
                wait,
                format!(
                    "{status} without Retry-After (backoff {}s)",
                    backoff.as_secs_f64()
                ),
            )
        }
    }
}
// ANCHOR_END: decide

/// A small random number generator for the jitter (xorshift64*): not for
/// secrets, only to spread waits.
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn new() -> Jitter {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9e37_79b9_7f4a_7c15, |d| d.as_nanos() as u64);
        Jitter(seed | 1)
    }

    /// The next number in [0, 1).
    pub(crate) fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let n = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (n >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: Duration = Duration::from_secs(30);

    #[test]
    fn retry_after_is_obeyed_up_to_the_cap() {
        let two = Some(Duration::from_secs(2));
        assert_eq!(
            decide(429, two, 0, 0, CAP, 0.7),
            Decision::Wait(Duration::from_secs(2), "429 with Retry-After: 2".into())
        );
        assert_eq!(
            decide(503, Some(Duration::from_secs(3600)), 0, 0, CAP, 0.7),
            Decision::Fail(
                "the server answered 503 and asked to wait 3600s (Retry-After), longer than \
                 --max-crawl-delay (30s)"
                    .into()
            )
        );
        assert_eq!(decide(429, two, MAX_WAITS, 0, CAP, 0.7), Decision::Record);
    }

    #[test]
    fn without_retry_after_the_backoff_doubles_with_jitter_up_to_the_cap() {
        let wait = |streak, jitter| match decide(503, None, 0, streak, CAP, jitter) {
            Decision::Wait(wait, _) => wait,
            other => panic!("{other:?}"),
        };
        assert_eq!(wait(0, 0.0), Duration::from_millis(500));
        assert_eq!(wait(0, 1.0), Duration::from_secs(1));
        assert_eq!(wait(1, 0.0), Duration::from_secs(1));
        assert_eq!(wait(3, 1.0), Duration::from_secs(8));
        assert_eq!(wait(10, 1.0), CAP);
        assert_eq!(wait(63, 0.0), CAP / 2);
        let mut jitter = Jitter::new();
        for _ in 0..1000 {
            assert!((0.0..1.0).contains(&jitter.next()));
        }
    }
}
