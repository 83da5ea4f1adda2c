//! A trace drawn as an SVG swimlane timeline: a lane for the event loop
//! and one per task; polls as boxes (coloured by what they returned),
//! callbacks and timers as boxes on the loop's lane, waits in the selector
//! as grey bars, wakes as arrows from where they happened to the poll they
//! caused, and small marks for spawns, registrations and warnings.
//!
//! **The time axis is compressed.** A poll takes microseconds and a wait
//! for the network milliseconds: on a true scale the polls would vanish.
//! So the gap between two consecutive moments is drawn with a width that
//! grows with the logarithm of its length; order is kept, and the real
//! times are written on the axis and on each long wait.

use std::fmt::Write as _;

use crate::trace::{SpanKind, Trace};

const WIDTH: f64 = 760.0;
const GUTTER: f64 = 130.0;
const RIGHT: f64 = 12.0;
const LANE: f64 = 30.0;
const BOX: f64 = 16.0;
const TOP: f64 = 34.0;

/// The compressed axis: sorted moments and their x positions.
struct Axis {
    times: Vec<f64>,
    xs: Vec<f64>,
}

impl Axis {
    fn new(trace: &Trace) -> Axis {
        let mut times: Vec<f64> = Vec::new();
        for s in &trace.spans {
            times.push(s.start);
            times.push(s.end);
        }
        times.extend(trace.arrows.iter().flat_map(|a| [a.from, a.to]));
        times.extend(trace.marks.iter().map(|m| m.at));
        times.sort_by(f64::total_cmp);
        times.dedup();
        if times.is_empty() {
            times.push(0.0);
        }
        // A gap of d µs gets 2 + 14·log10(1 + d) units: 1 µs ≈ 6, 1 ms ≈ 44.
        let mut xs = vec![0.0];
        for pair in times.windows(2) {
            let gap = pair[1] - pair[0];
            let last = xs.last().copied().unwrap_or(0.0);
            xs.push(last + 2.0 + 14.0 * (1.0 + gap).log10());
        }
        let total = xs.last().copied().unwrap_or(0.0).max(1.0);
        let scale = (WIDTH - GUTTER - RIGHT) / total;
        for x in &mut xs {
            *x = GUTTER + *x * scale;
        }
        Axis { times, xs }
    }

