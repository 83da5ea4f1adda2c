//! Errors that remember where they happened.
//!
//! In the callback crawler an error surfaces in whichever callback the event
//! loop happened to run, and nothing records how we got there: the stack that
//! led to it was unwound long ago. A coroutine keeps its callers, so an error
//! can travel back up through them. Each step it passes through wraps it
//! with the step's name, the way a traceback lists its frames, and the chain
//! reads `fetch http://…/: read_all: read: Connection reset by peer`.

use std::error::Error;
use std::fmt;

use url::Url;

/// What the error sources of our steps may be: anything an error can hold
/// and hand to another thread.
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

// ANCHOR: step_error
/// An error that passed through one step (`connect`, `read`, `read_all`,
/// `send`, ...) on its way up. `Display` shows only the step's name; the rest
/// of the story is in [`source`](Error::source).
#[derive(Debug)]
pub struct StepError {
    step: String,
    source: BoxError,
}

impl StepError {
    /// An error from `step`, caused by `source`.
    pub fn new(step: impl Into<String>, source: impl Into<BoxError>) -> StepError {
        StepError {
            step: step.into(),
            source: source.into(),
        }
    }

    /// The name of the step the error passed through.
    pub fn step(&self) -> &str {
        &self.step
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.step)
    }
}

impl Error for StepError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.source)
    }
}
// ANCHOR_END: step_error

/// Why `fetch` could not get a response for `url`: the top of the chain.
#[derive(Debug)]
pub struct FetchError {
    url: Url,
    source: BoxError,
}

impl FetchError {
    /// A failed fetch of `url`, caused by `source`.
    pub fn new(url: Url, source: impl Into<BoxError>) -> FetchError {
        FetchError {
            url,
            source: source.into(),
        }
    }

    /// The URL that failed.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The chain below `fetch`, for a line that already names the URL:
    /// `read_all: read: Connection reset by peer (os error 104)`.
    pub fn reason(&self) -> String {
        chain(&*self.source)
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fetch {}", self.url)
    }
}

impl Error for FetchError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.source)
    }
}

// ANCHOR: chain
/// An error and all its sources, outermost first, joined by `": "`.
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(source) = next {
        text.push_str(": ");
        text.push_str(&source.to_string());
        next = source.source();
    }
    text
}
// ANCHOR_END: chain

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn the_chain_names_every_step_outermost_first() {
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "connection reset");
        let read = StepError::new("read", reset);
        let read_all = StepError::new("read_all", read);
        let url = Url::parse("http://example.com/a").unwrap();
        let fetch = FetchError::new(url, read_all);
        assert_eq!(fetch.to_string(), "fetch http://example.com/a");
        assert_eq!(
            chain(&fetch),
            "fetch http://example.com/a: read_all: read: connection reset"
        );
        assert_eq!(fetch.reason(), "read_all: read: connection reset");
    }

    #[test]
    fn the_innermost_error_can_be_found_and_inspected() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        let err = StepError::new("connect 127.0.0.1:1", refused);
        assert_eq!(err.step(), "connect 127.0.0.1:1");
        let io = err
            .source()
            .and_then(|e| e.downcast_ref::<io::Error>())
            .map(io::Error::kind);
        assert_eq!(io, Some(io::ErrorKind::ConnectionRefused));
    }
}
