//! Conditional requests (RFC 9110 section 13): asking for a page only if
//! it changed since we last fetched it.
//!
//! A response may carry two validators: an `ETag` (an opaque tag the
//! server changes whenever the content changes) and a `Last-Modified`
//! date. Sent back as `If-None-Match` and `If-Modified-Since`, they let the
//! server answer `304 Not Modified` with no body at all. A server that
//! gets both judges by the tag alone (section 13.2.2), so we send both and
//! let it choose.

use super::response::Response;

/// The longest validator we keep: a server's tags are a few dozen bytes;
/// a longer one would only make every later request longer.
const MAX_VALIDATOR: usize = 1024;

/// What a response said about its version of the page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    /// The `ETag`, exactly as sent (quotes and any `W/` included).
    pub etag: Option<String>,
    /// The `Last-Modified` date, exactly as sent.
    pub last_modified: Option<String>,
}

impl Validators {
    /// Validators from their values, each kept only if it can be sent back
    /// as it is: one line of visible text, not too long. (They come back
    /// from a journal, which is a file, and a file can be edited.)
    pub fn new(etag: Option<&str>, last_modified: Option<&str>) -> Option<Validators> {
        let keep = |value: Option<&str>| {
            value
                .map(str::trim)
                .filter(|v| !v.is_empty() && v.len() <= MAX_VALIDATOR)
                .filter(|v| v.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)))
                .map(str::to_string)
        };
        let validators = Validators {
            etag: keep(etag),
            last_modified: keep(last_modified),
        };
        (validators.etag.is_some() || validators.last_modified.is_some()).then_some(validators)
    }

    /// The validators of a `200 OK`, if it has any. Another status's are
    /// not the page's.
    pub fn of(response: &Response) -> Option<Validators> {
        if response.status != 200 {
            return None;
        }
        Validators::new(response.header("etag"), response.header("last-modified"))
    }

    /// The validators in a response head as received (`HTTP/1.1 200 OK`,
    /// then header lines), whatever its status: what an archived response
    /// record says of its page.
    pub fn in_head(head: &[u8]) -> Option<Validators> {
        let text = String::from_utf8_lossy(head);
        let field = |name: &str| {
            text.lines().skip(1).find_map(|line| {
                let (n, v) = line.split_once(':')?;
                n.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_string())
            })
        };
        Validators::new(field("etag").as_deref(), field("last-modified").as_deref())
    }

    /// The header fields that send them back, named as HTTP/2 writes them
    /// (lower case); HTTP/1.1's names are the same, whatever their case.
    pub fn fields(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let etag = self.etag.as_deref().map(|v| ("if-none-match", v));
        let date = self
            .last_modified
            .as_deref()
            .map(|v| ("if-modified-since", v));
        etag.into_iter().chain(date)
    }

    /// The same fields as HTTP/1.1 request lines.
    pub fn lines(&self) -> String {
        let mut lines = String::new();
        if let Some(etag) = &self.etag {
            lines.push_str(&format!("If-None-Match: {etag}\r\n"));
        }
        if let Some(date) = &self.last_modified {
            lines.push_str(&format!("If-Modified-Since: {date}\r\n"));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_cannot_be_sent_back_is_not_kept() {
        assert_eq!(Validators::new(None, None), None);
        assert_eq!(Validators::new(Some(""), Some("  ")), None);
        // A line break would start another header line in our request.
        assert_eq!(Validators::new(Some("\"a\"\r\nX-Evil: 1"), None), None);
        let long = "x".repeat(MAX_VALIDATOR + 1);
        assert_eq!(Validators::new(Some(&long), None), None);
        let kept = Validators::new(Some("\"a\"\rb"), Some("Sat, 01 Jan 2022 00:00:00 GMT"));
        assert_eq!(
            kept,
            Some(Validators {
                etag: None,
                last_modified: Some("Sat, 01 Jan 2022 00:00:00 GMT".into()),
            })
        );
    }

    #[test]
    fn both_are_sent_and_the_server_chooses() {
        let v = Validators::new(Some("W/\"7\""), Some("Sat, 01 Jan 2022 00:00:00 GMT")).unwrap();
        assert_eq!(
            v.lines(),
            "If-None-Match: W/\"7\"\r\nIf-Modified-Since: Sat, 01 Jan 2022 00:00:00 GMT\r\n"
        );
        let fields: Vec<_> = v.fields().collect();
        assert_eq!(
            fields,
            [
                ("if-none-match", "W/\"7\""),
                ("if-modified-since", "Sat, 01 Jan 2022 00:00:00 GMT")
            ]
        );
    }

    #[test]
    fn a_head_as_received_has_its_validators() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"v1\"\r\n\
                     last-modified: Sat, 01 Jan 2022 00:00:00 GMT\r\n\r\n";
        assert_eq!(
            Validators::in_head(head),
            Some(Validators {
                etag: Some("\"v1\"".into()),
                last_modified: Some("Sat, 01 Jan 2022 00:00:00 GMT".into()),
            })
        );
        assert_eq!(Validators::in_head(b"HTTP/1.1 200 OK\r\n\r\n"), None);
    }

    #[test]
    fn only_a_200_has_validators_for_the_page() {
        let mut response = Response {
            status: 404,
            headers: vec![("ETag".into(), "\"x\"".into())],
            ..Response::default()
        };
        assert_eq!(Validators::of(&response), None);
        response.status = 200;
        assert_eq!(
            Validators::of(&response),
            Some(Validators {
                etag: Some("\"x\"".into()),
                last_modified: None,
            })
        );
    }
}
