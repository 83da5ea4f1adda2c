//! The numbered pages, their directories, and the pages that link into
//! them in unusual ways (the base-href page and the XML feed).

use super::{DIRS, HTML_UTF8, Resource, Site, canonical_number, chrome};
use crate::html::{Head, Html};
use crate::prose::mix2;

/// The ways a numbered page can spell a link to another numbered page.
const LINK_FORMS: usize = 6;

impl Site {
    /// `/pages/{dir}/` listings and `/pages/{dir}/{n}.html` pages.
    pub(super) fn page_or_directory(&self, path: &str) -> Option<Resource> {
        let rest = path.strip_prefix("/pages/")?;
        let (dir, file) = rest.split_once('/')?;
        let dir = DIRS.iter().position(|d| *d == dir)?;
        if file.is_empty() {
            return Some(self.directory(dir));
        }
        let n = usize::try_from(canonical_number(file.strip_suffix(".html")?)?).ok()?;
        (n < self.pages && n % DIRS.len() == dir).then(|| self.page(n))
    }

    /// Whether `path` is one of the numbered pages (`/pages/{dir}/N.html`).
    pub(crate) fn is_numbered_page(&self, path: &str) -> bool {
        let Some((dir, file)) = path
            .strip_prefix("/pages/")
            .and_then(|rest| rest.split_once('/'))
        else {
            return false;
        };
        let number = file
            .strip_suffix(".html")
            .and_then(canonical_number)
            .and_then(|n| usize::try_from(n).ok());
        matches!(number, Some(n) if n < self.pages && DIRS.get(n % DIRS.len()) == Some(&dir))
    }

    pub(super) fn page_path(&self, n: usize) -> String {
        format!("/pages/{}/{n}.html", DIRS[n % DIRS.len()])
    }

    /// How page `from` spells its link to page `to`. Cycling through the
    /// forms by `(from + k)` makes every form appear even with fan-out 1.
    fn page_href(&self, from: usize, to: usize, form: usize) -> (String, &'static str) {
        let dir = DIRS[to % DIRS.len()];
        let same_dir = from % DIRS.len() == to % DIRS.len();
        let relative = if same_dir {
            format!("{to}.html")
        } else {
            format!("../{dir}/{to}.html")
        };
        match form % LINK_FORMS {
            0 => (relative, "relative link"),
            1 => (format!("../{dir}/{to}.html"), "parent-relative link"),
            2 => (self.page_path(to), "root-relative link"),
            3 => (
                format!("{}{}", self.origin(), self.page_path(to)),
                "absolute link",
            ),
            4 => (format!("{relative}#links"), "relative link with a fragment"),
            _ => (
                format!("//127.0.0.1:{}{}", self.port, self.page_path(to)),
                "protocol-relative link",
            ),
        }
    }

    /// The pages that page `n` links to: first the next page (a ring through
    /// all pages, so everything is reachable and there is a big cycle), then
    /// pseudo-random ones (more cycles, some self-links, some duplicates).
    fn page_targets(&self, n: usize) -> Vec<usize> {
        (0..self.fan_out)
            .map(|k| {
                if k == 0 {
                    (n + 1) % self.pages
                } else {
                    (mix2(n as u64, k as u64) % self.pages as u64) as usize
                }
            })
            .collect()
    }

    pub(super) fn page(&self, n: usize) -> Resource {
        let dir = DIRS[n % DIRS.len()];
        let chunked = n % 2 == 1;
        let mut h = Html::new(&format!("Page {n}"), chrome());
        h.p(&format!(
            "This is page {n} of {} in directory /pages/{dir}/. It is sent {} to HTTP/1.1 \
             clients and links to {} other pages, using a different spelling for each link.",
            self.pages,
            if chunked {
                "chunked"
            } else {
                "with a Content-Length"
            },
            self.fan_out,
        ));
        h.raw("<h2 id=\"links\">Links</h2>\n<ul>\n");
        for (k, to) in self.page_targets(n).into_iter().enumerate() {
            let (href, form) = self.page_href(n, to, n + k);
            let label = if k == 0 {
                format!("Next: page {to}")
            } else {
                format!("Page {to}")
            };
            h.li_a(&href, &label, form);
        }
        h.raw("</ul>\n<p>");
        if !self.is_large() {
            h.raw("Up to ");
            h.a("./", &format!("directory {dir}"));
            h.raw(". ");
        }
        h.raw("Not for crawling: ");
        let (href, text) = external_link(n);
        h.a(&href, text);
        h.raw(".</p>\n");
        h.padding_here();
        // Vary sizes between 50% and 150% of page_size, in pairs: page 2k is
        // d% larger and page 2k+1 d% smaller, so the average is page_size
        // even over a handful of pages.
        let percent = (mix2(0xC0FFEE, (n / 2) as u64) % 51) as usize;
        let percent = if n.is_multiple_of(2) {
            100 + percent
        } else {
            100 - percent
        };
        // `DemoSite::start` bounds page_size far below overflow; saturating
        // all the same, so that no page size can make this panic.
        let target = self.page_size.saturating_mul(percent) / 100;
        let doc = h.finish_padded(target, n as u64);
        Resource::html(200, HTML_UTF8, doc, chunked)
    }

