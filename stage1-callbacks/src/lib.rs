//! Stage 1: the chapter's callback crawler.
//!
//! A [`Fetcher`](fetcher::Fetcher) per URL, each split into the callbacks
//! `fetch` → `connected` → `read_response`, all run by the runtime's
//! [`EventLoop`](runtime::EventLoop): non-blocking sockets and readiness
//! callbacks, no futures and no executor. The book's chapter "Programming
//! With Callbacks" walks through it.
//!
//! | module | holds |
//! |---|---|
//! | [`crawl`] | `seen_urls`, `urls_todo`, the loop, the report |
//! | [`fetcher`] | the `Fetcher` and its three callbacks |
//! | [`response`] | the status line, headers and body of a response |
//! | [`links`] | which links a page has and which to follow (shared by all stages) |
//! | [`cli`] | the command line |

pub mod cli;
pub mod crawl;
pub mod fetcher;
pub mod links;
pub mod response;

pub use crawl::{Options, Outcome, Report, crawl};
