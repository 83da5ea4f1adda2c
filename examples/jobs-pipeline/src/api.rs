//! The article's first service: `POST /jobs` validates a job and appends it
//! to the Redis stream, and answers 202 only once Redis has it.
//!
//! Redis is the api's memory of recent jobs; PostgreSQL, where the store
//! puts them, is its memory for good. A job's status and idempotency key
//! leave Redis once the job is stored (the status at once, the key a day
//! later), and the api then asks the table, so an answer does not change
//! when Redis forgets.

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use redis_client::{Error as RedisError, Frame, Pool, RedisUrl, Script};
use runtime::{TcpListener, timeout};

use crate::broker::{self, Keys, MAX_JOB_ID};
use crate::front::{self, Closed};
use crate::http::{Request, Response};
use crate::job::{self, Job};
use crate::lookup::Lookups;
use crate::postgres::{PgConfig, PgPool};
use crate::shutdown::Shutdown;
use crate::table;

/// How long a request waits for Redis, or for PostgreSQL, before it
/// answers 503: the lookups' own limit, one number for both.
pub const BROKER_TIMEOUT: Duration = crate::lookup::QUERY_TIMEOUT;
/// PostgreSQL connections, one per lookup task (see `lookup.rs`): one
/// query is out while the next batch gathers, and a second lets a batch go
/// while the first waits on a slow answer. (With 16, batches were smaller
/// and the api queued fewer jobs per second, not more.)
pub const DB_CONNECTIONS: usize = 2;

#[derive(Clone, Debug)]
pub struct ApiConfig {
    pub addr: SocketAddr,
    pub broker: RedisUrl,
    /// The table the store writes: asked about jobs Redis has forgotten.
    pub db: PgConfig,
    pub grace: Duration,
    /// What one client may hold: request and idle timeouts, connections.
    pub limits: front::Limits,
    /// The most Redis connections the service opens.
    pub connections: usize,
}

/// A bound `api` service.
pub struct Api {
    listener: TcpListener,
    addr: SocketAddr,
    config: ApiConfig,
    state: Rc<State>,
}

/// What the tasks share.
struct State {
    pool: Pool,
    db: Rc<PgPool>,
    /// The tasks that ask the table, once serving.
    lookups: RefCell<Option<Rc<Lookups>>>,
    keys: Keys,
    accept: Script,
}

impl Api {
    pub fn bind(config: ApiConfig) -> io::Result<Api> {
        let listener = TcpListener::bind(config.addr).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot listen on {}: {e}", config.addr))
        })?;
        let addr = listener.local_addr()?;
        let state = Rc::new(State {
            keys: Keys::new(&config.broker),
            pool: Pool::new(config.broker.clone(), config.connections),
            db: Rc::new(PgPool::new(config.db.clone(), DB_CONNECTIONS)),
            lookups: RefCell::new(None),
            accept: Script::new(broker::ACCEPT),
        });
        Ok(Api {
            listener,
            addr,
            config,
            state,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Checks that Redis and PostgreSQL answer, so that a wrong URL is a
    /// clear error at start rather than a 503 on every request, and makes
    /// the table if no store has yet.
    pub async fn check_services(&self) -> Result<(), String> {
        let broker = &self.config.broker;
        let ping = timeout(BROKER_TIMEOUT, async {
            let mut conn = broker.connect().await?;
            conn.ping().await
        })
        .await;
        match ping {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(format!("the broker at {broker} does not answer: {e}")),
            Err(e) => return Err(format!("the broker at {broker} does not answer: {e}")),
        }
        let db = &self.config.db;
        match timeout(BROKER_TIMEOUT, self.state.db.query(table::SCHEMA, &[])).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("the database at {db} does not answer: {e}")),
            Err(e) => Err(format!("the database at {db} does not answer: {e}")),
        }
    }

    /// Serves until `shutdown`, then finishes the requests in progress.
    pub async fn serve(self, shutdown: Shutdown) -> Closed {
        let state = self.state;
        // The lookup tasks live as long as the service.
        *state.lookups.borrow_mut() =
            Some(Rc::new(Lookups::start(state.db.clone(), DB_CONNECTIONS)));
        let served = state.clone();
        let closed = front::serve(
            self.listener,
            &shutdown,
            self.config.grace,
            self.config.limits,
            move |request| {
                let state = served.clone();
                async move { route(&state, request).await }
            },
        )
        .await;
        // Dropped, and so cancelled, once no request is left to ask.
        state.lookups.borrow_mut().take();
        closed
    }
}

