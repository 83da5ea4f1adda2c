//! Stage 3: the finished crawler, the chapter's `crawl.py`, `crawling.py`
//! and `reporting.py`, on our own runtime.
//!
//! | module | what it holds | the chapter's counterpart |
//! |---|---|---|
//! | **the lesson and its seams** | | |
//! | `crawling` | `Crawler`: the workers, `fetch`, redirects, retries | `crawling.py` |
//! | `queue` | the lesson's queue and its seen set, `add_url` | `Crawler.q`, `seen_urls`, `add_url` |
//! | `seams` | where the real web plugs into the lesson: `WorkQueue`, `Rules`, `Observer` | (ours) |
//! | `records` | the report's records, and who hears of them | `Crawler.done` |
//! | `config`, `stats`, [`skipped`], `seen`, [`tally`], [`logging`] | the settings, `FetchStatistic`, the URLs skipped, the dedup set, the report's counts, the log | `crawl.py`'s arguments, `FetchStatistic`, `seen_urls`, `reporting.py`'s `Stats`, `logging` |
//! | `assembly` | a crawler built from its settings, features plugged in | (ours) |
//! | [`http`] | An HTTP Client on the Runtime: keep-alive, TLS (rustls), compression | aiohttp's `ClientSession` |
//! | `links`: [`charset`], [`parsing`], [`scanner`] | Finding Links Without a Parser: a page's encoding, parsing on helper threads, the href scanner | the chapter's link regex, done right |
//! | `polite`: `rules`, `host`, `turns`, [`politeness`], [`robots`], `robots_fetch`, `depth`, [`traps`], `sitemaps`, [`sitemap`] | Being a Good Citizen: host rules, per-host turns, robots.txt, `--max-depth` level by level, traps, sitemaps | `Crawler.host_okay`, and ours |
//! | `keeping`: `journal`, `archive`, `warc` | Keeping What You Fetched: `--state` and `--warc` | (ours) |
//! | `cores`: `shards` | Beyond One Core: `--loops`, the hosts shared out among event loops | (ours) |
//! | `sharing`: [`frontier`], `shared` | Beyond One Machine: the frontier in Redis, this process's part of a shared crawl | (ours: scrapy-redis) |
//! | `report`: [`reporting`], `external_sort` | the text report and JSON Lines, sorted in bounded memory | `reporting.py` |
//! | [`program`]: [`cli`], `joining`, [`interrupt`], `progress`, `ps`, `spread` | the command line, the run, a shared crawl joined, Ctrl-C, the progress line, the task table, a crawl run on several loops | `crawl.py` |

#![warn(missing_docs)]

pub(crate) mod assembly;
pub(crate) mod config;
pub(crate) mod cores;
pub(crate) mod crawling;
pub mod http;
pub(crate) mod keeping;
pub(crate) mod links;
pub mod logging;
pub(crate) mod polite;
pub mod program;
pub(crate) mod queue;
pub(crate) mod records;
pub(crate) mod report;
pub(crate) mod seams;
pub(crate) mod seen;
pub(crate) mod sharing;
pub mod skipped;
pub(crate) mod stats;
pub mod tally;

pub use config::Config;
pub use crawling::{Crawler, Outcome};
pub use links::{charset, parsing, scanner};
pub use polite::{politeness, robots, sitemap, slow_down, traps};
pub use program::{cli, interrupt};
pub use report::reporting;
pub use sharing::frontier;
pub use skipped::{SkipReason, Skipped};
pub use stats::{Exception, FetchStatistic, Recrawled};
