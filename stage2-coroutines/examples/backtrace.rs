//! Makes `read` panic while `read_all` is reading, under both fetchers, so
//! that the panic's backtrace shows the chain of coroutines it happened in.
//!
//! ```text
//! RUST_BACKTRACE=1 cargo run -p stage2-coroutines --example backtrace
//! ```
//!
//! book/gen/stage2-backtrace.sh runs this and keeps only our frames.

use demo_site::DemoSite;
use stage2_coroutines::{Style, fetch, hooks};
use url::Url;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let site = DemoSite::start_default()?;
    let url = Url::parse(&site.url("/notes.txt"))?;
    // ANCHOR: hook
    hooks::set_on_chunk(Some(|_| panic!("a bug, found while reading")));
    for style in Style::ALL {
        eprintln!("=== --style {style}");
        let outcome = runtime::run_until_complete(async {
            // In a task of its own, as in the crawler. The runtime catches
            // the panic and turns it into the task's result.
            let url = url.clone();
            runtime::spawn(async move { fetch(&url, style).await.map(|raw| raw.len()) }).await
        })?;
        eprintln!("the task's result: {outcome:?}");
    }
    // ANCHOR_END: hook
    Ok(())
}
