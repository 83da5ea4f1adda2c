//! The article's first service: `POST /jobs` validates a job and appends it
//! to the Redis stream, and answers 202 only once Redis has it.

use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use redis_client::{Error as RedisError, Frame, Pool, RedisUrl, Script};
use runtime::{TcpListener, timeout};

use crate::broker::{self, Keys};
use crate::front::{self, Closed};
use crate::http::{Request, Response};
use crate::job::{self, Job};
use crate::shutdown::Shutdown;

/// How long a request waits for Redis before it answers 503.
pub const BROKER_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone, Debug)]
pub struct ApiConfig {
    pub addr: SocketAddr,
    pub broker: RedisUrl,
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
}

/// What the tasks share.
struct State {
    pool: Pool,
    keys: Keys,
    accept: Script,
}

impl Api {
    pub fn bind(config: ApiConfig) -> io::Result<Api> {
        let listener = TcpListener::bind(config.addr).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot listen on {}: {e}", config.addr))
        })?;
        let addr = listener.local_addr()?;
        Ok(Api {
            listener,
            addr,
            config,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Checks that Redis answers, so that a wrong URL is a clear error at
    /// start rather than a 503 on every request.
    pub async fn check_broker(&self) -> Result<(), RedisError> {
        let mut conn = timeout(BROKER_TIMEOUT, self.config.broker.connect())
            .await
            .map_err(|e| RedisError::Io(e.into()))??;
        conn.ping().await
    }

    /// Serves until `shutdown`, then finishes the requests in progress.
    pub async fn serve(self, shutdown: Shutdown) -> Closed {
        let state = Rc::new(State {
            keys: Keys::new(&self.config.broker),
            pool: Pool::new(self.config.broker.clone(), self.config.connections),
            accept: Script::new(broker::ACCEPT),
        });
        front::serve(
            self.listener,
            &shutdown,
            self.config.grace,
            self.config.limits,
            move |request| {
                let state = state.clone();
                async move { route(&state, request).await }
            },
        )
        .await
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
    let json = match serde_json::to_string(&job) {
        Ok(json) => json,
        Err(e) => return Response::error(500, &e.to_string()),
    };
    let id = id.to_string();
    let idempotency = key.map(|k| state.keys.idempotency(k));
    let mut keys = vec![state.keys.stream.as_str(), state.keys.status.as_str()];
    keys.extend(idempotency.as_deref());
    let ttl = broker::KEY_TTL_SECONDS.to_string();
    let args: [&[u8]; 3] = [id.as_bytes(), json.as_bytes(), ttl.as_bytes()];
    let reply = timeout(BROKER_TIMEOUT, async {
        let mut conn = state.pool.get().await?;
        let reply = state.accept.invoke(&mut conn, &keys, &args).await?;
        conn.release(); // only a connection whose reply was read is reused
        Ok::<_, RedisError>(reply)
    })
    .await;
    let reply = match reply {
        Ok(Ok(reply)) => reply,
        Ok(Err(e)) => return unavailable(&state.pool, &e.to_string()),
        Err(elapsed) => return unavailable(&state.pool, &elapsed.to_string()),
    };
    let stored = reply.into_items().and_then(|items| {
        let answer = items.first()?.as_integer()?;
        let job: Job = serde_json::from_slice(items.get(1)?.as_bytes()?).ok()?;
        Some((answer, job))
    });
    match stored {
        Some((2, earlier)) => Response::error(
            422,
            &format!(
                "this Idempotency-Key was used for another job (id {}); a retry must send \
                 the same job, and a new job needs a new key",
                earlier.id
            ),
        ),
        Some((answer, job)) => {
            if answer == 1 {
                log::info!("queued job {}", job.id);
            } else {
                log::info!(
                    "job {} was already queued under its idempotency key",
                    job.id
                );
            }
            match serde_json::to_string(&job) {
                Ok(body) => Response::json(202, body),
                Err(e) => Response::error(500, &e.to_string()),
            }
        }
        None => Response::error(
            500,
            "the broker's reply to the accept script has a bad shape",
        ),
    }
}
// ANCHOR_END: post

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

/// `GET /jobs/ID`: `queued` until a `store` process has committed it,
/// then `stored`; `failed` if the store could not (the dead-letter stream
/// and the store's log say why).
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
        Ok(Ok(Frame::Null)) => Response::error(404, &format!("no job {id}")),
        Ok(Ok(frame)) => match frame.as_str() {
            Some(status) => Response::json(
                200,
                serde_json::json!({ "id": id, "status": status }).to_string(),
            ),
            None => Response::error(500, "the job's status has a bad shape"),
        },
        Ok(Err(e)) => unavailable(&state.pool, &e.to_string()),
        Err(elapsed) => unavailable(&state.pool, &elapsed.to_string()),
    }
}
