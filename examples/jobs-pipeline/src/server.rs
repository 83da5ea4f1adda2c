//! The service: an HTTP front that validates jobs and queues them, and a
//! consumer task that stores them.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::{Future, poll_fn};
use std::io;
use std::net::{Shutdown as Half, SocketAddr};
use std::path::PathBuf;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use runtime::{JoinHandle, Queue, TcpListener, TcpStream, oneshot, sleep, spawn, timeout};

use crate::http::{self, Request, Response};
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
}

impl Default for Config {
    fn default() -> Config {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            store: PathBuf::from("jobs.jsonl"),
            grace: Duration::from_secs(5),
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
    /// Set at shutdown: connections finish their request and close.
    closing: Cell<bool>,
    stored: Cell<u64>,
    failed: Cell<u64>,
    connections: RefCell<BTreeMap<u64, Connection>>,
    next_connection: Cell<u64>,
}

/// A job on its way to the store, and the request that waits to hear it
/// was stored: a 202 means the job is in the file.
struct Pending {
    job: Job,
    stored: oneshot::Sender<Result<(), String>>,
}

/// An open connection, as shutdown sees it.
struct Connection {
    handle: JoinHandle<()>,
    phase: Rc<Cell<Phase>>,
}

/// Where a connection is, for shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for the first byte of a request: safe to close.
    Idle,
    /// Reading or answering a request: let it finish.
    Busy,
    /// Answered its last request and closing: nothing left to lose.
    Closing,
}

