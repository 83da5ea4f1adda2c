//! Exercise 15: a planted wrong answer, for `verify` (not for learners).
//!
//! The reference solution with the trap the first hint warns about: the
//! wait blocks the thread (`std::thread::sleep`) instead of being a timer
//! on the runtime, which stops every other task with it. The test
//! `each_wait_is_a_timer_on_the_runtime` must fail on it.

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
        let mut ceiling = self.base.min(self.max);
        // Double once per failure after the first, stopping as soon as the
        // ceiling stops growing: at `max`, or at zero. So a thousand
        // failures cost a few dozen steps at most, and nothing overflows.
        for _ in 1..failures {
            if ceiling >= self.max || ceiling.is_zero() {
                break;
            }
            ceiling = ceiling.saturating_mul(2).min(self.max);
        }
        ceiling
    }

    /// The wait after `failures` failures: a uniform draw in
    /// `[0, ceiling(failures))`, taking one number from `rng`.
    pub fn delay(&self, failures: u32, rng: &mut Rng) -> Duration {
        self.ceiling(failures).mul_f64(rng.next_f64())
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
    let mut waits = Vec::new();
    let mut tries = 0;
    loop {
        tries += 1;
        let result = client.get(url).await;
        match result {
            Err(e) if e.is_retryable() && tries < backoff.max_tries => {
                let wait = backoff.delay(tries, rng);
                waits.push(wait);
                // The trap: the thread sleeps, and every task with it.
                std::thread::sleep(wait);
            }
            result => {
                return Retried {
                    result,
                    tries,
                    waits,
                };
            }
        }
    }
}
