//! Runs `threads-vs-tasks` with small counts and checks the table's shape.
//! The numbers are measurements, so the test checks what must hold for any
//! correct measurement, not their values.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_threads-vs-tasks");

const HEADER: &str = "\
Idle threads against idle tasks: memory per item on this machine
Each side runs in a fresh child process that reads /proc before and after making N.
  threads: std::thread with 2,048 KiB stacks (Rust's default unless RUST_MIN_STACK is set), blocked on a Condvar
  tasks:   tasks on our runtime, each waiting in Queue::get

        N    threads  RSS/thread  virtual/thread  kernel stack/thread  RSS/task  thread/task
";

const FOOTER: &str = "\
Bytes per item. RSS counts the pages a thread or task has touched. Virtual counts
the address space reserved: a thread's whole stack, and a 64 MiB malloc arena for
each of the first few threads. The kernel also keeps a stack of its own for every
thread, which RSS does not show (KernelStack in /proc/meminfo, for the whole machine).
The chapter measured about 50 KB per Python thread and 3 KB per Python coroutine.
";

fn stdout(out: Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn number(cell: &str) -> u64 {
    cell.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("{cell:?} is not a number"))
}

/// The cells of one table row, checked for shape: N, threads made (with a
/// `*` if stopped), three per-thread figures, the per-task figure, a ratio.
fn row(line: &str) -> Vec<String> {
    let cells: Vec<String> = line.split_whitespace().map(String::from).collect();
    assert_eq!(cells.len(), 7, "{line:?}");
    for cell in &cells[2..6] {
        number(cell);
    }
    assert!(cells[6] == "-" || cells[6].ends_with('x'), "{line:?}");
    cells
}

#[test]
fn the_table_has_one_row_per_n_and_every_figure() {
    // Without RUST_MIN_STACK, as the header states.
    let out = stdout(
        Command::new(BIN)
            .args(["--n", "10,300"])
            .env_remove("RUST_MIN_STACK")
            .output()
            .unwrap(),
    );
    let (header, rest) = out.split_at(HEADER.len().min(out.len()));
    assert_eq!(header, HEADER);
    let lines: Vec<&str> = rest.lines().collect();
    for (line, n) in lines[..2].iter().zip(["10", "300"]) {
        let cells = row(line);
        assert_eq!((cells[0].as_str(), cells[1].as_str()), (n, n), "{line}");
        // Every thread maps its whole stack, so this holds for any correct
        // measurement, whatever else the process did meanwhile.
        assert!(number(&cells[3]) >= 2 << 20, "{line}");
    }
    assert_eq!(lines[2], "");
    assert_eq!(
        rest.lines().skip(3).collect::<Vec<_>>().join("\n") + "\n",
        FOOTER
    );
}

#[test]
fn a_limit_on_the_thread_side_is_named_and_the_tasks_carry_on() {
    // About 1 GB of address space: room for a few threads with their 2 MiB
    // stacks and 64 MiB malloc arenas, not for 1,000.
    let out = stdout(
        Command::new("sh")
            .args(["-c", "ulimit -v 1000000 && exec \"$0\" --n 1000", BIN])
            .env_remove("RUST_MIN_STACK")
            .output()
            .unwrap(),
    );
    let lines: Vec<&str> = out.lines().collect();
    let cells = row(lines[6]);
    assert_eq!(cells[0], "1,000");
    let made = cells[1]
        .strip_suffix('*')
        .expect("the row is marked as stopped");
    assert!(number(made) < 1000, "{}", lines[6]);
    // The task side was still measured.
    assert!(number(&cells[5]) > 0, "{}", lines[6]);
    // The note, unwrapped; only the address space in use varies.
    let note = lines[8..].join("\n").replace("\n  ", " ");
    let note = note.lines().next().unwrap();
    let start = format!(
        "* N = 1,000: the thread side stopped at {made} threads: RLIMIT_AS (ulimit -v): \
         976 MiB of address space per process, "
    );
    let end = " MiB in use, and a new thread may need 2 MiB for its stack and 64 MiB for a \
               malloc arena; running out aborts the whole process, so we stop first";
    assert!(note.starts_with(&start) && note.ends_with(end), "{note}");
}

#[test]
fn the_hidden_child_reports_key_value_lines() {
    let out = stdout(
        Command::new(BIN)
            .args(["__measure", "tasks", "50"])
            .output()
            .unwrap(),
    );
    let keys: Vec<&str> = out
        .lines()
        .map(|line| line.split_once('=').unwrap().0)
        .collect();
    assert_eq!(keys, ["made", "rss", "virt", "kernel_stack"]);
    assert_eq!(out.lines().next(), Some("made=50"));
    let bad = Command::new(BIN)
        .args(["__measure", "fibers", "5"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8(bad.stderr).unwrap();
    assert!(
        stderr.starts_with("error: invalid value 'fibers' for '<KIND>'"),
        "{stderr}"
    );
}

#[test]
fn a_bad_count_is_a_usage_error() {
    let out = Command::new(BIN).args(["--n", "10,x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "error: invalid value '10,x' for '--n <N,N,...>': counts are from 1 to 10000000, \
             and \"x\" is not one\n"
        ),
        "{stderr}"
    );
}
