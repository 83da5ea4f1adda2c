//! A Redis client on our runtime's [`TcpStream`](runtime::TcpStream): the
//! RESP framing ([`frame`]), a connection that sends commands and pipelines
//! ([`Connection`]), the stream and script commands that the jobs pipeline
//! and the shared crawl frontier use ([`commands`]), a small [`Pool`], and
//! the routing of keys to the masters of a Redis Cluster ([`Cluster`]).
//!
//! It speaks RESP2 and reads RESP3 replies too; it has no `AUTH` or TLS,
//! which neither user needs yet.
//!
//! | module | holds |
//! |---|---|
//! | `frame` | RESP, the Redis serialization protocol: one reply is one `Frame` (after mini-redis's `frame.rs`) |
//! | `connection` | one connection: commands out, their replies in order; pipelines |
//! | `commands` | the commands the jobs pipeline and the shared frontier use, their replies decoded |
//! | `pool` | a few connections shared by a server's tasks |
//! | `cluster` | Redis Cluster: which master holds a key's slot, and following `MOVED` and `ASK` |
//! | `url` | `redis://HOST:PORT/NAME`: the server, and the name a program keeps its keys under |
//! | `test_server` | a real `redis-server` (or a cluster) on a free port, for tests |

#![warn(missing_docs)]

pub mod cluster;
pub mod commands;
pub mod connection;
pub mod frame;
pub mod pool;
#[cfg(feature = "test-server")]
pub mod test_server;
pub mod url;

pub use cluster::{Cluster, is_redirect, key_slot};
pub use commands::{Claimed, Script, StreamEntry};
pub use connection::{Connection, Error};
pub use frame::Frame;
pub use pool::{Pool, Pooled};
#[cfg(feature = "test-server")]
pub use test_server::{RedisCluster, RedisServer};
pub use url::RedisUrl;
