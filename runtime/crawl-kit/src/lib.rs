//! What the three crawlers share, so that no stage imports another.
//!
//! Each stage's own crate holds its lesson (callbacks, coroutines, the
//! worker pool). The rules that make the three crawl the same URLs and print
//! the same report live here once:
//!
//! | module | holds | used by |
//! |---|---|---|
//! | [`links`] | which links a page has and which to follow | all three stages |
//! | [`response`] | the status line, headers and body of an HTTP/1.0 response | stages 1 and 2 |
//! | [`report`] | an outcome per URL and the closing line | stages 1 and 2 |
//! | [`args`] | the root URL and timeout values of the command line | all three stages |
//! | [`dates`] | dates in UTC: `ctime`, ISO 8601, a day | stage 3's report and archive, the bench |

#![warn(missing_docs)]

pub mod args;
pub mod dates;
pub mod links;
pub mod report;
pub mod response;
