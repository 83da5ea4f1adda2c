//! The limits that stop a program from making more threads, and which one
//! did.
//!
//! They come in two kinds, and we treat them differently:
//!
//! * **Shared** with every other program: process ids (`kernel.pid_max`),
//!   threads (`kernel.threads-max`), a cgroup's `pids.max`, the user's
//!   `RLIMIT_NPROC`, memory. Running into one of these makes *other*
//!   programs fail to start, so we stop [`RESERVE`] short of it and say so.
//! * **This process's own**: memory mappings (`vm.max_map_count`) and
//!   address space (`RLIMIT_AS`, `ulimit -v`). These hurt nobody else, but
//!   running into them is fatal: a new Rust thread maps a signal stack for
//!   itself, and when that fails the standard library aborts the whole
//!   process. So we stop short of these too ([`map_room`],
//!   [`address_space_full`]).
//!
//! If thread creation fails anyway, [`diagnose`] names the likeliest limit.

use std::fs;

use crate::procfs::{ProcReader, Snapshot, grouped, number_in, soft_limit};

/// How far from a shared limit we stop.
pub const RESERVE: u64 = 512;

/// How far from `vm.max_map_count` we stop: room for the allocator's own
/// mappings (glibc makes an arena per few threads) and for reading /proc.
pub const MAP_RESERVE: u64 = 256;

/// Address space a new thread may take besides its stack: glibc gives the
/// first threads a malloc arena each, and reserves 64 MiB for every arena.
const ARENA: u64 = 64 << 20;

/// A generous guess of what one idle thread costs the machine in memory
/// (its touched stack, the kernel's stack for it, page tables), used only to
/// stay well clear of running the machine out of memory.
const THREAD_ESTIMATE: u64 = 64 * 1024;

/// Linux's capability numbers that exempt a process from `RLIMIT_NPROC`.
const CAP_SYS_ADMIN: u32 = 21;
const CAP_SYS_RESOURCE: u32 = 24;

/// A limit, and how many more threads fit under it.
#[derive(Debug)]
pub struct Limit {
    pub room: u64,
    pub description: String,
}

/// The tightest of the shared limits: how many more threads this process
/// can make while leaving [`RESERVE`] for everyone else.
pub fn shared_room(now: &Snapshot) -> Option<Limit> {
    let mut limits = Vec::new();
    let tasks = now.machine_tasks;
    for (sysctl, path) in [
        ("kernel.pid_max", "/proc/sys/kernel/pid_max"),
        ("kernel.threads-max", "/proc/sys/kernel/threads-max"),
    ] {
        if let Some(max) = number_in(path) {
            limits.push(Limit {
                room: max.saturating_sub(tasks + RESERVE),
                description: format!(
                    "{sysctl}: {} threads and processes for the whole machine, {} in use, {RESERVE} kept free for other programs",
                    grouped(max),
                    grouped(tasks)
                ),
            });
        }
    }
    if let Some((max, current)) = cgroup_pids() {
        limits.push(Limit {
            room: max.saturating_sub(current + RESERVE),
            description: format!(
                "the cgroup's pids.max: {} threads and processes, {} in use, {RESERVE} kept free",
                grouped(max),
                grouped(current)
            ),
        });
    }
    if let Some(limit) = nproc() {
        limits.push(limit);
    }
    if let Some(available) = available_memory() {
        limits.push(Limit {
            room: available / 2 / THREAD_ESTIMATE,
            description: format!(
                "memory: {} MiB available; we use at most half of it, counting {} KiB per thread",
                grouped(available >> 20),
                THREAD_ESTIMATE >> 10
            ),
        });
    }
    limits.into_iter().min_by_key(|limit| limit.room)
}

// ANCHOR: map_room
/// How many more threads fit under `vm.max_map_count`, given that this
/// process has `maps` mappings now, and that its last `threads` threads took
/// `taken` of them.
pub fn map_room(maps: u64, taken: u64, threads: u64) -> Option<Limit> {
    let max = number_in("/proc/sys/vm/max_map_count")?;
    let (taken, threads) = (taken.max(1), threads.max(1));
    Some(Limit {
        room: max.saturating_sub(maps + MAP_RESERVE) * threads / taken,
        description: format!(
            "vm.max_map_count: {} memory mappings per process, and each thread takes about {} \
             (glibc's stack and guard page, Rust's signal stack and guard page); a Rust thread \
             that cannot map its signal stack aborts the whole process, so we stop {MAP_RESERVE} short",
            grouped(max),
            (taken + threads / 2) / threads
        ),
    })
}
// ANCHOR_END: map_room

/// This process's `RLIMIT_AS`, if it has one.
pub fn address_space_limit() -> Option<u64> {
    soft_limit(
        &fs::read_to_string("/proc/self/limits").ok()?,
        "Max address space",
    )
}

