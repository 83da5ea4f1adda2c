//! Exercise 18 ★★: hand each frame to the stream it belongs to.
//!
//! An HTTP/2 connection carries many requests at once, each a *stream*
//! with its own id, and their frames arrive mixed on one socket. One task
//! reads them; each request waits for the frames of its own stream. Write
//! the two halves of that meeting point: `deliver`, which the connection
//! task calls with each frame it has read, and `poll_frame`, which a
//! request polls for the next frame of its stream.
//!
//! It is the reactor again. The reactor wakes the task whose socket is
//! ready, and only that one; `deliver` must wake the request whose stream
//! the frame names, and only that one. A frame may arrive before its
//! request first polls (keep it), and after its request was given up
//! (drop it, and say so).
//!
//! Read first: the book's "HTTP/2: One Connection, Many Streams" (The
//! connection task is a reactor), and stage3-crawler/src/http/h2/
//! connection.rs, whose `Slot` and `Request` are this exercise grown up.
//! Check: `cargo run -p exercises -- check 18`. Stuck: `... -- hint 18`.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// One frame, as the connection task read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The stream it belongs to.
    pub stream: u32,
    /// Its payload (a piece of the response).
    pub payload: Vec<u8>,
    /// The stream's last frame (END_STREAM).
    pub end: bool,
}

/// What a waiting request knows of its stream.
#[derive(Default)]
struct Slot {
    /// Frames delivered and not yet taken, in order.
    frames: VecDeque<Frame>,
    /// The request's task, while it waits.
    waker: Option<Waker>,
}

/// The streams open on one connection, shared by the connection task and
/// the requests.
#[derive(Clone, Default)]
pub struct Demux {
    streams: Rc<RefCell<HashMap<u32, Slot>>>,
}

/// One request's end: the frames of one stream.
pub struct Stream {
    streams: Rc<RefCell<HashMap<u32, Slot>>>,
    id: u32,
    /// The last frame was taken: nothing more will come.
    ended: bool,
}

impl Demux {
    /// No streams yet.
    pub fn new() -> Demux {
        Demux::default()
    }

    /// Opens stream `id`; its frames are kept for the returned `Stream`
    /// until it takes them or is dropped.
    pub fn open(&self, id: u32) -> Stream {
        self.streams.borrow_mut().insert(id, Slot::default());
        Stream {
            streams: Rc::clone(&self.streams),
            id,
            ended: false,
        }
    }

    /// Hands `frame` to its stream and wakes that stream's request if it
    /// waits. Returns `false` when no such stream is open (never opened,
    /// or given up): the frame is dropped.
    pub fn deliver(&self, frame: Frame) -> bool {
        // TODO: find the frame's stream; if it is not open, return false.
        // Otherwise keep the frame, in order, and wake the request that
        // waits on that stream (and no other), after the borrow ends.
        let _ = frame;
        false
    }

    /// How many streams are open.
    pub fn open_streams(&self) -> usize {
        self.streams.borrow().len()
    }
}

impl Stream {
    /// The next frame of this stream, in the order delivered; `Ready(None)`
    /// after the frame that ended it; `Pending`, with the task's waker left
    /// for `deliver`, otherwise.
    pub fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Frame>> {
        // TODO: after the stream's last frame, `Ready(None)`. Otherwise the
        // oldest frame delivered, if there is one (note whether it ends the
        // stream); if there is none, leave `cx`'s waker in the slot for
        // `deliver`, and return `Pending`.
        let _ = cx;
        Poll::Ready(None)
    }

    /// [`poll_frame`](Self::poll_frame) as a future.
    pub async fn next(&mut self) -> Option<Frame> {
        poll_fn(|cx| self.poll_frame(cx)).await
    }
}

impl Drop for Stream {
    /// A request given up closes its stream: frames that come later are
    /// dropped by `deliver`, not kept forever.
    fn drop(&mut self) {
        // TODO: close the stream, so that `deliver` drops its later frames.
    }
}

impl std::fmt::Debug for Stream {
    /// What a debugger, or a failing test, wants to see.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let streams = self.streams.borrow();
        let slot = streams.get(&self.id);
        f.debug_struct("Stream")
            .field("id", &self.id)
            .field("open", &slot.is_some())
            .field("queued", &slot.map_or(0, |s| s.frames.len()))
            .field("waiting", &slot.is_some_and(|s| s.waker.is_some()))
            .field("ended", &self.ended)
            .finish()
    }
}
