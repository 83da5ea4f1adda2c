//! Polite mode (`SiteConfig::polite`): a robots.txt with rules worth
//! obeying, sitemaps, and the pages they talk about, under `/polite/`.
//!
//! The robots.txt has a `*` group that disallows everything and a group
//! for `stage3-crawler` with a few real rules, so a crawler that picks the
//! wrong group finds a visibly different site. The answer key reads the
//! same rule table the file is written from ([`RULES`]), so the two cannot
//! drift.

use std::time::Duration;

use super::{HTML_UTF8, Resource, Site, chrome, leaf};
use crate::compress;
use crate::html::Html;

/// The product token the robots.txt has a group for.
pub const CRAWLER_TOKEN: &str = "stage3-crawler";

/// The `stage3-crawler` group: `(allow, pattern)`. `*` is any run of
/// characters, and a final `$` anchors at the end of the path and query.
pub(crate) const RULES: [(bool, &str); 4] = [
    (false, "/polite/private/"),
    (true, "/polite/private/open.html"),
    (false, "/*.pdf$"),
    (false, "/polite/search"),
];

/// The calendar trap's first month; every month links the next one.
const CALENDAR_START: (i64, i64) = (2026, 11);

/// Polite mode's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Polite {
    /// Written as the `stage3-crawler` group's Crawl-delay.
    pub crawl_delay: Option<Duration>,
}

impl Site {
    /// Polite mode's answer for `path`, if it has one.
    pub(super) fn polite_resource(&self, path: &str) -> Option<Resource> {
        let polite = self.polite.as_ref()?;
        let resource = match path {
            "/robots.txt" => text("text/plain; charset=utf-8", robots_txt(self, polite)),
            "/sitemap.xml" => text("application/xml", self.sitemap_index()),
            "/polite/sitemaps/pages.xml.gz" => Resource::opaque(
                "application/gzip",
                compress::gzip(self.sitemap_pages().as_bytes()),
            ),
            "/polite/" => self.polite_hub(),
            "/polite/private/secret.html" => linking(
                "A private page",
                "robots.txt disallows /polite/private/ for stage3-crawler: an obedient \
                 crawler never asks for this page, and never finds the page it links.",
                &["deeper.html"],
            ),
            "/polite/private/deeper.html" => leaf(
                "Deeper in the private part",
                "Linked only from a disallowed page.",
            ),
            "/polite/private/open.html" => leaf(
                "An open private page",
                "Inside /polite/private/, but an Allow rule, longer than the Disallow, opens it.",
            ),
            "/polite/files/report.pdf" => Resource::opaque(
                "application/pdf",
                b"%PDF-1.4\n% not really a report\n".to_vec(),
            ),
            "/polite/search" => leaf("Search results", "Disallowed: /polite/search."),
            "/polite/bomb.html" => leaf(
                "A compression bomb",
                "Asked for with gzip, this page is a megabyte of gzip that inflates to a \
                 gibibyte of zeros. A crawler must stop decoding at its size limit.",
            ),
            "/polite/sitemap-only.html" => linking(
                "Only in the sitemap",
                "No page links here; the sitemap lists it.",
                &["sitemap-only-child.html"],
            ),
            "/polite/sitemap-only-child.html" => leaf(
                "Linked from a sitemap page",
                "Found through a sitemap only.",
            ),
            _ if is_deep(path) => linking(
                "A deep path",
                "Each level links one more a/ below itself, forever: the crawler's \
                 path-repetition guard ends it.",
                &["a/"],
            ),
            _ => return None,
        };
        Some(resource)
    }

    /// The hub, linked from the index in polite mode.
    fn polite_hub(&self) -> Resource {
        let mut h = Html::new("Polite crawling", chrome());
        h.p(
            "The pages below test a polite crawler: robots.txt rules for stage3-crawler, a \
             compressed-response bomb, and a calendar that goes on forever.",
        );
        h.raw("<ul>\n");
        for (href, text, note) in [
            ("private/secret.html", "A private page", "disallowed"),
            (
                "private/open.html",
                "An open private page",
                "allowed by a longer rule",
            ),
            ("files/report.pdf", "A report", "disallowed by /*.pdf$"),
            (
                "files/report.pdf?download=1",
                "The report, downloaded",
                "allowed: $ anchors",
            ),
            ("search?q=crawler", "A search", "disallowed"),
            ("bomb.html", "A compression bomb", "1 GiB when inflated"),
            (
                "calendar?month=2026-11",
                "A calendar",
                "a trap: next month, forever",
            ),
            ("deep/a/", "A deep path", "a trap: a/a/a/..., forever"),
        ] {
            h.li_a(href, text, note);
        }
        h.raw("</ul>\n");
        Resource::html(200, HTML_UTF8, h.finish(), false)
    }

