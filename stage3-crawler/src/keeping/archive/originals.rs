//! What the archive holds whole, for revisit records to point at: the
//! record of each page's last full response, and the record of each
//! payload, by its digest. A crawl that resumes, or crawls again, learns
//! them from the file ([`super::scan`]); the archivers add each response
//! they write whole.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::keeping::warc::{Kept, Original, Parsed};

/// The records a revisit may point at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Originals {
    /// The record holding each URL's page, as its last `200 OK` had it.
    by_url: HashMap<String, Arc<Original>>,
    /// The first record holding each payload, by its digest.
    by_digest: HashMap<String, Arc<Original>>,
    /// The ids of records an archiver has chosen as originals and not yet
    /// written: a revisit pointing at one waits for it, so that no revisit
    /// is ever in the file before its original.
    pending: HashSet<String>,
}

/// How an exchange's response is to be kept, owning what it points at.
#[derive(Clone)]
pub enum Keep {
    /// Whole.
    Whole,
    /// A revisit, of the server's `304`.
    NotModified(Arc<Original>),
    /// A revisit, of a payload held already.
    IdenticalPayload(Arc<Original>),
}

impl Keep {
    /// The id of the record a revisit points at.
    pub fn refers_to(&self) -> Option<&str> {
        match self {
            Keep::Whole => None,
            Keep::NotModified(original) | Keep::IdenticalPayload(original) => Some(&original.id),
        }
    }

    /// The same, as the record writer takes it.
    pub fn as_kept(&self) -> Kept<'_> {
        match self {
            Keep::Whole => Kept::Whole,
            Keep::NotModified(original) => Kept::NotModified(original),
            Keep::IdenticalPayload(original) => Kept::IdenticalPayload(original),
        }
    }
}

/// The status of a response head (`HTTP/1.1 200 OK`).
pub fn status_of(head: &[u8]) -> Option<u16> {
    let line = head.split(|&b| b == b'\n').next()?;
    let code = line.split(|&b| b == b' ').nth(1)?;
    std::str::from_utf8(code).ok()?.trim().parse().ok()
}

impl Originals {
    /// The validators of the record that holds `url`'s page whole, if
    /// there is one: a recrawl asks with these, and no others, so that a
    /// `304` says this very record is still the page, and is kept as a
    /// revisit of it.
    pub fn page_validators(&self, url: &str) -> Option<&crate::http::Validators> {
        self.by_url.get(url)?.validators.as_ref()
    }

    // ANCHOR: keep
    /// How to keep a response to `url` with `status`, whose payload has
    /// `digest`; `whole` when that payload is all there (not cut at
    /// `--max-body`). An empty payload is never worth a revisit.
    pub fn keep(&self, url: &str, status: Option<u16>, digest: &str, whole: bool) -> Keep {
        match status {
            Some(304) => match self.by_url.get(url) {
                Some(original) => Keep::NotModified(Arc::clone(original)),
                // Not asked for with validators by us: kept as it came.
                None => Keep::Whole,
            },
            Some(200) if whole && digest != EMPTY_DIGEST => match self.by_digest.get(digest) {
                Some(original) => Keep::IdenticalPayload(Arc::clone(original)),
                None => Keep::Whole,
            },
            _ => Keep::Whole,
        }
    }
    // ANCHOR_END: keep

    /// Notes what a record about to be written holds (see
    /// [`wrote`](Self::wrote)); a new original is pending until
    /// [`written`](Self::written) says it is in the file.
    pub fn writing(
        &mut self,
        url: &str,
        status: Option<u16>,
        whole: bool,
        keep: Keep,
        record: Original,
    ) {
        let id = record.id.clone();
        if self.wrote(url, status, whole, keep, record) {
            self.pending.insert(id);
        }
    }

    /// The record `id` is in the file (or will never be: the archive
    /// failed): revisits of it may be written.
    pub fn written(&mut self, id: &str) {
        self.pending.remove(id);
    }

    /// Whether the record `id` is chosen as an original and not written.
    pub fn is_pending(&self, id: &str) -> bool {
        self.pending.contains(id)
    }

    /// Notes what a record written (or read back) holds: a whole `200 OK`
    /// is the original of its page, and of its payload if none was before;
    /// a revisit makes the record it points at its page's original.
    /// Returns whether `record` became an original.
    pub fn wrote(
        &mut self,
        url: &str,
        status: Option<u16>,
        whole: bool,
        keep: Keep,
        record: Original,
    ) -> bool {
        match keep {
            Keep::Whole if status == Some(200) && whole => {
                let original = Arc::new(record);
                if original.digest != EMPTY_DIGEST {
                    self.by_digest
                        .entry(original.digest.clone())
                        .or_insert_with(|| Arc::clone(&original));
                }
                self.by_url.insert(url.to_string(), original);
                true
            }
            Keep::Whole => false,
            Keep::NotModified(original) | Keep::IdenticalPayload(original) => {
                self.by_url.insert(url.to_string(), original);
                false
            }
        }
    }

