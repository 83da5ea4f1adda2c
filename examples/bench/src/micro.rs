//! Micro-benchmarks of the runtime's basic operations, here on our runtime.
//! The same four run on tokio in `benches/compare/tokio_micro.rs`, written
//! line for line the same way, with the shared pieces ([`Baton`],
//! [`yield_now`], [`rss_bytes`]) defined once here.
//!
//! | benchmark | what one operation is |
//! |---|---|
//! | spawn | spawn a task that returns a number, and await its handle (n spawned, then n awaited) |
//! | wake | a round trip between two tasks: A wakes B and waits, B wakes A and waits |
//! | queue | one put and one get on the runtime's queue, with the getter waiting (two tasks ping-pong over two queues) |
//! | idle | the bytes of memory one parked task costs: RSS growth over n parked tasks, divided by n, minus the size of the task's future |
//! | timers | a sleep with a random deadline (1 to 5 ms away), armed and fired: n tasks each sleep once |
//! | cancel | a sleep with a random deadline (1 to 60 s away), armed by one poll, then dropped |
//! | pingpong | a round trip of one byte each way over one loopback TCP connection |
//! | pingpong100 | the same, over 100 connections at once (n round trips in all) |
//! | loopmsg | a round trip of a message between two loops on two threads: the main thread's sends to the other's task over a channel, which answers over another (each hop wakes a sleeping loop) |
//! | loopspawn | a task spawned from the main thread onto another loop's thread, and its answer awaited (n spawned, then n awaited) |

use std::future::{Future, pending, poll_fn};
use std::hint::black_box;
use std::io;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use runtime::{Loops, Queue, Runtime, mpsc};

/// The micro-benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Micro {
    Spawn,
    Wake,
    Queue,
    Idle,
    Timers,
    Cancel,
    PingPong,
    PingPong100,
    LoopMessage,
    LoopSpawn,
}

impl Micro {
    pub const ALL: [Micro; 10] = [
        Micro::Spawn,
        Micro::Wake,
        Micro::Queue,
        Micro::Idle,
        Micro::Timers,
        Micro::Cancel,
        Micro::PingPong,
        Micro::PingPong100,
        Micro::LoopMessage,
        Micro::LoopSpawn,
    ];

    /// The name on the child's command line.
    pub fn name(self) -> &'static str {
        match self {
            Micro::Spawn => "spawn",
            Micro::Wake => "wake",
            Micro::Queue => "queue",
            Micro::Idle => "idle",
            Micro::Timers => "timers",
            Micro::Cancel => "cancel",
            Micro::PingPong => "pingpong",
            Micro::PingPong100 => "pingpong100",
            Micro::LoopMessage => "loopmsg",
            Micro::LoopSpawn => "loopspawn",
        }
    }

    pub fn from_name(name: &str) -> Option<Micro> {
        Micro::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// What one micro-benchmark run reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MicroResult {
    /// Nanoseconds per operation, or for [`Micro::Idle`] bytes per task.
    pub value: f64,
    /// The process's resident set size at the end of the measurement, in
    /// bytes (for [`Micro::Idle`]: with all n tasks parked).
    pub rss: u64,
}

impl MicroResult {
    /// One line on the child's stdout: `VALUE RSS`.
    pub fn to_line(self) -> String {
        format!("{} {}", self.value, self.rss)
    }

    pub fn parse(line: &str) -> Result<MicroResult, String> {
        let mut fields = line.split_whitespace();
        let (Some(value), Some(rss), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(format!("expected `VALUE RSS`, got {line:?}"));
        };
        Ok(MicroResult {
            value: value
                .parse()
                .map_err(|e| format!("bad value {value:?}: {e}"))?,
            rss: rss.parse().map_err(|e| format!("bad rss {rss:?}: {e}"))?,
        })
    }
}

/// Runs one micro-benchmark with `n` operations (or tasks) on our runtime.
pub fn ours(which: Micro, n: usize) -> io::Result<MicroResult> {
    let rt = Runtime::new()?;
    let n = n.max(1);
    let value = match which {
        Micro::Spawn => rt.block_on(spawn_and_complete(n))??,
        Micro::Wake => rt.block_on(wake_round_trip(n))??,
        Micro::Queue => rt.block_on(queue_put_get(n))??,
        Micro::Idle => idle_task_bytes(&rt, n)?,
        Micro::Timers => rt.block_on(timers_fired(n))??,
        Micro::Cancel => rt.block_on(timers_cancelled(n))??,
        Micro::PingPong => rt.block_on(ping_pong(n, 1))??,
        Micro::PingPong100 => rt.block_on(ping_pong(n, 100))??,
        Micro::LoopMessage => rt.block_on(loop_round_trip(n))??,
        Micro::LoopSpawn => rt.block_on(loop_spawn(n))??,
    };
    Ok(MicroResult {
        value,
        rss: rss_bytes()?,
    })
}

