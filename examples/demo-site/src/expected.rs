//! The answer key: crawl the site in memory, by the same rules a crawler uses.
//!
//! Instead of writing the expected URL list by hand (and letting it drift
//! from the content), we run a breadth-first crawl over [`Site::route`], the
//! same function the server uses to answer requests.

use std::collections::{HashSet, VecDeque};

use url::{Position, Url};

use crate::ExpectedUrl;
use crate::content::{Route, Site, polite};

/// Content types whose bodies a crawler searches for `href`s.
const MARKUP_TYPES: [&str; 3] = ["text/html", "application/xhtml+xml", "application/xml"];

/// The media type without parameters, lower-cased: `text/html; charset=x`
/// becomes `text/html`.
pub(crate) fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a Content-Type value, lower-cased.
pub(crate) fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_ascii_lowercase())
    })
}

/// Whether a crawler of this site would fetch `url`: http(s) on the site's
/// own host and port.
fn same_site(url: &Url, port: u16) -> bool {
    matches!(url.scheme(), "http" | "https")
        && url.host_str() == Some("127.0.0.1")
        && url.port_or_known_default() == Some(port)
}

fn without_fragment(mut url: Url) -> Url {
    url.set_fragment(None);
    url
}

/// What the in-memory crawl found.
pub(crate) struct Found {
    /// Every URL fetched, sorted.
    pub found: Vec<ExpectedUrl>,
    /// In polite mode, the URLs robots.txt kept it from, sorted.
    pub disallowed: Vec<String>,
}

/// Breadth-first crawl from `/`, returning every URL found, sorted.
pub(crate) fn crawl(site: &Site) -> Found {
    // The origin is built from a number, so it always parses.
    let start = Url::parse(&format!("{}/", site.origin())).expect("origin is a valid URL");
    let mut seen: HashSet<String> = HashSet::from([start.to_string()]);
    let mut queue = VecDeque::from([start]);
    let mut found = Vec::new();
    let mut disallowed = Vec::new();

    while let Some(url) = queue.pop_front() {
        // What goes on the request line: path and query, no fragment.
        let target = &url[Position::BeforePath..Position::AfterQuery];
        if site.is_polite() && !polite::allowed(target) {
            disallowed.push(url.to_string());
            continue;
        }
        let Some(Route::Resource(res)) = site.route_over(url.scheme(), target) else {
            // Fault paths are never linked, so a crawl never reaches them;
            // nor does a plain site link to itself over https.
            continue;
        };

        let location = res
            .location
            .as_deref()
            .and_then(|l| url.join(l).ok())
            .map(without_fragment);
        let mut next: Vec<Url> = location.iter().cloned().collect();

        let content_type = res.content_type.unwrap_or("");
        // The traps go on forever: their first page is all we count.
        let trap = url.path() == "/polite/calendar" || polite::is_deep(url.path());
        if !trap && MARKUP_TYPES.contains(&essence(content_type).as_str()) {
            // `<base href>` is itself resolved against the page URL, and then
            // every other link is resolved against it.
            let base = match res.base.as_deref().and_then(|b| url.join(b).ok()) {
                Some(base) => {
                    next.push(base.clone());
                    base
                }
                None => url.clone(),
            };
            next.extend(res.links.iter().filter_map(|href| base.join(href).ok()));
        }

        for link in next.into_iter().map(without_fragment) {
            if same_site(&link, site.port()) && seen.insert(link.to_string()) {
                queue.push_back(link);
            }
        }

        found.push(ExpectedUrl {
            url: url.to_string(),
            status: res.status,
            location: location.map(|l| l.to_string()),
            content_type: res.content_type.map(str::to_string),
            charset: res
                .content_type
                .and_then(charset_param)
                .or_else(|| res.meta_charset.map(str::to_ascii_lowercase)),
            body_is_utf8: std::str::from_utf8(&res.body).is_ok(),
        });
    }
    found.sort();
    disallowed.sort();
    Found { found, disallowed }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_type_parsing() {
        assert_eq!(essence("Text/HTML; charset=UTF-8"), "text/html");
        assert_eq!(
            charset_param("text/html; Charset=\"UTF-8\"").as_deref(),
            Some("utf-8")
        );
        assert_eq!(charset_param("text/html"), None);
        assert_eq!(charset_param("text/html; q=1"), None);
    }

    #[test]
    fn crawl_is_deterministic_and_sorted() {
        let site = Site::new(10, 3, 0, 8000, false);
        let a = crawl(&site).found;
        assert_eq!(a, crawl(&site).found);
        assert!(a.windows(2).all(|w| w[0].url < w[1].url));
    }

    #[test]
    fn every_page_is_reachable() {
        for (pages, fan_out) in [(1, 0), (1, 1), (7, 1), (50, 2), (100, 5)] {
            let site = Site::new(pages, fan_out, 0, 8000, false);
            let urls: Vec<_> = crawl(&site).found.into_iter().map(|e| e.url).collect();
            for n in 0..pages {
                let dir = crate::content::DIRS[n % 3];
                let url = format!("http://127.0.0.1:8000/pages/{dir}/{n}.html");
                assert!(urls.contains(&url), "{url} missing for {pages}/{fan_out}");
            }
        }
    }

    #[test]
    fn nothing_found_is_a_fault_or_a_surprise_404() {
        let site = Site::new(100, 5, 0, 8000, false);
        let found = crawl(&site).found;
        let not_found: Vec<_> = found
            .iter()
            .filter(|e| e.status == 404)
            .map(|e| e.url.as_str())
            .collect();
        assert_eq!(not_found, ["http://127.0.0.1:8000/missing.html"]);
        assert!(found.iter().all(|e| !e.url.contains("/fault/")));
        assert!(found.iter().all(|e| !e.url.contains("/not-a-link/")));
    }
}
