//! A recording written as Chrome trace-event JSON, the format Perfetto
//! (<https://ui.perfetto.dev>) and `chrome://tracing` open with nothing
//! else installed.
//!
//! One "thread" (track) for the event loop and one per task; a poll, a
//! callback, a timer's callback and a wait in the selector are complete
//! events (`"ph": "X"`) with a duration; a wake is a flow arrow (`"s"` where
//! it happened, `"f"` at the poll it caused); registrations, timers set and
//! warnings are instant events (`"i"`). Every event carries its fields in
//! `args`, so that a program (our `timeline` renderer) can read the story
//! back. The format: "Trace Event Format", Google, 2016.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Duration;

use crate::recorder::{Actor, Event, Outcome, Record, Recording};
use crate::task_id::TaskId;

/// The track of the event loop (and of code outside any task).
const LOOP_TRACK: u64 = 0;
/// The track for wakes that came from other threads.
const THREADS_TRACK: u64 = 1_000_000_000;

/// Task `id`'s track: after the loop's, in id order (the main future, 0,
/// first).
fn task_track(id: TaskId) -> u64 {
    id + 1
}

fn track_of(actor: Actor) -> u64 {
    match actor {
        Actor::Task(id) => task_track(id),
        Actor::Thread => THREADS_TRACK,
        Actor::Io(_) | Actor::Timer(_) | Actor::Outside => LOOP_TRACK,
    }
}

/// How the trace names who did something; the renderer reads it back.
fn actor_name(actor: Actor) -> String {
    match actor {
        Actor::Task(id) => format!("task {id}"),
        Actor::Io(token) => format!("io token={token}"),
        Actor::Timer(timer) => format!("timer {timer}"),
        Actor::Thread => "another thread".into(),
        Actor::Outside => "outside".into(),
    }
}

fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pending => "Pending",
        Outcome::Ready => "Ready",
        Outcome::Cancelled => "Cancelled",
        Outcome::Panicked => "Panicked",
    }
}