async fn timers_fired(n: usize) -> io::Result<f64> {
    let start = Instant::now();
    let sleepers: Vec<_> = deadlines(n, FIRED)
        .map(|d| runtime::spawn(runtime::sleep(d)))
        .collect();
    for sleeper in sleepers {
        sleeper.await.map_err(io::Error::other)?;
    }
    Ok(nanos_per(start.elapsed(), n))
}

async fn timers_cancelled(n: usize) -> io::Result<f64> {
    let start = Instant::now();
    for d in deadlines(n, CANCELLED) {
        let mut sleep = pin!(runtime::sleep(d));
        poll_once(sleep.as_mut()).await;
    }
    Ok(nanos_per(start.elapsed(), n))
}

async fn ping_pong(n: usize, connections: usize) -> io::Result<f64> {
    let mut listener = runtime::TcpListener::bind(([127, 0, 0, 1], 0).into())?;
    let addr = listener.local_addr()?;
    let each = (n / connections).max(1);
    let server = runtime::spawn(async move {
        let mut echoes = Vec::new();
        for _ in 0..connections {
            let (stream, _) = listener.accept().await?;
            echoes.push(runtime::spawn(echo(stream)));
        }
        for echo in echoes {
            echo.await.map_err(io::Error::other)??;
        }
        io::Result::Ok(())
    });
    let start = Instant::now();
    let clients: Vec<_> = (0..connections)
        .map(|_| {
            runtime::spawn(async move {
                let mut stream = runtime::TcpStream::connect(addr).await?;
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
async fn echo(mut stream: runtime::TcpStream) -> io::Result<()> {
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

/// Deadlines of the fired timers: 1 to 5 ms away.
pub const FIRED: (u64, u64) = (1_000, 5_000);
/// Deadlines of the cancelled timers: 1 to 60 s away.
pub const CANCELLED: (u64, u64) = (1_000_000, 60_000_000);

/// `n` durations between `range.0` and `range.1` microseconds, the same
/// pseudo-random ones on every run and on both runtimes (a linear
/// congruential generator, Knuth's MMIX constants).
pub fn deadlines(n: usize, range: (u64, u64)) -> impl Iterator<Item = Duration> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n).map(move |_| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let span = range.1 - range.0;
        Duration::from_micros(range.0 + (state >> 33) % span)
    })
}

/// Polls `future` once, as part of the task that awaits this: enough to
/// arm a timer.
pub fn poll_once<F: Future + Unpin>(mut future: F) -> impl Future<Output = ()> {
    poll_fn(move |cx| {
        let _ = Pin::new(&mut future).poll(cx);
        Poll::Ready(())
    })
}

async fn spawn_and_complete(n: usize) -> io::Result<f64> {
    let start = Instant::now();
    let handles: Vec<_> = (0..n).map(|i| runtime::spawn(async move { i })).collect();
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
    let a = runtime::spawn(Baton::play(baton.clone(), 0, n));
    let b = runtime::spawn(Baton::play(baton, 1, n));
    a.await.map_err(io::Error::other)?;
    b.await.map_err(io::Error::other)?;
    Ok(nanos_per(start.elapsed(), n))
}

async fn queue_put_get(n: usize) -> io::Result<f64> {
    let (ping, pong) = (Queue::new(), Queue::new());
    let start = Instant::now();
    let echo = {
        let (ping, pong) = (ping.clone(), pong.clone());
        runtime::spawn(async move {
            for _ in 0..n {
                let item: usize = ping.get().await;
                pong.put_nowait(item);
            }
        })
    };
    let driver = runtime::spawn(async move {
        for i in 0..n {
            ping.put_nowait(i);
            black_box(pong.get().await);
        }
    });
    driver.await.map_err(io::Error::other)?;
    echo.await.map_err(io::Error::other)?;
    // Each of the n round trips is two puts and two gets.
    Ok(nanos_per(start.elapsed(), 2 * n))
}

async fn loop_round_trip(n: usize) -> io::Result<f64> {
    let other = Loops::start(1)?;
    let (ping, mut ping_rx) = mpsc::channel::<usize>();
    let (pong, mut pong_rx) = mpsc::channel::<usize>();
    let start = Instant::now();
    let echo = other.handles()[0].spawn(async move {
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
    other.join();
    Ok(nanos_per(elapsed, n))
}

async fn loop_spawn(n: usize) -> io::Result<f64> {
    let other = Loops::start(1)?;
    let there = &other.handles()[0];
    let start = Instant::now();
    let handles: Vec<_> = (0..n).map(|i| there.spawn(async move { i })).collect();
    let mut sum = 0;
    for handle in handles {
        sum += handle.await.map_err(io::Error::other)?;
    }
    black_box(sum);
    let elapsed = start.elapsed();
    other.join();
    Ok(nanos_per(elapsed, n))
}

fn idle_task_bytes(rt: &Runtime, n: usize) -> io::Result<f64> {
    // Let the runtime make whatever it makes on its first spawn.
    rt.block_on(async { runtime::spawn(async {}).await })?
        .map_err(io::Error::other)?;
    let parked = Arc::new(AtomicUsize::new(0));
    let mut future_size = 0;
    let before = rss_bytes()?;
    rt.block_on(async {
        for _ in 0..n {
            let task = idle_task(parked.clone());
            future_size = size_of_val(&task);
            // Only the runtime holds the task: we measure what it costs.
            drop(runtime::spawn(task));
        }
        while parked.load(Ordering::Relaxed) < n {
            yield_now().await;
        }
    })?;
    let after = rss_bytes()?;
    Ok(bytes_per_task(before, after, n, future_size))
}

/// The task the idle benchmark parks, n times: it says it has started, then
/// waits forever.
pub async fn idle_task(parked: Arc<AtomicUsize>) {
    parked.fetch_add(1, Ordering::Relaxed);
    pending::<()>().await
}

/// RSS growth per task, less the future that the task carries (which the
/// runtime cannot make smaller).
pub fn bytes_per_task(before: u64, after: u64, n: usize, future_size: usize) -> f64 {
    (after as f64 - before as f64) / n as f64 - future_size as f64
}

pub fn nanos_per(elapsed: Duration, n: usize) -> f64 {
    elapsed.as_nanos() as f64 / n as f64
}

/// A baton that two tasks pass back and forth: the smallest thing that makes
/// one task wake another. It uses nothing from either runtime but the
/// [`Waker`], so it measures the runtime's wake-to-poll path and nothing
/// else. `Send` because tokio's `spawn` wants that; the uncontended mutex
/// costs both runtimes the same.
pub struct Baton {
    state: Mutex<BatonState>,
}

struct BatonState {
    /// Who may run: player 0 or 1.
    holder: usize,
    waiting: [Option<Waker>; 2],
}

impl Baton {
    /// A baton that player 0 holds.
    pub fn new() -> Baton {
        Baton {
            state: Mutex::new(BatonState {
                holder: 0,
                waiting: [None, None],
            }),
        }
    }

    /// Player `me`'s side of `rounds` round trips: wait for the baton, pass
    /// it to the other player, and so on.
    pub async fn play(baton: Arc<Baton>, me: usize, rounds: usize) {
        for _ in 0..rounds {
            baton.wait_for(me).await;
            baton.pass_to(1 - me);
        }
    }

    fn wait_for(&self, me: usize) -> impl Future<Output = ()> + '_ {
        poll_fn(move |cx| {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if state.holder == me {
                Poll::Ready(())
            } else {
                state.waiting[me] = Some(cx.waker().clone());
                Poll::Pending
            }
        })
    }

    fn pass_to(&self, other: usize) {
        let waker = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.holder = other;
            state.waiting[other].take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Default for Baton {
    fn default() -> Self {
        Baton::new()
    }
}

/// Gives the other tasks a turn: pending once, having woken itself. Not
/// `runtime::yield_now`: the same future runs on both runtimes, so that the
/// comparison measures the runtimes and not two yields.
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future of [`yield_now`].
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// This process's resident set size, in bytes, from /proc/self/statm.
pub fn rss_bytes() -> io::Result<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm")?;
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::other(format!("unexpected /proc/self/statm: {statm:?}")))?;
    // SAFETY: sysconf has no preconditions.
    #[allow(unsafe_code)]
    let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Ok(pages * u64::try_from(page_size).unwrap_or(4096))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Micro::ALL {
            assert_eq!(Micro::from_name(m.name()), Some(m));
        }
        assert_eq!(Micro::from_name("nope"), None);
    }

    #[test]
    fn result_line_round_trips() {
        let r = MicroResult {
            value: 123.5,
            rss: 4096,
        };
        assert_eq!(r.to_line(), "123.5 4096");
        assert_eq!(MicroResult::parse(&r.to_line()), Ok(r));
        assert!(MicroResult::parse("1").is_err());
        assert!(MicroResult::parse("1 2 3").is_err());
        assert!(MicroResult::parse("x 2").is_err());
    }

    #[test]
    fn bytes_per_task_subtracts_the_future() {
        assert_eq!(bytes_per_task(1000, 3000, 10, 16), 184.0);
    }

    #[test]
    fn every_benchmark_runs_on_our_runtime() {
        for m in Micro::ALL {
            let r = ours(m, 200).unwrap();
            assert!(r.value.is_finite(), "{m:?}: {r:?}");
            assert!(r.rss > 0, "{m:?}: {r:?}");
        }
    }
}
