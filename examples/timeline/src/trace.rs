//! A runtime trace read back from its Chrome trace-event JSON: lanes,
//! spans, arrows and marks, in microseconds.
//!
//! The writer is `runtime/src/chrome_trace.rs`; this reads only what it
//! writes (every event keeps its fields in `args`), and rejects anything
//! else with a clear error rather than drawing nonsense.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

/// The track of the event loop.
pub const LOOP: u64 = 0;

/// Task `id`'s lane, as the writer numbers them (the loop is 0).
pub fn task_lane(id: u64) -> u64 {
    id + 1
}

/// A box on a lane: a poll, a callback, a timer's callback, a wait.
#[derive(Clone, Debug)]
pub struct Span {
    pub lane: u64,
    pub kind: SpanKind,
    pub start: f64,
    pub end: f64,
    /// What the span says: the poll's outcome, the callback's token.
    pub label: String,
    /// For a callback: what the event said ("readable", "writable").
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    Poll,
    Callback,
    Timer,
    Wait,
}

/// A wake: from where it happened to the poll it caused.
#[derive(Clone, Debug)]
pub struct Arrow {
    pub from_lane: u64,
    pub from: f64,
    pub to_lane: u64,
    pub to: f64,
    /// Who woke the task, as the trace names it ("io token=3", "task 2",
    /// "timer 0", "another thread", "outside").
    pub by: String,
}

/// A moment on a lane: a spawn, a registration, a timer set, a warning.
#[derive(Clone, Debug)]
pub struct Mark {
    pub lane: u64,
    pub at: f64,
    pub kind: String,
    pub label: String,
    /// For a spawn: the new task's lane.
    pub about: Option<u64>,
}

/// Everything in a trace.
#[derive(Debug, Default)]
pub struct Trace {
    /// Lane id (the trace's `tid`) to its name, in drawing order.
    pub lanes: BTreeMap<u64, String>,
    pub spans: Vec<Span>,
    pub arrows: Vec<Arrow>,
    pub marks: Vec<Mark>,
    /// The wall clock at the trace's time 0, in microseconds from the
    /// Unix epoch, and the thread it recorded: what lines the traces of
    /// several loops up (`otherData`; absent from older traces).
    pub start_unix_us: Option<f64>,
    pub thread: Option<String>,
}

