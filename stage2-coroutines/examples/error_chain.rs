//! An error deep inside `read`, as `fetch`'s caller sees it: the server
//! resets the connection after reading our request.
//!
//! ```text
//! cargo run -p stage2-coroutines --example error_chain
//! ```

use std::error::Error;

use demo_site::testing::resetting_server;
use stage2_coroutines::error::chain;
use stage2_coroutines::{Style, fetch};
use url::Url;

fn main() -> Result<(), Box<dyn Error>> {
    for style in Style::ALL {
        // Reads the request head, then closes with SO_LINGER 0, which makes
        // the kernel answer with a reset instead of a polite FIN.
        let (addr, server) = resetting_server()?;
        let url = Url::parse(&format!("http://{addr}/"))?;
        let result = runtime::run_until_complete(fetch(&url, style))?;
        server.join().map_err(|_| "the server thread panicked")??;
        let Err(error) = result else {
            return Err("the server answered instead of resetting".into());
        };
        println!("--style {style}:");
        println!("  {}", chain(&error));
        let mut level: Option<&dyn Error> = Some(&error);
        let mut depth = 0;
        while let Some(e) = level {
            println!("  {depth}: {e}");
            level = e.source();
            depth += 1;
        }
    }
    Ok(())
}
