//! Redis Cluster: which server holds a key.
//!
//! A cluster splits the key space into 16,384 slots, and each master
//! serves some ranges of them. A key's slot is the CRC16 of the key, or of
//! its *hash tag* (the text between the first `{` and the next `}`) when it
//! has one: keys that share a tag share a slot, which is how a Lua script,
//! which may touch one slot only, can still work on many keys.
//!
//! [`Cluster`] asks the server it is given for the slot ranges
//! (`CLUSTER SLOTS`), keeps a [`Pool`] per master, and hands out the pool
//! for a key. A server without cluster support is one node that holds
//! every key, so a program written against [`Cluster`] works with both.
//! When slots move (a master failed over, or an operator resharded), a
//! server answers `MOVED`: [`Cluster::forget`] drops the map, and the next
//! command asks again.

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;

use crate::connection::Error;
use crate::frame::Frame;
use crate::pool::Pool;
use crate::url::RedisUrl;

/// How many slots a cluster has.
pub const SLOTS: u16 = 16_384;

// ANCHOR: key_slot
/// The slot of `key`: CRC16 (XMODEM) of its hash tag if it has a non-empty
/// one, else of the whole key, modulo 16,384.
pub fn key_slot(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = key.get(open + 1..)?;
        let close = rest.iter().position(|&b| b == b'}')?;
        // `{}` is no tag: the whole key is hashed.
        (close > 0).then(|| rest.get(..close)).flatten()
    });
    crc16(tagged.unwrap_or(key)) % SLOTS
}

/// CRC16-CCITT as Redis Cluster uses it (XMODEM: polynomial 0x1021,
/// starting from 0, no reflection).
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}
// ANCHOR_END: key_slot

/// Whether `e` says the key lives elsewhere now (`MOVED`), or is moving
/// (`ASK`): the map of slots is out of date.
pub fn is_redirect(e: &Error) -> bool {
    matches!(e, Error::Server(message)
        if message.starts_with("MOVED ") || message.starts_with("ASK "))
}

/// Where a cluster's slots live, or one server for all of them.
enum Map {
    /// Not asked yet, or forgotten after a `MOVED`.
    Unknown,
    /// A server without cluster support: every key is there.
    Single,
    /// Ranges of slots (first, last, master), sorted by their first slot.
    Slots(Vec<(u16, u16, SocketAddr)>),
}

/// Connections to a Redis server or to every master of a cluster, each
/// through its own pool.
pub struct Cluster {
    url: RedisUrl,
    size: usize,
    map: RefCell<Map>,
    pools: RefCell<HashMap<SocketAddr, Rc<Pool>>>,
    /// The pool for `url` itself, for a server that is not a cluster.
    single: Rc<Pool>,
}

impl Cluster {
    /// A cluster (or lone server) reached through `url`, with at most
    /// `size` connections to each server.
    pub fn new(url: RedisUrl, size: usize) -> Cluster {
        Cluster {
            single: Rc::new(Pool::new(url.clone(), size)),
            url,
            size,
            map: RefCell::new(Map::Unknown),
            pools: RefCell::new(HashMap::new()),
        }
    }

    /// The URL it was given.
    pub fn url(&self) -> &RedisUrl {
        &self.url
    }

    /// Forgets where the slots live: the next command asks again. Call it
    /// after a redirection ([`is_redirect`]) or a lost server.
    pub fn forget(&self) {
        *self.map.borrow_mut() = Map::Unknown;
    }

    /// Whether the server is part of a cluster.
    pub async fn is_cluster(&self) -> Result<bool, Error> {
        self.discover().await?;
        Ok(matches!(*self.map.borrow(), Map::Slots(_)))
    }

    /// The pool of the server that holds `key`.
    pub async fn pool_for(&self, key: &[u8]) -> Result<Rc<Pool>, Error> {
        let slot = key_slot(key);
        match self.master_of(slot).await? {
            Some(addr) => Ok(self.pool_at(addr)),
            None if !self.is_cluster().await? => Ok(self.single.clone()),
            None => Err(Error::Server(format!(
                "CLUSTERDOWN no master serves slot {slot} (of {key:?})",
                key = String::from_utf8_lossy(key)
            ))),
        }
    }

    /// The master that holds `slot`, if the map says so (`None` for a lone
    /// server).
    pub async fn master_of(&self, slot: u16) -> Result<Option<SocketAddr>, Error> {
        self.discover().await?;
        Ok(match &*self.map.borrow() {
            Map::Slots(ranges) => ranges
                .iter()
                .find(|(first, last, _)| (*first..=*last).contains(&slot))
                .map(|(_, _, addr)| *addr),
            _ => None,
        })
    }

