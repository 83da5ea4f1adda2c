//! A Redis client on our runtime's [`TcpStream`](runtime::TcpStream): the
//! RESP framing ([`frame`]), a connection that sends commands and pipelines
//! ([`Connection`]), the stream and script commands that the jobs pipeline
//! and the shared crawl frontier use ([`commands`]), a small [`Pool`], and
//! the routing of keys to the masters of a Redis Cluster ([`Cluster`]).
//!
//! It speaks RESP2 and reads RESP3 replies too; it has no `AUTH` or TLS,
//! which neither user needs yet.

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
