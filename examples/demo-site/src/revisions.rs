//! Validators and revised pages, for testing a crawler that crawls a site
//! again ([`SiteConfig::validators`](crate::SiteConfig::validators)).
//!
//! With validators on, every `200 OK` carries an `ETag` (a hash of the body
//! as sent) and a `Last-Modified` date, and a request that sends them back
//! (`If-None-Match`, `If-Modified-Since`) for a page that has not changed
//! gets `304 Not Modified`, with no body. The tag decides when both come
//! (RFC 9110 section 13.2.2); the date is compared as text, as nginx does
//! by default (`if_modified_since exact`).
//!
//! [`DemoSite::revise_pages`](crate::DemoSite::revise_pages) changes the
//! first numbered pages while the site runs: each gets a paragraph, a later
//! `Last-Modified`, and a link to `/changes.html`, a page only they link
//! to. A recrawl then finds exactly those pages changed, and one new page.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::content::{DIRS, Resource};
use crate::http::Request;

/// When every page was published.
pub(crate) const PUBLISHED: &str = "Sat, 01 Jan 2022 00:00:00 GMT";
/// When the revised pages were revised.
pub(crate) const REVISED: &str = "Sun, 01 Jan 2023 00:00:00 GMT";
/// The page only revised pages link to.
pub(crate) const CHANGES: &str = "/changes.html";

/// What the site says about versions of its pages.
pub(crate) struct Revisions {
    /// Whether it sends validators at all.
    on: bool,
    /// Numbered pages below this number are revised.
    revised: AtomicUsize,
}

/// A page as sent, with its validators.
pub(crate) struct Version {
    pub res: Arc<Resource>,
    pub etag: String,
    pub last_modified: &'static str,
}

impl Revisions {
    pub(crate) fn new(on: bool) -> Revisions {
        Revisions {
            on,
            revised: AtomicUsize::new(0),
        }
    }

    /// Revises numbered pages `0..n` (and only those) from now on.
    pub(crate) fn revise(&self, n: usize) {
        self.revised.store(n, Ordering::SeqCst);
    }

    /// The version of `res` the request for `path` gets, with its
    /// validators; `None` when validators are off or it is no `200 OK`.
    pub(crate) fn version(&self, path: &str, res: &Arc<Resource>) -> Option<Version> {
        if !self.on || res.status != 200 {
            return None;
        }
        let revised = self.revised.load(Ordering::SeqCst);
        let (res, last_modified) = match numbered_page(path) {
            Some(n) if n < revised => (Arc::new(revised_page(res)), REVISED),
            _ => (Arc::clone(res), PUBLISHED),
        };
        let etag = format!("\"{:016x}\"", fnv1a(&res.body));
        Some(Version {
            res,
            etag,
            last_modified,
        })
    }

    /// The page `/changes.html`, when any page was revised.
    pub(crate) fn changes_page(&self) -> Option<Resource> {
        let revised = self.revised.load(Ordering::SeqCst);
        if !self.on || revised == 0 {
            return None;
        }
        let mut body = String::from(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Changes</title></head>\
             <body><h1>Changes</h1><p>These pages were revised:</p><ul>",
        );
        for n in 0..revised {
            let dir = DIRS[n % DIRS.len()];
            body.push_str(&format!(
                "<li><a href=\"/pages/{dir}/{n}.html\">page {n}</a></li>"
            ));
        }
        body.push_str("</ul></body></html>\n");
        Some(Resource {
            status: 200,
            content_type: Some("text/html; charset=utf-8"),
            location: None,
            chunked: false,
            links: Vec::new(),
            base: None,
            meta_charset: Some("utf-8"),
            body: body.into_bytes(),
        })
    }
}

impl Version {
    /// The tag of the body sent in `coding` (`None`: as it is): each
    /// content coding is a representation of its own, with its own tag.
    pub(crate) fn tag(&self, coding: Option<&str>) -> String {
        match coding {
            Some(coding) => format!("{}-{coding}\"", &self.etag[..self.etag.len() - 1]),
            None => self.etag.clone(),
        }
    }
}

/// Whether `request` already has the version tagged `etag`, last modified
/// at `last_modified`: by its tag if it sent one, else by its date,
/// compared as text.
pub(crate) fn not_modified(request: &Request, etag: &str, last_modified: &str) -> bool {
    match (&request.if_none_match, &request.if_modified_since) {
        (Some(tags), _) => tags
            .split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag),
        (None, Some(date)) => date.trim() == last_modified,
        (None, None) => false,
    }
}

/// The number `n` of a numbered page's path, `/pages/{dir}/{n}.html`.
fn numbered_page(path: &str) -> Option<usize> {
    let rest = path.strip_prefix("/pages/")?;
    let (dir, file) = rest.split_once('/')?;
    let n: usize = file.strip_suffix(".html")?.parse().ok()?;
    (DIRS[n % DIRS.len()] == dir).then_some(n)
}

/// `res` with a paragraph saying it was revised, and a link to the changes.
fn revised_page(res: &Resource) -> Resource {
    let note = format!("<p>Revised in 2023; see <a href=\"{CHANGES}\">the changes</a>.</p>");
    let mut body = res.body.clone();
    let at = find(&body, b"</body>").unwrap_or(body.len());
    body.splice(at..at, note.into_bytes());
    Resource {
        body,
        ..res.clone()
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// FNV-1a, 64 bits: a tag that changes when the body does.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(etag: Option<&str>, date: Option<&str>) -> Request {
        Request {
            method: "GET".into(),
            target: "/".into(),
            http10: false,
            wants_close: false,
            accept_encoding: None,
            if_none_match: etag.map(str::to_string),
            if_modified_since: date.map(str::to_string),
        }
    }

    #[test]
    fn numbered_pages_are_found_by_their_path() {
        assert_eq!(numbered_page("/pages/a/0.html"), Some(0));
        assert_eq!(numbered_page("/pages/b/7.html"), Some(7));
        assert_eq!(numbered_page("/pages/a/7.html"), None);
        assert_eq!(numbered_page("/pages/"), None);
    }

    #[test]
    fn the_tag_decides_and_the_date_is_compared_as_text() {
        let res = Arc::new(Resource::error(200, "x"));
        let revisions = Revisions::new(true);
        let v = revisions.version("/pages/a/0.html", &res).unwrap();
        let fresh = |r: &Request, v: &Version| not_modified(r, &v.etag, v.last_modified);
        assert_eq!(v.last_modified, PUBLISHED);
        assert!(fresh(&request(Some(&v.etag), None), &v));
        assert!(fresh(&request(Some(&format!("W/{}", v.etag)), None), &v));
        assert!(fresh(&request(Some("*"), None), &v));
        // A tag that does not match wins over a date that does.
        assert!(!fresh(&request(Some("\"other\""), Some(PUBLISHED)), &v));
        assert!(fresh(&request(None, Some(PUBLISHED)), &v));
        assert!(!fresh(&request(None, Some(REVISED)), &v));
        // Revised, the page has a new tag and date, and a link more.
        revisions.revise(1);
        let w = revisions.version("/pages/a/0.html", &res).unwrap();
        assert_ne!(w.etag, v.etag);
        assert_eq!(w.last_modified, REVISED);
        assert!(!fresh(&request(Some(&v.etag), None), &w));
        assert!(String::from_utf8_lossy(&w.res.body).contains(CHANGES));
        // A compressed body is another representation.
        let gz = w.tag(Some("gzip"));
        assert_eq!(gz, format!("{}-gzip\"", &w.etag[..w.etag.len() - 1]));
        assert!(Revisions::new(false).version("/", &res).is_none());
    }
}