    /// The pool of every master (of the one server, if not a cluster), in
    /// the order of the slots they serve: what a command that is not about
    /// one key (`SCAN`) must visit.
    pub async fn masters(&self) -> Result<Vec<Rc<Pool>>, Error> {
        self.discover().await?;
        let addrs: Vec<SocketAddr> = match &*self.map.borrow() {
            Map::Slots(ranges) => {
                let mut addrs = Vec::new();
                for (_, _, addr) in ranges {
                    if !addrs.contains(addr) {
                        addrs.push(*addr);
                    }
                }
                addrs
            }
            _ => return Ok(vec![self.single.clone()]),
        };
        Ok(addrs.into_iter().map(|a| self.pool_at(a)).collect())
    }

    fn pool_at(&self, addr: SocketAddr) -> Rc<Pool> {
        self.pools
            .borrow_mut()
            .entry(addr)
            .or_insert_with(|| {
                let url = RedisUrl {
                    host: addr.ip().to_string(),
                    port: addr.port(),
                    name: self.url.name.clone(),
                };
                Rc::new(Pool::new(url, self.size))
            })
            .clone()
    }

    // ANCHOR: discover
    /// Asks for the map of slots, unless it is known. A server without
    /// cluster support says so, and is the one node.
    async fn discover(&self) -> Result<(), Error> {
        if !matches!(*self.map.borrow(), Map::Unknown) {
            return Ok(());
        }
        let reply = {
            let mut conn = self.single.get().await?;
            let reply = conn.command(&["CLUSTER", "SLOTS"]).await;
            if !reply.as_ref().is_err_and(Error::is_fatal) {
                conn.release();
            }
            reply
        };
        // A cluster always answers; a server that refuses the command
        // (no cluster support, the command renamed away, an ACL, a proxy)
        // is one node, unless it only asks for a moment (still loading).
        let map = match reply {
            Ok(frame) => Map::Slots(parse_slots(frame, &self.url)?),
            Err(Error::Server(message))
                if !["LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN"]
                    .iter()
                    .any(|p| message.starts_with(p)) =>
            {
                Map::Single
            }
            Err(e) => return Err(e),
        };
        *self.map.borrow_mut() = map;
        Ok(())
    }
    // ANCHOR_END: discover
}

/// `CLUSTER SLOTS`: `[[first, last, [ip, port, id, …], replica…], …]`. An
/// empty ip means the server that answered.
fn parse_slots(frame: Frame, url: &RedisUrl) -> Result<Vec<(u16, u16, SocketAddr)>, Error> {
    let unexpected = |reply: &Frame| Error::Unexpected {
        command: "CLUSTER SLOTS".into(),
        reply: reply.clone(),
    };
    let ranges = frame
        .clone()
        .into_items()
        .ok_or_else(|| unexpected(&frame))?;
    let mut out = Vec::with_capacity(ranges.len());
    for range in ranges {
        let parts = range
            .clone()
            .into_items()
            .ok_or_else(|| unexpected(&range))?;
        let (Some(first), Some(last), Some(master)) = (
            parts.first().and_then(Frame::as_integer),
            parts.get(1).and_then(Frame::as_integer),
            parts.get(2).and_then(|m| m.clone().into_items()),
        ) else {
            return Err(unexpected(&range));
        };
        let ip = match master.first().and_then(Frame::as_str) {
            Some("") | None => url.host.as_str(),
            Some(ip) => ip,
        };
        let port = master.get(1).and_then(Frame::as_integer);
        // A master with no address yet (`?`, mid-failover) or known by a
        // name: its slots are left out of the map, and a key in them is
        // refused for now (CLUSTERDOWN), to be asked about again.
        let addr = match (ip.parse::<std::net::IpAddr>(), port) {
            (Ok(ip), Some(port)) if (1..=i64::from(u16::MAX)).contains(&port) => {
                SocketAddr::new(ip, port as u16)
            }
            _ => continue,
        };
        let in_range = |n: i64| (0..i64::from(SLOTS)).contains(&n);
        if !in_range(first) || !in_range(last) || first > last {
            return Err(unexpected(&range));
        }
        out.push((first as u16, last as u16, addr));
    }
    out.sort_by_key(|(first, ..)| *first);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_cluster_specification() {
        // The specification's own example, and keys checked against
        // `CLUSTER KEYSLOT` on Redis 7.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") % SLOTS);
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
        assert_eq!(key_slot(b"foo{bar}{zap}"), key_slot(b"bar"));
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn a_redirect_is_recognised() {
        assert!(is_redirect(&Error::Server(
            "MOVED 3999 127.0.0.1:6381".into()
        )));
        assert!(is_redirect(&Error::Server(
            "ASK 3999 127.0.0.1:6381".into()
        )));
        assert!(!is_redirect(&Error::Server("ERR unknown command".into())));
    }
}
