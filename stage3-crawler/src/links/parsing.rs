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

use std::borrow::Cow;

use crawl_kit::links::{Link, QueryEncoding, resolve_all_encoded};
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
    // A link's query is written in the page's encoding, as a browser
    // writes it; UTF-16 pages, like UTF-8 ones, use UTF-8 (the URL
    // standard's "output encoding").
    let legacy = encoding_rs::Encoding::for_label(decoded.encoding.as_bytes())
        .map(|encoding| encoding.output_encoding())
        .filter(|&encoding| encoding != encoding_rs::UTF_8);
    let encode = legacy.map(|encoding| query_encoder(move |query| encode_query(encoding, query)));
    let query = encode.as_ref().map(|encode| encode as QueryEncoding<'_>);
    let mut links = Vec::new();
    let mut invalid = Vec::new();
    for link in resolve_all_encoded(&scan_hrefs(&decoded.text), page_url, query) {
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

/// `query` in `encoding`, as the URL standard encodes a query: a character
/// the encoding lacks becomes `%26%23` and its number and `%3B` (the URL
/// parser leaves `%` as it is), not the `&#...;` of an HTML form.
fn encode_query<'a>(encoding: &'static encoding_rs::Encoding, query: &'a str) -> Cow<'a, [u8]> {
    let (bytes, _, unmappable) = encoding.encode(query);
    if !unmappable {
        return bytes;
    }
    let mut encoder = encoding.new_encoder();
    let mut out = Vec::with_capacity(query.len() + 16);
    let mut rest = query;
    let mut buf = vec![0u8; query.len() * 4 + 16];
    loop {
        let (result, read, written) =
            encoder.encode_from_utf8_without_replacement(rest, &mut buf, true);
        out.extend_from_slice(&buf[..written]);
        rest = &rest[read..];
        match result {
            encoding_rs::EncoderResult::InputEmpty => return Cow::Owned(out),
            encoding_rs::EncoderResult::Unmappable(c) => {
                out.extend_from_slice(format!("%26%23{}%3B", u32::from(c)).as_bytes());
            }
            encoding_rs::EncoderResult::OutputFull => {}
        }
    }
}

/// A closure that encodes a query, with the lifetimes the URL parser asks.
fn query_encoder<F>(f: F) -> F
where
    F: for<'a> Fn(&'a str) -> Cow<'a, [u8]>,
{
    f
}

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
    fn a_query_is_written_in_the_page_s_encoding_and_a_path_in_utf_8() {
        // `<a href="/ok/テスト?q=テスト">` in Shift_JIS: テ is 83 65, ス 83 58,
        // ト 83 67. A browser requests the path in UTF-8 and the query in
        // the page's encoding, and so do we.
        let page = b"<a href=\"/ok/\x83e\x83X\x83g?q=\x83e\x83X\x83g\">x</a>";
        let parsed = parse_page(page, Some("shift_jis"), &url("http://h/"));
        assert_eq!(parsed.encoding, "shift_jis");
        assert_eq!(
            parsed.links,
            [url(
                "http://h/ok/%E3%83%86%E3%82%B9%E3%83%88?q=%83e%83X%83g"
            )]
        );
        // A character the encoding lacks is a numeric reference, as the
        // URL standard says; a UTF-8 page's query is UTF-8.
        let page = b"<a href=\"/q?q=\x83e&#x1F600;\">x</a>";
        let parsed = parse_page(page, Some("shift_jis"), &url("http://h/"));
        assert_eq!(parsed.links, [url("http://h/q?q=%83e%26%23128512%3B")]);
        let parsed = parse_page("<a href=/q?q=テ>x</a>".as_bytes(), None, &url("http://h/"));
        assert_eq!(parsed.links, [url("http://h/q?q=%E3%83%86")]);
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
