//! The HTTP front of both services: accept connections, parse requests,
//! hand each to an async handler, and stop cleanly. The embedded service's
//! handler waits for its store, the `api` service's for Redis.
//!
//! Shutdown: stop accepting, close idle connections, give busy ones a grace
//! period. And no client may hold more than its share ([`Limits`]): a
//! request has a deadline from its first byte to its last (a client that
//! drips a byte a second gets its 408 all the same), an idle keep-alive
//! connection is closed after a while, a response that is not read has a
//! deadline too, and at the connection cap the oldest idle connection makes
//! room for a new one, or, if none is idle, the new one gets a 503, before
//! the process runs out of file descriptors.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::Shutdown as Half;
use std::rc::Rc;
use std::time::Duration;

use runtime::{Either, JoinHandle, TcpListener, TcpStream, select, sleep, spawn, timeout};

use crate::http::{self, Request, Response};
use crate::shutdown::Shutdown;

const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
const LINGER: Duration = Duration::from_secs(1);

/// The interim answer to `Expect: 100-continue`: go on, send the body.
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// What one client may hold of the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// From a request's first byte to its last, and for a response to be
    /// written: past it the client gets a 408 (or, writing, is dropped).
    pub request_timeout: Duration,
    /// How long a connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Connections open at most.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: connection_cap(),
        }
    }
}

/// Descriptors kept for everything but client connections: the listener,
/// Redis and PostgreSQL connections, files, the runtime's own.
const RESERVED_DESCRIPTORS: u64 = 64;

/// The default connection cap: what the process's descriptor limit
/// (`ulimit -n`, read from `/proc/self/limits`) leaves after
/// [`RESERVED_DESCRIPTORS`]; 1,024 less those if it cannot be read.
fn connection_cap() -> usize {
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
            line.split_whitespace().nth(3)?.parse::<u64>().ok()
        })
        .unwrap_or(1024);
    let cap = soft.saturating_sub(RESERVED_DESCRIPTORS).max(1);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// What shutdown found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Closed {
    pub idle_closed: usize,
    pub finished: usize,
    pub cut_off: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Busy,
    Closing,
}

struct Open {
    handle: JoinHandle<()>,
    phase: Rc<Cell<Phase>>,
}

struct State {
    closing: Cell<bool>,
    open: RefCell<BTreeMap<u64, Open>>,
    next: Cell<u64>,
}

/// Serves `listener` with `handler` until `shutdown`, within `limits`,
/// then closes the connections as the module says.
pub async fn serve<H, F>(
    mut listener: TcpListener,
    shutdown: &Shutdown,
    grace: Duration,
    limits: Limits,
    handler: H,
) -> Closed
where
    H: Fn(Request) -> F + Clone + 'static,
    F: Future<Output = Response> + 'static,
{
    let state = Rc::new(State {
        closing: Cell::new(false),
        open: RefCell::new(BTreeMap::new()),
        next: Cell::new(0),
    });
    loop {
        match select(listener.accept(), shutdown.wait()).await {
            Either::Left(Ok((stream, peer))) => {
                if state.open.borrow().len() >= limits.max_connections && !make_room(&state) {
                    // Every connection is busy: this one is told so, in a
                    // task that holds its descriptor a moment at most.
                    log::warn!(
                        "{peer}: refused, {} connections open",
                        limits.max_connections
                    );
                    spawn(refuse(stream));
                    continue;
                }
                let id = state.next.get();
                state.next.set(id + 1);
                let phase = Rc::new(Cell::new(Phase::Idle)); // until a byte is read
                let task = connection(
                    stream,
                    state.clone(),
                    phase.clone(),
                    handler.clone(),
                    (id, limits),
                );
                let handle = spawn(async move {
                    if let Err(e) = task.await {
                        log::debug!("{peer}: {e}");
                    }
                });
                state.open.borrow_mut().insert(id, Open { handle, phase });
            }
            Either::Left(Err(e)) => {
                log::warn!("accept failed: {e}");
                sleep(ACCEPT_BACKOFF).await;
            }
            Either::Right(()) => break,
        }
    }
    drop(listener);
    state.closing.set(true);
    let open = std::mem::take(&mut *state.open.borrow_mut());
    let mut closed = Closed::default();
    let mut others = Vec::new();
    for (_, open) in open {
        if open.phase.get() == Phase::Idle {
            open.handle.cancel();
            closed.idle_closed += 1;
        } else {
            // Busy now, not at the end, when it will be closing.
            let busy = open.phase.get() == Phase::Busy;
            others.push((open, busy));
        }
    }
    let _ = timeout(grace, async {
        for (open, _) in others.iter_mut() {
            let _ = (&mut open.handle).await;
        }
    })
    .await;
    for (open, busy) in &others {
        let busy = *busy;
        if open.handle.is_finished() {
            closed.finished += usize::from(busy);
        } else {
            open.handle.cancel();
            closed.cut_off += usize::from(busy);
        }
    }
    closed
}

