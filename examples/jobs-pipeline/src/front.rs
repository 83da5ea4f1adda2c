//! The HTTP front of the `api` service: accept connections, parse requests,
//! hand each to an async handler, and stop cleanly.
//!
//! It is [`server`](crate::server)'s connection handling with the routing
//! made async: the embedded service answers from memory, but the `api`
//! service must wait for Redis before it may answer, so its handler is a
//! future. Shutdown works the same way: stop accepting, close idle
//! connections, give busy ones a grace period.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::{Future, poll_fn};
use std::io;
use std::net::Shutdown as Half;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use runtime::{JoinHandle, TcpListener, TcpStream, sleep, spawn, timeout};

use crate::http::{self, Request, Response};
use crate::shutdown::Shutdown;

const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
const LINGER: Duration = Duration::from_secs(1);

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

/// Serves `listener` with `handler` until `shutdown`, then closes the
/// connections as the module says.
/// A client that started a request has `request_timeout` to send the rest:
/// a slow client gets a 408 instead of holding a connection forever.
pub async fn serve<H, F>(
    mut listener: TcpListener,
    shutdown: &Shutdown,
    grace: Duration,
    request_timeout: Duration,
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
        match race(listener.accept(), shutdown.wait()).await {
            Either::Left(Ok((stream, peer))) => {
                let id = state.next.get();
                state.next.set(id + 1);
                let phase = Rc::new(Cell::new(Phase::Idle)); // until a byte is read
                let task = connection(
                    stream,
                    state.clone(),
                    phase.clone(),
                    handler.clone(),
                    (id, request_timeout),
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
    (id, request_timeout): (u64, Duration),
) -> io::Result<()>
where
    H: Fn(Request) -> F,
    F: Future<Output = Response>,
{
    let _listed = Listed {
        state: state.clone(),
        id,
    };
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 8 * 1024];
    loop {
        // Between requests only: a request already begun is finished.
        if state.closing.get() && buf.is_empty() {
            return Ok(());
        }
        let request = match http::parse(&buf) {
            Ok(Some((request, used))) => {
                buf.drain(..used);
                request
            }
            Ok(None) => {
                let n = if buf.is_empty() {
                    phase.set(Phase::Idle);
                    stream.read(&mut chunk).await
                } else {
                    match timeout(request_timeout, stream.read(&mut chunk)).await {
                        Ok(n) => n,
                        Err(_) => {
                            let response = Response::error(
                                408,
                                &format!("the request took over {request_timeout:?} to arrive"),
                            );
                            stream.write_all(&response.to_bytes(true)).await?;
                            phase.set(Phase::Closing);
                            return linger(&mut stream).await;
                        }
                    }
                };
                phase.set(Phase::Busy);
                match n? {
                    0 => return Ok(()),
                    n => buf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
                }
                continue;
            }
            Err(refusal) => {
                let response = Response::error(refusal.status, &refusal.message);
                stream.write_all(&response.to_bytes(true)).await?;
                phase.set(Phase::Closing);
                return linger(&mut stream).await;
            }
        };
        let close = request.close;
        let response = handler(request).await;
        let close = close || state.closing.get();
        stream.write_all(&response.to_bytes(close)).await?;
        if close {
            phase.set(Phase::Closing);
            return linger(&mut stream).await;
        }
    }
}

/// As in [`server`](crate::server): close our side, drain the client's for
/// a moment, so that a reset cannot destroy the response.
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

pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Runs two futures until the first finishes; the other is dropped.
pub async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
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
