//! What a plain-HTTP crawl found: an [`Outcome`] per URL and the closing
//! [`Report`], shared by stages 1 and 2 so that their output is the same
//! and their tests compare it with one answer key.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use url::Url;

/// What became of one URL.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// The URL was fetched (and its links, if any, followed).
    Fetched(Url),
    /// The URL was fetched, but not searched for links, and why: a page
    /// whose body is not UTF-8, which stages 1 and 2 cannot read (the
    /// chapter's crawler cannot either). Not an error: the server answered.
    Unsearched(Url, String),
    /// The URL and why it failed.
    Failed(Url, String),
}

impl Outcome {
    /// The URL this outcome is about.
    pub fn url(&self) -> &Url {
        match self {
            Outcome::Fetched(url) | Outcome::Unsearched(url, _) | Outcome::Failed(url, _) => url,
        }
    }
}

/// The line the crawler prints: the URL, `URL (not searched for links:
/// reason)`, or `error: URL (reason)`.
impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Fetched(url) => write!(f, "{url}"),
            Outcome::Unsearched(url, why) => write!(f, "{url} (not searched for links: {why})"),
            Outcome::Failed(url, reason) => write!(f, "error: {url} ({reason})"),
        }
    }
}

/// The result of a crawl.
#[derive(Debug)]
pub struct Report {
    /// Every URL's outcome, in the order they finished.
    pub outcomes: Vec<Outcome>,
    /// How many URLs the crawl found, the root included.
    pub seen_urls: usize,
    /// The most URLs in `urls_todo` at once: the chapter's
    /// `concurrency_achieved`.
    pub concurrency: usize,
    /// From the start of the crawl to its end.
    pub elapsed: Duration,
}

impl Report {
    /// Whether `url` was fetched (not failed; searched for links or not).
    pub fn fetched(&self, url: &Url) -> bool {
        self.outcomes.iter().any(|o| match o {
            Outcome::Fetched(u) | Outcome::Unsearched(u, _) => u == url,
            Outcome::Failed(..) => false,
        })
    }

    /// The URLs fetched (searched for links or not), and the failed ones
    /// with their reasons, each sorted: what a test compares with the demo
    /// site's answer key.
    pub fn split(&self) -> (BTreeSet<String>, BTreeSet<(String, String)>) {
        let mut fetched = BTreeSet::new();
        let mut failed = BTreeSet::new();
        for outcome in &self.outcomes {
            match outcome {
                Outcome::Fetched(url) | Outcome::Unsearched(url, _) => {
                    fetched.insert(url.to_string());
                }
                Outcome::Failed(url, reason) => {
                    failed.insert((url.to_string(), reason.clone()));
                }
            }
        }
        (fetched, failed)
    }

    /// The chapter's closing line.
    pub fn summary(&self) -> String {
        format!(
            "{} URLs fetched in {:.1}s, achieved concurrency = {}",
            self.seen_urls,
            self.elapsed.as_secs_f64(),
            self.concurrency
        )
    }
}
