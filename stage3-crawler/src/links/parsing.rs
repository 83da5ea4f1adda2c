//! Finding the links on a page, off the loop thread.
//!
//! Everything else the crawler does is waiting; parsing is the one real CPU
//! cost. The chapter parsed on the loop thread, which under the GIL was the
//! only choice. Here the loop thread hands each page to a small pool of
//! helper threads, and carries on driving sockets while they parse (a small
//! page is parsed on the spot: sending it away would cost more). A helper
//! sends the result back through the runtime's [`oneshot`] handoff and wakes
//! the waiting task, which reaches the sleeping loop through the runtime's
//! cross-thread waker (the same road `runtime::spawn_blocking` takes for
//! DNS).
//!
//! [`parse_page`] is the whole job, a plain function, so it can run
//! anywhere: on a helper thread, or inline when the pool has no threads.

use std::future::Future;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::thread::JoinHandle;

use url::Url;

use crawl_kit::links::{Link, resolve_all};
use runtime::oneshot;

use crate::links::charset::decode;
use crate::links::scanner::scan_hrefs;

/// What a page yields: the charset it was read with, and its links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedPage {
    /// The charset the page was read with.
    pub encoding: String,
    /// Its links, resolved, in page order, whatever their scheme.
    pub links: Vec<Url>,
    /// Its hrefs that are not URLs at all, as written, in page order.
    pub invalid: Vec<String>,
}

// ANCHOR: parse_page
/// Decodes `body` (see [`crate::links::charset`]) and extracts its links, resolved
/// against `<base href>` or `page_url`, fragments dropped, without
/// duplicates, in page order, whatever their scheme (the crawl reports a
/// `mailto:` as skipped), and the hrefs that are not URLs. The link rules
/// are stage 1's, shared by every stage; stage 3 finds the hrefs with its
/// own [`scan_hrefs`], which reads only as much HTML as it takes to find
/// tags.
pub fn parse_page(body: &[u8], header_charset: Option<&str>, page_url: &Url) -> ParsedPage {
    let decoded = decode(body, header_charset);
    let mut links = Vec::new();
    let mut invalid = Vec::new();
    for link in resolve_all(&scan_hrefs(&decoded.text), page_url) {
        match link {
            Link::Url(url) => links.push(url),
            Link::Invalid(href) => invalid.push(href),
        }
    }
    ParsedPage {
        encoding: decoded.encoding,
        links,
        invalid,
    }
}
// ANCHOR_END: parse_page

type Job = Box<dyn FnOnce() + Send>;

// ANCHOR: inline_below
/// Bodies shorter than this are parsed on the loop thread. Handing a page to
/// a helper and getting the answer back costs a few system calls and two
/// thread wakeups, tens of microseconds and a wait for a free core; the
/// scanner gets through 16 KiB in less.
pub const PARSE_INLINE_BELOW: usize = 16 * 1024;
// ANCHOR_END: inline_below

