//! One HTTP/2 connection: a task that owns the socket, reads frames and
//! wakes the stream each belongs to, and writes what the streams queue.
//! It is the reactor again, one level up: where the event loop maps a
//! ready socket to the task waiting on it, this maps a frame's stream id
//! to the request waiting on it.
//!
//! Everything a server sends is checked here, and a server that breaks
//! the protocol, floods us or sends more than we allowed ends the
//! connection with a GOAWAY and a clear error for every stream on it.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::net::IpAddr;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use log::debug;

use super::super::error::FetchError;
use super::super::stream::Stream;
use super::frame::{self, HEADER_LEN, Head, MAX_FRAME, Reason, flag, kind, setting};
use super::hpack::{self, Decoder};

/// The window we give each stream, and the connection as a whole: wide
/// open, so that a big page is not throttled by round trips (curl's 64 KiB
/// makes a 23 MB file take eight times as long), and refilled as data
/// arrives. What a stream may buffer is bounded by `--max-body` anyway.
pub(crate) const STREAM_WINDOW: u32 = 4 << 20;
pub(crate) const CONNECTION_WINDOW: u32 = 16 << 20;
/// RFC 9113's window before SETTINGS change it.
const DEFAULT_WINDOW: u32 = 65_535;
/// The largest window RFC 9113 allows.
const MAX_WINDOW: i64 = (1 << 31) - 1;
/// The dynamic table we let the server's encoder use (the RFC's default).
pub(crate) const HEADER_TABLE: u32 = 4_096;
/// The largest header list we accept, counted as RFC 9113 counts it (each
/// field's name and value plus 32): the same 64 KiB as an HTTP/1.1 head.
pub(crate) const MAX_HEADER_LIST: u32 = 64 * 1024;
/// The most frames one header block may take. A block is one HEADERS frame
/// and its CONTINUATIONs; real servers use one or two. A stream of tiny
/// CONTINUATIONs that never ends is an attack (CVE-2024-27316's shape).
const MAX_BLOCK_FRAMES: usize = 64;
/// Frames in a row that carry no part of any response (SETTINGS, PING,
/// WINDOW_UPDATE, PRIORITY, frames for closed streams, unknown types)
/// before we call it a flood.
pub(crate) const MAX_IDLE_FRAMES: u32 = 1_000;
/// What may wait unsent in the connection's output: a peer that floods us
/// with PINGs while never reading their answers is stopped here.
const MAX_OUT: usize = 1 << 20;
/// Interim (1xx) responses accepted before the real one.
const MAX_INTERIM: usize = 8;

/// Why a request on this connection got no response.
#[derive(Debug)]
pub(crate) enum StreamError {
    /// The server did not process the request (a GOAWAY below its id,
    /// REFUSED_STREAM, or a connection that had ended): it may be sent
    /// again on another connection, without counting as a try.
    Refused(String),
    /// The request failed; `usize` is how many frames it had received.
    Failed(FetchError, usize),
}

/// The response head, as HPACK decoded it.
#[derive(Debug, Default)]
pub(crate) struct Head2 {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
}

// ANCHOR: slot
/// What the connection task knows about one stream, for the request
/// waiting on it.
#[derive(Default)]
struct Slot {
    head: Option<Head2>,
    interim: usize,
    body: Vec<u8>,
    /// The body went past `cap`: the rest was not kept.
    over: bool,
    cap: u64,
    /// END_STREAM arrived: the response is complete.
    end: bool,
    /// The server ended the stream (END_STREAM, RST_STREAM, or GOAWAY
    /// below it): nothing to reset.
    closed_by_server: bool,
    /// Why we reset it, if we do: CANCEL when we stop listening (a body
    /// over the cap, a timeout), the rule broken when the server broke one.
    reset: Option<Reason>,
    error: Option<StreamError>,
    /// Frames received on this stream.
    frames: usize,
    /// Set when anything above changes; the request clears it.
    changed: bool,
    waker: Option<Waker>,
    /// What the server may still send on this stream before our next
    /// WINDOW_UPDATE, and what arrived since the last one.
    window: i64,
    unacked: u32,
}
// ANCHOR_END: slot

