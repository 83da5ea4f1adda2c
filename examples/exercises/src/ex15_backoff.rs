//! Exercise 15 ★★: retry with exponential backoff and jitter.
//!
//! Stage 3 retries a failed fetch at once, `max_tries` times. Against a
//! server that is down or overloaded, that is the worst thing to do: every
//! crawler retries at the same moment, and again, and again. Wait instead,
//! longer after each failure (exponential backoff), and by a random amount
//! (jitter), so that many clients spread out instead of arriving together.
//!
//! Write `Backoff::ceiling` (`base` after one failure, doubling after each
//! further one, never more than `max`, and no overflow after a thousand
//! failures), `Backoff::delay` (a uniform draw below the ceiling, "full
//! jitter": `ceiling.mul_f64(rng.next_f64())`, one draw per call), and
//! `get_with_retry` (retry only what `FetchError::is_retryable` allows,
//! sleep on the runtime between tries, never block the thread).
//!
//! Read first: the book's "Coordinating Coroutines" (retries), `fetch` in
//! stage3-crawler/src/crawling.rs and `is_retryable` in
//! stage3-crawler/src/http/error.rs, and `sleep` in runtime/src/time.rs.
//! Check: `cargo run -p exercises -- check 15`. Stuck: `... -- hint 15`.

use std::time::Duration;

use stage3_crawler::http::{Client, FetchError, Response};
use url::Url;

/// A small, seedable random number generator (xorshift64*): the same seed
/// gives the same delays, which is what tests need. Not for cryptography.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Zero is xorshift's one fixed point: it would return zeros forever.
        Rng(seed.max(1))
    }

    /// A number in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        // The top 53 bits, as a fraction of 2^53.
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How to space out retries.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    /// The ceiling after the first failure.
    pub base: Duration,
    /// No ceiling is ever higher than this.
    pub max: Duration,
    /// Attempts in all, the first included.
    pub max_tries: u32,
}

impl Backoff {
    /// The longest wait after `failures` failures in a row (at least 1):
    /// `base`, `2 * base`, `4 * base`, ..., never more than `max`.
    pub fn ceiling(&self, failures: u32) -> Duration {
        let _ = failures;
        self.base // TODO
    }

    /// The wait after `failures` failures: a uniform draw in
    /// `[0, ceiling(failures))`, taking one number from `rng`.
    pub fn delay(&self, failures: u32, rng: &mut Rng) -> Duration {
        let _ = rng;
        self.ceiling(failures) // TODO
    }
}

/// What [`get_with_retry`] did.
#[derive(Debug)]
pub struct Retried {
    pub result: Result<Response, FetchError>,
    /// Attempts made.
    pub tries: u32,
    /// The waits between them, in order.
    pub waits: Vec<Duration>,
}

/// GETs `url`, retrying the errors that [`FetchError::is_retryable`] says
/// may pass, up to `backoff.max_tries` attempts, waiting
/// `backoff.delay(failures, rng)` before each retry. Any response is a
/// success, a 404 included.
pub async fn get_with_retry(
    client: &Client,
    url: &Url,
    backoff: &Backoff,
    rng: &mut Rng,
) -> Retried {
    // TODO: this tries once.
    let _ = (backoff, rng);
    Retried {
        result: client.get(url).await,
        tries: 1,
        waits: Vec::new(),
    }
}