async fn route(state: &State, request: Request) -> Response {
    let path = request.path.as_str();
    match (request.method.as_str(), path) {
        ("POST", "/jobs") => post(state, &request).await,
        ("GET", _) if path.starts_with("/jobs/") => status(state, &path["/jobs/".len()..]).await,
        (_, "/jobs") => Response {
            headers: vec![("Allow", "POST".to_string())],
            ..Response::error(405, "POST a job to /jobs; GET /jobs/ID asks about one")
        },
        _ => Response::error(404, "no such path; the API is POST /jobs and GET /jobs/ID"),
    }
}

// ANCHOR: post
/// Validates, then appends with the accept script. The 202 goes out only
/// after Redis answered: a client that has it knows its job is in the
/// stream. A failure is a 503 and, without an idempotency key, the client
/// cannot know whether the job went in; with one it can simply retry.
async fn post(state: &State, request: &Request) -> Response {
    let key = request.idempotency_key.as_deref();
    let id = match broker::job_id(key) {
        Ok(id) => id,
        Err(e) => return Response::error(500, &e),
    };
    let job = match job::validate(&request.body, id) {
        Ok(job) => job,
        Err(message) => return Response::error(400, &message),
    };
    // A job with a key may have been stored long ago, after Redis has
    // forgotten the key: the table is asked first, and what it has is the
    // answer. Only a job it has not got goes on to Redis.
    let accepted = match key {
        None => accept(state, &job, false).await,
        Some(_) => match find(state, id).await {
            Ok(Some(stored)) => Ok(Accepted::Stored(stored)),
            Ok(None) => accept(state, &job, true).await,
            // The pipeline takes jobs while the store's database is away;
            // that is what the stream is for. The store checks the id
            // against the table before it counts a job stored, and sets
            // aside one whose key was used for another job.
            Err(reason) => {
                log::warn!("job {id}: cannot ask the table ({reason}); queued unchecked");
                accept(state, &job, true).await
            }
        },
    };
    let (earlier, what) = match accepted {
        Ok(Accepted::New(job)) => (job, "queued"),
        Ok(Accepted::Queued(earlier)) => (earlier, "already queued"),
        Ok(Accepted::Stored(earlier)) => (earlier, "already stored"),
        Err(response) => return response,
    };
    if earlier != job {
        return Response::error(
            422,
            &format!(
                "this Idempotency-Key was used for another job (id {}); a retry must send \
                 the same job, and a new job needs a new key",
                earlier.id
            ),
        );
    }
    log::info!("job {id}: {what}");
    match serde_json::to_string(&earlier) {
        Ok(body) => Response::json(202, body),
        Err(e) => Response::error(500, &e.to_string()),
    }
}
// ANCHOR_END: post

/// What the accept script found, or the table.
enum Accepted {
    /// Appended now.
    New(Job),
    /// The key's job, still in Redis: the same job or (a reuse) another.
    Queued(Job),
    /// The key's job, in the table.
    Stored(Job),
}