impl Slot {
    fn wake(&mut self) {
        self.changed = true;
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    fn fail(&mut self, error: StreamError) {
        if self.error.is_none() && !self.end {
            self.error = Some(error);
        }
        self.wake();
    }
}

/// A header block that has started (HEADERS without END_HEADERS) and waits
/// for its CONTINUATION frames.
struct Block {
    stream: u32,
    bytes: Vec<u8>,
    frames: usize,
    end_stream: bool,
}

/// Why the connection stopped taking new streams.
#[derive(Clone, Debug)]
enum Ended {
    /// The server sent GOAWAY: streams up to `last` may still finish.
    GoAway { last: u32, reason: Reason },
    /// The connection is gone.
    Closed(String),
}

struct State {
    /// Frames queued for the socket, in order. Streams append; the task
    /// writes.
    out: Vec<u8>,
    /// The connection task, while it sleeps.
    task: Option<Waker>,
    streams: HashMap<u32, Slot>,
    /// The id our next stream gets: odd, rising.
    next_id: u32,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited until it
    /// says), and the requests waiting for one of them.
    max_streams: usize,
    waiting: VecDeque<Waker>,
    /// The server's SETTINGS_MAX_FRAME_SIZE, for the header blocks we send.
    peer_max_frame: usize,
    /// What we may still send before a WINDOW_UPDATE. We send no DATA (a
    /// GET has no body), but a window pushed past 2^31-1 is still an error.
    send_window: i64,
    /// Whether our first header block, which sizes our encoder's dynamic
    /// table to 0, has been sent.
    table_sized: bool,
    decoder: Decoder,
    block: Option<Block>,
    /// The connection's receive window, and what arrived since our last
    /// WINDOW_UPDATE for it.
    window: i64,
    unacked: u32,
    got_settings: bool,
    /// When the last bytes arrived.
    last_heard: Instant,
    /// Streams we reset, with what the server may still send on each: the
    /// DATA in flight when our RST_STREAM reached it is no flood.
    reset_windows: HashMap<u32, i64>,
    idle_frames: u32,
    ended: Option<Ended>,
    /// The client is gone: say GOAWAY once the streams are done, and stop.
    closing: bool,
    peer: Option<IpAddr>,
}

/// A handle on one HTTP/2 connection; clones share it.
#[derive(Clone)]
pub(crate) struct Connection {
    state: Rc<RefCell<State>>,
}

impl Connection {
    /// Starts HTTP/2 on a connected stream (TLS that chose `h2`, or plain
    /// TCP with prior knowledge): queues the preface and our SETTINGS, and
    /// spawns the task that owns the socket from now on.
    pub(crate) fn start(stream: Stream, name: &str) -> (Connection, runtime::JoinHandle<()>) {
        let peer = stream.peer_addr().ok().map(|a| a.ip());
        let mut out = frame::PREFACE.to_vec();
        frame::settings(
            &[
                (setting::ENABLE_PUSH, 0),
                (setting::HEADER_TABLE_SIZE, HEADER_TABLE),
                (setting::INITIAL_WINDOW_SIZE, STREAM_WINDOW),
                (setting::MAX_FRAME_SIZE, MAX_FRAME as u32),
                (setting::MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST),
            ],
            &mut out,
        );
        frame::window_update(0, CONNECTION_WINDOW - DEFAULT_WINDOW, &mut out);
        let state = Rc::new(RefCell::new(State {
            out,
            task: None,
            streams: HashMap::new(),
            next_id: 1,
            max_streams: usize::MAX,
            waiting: VecDeque::new(),
            peer_max_frame: MAX_FRAME,
            send_window: i64::from(DEFAULT_WINDOW),
            table_sized: false,
            decoder: Decoder::new(HEADER_TABLE as usize),
            block: None,
            window: i64::from(CONNECTION_WINDOW),
            unacked: 0,
            got_settings: false,
            last_heard: runtime::now(),
            reset_windows: HashMap::new(),
            idle_frames: 0,
            ended: None,
            closing: false,
            peer,
        }));
        let task = runtime::TaskBuilder::new()
            .name(format!("connection {name}"))
            .spawn(drive(stream, Rc::clone(&state)));
        (Connection { state }, task)
    }

    /// Whether a new request may go on this connection.
    pub(crate) fn is_usable(&self) -> bool {
        let state = self.state.borrow();
        state.ended.is_none() && !state.closing && state.next_id < (1 << 31)
    }

    /// The server's address.
    pub(crate) fn peer(&self) -> Option<IpAddr> {
        self.state.borrow().peer
    }

    /// Tells the task to say goodbye (GOAWAY) and stop: the client is done
    /// with it. A request still open on it fails.
    pub(crate) fn close(&self) {
        let mut state = self.state.borrow_mut();
        state.closing = true;
        if let Some(task) = state.task.take() {
            task.wake();
        }
    }

    // ANCHOR: open
    /// Opens a stream for a request with these header fields (pseudo-
    /// fields first), waiting for a free stream if the server's limit is
    /// reached. The stream ends with the request: a GET has no body.
    pub(crate) async fn open(
        &self,
        fields: &[(&[u8], &[u8])],
        cap: u64,
        read_timeout: std::time::Duration,
    ) -> Result<Request, StreamError> {
        // A server that never sends SETTINGS, or allows no stream at all,
        // would hold every request to the host until its fetch timeout:
        // after a read timeout, the connection is given up.
        loop {
            match runtime::timeout(read_timeout, poll_fn(|cx| self.poll_room(cx))).await {
                Ok(room) => break room?,
                Err(_) => {
                    if let Some(why) = self.state.borrow_mut().hopeless(read_timeout) {
                        return Err(StreamError::Failed(FetchError::Http2(why), 0));
                    }
                }
            }
        }
        let mut state = self.state.borrow_mut();
        let id = state.next_id;
        state.next_id += 2;
        let mut block = Vec::new();
        let first = !std::mem::replace(&mut state.table_sized, true);
        hpack::encode(fields, first, &mut block);
        state.send_headers(id, &block);
        state.streams.insert(
            id,
            Slot {
                cap,
                window: i64::from(STREAM_WINDOW),
                ..Slot::default()
            },
        );
        state.wake_task();
        Ok(Request {
            state: Rc::clone(&self.state),
            id,
            done: false,
        })
    }
    // ANCHOR_END: open

