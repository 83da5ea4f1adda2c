//! The commands the jobs pipeline and the shared frontier use, with their
//! replies decoded into Rust types. Anything else goes through
//! [`Connection::command`].

use std::cell::RefCell;
use std::time::Duration;

use crate::connection::{Connection, Error};
use crate::frame::Frame;

/// One entry of a stream: its id (`1700000000000-0`) and its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamEntry {
    /// The entry's id, `<ms>-<seq>`.
    pub id: String,
    /// Its field-value pairs, in order.
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
}

impl StreamEntry {
    /// The value of the field `name`, if the entry has it.
    pub fn field(&self, name: &str) -> Option<&[u8]> {
        self.fields
            .iter()
            .find(|(k, _)| k == name.as_bytes())
            .map(|(_, v)| v.as_slice())
    }
}

/// What `XAUTOCLAIM` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimed {
    /// Where the next scan of the pending list starts; `0-0` when it went
    /// all the way round.
    pub next: String,
    /// The entries claimed.
    pub entries: Vec<StreamEntry>,
    /// Pending ids whose entries were deleted from the stream meanwhile.
    pub deleted: Vec<String>,
}

fn unexpected(command: &str, reply: Frame) -> Error {
    Error::Unexpected {
        command: command.to_string(),
        reply,
    }
}

fn millis(d: Duration) -> String {
    d.as_millis().to_string()
}

impl Connection {
    /// `PING`: is the server there?
    pub async fn ping(&mut self) -> Result<(), Error> {
        match self.command(&["PING"]).await? {
            Frame::Simple(s) if s == "PONG" => Ok(()),
            other => Err(unexpected("PING", other)),
        }
    }

