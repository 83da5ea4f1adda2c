//! The micro-benchmarks of `bench::micro`, on tokio's current-thread
//! runtime: the same code with tokio's `spawn`, `sleep` and `net`, and
//! tokio's unbounded channel where ours uses `runtime::Queue`.

use std::hint::black_box;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bench::micro::{
    Baton, CANCELLED, FIRED, Micro, MicroResult, bytes_per_task, deadlines, idle_task, nanos_per,
    poll_once, rss_bytes, yield_now,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// Runs one micro-benchmark with `n` operations (or tasks) on tokio.
pub fn run(which: Micro, n: usize) -> io::Result<MicroResult> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let n = n.max(1);
    let value = match which {
        Micro::Spawn => rt.block_on(spawn_and_complete(n))?,
        Micro::Wake => rt.block_on(wake_round_trip(n))?,
        Micro::Queue => rt.block_on(queue_put_get(n))?,
        Micro::Idle => idle_task_bytes(&rt, n)?,
        Micro::Timers => rt.block_on(timers_fired(n))?,
        Micro::Cancel => rt.block_on(timers_cancelled(n))?,
        Micro::PingPong => rt.block_on(ping_pong(n, 1))?,
        Micro::PingPong100 => rt.block_on(ping_pong(n, 100))?,
        Micro::LoopMessage => two_threads()?.block_on(loop_round_trip(n))?,
        Micro::LoopSpawn => two_threads()?.block_on(loop_spawn(n))?,
    };
    Ok(MicroResult {
        value,
        rss: rss_bytes()?,
    })
}

/// Tokio's multi-thread runtime with one worker: `block_on` runs on the
/// calling thread, and what it spawns runs on the worker, so every message
/// and spawn crosses between two threads, as ours between two loops.
fn two_threads() -> io::Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
}

async fn loop_round_trip(n: usize) -> io::Result<f64> {
    let (ping, mut ping_rx) = mpsc::unbounded_channel::<usize>();
    let (pong, mut pong_rx) = mpsc::unbounded_channel::<usize>();
    let start = Instant::now();
    let echo = tokio::spawn(async move {
        while let Some(item) = ping_rx.recv().await {
            let _ = pong.send(item);
        }
    });
    for i in 0..n {
        let _ = ping.send(i);
        black_box(pong_rx.recv().await);
    }
    let elapsed = start.elapsed();
    drop(ping);
    echo.await.map_err(io::Error::other)?;
    Ok(nanos_per(elapsed, n))
}

async fn loop_spawn(n: usize) -> io::Result<f64> {
    let start = Instant::now();
    let handles: Vec<_> = (0..n).map(|i| tokio::spawn(async move { i })).collect();
    let mut sum = 0;
    for handle in handles {
        sum += handle.await.map_err(io::Error::other)?;
    }
    black_box(sum);
    Ok(nanos_per(start.elapsed(), n))
}

async fn spawn_and_complete(n: usize) -> io::Result<f64> {
    let start = Instant::now();
    let handles: Vec<_> = (0..n).map(|i| tokio::spawn(async move { i })).collect();
    let mut sum = 0;
    for handle in handles {
        sum += handle.await.map_err(io::Error::other)?;
    }
    black_box(sum);
    Ok(nanos_per(start.elapsed(), n))
}

async fn wake_round_trip(n: usize) -> io::Result<f64> {
    let baton = Arc::new(Baton::new());
    let start = Instant::now();
    let a = tokio::spawn(Baton::play(baton.clone(), 0, n));
    let b = tokio::spawn(Baton::play(baton, 1, n));
    a.await.map_err(io::Error::other)?;
    b.await.map_err(io::Error::other)?;
    Ok(nanos_per(start.elapsed(), n))
}

async fn queue_put_get(n: usize) -> io::Result<f64> {
    let (ping, mut ping_rx) = mpsc::unbounded_channel::<usize>();
    let (pong, mut pong_rx) = mpsc::unbounded_channel::<usize>();
    let start = Instant::now();
    let echo = tokio::spawn(async move {
        for _ in 0..n {
            let Some(item) = ping_rx.recv().await else {
                return;
            };
            let _ = pong.send(item);
        }
    });
    let driver = tokio::spawn(async move {
        for i in 0..n {
            let _ = ping.send(i);
            black_box(pong_rx.recv().await);
        }
    });
    driver.await.map_err(io::Error::other)?;
    echo.await.map_err(io::Error::other)?;
    // Each of the n round trips is two puts and two gets.
    Ok(nanos_per(start.elapsed(), 2 * n))
}

async fn timers_fired(n: usize) -> io::Result<f64> {
    let start = Instant::now();
    let sleepers: Vec<_> = deadlines(n, FIRED)
        .map(|d| tokio::spawn(tokio::time::sleep(d)))
        .collect();
    for sleeper in sleepers {
        sleeper.await.map_err(io::Error::other)?;
    }
    Ok(nanos_per(start.elapsed(), n))
}

async fn timers_cancelled(n: usize) -> io::Result<f64> {
    let start = Instant::now();
    for d in deadlines(n, CANCELLED) {
        let mut sleep = pin!(tokio::time::sleep(d));
        poll_once(sleep.as_mut()).await;
    }
    Ok(nanos_per(start.elapsed(), n))
}

async fn ping_pong(n: usize, connections: usize) -> io::Result<f64> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let each = (n / connections).max(1);
    let server = tokio::spawn(async move {
        let mut echoes = Vec::new();
        for _ in 0..connections {
            let (stream, _) = listener.accept().await?;
            echoes.push(tokio::spawn(echo(stream)));
        }
        for echo in echoes {
            echo.await.map_err(io::Error::other)??;
        }
        io::Result::Ok(())
    });
    let start = Instant::now();
    let clients: Vec<_> = (0..connections)
        .map(|_| {
            tokio::spawn(async move {
                let mut stream = TcpStream::connect(addr).await?;
                stream.set_nodelay(true)?;
                let mut byte = [0u8; 1];
                for _ in 0..each {
                    stream.write_all(&[7]).await?;
                    if stream.read(&mut byte).await? == 0 {
                        return Err(io::Error::other("the echo closed"));
                    }
                }
                io::Result::Ok(())
            })
        })
        .collect();
    for client in clients {
        client.await.map_err(io::Error::other)??;
    }
    let elapsed = start.elapsed();
    server.await.map_err(io::Error::other)??;
    Ok(nanos_per(elapsed, each * connections))
}

/// Sends back every byte it reads, until the peer closes.
async fn echo(mut stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = [0u8; 64];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        stream.write_all(&buf[..n]).await?;
    }
}

fn idle_task_bytes(rt: &Runtime, n: usize) -> io::Result<f64> {
    // Let the runtime make whatever it makes on its first spawn.
    rt.block_on(async { tokio::spawn(async {}).await })
        .map_err(io::Error::other)?;
    let parked = Arc::new(AtomicUsize::new(0));
    let mut future_size = 0;
    let before = rss_bytes()?;
    rt.block_on(async {
        for _ in 0..n {
            let task = idle_task(parked.clone());
            future_size = size_of_val(&task);
            // Only the runtime holds the task: we measure what it costs.
            drop(tokio::spawn(task));
        }
        while parked.load(Ordering::Relaxed) < n {
            yield_now().await;
        }
    });
    let after = rss_bytes()?;
    Ok(bytes_per_task(before, after, n, future_size))
}
