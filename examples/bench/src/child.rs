//! One measurement, one fresh child process.
//!
//! Each crawler and each micro-benchmark runs in a process of its own, so
//! that nothing one leaves behind (heap, threads, connections, a warm
//! allocator) flatters or burdens the next, and so that the kernel can tell
//! us what the process cost. `wait4` returns a child's resource usage as it
//! is reaped: user and system CPU time summed over all its threads, and its
//! peak resident set.
//!
//! One wrinkle: Linux carries a process's peak RSS across `fork` and `exec`,
//! so a program started straight from the harness (whose memory holds the
//! demo site) would report at least the harness's RSS as its own peak. So the
//! harness starts a small launcher process first (the benchmark binary in
//! its `child measure` role, which calls [`launch`]); the launcher starts the
//! measured program, reaps it, and reports on the last line of stderr. The
//! demo site runs in the harness, so its CPU time is in none of these
//! numbers.

// `fork`, `wait4`, `getrusage` and `kill` are libc calls: the one module
// of the bench that needs `unsafe`, each block with its `// SAFETY:`.
#![allow(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// What one child run cost, and what it printed.
#[derive(Clone, Debug)]
pub struct Measured {
    pub usage: Usage,
    pub stdout: String,
}

/// What one program run cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// From just before `spawn` to the program's exit.
    pub wall: Duration,
    /// User plus system CPU time, all threads.
    pub cpu: Duration,
    /// Peak resident set size, in bytes.
    pub max_rss: u64,
}

/// How the launcher's report line starts.
const REPORT: &str = "bench-measure:";

impl Usage {
    /// The launcher's report: `bench-measure: WALL_NS CPU_NS MAX_RSS`.
    pub fn to_line(self) -> String {
        format!(
            "{REPORT} {} {} {}",
            self.wall.as_nanos(),
            self.cpu.as_nanos(),
            self.max_rss
        )
    }

    pub fn parse(line: &str) -> Option<Usage> {
        let mut fields = line.strip_prefix(REPORT)?.split_whitespace();
        let mut next = || fields.next()?.parse::<u64>().ok();
        let (wall, cpu, max_rss) = (next()?, next()?, next()?);
        Some(Usage {
            wall: Duration::from_nanos(wall),
            cpu: Duration::from_nanos(cpu),
            max_rss,
        })
    }
}

/// The launcher's side: runs `program` with `args` (sharing our stdin,
/// stdout and stderr) and measures it. Returns its exit code (128 + the
/// signal, if a signal ended it) and what it cost.
pub fn launch(program: &OsStr, args: &[OsString]) -> io::Result<(i32, Usage)> {
    launch_with(program, args, Stdio::inherit())
}

/// The proxy environment variables the crawlers read (curl's, and their
/// upper-case forms).
pub const PROXY_VARIABLES: [&str; 8] = [
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
];

/// [`launch`], with the program's stdout going to `stdout` (a file, for a
/// report too big to pass through the harness's memory).
pub fn launch_with(program: &OsStr, args: &[OsString], stdout: Stdio) -> io::Result<(i32, Usage)> {
    let start = Instant::now();
    let mut command = Command::new(program);
    command.args(args).stdout(stdout);
    // The sites are on 127.0.0.1: a proxy from the environment, which the
    // crawlers honour, must not carry the requests.
    for name in PROXY_VARIABLES {
        command.env_remove(name);
    }
    let child = command.spawn()?;
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    let (status, usage) = reap(pid)?;
    let wall = start.elapsed();
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    Ok((
        code,
        Usage {
            wall,
            cpu: timeval(usage.ru_utime) + timeval(usage.ru_stime),
            // Linux reports kilobytes.
            max_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        },
    ))
}

