//! The api's questions to the table, asked for many requests at once.
//!
//! Every keyed `POST` asks PostgreSQL whether its job is stored already
//! (see `api.rs`). One query per request costs a round trip and a statement
//! each: measured with 50 clients on two cores, it halved the jobs the api
//! queued per second. So requests leave their ids in a queue, and a few
//! lookup tasks each take whatever has gathered, ask for all of it in one
//! `WHERE id = ANY(...)`, and hand each request its answer. While one query
//! is out, the next batch gathers: the busier the api, the bigger the
//! batches, the same trade Nagle's algorithm makes for TCP.
//!
//! A request that gives up (its deadline passed) just drops its end of the
//! handoff; the lookup task, which no request owns, carries on.

use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use runtime::{JoinHandle, Queue, oneshot, spawn};

use crate::job::Job;
use crate::postgres::PgPool;
use crate::table;

/// The most ids in one query.
const MAX_BATCH: usize = 500;

/// What a lookup answers: the stored job, none, or why the table could not
/// say.
pub type Found = Result<Option<Job>, String>;

/// How long a batch of lookups waits for PostgreSQL: as long as the api
/// waits for any service before it answers 503 (its `BROKER_TIMEOUT` is
/// this).
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// A request's id and where its answer goes.
type Asked = (u64, oneshot::Sender<Found>);

/// The lookup tasks and the queue that feeds them. Dropping it cancels the
/// tasks.
pub struct Lookups {
    asked: Rc<Queue<Asked>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Lookups {
    /// Starts `tasks` lookup tasks on `db` (at most one query each at a
    /// time, so at most that many of the pool's connections).
    pub fn start(db: Rc<PgPool>, tasks: usize) -> Lookups {
        let asked = Rc::new(Queue::new());
        let tasks = (0..tasks.max(1))
            .map(|_| spawn(serve(asked.clone(), db.clone())))
            .collect();
        Lookups { asked, tasks }
    }

    /// The job with this id in the table, if the store has put it there.
    pub async fn find(&self, id: u64) -> Found {
        let (tx, rx) = oneshot::channel();
        self.asked.put_nowait((id, tx));
        rx.await
            .map_err(|_| "the lookup was dropped unanswered".to_string())?
    }
}

impl Drop for Lookups {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.cancel();
        }
    }
}

// ANCHOR: serve
/// One lookup task: a batch at a time, for as long as it runs.
async fn serve(asked: Rc<Queue<Asked>>, db: Rc<PgPool>) {
    loop {
        let first = asked.get().await;
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match asked.get_nowait() {
                Some(more) => batch.push(more),
                None => break,
            }
        }
        let found = find_all(&db, batch.iter().map(|(id, _)| *id)).await;
        for (id, answer) in batch {
            let _ = asked.task_done();
            answer.send(match &found {
                Ok(jobs) => jobs.get(&id).cloned().transpose(),
                Err(reason) => Err(reason.clone()),
            });
        }
    }
}
// ANCHOR_END: serve

/// The stored jobs among `ids`, by id: each the job, or why its row is
/// not one (which spoils only that id's answer).
async fn find_all(
    db: &PgPool,
    ids: impl Iterator<Item = u64>,
) -> Result<HashMap<u64, Result<Job, String>>, String> {
    // A PostgreSQL array literal: `{1,2,3}`.
    let list: Vec<String> = ids.map(|id| id.to_string()).collect();
    let array = format!("{{{}}}", list.join(","));
    let params = [Some(array.as_str())];
    let query = db.query(table::FIND_ANY, &params);
    let rows = match runtime::timeout(QUERY_TIMEOUT, query).await {
        Ok(Ok(rows)) => rows,
        Ok(Err(e)) => return Err(e.to_string()),
        Err(elapsed) => return Err(format!("postgres {elapsed}")),
    };
    let mut found = HashMap::with_capacity(rows.len());
    for row in &rows {
        let Some(id) = row.first().and_then(|id| id.as_deref()?.parse().ok()) else {
            return Err("the table answered a row without an id".into());
        };
        found.insert(id, table::job_of(row.get(1..).unwrap_or_default()));
    }
    Ok(found)
}
