//! Two loops exchanging a link, as a crawl on `--loops 2` does: the main
//! thread's loop finds a link whose host another loop owns, sends it
//! there over a channel, and waits for the owner to say it has queued it.
//! The book's Beyond One Core chapter draws it:
//!
//! ```text
//! RUNTIME_TRACE=trace.json cargo run -p runtime --example two_loops
//! cargo run -p timeline -- trace.json trace.loop-0.json --svg two-loops.svg
//! ```
//!
//! Each loop writes its own trace: the main thread's `trace.json`, the
//! other loop's `trace.loop-0.json`.

use std::time::Duration;

use runtime::{Loops, mpsc, run_until_complete, sleep};

fn main() -> std::io::Result<()> {
    let loops = Loops::start(1)?;
    let (links, mut inbox) = mpsc::channel::<String>();
    let (queued, mut answers) = mpsc::channel::<String>();
    // ANCHOR: owner
    // The owner of b.example, on the other loop: takes in a link of its
    // host, queues it (a short sleep stands for the work, and keeps the
    // figure the same from run to run: the finder is surely waiting by
    // the time the answer comes), and says so.
    let owner = loops.handles()[0].spawn_with(move || async move {
        if let Some(link) = inbox.recv().await {
            sleep(Duration::from_millis(20)).await;
            let _ = queued.send(format!("queued {link}"));
        }
    });
    // ANCHOR_END: owner
    let answer = run_until_complete(async move {
        // A page of a.example, fetched (a short sleep stands for it),
        // links to b.example: it goes to the loop that owns that host.
        sleep(Duration::from_millis(5)).await;
        let _ = links.send("http://b.example/".into());
        let answer = answers.recv().await;
        // The owner's task is over before its loop is told to end.
        let _ = owner.await;
        drop(links);
        answer
    })?;
    loops.join();
    println!("{}", answer.unwrap_or_default());
    Ok(())
}
