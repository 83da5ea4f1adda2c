//! Stage 1: the chapter's callback crawler.
//!
//! A [`Fetcher`](fetcher::Fetcher) per URL, each split into the callbacks
//! `fetch` → `connected` → `read_response`, all run by the runtime's
//! [`EventLoop`](runtime::EventLoop): non-blocking sockets and readiness
//! callbacks, no futures and no executor. The book's chapter "Programming
//! With Callbacks" walks through it. The link rules, the response parser and
//! the report, which every stage shares, are in [`crawl_kit`].
//!
//! | module | holds |
//! |---|---|
//! | [`state`] | `seen_urls`, `urls_todo`: what the fetchers share |
//! | [`fetcher`] | the `Fetcher` and its three callbacks |
//! | [`crawl`] | the root's fetcher, and the loop |
//! | [`cli`] | the command line |

#![warn(missing_docs)]

pub mod cli;
pub mod crawl;
pub mod fetcher;
pub mod state;

pub use crawl::crawl;
pub use crawl_kit::report::{Outcome, Report};
pub use state::Options;
