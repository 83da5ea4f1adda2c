//! The measuring children: make N idle threads, or N idle tasks, and read
//! this process's memory before and after.
//!
//! Each runs in a fresh process (see `main`), so that what one side
//! allocated, and the allocator kept, does not count against the other.

use std::cell::Cell;
use std::io;
use std::rc::Rc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

use runtime::{Queue, Runtime, spawn};

use crate::limits;
use crate::procfs::{self, ProcReader, Snapshot, grouped};

/// What a child measured, as it tells the parent on stdout.
#[derive(Debug, PartialEq, Eq)]
pub struct Report {
    /// How many threads or tasks it made.
    pub made: u64,
    pub before: Snapshot,
    pub after: Snapshot,
    /// Why it made fewer than asked.
    pub stopped: Option<String>,
}

impl Report {
    /// `key=value` lines; `stopped` comes last because its value is prose.
    pub fn to_lines(&self) -> String {
        let (b, a) = (&self.before, &self.after);
        let mut out = format!(
            "made={}\nrss={} {}\nvirt={} {}\nkernel_stack={} {}\n",
            self.made, b.rss, a.rss, b.virt, a.virt, b.kernel_stack, a.kernel_stack
        );
        if let Some(why) = &self.stopped {
            out.push_str(&format!("stopped={why}\n"));
        }
        out
    }

    pub fn parse(text: &str) -> Result<Report, String> {
        let mut report = Report {
            made: 0,
            before: Snapshot::default(),
            after: Snapshot::default(),
            stopped: None,
        };
        let mut seen = 0;
        for line in text.lines() {
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| format!("unexpected line {line:?}"))?;
            let pair = || -> Result<(u64, u64), String> {
                let (x, y) = value
                    .split_once(' ')
                    .ok_or_else(|| format!("{key} needs two numbers: {value:?}"))?;
                let num = |s: &str| s.parse().map_err(|_| format!("{key}: bad number {s:?}"));
                Ok((num(x)?, num(y)?))
            };
            match key {
                "made" => report.made = value.parse().map_err(|_| format!("bad made={value:?}"))?,
                "rss" => (report.before.rss, report.after.rss) = pair()?,
                "virt" => (report.before.virt, report.after.virt) = pair()?,
                "kernel_stack" => (report.before.kernel_stack, report.after.kernel_stack) = pair()?,
                "stopped" => report.stopped = Some(value.to_string()),
                _ => return Err(format!("unknown key {key:?}")),
            }
            seen += 1;
        }
        if seen < 4 {
            return Err(format!("incomplete report: {text:?}"));
        }
        Ok(report)
    }
}