/// A bound service, ready to [`serve`](Server::serve).
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    store: Store,
    grace: Duration,
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
    /// requests in progress finish, and waits until every accepted job is
    /// stored.
    pub async fn serve(self, shutdown: Shutdown) -> io::Result<Summary> {
        let Server {
            mut listener,
            store,
            grace,
            ..
        } = self;
        let service = Rc::new(Service {
            queue: Queue::new(),
            next_id: Cell::new(store.next_id()),
            store: RefCell::new(store),
            closing: Cell::new(false),
            stored: Cell::new(0),
            failed: Cell::new(0),
            connections: RefCell::new(BTreeMap::new()),
            next_connection: Cell::new(0),
        });
        let consumer = spawn(consume(service.clone()));
        loop {
            match race(listener.accept(), shutdown.wait()).await {
                Either::Left(Ok((stream, peer))) => open_connection(&service, stream, peer),
                Either::Left(Err(e)) => {
                    // Out of descriptors, say: the listener stays readable,
                    // so pause rather than spin.
                    log::warn!("accept failed: {e}");
                    sleep(ACCEPT_BACKOFF).await;
                }
                Either::Right(()) => break,
            }
        }
        drop(listener); // new connections are refused from here on
        let mut summary = close_connections(&service, grace).await;
        // A request still waiting for its job to be stored is in the queue:
        // wait until the consumer has marked each one done.
        service.queue.join().await;
        consumer.cancel(); // parked in `get`, like the crawler's workers
        let store = service.store.borrow();
        store.sync()?;
        summary.stored = service.stored.get();
        summary.failed = service.failed.get();
        summary.total = store.jobs().len();
        Ok(summary)
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

const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How long a closing connection waits for the client to finish sending
/// before it closes anyway.
const LINGER: Duration = Duration::from_secs(1);

/// Shutdown, step two: close the idle connections at once, give the busy
/// ones `grace` to finish the request they are on, then cut off the rest.
async fn close_connections(service: &Service, grace: Duration) -> Summary {
    service.closing.set(true);
    let open = std::mem::take(&mut *service.connections.borrow_mut());
    let mut idle = 0;
    let mut others = Vec::new();
    for connection in open.into_values() {
        if connection.phase.get() == Phase::Idle {
            // Nothing was read from it, so no job can be half-accepted.
            connection.handle.cancel();
            idle += 1;
        } else {
            // Whether it was in the middle of a request *now*: by the time
            // it ends it will have moved on to closing.
            let busy = connection.phase.get() == Phase::Busy;
            others.push((connection, busy));
        }
    }
    let _ = timeout(grace, async {
        for (connection, _) in others.iter_mut() {
            let _ = (&mut connection.handle).await;
        }
    })
    .await;
    let (mut finished, mut cut_off) = (0, 0);
    for (connection, busy) in &others {
        let busy = *busy;
        if connection.handle.is_finished() {
            finished += usize::from(busy);
        } else {
            connection.handle.cancel();
            cut_off += usize::from(busy);
        }
    }
    Summary {
        idle_closed: idle,
        finished,
        cut_off,
        ..Summary::default()
    }
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

fn open_connection(service: &Rc<Service>, stream: TcpStream, peer: SocketAddr) {
    let id = service.next_connection.get();
    service.next_connection.set(id + 1);
    // Idle until its first byte is read: closing it then loses nothing.
    let phase = Rc::new(Cell::new(Phase::Idle));
    let handle = spawn(connection(stream, peer, service.clone(), phase.clone(), id));
    service
        .connections
        .borrow_mut()
        .insert(id, Connection { handle, phase });
}

/// Takes a connection off the shutdown list when its task ends, however it
/// ends (finished, failed or cancelled).
struct Listed {
    service: Rc<Service>,
    id: u64,
}

impl Drop for Listed {
    fn drop(&mut self) {
        if let Ok(mut connections) = self.service.connections.try_borrow_mut() {
            connections.remove(&self.id);
        }
    }
}

async fn connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    service: Rc<Service>,
    phase: Rc<Cell<Phase>>,
    id: u64,
) {
    let _listed = Listed {
        service: service.clone(),
        id,
    };
    if let Err(e) = serve_requests(&mut stream, &service, &phase).await {
        log::debug!("{peer}: {e}");
    }
}

/// Answers requests on one connection until the client closes it, asks to
/// close, or the service is closing.
async fn serve_requests(
    stream: &mut TcpStream,
    service: &Service,
    phase: &Cell<Phase>,
) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 8 * 1024];
    loop {
        // Between requests only: a request already begun is finished, as
        // shutdown promises.
        if service.closing.get() && buf.is_empty() {
            return Ok(());
        }
        let request = match http::parse(&buf) {
            Ok(Some((request, used))) => {
                buf.drain(..used);
                request
            }
            Ok(None) => {
                // Idle only between requests: a half-read request is work
                // in progress, which shutdown lets finish.
                if buf.is_empty() {
                    phase.set(Phase::Idle);
                }
                let n = stream.read(&mut chunk).await;
                phase.set(Phase::Busy);
                match n? {
                    0 => return Ok(()), // the client is done
                    n => buf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
                }
                log::debug!("read {} bytes of a request so far", buf.len());
                continue;
            }
            Err(refusal) => {
                let response = Response::error(refusal.status, &refusal.message);
                stream.write_all(&response.to_bytes(true)).await?;
                phase.set(Phase::Closing);
                return linger(stream).await;
            }
        };
        let response = route(&request, service).await;
        let close = request.close || service.closing.get();
        stream.write_all(&response.to_bytes(close)).await?;
        if close {
            phase.set(Phase::Closing);
            return linger(stream).await;
        }
    }
}

/// Closes our side and reads whatever the client still sends, for a moment,
/// before the socket is dropped. Closing a socket with unread input makes
/// the kernel reset the connection, and a reset can destroy the response we
/// just sent before the client has read it.
async fn linger(stream: &mut TcpStream) -> io::Result<()> {
    stream.shutdown(Half::Write)?;
    let mut sink = [0u8; 1024];
    let _ = timeout(LINGER, async {
        while let Ok(n) = stream.read(&mut sink).await
            && n > 0
        {}
    })
    .await;
    Ok(())
}

// ANCHOR: route
async fn route(request: &Request, service: &Service) -> Response {
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/jobs") => post_job(&request.body, service).await,
        ("GET", "/jobs") => match serde_json::to_string(service.store.borrow().jobs()) {
            Ok(list) => Response::json(200, list),
            Err(e) => Response::error(500, &e.to_string()),
        },
        (_, "/jobs") => Response {
            headers: vec![("Allow", "GET, POST".to_string())],
            ..Response::error(405, "use GET or POST on /jobs")
        },
        _ => Response::error(404, "no such path; the API is GET and POST /jobs"),
    }
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

enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Runs two futures until the first finishes; the other is dropped.
async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(x) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(x));
        }
        if let Poll::Ready(y) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(y));
        }
        Poll::Pending
    })
    .await
}