/// Microseconds, the format's unit, to the nanosecond.
fn micros(d: Duration) -> String {
    let ns = d.as_nanos();
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// A JSON string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Builds the list of trace events.
struct Writer {
    events: Vec<String>,
    next_flow: u64,
}

impl Writer {
    fn push(&mut self, ph: &str, name: &str, cat: &str, at: Duration, track: u64, rest: &str) {
        self.events.push(format!(
            "{{\"ph\":\"{ph}\",\"name\":{},\"cat\":\"{cat}\",\"ts\":{},\"pid\":1,\"tid\":{track}{rest}}}",
            quote(name),
            micros(at)
        ));
    }

    fn span(
        &mut self,
        name: &str,
        cat: &str,
        from: Duration,
        to: Duration,
        track: u64,
        args: &str,
    ) {
        let rest = format!(
            ",\"dur\":{},\"args\":{{{args}}}",
            micros(to.saturating_sub(from))
        );
        self.push("X", name, cat, from, track, &rest);
    }

    fn instant(&mut self, name: &str, cat: &str, at: Duration, track: u64, args: &str) {
        let rest = format!(",\"s\":\"t\",\"args\":{{{args}}}");
        self.push("i", name, cat, at, track, &rest);
    }

    /// An arrow from `(from, from_track)` to the slice that begins at
    /// `(to, to_track)`.
    fn flow(
        &mut self,
        cat: &str,
        from: Duration,
        from_track: u64,
        to: Duration,
        to_track: u64,
        args: &str,
    ) {
        self.next_flow += 1;
        let id = self.next_flow;
        let rest = format!(",\"id\":{id},\"args\":{{{args}}}");
        self.push("s", cat, cat, from, from_track, &rest);
        let rest = format!(",\"id\":{id},\"bp\":\"e\",\"args\":{{{args}}}");
        self.push("f", cat, cat, to, to_track, &rest);
    }

    fn name_track(&mut self, track: u64, name: &str) {
        self.events.push(format!(
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":{track},\"args\":{{\"name\":{}}}}}",
            quote(name)
        ));
        self.events.push(format!(
            "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":{track},\"args\":{{\"sort_index\":{}}}}}",
            track.min(i32::MAX as u64)
        ));
    }
}

/// Writes `records` to `out` as a Chrome trace.
impl Recording {
    /// Writes the recording as Chrome trace-event JSON.
    pub fn write_chrome_trace(&self, out: impl Write) -> io::Result<()> {
        let origin = self.origin();
        self.with_records(|records| write(records, &origin, out))
    }
}

pub(crate) fn write(
    records: &[Record],
    (start_unix_us, thread): &(u128, Option<String>),
    mut out: impl Write,
) -> io::Result<()> {
    let end = records.last().map_or(Duration::ZERO, |r| r.at);
    let mut w = Writer {
        events: Vec::new(),
        next_flow: 0,
    };
    w.events.push(
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"runtime\"}}"
            .into(),
    );
    w.name_track(LOOP_TRACK, "event loop");

    // When each task's polls begin, in order: where wake arrows land.
    let mut poll_starts: HashMap<TaskId, Vec<Duration>> = HashMap::new();
    for r in records {
        if let Event::PollStart { task } = r.event {
            poll_starts.entry(task).or_default().push(r.at);
        }
    }
    let next_poll = |task: TaskId, after: Duration| {
        let starts = poll_starts.get(&task)?;
        let i = starts.partition_point(|&s| s < after);
        starts.get(i).copied()
    };

    let mut tracks: BTreeMap<u64, String> = BTreeMap::new();
    let mut open: HashMap<u64, Duration> = HashMap::new(); // track -> span start
    let mut wait: Option<(Duration, Option<Duration>)> = None;
    let mut callback: Option<(Duration, String, String)> = None;
    for r in records {
        let at = r.at;
        match &r.event {
            Event::Spawn {
                task,
                name,
                at: loc,
                by,
            } => {
                let label = match (task, name) {
                    (0, _) => "main".to_string(),
                    (_, Some(name)) => format!("task {task} ({name})"),
                    (_, None) => format!("task {task}"),
                };
                tracks.insert(task_track(*task), label.clone());
                let args = format!(
                    "\"task\":{task},\"name\":{},\"spawned_at\":{},\"by\":{}",
                    quote(name.as_deref().unwrap_or("")),
                    quote(&loc.to_string()),
                    quote(&actor_name(*by))
                );
                // No arrow: the wake that puts the new task in the run
                // queue, right after this, draws it.
                w.instant(&format!("spawn {label}"), "spawn", at, track_of(*by), &args);
            }
            Event::PollStart { task } => {
                tracks
                    .entry(task_track(*task))
                    .or_insert_with(|| format!("task {task}"));
                open.insert(task_track(*task), at);
            }
            Event::PollEnd { task, outcome } => {
                let track = task_track(*task);
                let from = open.remove(&track).unwrap_or(at);
                let args = format!("\"task\":{task},\"outcome\":\"{}\"", outcome_name(*outcome));
                w.span("poll", "poll", from, at, track, &args);
            }
            Event::Cancelled { task } => {
                let args = format!("\"task\":{task}");
                w.instant("cancelled", "cancel", at, task_track(*task), &args);
            }
            Event::Wake { task, by } => {
                let args = format!("\"task\":{task},\"by\":{}", quote(&actor_name(*by)));
                if *by == Actor::Thread {
                    tracks.insert(THREADS_TRACK, "other threads".into());
                }
                w.instant(
                    &format!("wake task {task}"),
                    "wake",
                    at,
                    track_of(*by),
                    &args,
                );
                if let Some(poll) = next_poll(*task, at) {
                    w.flow("wake", at, track_of(*by), poll, task_track(*task), &args);
                }
            }
            Event::Register { token, by } | Event::Deregister { token, by } => {
                let verb = match r.event {
                    Event::Register { .. } => "register",
                    _ => "deregister",
                };
                let args = format!("\"token\":{token},\"by\":{}", quote(&actor_name(*by)));
                w.instant(
                    &format!("{verb} token={token}"),
                    verb,
                    at,
                    track_of(*by),
                    &args,
                );
            }
            Event::TimerSet { timer, after, by } => {
                let args = format!(
                    "\"timer\":{timer},\"after_us\":{},\"by\":{}",
                    micros(*after),
                    quote(&actor_name(*by))
                );
                let name = format!("timer {timer} set, due in {after:?}");
                w.instant(&name, "timer-set", at, track_of(*by), &args);
            }
            Event::TimerCancelled { timer, by } => {
                let args = format!("\"timer\":{timer},\"by\":{}", quote(&actor_name(*by)));
                let name = format!("timer {timer} cancelled");
                w.instant(&name, "timer-cancel", at, track_of(*by), &args);
            }
            Event::WaitStart { timeout } => wait = Some((at, *timeout)),
            Event::WaitEnd { events } => {
                let (from, timeout) = wait.take().unwrap_or((at, None));
                let timeout = timeout.map_or("null".to_string(), micros);
                let args = format!("\"events\":{events},\"timeout_us\":{timeout}");
                w.span("select", "wait", from, at, LOOP_TRACK, &args);
            }
            Event::Poke => w.instant("poked by another thread", "poke", at, LOOP_TRACK, ""),
            Event::CallbackStart { token, readiness } => {
                let args = format!(
                    "\"token\":{token},\"readable\":{},\"writable\":{},\"error\":{}",
                    readiness.readable, readiness.writable, readiness.error
                );
                callback = Some((at, format!("callback token={token}"), args));
            }
            Event::TimerStart { timer } => {
                callback = Some((at, format!("timer {timer}"), format!("\"timer\":{timer}")));
            }
            Event::CallbackEnd { .. } | Event::TimerEnd { .. } => {
                if let Some((from, name, args)) = callback.take() {
                    let cat = if name.starts_with("timer") {
                        "timer"
                    } else {
                        "callback"
                    };
                    w.span(&name, cat, from, at, LOOP_TRACK, &args);
                }
            }
            Event::Warning(warning) => {
                let track = warning.task.map_or(LOOP_TRACK, task_track);
                let args = format!("\"message\":{}", quote(&warning.to_string()));
                w.instant("warning", "warning", at, track, &args);
            }
        }
    }
    // A poll or wait still going on when the recording ended.
    for (track, from) in open {
        w.span(
            "poll",
            "poll",
            from,
            end,
            track,
            "\"outcome\":\"unfinished\"",
        );
    }
    if let Some((from, _)) = wait {
        w.span("select", "wait", from, end, LOOP_TRACK, "\"events\":0");
    }
    for (track, name) in &tracks {
        w.name_track(*track, name);
    }

    // Where the recording's time 0 is on the wall clock, and its thread:
    // the timeline lines the traces of several loops up by it.
    writeln!(
        out,
        "{{\"displayTimeUnit\":\"ms\",\"otherData\":{{\"start_unix_us\":{start_unix_us},\"thread\":{}}},\"traceEvents\":[",
        quote(thread.as_deref().unwrap_or("main"))
    )?;
    for (i, event) in w.events.iter().enumerate() {
        let sep = if i + 1 < w.events.len() { ",\n" } else { "\n" };
        out.write_all(event.as_bytes())?;
        out.write_all(sep.as_bytes())?;
    }
    out.write_all(b"]}\n")?;
    out.flush()
}
