//! The service: an HTTP front that validates jobs and queues them, and a
//! consumer task that stores them. The connections are the front's
//! ([`front::serve`]), which the `api` service shares.

use std::cell::{Cell, RefCell};
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use runtime::{Queue, TcpListener, oneshot, spawn};

use crate::front::{self, Limits};
use crate::http::{Request, Response};
use crate::job::{self, Job};
use crate::shutdown::Shutdown;
use crate::store::Store;

/// How to run the service.
#[derive(Clone, Debug)]
pub struct Config {
    pub addr: SocketAddr,
    /// The JSON Lines file the jobs go to.
    pub store: PathBuf,
    /// How long requests in progress at shutdown may take to finish.
    pub grace: Duration,
    /// What one client may hold: request and idle timeouts, connections.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            store: PathBuf::from("jobs.jsonl"),
            grace: Duration::from_secs(5),
            limits: Limits::default(),
        }
    }
}

/// What happened, for the report at exit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Jobs stored during this run.
    pub stored: u64,
    /// Jobs refused with 507 because the store could not write them.
    pub failed: u64,
    /// Jobs in the store at the end, from earlier runs too.
    pub total: usize,
    /// Connections that were waiting for a request at shutdown, and closed.
    pub idle_closed: usize,
    /// Connections that were in the middle of a request at shutdown, and
    /// finished it.
    pub finished: usize,
    /// Connections still busy when the grace period ran out, and cut off.
    pub cut_off: usize,
}

/// What the tasks share. One thread, so `Cell`s and `RefCell`s, never
/// borrowed across an `.await`.
struct Service {
    /// The article's Kafka topic.
    queue: Queue<Pending>,
    store: RefCell<Store>,
    /// `None` once every id is used: new jobs are refused rather than given
    /// an id that wrapped round to one already stored.
    next_id: Cell<Option<u64>>,
    stored: Cell<u64>,
    failed: Cell<u64>,
}

/// A job on its way to the store, and the request that waits to hear it
/// was stored: a 202 means the job is in the file.
struct Pending {
    job: Job,
    stored: oneshot::Sender<Result<(), String>>,
}

/// A bound service, ready to [`serve`](Server::serve).
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    store: Store,
    grace: Duration,
    limits: Limits,
}

impl Server {
    /// Binds the port and opens the store. Needs no runtime, so a program
    /// can print the address before it starts one.
    pub fn bind(config: Config) -> io::Result<Server> {
        let listener = TcpListener::bind(config.addr).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot listen on {}: {e}", config.addr))
        })?;
        let addr = listener.local_addr()?;
        let store = Store::open(&config.store)?;
        Ok(Server {
            listener,
            addr,
            store,
            grace: config.grace,
            limits: config.limits,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    // ANCHOR: serve
    /// Serves until `shutdown` is triggered, then stops accepting, lets the
    /// requests in progress finish (the front: close the idle connections,
    /// give the busy ones `grace`), and waits until every accepted job is
    /// stored.
    pub async fn serve(self, shutdown: Shutdown) -> io::Result<Summary> {
        let Server {
            listener,
            store,
            grace,
            limits,
            ..
        } = self;
        let service = Rc::new(Service {
            queue: Queue::new(),
            next_id: Cell::new(store.next_id()),
            store: RefCell::new(store),
            stored: Cell::new(0),
            failed: Cell::new(0),
        });
        let consumer = spawn(consume(service.clone()));
        let handler_service = service.clone();
        let closed = front::serve(listener, &shutdown, grace, limits, move |request| {
            let service = handler_service.clone();
            async move { route(&request, &service).await }
        })
        .await;
        // A request still waiting for its job to be stored is in the queue:
        // wait until the consumer has marked each one done.
        service.queue.join().await;
        consumer.cancel(); // parked in `get`, like the crawler's workers
        let store = service.store.borrow();
        store.sync()?;
        Ok(Summary {
            stored: service.stored.get(),
            failed: service.failed.get(),
            total: store.jobs().len(),
            idle_closed: closed.idle_closed,
            finished: closed.finished,
            cut_off: closed.cut_off,
        })
    }
    // ANCHOR_END: serve
}

/// Binds, runs the service on a new runtime until `shutdown`, and returns
/// the summary. `on_ready` sees the bound server first, to learn its
/// address.
pub fn run(
    config: Config,
    shutdown: Shutdown,
    on_ready: impl FnOnce(&Server),
) -> io::Result<Summary> {
    let server = Server::bind(config)?;
    on_ready(&server);
    runtime::run_until_complete(server.serve(shutdown))?
}

// ANCHOR: consume
/// The article's second service: take each job off the queue and store it.
async fn consume(service: Rc<Service>) {
    loop {
        let Pending { job, stored } = service.queue.get().await;
        let id = job.id;
        let result = service.store.borrow_mut().append(job);
        match &result {
            Ok(()) => {
                service.stored.set(service.stored.get() + 1);
                log::info!("stored job {id}");
            }
            // Its request answers 507: the client knows it is not stored.
            // Counted, and the exit status says the store failed.
            Err(e) => {
                service.failed.set(service.failed.get() + 1);
                log::error!("could not store job {id}: {e}");
            }
        }
        stored.send(result.map_err(|e| e.to_string()));
        if let Err(e) = service.queue.task_done() {
            log::error!("{e}");
        }
    }
}
// ANCHOR_END: consume

// ANCHOR: route
async fn route(request: &Request, service: &Service) -> Response {
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/jobs") => post_job(&request.body, service).await,
        ("GET", "/jobs") => list_jobs(&request.query, service),
        (_, "/jobs") => Response {
            headers: vec![("Allow", "GET, POST".to_string())],
            ..Response::error(405, "use GET or POST on /jobs")
        },
        _ => Response::error(404, "no such path; the API is GET and POST /jobs"),
    }
}