    /// `Ready` when a stream may open: the server's SETTINGS have come
    /// (they say how many streams it takes; opening more before it has
    /// said would only get them refused), and there is room under its
    /// limit.
    fn poll_room(&self, cx: &mut Context<'_>) -> Poll<Result<(), StreamError>> {
        let mut state = self.state.borrow_mut();
        if let Some(why) = state.refusal() {
            return Poll::Ready(Err(StreamError::Refused(why)));
        }
        if state.got_settings && state.streams.len() < state.max_streams {
            return Poll::Ready(Ok(()));
        }
        state.waiting.push_back(cx.waker().clone());
        Poll::Pending
    }
}

impl State {
    /// After a request waited `read_timeout` to open a stream: why the
    /// connection will never take one, if it will not, having ended it.
    /// Waiting behind other streams for a free place is not hopeless.
    fn hopeless(&mut self, read_timeout: std::time::Duration) -> Option<String> {
        let why = if !self.got_settings {
            format!("the server sent no SETTINGS within {read_timeout:?}")
        } else if self.max_streams == 0 && self.streams.is_empty() {
            format!("the server allowed no streams (MAX_CONCURRENT_STREAMS 0) for {read_timeout:?}")
        } else {
            return None;
        };
        self.ended = Some(Ended::Closed(why.clone()));
        self.closing = true;
        self.wake_task();
        Some(why)
    }

    /// Why no new stream may open here, if it may not.
    fn refusal(&self) -> Option<String> {
        match &self.ended {
            Some(Ended::GoAway { reason, .. }) => Some(format!(
                "the server is closing the connection (GOAWAY, {reason})"
            )),
            Some(Ended::Closed(why)) => Some(why.clone()),
            None if self.closing => Some("the client is closing".into()),
            None if self.next_id >= 1 << 31 => Some("the connection ran out of stream ids".into()),
            None => None,
        }
    }

    fn wake_task(&mut self) {
        if let Some(task) = self.task.take() {
            task.wake();
        }
    }

    /// Queues a header block as HEADERS and, past the server's frame size,
    /// CONTINUATION frames.
    fn send_headers(&mut self, id: u32, block: &[u8]) {
        let max = self.peer_max_frame;
        let mut chunks = block.chunks(max).peekable();
        let first = chunks.next().unwrap_or_default();
        let only = chunks.peek().is_none();
        let flags = flag::END_STREAM | if only { flag::END_HEADERS } else { 0 };
        Head::write(kind::HEADERS, flags, id, first, &mut self.out);
        while let Some(chunk) = chunks.next() {
            let last = chunks.peek().is_none();
            let flags = if last { flag::END_HEADERS } else { 0 };
            Head::write(kind::CONTINUATION, flags, id, chunk, &mut self.out);
        }
    }

    /// Remembers that we reset `id` with `window` bytes still allowed: at
    /// most the last 256 such streams, the oldest forgotten first.
    fn note_reset(&mut self, id: u32, window: i64) {
        if self.reset_windows.len() >= 256
            && let Some(&oldest) = self.reset_windows.keys().min()
        {
            self.reset_windows.remove(&oldest);
        }
        self.reset_windows.insert(id, window);
    }

    /// A stream is gone: its place may go to a request that waits.
    fn release(&mut self, id: u32) {
        self.streams.remove(&id);
        if self.streams.is_empty() {
            // A connection that is going away may end now.
            self.wake_task();
        }
        // Every waiting request looks again: waking only the first could
        // wake one whose request was dropped, and leave a live one asleep.
        for waiter in self.waiting.drain(..) {
            waiter.wake();
        }
    }
}

// ANCHOR: request
/// One request in flight on a connection.
pub(crate) struct Request {
    state: Rc<RefCell<State>>,
    id: u32,
    /// The stream ended, one way or the other: nothing to cancel.
    done: bool,
}

/// A complete response, as the stream received it.
pub(crate) struct Answer {
    pub(crate) head: Head2,
    pub(crate) body: Vec<u8>,
    /// The body went past the cap; `body` holds the first `cap` bytes.
    pub(crate) over: bool,
}

impl Request {
    /// Waits for the next change on the stream: a frame arrived, or the
    /// connection failed. `false` when nothing changed within `silence`.
    async fn changed(&self, silence: std::time::Duration) -> bool {
        let state = &self.state;
        let id = self.id;
        runtime::timeout(
            silence,
            poll_fn(|cx| {
                let mut state = state.borrow_mut();
                let Some(slot) = state.streams.get_mut(&id) else {
                    return Poll::Ready(());
                };
                if std::mem::take(&mut slot.changed) {
                    return Poll::Ready(());
                }
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }),
        )
        .await
        .is_ok()
    }

    /// Waits for the whole response. Each silence may last `read_timeout`;
    /// a body past the cap stops there (the stream is reset, the connection
    /// goes on).
    pub(crate) async fn response(
        mut self,
        read_timeout: std::time::Duration,
    ) -> Result<Answer, StreamError> {
        loop {
            {
                let mut state = self.state.borrow_mut();
                let slot = state.streams.get_mut(&self.id).expect("open until done");
                if let Some(error) = slot.error.take() {
                    // A stream we give up on while the server may still
                    // send is reset; one the server closed itself is not
                    // (no RST_STREAM answers a RST_STREAM).
                    let open = !slot.end && !slot.closed_by_server;
                    let reason = slot.reset.unwrap_or(Reason::Cancel);
                    drop(state);
                    self.finish(open.then_some(reason));
                    return Err(error);
                }
                if slot.end || slot.over {
                    let answer = Answer {
                        head: slot.head.take().unwrap_or_default(),
                        body: std::mem::take(&mut slot.body),
                        over: slot.over,
                    };
                    let cancel = !slot.end;
                    drop(state);
                    self.finish(cancel.then_some(Reason::Cancel));
                    return Ok(answer);
                }
            }
            if !self.changed(read_timeout).await {
                let mut state = self.state.borrow_mut();
                let frames = state.streams.get(&self.id).map_or(0, |s| s.frames);
                // Not a byte on the whole connection for as long: it is
                // dead, or the server stalled. Give it up, so that the
                // host's next requests open a new one instead of waiting
                // on this one in turn.
                if runtime::now().saturating_duration_since(state.last_heard) >= read_timeout {
                    state.ended = Some(Ended::Closed(format!(
                        "the server sent nothing on the connection for {read_timeout:?}"
                    )));
                    state.closing = true;
                    state.wake_task();
                }
                return Err(StreamError::Failed(
                    FetchError::ReadTimeout(read_timeout),
                    frames,
                ));
            }
        }
    }

