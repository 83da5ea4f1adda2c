//! The keep-alive pool: idle connections, kept per origin, handed out again
//! instead of opening new ones. aiohttp's `ClientSession` does this for the
//! chapter's crawler; the chapter mentions it in one comment.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use super::conn::Connection;

/// Where a connection goes: scheme, host and port. Two URLs on the same
/// origin can share a connection.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

// ANCHOR: pool
pub(crate) struct Pool {
    idle: RefCell<HashMap<Origin, Vec<Connection>>>,
    /// Keep at most this many idle connections per origin. A crawl never has
    /// more than `max_tasks` requests in flight, so more would never be used.
    max_idle: usize,
    opened: Cell<u64>,
}

impl Pool {
    pub(crate) fn new(max_idle: usize) -> Pool {
        Pool {
            idle: RefCell::new(HashMap::new()),
            max_idle,
            opened: Cell::new(0),
        }
    }

    /// An idle connection to `origin` that still looks alive, if there is
    /// one. The most recently used comes first: it is the least likely to
    /// have been closed by the server in the meantime.
    pub(crate) fn take(&self, origin: &Origin) -> Option<Connection> {
        let mut idle = self.idle.borrow_mut();
        let list = idle.get_mut(origin)?;
        while let Some(mut conn) = list.pop() {
            if conn.is_reusable() {
                return Some(conn);
            }
            log::debug!("dropping a pooled connection to {origin:?}: the server closed it");
        }
        None
    }

    /// Gives a connection back after a complete response.
    pub(crate) fn put(&self, origin: Origin, conn: Connection) {
        let mut idle = self.idle.borrow_mut();
        let list = idle.entry(origin).or_default();
        if list.len() < self.max_idle {
            list.push(conn);
        }
    }
    // ANCHOR_END: pool

    pub(crate) fn note_opened(&self) {
        self.opened.set(self.opened.get() + 1);
    }

    /// Connections opened so far.
    pub(crate) fn opened(&self) -> u64 {
        self.opened.get()
    }

    /// Idle connections held right now, over all origins.
    pub(crate) fn idle(&self) -> usize {
        self.idle.borrow().values().map(Vec::len).sum()
    }
}