    fn x(&self, t: f64) -> f64 {
        let i = self.times.partition_point(|&s| s < t);
        match (self.times.get(i), i.checked_sub(1)) {
            (Some(&exact), _) if exact == t => self.xs[i],
            (Some(&after), Some(b)) => {
                let before = self.times[b];
                let f = (t - before) / (after - before);
                self.xs[b] + f * (self.xs[i] - self.xs[b])
            }
            (Some(_), None) => self.xs[0],
            (None, _) => self.xs.last().copied().unwrap_or(GUTTER),
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A duration in µs, as people read it.
fn human(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

fn poll_colour(outcome: &str) -> &'static str {
    match outcome {
        "Pending" => "#9ecae1",
        "Ready" => "#74c476",
        "Panicked" => "#fb6a4a",
        _ => "#bdbdbd",
    }
}

fn arrow_colour(by: &str) -> &'static str {
    if by.starts_with("io ") {
        "#e6550d"
    } else if by.starts_with("timer ") {
        "#756bb1"
    } else if by.starts_with("task ") {
        "#3182bd"
    } else {
        "#de2d26"
    }
}

/// Draws `trace` with `title` above it.
pub fn draw(trace: &Trace, title: &str) -> String {
    let axis = Axis::new(trace);
    let lanes: Vec<u64> = trace.lanes.keys().copied().collect();
    let row = |lane: u64| lanes.iter().position(|&l| l == lane).unwrap_or(0) as f64;
    let mid = |lane: u64| TOP + row(lane) * LANE + LANE / 2.0;
    let plot_bottom = TOP + lanes.len() as f64 * LANE;
    let height = plot_bottom + 64.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <defs><marker id=\"head\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"6\" \
         markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"context-stroke\"/>\
         </marker></defs>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}</text>\n",
        escape(title)
    );
    // Lanes.
    for (i, name) in trace.lanes.values().enumerate() {
        let y = TOP + i as f64 * LANE;
        let fill = if i % 2 == 0 { "#f7f7f7" } else { "#ffffff" };
        let _ = writeln!(
            svg,
            "<rect x=\"0\" y=\"{y}\" width=\"{WIDTH}\" height=\"{LANE}\" fill=\"{fill}\"/>\
             <text x=\"8\" y=\"{:.1}\">{}</text>",
            y + LANE / 2.0 + 4.0,
            escape(name)
        );
    }
    // Spans.
    for s in &trace.spans {
        let (x0, x1) = (axis.x(s.start), axis.x(s.end));
        let y = mid(s.lane);
        match s.kind {
            SpanKind::Wait => {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"4\" fill=\"#d9d9d9\"/>",
                    y - 2.0,
                    (x1 - x0).max(1.0)
                );
                if x1 - x0 > 44.0 && s.end - s.start >= 100.0 {
                    let _ = writeln!(
                        svg,
                        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"9\" fill=\"#737373\" \
                         text-anchor=\"middle\">wait {}</text>",
                        (x0 + x1) / 2.0,
                        y - 5.0,
                        human(s.end - s.start)
                    );
                }
            }
            _ => {
                let fill = match s.kind {
                    SpanKind::Poll => poll_colour(&s.label),
                    SpanKind::Timer => "#bcbddc",
                    _ => "#fdae6b",
                };
                let _ = writeln!(
                    svg,
                    "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{BOX}\" \
                     fill=\"{fill}\" stroke=\"#525252\" stroke-width=\"0.5\"><title>{} {}</title></rect>",
                    y - BOX / 2.0,
                    (x1 - x0).max(3.0),
                    escape(&s.label),
                    human(s.end - s.start)
                );
            }
        }
    }
    // Marks.
    for m in &trace.marks {
        let (x, y) = (axis.x(m.at), mid(m.lane));
        let shape = match m.kind.as_str() {
            "warning" => format!(
                "<path d=\"M{x:.1},{:.1} l5,9 h-10 z\" fill=\"#de2d26\"/>",
                y - BOX / 2.0 - 9.0
            ),
            "spawn" => format!(
                "<circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#31a354\"/>",
                y + BOX / 2.0 + 3.0
            ),
            "register" | "deregister" => format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"2\" height=\"5\" fill=\"#636363\"/>",
                x - 1.0,
                y + BOX / 2.0 + 1.0
            ),
            "cancel" => format!(
                "<path d=\"M{:.1},{:.1} l6,6 m0,-6 l-6,6\" stroke=\"#de2d26\" stroke-width=\"1.5\"/>",
                x - 3.0,
                y - 3.0
            ),
            _ => continue,
        };
        let _ = writeln!(svg, "<g><title>{}</title>{shape}</g>", escape(&m.label));
    }
    // Wake arrows, last, so they are on top.
    for a in &trace.arrows {
        let (x0, y0) = (axis.x(a.from), mid(a.from_lane));
        let x1 = axis.x(a.to);
        let down = mid(a.to_lane) >= y0;
        let y1 = mid(a.to_lane) + if down { -BOX / 2.0 } else { BOX / 2.0 };
        let _ = writeln!(
            svg,
            "<path d=\"M{x0:.1},{y0:.1} L{x1:.1},{y1:.1}\" stroke=\"{}\" stroke-width=\"1.2\" \
             fill=\"none\" marker-end=\"url(#head)\"><title>woken by {}</title></path>",
            arrow_colour(&a.by),
            escape(&a.by)
        );
    }
    // The axis: real times at moments at least 70 px apart.
    let _ = writeln!(
        svg,
        "<line x1=\"{GUTTER}\" y1=\"{plot_bottom}\" x2=\"{:.1}\" y2=\"{plot_bottom}\" stroke=\"#525252\"/>",
        WIDTH - RIGHT
    );
    let mut last_label = f64::NEG_INFINITY;
    let mut last_text = String::new();
    let t0 = axis.times.first().copied().unwrap_or(0.0);
    for (&t, &x) in axis.times.iter().zip(&axis.xs) {
        let text = human(t - t0);
        if x - last_label >= 70.0 && x <= WIDTH - RIGHT - 20.0 && text != last_text {
            let _ = writeln!(
                svg,
                "<line x1=\"{x:.1}\" y1=\"{plot_bottom}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#525252\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"9\" text-anchor=\"middle\">{}</text>",
                plot_bottom + 4.0,
                plot_bottom + 14.0,
                text
            );
            last_label = x;
            last_text = text;
        }
    }
    let legend_y = plot_bottom + 34.0;
    let _ = write!(
        svg,
        "<text x=\"{GUTTER}\" y=\"{legend_y}\" font-size=\"10\" fill=\"#525252\">\
         time is compressed: long gaps are drawn short, real times on the axis</text>\n\
         <g font-size=\"10\" transform=\"translate({GUTTER},{:.1})\">\
         <rect width=\"10\" height=\"10\" fill=\"#9ecae1\"/><text x=\"14\" y=\"9\">poll → Pending</text>\
         <rect x=\"100\" width=\"10\" height=\"10\" fill=\"#74c476\"/><text x=\"114\" y=\"9\">poll → Ready</text>\
         <rect x=\"190\" width=\"10\" height=\"10\" fill=\"#fdae6b\"/><text x=\"204\" y=\"9\">callback</text>\
         <rect x=\"260\" width=\"10\" height=\"10\" fill=\"#bcbddc\"/><text x=\"274\" y=\"9\">timer</text>\
         <rect x=\"318\" y=\"3\" width=\"10\" height=\"4\" fill=\"#d9d9d9\"/><text x=\"332\" y=\"9\">select</text>\
         <path d=\"M380,5 h16\" stroke=\"#3182bd\" marker-end=\"url(#head)\"/><text x=\"400\" y=\"9\">wake</text>\
         <circle cx=\"446\" cy=\"5\" r=\"3\" fill=\"#31a354\"/><text x=\"452\" y=\"9\">spawn</text>\
         </g>\n</svg>\n",
        legend_y + 8.0
    );
    svg
}