/// Whether one more thread might not fit in the address space `max`, with
/// `virt` in use: its stack, and perhaps a malloc arena.
pub fn address_space_full(max: u64, virt: u64, stack: u64) -> Option<Limit> {
    (virt + stack + ARENA > max).then(|| Limit {
        room: 0,
        description: format!(
            "RLIMIT_AS (ulimit -v): {} MiB of address space per process, {} MiB in use, and a new \
             thread may need {} MiB for its stack and {} MiB for a malloc arena; running out \
             aborts the whole process, so we stop first",
            grouped(max >> 20),
            grouped(virt >> 20),
            stack >> 20,
            ARENA >> 20
        ),
    })
}

/// Names the limit that most likely made thread creation fail, from a
/// snapshot taken right after the failure. `stack` is the size of one
/// thread's stack.
pub fn diagnose(at: &Snapshot, stack: u64) -> String {
    let limits = fs::read_to_string("/proc/self/limits").unwrap_or_default();
    // glibc maps a stack plus a guard page with one mmap.
    let page = 4096;
    if let Some(max) = soft_limit(&limits, "Max address space")
        && at.virt + stack + page > max
    {
        return format!(
            "RLIMIT_AS (ulimit -v): {} MiB of address space per process, {} MiB in use, and each thread reserves {} MiB for its stack",
            grouped(max >> 20),
            grouped(at.virt >> 20),
            stack >> 20
        );
    }
    if let Some(max) = number_in("/proc/sys/vm/max_map_count")
        && at.maps + 2 > max
    {
        return format!(
            "vm.max_map_count: {} memory mappings per process, {} in use",
            grouped(max),
            grouped(at.maps)
        );
    }
    match shared_room(at) {
        Some(limit) if limit.room == 0 => limit.description,
        _ => "no limit this program knows of was near; failing to start a thread usually means \
              memory, or a limit on threads or processes"
            .to_string(),
    }
}

/// `RLIMIT_NPROC` (`ulimit -u`): threads and processes per user. Root, or
/// any process with CAP_SYS_ADMIN or CAP_SYS_RESOURCE, is exempt.
fn nproc() -> Option<Limit> {
    let mut reader = ProcReader::new();
    let max = soft_limit(reader.read("/proc/self/limits").ok()?, "Max processes")?;
    let status = reader.read("/proc/self/status").ok()?;
    let caps = status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0);
    if caps & (1 << CAP_SYS_ADMIN | 1 << CAP_SYS_RESOURCE) != 0 {
        return None;
    }
    let uid = real_uid(status)?;
    let used = user_threads(uid);
    Some(Limit {
        room: max.saturating_sub(used + RESERVE),
        description: format!(
            "RLIMIT_NPROC (ulimit -u): {} threads and processes for user {uid}, {} in use, {RESERVE} kept free",
            grouped(max),
            grouped(used)
        ),
    })
}

/// The first number on the `Uid:` line of a /proc status file.
fn real_uid(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Threads of every process of user `uid`, which is what `RLIMIT_NPROC`
/// counts.
fn user_threads(uid: u64) -> u64 {
    let Ok(entries) = fs::read_dir("/proc") else {
        return 0;
    };
    let mut reader = ProcReader::new();
    let mut total = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        // Processes come and go while we look; a vanished one counts 0.
        if let Ok(status) = reader.read(&format!("/proc/{pid}/status"))
            && real_uid(status) == Some(uid)
        {
            total += crate::procfs::field(status, "Threads").unwrap_or(1);
        }
    }
    total
}

/// The directory of this process's cgroup for `controller`, in cgroup v1
/// (`N:controller:/path`) or v2 (`0::/path`).
fn cgroup_dir(controller: &str) -> Vec<String> {
    let Ok(text) = fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.split(',').any(|c| c == controller) {
            dirs.push(format!("/sys/fs/cgroup/{controller}{path}"));
        } else if controllers.is_empty() {
            dirs.push(format!("/sys/fs/cgroup{path}"));
        }
    }
    dirs
}

/// The cgroup's `pids.max` and `pids.current`, if it sets a limit.
fn cgroup_pids() -> Option<(u64, u64)> {
    cgroup_dir("pids").into_iter().find_map(|dir| {
        Some((
            number_in(&format!("{dir}/pids.max"))?,
            number_in(&format!("{dir}/pids.current"))?,
        ))
    })
}

/// Memory this process may still use: the machine's `MemAvailable`, or less
/// if its cgroup has a tighter limit.
fn available_memory() -> Option<u64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    let machine = crate::procfs::field(&meminfo, "MemAvailable")? * 1024;
    let cgroup = cgroup_dir("memory").into_iter().find_map(|dir| {
        // v1 names, then v2 names.
        let (limit, usage) = [
            ("memory.limit_in_bytes", "memory.usage_in_bytes"),
            ("memory.max", "memory.current"),
        ]
        .into_iter()
        .find_map(|(l, u)| {
            Some((
                number_in(&format!("{dir}/{l}"))?,
                number_in(&format!("{dir}/{u}"))?,
            ))
        })?;
        Some(limit.saturating_sub(usage))
    });
    Some(cgroup.map_or(machine, |c| c.min(machine)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_is_the_first_number() {
        assert_eq!(
            real_uid("Name:\tx\nUid:\t1000\t1001\t1000\t1000\n"),
            Some(1000)
        );
        assert_eq!(real_uid("Name:\tx\n"), None);
    }
}