    /// Forgets the stream, resetting it first when the server may still be
    /// sending on it.
    fn finish(&mut self, reset: Option<Reason>) {
        self.done = true;
        let mut state = self.state.borrow_mut();
        if let Some(reason) = reset {
            frame::rst_stream(self.id, reason, &mut state.out);
            let window = state.streams.get(&self.id).map_or(0, |s| s.window);
            state.note_reset(self.id, window);
            state.wake_task();
        }
        state.release(self.id);
    }
}

impl Drop for Request {
    /// A request given up (a timeout, a crawl interrupted) resets its
    /// stream, so the server stops sending and the slot is freed.
    fn drop(&mut self) {
        if !self.done {
            let ended = {
                let state = self.state.borrow();
                state
                    .streams
                    .get(&self.id)
                    .is_none_or(|s| s.end || s.closed_by_server)
            };
            self.finish((!ended).then_some(Reason::Cancel));
        }
    }
}
// ANCHOR_END: request

// ANCHOR: drive
/// The connection task: write what is queued, read what arrives, hand each
/// frame to its stream; until the connection ends.
async fn drive(mut stream: Stream, state: Rc<RefCell<State>>) {
    let mut input = Vec::with_capacity(32 * 1024);
    let mut chunk = vec![0u8; 32 * 1024];
    let end = poll_fn(|cx| {
        loop {
            if let Err(why) = write_out(&mut stream, &state, cx) {
                return Poll::Ready(Some(why));
            }
            {
                let mut st = state.borrow_mut();
                if st.closing {
                    frame::goaway(Reason::NoError, &mut st.out);
                    let why = match &st.ended {
                        Some(Ended::Closed(why)) => why.clone(),
                        _ => "the client closed the connection".to_string(),
                    };
                    return Poll::Ready(Some((FetchError::Io(why.clone()), why)));
                }
                // After the server's GOAWAY, its last stream done: the
                // connection has nothing left to carry.
                if st.streams.is_empty() && matches!(st.ended, Some(Ended::GoAway { .. })) {
                    return Poll::Ready(None);
                }
            }
            match stream.poll_read(cx, &mut chunk) {
                Poll::Pending => {
                    state.borrow_mut().task = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Some((
                        FetchError::Closed,
                        "the server closed the connection".to_string(),
                    )));
                }
                Poll::Ready(Ok(n)) => {
                    input.extend_from_slice(&chunk[..n]);
                    state.borrow_mut().last_heard = runtime::now();
                    if let Err(error) = state.borrow_mut().read_frames(&mut input) {
                        return Poll::Ready(Some(error));
                    }
                }
                Poll::Ready(Err(e)) => {
                    let error = FetchError::Io(format!("read failed: {e}"));
                    let why = error.to_string();
                    return Poll::Ready(Some((error, why)));
                }
            }
        }
    })
    .await;
    let mut st = state.borrow_mut();
    if let Some((error, why)) = end {
        debug!("HTTP/2 connection ended: {why}");
        st.fail_all(&error, &why);
    }
    st.ended
        .get_or_insert(Ended::Closed("the connection has ended".into()));
    // What is queued (a GOAWAY, say) goes out if the socket takes it now.
    let out = std::mem::take(&mut st.out);
    drop(st);
    let _ = stream.try_write_all(&out);
}
// ANCHOR_END: drive

/// Writes what is queued until the socket is full or the queue empty.
fn write_out(
    stream: &mut Stream,
    state: &Rc<RefCell<State>>,
    cx: &mut Context<'_>,
) -> Result<(), (FetchError, String)> {
    let io = |e: std::io::Error| {
        let error = FetchError::Io(format!("write failed: {e}"));
        let why = error.to_string();
        (error, why)
    };
    loop {
        let mut st = state.borrow_mut();
        if st.out.is_empty() {
            break;
        }
        match stream.poll_write(cx, &st.out) {
            Poll::Ready(Ok(0)) => return Err(io(std::io::ErrorKind::WriteZero.into())),
            Poll::Ready(Ok(n)) => {
                st.out.drain(..n);
            }
            Poll::Ready(Err(e)) => return Err(io(e)),
            Poll::Pending => break,
        }
    }
    match stream.poll_flush(cx) {
        Poll::Ready(Err(e)) => Err(io(e)),
        _ => Ok(()),
    }
}

/// A connection error: what we tell the server in GOAWAY, and what every
/// stream on the connection reports.
type ConnError = (FetchError, String);

fn violation(reason: Reason, what: impl Into<String>) -> (Reason, String) {
    (reason, what.into())
}

