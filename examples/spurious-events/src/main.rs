//! Readiness is a hint, not a promise.
//!
//! The selector says "this socket may be readable now". The read that
//! follows can still find nothing and return `WouldBlock`: the event may be
//! spurious, or somebody else may have taken the data first. Correct code
//! treats `WouldBlock` as "not yet" and waits for the next event; code that
//! treats it as an error fails on a perfectly healthy socket.
//!
//! Two scenes, each narrated line by line:
//!
//! 1. an event with no data behind it, fed to the reactor by hand
//!    (`Registration::simulate_event`, the runtime's hook for tests);
//! 2. a real one: two readers hold two descriptors of one socket, the kernel
//!    tells both that it is readable, and only one of them gets the message.
//!
//! | module | holds |
//! |---|---|
//! | `watched` | a socket registered with the reactor that narrates every read it tries |

mod watched;

use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::rc::Rc;

use clap::Parser;
use runtime::{Queue, run_until_complete, spawn};
use watched::Watched;

/// Shows, step by step, a read that finds nothing after a readable event.
#[derive(Debug, Parser)]
#[command(name = "spurious-events")]
struct Args {}

fn main() -> ExitCode {
    env_logger::init();
    Args::parse();
    match run_until_complete(async {
        false_alarm().await?;
        println!();
        two_readers().await
    }) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) | Err(e) => {
            eprintln!("spurious-events: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Scene 1: an event arrives, but no data.
async fn false_alarm() -> io::Result<()> {
    println!("1. An event with no data behind it");
    let (ours, mut peer) = UnixStream::pair()?;
    let socket = Rc::new(Watched::new(ours)?);
    let progress = Queue::new();
    let reader = spawn({
        let (socket, progress) = (socket.clone(), progress.clone());
        async move { socket.read_narrated("reader", &progress).await }
    });
    progress.get().await; // the reader has parked

    println!("main: fire a readable event by hand; no byte was sent");
    socket.simulate_readable();
    match socket.trusting_read() {
        Ok(n) => println!("main: a read that trusts the event got {n} bytes"),
        Err(e) => println!("main: a read that trusts the event fails: {}", e.kind()),
    }
    progress.get().await; // the reader looked, found nothing, parked again

    println!("main: the peer writes \"hello\"");
    peer.write_all(b"hello")?;
    progress.get().await; // the reader has its message
    reader.await.map_err(io::Error::other)?.map(drop)
}

// ANCHOR: two_readers
/// Scene 2: two readers are told "readable"; one message is there.
async fn two_readers() -> io::Result<()> {
    println!("2. Two readers, one socket, one message");
    let (ours, mut peer) = UnixStream::pair()?;
    // Two descriptors of one socket (`try_clone` is dup(2)), each registered
    // with the event loop on its own, as two processes that share a socket
    // would each register it.
    let a = Watched::new(ours.try_clone()?)?;
    let b = Watched::new(ours)?;
    let progress = Queue::new();
    let mut readers = Vec::new();
    for (who, socket) in [("reader A", a), ("reader B", b)] {
        let theirs = progress.clone();
        readers.push(spawn(
            async move { socket.read_narrated(who, &theirs).await },
        ));
        progress.get().await; // this reader has parked
    }

    println!("main: the peer writes \"ping\"; the kernel reports both descriptors readable");
    peer.write_all(b"ping")?;
    // One reader takes the message and finishes; the other finds nothing
    // and parks again. Both report.
    progress.get().await;
    progress.get().await;

    println!("main: both were woken and only one found data; the peer writes \"pong\"");
    peer.write_all(b"pong")?;
    progress.get().await;
    for reader in readers {
        reader.await.map_err(io::Error::other)??;
    }
    Ok(())
}
// ANCHOR_END: two_readers