/// Threads that run [`parse_page`] for the loop.
pub struct ParsePool {
    /// `None` with no threads: parse inline.
    jobs: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl ParsePool {
    /// Starts `threads` helper threads; zero parses on the calling thread.
    pub fn new(threads: usize) -> io::Result<ParsePool> {
        if threads == 0 {
            return Ok(ParsePool {
                jobs: None,
                threads: Vec::new(),
            });
        }
        let (jobs, queue) = channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let threads = (0..threads)
            .map(|i| {
                let queue = Arc::clone(&queue);
                std::thread::Builder::new()
                    .name(format!("parse-{i}"))
                    .spawn(move || helper(&queue))
            })
            .collect::<io::Result<_>>()?;
        Ok(ParsePool {
            jobs: Some(jobs),
            threads,
        })
    }

    // ANCHOR: parse
    /// Parses a page on a helper thread, or at once if it is small. The
    /// future resolves when it is done; the loop thread is free meanwhile.
    pub fn parse(&self, body: Vec<u8>, charset: Option<String>, page_url: Url) -> Parsing {
        let (sender, result) = oneshot::channel();
        let small = body.len() < PARSE_INLINE_BELOW;
        let parse = move || {
            panic::catch_unwind(AssertUnwindSafe(|| {
                parse_page(&body, charset.as_deref(), &page_url)
            }))
            .map_err(|_| "the parser panicked".to_string())
        };
        match &self.jobs {
            Some(jobs) if !small => {
                // If the helpers are gone, the job (and the sender in it) is
                // dropped unsent, and the waiting task gets an error.
                let _ = jobs.send(Box::new(move || sender.send(parse())));
            }
            _ => sender.send(parse()),
        }
        Parsing { result }
    }
    // ANCHOR_END: parse

    /// Helper threads running.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }
}

impl Drop for ParsePool {
    fn drop(&mut self) {
        // Closing the channel ends each helper's loop.
        self.jobs.take();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn helper(queue: &Mutex<Receiver<Job>>) {
    loop {
        // Hold the lock only to take a job, not while running it.
        let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        match job {
            Ok(job) => job(),
            Err(_) => return, // the pool was dropped
        }
    }
}

type ParseResult = Result<ParsedPage, String>;

/// The future [`ParsePool::parse`] returns.
pub struct Parsing {
    result: oneshot::Receiver<ParseResult>,
}

impl Future for Parsing {
    type Output = ParseResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ParseResult> {
        Pin::new(&mut self.result)
            .poll(cx)
            .map(|result| result.unwrap_or_else(|_| Err("the parser threads are gone".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn parse_page_decodes_and_resolves() {
        let page =
            b"<meta charset=iso-8859-1><base href=/d/><a href=x#f>caf\xe9</a><a href=mailto:a@b>\
              <a href='http://[::1'>v6</a>";
        let parsed = parse_page(page, None, &url("http://h/p"));
        assert_eq!(parsed.encoding, "iso-8859-1");
        // The base is itself a link, as browsers and the demo site count it;
        // a mailto: is a link the crawl will report as skipped.
        assert_eq!(
            parsed.links,
            [url("http://h/d/"), url("http://h/d/x"), url("mailto:a@b")]
        );
        assert_eq!(parsed.invalid, ["http://[::1"]);
    }

    #[test]
    fn helpers_and_inline_give_the_same_answer() {
        // Big enough to go to a helper when there is one.
        let mut body = b"<a href='/a'></a><a href='b'></a>".to_vec();
        body.resize(PARSE_INLINE_BELOW, b' ');
        let base = url("http://h/dir/");
        let want = parse_page(&body, Some("utf-8"), &base);
        for threads in [0, 2] {
            let pool = ParsePool::new(threads).unwrap();
            let got = runtime::run_until_complete(pool.parse(
                body.clone(),
                Some("utf-8".into()),
                base.clone(),
            ))
            .unwrap();
            assert_eq!(got, Ok(want.clone()));
            assert_eq!(pool.threads(), threads);
        }
    }

    #[test]
    fn small_pages_are_parsed_at_once_and_big_ones_on_a_helper() {
        let pool = ParsePool::new(1).unwrap();
        let base = url("http://h/");
        let small = b"<a href=x>".to_vec();
        let mut big = small.clone();
        big.resize(PARSE_INLINE_BELOW, b' ');
        // Ready at the first poll: no helper was involved.
        let mut parsing = pool.parse(small, None, base.clone());
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(Pin::new(&mut parsing).poll(&mut cx).is_ready());
        // The helper is held up until we let it go, so the big page's
        // answer cannot be there at the first poll.
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let _ = pool.jobs.as_ref().unwrap().send(Box::new(move || {
            let _ = wait.recv();
        }));
        let mut parsing = pool.parse(big, None, base.clone());
        assert!(Pin::new(&mut parsing).poll(&mut cx).is_pending());
        release.send(()).unwrap();
        let got = runtime::run_until_complete(parsing).unwrap().unwrap();
        assert_eq!(got.links, [url("http://h/x")]);
    }
}
