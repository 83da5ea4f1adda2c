//! `stage3-crawler`: see `stage3-crawler --help` and the README.

/// mimalloc rather than glibc's malloc. A big crawl holds a million live
/// allocations (the URLs it has queued), and glibc's `malloc` takes longer
/// per call the more it holds: at a million pages it was a tenth of the
/// crawl's time, and the time per URL grew by a quarter from 10,000 pages.
/// mimalloc keeps a free list per size class in each page of memory, so a
/// call costs the same however much is live. Its `no_thp` feature keeps
/// transparent huge pages off, which made small crawls peak at three
/// times their memory.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    stage3_crawler::program::main()
}
