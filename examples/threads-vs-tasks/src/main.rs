//! The memory cost of N idle threads against N idle tasks, measured on the
//! reader's machine.
//!
//! The chapter says a Python thread cost its author about 50 KB and a Python
//! coroutine about 3 KB. This program redoes the comparison for Rust: for
//! each N it makes N threads that block on a condition variable, and N tasks
//! on our runtime that wait in `Queue::get`, each side in a fresh child
//! process, and reads the memory from /proc. When a limit stops the thread
//! side it says which one, and carries on.
//!
//! `--n 1000,10000` chooses the Ns (default 1,000, 10,000 and 100,000).
//!
//! | module | holds |
//! |---|---|
//! | `idle` | the measuring children: N idle threads or N idle tasks, and the memory before and after |
//! | `limits` | the limits that stop a program from making more threads, and which one did |
//! | `procfs` | the numbers Linux publishes under /proc and /sys, read into buffers made up front |

mod idle;
mod limits;
mod procfs;

use std::process::{Command, ExitCode};

use clap::{Parser, Subcommand, ValueEnum};
use idle::Report;
use procfs::grouped;

/// Measures the memory of N idle threads and of N idle tasks, for each N.
#[derive(Debug, Parser)]
#[command(name = "threads-vs-tasks")]
struct Args {
    /// Comma-separated counts, each from 1 to 10000000.
    #[arg(long = "n", value_name = "N,N,...", default_value = "1000,10000,100000",
          value_parser = parse_counts)]
    n: Counts,
    #[command(subcommand)]
    role: Option<Role>,
}

/// The list of `--n`.
#[derive(Clone, Debug, PartialEq)]
struct Counts(Vec<u64>);

#[derive(Debug, Subcommand)]
enum Role {
    /// The child the parent runs itself as, to measure in a fresh process
    /// (not for people).
    #[command(name = "__measure", hide = true)]
    Measure {
        kind: Kind,
        #[arg(value_parser = clap::value_parser!(u64).range(1..=MAX_N))]
        n: u64,
    },
}

/// What the child measures.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Kind {
    Threads,
    Tasks,
}

const MAX_N: u64 = 10_000_000;

/// The hidden subcommand the parent runs itself with: `__measure threads N`.
const MEASURE: &str = "__measure";

fn main() -> ExitCode {
    env_logger::init();
    let args = Args::parse();
    if let Some(Role::Measure { kind, n }) = args.role {
        return child(kind, n);
    }
    match parent(&args.n.0) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("threads-vs-tasks: {message}");
            ExitCode::FAILURE
        }
    }
}

fn parse_counts(list: &str) -> Result<Counts, String> {
    list.split(',')
        .map(|n| {
            n.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=MAX_N).contains(n))
                .ok_or_else(|| format!("counts are from 1 to {MAX_N}, and {n:?} is not one"))
        })
        .collect::<Result<_, _>>()
        .map(Counts)
}

/// The measuring side: `__measure threads N` or `__measure tasks N`.
fn child(kind: Kind, n: u64) -> ExitCode {
    let report = match kind {
        Kind::Threads => idle::idle_threads(n),
        Kind::Tasks => idle::idle_tasks(n),
    };
    match report {
        Ok(report) => {
            print!("{}", report.to_lines());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("threads-vs-tasks: measuring {n} {kind:?} failed: {e}");
            ExitCode::FAILURE
        }
    }
}

// ANCHOR: measure_in_child
/// Runs one side in a fresh copy of this program, so that neither side's
/// leftovers (freed memory the allocator keeps) count against the other.
fn measure_in_child(kind: &str, n: u64) -> Result<Report, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let out = Command::new(exe)
        .args([MEASURE, kind, &n.to_string()])
        .output()
        .map_err(|e| format!("cannot start the {kind} child: {e}"))?;
    if !out.status.success() {
        // The first lines say what went wrong; a backtrace may follow.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = stderr.lines().take(2).collect();
        return Err(format!(
            "the {kind} child failed ({}): {}",
            out.status,
            first.join(" ")
        ));
    }
    Report::parse(&String::from_utf8_lossy(&out.stdout))
}
// ANCHOR_END: measure_in_child