/// At the connection cap: closes the oldest idle connection, if there is
/// one, to make room. An idle connection has no request in progress, so
/// closing it loses nothing; its client opens a new one when it needs to.
fn make_room(state: &State) -> bool {
    let mut open = state.open.borrow_mut();
    let oldest_idle = open
        .iter()
        .find(|(_, open)| open.phase.get() == Phase::Idle)
        .map(|(&id, _)| id);
    match oldest_idle.and_then(|id| open.remove(&id)) {
        Some(idle) => {
            idle.handle.cancel();
            true
        }
        None => false,
    }
}

/// Answers a connection over the cap with a 503, and closes it.
async fn refuse(mut stream: TcpStream) {
    let response = Response::error(503, "too many connections; retry later");
    let _ = timeout(LINGER, stream.write_all(&response.to_bytes(true))).await;
}

/// Removes a connection from the open list when its task ends.
struct Listed {
    state: Rc<State>,
    id: u64,
}

impl Drop for Listed {
    fn drop(&mut self) {
        if let Ok(mut open) = self.state.open.try_borrow_mut() {
            open.remove(&self.id);
        }
    }
}

async fn connection<H, F>(
    mut stream: TcpStream,
    state: Rc<State>,
    phase: Rc<Cell<Phase>>,
    handler: H,
    (id, limits): (u64, Limits),
) -> io::Result<()>
where
    H: Fn(Request) -> F,
    F: Future<Output = Response>,
{
    let _listed = Listed {
        state: state.clone(),
        id,
    };
    let Limits {
        request_timeout,
        idle_timeout,
        ..
    } = limits;
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 8 * 1024];
    let mut reader = http::RequestReader::default();
    // When the request being read must have arrived: set at its first byte,
    // not renewed by each read, so a drip of bytes cannot hold it open.
    let mut deadline = None;
    loop {
        // Between requests only: a request already begun is finished.
        if state.closing.get() && buf.is_empty() {
            return Ok(());
        }
        let request = match reader.next(&buf) {
            Ok(Some((request, used))) => {
                buf.drain(..used);
                deadline = None;
                request
            }
            Ok(None) => {
                if reader.take_continue() {
                    respond(&mut stream, CONTINUE, request_timeout).await?;
                }
                let n = if buf.is_empty() {
                    phase.set(Phase::Idle);
                    match timeout(idle_timeout, stream.read(&mut chunk)).await {
                        Ok(n) => n,
                        // Idle too long: closed, as it could be at any
                        // moment between requests.
                        Err(_) => return Ok(()),
                    }
                } else {
                    let at = *deadline.get_or_insert_with(|| runtime::now() + request_timeout);
                    let left = at.saturating_duration_since(runtime::now());
                    match timeout(left, stream.read(&mut chunk)).await {
                        Ok(n) => n,
                        Err(_) => {
                            let response = Response::error(
                                408,
                                &format!("the request took over {request_timeout:?} to arrive"),
                            );
                            phase.set(Phase::Closing);
                            respond(&mut stream, &response.to_bytes(true), request_timeout).await?;
                            return linger(&mut stream).await;
                        }
                    }
                };
                phase.set(Phase::Busy);
                match n? {
                    0 => return Ok(()),
                    n => buf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
                }
                // The clock of a new request starts with its first byte.
                deadline.get_or_insert_with(|| runtime::now() + request_timeout);
                log::debug!("read {} bytes of a request so far", buf.len());
                continue;
            }
            Err(refusal) => {
                let response = Response::error(refusal.status, &refusal.message);
                phase.set(Phase::Closing);
                respond(&mut stream, &response.to_bytes(true), request_timeout).await?;
                return linger(&mut stream).await;
            }
        };
        let close = request.close;
        let response = handler(request).await;
        let close = close || state.closing.get();
        respond(&mut stream, &response.to_bytes(close), request_timeout).await?;
        if close {
            phase.set(Phase::Closing);
            return linger(&mut stream).await;
        }
    }
}

/// Writes a response, within `limit`: a client that does not read what it
/// asked for (a long `GET /jobs` left unread) cannot hold its connection,
/// or the memory of the response, forever.
async fn respond(stream: &mut TcpStream, bytes: &[u8], limit: Duration) -> io::Result<()> {
    match timeout(limit, stream.write_all(bytes)).await {
        Ok(written) => written,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the client did not read its response within {limit:?}"),
        )),
    }
}

/// Closes our side and drains the client's for a moment: closing a socket
/// with unread input makes the kernel reset the connection, and a reset can
/// destroy the response before the client has read it.
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