/// The harness's side: runs `launcher`, a command that ends in [`launch`]
/// and prints its [`Usage`] line last on stderr, with no input, capturing
/// its output. The launcher and the program run in a process group of their
/// own, which is killed if it runs longer than `limit`. Fails if the program
/// could not be started, was killed, or exited unsuccessfully; the error
/// carries the end of its stderr.
pub fn run(launcher: &mut Command, limit: Duration) -> io::Result<Measured> {
    launcher
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = launcher.spawn()?;
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    let (mut stdout, stderr) = match (child.stdout.take(), child.stderr.take()) {
        (Some(out), Some(err)) => (out, err),
        _ => return Err(io::Error::other("child has no stdout/stderr pipe")),
    };

    // The watchdog kills a run that hangs. It is stopped before the launcher
    // is reaped: until then no other process can have its pid, which is
    // also the id of its process group.
    let (stop_watchdog, stopped) = mpsc::channel::<()>();
    let watchdog = thread::spawn(move || {
        if stopped.recv_timeout(limit) == Err(mpsc::RecvTimeoutError::Timeout) {
            // SAFETY: kill has no memory-safety preconditions; a negative
            // pid names the process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            true
        } else {
            false
        }
    });
    let stderr_reader = thread::spawn(move || read_lossy(stderr));
    let mut out = Vec::new();
    let read = stdout.read_to_end(&mut out);

    wait_exited(pid)?;
    let _ = stop_watchdog.send(());
    let killed = watchdog.join().unwrap_or(false);
    let (status, _) = reap(pid)?;
    let mut stderr = stderr_reader.join().unwrap_or_default();
    read?;

    let usage = stderr.lines().last().and_then(Usage::parse);
    if usage.is_some() {
        // Drop the report line; keep the program's own messages.
        let cut = stderr.trim_end().rfind('\n').unwrap_or(0);
        stderr.truncate(cut);
    }
    if killed {
        return Err(io::Error::other(format!(
            "{launcher:?} did not finish within {limit:?} and was killed; stderr:\n{}",
            tail(&stderr)
        )));
    }
    if !status.success() {
        return Err(io::Error::other(format!(
            "{launcher:?} failed ({status}); stderr:\n{}",
            tail(&stderr)
        )));
    }
    let usage = usage.ok_or_else(|| {
        io::Error::other(format!(
            "{launcher:?} printed no `{REPORT}` line; stderr:\n{}",
            tail(&stderr)
        ))
    })?;
    Ok(Measured {
        usage,
        stdout: String::from_utf8_lossy(&out).into_owned(),
    })
}

/// CPU time (user plus system) this process has used so far, all threads.
/// The harness uses it to show what the demo site, which runs in the
/// harness, cost during one child's crawl.
pub fn own_cpu() -> Duration {
    // SAFETY: an all-zero rusage is a valid value (plain integers).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid and writable for the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

/// Blocks until the child has exited, but leaves it unreaped (`WNOWAIT`).
fn wait_exited(pid: libc::pid_t) -> io::Result<()> {
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value (plain integers).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is valid and writable for the duration of the call.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                libc::id_t::try_from(pid).map_err(io::Error::other)?,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reaps the (exited) child and returns its status and resource usage.
fn reap(pid: libc::pid_t) -> io::Result<(ExitStatus, libc::rusage)> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value (plain integers).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid and writable for the call.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((ExitStatus::from_raw(status), usage));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(micros.into())
}

fn read_lossy(mut from: impl Read) -> String {
    let mut bytes = Vec::new();
    let _ = from.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The last few lines of a child's stderr, for an error message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_measures_a_program() {
        let args = [
            "-c",
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 7",
        ]
        .map(OsString::from);
        let (code, usage) = launch(OsStr::new("sh"), &args).unwrap();
        assert_eq!(code, 7);
        assert!(usage.cpu > Duration::ZERO, "{usage:?}");
        assert!(usage.wall >= usage.cpu / 2, "{usage:?}");
        assert!(usage.max_rss > 0, "{usage:?}");
    }

    #[test]
    fn usage_line_round_trips() {
        let usage = Usage {
            wall: Duration::from_millis(5),
            cpu: Duration::from_millis(2),
            max_rss: 3_072_000,
        };
        assert_eq!(usage.to_line(), "bench-measure: 5000000 2000000 3072000");
        assert_eq!(Usage::parse(&usage.to_line()), Some(usage));
        assert_eq!(Usage::parse("bench-measure: 1 2"), None);
        assert_eq!(Usage::parse("other: 1 2 3"), None);
    }

    /// A stand-in launcher: runs the script, then reports a fixed usage.
    fn fake_launcher(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args([
            "-c",
            &format!(
                "{script}\nrc=$?; echo 'bench-measure: 5000000 2000000 3072000' >&2; exit $rc"
            ),
        ]);
        c
    }

    #[test]
    fn run_captures_stdout_and_the_report() {
        let m = run(
            &mut fake_launcher("echo hello; echo note >&2"),
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(m.stdout, "hello\n");
        assert_eq!(m.usage.max_rss, 3_072_000);
        assert_eq!(m.usage.wall, Duration::from_millis(5));
    }

    #[test]
    fn a_failing_program_is_an_error_with_its_stderr() {
        let err = run(
            &mut fake_launcher("echo broken >&2; exit 3"),
            Duration::from_secs(60),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("exit status: 3"), "{msg}");
        assert!(msg.ends_with("stderr:\nbroken"), "{msg}");
    }

    #[test]
    fn a_launcher_without_a_report_is_an_error() {
        let err = run(&mut Command::new("true"), Duration::from_secs(60)).unwrap_err();
        assert!(
            err.to_string().contains("printed no `bench-measure:` line"),
            "{err}"
        );
    }

    #[test]
    fn a_hanging_run_is_killed_with_its_children() {
        let err = run(&mut fake_launcher("sleep 600"), Duration::from_millis(50)).unwrap_err();
        assert!(err.to_string().contains("was killed"), "{err}");
    }

    #[test]
    fn own_cpu_grows_with_work() {
        let before = own_cpu();
        let mut x = 0u64;
        while own_cpu() == before {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(own_cpu() > before);
    }
}
