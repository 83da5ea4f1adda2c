//! The micro-benchmarks of `bench::micro`, on tokio's current-thread
//! runtime: the same code with tokio's `spawn`, and tokio's unbounded channel
//! where ours uses `runtime::Queue`.

use std::hint::black_box;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bench::micro::{
    Baton, Micro, MicroResult, bytes_per_task, idle_task, nanos_per, rss_bytes, yield_now,
};
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
    };
    Ok(MicroResult {
        value,
        rss: rss_bytes()?,
    })
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