    /// Notes what a record read back from the file holds.
    pub fn read_back(&mut self, record: &Parsed) {
        let (Some(url), Some(id), Some(date)) = (&record.target_uri, &record.id, &record.date)
        else {
            return;
        };
        match record.kind.as_str() {
            "response" => {
                let Some(digest) = &record.payload_digest else {
                    return;
                };
                let written = Original {
                    id: id.clone(),
                    uri: url.clone(),
                    date: date.clone(),
                    digest: digest.clone(),
                    validators: record.validators.clone(),
                };
                self.wrote(url, record.status, !record.truncated, Keep::Whole, written);
            }
            "revisit" => {
                let Some((id, uri, date)) = &record.refers_to else {
                    return;
                };
                let pointed = self.by_url.get(uri.as_str()).filter(|o| o.id == *id);
                let digest = pointed
                    .map(|o| o.digest.clone())
                    .or_else(|| record.payload_digest.clone())
                    .unwrap_or_default();
                let original = Arc::new(Original {
                    id: id.clone(),
                    uri: uri.clone(),
                    date: date.clone(),
                    digest,
                    // A revisit vouches for the record it points at, whose
                    // head had these; unknown, none is sent.
                    validators: pointed.and_then(|o| o.validators.clone()),
                });
                self.by_url.insert(url.clone(), original);
            }
            _ => {}
        }
    }
}

/// The digest of no bytes at all: an empty body is not worth a revisit.
pub const EMPTY_DIGEST: &str = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keeping::warc::sha1_digest;

    fn original(id: &str, url: &str, digest: &str) -> Original {
        Original {
            id: id.into(),
            uri: url.into(),
            date: "2026-11-28T00:00:00Z".into(),
            digest: digest.into(),
            validators: None,
        }
    }

    #[test]
    fn the_digest_of_nothing_is_the_empty_digest() {
        assert_eq!(sha1_digest(b""), EMPTY_DIGEST);
    }

    #[test]
    fn a_status_is_read_from_the_head() {
        assert_eq!(status_of(b"HTTP/1.1 304 Not Modified\r\n\r\n"), Some(304));
        assert_eq!(status_of(b"HTTP/1.0 200\r\n"), Some(200));
        assert_eq!(status_of(b"garbage"), None);
    }

    #[test]
    fn a_304_revisits_the_page_and_a_200_the_payload() {
        let mut originals = Originals::default();
        // Nothing held: kept whole.
        assert!(matches!(
            originals.keep("u", Some(304), "d", true),
            Keep::Whole
        ));
        assert!(matches!(
            originals.keep("u", Some(200), "d", true),
            Keep::Whole
        ));
        originals.wrote("u", Some(200), true, Keep::Whole, original("<1>", "u", "d"));
        assert!(originals.by_url.contains_key("u"));
        let Keep::NotModified(o) = originals.keep("u", Some(304), "x", true) else {
            panic!("not a revisit");
        };
        assert_eq!(o.id, "<1>");
        // Another URL with the same payload points at the first.
        let Keep::IdenticalPayload(o) = originals.keep("v", Some(200), "d", true) else {
            panic!("not a revisit");
        };
        assert_eq!(o.uri, "u");
        // ... and becomes its page's original for a later 304.
        originals.wrote(
            "v",
            Some(200),
            true,
            Keep::IdenticalPayload(o),
            original("<2>", "v", "d"),
        );
        let Keep::NotModified(o) = originals.keep("v", Some(304), "", true) else {
            panic!("not a revisit");
        };
        assert_eq!(o.id, "<1>");
        // A cut payload, an empty one, or another status, is kept whole.
        assert!(matches!(
            originals.keep("w", Some(200), "d", false),
            Keep::Whole
        ));
        let empty = |o: &mut Originals, url: &str| {
            o.wrote(
                url,
                Some(200),
                true,
                Keep::Whole,
                original("<e>", url, EMPTY_DIGEST),
            );
        };
        empty(&mut originals, "e1");
        empty(&mut originals, "e2");
        assert!(matches!(
            originals.keep("e3", Some(200), EMPTY_DIGEST, true),
            Keep::Whole
        ));
        // ... but an empty page is still the original of its 304s.
        assert!(matches!(
            originals.keep("e2", Some(304), "", true),
            Keep::NotModified(_)
        ));
        assert!(matches!(
            originals.keep("w", Some(404), "d", true),
            Keep::Whole
        ));
        // A 404 written whole is no page's original.
        originals.wrote("w", Some(404), true, Keep::Whole, original("<3>", "w", "e"));
        assert!(!originals.by_url.contains_key("w"));
    }
}