impl State {
    /// Takes every complete frame from the front of `input`.
    fn read_frames(&mut self, input: &mut Vec<u8>) -> Result<(), ConnError> {
        let mut at = 0;
        let result = loop {
            let Some(head) = Head::parse(&input[at..]) else {
                break Ok(());
            };
            if head.len > MAX_FRAME {
                break Err(violation(
                    Reason::FrameSizeError,
                    format!(
                        "a {}-byte frame, over the {MAX_FRAME} bytes we allow",
                        head.len
                    ),
                ));
            }
            let Some(payload) = input.get(at + HEADER_LEN..at + HEADER_LEN + head.len) else {
                break Ok(());
            };
            if let Err(e) = self.on_frame(head, payload) {
                break Err(e);
            }
            at += HEADER_LEN + head.len;
        };
        input.drain(..at);
        result.map_err(|(reason, what)| {
            // Tell the server why, then give up on the connection.
            frame::goaway(reason, &mut self.out);
            let message = format!("HTTP/2 error from the server ({reason}): {what}");
            (FetchError::Http2(message.clone()), message)
        })
    }

    // ANCHOR: on_frame
    /// One frame from the server.
    fn on_frame(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        if !self.got_settings && head.kind != kind::SETTINGS {
            return Err(violation(
                Reason::ProtocolError,
                "the server's first frame was not SETTINGS",
            ));
        }
        if let Some(block) = &self.block
            && (head.kind != kind::CONTINUATION || head.stream != block.stream)
        {
            return Err(violation(
                Reason::ProtocolError,
                "a header block was interrupted by another frame",
            ));
        }
        match head.kind {
            kind::DATA => self.on_data(head, payload),
            kind::HEADERS => self.on_headers(head, payload),
            kind::CONTINUATION => self.on_continuation(head, payload),
            kind::RST_STREAM => self.on_reset(head, payload),
            kind::SETTINGS => self.on_settings(head, payload),
            kind::PING => self.on_ping(head, payload),
            kind::GOAWAY => self.on_goaway(head, payload),
            kind::WINDOW_UPDATE => self.on_window_update(head, payload),
            kind::PUSH_PROMISE => Err(violation(
                Reason::ProtocolError,
                "the server pushed a response (PUSH_PROMISE) although we disabled push",
            )),
            // Priorities are advice to a server; a client has no use for them.
            kind::PRIORITY => self.idle(),
            // Types we do not know, which RFC 9113 says to ignore.
            _ => self.idle(),
        }
    }
    // ANCHOR_END: on_frame

    /// Counts a frame that carried no part of a response.
    fn idle(&mut self) -> Result<(), (Reason, String)> {
        self.idle_frames += 1;
        if self.idle_frames > MAX_IDLE_FRAMES {
            return Err(violation(
                Reason::EnhanceYourCalm,
                format!(
                    "{} frames in a row that carried no response (SETTINGS, PING, \
                     WINDOW_UPDATE, frames for closed streams): a flood",
                    self.idle_frames
                ),
            ));
        }
        Ok(())
    }

    /// Queues a control frame's answer, unless the server is not reading.
    fn answer(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), (Reason, String)> {
        if self.out.len() > MAX_OUT {
            return Err(violation(
                Reason::EnhanceYourCalm,
                "the server does not read our answers to its frames",
            ));
        }
        write(&mut self.out);
        Ok(())
    }

    /// Whether `id` is a stream we opened and have since closed (as
    /// opposed to one we never opened, which the server may not use).
    fn was_ours(&self, id: u32) -> bool {
        !id.is_multiple_of(2) && id < self.next_id
    }

    fn on_data(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        if head.stream == 0 {
            return Err(violation(Reason::ProtocolError, "DATA on stream 0"));
        }
        // Flow control counts the whole payload, padding included.
        let len = head.len as u32;
        self.window -= i64::from(len);
        if self.window < 0 {
            return Err(violation(
                Reason::FlowControlError,
                "the server sent more than the connection's window",
            ));
        }
        self.unacked += len;
        if self.unacked >= CONNECTION_WINDOW / 2 {
            let n = std::mem::take(&mut self.unacked);
            self.window += i64::from(n);
            frame::window_update(0, n, &mut self.out);
        }
        let Some(data) = frame::unpadded(head.flags, payload) else {
            return Err(violation(
                Reason::ProtocolError,
                "DATA with too much padding",
            ));
        };
        let end = head.flags & flag::END_STREAM != 0;
        let Some(slot) = self.streams.get_mut(&head.stream) else {
            if let Some(window) = self.reset_windows.get_mut(&head.stream) {
                // In flight when our RST_STREAM reached the server: allowed
                // up to the stream's window, and ignored.
                *window -= i64::from(len);
                if *window < 0 {
                    return Err(violation(
                        Reason::FlowControlError,
                        format!(
                            "more DATA on stream {}, which we reset, than its window",
                            head.stream
                        ),
                    ));
                }
                if end {
                    self.reset_windows.remove(&head.stream);
                }
                return Ok(());
            }
            if self.was_ours(head.stream) {
                // A stream that ended: ignored, but not without end.
                return self.idle();
            }
            return Err(violation(
                Reason::ProtocolError,
                format!("DATA on stream {}, which we never opened", head.stream),
            ));
        };
        slot.frames += 1;
        slot.closed_by_server |= end;
        if slot.head.is_none() || slot.end {
            let why = if slot.end {
                "DATA after the end of the stream"
            } else {
                "DATA before the response's headers"
            };
            slot.reset = Some(if slot.end {
                Reason::StreamClosed
            } else {
                Reason::ProtocolError
            });
            slot.fail(StreamError::Failed(
                FetchError::Http2(format!("HTTP/2 error from the server: {why}")),
                slot.frames,
            ));
            return Ok(());
        }
        slot.window -= i64::from(len);
        if slot.window < 0 {
            slot.reset = Some(Reason::FlowControlError);
            slot.fail(StreamError::Failed(
                FetchError::Http2(
                    "HTTP/2 error from the server: it sent more than the stream's window".into(),
                ),
                slot.frames,
            ));
            return Ok(());
        }
        slot.unacked += len;
        // Refill the stream's window while it runs, but not once the body
        // is over the cap: the request resets the stream then.
        if slot.unacked >= STREAM_WINDOW / 2 && !end && !slot.over {
            let n = std::mem::take(&mut slot.unacked);
            slot.window += i64::from(n);
            frame::window_update(head.stream, n, &mut self.out);
        }
        if !slot.over {
            let room = usize::try_from(slot.cap)
                .unwrap_or(usize::MAX)
                .saturating_sub(slot.body.len());
            if data.len() > room {
                slot.body.extend_from_slice(&data[..room]);
                slot.over = true;
            } else {
                slot.body.extend_from_slice(data);
            }
        }
        slot.end |= end;
        if !data.is_empty() || end {
            self.idle_frames = 0;
            slot.wake();
            Ok(())
        } else {
            self.idle()
        }
    }