/// Jobs listed per page by default, and at most.
const PAGE: usize = 100;
const MAX_PAGE: usize = 1000;

/// `GET /jobs?after=ID&limit=N`: the stored jobs with ids above `after`, in
/// the order they were stored, `limit` of them (100 by default, 1,000 at
/// most). A page is one response of bounded size, whatever the store holds:
/// a client that asks for the list and never reads it holds a page, not
/// the whole store. A `Link: <...>; rel="next"` header names the next page.
fn list_jobs(query: &str, service: &Service) -> Response {
    let mut after = 0;
    let mut limit = PAGE;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let parsed = match name {
            "after" => value.parse().map(|v| after = v).is_ok(),
            "limit" => value
                .parse()
                .ok()
                .filter(|n| (1..=MAX_PAGE).contains(n))
                .map(|n| limit = n)
                .is_some(),
            _ => false,
        };
        if !parsed {
            return Response::error(
                400,
                &format!("bad query {pair:?}: use after=ID and limit=1 to {MAX_PAGE}"),
            );
        }
    }
    let store = service.store.borrow();
    let mut page = store.jobs().iter().filter(|job| job.id > after);
    let jobs: Vec<&Job> = page.by_ref().take(limit).collect();
    let more = page.next().is_some();
    let body = match serde_json::to_string(&jobs) {
        Ok(body) => body,
        Err(e) => return Response::error(500, &e.to_string()),
    };
    let mut response = Response::json(200, body);
    if let (true, Some(last)) = (more, jobs.last()) {
        let next = format!("</jobs?after={}&limit={limit}>; rel=\"next\"", last.id);
        response.headers.push(("Link", next));
    }
    response
}

/// The article's `jobsPostHandler`, with a schema check in front: a bad job
/// gets a 400 and never reaches the queue. A good one is answered once the
/// consumer has stored it: 202, or 507 if the store could not write it.
async fn post_job(body: &[u8], service: &Service) -> Response {
    // No id left: refuse, rather than wrap round to an id already stored.
    let Some(id) = service.next_id.get() else {
        return Response::error(
            507,
            "the store has used every job id; it accepts no new jobs",
        );
    };
    let job = match job::validate(body, id) {
        Ok(job) => job,
        Err(message) => return Response::error(400, &message),
    };
    let answer = match serde_json::to_string(&job) {
        Ok(answer) => answer,
        Err(e) => return Response::error(500, &e.to_string()),
    };
    service.next_id.set(id.checked_add(1));
    let (stored, answered) = oneshot::channel();
    service.queue.put_nowait(Pending { job, stored });
    match answered.await {
        // 202 Accepted, as the article answers: the job is in the store's
        // file, for the consumer side to act on.
        Ok(Ok(())) => Response::json(202, answer),
        Ok(Err(e)) => Response::error(
            507,
            &format!("the store could not write the job, which is not stored: {e}"),
        ),
        Err(oneshot::Closed) => Response::error(503, "the service stopped; the job is not stored"),
    }
}
// ANCHOR_END: route