    /// Large mode's whole site: the index, which links to page 0 (the
    /// pages' ring reaches every other), and the numbered pages.
    pub(super) fn large_resource(&self, path: &str) -> Resource {
        if path == "/" {
            let mut h = Html::new("A large site", chrome());
            h.p(&format!(
                "{} numbered pages, generated for each request. Each links to the next \
                 (a ring through all of them) and to {} others.",
                self.pages,
                self.fan_out.saturating_sub(1)
            ));
            h.raw("<p>");
            h.a(&self.page_path(0)[1..], "Page 0");
            h.raw("</p>\n");
            return Resource::html(200, HTML_UTF8, h.finish(), false);
        }
        match path {
            // Every page's head links these two.
            "/static/style.css" | "/static/logo.png" => Some(self.resource(path)),
            _ if path.starts_with("/pages/") && path.ends_with(".html") => {
                self.page_or_directory(path)
            }
            _ => None,
        }
        .unwrap_or_else(super::not_found)
    }

    fn directory(&self, dir: usize) -> Resource {
        let name = DIRS[dir];
        let mut h = Html::new(&format!("Directory {name}"), chrome());
        h.p(&format!(
            "Every numbered page whose number leaves remainder {dir} when divided by 3 lives \
             in /pages/{name}/."
        ));
        h.raw("<ul>\n");
        for n in (dir..self.pages).step_by(DIRS.len()) {
            h.li_a(&format!("{n}.html"), &format!("Page {n}"), "");
        }
        h.raw("</ul>\n<p>");
        h.a("../../", "Up to the index");
        h.raw("</p>\n");
        Resource::html(200, HTML_UTF8, h.finish(), false)
    }

    pub(super) fn base_page(&self) -> Resource {
        let mut h = Html::new(
            "A page with a base URL",
            Head {
                base: Some("/pages/b/"),
                ..chrome()
            },
        );
        h.p(
            "This page declares <base href=\"/pages/b/\">, so its relative links resolve \
             against /pages/b/ and not against /base.html. Root-relative and absolute links \
             are unaffected.",
        );
        h.raw("<ul>\n");
        h.li_a("./", "Directory b", "written ./");
        for n in (1..self.pages).step_by(DIRS.len()).take(3) {
            h.li_a(
                &format!("{n}.html"),
                &format!("Page {n}"),
                "relative to the base",
            );
        }
        h.li_a(
            "base-target.html",
            "A page only reachable through the base",
            "relative to the base",
        );
        h.raw("</ul>\n");
        Resource::html(200, HTML_UTF8, h.finish(), false)
    }

    pub(super) fn feed_xml(&self) -> Resource {
        let mut links = vec!["/content/from-feed.html".to_string()];
        let mut entries = String::from(
            "  <entry>\n    <summary>A page that only this feed links to.</summary>\n    \
             <a href=\"/content/from-feed.html\">From the feed</a>\n  </entry>\n",
        );
        // The most recent pages, linked relative to /feed.xml.
        for n in (0..self.pages).rev().take(3) {
            let href = self.page_path(n)[1..].to_string();
            entries.push_str(&format!(
                "  <entry>\n    <summary>Page {n}</summary>\n    <a href=\"{href}\">Page {n}</a>\n  </entry>\n"
            ));
            links.push(href);
        }
        let text = format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
             <updates>\n  <about>The demo-site feed, served as application/xml. Its links are \
             plain &lt;a href&gt; elements so an HTML parser finds them.</about>\n{entries}</updates>\n"
        );
        Resource {
            links,
            ..Resource::opaque("application/xml; charset=utf-8", text.into_bytes())
        }
    }
}

/// One link per page to something a same-host crawler must not follow.
fn external_link(n: usize) -> (String, &'static str) {
    match n % 5 {
        0 => (
            format!("http://example.com/pages/{n}.html"),
            "the same page on another host",
        ),
        1 => ("https://other.invalid/".to_string(), "another host"),
        2 => ("mailto:webmaster@example.com".to_string(), "email"),
        3 => ("ftp://ftp.example.com/pub/".to_string(), "an FTP server"),
        _ => ("javascript:void(0)".to_string(), "a script"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_link_form_is_used() {
        let s = Site::new(100, 5, 2_000, 8000, false);
        let forms: std::collections::BTreeSet<_> = (0..10)
            .flat_map(|n| (0..5).map(move |k| (n, k)))
            .map(|(n, k)| s.page_href(n, 3, n + k).1)
            .collect();
        assert_eq!(forms.len(), LINK_FORMS);
    }

    #[test]
    fn page_sizes_average_to_page_size() {
        let s = Site::new(300, 5, 10_000, 8000, false);
        let total: usize = (0..300).map(|n| s.page(n).body.len()).sum();
        let average = total / 300;
        assert!(average.abs_diff(10_000) < 10, "average {average}");
    }
}
