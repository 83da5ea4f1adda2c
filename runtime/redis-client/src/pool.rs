//! A small pool of connections, for a server whose many tasks each need to
//! send a command now and then.
//!
//! Each task borrows a whole connection for its command, so replies never
//! mix. The pool caps how many connections exist; a task beyond the cap
//! waits in the runtime's [`Queue`] of permits, the chapter's joinable
//! queue used as a semaphore.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

use runtime::Queue;

use crate::connection::{Connection, Error};
use crate::url::RedisUrl;

/// Up to `size` connections to one server.
pub struct Pool {
    url: RedisUrl,
    idle: RefCell<Vec<Connection>>,
    permits: Queue<()>,
}

impl Pool {
    /// A pool of at most `size` connections to `url`, opened as needed.
    pub fn new(url: RedisUrl, size: usize) -> Pool {
        let permits = Queue::new();
        for _ in 0..size.max(1) {
            permits.put_nowait(());
        }
        Pool {
            url,
            idle: RefCell::new(Vec::new()),
            permits,
        }
    }

    /// The server the pool connects to.
    pub fn url(&self) -> &RedisUrl {
        &self.url
    }

    /// A connection: an idle one, or a new one. Give it back with
    /// [`Pooled::release`] once its reply is read; dropping the guard
    /// instead closes it.
    pub async fn get(&self) -> Result<Pooled<'_>, Error> {
        self.permits.get().await;
        let idle = self.idle.borrow_mut().pop();
        let conn = match idle {
            Some(conn) => conn,
            None => match self.url.connect().await {
                Ok(conn) => conn,
                Err(e) => {
                    self.permits.put_nowait(());
                    return Err(e);
                }
            },
        };
        Ok(Pooled {
            pool: self,
            conn: Some(conn),
        })
    }
}

/// A borrowed connection.
pub struct Pooled<'a> {
    pool: &'a Pool,
    conn: Option<Connection>,
}

impl Pooled<'_> {
    /// Returns the connection to the pool for the next task. Only a caller
    /// that read its reply may do this: a guard dropped any other way (an
    /// error, a task cancelled mid-command whose reply may still come)
    /// closes the connection, so no task ever reads another's reply.
    pub fn release(mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.idle.borrow_mut().push(conn);
        }
    }
}

impl Deref for Pooled<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        // Only `discard` (which consumes the guard) and `drop` take it.
        self.conn.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        // `release` took the connection already, or it closes here.
        self.pool.permits.put_nowait(());
    }
}