    fn on_headers(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        if head.stream == 0 {
            return Err(violation(Reason::ProtocolError, "HEADERS on stream 0"));
        }
        let Some(mut block) = frame::unpadded(head.flags, payload) else {
            return Err(violation(
                Reason::ProtocolError,
                "HEADERS with too much padding",
            ));
        };
        if head.flags & flag::PRIORITY != 0 {
            block = block.get(5..).ok_or_else(|| {
                violation(Reason::FrameSizeError, "HEADERS too short for its priority")
            })?;
        }
        let block = Block {
            stream: head.stream,
            bytes: block.to_vec(),
            frames: 1,
            end_stream: head.flags & flag::END_STREAM != 0,
        };
        if head.flags & flag::END_HEADERS != 0 {
            self.on_block(block)
        } else {
            self.block = Some(block);
            Ok(())
        }
    }

    fn on_continuation(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        let Some(block) = self.block.as_mut() else {
            return Err(violation(
                Reason::ProtocolError,
                "CONTINUATION without a header block to continue",
            ));
        };
        block.frames += 1;
        block.bytes.extend_from_slice(payload);
        if block.frames > MAX_BLOCK_FRAMES || block.bytes.len() > MAX_HEADER_LIST as usize {
            return Err(violation(
                Reason::EnhanceYourCalm,
                format!(
                    "a header block of {} frames and {} bytes and no end: a CONTINUATION flood",
                    block.frames,
                    block.bytes.len()
                ),
            ));
        }
        if head.flags & flag::END_HEADERS != 0 {
            let block = self.block.take().expect("checked above");
            self.on_block(block)
        } else {
            Ok(())
        }
    }

    // ANCHOR: on_block
    /// A complete header block: decoded even when its stream is gone, to
    /// keep HPACK's table the same on both sides, then given to its stream.
    fn on_block(&mut self, block: Block) -> Result<(), (Reason, String)> {
        let mut fields = Vec::new();
        let mut size = 0usize;
        let decoded = self.decoder.decode(&block.bytes, |name, value| {
            size += hpack::field_size(name, value);
            if size <= MAX_HEADER_LIST as usize {
                fields.push((text(name), text(value)));
            }
        });
        if let Err(e) = decoded {
            return Err(violation(
                Reason::CompressionError,
                format!("a header block HPACK cannot decode: {e}"),
            ));
        }
        let Some(slot) = self.streams.get_mut(&block.stream) else {
            if self.was_ours(block.stream) {
                return self.idle();
            }
            return Err(violation(
                Reason::ProtocolError,
                format!(
                    "HEADERS on stream {}, which we never opened (a push?)",
                    block.stream
                ),
            ));
        };
        slot.frames += block.frames;
        if slot.end {
            // The stream had ended: a block after it is no trailer, and no
            // part of a response (so not a reason to reset the flood count).
            slot.reset = Some(Reason::StreamClosed);
            let frames = slot.frames;
            slot.fail(StreamError::Failed(
                FetchError::Http2(
                    "HTTP/2 error from the server: HEADERS after the end of the stream".into(),
                ),
                frames,
            ));
            return self.idle();
        }
        slot.closed_by_server |= block.end_stream;
        self.idle_frames = 0;
        let problem = if size > MAX_HEADER_LIST as usize {
            Some(format!(
                "response header list of {size} bytes, over the {MAX_HEADER_LIST}-byte limit"
            ))
        } else if slot.head.is_some() {
            // Trailers: allowed, and ignored, as in HTTP/1.1; they must be
            // well formed and end the stream.
            match valid_fields(&fields) {
                Err(why) => Some(why),
                Ok(()) if !block.end_stream => Some("trailers that do not end the stream".into()),
                Ok(()) => {
                    slot.end = true;
                    slot.wake();
                    None
                }
            }
        } else {
            match response_head(fields) {
                Ok(head) if (100..200).contains(&head.status) => {
                    slot.interim += 1;
                    (head.status == 101 || slot.interim > MAX_INTERIM || block.end_stream)
                        .then(|| format!("unexpected interim response {}", head.status))
                }
                Ok(head) => {
                    slot.head = Some(head);
                    slot.end = block.end_stream;
                    slot.wake();
                    None
                }
                Err(why) => Some(why),
            }
        };
        if let Some(why) = problem {
            // A malformed response is a stream error (RFC 9113 section
            // 8.1.1): this stream is reset, the connection goes on.
            slot.reset = Some(Reason::ProtocolError);
            slot.fail(StreamError::Failed(FetchError::Malformed(why), 0));
        }
        Ok(())
    }
    // ANCHOR_END: on_block