/// The stack size `std::thread` gives a new thread: `RUST_MIN_STACK` if set,
/// else 2 MiB, as the standard library decides it.
pub fn thread_stack_size() -> u64 {
    std::env::var("RUST_MIN_STACK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2 * 1024 * 1024)
}

/// How many threads to make before counting the memory mappings they took.
/// Enough that the allocator's few arenas, made by the first threads, do not
/// skew the count much.
const CALIBRATE: u64 = 256;

/// Where the idle threads wait. Two condition variables: the threads wait on
/// one to be released, the main thread waits on the other to learn that
/// they have all arrived, so that no arrival wakes thousands of threads.
#[derive(Default)]
struct Park {
    state: Mutex<ParkState>,
    arrived: Condvar,
    release: Condvar,
}

#[derive(Default)]
struct ParkState {
    parked: usize,
    released: bool,
}

impl Park {
    fn lock(&self) -> MutexGuard<'_, ParkState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What each idle thread runs: check in, then sleep until released.
    fn idle(&self) {
        let mut state = self.lock();
        state.parked += 1;
        self.arrived.notify_one();
        while !state.released {
            state = self
                .release
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn wait_until_parked(&self, n: usize) {
        let mut state = self.lock();
        while state.parked < n {
            state = self
                .arrived
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn release_all(&self) {
        self.lock().released = true;
        self.release.notify_all();
    }
}

/// Makes up to `n` threads that block on a condition variable, and measures.
pub fn idle_threads(n: u64) -> io::Result<Report> {
    let mut reader = ProcReader::new();
    let before = Snapshot::take(&mut reader)?;
    let mut limit = limits::shared_room(&before).filter(|limit| limit.room < n);
    let mut target = limit.as_ref().map_or(n, |limit| limit.room);
    let park = Arc::new(Park::default());
    let mut threads = Vec::with_capacity(usize::try_from(target).unwrap_or(0));
    let mut failure = None;
    let mut calibrated = false;
    let address_space = limits::address_space_limit();
    let stack = thread_stack_size();
    while (threads.len() as u64) < target {
        if let Some(max) = address_space {
            // Rare, and then checked before every thread, once the last one
            // has taken all the address space it is going to.
            park.wait_until_parked(threads.len());
            let virt = procfs::field(reader.read("/proc/self/status")?, "VmSize").unwrap_or(0);
            if let Some(full) = limits::address_space_full(max, virt * 1024, stack) {
                limit = Some(full);
                break;
            }
        }
        if threads.len() as u64 == CALIBRATE && !calibrated {
            calibrated = true;
            // Now we know how many memory mappings a thread takes here.
            park.wait_until_parked(threads.len());
            let now = Snapshot::take(&mut reader)?;
            let taken = now.maps.saturating_sub(before.maps);
            if let Some(maps) = limits::map_room(now.maps, taken, CALIBRATE)
                && CALIBRATE + maps.room < target
            {
                target = CALIBRATE + maps.room;
                limit = Some(maps);
            }
            continue;
        }
        let park = park.clone();
        match thread::Builder::new().spawn(move || park.idle()) {
            Ok(handle) => threads.push(handle),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    park.wait_until_parked(threads.len());
    // Near a limit an allocation may fail, so nothing between here and the
    // release allocates: the snapshot reads through buffers made earlier.
    let after = Snapshot::take(&mut reader);
    park.release_all();
    let made = threads.len() as u64;
    for thread in threads {
        // An idle thread cannot panic; if one did, its memory is gone anyway.
        let _ = thread.join();
    }
    let after = after?;
    let stopped = match (failure, limit) {
        (Some(e), _) => Some(format!(
            "thread {} could not start ({e}); the limit it hit: {}",
            grouped(made + 1),
            limits::diagnose(&after, stack)
        )),
        (None, Some(limit)) if made < n => Some(limit.description),
        _ => None,
    };
    Ok(Report {
        made,
        before,
        after,
        stopped,
    })
}

/// What every idle task shares: one allocation, so that each task holds a
/// single pointer besides its own state.
struct Shared {
    work: Queue<()>,
    parked: Cell<u64>,
    all_parked: Queue<()>,
}

// ANCHOR: idle_tasks
/// Makes `n` tasks that wait in `Queue::get` for work that never comes, and
/// measures.
pub fn idle_tasks(n: u64) -> io::Result<Report> {
    let runtime = Runtime::new()?;
    runtime.block_on(async move {
        let mut reader = ProcReader::new();
        let before = Snapshot::take(&mut reader)?;
        let shared = Rc::new(Shared {
            work: Queue::new(),
            parked: Cell::new(0),
            all_parked: Queue::new(),
        });
        for _ in 0..n {
            let shared = shared.clone();
            spawn(async move {
                shared.parked.set(shared.parked.get() + 1);
                if shared.parked.get() == n {
                    shared.all_parked.put_nowait(());
                }
                shared.work.get().await;
            });
        }
        if n > 0 {
            shared.all_parked.get().await; // every task has run and parked
        }
        let after = Snapshot::take(&mut reader)?;
        Ok(Report {
            made: n,
            before,
            after,
            stopped: None,
        })
    })?
}
// ANCHOR_END: idle_tasks

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        let report = Report {
            made: 7,
            before: Snapshot {
                rss: 1,
                virt: 2,
                kernel_stack: 3,
                ..Snapshot::default()
            },
            after: Snapshot {
                rss: 4,
                virt: 5,
                kernel_stack: 6,
                ..Snapshot::default()
            },
            stopped: Some("a = b, and c".into()),
        };
        assert_eq!(Report::parse(&report.to_lines()).unwrap(), report);
        assert!(Report::parse("made=1\n").is_err());
        assert!(Report::parse("made=x\nrss=1 2\nvirt=1 2\nkernel_stack=1 2\n").is_err());
    }

    #[test]
    fn a_few_threads_and_tasks_are_measured() {
        let threads = idle_threads(5).unwrap();
        assert_eq!((threads.made, threads.stopped), (5, None));
        assert!(threads.after.virt > threads.before.virt);
        let tasks = idle_tasks(5).unwrap();
        assert_eq!((tasks.made, tasks.stopped), (5, None));
    }
}
