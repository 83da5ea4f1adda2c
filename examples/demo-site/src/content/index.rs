//! The index page: the site's table of contents, in prose.

use super::{DIRS, HTML_UTF8, Resource, Site, chrome};
use crate::html::{Html, escape_text};

impl Site {
    pub(super) fn index(&self) -> Resource {
        let origin = self.origin();
        let mut h = Html::new(
            "demo-site: a small website for testing web crawlers",
            chrome(),
        );
        h.p(
            "This site exists to be crawled. It is served by plain threads from the demo-site \
             crate, and every crawler in this project is tested against it: the exact set of \
             URLs a crawler starting here must find is computed by DemoSite::expected(). A \
             crawler follows every href in HTML, XHTML and XML bodies, resolves it against the \
             page (or its base URL), drops the fragment, stays on this host and port, and \
             follows redirects. Each section below explains one thing the crawler has to get \
             right.",
        );

        h.raw("<h2 id=\"pages\">Pages</h2>\n");
        h.p(&format!(
            "There are {} numbered pages spread over three directories. Each page links to {} \
             other pages, and the links are spelled in every way HTML allows: relative \
             (3.html), parent-relative (../b/7.html), root-relative (/pages/b/7.html), absolute \
             ({origin}/pages/b/7.html), protocol-relative (//127.0.0.1:{}/pages/b/7.html) and \
             with a #fragment. The first link on every page goes to the next page, so all \
             pages form one big cycle. Every page also links to its directory, to this index, \
             to itself with a fragment, and to one place a crawler must not follow. Pages are \
             padded with prose to about {} bytes on average.",
            self.pages, self.fan_out, self.port, self.page_size
        ));
        h.raw("<ul>\n");
        for dir in DIRS {
            h.li_a(
                &format!("/pages/{dir}/"),
                &format!("Directory {dir}"),
                "lists its pages",
            );
        }
        if self.pages > 0 {
            h.li_a("/pages/a/0.html", "Page 0", "start reading here");
            h.raw_link(
                "<li><a href=\"/pages/a/0.html?from=index&amp;lang=en\">Page 0 with a query \
                 string</a> - the same page, but a different URL, so a crawler fetches it \
                 again</li>\n",
                "/pages/a/0.html?from=index&lang=en",
            );
        }
        h.raw("</ul>\n");

        h.raw("<h2 id=\"redirects\">Redirects</h2>\n");
        h.p(
            "Redirect responses carry the new address in a Location header, sometimes \
             relative. Every redirect also has a small HTML body linking to the same place, so \
             a crawler that only reads bodies finds the same URLs.",
        );
        h.raw("<ul>\n");
        h.li_a(
            "/redirect/chain/1",
            "A chain of redirects",
            "301, 302, 303, 307 and 308 in turn, with absolute, relative and ../ Locations, \
             ending at /redirect/target.html",
        );
        h.li_a(
            "/redirect/alias",
            "Another way to the same target",
            "302 with Location: target.html",
        );
        h.li_a(
            "/redirect/fragment",
            "A redirect with a fragment",
            "301 to /redirect/target.html#landed",
        );
        h.li_a(
            "/redirect/loop/a",
            "A redirect loop",
            "a redirects to b, b redirects back to a",
        );
        h.li_a(
            "/redirect/offsite",
            "A redirect to another host",
            "302 to http://example.com/, which must not be followed",
        );
        if self.tls {
            h.li_a(
                &format!("http://127.0.0.1:{}/", self.port),
                "This site over plain HTTP",
                "the same port answers plain HTTP with a 301 to https",
            );
        }
        h.raw("</ul>\n");

        h.raw("<h2 id=\"errors\">Errors</h2>\n<ul>\n");
        h.li_a(
            "/missing.html",
            "A missing page",
            "404 Not Found, like every unknown path",
        );
        h.li_a("/error/500", "A broken page", "500 Internal Server Error");
        h.raw("</ul>\n");

        h.raw("<h2 id=\"content-types\">Content types</h2>\n");
        h.p(
            "Only markup is searched for links. An image, a stylesheet and a text file are \
             fetched but not parsed; the XML feed and the XHTML page are parsed, and each \
             links to a page nothing else links to.",
        );
        h.raw("<ul>\n");
        h.li_a("/static/logo.png", "The logo", "image/png, not UTF-8");
        h.li_a("/static/style.css", "The stylesheet", "text/css");
        h.li_a(
            "/notes.txt",
            "Some notes",
            "text/plain that contains markup, which must not be parsed",
        );
        h.li_a("/feed.xml", "The feed", "application/xml with links");
        h.li_a(
            "/page.xhtml",
            "An XHTML page",
            "application/xhtml+xml with links",
        );
        h.li_a(
            "/base.html",
            "A page with a base URL",
            "its relative links resolve against /pages/b/",
        );
        h.raw("</ul>\n");

        h.raw("<h2 id=\"charsets\">Charsets</h2>\n");
        h.p(
            "A page's character encoding may be declared in the Content-Type header, in a \
             meta element, or not at all. Two of these pages are not valid UTF-8. Links are \
             always plain ASCII, so decoding a body lossily is enough to find them.",
        );
        h.raw("<ul>\n");
        h.li_a(
            "/charset/utf8-header.html",
            "UTF-8, declared in the header",
            "text/html; charset=utf-8",
        );
        h.li_a(
            "/charset/meta-ascii.html",
            "ASCII, declared in a meta element",
            "meta charset=ascii",
        );
        h.li_a(
            "/charset/meta-latin1.html",
            "Latin-1, declared in a meta element",
            "contains the byte 0xE9, not valid UTF-8",
        );
        h.li_a(
            "/charset/header-windows-1252.html",
            "Windows-1252, declared in the header",
            "contains bytes 0x93 and 0x94, not valid UTF-8",
        );
        h.li_a(
            "/charset/none.html",
            "No declared charset",
            "the crawler has to guess",
        );
        h.raw("</ul>\n");

        h.raw("<h2 id=\"framing\">Framing</h2>\n");
        h.p(
            "An HTTP/1.1 client is sent this index, odd-numbered pages and some of the pages \
             below with Transfer-Encoding: chunked, and everything else with a \
             Content-Length. An HTTP/1.0 client gets every body delimited by closing the \
             connection. HTTP/1.1 connections are kept alive unless the client sends \
             Connection: close or the server was started with keep-alive turned off.",
        );
        h.raw("<ul>\n");
        h.li_a("/framing/chunked.html", "Chunked", "");
        h.li_a("/framing/content-length.html", "Content-Length", "");
        h.li_a("/framing/empty.html", "Empty body", "Content-Length: 0");
        h.li_a(
            "/framing/empty-chunked.html",
            "Empty chunked body",
            "just the last chunk",
        );
        h.li_a("/framing/large.html", "A large page", "256 KiB, chunked");
        h.raw("</ul>\n");

        h.raw("<h2 id=\"spellings\">One URL, many spellings</h2>\n");
        h.p(
            "All of these links lead to /feed.xml. A crawler that compares URLs after parsing \
             and serializing them fetches it only once.",
        );
        h.raw("<ul>\n");
        h.li_a("/./feed.xml", "With a dot segment", "");
        h.li_a("/static/../feed.xml", "With a dot-dot segment", "");
        h.li_a(
            &format!(
                "{}://127.0.0.1:{}/feed.xml",
                self.scheme().to_ascii_uppercase(),
                self.port
            ),
            "With an upper-case scheme",
            "",
        );
        h.li_a(
            &format!("{origin}/feed.xml#latest"),
            "Absolute, with a fragment",
            "",
        );
        h.raw_link(
            "<li><A HREF='/feed.xml'>Upper-case tag, single quotes</A></li>\n",
            "/feed.xml",
        );
        h.raw_link("<li><a href=/feed.xml>Unquoted</a></li>\n", "/feed.xml");
        h.raw_link(
            "<li><a href=\"  /feed.xml\n\">With surrounding whitespace</a></li>\n",
            "  /feed.xml\n",
        );
        h.raw("</ul>\n<p>And these lead back to this page: ");
        h.a("", "an empty href");
        h.raw(", ");
        h.a("#pages", "a fragment");
        h.raw(", ");
        h.a(&format!("{origin}/"), "the absolute URL");
        h.raw(".</p>\n");

        h.raw("<h2 id=\"elsewhere\">Links that lead elsewhere</h2>\n");
        h.p("A same-host crawler must not follow any of these.");
        h.raw("<ul>\n");
        h.li_a("http://example.com/", "Another host", "");
        h.li_a("https://other.invalid/", "Another host, over HTTPS", "");
        let other_port = if self.port == 1 { 2 } else { 1 };
        h.li_a(
            &format!("http://127.0.0.1:{other_port}/"),
            "The same host, a different port",
            "",
        );
        h.li_a("mailto:webmaster@example.com", "Email", "");
        h.li_a("ftp://ftp.example.com/pub/", "FTP", "");
        h.li_a("javascript:void(0)", "JavaScript", "");
        h.li_a("tel:+15555550100", "Telephone", "");
        h.raw("</ul>\n");

        h.raw("<h2 id=\"not-links\">Things that look like links but are not</h2>\n");
        h.p(
            "A regular expression would find hrefs in the comment, the script, the image \
             source and the escaped text below. An HTML parser does not, and neither should a \
             crawler. The paths they mention do not exist.",
        );
        h.raw(
            "<!-- <a href=\"/not-a-link/comment.html\">commented out</a> -->\n\
             <script>var html = '<a href=\"/not-a-link/script.html\">in a script</a>';</script>\n\
             <p><a name=\"no-href\">An anchor without an href.</a> \
             <img src=\"/not-a-link/image.png\" alt=\"an image whose src is not an href\"></p>\n\
             <p>Escaped markup: &lt;a href=\"/not-a-link/text.html\"&gt;</p>\n",
        );

        h.raw("<h2 id=\"faults\">Fault paths (not linked)</h2>\n");
        h.p(
            "These paths misbehave on purpose. Nothing links to them; tests fetch them \
             directly to check a client's error handling.",
        );
        h.raw("<ul>\n");
        for (path, what) in FAULT_DOCS {
            h.raw(&format!(
                "<li><code>{}</code> - {}</li>\n",
                escape_text(path),
                escape_text(what)
            ));
        }
        h.raw("</ul>\n");
        if self.is_polite() {
            h.raw("<h2 id=\"polite\">Polite crawling</h2>\n<ul>\n");
            h.li_a(
                "/polite/",
                "Polite crawling",
                "robots.txt rules, a compression bomb and a calendar trap",
            );
            h.raw("</ul>\n");
        }
        Resource::html(200, HTML_UTF8, h.finish(), true)
    }
}

/// Fault paths and what they do, shown on the index page and in the README.
const FAULT_DOCS: [(&str, &str); 6] = [
    (
        "/fault/hang",
        "reads the request and never answers, until the client or the server gives up",
    ),
    (
        "/fault/close-mid-body",
        "starts a chunked body, announces a 1000-byte chunk, sends 100 bytes and closes",
    ),
    (
        "/fault/short-body",
        "sends Content-Length: 500, then 100 bytes, then closes",
    ),
    (
        "/fault/garbage",
        "sends bytes that are not an HTTP status line, then closes",
    ),
    ("/fault/drop", "closes the connection without answering"),
    (
        "/fault/flaky/N",
        "drops the connection for the first N requests to that exact path, then answers 200",
    ),
];
