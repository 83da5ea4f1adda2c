//! A few PostgreSQL connections shared by a server's tasks: the api asks
//! the table about a job now and then, from whichever request needs it.
//!
//! The shape of the Redis client's pool: a task borrows a whole connection
//! for its statement, so replies never mix; the runtime's [`Queue`] of
//! permits caps how many connections exist, and a task beyond the cap
//! waits for one.

use std::cell::RefCell;

use runtime::Queue;

use super::{Client, PgConfig, PgError, Row};

/// Up to `size` connections to one database, opened as needed.
pub struct PgPool {
    config: PgConfig,
    idle: RefCell<Vec<Client>>,
    permits: Queue<()>,
}

/// Gives the permit back however the borrowing task ends, cancelled
/// mid-statement included.
struct Permit<'a>(&'a Queue<()>);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.0.put_nowait(());
    }
}

impl PgPool {
    /// A pool of at most `size` connections to `config`'s database.
    pub fn new(config: PgConfig, size: usize) -> PgPool {
        let permits = Queue::new();
        for _ in 0..size.max(1) {
            permits.put_nowait(());
        }
        PgPool {
            config,
            idle: RefCell::new(Vec::new()),
            permits,
        }
    }

    /// The database the pool connects to.
    pub fn config(&self) -> &PgConfig {
        &self.config
    }

    /// Runs one statement on an idle connection or a new one. The
    /// connection goes back to the pool only if the statement's answer was
    /// read to the end: after a lost connection, or a task cancelled while
    /// the answer may still come, it is closed, so that no later statement
    /// reads another's rows.
    pub async fn query(&self, sql: &str, params: &[Option<&str>]) -> Result<Vec<Row>, PgError> {
        self.permits.get().await;
        let _permit = Permit(&self.permits);
        let idle = self.idle.borrow_mut().pop();
        let mut client = match idle {
            Some(client) => client,
            None => Client::connect(&self.config).await?,
        };
        let result = client.query(sql, params).await;
        match &result {
            Err(e) if e.is_fatal() => {}
            _ => self.idle.borrow_mut().push(client),
        }
        result
    }
}
