//! Maps keyed by the runtime's own numbers: the event loop's tokens. (The
//! executor's tasks are in a [slab](crate::slab), found without hashing.)
//!
//! `HashMap`'s default hasher is SipHash with random keys, which protects a
//! map from keys chosen by an attacker (a web page's URLs, say) at the cost
//! of some 20 ns a lookup. Our keys are numbers we hand out ourselves, one
//! after another, so nobody can choose them, and the event loop looks one
//! up for every event. One multiplication by 2^64 divided by the golden ratio
//! (Fibonacci hashing, Knuth's TAOCP 6.4) spreads consecutive numbers over
//! the table's buckets and over the high bits the table also uses.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by a number the runtime hands out.
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// The hasher of an [`IdMap`]: one multiplication.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only numbers are hashed here; any other key still works.
        for &b in bytes {
            self.write_u64(self.0.rotate_left(8) ^ u64::from(b));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_ids_spread_over_the_high_bits_too() {
        let hash = |n: u64| {
            let mut h = IdHasher::default();
            h.write_u64(n);
            h.finish()
        };
        // hashbrown takes its 7-bit tag from the top of the hash.
        let tags: std::collections::HashSet<u64> = (0..128).map(|n| hash(n) >> 57).collect();
        assert!(tags.len() > 64, "{}", tags.len());
        let mut map: IdMap<u64, u64> = IdMap::default();
        for n in 0..1000 {
            map.insert(n, n * 2);
        }
        assert!((0..1000).all(|n| map[&n] == n * 2));
    }
}