/// Runs the accept script; an unavailable broker is a 503.
async fn accept(state: &State, job: &Job, keyed: bool) -> Result<Accepted, Response> {
    let json = serde_json::to_string(job).map_err(|e| Response::error(500, &e.to_string()))?;
    let id = job.id.to_string();
    let record = keyed.then(|| state.keys.idempotency(job.id));
    let mut keys = vec![state.keys.stream.as_str(), state.keys.status.as_str()];
    keys.extend(record.as_deref());
    let args: [&[u8]; 2] = [id.as_bytes(), json.as_bytes()];
    let reply = timeout(BROKER_TIMEOUT, async {
        let mut conn = state.pool.get().await?;
        let reply = state.accept.invoke(&mut conn, &keys, &args).await?;
        conn.release(); // only a connection whose reply was read is reused
        Ok::<_, RedisError>(reply)
    })
    .await;
    let reply = match reply {
        Ok(Ok(reply)) => reply,
        Ok(Err(e)) => return Err(unavailable(&state.pool, &e.to_string())),
        Err(elapsed) => return Err(unavailable(&state.pool, &elapsed.to_string())),
    };
    let items = reply.into_items().unwrap_or_default();
    let job = || -> Option<Job> { serde_json::from_slice(items.get(1)?.as_bytes()?).ok() };
    let accepted = match items.first().and_then(Frame::as_integer) {
        Some(1) => job().map(Accepted::New),
        Some(0 | 2) => job().map(Accepted::Queued),
        _ => None,
    };
    accepted.ok_or_else(|| {
        Response::error(
            500,
            "the broker's reply to the accept script has a bad shape",
        )
    })
}

/// The job with this id in the table, if the store has put it there, or
/// why the table cannot say.
/// Asked with the other requests of the moment (see `lookup.rs`).
async fn find(state: &State, id: u64) -> Result<Option<Job>, String> {
    // Cloned out, so that no borrow is held across the wait.
    let lookups = state.lookups.borrow().clone();
    match lookups {
        Some(lookups) => lookups.find(id).await,
        None => Err("the service is not serving".into()),
    }
}

fn unavailable(pool: &Pool, reason: &str) -> Response {
    log::warn!("cannot reach the broker: {reason}");
    Response::error(
        503,
        &format!(
            "the broker at {} is unavailable ({reason}); the job was not accepted, retry later",
            pool.url()
        ),
    )
}

fn db_unavailable(db: &PgPool, reason: &str) -> Response {
    log::warn!("cannot reach the database: {reason}");
    Response::error(
        503,
        &format!(
            "the database at {} is unavailable ({reason}); retry later",
            db.config()
        ),
    )
}

/// `GET /jobs/ID`: `queued` until a `store` process has committed it,
/// then `stored`; `failed` if the store could not (the dead-letter stream
/// and the store's log say why). Redis holds the first and the last; a
/// stored job has left Redis, and the table answers.
async fn status(state: &State, id: &str) -> Response {
    let Ok(id) = id.parse::<u64>() else {
        return Response::error(400, "a job id is a number");
    };
    let field = id.to_string();
    let reply = timeout(BROKER_TIMEOUT, async {
        let mut conn = state.pool.get().await?;
        let reply = conn
            .command(&["HGET", state.keys.status.as_str(), field.as_str()])
            .await?;
        conn.release();
        Ok::<_, RedisError>(reply)
    })
    .await;
    match reply {
        // The api makes ids of 53 bits (`broker::job_id`), and no other
        // number names a stored job: it never reaches the lookups batched
        // for the table, where one past bigint would fail the whole batch.
        // (Redis may still know one as failed: another producer's entry.)
        Ok(Ok(Frame::Null)) if !(1..=MAX_JOB_ID).contains(&id) => {
            Response::error(404, &format!("no job {id}"))
        }
        Ok(Ok(Frame::Null)) => match find(state, id).await {
            Ok(Some(_)) => status_of(id, "stored"),
            Ok(None) => Response::error(404, &format!("no job {id}")),
            Err(reason) => db_unavailable(&state.db, &reason),
        },
        Ok(Ok(frame)) => match frame.as_str() {
            Some(status) => status_of(id, status),
            None => Response::error(500, "the job's status has a bad shape"),
        },
        Ok(Err(e)) => unavailable(&state.pool, &e.to_string()),
        Err(elapsed) => unavailable(&state.pool, &elapsed.to_string()),
    }
}

fn status_of(id: u64, status: &str) -> Response {
    Response::json(
        200,
        serde_json::json!({ "id": id, "status": status }).to_string(),
    )
}
