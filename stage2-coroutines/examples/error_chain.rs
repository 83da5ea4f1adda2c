//! An error deep inside `read`, as `fetch`'s caller sees it: the server
//! resets the connection after reading our request.
//!
//! ```text
//! cargo run -p stage2-coroutines --example error_chain
//! ```

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::time::Duration;

use stage2_coroutines::error::chain;
use stage2_coroutines::{Style, fetch};
use url::Url;

fn main() -> Result<(), Box<dyn Error>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = Url::parse(&format!("http://{}/", listener.local_addr()?))?;
    let server = std::thread::spawn(move || -> std::io::Result<()> {
        for _ in Style::ALL {
            let (stream, _) = listener.accept()?;
            // Read the request head, then close with SO_LINGER 0, which
            // makes the kernel answer with a reset instead of a polite FIN.
            let mut lines = BufReader::new(&stream).lines();
            while lines
                .next()
                .transpose()?
                .is_some_and(|line| !line.is_empty())
            {}
            socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO))?;
        }
        Ok(())
    });
    for style in Style::ALL {
        let result = runtime::run_until_complete(fetch(&url, style))?;
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
    server.join().map_err(|_| "the server thread panicked")??;
    Ok(())
}
