//! A small pool of connections, for a server whose many tasks each need to
//! send a command now and then: the runtime's [`runtime::Pool`] of Redis
//! connections to one server.
//!
//! Each task borrows a whole connection for its command, so replies never
//! mix. A task beyond the cap waits for a place. Give a connection back
//! with [`Pooled::release`](runtime::Pooled::release) once its reply is
//! read: a guard dropped any other way (an error, a task cancelled
//! mid-command whose reply may still come) closes the connection, so no
//! task ever reads another's reply.

use crate::connection::{Connection, Error};
use crate::url::RedisUrl;

/// A borrowed connection.
pub type Pooled<'a> = runtime::Pooled<'a, Connection>;

/// Up to `size` connections to one server.
#[derive(Debug)]
pub struct Pool {
    url: RedisUrl,
    connections: runtime::Pool<Connection>,
}

impl Pool {
    /// A pool of at most `size` connections to `url`, opened as needed.
    pub fn new(url: RedisUrl, size: usize) -> Pool {
        Pool {
            url,
            connections: runtime::Pool::new(size),
        }
    }

    /// The server the pool connects to.
    pub fn url(&self) -> &RedisUrl {
        &self.url
    }

    /// A connection: an idle one, or a new one.
    pub async fn get(&self) -> Result<Pooled<'_>, Error> {
        self.connections.get(|| self.url.connect()).await
    }
}