    fn on_reset(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        if head.stream == 0 {
            return Err(violation(Reason::ProtocolError, "RST_STREAM on stream 0"));
        }
        let Some(code) = frame::u32_at(payload, 0).filter(|_| payload.len() == 4) else {
            return Err(violation(
                Reason::FrameSizeError,
                "RST_STREAM not 4 bytes long",
            ));
        };
        let reason = Reason::from_code(code);
        let Some(slot) = self.streams.get_mut(&head.stream) else {
            if self.was_ours(head.stream) {
                self.reset_windows.remove(&head.stream);
                return self.idle();
            }
            return Err(violation(
                Reason::ProtocolError,
                format!(
                    "RST_STREAM on stream {}, which we never opened",
                    head.stream
                ),
            ));
        };
        slot.frames += 1;
        slot.closed_by_server = true;
        let error = if reason == Reason::RefusedStream {
            StreamError::Refused(format!("the server refused the stream ({reason})"))
        } else {
            StreamError::Failed(
                FetchError::Http2(format!("the server reset the stream ({reason})")),
                slot.frames,
            )
        };
        slot.fail(error);
        // A reset is a frame the server may send endlessly: a storm of
        // them, each on a stream it never answers, is still bounded by the
        // requests we make.
        Ok(())
    }

    fn on_settings(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        if head.stream != 0 {
            return Err(violation(Reason::ProtocolError, "SETTINGS on a stream"));
        }
        if head.flags & flag::ACK != 0 {
            if !payload.is_empty() {
                return Err(violation(
                    Reason::FrameSizeError,
                    "a SETTINGS ACK with a payload",
                ));
            }
            return self.idle();
        }
        let Some(pairs) = frame::parse_settings(payload) else {
            return Err(violation(
                Reason::FrameSizeError,
                "SETTINGS not a multiple of 6 bytes",
            ));
        };
        for (id, value) in pairs {
            match id {
                // Only a client may enable push (RFC 9113 section 6.5.2).
                setting::ENABLE_PUSH if value != 0 => {
                    return Err(violation(
                        Reason::ProtocolError,
                        format!("the server sent ENABLE_PUSH {value}"),
                    ));
                }
                setting::MAX_CONCURRENT_STREAMS => {
                    self.max_streams = value as usize;
                    // More room, maybe: let the waiting requests look.
                    for waiter in self.waiting.drain(..) {
                        waiter.wake();
                    }
                }
                setting::INITIAL_WINDOW_SIZE if i64::from(value) > MAX_WINDOW => {
                    return Err(violation(
                        Reason::FlowControlError,
                        "INITIAL_WINDOW_SIZE above 2^31-1",
                    ));
                }
                setting::MAX_FRAME_SIZE => {
                    if !(MAX_FRAME as u32..1 << 24).contains(&value) {
                        return Err(violation(
                            Reason::ProtocolError,
                            format!("MAX_FRAME_SIZE {value} outside 16384..2^24-1"),
                        ));
                    }
                    self.peer_max_frame = value as usize;
                }
                _ => {}
            }
        }
        self.answer(|out| Head::write(kind::SETTINGS, flag::ACK, 0, &[], out))?;
        if !std::mem::replace(&mut self.got_settings, true) {
            // The preface's SETTINGS is how a connection starts, not noise;
            // the requests waiting for it may go.
            for waiter in self.waiting.drain(..) {
                waiter.wake();
            }
            return Ok(());
        }
        self.idle()
    }

    fn on_ping(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        if head.stream != 0 {
            return Err(violation(Reason::ProtocolError, "PING on a stream"));
        }
        if payload.len() != 8 {
            return Err(violation(Reason::FrameSizeError, "PING not 8 bytes long"));
        }
        if head.flags & flag::ACK == 0 {
            self.answer(|out| Head::write(kind::PING, flag::ACK, 0, payload, out))?;
        }
        self.idle()
    }

    fn on_goaway(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        if head.stream != 0 {
            return Err(violation(Reason::ProtocolError, "GOAWAY on a stream"));
        }
        let (Some(last), Some(code)) = (frame::u32_at(payload, 0), frame::u32_at(payload, 4))
        else {
            return Err(violation(
                Reason::FrameSizeError,
                "GOAWAY shorter than 8 bytes",
            ));
        };
        let last = last & 0x7fff_ffff;
        let reason = Reason::from_code(code);
        // A server may send GOAWAY twice, lowering the last id; never raise it.
        let last = match &self.ended {
            Some(Ended::GoAway { last: before, .. }) => last.min(*before),
            _ => last,
        };
        debug!("GOAWAY ({reason}), last stream {last}");
        self.ended = Some(Ended::GoAway { last, reason });
        for (&id, slot) in &mut self.streams {
            if id > last {
                slot.closed_by_server = true;
                slot.fail(StreamError::Refused(format!(
                    "the server is closing the connection (GOAWAY, {reason}) and did not \
                     process the request"
                )));
            }
        }
        for waiter in self.waiting.drain(..) {
            waiter.wake();
        }
        self.idle()
    }

