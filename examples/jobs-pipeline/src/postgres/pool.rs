//! A few PostgreSQL connections shared by a server's tasks: the api asks
//! the table about a job now and then, from whichever request needs it.
//!
//! The runtime's [`runtime::Pool`], as the Redis client uses it: a task
//! borrows a whole connection for its statement, so replies never mix, and
//! a task beyond the cap waits for one.

use super::{Client, PgConfig, PgError, Row};

/// Up to `size` connections to one database, opened as needed.
pub struct PgPool {
    config: PgConfig,
    clients: runtime::Pool<Client>,
}

impl PgPool {
    /// A pool of at most `size` connections to `config`'s database.
    pub fn new(config: PgConfig, size: usize) -> PgPool {
        PgPool {
            config,
            clients: runtime::Pool::new(size),
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
        let mut client = self.clients.get(|| Client::connect(&self.config)).await?;
        let result = client.query(sql, params).await;
        match &result {
            Err(e) if e.is_fatal() => {} // dropped: closed
            _ => client.release(),
        }
        result
    }
}
