//! What an idle thread costs, read from /proc on the machine that runs this.
//!
//! The chapter quotes its author's measurement for Python: about 50 KB per
//! thread. We measure Rust threads here instead of quoting anyone. Each
//! thread waits on a condition variable, the way a fetch thread waits in
//! `read` for its server: it exists, and does nothing.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs;
use std::io;
use std::sync::{Arc, Barrier, Condvar, Mutex, PoisonError};
use std::thread;

/// The memory N idle threads added to this process (and to the kernel).
#[derive(Debug, PartialEq)]
pub struct Cost {
    pub threads: usize,
    /// The largest address-space mapping that every new thread got: its
    /// stack, reserved up front.
    pub stack_kib: u64,
    /// Resident memory (pages actually used), per thread.
    pub resident_kib: f64,
    /// The kernel's own stack for each thread, from /proc/meminfo; `None`
    /// where the kernel does not report it.
    pub kernel_stack_kib: Option<f64>,
}

// ANCHOR: idle_threads
/// Starts `n` threads that wait until told to end, measures, ends them.
pub fn idle_threads(n: usize) -> io::Result<Cost> {
    let before = Snapshot::take()?;
    let started = Arc::new(Barrier::new(n + 1));
    let release = Arc::new((Mutex::new(false), Condvar::new()));
    let mut handles = Vec::with_capacity(n);
    let mut spawn_error = None;
    for _ in 0..n {
        let (started, release) = (Arc::clone(&started), Arc::clone(&release));
        let spawned = thread::Builder::new().spawn(move || {
            started.wait();
            let (done, wake) = &*release;
            let mut done = done.lock().unwrap_or_else(PoisonError::into_inner);
            while !*done {
                done = wake.wait(done).unwrap_or_else(PoisonError::into_inner);
            }
        });
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(e) => {
                spawn_error = Some(e);
                break;
            }
        }
    }
    // Every thread is running once the barrier opens, unless one failed to
    // start: then nobody waits for the missing ones.
    let after = match spawn_error {
        None => {
            started.wait();
            Snapshot::take()
        }
        Some(e) => Err(io::Error::new(
            e.kind(),
            format!("the OS refused thread {}: {e}", handles.len() + 1),
        )),
    };
    *release.0.lock().unwrap_or_else(PoisonError::into_inner) = true;
    release.1.notify_all();
    // After a failed spawn, the threads that did start wait at the barrier
    // for ever; they end with the process, so do not join them.
    let after = after?;
    for handle in handles {
        let _ = handle.join();
    }
    Ok(before.cost(&after, n))
}
// ANCHOR_END: idle_threads

/// What /proc says about this process (and the kernel) at one moment.
struct Snapshot {
    resident_kib: u64,
    kernel_stack_kib: Option<u64>,
    /// Each mapping's (start, size in KiB).
    mappings: HashSet<(u64, u64)>,
}

impl Snapshot {
    fn take() -> io::Result<Snapshot> {
        let status = fs::read_to_string("/proc/self/status")?;
        let meminfo = fs::read_to_string("/proc/meminfo")?;
        let maps = fs::read_to_string("/proc/self/maps")?;
        Ok(Snapshot {
            resident_kib: kib_field(&status, "VmRSS:").ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, "no VmRSS in /proc/self/status")
            })?,
            kernel_stack_kib: kib_field(&meminfo, "KernelStack:"),
            mappings: maps.lines().filter_map(mapping).collect(),
        })
    }

    fn cost(&self, after: &Snapshot, threads: usize) -> Cost {
        let per_thread = |before: u64, after: u64| (after as f64 - before as f64) / threads as f64;
        // Each thread gets a few new mappings: guard pages, a small one, and
        // its stack, the largest. Other new mappings (malloc's arenas, one
        // per few threads) are fewer than the threads.
        let mut sizes: HashMap<u64, usize> = HashMap::new();
        for (_, size) in after.mappings.difference(&self.mappings) {
            *sizes.entry(*size).or_default() += 1;
        }
        let stack_kib = sizes
            .into_iter()
            .filter(|&(_, count)| count >= threads)
            .map(|(size, _)| size)
            .max()
            .unwrap_or_default();
        Cost {
            threads,
            stack_kib,
            resident_kib: per_thread(self.resident_kib, after.resident_kib),
            kernel_stack_kib: self
                .kernel_stack_kib
                .zip(after.kernel_stack_kib)
                .map(|(before, after)| per_thread(before, after)),
        }
    }
}

/// The number in a `Name:   1234 kB` line.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `7f12a000-7f32b000 rw-p ...` -> (start, size in KiB).
fn mapping(line: &str) -> Option<(u64, u64)> {
    let range = line.split_whitespace().next()?;
    let (start, end) = range.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    Some((start, end.checked_sub(start)? / 1024))
}

/// Rounded to whole KiB: the exact fraction changes from run to run.
impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} idle threads, per thread:", self.threads)?;
        writeln!(
            f,
            "  stack reserved (address space): {:>5} KiB",
            self.stack_kib
        )?;
        writeln!(
            f,
            "  memory in use (resident):       {:>5.0} KiB",
            self.resident_kib
        )?;
        match self.kernel_stack_kib {
            Some(kib) => writeln!(f, "  kernel stack:                   {kib:>5.0} KiB"),
            None => writeln!(f, "  kernel stack:                   not reported"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_lines() {
        assert_eq!(
            kib_field("Name:\tx\nVmRSS:\t  1234 kB\n", "VmRSS:"),
            Some(1234)
        );
        assert_eq!(kib_field("VmRSS:\n", "VmRSS:"), None);
        assert_eq!(
            mapping("7f0000000000-7f0000200000 rw-p 00000000 00:00 0"),
            Some((0x7f00_0000_0000, 2048))
        );
        assert_eq!(mapping("garbage"), None);
        assert_eq!(mapping("20-10 r--p"), None);
    }

    #[test]
    fn display_rounds_to_whole_kib() {
        let cost = Cost {
            threads: 1000,
            stack_kib: 2048,
            resident_kib: 13.64,
            kernel_stack_kib: Some(15.97),
        };
        assert_eq!(
            cost.to_string(),
            "1000 idle threads, per thread:\n\
             \x20 stack reserved (address space):  2048 KiB\n\
             \x20 memory in use (resident):          14 KiB\n\
             \x20 kernel stack:                      16 KiB\n"
        );
    }
}