    /// `/polite/calendar?month=YYYY-MM`: links the next and the previous
    /// month, forever. Built per request (routing ignores queries, and the
    /// cache would keep every month a crawler asked for).
    pub(super) fn calendar(&self, target: &str) -> Option<Resource> {
        self.polite.as_ref()?;
        let query = target.strip_prefix("/polite/calendar")?;
        let (year, month) = query
            .strip_prefix("?month=")
            .and_then(|m| m.split_once('-'))
            .and_then(|(y, m)| Some((y.parse::<i64>().ok()?, m.parse::<i64>().ok()?)))
            .filter(|(y, m)| (1..=12).contains(m) && (1..=9999).contains(y))
            .unwrap_or(CALENDAR_START);
        let month_link = |delta: i64| {
            let n = year * 12 + (month - 1) + delta;
            format!(
                "calendar?month={:04}-{:02}",
                n.div_euclid(12),
                n.rem_euclid(12) + 1
            )
        };
        let mut h = Html::new(&format!("Calendar: {year:04}-{month:02}"), chrome());
        h.p("Nothing happens this month either.");
        h.raw("<p>");
        h.a(&month_link(-1), "Previous month");
        h.raw(" ");
        h.a(&month_link(1), "Next month");
        h.raw("</p>\n");
        Some(Resource::html(200, HTML_UTF8, h.finish(), false))
    }

    fn sitemap_index(&self) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
             <sitemap><loc>{}/polite/sitemaps/pages.xml.gz</loc></sitemap>\n\
             </sitemapindex>\n",
            self.origin()
        )
    }

    fn sitemap_pages(&self) -> String {
        let locs: String = self
            .sitemap_urls()
            .iter()
            .map(|url| format!("<url><loc>{}</loc></url>\n", url.replace('&', "&amp;")))
            .collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n{locs}</urlset>\n"
        )
    }

    /// Every URL the sitemaps list: pages linked anyway, one that only the
    /// sitemap names, one robots.txt disallows, and one on another host.
    pub(crate) fn sitemap_urls(&self) -> Vec<String> {
        let origin = self.origin();
        vec![
            format!("{origin}/"),
            format!("{origin}/polite/"),
            format!("{origin}/polite/sitemap-only.html"),
            format!("{origin}/polite/private/secret.html"),
            "http://example.invalid/x.html".to_string(),
        ]
    }
}

/// The robots.txt of polite mode.
pub(crate) fn robots_txt(site: &Site, polite: &Polite) -> String {
    let mut out = String::from(
        "# demo-site, polite mode.\n\
         # Everyone else: nothing.\n\
         User-agent: *\n\
         Disallow: /\n\n\
         User-agent: BadBot\n\
         Disallow: /\n\n",
    );
    out.push_str(&format!("User-agent: {CRAWLER_TOKEN}\n"));
    for (allow, pattern) in RULES {
        let key = if allow { "Allow" } else { "Disallow" };
        out.push_str(&format!("{key}: {pattern}\n"));
    }
    if let Some(delay) = polite.crawl_delay {
        out.push_str(&format!("Crawl-delay: {}\n", delay.as_secs_f64()));
    }
    out.push_str(&format!("\nSitemap: {}/sitemap.xml\n", site.origin()));
    out
}

/// Whether the `stage3-crawler` group allows `target` (path and query):
/// the longest matching pattern decides, Allow winning a tie.
pub(crate) fn allowed(target: &str) -> bool {
    RULES
        .iter()
        .filter(|(_, pattern)| matches(pattern, target))
        .max_by_key(|(allow, pattern)| (pattern.len(), *allow))
        .is_none_or(|(allow, _)| *allow)
}

/// `*` matches any run; a final `$` anchors at the end.
fn matches(pattern: &str, target: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let mut pieces = pattern.split('*');
    let Some(mut rest) = pieces.next().and_then(|first| target.strip_prefix(first)) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else {
        return !anchored || rest.is_empty();
    };
    for piece in middle {
        let Some(at) = rest.find(piece) else {
            return false;
        };
        rest = &rest[at + piece.len()..];
    }
    if anchored {
        rest.ends_with(last)
    } else {
        rest.contains(last)
    }
}

/// `/polite/deep/a/`, `/polite/deep/a/a/`, ...: the deep-path trap.
pub(crate) fn is_deep(path: &str) -> bool {
    path.strip_prefix("/polite/deep/").is_some_and(|rest| {
        rest.len() <= 4096
            && rest.ends_with("a/")
            && rest.split_terminator('/').all(|segment| segment == "a")
    })
}

fn text(content_type: &'static str, body: String) -> Resource {
    Resource::opaque(content_type, body.into_bytes())
}

fn linking(title: &str, explanation: &str, links: &[&str]) -> Resource {
    let mut h = Html::new(title, chrome());
    h.p(explanation);
    h.raw("<p>");
    for link in links {
        h.a(link, link);
    }
    h.raw("</p>\n");
    Resource::html(200, HTML_UTF8, h.finish(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_as_stage3_crawler_reads_them() {
        assert!(allowed("/polite/"));
        assert!(!allowed("/polite/private/secret.html"));
        assert!(allowed("/polite/private/open.html"));
        assert!(!allowed("/polite/files/report.pdf"));
        assert!(allowed("/polite/files/report.pdf?download=1"));
        assert!(!allowed("/polite/search?q=crawler"));
        assert!(allowed("/"));
    }
}