    fn on_window_update(&mut self, head: Head, payload: &[u8]) -> Result<(), (Reason, String)> {
        let Some(increment) = frame::u32_at(payload, 0).filter(|_| payload.len() == 4) else {
            return Err(violation(
                Reason::FrameSizeError,
                "WINDOW_UPDATE not 4 bytes long",
            ));
        };
        let increment = i64::from(increment & 0x7fff_ffff);
        if head.stream == 0 {
            if increment == 0 {
                return Err(violation(Reason::ProtocolError, "a WINDOW_UPDATE of 0"));
            }
            self.send_window += increment;
            if self.send_window > MAX_WINDOW {
                return Err(violation(
                    Reason::FlowControlError,
                    "WINDOW_UPDATE pushed the window past 2^31-1",
                ));
            }
        }
        if head.stream != 0 {
            if !self.was_ours(head.stream) {
                return Err(violation(
                    Reason::ProtocolError,
                    format!(
                        "WINDOW_UPDATE on stream {}, which we never opened",
                        head.stream
                    ),
                ));
            }
            if increment == 0
                && let Some(slot) = self.streams.get_mut(&head.stream)
            {
                slot.reset = Some(Reason::ProtocolError);
                let frames = slot.frames;
                slot.fail(StreamError::Failed(
                    FetchError::Http2("HTTP/2 error from the server: a WINDOW_UPDATE of 0".into()),
                    frames,
                ));
            }
        }
        // A stream's window matters only to DATA we would send: none.
        self.idle()
    }

    /// The connection is over: every stream learns why. A stream that had
    /// received nothing was never answered, and may be sent again.
    fn fail_all(&mut self, error: &FetchError, why: &str) {
        self.ended = Some(Ended::Closed(why.to_string()));
        for slot in self.streams.values_mut() {
            let error = match error {
                FetchError::Closed if slot.frames > 0 => {
                    FetchError::Truncated("connection closed in the middle of the response".into())
                }
                other => other.clone(),
            };
            let frames = slot.frames;
            slot.fail(StreamError::Failed(error, frames));
        }
        for waiter in self.waiting.drain(..) {
            waiter.wake();
        }
    }
}

/// Whether a field is well formed (RFC 9113 section 8.2.1): a name of
/// token characters, a value without NUL, CR or LF and without white
/// space at either end. A field that is not could rewrite the head we
/// archive as HTTP/1.1 (a value holding `\r\n` is a second header line).
fn valid_field(name: &str, value: &str) -> Result<(), String> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(format!("a header name that is not a token: {name:?}"));
    }
    let edge = |c: char| c == ' ' || c == '\t';
    if value.contains(['\0', '\r', '\n']) || value.starts_with(edge) || value.ends_with(edge) {
        return Err(format!("a malformed value of header {name:?}: {value:?}"));
    }
    Ok(())
}

/// Checks every field of a block with [`valid_field`].
fn valid_fields(fields: &[(String, String)]) -> Result<(), String> {
    fields.iter().try_for_each(|(n, v)| valid_field(n, v))
}

/// A header field's bytes as text: UTF-8 if they are, Latin-1 otherwise.
fn text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// The response head from its decoded fields: `:status` first and only
/// once, no other pseudo-field, no field HTTP/2 forbids (RFC 9113 section
/// 8.2.2).
fn response_head(fields: Vec<(String, String)>) -> Result<Head2, String> {
    let mut status = None;
    let mut headers = Vec::with_capacity(fields.len());
    for (name, value) in fields {
        if let Some(pseudo) = name.strip_prefix(':') {
            if pseudo != "status" || status.is_some() || !headers.is_empty() {
                return Err(format!("unexpected pseudo-header :{pseudo} in a response"));
            }
            let code = (value.len() == 3 && value.bytes().all(|b| b.is_ascii_digit()))
                .then(|| value.parse::<u16>().ok())
                .flatten()
                .filter(|code| *code >= 100);
            status = Some(code.ok_or_else(|| format!("invalid :status {value:?}"))?);
            continue;
        }
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(format!("upper-case header name {name:?} in HTTP/2"));
        }
        valid_field(&name, &value)?;
        if [
            "connection",
            "keep-alive",
            "proxy-connection",
            "transfer-encoding",
            "upgrade",
        ]
        .contains(&name.as_str())
        {
            return Err(format!("connection-specific header {name:?} in HTTP/2"));
        }
        headers.push((name, value));
    }
    let status = status.ok_or("a response without :status")?;
    Ok(Head2 { status, headers })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_response_head_has_one_status_first_and_no_connection_headers() {
        let head = response_head(fields(&[(":status", "200"), ("content-type", "text/html")]));
        let head = head.unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.headers, fields(&[("content-type", "text/html")]));
        for (bad, why) in [
            (vec![("content-type", "x")], "a response without :status"),
            (vec![(":status", "20")], "invalid :status \"20\""),
            (
                vec![(":status", "200"), (":status", "200")],
                "unexpected pseudo-header :status in a response",
            ),
            (
                vec![(":status", "200"), (":path", "/")],
                "unexpected pseudo-header :path in a response",
            ),
            (
                vec![("a", "b"), (":status", "200")],
                "unexpected pseudo-header :status in a response",
            ),
            (
                vec![(":status", "200"), ("Content-Type", "x")],
                "upper-case header name \"Content-Type\" in HTTP/2",
            ),
            (
                vec![(":status", "200"), ("transfer-encoding", "chunked")],
                "connection-specific header \"transfer-encoding\" in HTTP/2",
            ),
        ] {
            assert_eq!(response_head(fields(&bad)).unwrap_err(), why);
        }
    }
}