    /// `GET key`.
    pub async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        match self.command(&["GET", key]).await? {
            Frame::Bulk(value) => Ok(Some(value)),
            Frame::Null => Ok(None),
            other => Err(unexpected("GET", other)),
        }
    }

    /// `SET key value NX [PX ttl]`: sets the key only if it does not exist,
    /// and says whether it did. The building block of idempotency keys and
    /// locks.
    pub async fn set_nx(
        &mut self,
        key: &str,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Result<bool, Error> {
        let mut args: Vec<&[u8]> = vec![b"SET", key.as_bytes(), value, b"NX"];
        let ttl = ttl.map(millis);
        if let Some(ttl) = &ttl {
            args.extend([&b"PX"[..], ttl.as_bytes()]);
        }
        match self.command(&args).await? {
            Frame::Simple(s) if s == "OK" => Ok(true),
            Frame::Null => Ok(false),
            other => Err(unexpected("SET NX", other)),
        }
    }

    /// `XADD stream * field value …`: appends an entry and returns the id
    /// Redis gave it. When this returns, the entry is in the server's
    /// memory (and in its append-only file, if that is on).
    pub async fn xadd(&mut self, stream: &str, fields: &[(&str, &[u8])]) -> Result<String, Error> {
        let mut args: Vec<&[u8]> = vec![b"XADD", stream.as_bytes(), b"*"];
        for (name, value) in fields {
            args.extend([name.as_bytes(), value]);
        }
        match self.command(&args).await? {
            Frame::Bulk(id) => {
                String::from_utf8(id).map_err(|e| unexpected("XADD", Frame::Bulk(e.into_bytes())))
            }
            other => Err(unexpected("XADD", other)),
        }
    }

    /// `XGROUP CREATE stream group start MKSTREAM`. Returns `false` if the
    /// group already exists (`BUSYGROUP`), which for a service starting up
    /// is the normal case, not an error.
    pub async fn xgroup_create(
        &mut self,
        stream: &str,
        group: &str,
        start: &str,
    ) -> Result<bool, Error> {
        match self
            .command(&["XGROUP", "CREATE", stream, group, start, "MKSTREAM"])
            .await
        {
            Ok(_) => Ok(true),
            Err(Error::Server(message)) if message.starts_with("BUSYGROUP") => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `XREADGROUP GROUP group consumer COUNT n [BLOCK ms] STREAMS stream >`:
    /// up to `count` entries no consumer of the group has been given yet.
    /// They become pending for `consumer` until it acknowledges them.
    /// With `block`, waits that long for entries; an empty vector means none
    /// came.
    pub async fn xreadgroup(
        &mut self,
        group: &str,
        consumer: &str,
        stream: &str,
        count: usize,
        block: Option<Duration>,
    ) -> Result<Vec<StreamEntry>, Error> {
        let count = count.to_string();
        let mut args = vec!["XREADGROUP", "GROUP", group, consumer, "COUNT", &count];
        let block = block.map(millis);
        if let Some(block) = &block {
            args.extend(["BLOCK", block]);
        }
        args.extend(["STREAMS", stream, ">"]);
        let reply = self.command(&args).await?;
        if reply == Frame::Null {
            return Ok(Vec::new()); // the block timed out
        }
        // [[stream, entries], …] in RESP2, {stream: entries, …} in RESP3.
        let lists = match reply {
            Frame::Map(pairs) => pairs.into_iter().map(|(_, list)| list).collect(),
            Frame::Array(streams) => {
                let mut lists = Vec::new();
                for stream in streams {
                    match stream {
                        Frame::Array(pair) if pair.len() == 2 => {
                            lists.extend(pair.into_iter().nth(1))
                        }
                        other => return Err(unexpected("XREADGROUP", other)),
                    }
                }
                lists
            }
            other => return Err(unexpected("XREADGROUP", other)),
        };
        let mut entries = Vec::new();
        for list in lists {
            match list {
                Frame::Array(list) => entries.extend(decode_entries("XREADGROUP", list)?),
                other => return Err(unexpected("XREADGROUP", other)),
            }
        }
        Ok(entries)
    }

    /// `XACK stream group id …`: the entries are done; returns how many
    /// were pending.
    pub async fn xack(&mut self, stream: &str, group: &str, ids: &[&str]) -> Result<i64, Error> {
        let mut args = vec!["XACK", stream, group];
        args.extend_from_slice(ids);
        match self.command(&args).await? {
            Frame::Integer(n) => Ok(n),
            other => Err(unexpected("XACK", other)),
        }
    }

    /// `XAUTOCLAIM stream group consumer min-idle start COUNT n`: takes over
    /// up to `count` entries that some consumer of the group was given but
    /// has not acknowledged for `min_idle`: the way a crashed consumer's
    /// work is found again.
    pub async fn xautoclaim(
        &mut self,
        stream: &str,
        group: &str,
        consumer: &str,
        min_idle: Duration,
        start: &str,
        count: usize,
    ) -> Result<Claimed, Error> {
        let (idle, count) = (millis(min_idle), count.to_string());
        let args = [
            "XAUTOCLAIM",
            stream,
            group,
            consumer,
            &idle,
            start,
            "COUNT",
            &count,
        ];
        let reply = self.command(&args).await?;
        let mut items = reply
            .clone()
            .into_items()
            .ok_or_else(|| unexpected("XAUTOCLAIM", reply.clone()))?
            .into_iter();
        let (Some(next), Some(Frame::Array(list))) = (items.next(), items.next()) else {
            return Err(unexpected("XAUTOCLAIM", reply));
        };
        let next = next
            .as_str()
            .ok_or_else(|| unexpected("XAUTOCLAIM", reply.clone()))?
            .to_string();
        // Redis 6.2 sends a deleted entry as a null in the list; 7.0 moves
        // it to a third element.
        let list = list.into_iter().filter(|f| *f != Frame::Null).collect();
        let entries = decode_entries("XAUTOCLAIM", list)?;
        let deleted = match items.next() {
            Some(Frame::Array(ids)) => ids
                .iter()
                .filter_map(|id| id.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        Ok(Claimed {
            next,
            entries,
            deleted,
        })
    }

    /// `EVAL script numkeys key … arg …`.
    pub async fn eval(
        &mut self,
        script: &str,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Frame, Error> {
        let numkeys = keys.len().to_string();
        let mut all: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), numkeys.as_bytes()];
        all.extend(keys.iter().map(|k| k.as_bytes()));
        all.extend_from_slice(args);
        self.command(&all).await
    }

    /// `EVALSHA sha numkeys key … arg …`.
    pub async fn evalsha(
        &mut self,
        sha: &str,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Frame, Error> {
        let numkeys = keys.len().to_string();
        let mut all: Vec<&[u8]> = vec![b"EVALSHA", sha.as_bytes(), numkeys.as_bytes()];
        all.extend(keys.iter().map(|k| k.as_bytes()));
        all.extend_from_slice(args);
        self.command(&all).await
    }
}

/// Decodes `[[id, [field, value, …]], …]`.
fn decode_entries(command: &str, list: Vec<Frame>) -> Result<Vec<StreamEntry>, Error> {
    let mut entries = Vec::with_capacity(list.len());
    for entry in list {
        let bad = || unexpected(command, entry.clone());
        let Frame::Array(parts) = &entry else {
            return Err(bad());
        };
        let (Some(id), Some(fields)) = (parts.first().and_then(Frame::as_str), parts.get(1)) else {
            return Err(bad());
        };
        let flat = fields.clone().into_items().ok_or_else(bad)?;
        let mut fields = Vec::with_capacity(flat.len() / 2);
        for pair in flat.chunks(2) {
            let (Some(k), Some(v)) = (
                pair.first().and_then(Frame::as_bytes),
                pair.get(1).and_then(Frame::as_bytes),
            ) else {
                return Err(bad());
            };
            fields.push((k.to_vec(), v.to_vec()));
        }
        entries.push(StreamEntry {
            id: id.to_string(),
            fields,
        });
    }
    Ok(entries)
}

/// A Lua script run with `EVALSHA`, so that only its 40-byte digest crosses
/// the network each time. The server caches scripts by digest; after a
/// restart it answers `NOSCRIPT`, and we send the source once more with
/// `EVAL`, which caches it again.
pub struct Script {
    source: &'static str,
    sha: RefCell<Option<String>>,
}

impl Script {
    /// A script with this Lua source.
    pub const fn new(source: &'static str) -> Script {
        Script {
            source,
            sha: RefCell::new(None),
        }
    }

    /// The Lua source.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Runs the script with `keys` and `args`. Redis runs a script
    /// atomically: no other client's command runs in the middle of it.
    pub async fn invoke(
        &self,
        conn: &mut Connection,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Frame, Error> {
        let sha = self.sha.borrow().clone();
        let sha = match sha {
            Some(sha) => sha,
            None => {
                let reply = conn.command(&["SCRIPT", "LOAD", self.source]).await?;
                let sha = reply
                    .as_str()
                    .ok_or_else(|| unexpected("SCRIPT LOAD", reply.clone()))?
                    .to_string();
                *self.sha.borrow_mut() = Some(sha.clone());
                sha
            }
        };
        match conn.evalsha(&sha, keys, args).await {
            Err(Error::Server(message)) if message.starts_with("NOSCRIPT") => {
                conn.eval(self.source, keys, args).await
            }
            other => other,
        }
    }
}
