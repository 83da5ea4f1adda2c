//! A trace told as text, in logical time: for each kind of task, who
//! spawned it, what woke it, what its polls returned and whether it was
//! cancelled. Two runs of the same program tell the same story even when
//! the machine, the timings and the interleaving of tasks differ, so the
//! book checks its figures against their stories (a figure's SVG changes
//! with every run; its story must not).
//!
//! To be independent of timing, a story:
//! * names tasks by their role: their name with numbers cut out
//!   (`worker-2` is a `worker-N`), or "main", or "task"; never by id;
//! * tells sets, not sequences: which worker took which URL, and whether a
//!   response came in one read or three, change from run to run; that
//!   workers are woken by io and by other workers does not.

use std::collections::{BTreeMap, BTreeSet};

use crate::trace::{LOOP, SpanKind, Trace};

/// What the tasks of one role did, together.
#[derive(Default)]
struct Role {
    lanes: usize,
    spawned_by: BTreeSet<String>,
    woken_by: BTreeSet<String>,
    returned: BTreeSet<String>,
    cancelled: usize,
}

/// A line per role (and, with `sockets`, one for the registrations'
/// callbacks, for a program of bare callbacks), then the warnings.
pub fn tell(trace: &Trace, sockets: bool) -> String {
    let mut roles: BTreeMap<String, Role> = BTreeMap::new();
    for &lane in trace.lanes.keys().filter(|&&l| l != LOOP) {
        let role = roles.entry(numbers_cut(&trace.role(lane))).or_default();
        role.lanes += 1;
        if let Some(spawn) = trace
            .marks
            .iter()
            .find(|m| m.kind == "spawn" && m.about == Some(lane))
        {
            role.spawned_by
                .insert(numbers_cut(&trace.role_of_actor(&spawn.label)));
        }
        // The wake before a task's first poll is its spawn's; the others
        // say who woke it.
        let first_poll = trace
            .spans
            .iter()
            .find(|s| s.lane == lane && s.kind == SpanKind::Poll)
            .map(|s| s.start);
        for a in trace
            .arrows
            .iter()
            .filter(|a| a.to_lane == lane && Some(a.to) != first_poll)
        {
            role.woken_by
                .insert(numbers_cut(&trace.role_of_actor(&a.by)));
        }
        for s in trace
            .spans
            .iter()
            .filter(|s| s.lane == lane && s.kind == SpanKind::Poll)
        {
            role.returned.insert(s.label.clone());
        }
        if trace
            .marks
            .iter()
            .any(|m| m.kind == "cancel" && m.lane == lane)
        {
            role.cancelled += 1;
        }
    }
    let mut out = String::new();
    for (name, role) in &roles {
        let list = |set: &BTreeSet<String>| {
            if set.is_empty() {
                "nobody".to_string()
            } else {
                set.iter().cloned().collect::<Vec<_>>().join(", ")
            }
        };
        let cancelled = match role.cancelled {
            0 => "",
            n if n == role.lanes => "; all cancelled",
            _ => "; some cancelled",
        };
        out.push_str(&format!(
            "{name} ×{}: spawned by {}; woken by {}; polls returned {}{cancelled}\n",
            role.lanes,
            list(&role.spawned_by),
            list(&role.woken_by),
            list(&role.returned),
        ));
    }
    if sockets {
        let socket_steps = socket_steps(trace);
        let kinds: BTreeSet<String> = socket_steps.values().flatten().cloned().collect();
        out.push_str(&format!(
            "socket ×{}: callbacks on {}\n",
            socket_steps.len(),
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let warnings = trace.marks.iter().filter(|m| m.kind == "warning").count();
    out.push_str(&format!("warnings: {warnings}\n"));
    out
}

/// `worker-12` → `worker-N`: the role, whatever the number.
fn numbers_cut(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_number = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
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
            sockets.entry(token).or_default().push(s.detail.clone());
        }
    }
    sockets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_have_no_numbers() {
        assert_eq!(numbers_cut("worker-12"), "worker-N");
        assert_eq!(numbers_cut("delay 127.0.0.1:80"), "delay N.N.N.N:N");
        assert_eq!(numbers_cut("main"), "main");
    }
}
