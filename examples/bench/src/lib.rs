//! The benchmark harness: our stage-3 crawler against the crawler a Rust
//! developer would otherwise write (tokio + reqwest), and our runtime against
//! tokio on a few micro-benchmarks.
//!
//! Everything that needs tokio lives in the bench target
//! (`benches/compare/`), because tokio may only be a dev-dependency. This
//! library holds the runtime-independent parts, which the bench target and the
//! smoke test share:
//!
//! | module | holds |
//! |---|---|
//! | [`child`] | running one measurement in a fresh child process: wall time, CPU time and peak RSS from `wait4` |
//! | [`crawl`] | the two crawl workloads, and checking that a crawler found exactly the demo site's URLs |
//! | [`floor`] | a scaling row's floor: the site fetched by a plain client with every URL known in advance |
//! | [`micro`] | the micro-benchmarks, on our runtime, and the pieces the tokio side shares |
//! | [`machine`] | what the numbers were measured on |
//! | [`stats`] | medians |
//! | [`table`] | the results table, as Markdown |
//! | [`scale`] | the scale benchmark: a crawl of the demo site's large mode, checked exactly |
//! | [`plot`] | line charts as SVG, for the scale benchmark's figure |
//!
//! Run everything with `examples/bench/run.sh` (see the README).

pub mod child;
pub mod crawl;
pub mod floor;
pub mod machine;
pub mod micro;
pub mod plot;
pub mod scale;
pub mod stats;
pub mod table;
