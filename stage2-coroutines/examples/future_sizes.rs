//! How big each fetcher's future is: the hand-written enums beside what the
//! compiler makes of the `async fn`s. A future is as big as its largest
//! state, which holds the locals kept across a wait.
//!
//! ```text
//! cargo run -p stage2-coroutines --example future_sizes
//! ```

use std::mem::size_of_val;

use runtime::TcpStream;
use stage2_coroutines::{async_fetch, machines};
use url::Url;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = Url::parse("http://127.0.0.1/")?;
    // `read` needs a stream to borrow, and a stream needs a runtime.
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let rows = runtime::run_until_complete(async {
        let mut stream = TcpStream::connect(addr).await?;
        // Futures do nothing until polled: we make them only to measure them.
        let read = size_of_val(&async_fetch::read(&mut stream));
        let read_all = size_of_val(&async_fetch::read_all(&mut stream));
        std::io::Result::Ok([
            (
                "connect",
                size_of::<machines::Connect>(),
                size_of_val(&async_fetch::connect(addr)),
            ),
            ("read", size_of::<machines::Read>(), read),
            ("read_all", size_of::<machines::ReadAll>(), read_all),
            (
                "fetch",
                size_of::<machines::Fetch>(),
                size_of_val(&async_fetch::fetch(&url)),
            ),
        ])
    })??;
    println!("{:<10}{:>14}{:>10}", "future", "hand-written", "async fn");
    for (name, ours, compilers) in rows {
        println!("{name:<10}{ours:>14}{compilers:>10}");
    }
    println!(
        "(sizes in bytes; a TcpStream is {})",
        size_of::<TcpStream>()
    );
    Ok(())
}
