//! The dedup set, the chapter's `seen_urls`: every URL the crawl has come
//! across, so that each is queued (or skipped) once.
//!
//! The chapter keeps the URLs themselves in a Python `set`. At a million
//! URLs that is the crawler's biggest cost in memory: each URL is a string
//! of 40 bytes or more, in an allocation of its own, plus its slot in the
//! table. We keep a 128-bit fingerprint of each URL instead, 16 bytes in
//! the table's own array and no allocation, as large crawlers do
//! (Mercator, Heritrix). A fingerprint cannot be turned back into its URL,
//! but the set is only ever asked "seen before?".
//!
//! Two URLs with the same fingerprint would make the second look seen and
//! be lost. The fingerprint is SipHash-1-3 with a 128-bit output, under
//! keys drawn fresh for each process: among a billion URLs the chance of
//! any collision at all is about 10^-21, and a site cannot craft a
//! collision without knowing the keys.

use std::collections::HashSet;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};

use siphasher::sip128::{Hasher128, SipHasher13};

/// Every URL seen, as keyed 128-bit fingerprints.
#[derive(Clone, Debug)]
pub struct SeenUrls {
    /// The SipHash keys, random per process.
    keys: (u64, u64),
    /// The fingerprints. They are uniformly random already, so the table
    /// hashes one by taking its low 64 bits instead of hashing it again.
    fingerprints: HashSet<u128, BuildHasherDefault<AlreadyHashed>>,
}

impl SeenUrls {
    /// An empty set, with fresh keys.
    pub fn new() -> SeenUrls {
        // `RandomState` is seeded from the OS's randomness: two hashes of
        // it are two unpredictable keys.
        let random = RandomState::new();
        SeenUrls {
            keys: (random.hash_one(0u8), random.hash_one(1u8)),
            fingerprints: HashSet::default(),
        }
    }

    /// Adds `url`; whether it was new.
    pub fn insert(&mut self, url: &str) -> bool {
        let fingerprint = self.fingerprint(url);
        self.fingerprints.insert(fingerprint)
    }

    /// Whether `url` has been seen.
    pub fn contains(&self, url: &str) -> bool {
        self.fingerprints.contains(&self.fingerprint(url))
    }

    /// How many URLs have been seen.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    #[cfg(test)]
    /// Whether none has.
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }

    fn fingerprint(&self, url: &str) -> u128 {
        let mut hasher = SipHasher13::new_with_keys(self.keys.0, self.keys.1);
        hasher.write(url.as_bytes());
        hasher.finish128().as_u128()
    }
}

impl Default for SeenUrls {
    fn default() -> Self {
        SeenUrls::new()
    }
}

/// The table's hasher for values that are random bits already: the hash
/// of a `u128` is its low half.
#[derive(Default)]
struct AlreadyHashed(u64);

impl Hasher for AlreadyHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u128`s are hashed here; this keeps any other input
        // correct, if slow.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_new_once() {
        let mut seen = SeenUrls::new();
        assert!(seen.is_empty());
        assert!(seen.insert("http://example.com/"));
        assert!(!seen.insert("http://example.com/"));
        assert!(seen.contains("http://example.com/"));
        assert!(!seen.contains("http://example.com/a"));
        assert!(seen.insert("http://example.com/a"));
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn many_urls_are_told_apart() {
        let mut seen = SeenUrls::new();
        for n in 0..300_000 {
            assert!(seen.insert(&format!("http://127.0.0.1:8000/pages/a/{n}.html")));
        }
        for n in 0..300_000 {
            assert!(seen.contains(&format!("http://127.0.0.1:8000/pages/a/{n}.html")));
        }
        assert!(!seen.contains("http://127.0.0.1:8000/pages/a/300000.html"));
        assert_eq!(seen.len(), 300_000);
    }

    #[test]
    fn two_sets_draw_different_keys() {
        assert_ne!(SeenUrls::new().keys, SeenUrls::new().keys);
    }
}