impl Trace {
    /// Reads a trace written by the runtime's recorder.
    pub fn parse(json: &str) -> Result<Trace, String> {
        let root: Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
        let events = root
            .get("traceEvents")
            .and_then(Value::as_array)
            .ok_or("not a Chrome trace: no \"traceEvents\" array")?;
        let mut trace = Trace::default();
        let other = root.get("otherData");
        trace.start_unix_us = other
            .and_then(|o| o.get("start_unix_us"))
            .and_then(Value::as_f64);
        trace.thread = other
            .and_then(|o| o.get("thread"))
            .and_then(Value::as_str)
            .map(String::from);
        let mut flow_starts: HashMap<u64, (u64, f64)> = HashMap::new();
        for (i, event) in events.iter().enumerate() {
            let field = |name: &str| event.get(name);
            let ph = field("ph").and_then(Value::as_str).unwrap_or("");
            let name = field("name").and_then(Value::as_str).unwrap_or("");
            let cat = field("cat").and_then(Value::as_str).unwrap_or("");
            let lane = field("tid").and_then(Value::as_u64).unwrap_or(LOOP);
            let ts = field("ts").and_then(Value::as_f64);
            let args = field("args").cloned().unwrap_or(Value::Null);
            let arg = |name: &str| {
                args.get(name)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let need_ts = || ts.ok_or(format!("event {i} ({name}) has no \"ts\""));
            match ph {
                "M" if name == "thread_name" => {
                    trace.lanes.insert(lane, arg("name"));
                }
                "M" => {}
                "X" => {
                    let start = need_ts()?;
                    let dur = field("dur").and_then(Value::as_f64).unwrap_or(0.0);
                    let (kind, label) = match cat {
                        "poll" => (SpanKind::Poll, arg("outcome")),
                        "callback" => (SpanKind::Callback, name.to_string()),
                        "timer" => (SpanKind::Timer, name.to_string()),
                        "wait" => (SpanKind::Wait, String::new()),
                        _ => continue,
                    };
                    let flags: Vec<&str> = ["readable", "writable", "error"]
                        .into_iter()
                        .filter(|f| args.get(*f).and_then(Value::as_bool) == Some(true))
                        .collect();
                    trace.spans.push(Span {
                        lane,
                        kind,
                        start,
                        end: start + dur.max(0.0),
                        label,
                        detail: flags.join(" "),
                    });
                }
                "s" => {
                    let id = field("id")
                        .and_then(Value::as_u64)
                        .ok_or("a flow without an id")?;
                    flow_starts.insert(id, (lane, need_ts()?));
                }
                "f" => {
                    let id = field("id")
                        .and_then(Value::as_u64)
                        .ok_or("a flow without an id")?;
                    let (from_lane, from) = flow_starts
                        .remove(&id)
                        .ok_or(format!("flow {id} ends before it starts"))?;
                    trace.arrows.push(Arrow {
                        from_lane,
                        from,
                        to_lane: lane,
                        to: need_ts()?,
                        by: arg("by"),
                    });
                }
                "i" => {
                    let label = match cat {
                        "warning" => arg("message"),
                        "spawn" => arg("by"),
                        _ => name.to_string(),
                    };
                    let about = (cat == "spawn")
                        .then(|| args.get("task").and_then(Value::as_u64))
                        .flatten()
                        .map(task_lane);
                    trace.marks.push(Mark {
                        lane,
                        at: need_ts()?,
                        kind: cat.to_string(),
                        label,
                        about,
                    });
                }
                other => return Err(format!("event {i}: unknown phase {other:?}")),
            }
        }
        trace.spans.sort_by(|a, b| a.start.total_cmp(&b.start));
        trace.arrows.sort_by(|a, b| a.to.total_cmp(&b.to));
        trace.marks.sort_by(|a, b| a.at.total_cmp(&b.at));
        Ok(trace)
    }

    /// The trace cut to `[from, to]` microseconds: spans that overlap it
    /// (clipped), arrows that land in it, marks inside it.
    pub fn window(mut self, from: f64, to: f64) -> Trace {
        self.spans.retain(|s| s.end >= from && s.start <= to);
        for s in &mut self.spans {
            s.start = s.start.max(from);
            s.end = s.end.min(to);
        }
        self.arrows.retain(|a| a.to >= from && a.to <= to);
        for a in &mut self.arrows {
            a.from = a.from.max(from);
        }
        self.marks.retain(|m| m.at >= from && m.at <= to);
        self
    }

    /// The trace with a lane per socket: each registration's callbacks
    /// move off the loop's lane onto their own, and wakes by a socket
    /// start there. For a program of bare callbacks (stage 1), whose loop
    /// lane would otherwise be one long row of boxes.
    pub fn with_socket_lanes(mut self) -> Trace {
        const SOCKETS: u64 = 2_000_000_000;
        let token_of =
            |label: &str| -> Option<u64> { label.strip_prefix("callback token=")?.parse().ok() };
        for span in &mut self.spans {
            if let (SpanKind::Callback, Some(token)) = (span.kind, token_of(&span.label)) {
                span.lane = SOCKETS + token;
                self.lanes
                    .entry(span.lane)
                    .or_insert_with(|| format!("socket, token {token}"));
            }
        }
        for arrow in &mut self.arrows {
            let token = arrow
                .by
                .strip_prefix("io token=")
                .and_then(|t| t.parse::<u64>().ok());
            if let Some(lane) = token
                .map(|t| SOCKETS + t)
                .filter(|l| self.lanes.contains_key(l))
            {
                arrow.from_lane = lane;
            }
        }
        self
    }

    /// Several loops' traces as one: each trace's lanes below the last
    /// one's, named with its thread (`loop-0: task 1`), and its times moved
    /// by where its time 0 was on the wall clock.
    pub fn merge(traces: Vec<Trace>) -> Trace {
        /// Lanes a trace may use (task ids, and socket lanes) before the
        /// next trace's start.
        const STRIDE: u64 = 4_000_000_000;
        let first = traces
            .iter()
            .filter_map(|t| t.start_unix_us)
            .fold(f64::INFINITY, f64::min);
        let mut merged = Trace::default();
        for (i, trace) in traces.into_iter().enumerate() {
            let lane = |l: u64| l + i as u64 * STRIDE;
            let shift = trace.start_unix_us.map_or(0.0, |s| s - first);
            let thread = trace.thread.unwrap_or_else(|| format!("trace {}", i + 1));
            for (l, name) in trace.lanes {
                merged.lanes.insert(lane(l), format!("{thread}: {name}"));
            }
            merged.spans.extend(trace.spans.into_iter().map(|s| Span {
                lane: lane(s.lane),
                start: s.start + shift,
                end: s.end + shift,
                ..s
            }));
            merged
                .arrows
                .extend(trace.arrows.into_iter().map(|a| Arrow {
                    from_lane: lane(a.from_lane),
                    to_lane: lane(a.to_lane),
                    from: a.from + shift,
                    to: a.to + shift,
                    ..a
                }));
            merged.marks.extend(trace.marks.into_iter().map(|m| Mark {
                lane: lane(m.lane),
                at: m.at + shift,
                about: m.about.map(lane),
                ..m
            }));
        }
        merged
    }

    /// The name a story uses for a lane: the task's name, or "main", or
    /// "task" for an unnamed task (ids depend on timing; names do not).
    pub fn role(&self, lane: u64) -> String {
        let name = self.lanes.get(&lane).map_or("", String::as_str);
        match name.find('(') {
            Some(open) => name[open + 1..].trim_end_matches(')').to_string(),
            None if name.starts_with("task ") => "task".to_string(),
            None => name.to_string(),
        }
    }

    /// The role of whoever an arrow's `by` names.
    pub fn role_of_actor(&self, by: &str) -> String {
        if let Some(id) = by.strip_prefix("task ").and_then(|n| n.parse::<u64>().ok()) {
            return self.role(task_lane(id));
        }
        if by.starts_with("io ") {
            return "io".into();
        }
        if by.starts_with("timer ") {
            return "a timer".into();
        }
        by.to_string()
    }
}
