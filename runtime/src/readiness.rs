//! What an event said about a source: the one value the event loop, the
//! reactor and the recorder all speak of, in a module of its own so that
//! the recorder can name it without importing the loop that calls it.

/// What an event said about a source. Copied out of mio's event so a callback
/// can keep it after the loop reuses its event buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Readiness {
    /// The source can be read without blocking (or has data, or hung up).
    pub readable: bool,
    /// The source can be written without blocking.
    pub writable: bool,
    /// The source has an error pending (`take_error` tells which).
    pub error: bool,
    /// The peer will send nothing more.
    pub read_closed: bool,
    /// The peer will accept nothing more.
    pub write_closed: bool,
}

impl Readiness {
    pub(crate) fn from_event(event: &mio::event::Event) -> Readiness {
        Readiness {
            readable: event.is_readable(),
            writable: event.is_writable(),
            error: event.is_error(),
            read_closed: event.is_read_closed(),
            write_closed: event.is_write_closed(),
        }
    }
}