/// Bytes per item from a report: RSS, virtual, kernel stack.
fn per_item(report: &Report) -> Option<(u64, u64, u64)> {
    let n = report.made;
    if n == 0 {
        return None;
    }
    let (b, a) = (&report.before, &report.after);
    Some((
        a.rss.saturating_sub(b.rss) / n,
        a.virt.saturating_sub(b.virt) / n,
        a.kernel_stack.saturating_sub(b.kernel_stack) / n,
    ))
}

fn parent(ns: &[u64]) -> Result<(), String> {
    let stack = idle::thread_stack_size();
    println!("Idle threads against idle tasks: memory per item on this machine");
    println!("Each side runs in a fresh child process that reads /proc before and after making N.");
    println!(
        "  threads: std::thread with {} KiB stacks (Rust's default unless RUST_MIN_STACK is set), blocked on a Condvar",
        grouped(stack >> 10)
    );
    println!("  tasks:   tasks on our runtime, each waiting in Queue::get");
    println!();
    println!(
        "{:>9}  {:>9}  {:>10}  {:>14}  {:>19}  {:>8}  {:>11}",
        "N",
        "threads",
        "RSS/thread",
        "virtual/thread",
        "kernel stack/thread",
        "RSS/task",
        "thread/task"
    );
    let mut notes = Vec::new();
    for &n in ns {
        let threads = measure_in_child("threads", n);
        let tasks = measure_in_child("tasks", n);
        let mut made = match &threads {
            Ok(report) => grouped(report.made),
            Err(_) => "failed".to_string(),
        };
        match &threads {
            Ok(Report {
                made: got,
                stopped: Some(why),
                ..
            }) => {
                made.push('*');
                notes.push(format!(
                    "* N = {}: the thread side stopped at {} threads: {why}",
                    grouped(n),
                    grouped(*got)
                ));
            }
            Ok(_) => {}
            Err(e) => notes.push(format!("* N = {}: {e}", grouped(n))),
        }
        if let Err(e) = &tasks {
            notes.push(format!("* N = {}: {e}", grouped(n)));
        }
        let thread = threads.as_ref().ok().and_then(per_item);
        let task = tasks.as_ref().ok().and_then(per_item);
        let show = |v: Option<u64>| v.map_or("-".to_string(), grouped);
        let ratio = match (thread, task) {
            (Some((t, _, _)), Some((k, _, _))) if k > 0 => format!("{}x", t / k),
            _ => "-".to_string(),
        };
        println!(
            "{:>9}  {:>9}  {:>10}  {:>14}  {:>19}  {:>8}  {:>11}",
            grouped(n),
            made,
            show(thread.map(|t| t.0)),
            show(thread.map(|t| t.1)),
            show(thread.map(|t| t.2)),
            show(task.map(|t| t.0)),
            ratio
        );
    }
    println!();
    for note in &notes {
        println!("{}", wrap(note, 88));
    }
    if !notes.is_empty() {
        println!();
    }
    println!("Bytes per item. RSS counts the pages a thread or task has touched. Virtual counts");
    println!("the address space reserved: a thread's whole stack, and a 64 MiB malloc arena for");
    println!("each of the first few threads. The kernel also keeps a stack of its own for every");
    println!(
        "thread, which RSS does not show (KernelStack in /proc/meminfo, for the whole machine)."
    );
    println!("The chapter measured about 50 KB per Python thread and 3 KB per Python coroutine.");
    Ok(())
}

/// Breaks `text` into lines of at most `width` characters at spaces; lines
/// after the first are indented by two.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for word in text.split(' ') {
        if line_len > 0 && line_len + 1 + word.chars().count() > width {
            out.push_str("\n  ");
            line_len = 2;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += word.chars().count();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping() {
        assert_eq!(wrap("aa bb cc", 5), "aa bb\n  cc");
        assert_eq!(wrap("aaaaaaa b", 5), "aaaaaaa\n  b");
        assert_eq!(wrap("short", 80), "short");
    }

    #[test]
    fn ns_parse() {
        let args = |a: &[&str]| {
            Args::try_parse_from(std::iter::once("threads-vs-tasks").chain(a.iter().copied()))
                .map(|args| args.n.0)
                .map_err(|e| e.to_string())
        };
        assert_eq!(args(&[]).unwrap(), [1_000, 10_000, 100_000]);
        assert_eq!(args(&["--n", "5, 7"]).unwrap(), [5, 7]);
        assert!(
            args(&["--n", "0"])
                .unwrap_err()
                .contains("counts are from 1 to 10000000, and \"0\" is not one")
        );
    }
}
