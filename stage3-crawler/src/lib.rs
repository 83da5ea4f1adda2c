//! Stage 3: the finished crawler, the chapter's `crawl.py`, `crawling.py`
//! and `reporting.py`, on our own runtime.
//!
//! | module | what it holds | the chapter's counterpart |
//! |---|---|---|
//! | `crawling` | `Crawler`: the workers, `fetch`, redirects, retries | `crawling.py` |
//! | `queue` | the lesson's queue and its seen set, `add_url` | `Crawler.q`, `seen_urls`, `add_url` |
//! | `seams` | where the real web plugs into the lesson: `WorkQueue`, `Rules`, `Observer` | (ours) |
//! | `rules` | the real web's `Rules`: hosts, traps, robots.txt; admission by host; sitemaps read | `Crawler.host_okay`, and ours |
//! | `turns` | a queue whose URLs wait their host's turn | (ours) |
//! | `sitemaps` | a queue whose sitemaps are read between pages | (ours) |
//! | `records` | the report's records, and who hears of them | `Crawler.done` |
//! | `assembly` | a crawler built from its settings, features plugged in | (ours) |
//! | `depth` | `--max-depth`, exact under concurrency: the lesson's queue level by level | (ours) |
//! | `host` | strict and lenient host rules | `Crawler.host_okay` |
//! | [`http`] | an HTTP/1.1 client with a keep-alive pool and TLS (rustls) | aiohttp's `ClientSession` |
//! | [`charset`] | which encoding a page is in | aiohttp's `response.text()` |
//! | [`parsing`] | link extraction on helper threads | `Crawler.parse_links` |
//! | [`scanner`] | finding hrefs without a general tokenizer | the chapter's link regex, done right |
//! | `seen` | the dedup set, as 128-bit fingerprints | `Crawler.seen_urls` |
//! | `stats` | `FetchStatistic` | the namedtuple of that name |
//! | [`traps`] | URL length, path repetition and query variants: ends crawler traps | (ours) |
//! | [`politeness`] | per-host limits, delays and robots.txt verdicts, without head-of-line blocking | (ours) |
//! | `robots_fetch` | fetching robots.txt, and what each answer means | (ours) |
//! | [`sitemap`] | sitemaps and sitemap indexes, gzipped or not | (ours) |
//! | [`skipped`] | the URLs seen and not fetched, with the reason | (ours: the chapter drops them silently) |
//! | [`tally`] | the report's counts, kept as the crawl goes | `reporting.py`'s `Stats` |
//! | [`reporting`] | the text report and JSON Lines | `reporting.py` |
//! | `external_sort` | the text report's lines sorted in bounded memory | (ours: `sort(1)`'s merge) |
//! | [`cli`], [`program`], [`interrupt`], `progress`, `ps` | the command line, the run, Ctrl-C, the progress line, the task table | `crawl.py` |
//! | [`frontier`], `shared` | the shared frontier in Redis: many processes, one crawl (`frontier/`: key layout, leases, completion, the merged report) | (ours: scrapy-redis) |
//! | `joining` | creating or joining a shared crawl, its merged report | (ours) |
//! | `config` | the crawl's settings, with the chapter's defaults | `crawl.py`'s arguments |
//! | [`logging`] | the crawl's log, which a test may read | `logging` |
//! | [`robots`] | robots.txt parsed and matched (RFC 9309) | (ours) |
//! | `journal` | `--state`: every fact of a crawl, for resuming it | (ours) |
//! | `archive`, `warc` | `--warc`: every exchange kept, as WARC records | (ours) |
//! | `dates` | dates in UTC, for the report and WARC | (ours) |
//! | `ps` | `kill -USR1 PID` prints the task table | (ours: Python 3.14's `asyncio ps`) |

#![warn(missing_docs)]

pub(crate) mod archive;
pub(crate) mod assembly;
pub mod charset;
pub mod cli;
pub(crate) mod config;
pub(crate) mod crawling;
pub(crate) mod dates;
pub(crate) mod depth;
pub(crate) mod external_sort;
pub mod frontier;
pub(crate) mod host;
pub mod http;
pub mod interrupt;
pub(crate) mod joining;
pub(crate) mod journal;
pub mod logging;
pub mod parsing;
pub mod politeness;
pub mod program;
pub(crate) mod progress;
pub(crate) mod ps;
pub(crate) mod queue;
pub(crate) mod records;
pub mod reporting;
pub mod robots;
pub(crate) mod robots_fetch;
pub(crate) mod rules;
pub mod scanner;
pub(crate) mod seams;
pub(crate) mod seen;
pub(crate) mod shared;
pub mod sitemap;
pub(crate) mod sitemaps;
pub mod skipped;
pub(crate) mod stats;
pub mod tally;
pub mod traps;
pub(crate) mod turns;
pub(crate) mod warc;

pub use config::Config;
pub use crawling::{Crawler, Outcome};
pub use skipped::{SkipReason, Skipped};
pub use stats::{Exception, FetchStatistic};
