//! The limits on the site's size: the largest sites and pages are served,
//! and anything bigger is refused, by the library with an error and by the
//! binary with a usage error, before anything is served.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{get, hrefs};
use demo_site::{DemoSite, MAX_FAN_OUT, MAX_LARGE_PAGES, MAX_PAGE_SIZE, MAX_PAGES, SiteConfig};

#[test]
fn the_library_refuses_numbers_over_their_limits() {
    for (config, message) in [
        (
            SiteConfig {
                pages: MAX_PAGES + 1,
                ..SiteConfig::default()
            },
            "SiteConfig::pages must be at most 100000 outside large mode, not 100001",
        ),
        (
            SiteConfig {
                pages: usize::MAX,
                large: true,
                ..SiteConfig::default()
            },
            &format!(
                "SiteConfig::pages must be at most 1000000000, not {}",
                usize::MAX
            ),
        ),
        (
            SiteConfig {
                fan_out: MAX_FAN_OUT + 1,
                large: true,
                ..SiteConfig::default()
            },
            "SiteConfig::fan_out must be at most 1000, not 1001",
        ),
        (
            SiteConfig {
                page_size: 100_000_000_000_000,
                ..SiteConfig::default()
            },
            "SiteConfig::page_size must be at most 10000000, not 100000000000000",
        ),
        (
            SiteConfig {
                pages: MAX_PAGES,
                page_size: MAX_PAGE_SIZE,
                ..SiteConfig::default()
            },
            "SiteConfig::pages times page_size must be at most 1000000000 outside large \
             mode, not 1000000000000",
        ),
    ] {
        let error = DemoSite::start(config).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{message}");
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn the_largest_site_serves_its_last_page() {
    let site = DemoSite::start(SiteConfig {
        pages: MAX_LARGE_PAGES,
        fan_out: MAX_FAN_OUT,
        page_size: MAX_PAGE_SIZE,
        large: true,
        ..SiteConfig::default()
    })
    .unwrap();
    assert_eq!(site.expected_large_len(), 1_000_000_003);
    // The last page is odd, so smaller than the average, and lists
    // every one of its links.
    let page = get(site.addr(), "/pages/a/999999999.html");
    assert_eq!(page.status, 200);
    assert!(
        (MAX_PAGE_SIZE / 2..=MAX_PAGE_SIZE).contains(&page.body.len()),
        "{}",
        page.body.len()
    );
    let base = url::Url::parse(&site.url("/pages/a/999999999.html")).unwrap();
    // The footer's `#top` is not one of them.
    let to_pages = hrefs(&page.body)
        .iter()
        .filter(|href| !href.starts_with('#'))
        .map(|href| base.join(href).unwrap())
        .filter(|url| url.origin() == base.origin() && url.path().starts_with("/pages/"))
        .count();
    assert_eq!(to_pages, 1000);
}

#[test]
fn a_normal_site_takes_the_largest_pages() {
    let site = DemoSite::start(SiteConfig {
        pages: 2,
        fan_out: MAX_FAN_OUT,
        page_size: MAX_PAGE_SIZE,
        ..SiteConfig::default()
    })
    .unwrap();
    let page = get(site.addr(), "/pages/a/0.html");
    assert_eq!(page.status, 200);
    assert!(
        (MAX_PAGE_SIZE..=MAX_PAGE_SIZE * 3 / 2).contains(&page.body.len()),
        "{}",
        page.body.len()
    );
    // Both pages are found, however many times they link each other.
    let pages = site
        .expected()
        .into_iter()
        .filter(|e| e.url.ends_with("/0.html") || e.url.ends_with("/1.html"))
        .count();
    assert_eq!(pages, 2);
}

/// Runs the binary with `args` until it exits: its exit code, stdout and
/// stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_demo-site"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn the_binary_refuses_sizes_over_their_limits_before_printing_a_url() {
    // The numbers the audit found panicking, hanging or wrapping.
    for (args, error) in [
        (
            &["--fan-out", "18446744073709551615"][..],
            "error: invalid value '18446744073709551615' for '--fan-out <N>': a whole number \
             of links, at most 1000",
        ),
        (
            &["--fan-out", "1000000000", "--large"],
            "error: invalid value '1000000000' for '--fan-out <N>': a whole number of links, \
             at most 1000",
        ),
        (
            &["--page-size", "1000000000000000000"],
            "error: invalid value '1000000000000000000' for '--page-size <BYTES>': a whole \
             number of bytes, at most 10000000 (10 MB)",
        ),
        (
            &["--large", "--pages", "18446744073709551615"],
            "error: invalid value '18446744073709551615' for '--pages <N>': a whole number of \
             pages, at most 100000 (1000000000 with --large)",
        ),
        (
            &["--pages", "1000000000"],
            "error: invalid value '1000000000' for '--pages <N>': at most 100000 without \
             --large (a normal site keeps every page in memory)",
        ),
    ] {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}");
        assert_eq!(stderr.lines().next(), Some(error), "{args:?}");
    }
}

#[test]
fn the_binary_serves_the_largest_site() {
    let child = Command::new(env!("CARGO_BIN_EXE_demo-site"))
        .args(["--large", "--pages", "1000000000", "--fan-out", "1000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed however the test ends: a failed assertion must not leave a
    // server running after the tests.
    let mut child = KillOnDrop(child);
    let child = &mut child.0;
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let _serving = stderr.next();
    let to_discover = stderr.next().map(Result::unwrap);
    let addr = url
        .trim_end()
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix('/'))
        .unwrap()
        .parse()
        .unwrap();
    let status = get(addr, "/pages/a/0.html").status;
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        to_discover.as_deref(),
        Some("demo-site: 1000000003 URLs to discover; press Ctrl-C to stop")
    );
}

/// A child process, killed and reaped when dropped.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
