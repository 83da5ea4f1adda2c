//! A trace told as text, in logical time: what happened to each task, in
//! order, with no timestamps. Two runs of the same program tell the same
//! story even when the machine, the timings and the interleaving of tasks
//! differ, so the book checks its figures against their stories (a
//! figure's SVG changes with every run; its story must not).
//!
//! To be independent of timing, a story:
//! * names tasks by their name (or "main", or "task"), never by id;
//! * merges a step repeated back to back into one, marked "(again)":
//!   a response may arrive in one read or in three;
//! * counts lanes with the same story instead of ordering them by time.

use std::collections::BTreeMap;

use crate::trace::{LOOP, SpanKind, Trace};

/// One line per distinct lane story, sorted, with how many lanes told it;
/// with `sockets`, a line per registration's callbacks too (for a program
/// of bare callbacks, which has no tasks).
pub fn tell(trace: &Trace, sockets: bool) -> String {
    let mut lines: BTreeMap<String, usize> = BTreeMap::new();
    for &lane in trace.lanes.keys().filter(|&&l| l != LOOP) {
        let steps = task_steps(trace, lane);
        if !steps.is_empty() {
            let line = format!("{}: {}", trace.role(lane), merge(steps).join(", "));
            *lines.entry(line).or_default() += 1;
        }
    }
    if sockets {
        for steps in socket_steps(trace).into_values() {
            let line = format!("socket: {}", merge(steps).join(", "));
            *lines.entry(line).or_default() += 1;
        }
    }
    let mut out = String::new();
    for (line, count) in lines {
        match count {
            1 => out.push_str(&format!("{line}\n")),
            n => out.push_str(&format!("{n} × {line}\n")),
        }
    }
    let warnings = trace.marks.iter().filter(|m| m.kind == "warning").count();
    out.push_str(&format!("warnings: {warnings}\n"));
    out
}

/// A task's steps: who spawned it, then each poll with what woke it and
/// what it returned, and its cancellation if it was cancelled.
fn task_steps(trace: &Trace, lane: u64) -> Vec<String> {
    // (time, order at equal times, step)
    let mut timed: Vec<(f64, u8, Option<String>)> = Vec::new();
    for a in trace.arrows.iter().filter(|a| a.to_lane == lane) {
        timed.push((a.to, 0, Some(trace.role_of_actor(&a.by))));
    }
    for s in trace
        .spans
        .iter()
        .filter(|s| s.lane == lane && s.kind == SpanKind::Poll)
    {
        timed.push((s.start, 1, None));
    }
    timed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));

    let mut steps = Vec::new();
    if let Some(spawn) = trace
        .marks
        .iter()
        .find(|m| m.kind == "spawn" && m.about == Some(lane))
    {
        steps.push(format!("spawned by {}", trace.role_of_actor(&spawn.label)));
    }
    let mut polls = trace
        .spans
        .iter()
        .filter(|s| s.lane == lane && s.kind == SpanKind::Poll);
    let mut woken_by: Option<String> = None;
    let mut first = true;
    for (_, _, waker) in timed {
        if let Some(by) = waker {
            woken_by = Some(by);
            continue;
        }
        let Some(poll) = polls.next() else { break };
        let woken = woken_by.take();
        steps.push(match woken {
            // The first poll's wake is the spawn's own.
            Some(by) if !first => format!("woken by {by} → poll → {}", poll.label),
            _ => format!("poll → {}", poll.label),
        });
        first = false;
    }
    if trace
        .marks
        .iter()
        .any(|m| m.kind == "cancel" && m.lane == lane)
    {
        steps.push("cancelled".into());
    }
    steps
}

/// Each registration's callbacks, by what the event said.
fn socket_steps(trace: &Trace) -> BTreeMap<u64, Vec<String>> {
    let mut sockets: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for s in trace.spans.iter().filter(|s| s.kind == SpanKind::Callback) {
        let token = s
            .label
            .strip_prefix("callback token=")
            .and_then(|t| t.parse().ok());
        if let Some(token) = token {
            sockets
                .entry(token)
                .or_default()
                .push(format!("callback ({})", s.detail));
        }
    }
    sockets
}

/// Merges back-to-back repeats of a step into one, marked "(again)".
fn merge(steps: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for step in steps {
        match out.last_mut() {
            Some(last) if *last == step => last.push_str(" (again)"),
            Some(last) if last.strip_suffix(" (again)") == Some(step.as_str()) => {}
            _ => out.push(step),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_merge_into_one_step() {
        let steps = ["a", "b", "b", "b", "a"].map(String::from).to_vec();
        assert_eq!(merge(steps), ["a", "b (again)", "a"]);
    }
}
