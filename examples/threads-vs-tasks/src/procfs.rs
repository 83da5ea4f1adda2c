//! Reading the numbers Linux publishes under /proc and /sys.
//!
//! The measuring child may be reading these while it is close to a limit on
//! memory or address space, where a failed allocation would abort it. So a
//! [`Snapshot`] reads through buffers allocated up front.

use std::fs::File;
use std::io::{self, Read};

/// Reads small text files into one buffer that is allocated once.
pub struct ProcReader {
    buf: String,
}

impl ProcReader {
    pub fn new() -> ProcReader {
        ProcReader {
            buf: String::with_capacity(64 * 1024),
        }
    }

    /// The whole text of `path`. Allocates only if the file outgrows the
    /// buffer, which the files we read here never do.
    pub fn read(&mut self, path: &str) -> io::Result<&str> {
        self.buf.clear();
        File::open(path)?.read_to_string(&mut self.buf)?;
        Ok(&self.buf)
    }
}

/// What the measuring child's memory looks like at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Resident set size: pages of this process that are in memory, bytes.
    pub rss: u64,
    /// Virtual size: all the address space it has reserved, bytes.
    pub virt: u64,
    /// Memory of the kernel's own per-thread stacks, bytes, for the whole
    /// machine.
    pub kernel_stack: u64,
    /// How many memory mappings this process has (lines of
    /// /proc/self/maps).
    pub maps: u64,
    /// Threads and processes on the whole machine.
    pub machine_tasks: u64,
}

impl Snapshot {
    pub fn take(reader: &mut ProcReader) -> io::Result<Snapshot> {
        let status = reader.read("/proc/self/status")?;
        let rss = kib_field(status, "VmRSS")?;
        let virt = kib_field(status, "VmSize")?;
        let kernel_stack = kib_field(reader.read("/proc/meminfo")?, "KernelStack")?;
        let machine_tasks = machine_tasks(reader.read("/proc/loadavg")?)?;
        Ok(Snapshot {
            rss,
            virt,
            kernel_stack,
            maps: count_lines("/proc/self/maps")?,
            machine_tasks,
        })
    }
}

/// The number after `key:` in a /proc file of `Key:   value kB` lines.
pub fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// A `kB` field of /proc/self/status or /proc/meminfo, in bytes.
fn kib_field(text: &str, key: &str) -> io::Result<u64> {
    field(text, key)
        .map(|kib| kib * 1024)
        .ok_or_else(|| io::Error::other(format!("no {key} field in /proc")))
}

/// The total in /proc/loadavg's "running/total" field.
fn machine_tasks(loadavg: &str) -> io::Result<u64> {
    loadavg
        .split_whitespace()
        .nth(3)
        .and_then(|field| field.split_once('/'))
        .and_then(|(_, total)| total.parse().ok())
        .ok_or_else(|| io::Error::other(format!("cannot read /proc/loadavg: {loadavg:?}")))
}

/// Counts lines with a fixed buffer: /proc/self/maps holds two lines per
/// thread, megabytes when there are tens of thousands of threads.
fn count_lines(path: &str) -> io::Result<u64> {
    let mut file = File::open(path)?;
    let mut chunk = [0u8; 16 * 1024];
    let mut lines = 0;
    loop {
        match file.read(&mut chunk)? {
            0 => return Ok(lines),
            n => lines += chunk[..n].iter().filter(|&&b| b == b'\n').count() as u64,
        }
    }
}

/// A limit from /proc/self/limits, by the name in its first column: `None`
/// when unlimited.
pub fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let line = limits.lines().find(|line| line.starts_with(name))?;
    line.get(name.len()..)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A single number from a file such as /proc/sys/kernel/pid_max; `None` if
/// the file is missing or holds something else ("max" in cgroup files).
pub fn number_in(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Formats `n` with thousands separators: 32768 -> "32,768".
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_limits_parse() {
        let status = "Name:\tx\nVmSize:\t   12345 kB\nVmRSS:\t  678 kB\nThreads:\t3\n";
        assert_eq!(field(status, "VmRSS"), Some(678));
        assert_eq!(field(status, "Threads"), Some(3));
        assert_eq!(field(status, "Vm"), None);
        assert_eq!(kib_field(status, "VmSize").unwrap(), 12345 * 1024);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max processes             96365                96365                processes\n\
                      Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(soft_limit(limits, "Max processes"), Some(96365));
        assert_eq!(soft_limit(limits, "Max address space"), None);
        assert_eq!(machine_tasks("0.52 0.58 0.59 2/104 25642\n").unwrap(), 104);
        assert!(machine_tasks("garbage").is_err());
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(100_000), "100,000");
        assert_eq!(grouped(2_105_344), "2,105,344");
    }
}
