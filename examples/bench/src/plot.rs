//! Line charts as SVG, for the scale benchmark's figure: each chart has
//! pages on a log-scale x axis and one measure on a linear y axis from
//! zero, one line per crawler. Written by hand (the figure needs little),
//! so that the harness draws it with nothing installed.

use std::fmt::Write;

/// One crawler's points: (pages, value).
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One chart.
#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    /// Formats a value of the y axis (with its unit).
    pub format: fn(f64) -> String,
    pub series: Vec<Series>,
    /// A horizontal dashed line, labelled: a target.
    pub limit: Option<(f64, String)>,
}

const WIDTH: f64 = 380.0;
const HEIGHT: f64 = 270.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 15.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 45.0;
const COLORS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

/// The charts side by side, under `title`.
pub fn svg(title: &str, charts: &[Chart]) -> String {
    let width = WIDTH * charts.len() as f64;
    let height = HEIGHT + 40.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/><text x="10" y="18" font-size="14" font-weight="bold">{}</text>"#,
        escape(title)
    );
    for (i, chart) in charts.iter().enumerate() {
        draw(&mut out, chart, WIDTH * i as f64, 25.0);
    }
    out.push_str("</svg>\n");
    out
}

fn draw(out: &mut String, chart: &Chart, x0: f64, y0: f64) {
    let points = chart.series.iter().flat_map(|s| s.points.iter());
    let (mut x_min, mut x_max, mut y_max) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in points {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_max = y_max.max(y);
    }
    if let Some((limit, _)) = &chart.limit {
        y_max = y_max.max(*limit);
    }
    if x_min > x_max {
        return;
    }
    // Whole decades on x; y from zero to a little above the highest.
    let (lo, hi) = (
        x_min.log10().floor(),
        x_max.log10().ceil().max(x_min.log10().floor() + 1.0),
    );
    let y_top = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| x0 + LEFT + (x.log10() - lo) / (hi - lo) * plot_w;
    let py = |y: f64| y0 + TOP + plot_h - y / y_top * plot_h;
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-weight="bold">{}</text>"#,
        x0 + LEFT,
        y0 + TOP - 10.0,
        escape(&chart.title)
    );
    // Axes, with a tick per decade and five on y.
    let (left, bottom) = (x0 + LEFT, y0 + TOP + plot_h);
    let _ = writeln!(
        out,
        r##"<path d="M{left} {} V{bottom} H{}" stroke="#333" fill="none"/>"##,
        y0 + TOP,
        left + plot_w
    );
    let mut decade = lo;
    while decade <= hi {
        let x = px(10f64.powf(decade));
        let _ = writeln!(
            out,
            r##"<line x1="{x}" y1="{bottom}" x2="{x}" y2="{}" stroke="#333"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
            bottom + 4.0,
            bottom + 16.0,
            pages_label(10f64.powf(decade))
        );
        decade += 1.0;
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">pages (log scale)</text>"#,
        left + plot_w / 2.0,
        bottom + 32.0
    );
    for k in 0..=5 {
        let value = y_top * k as f64 / 5.0;
        let y = py(value);
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{y}" x2="{left}" y2="{y}" stroke="#333"/><line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            left - 4.0,
            left + plot_w,
            left - 6.0,
            y + 4.0,
            escape(&(chart.format)(value))
        );
    }
    if let Some((limit, label)) = &chart.limit {
        let y = py(*limit);
        let _ = writeln!(
            out,
            r##"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#888" stroke-dasharray="4 3"/><text x="{}" y="{}" text-anchor="end" fill="#555">{}</text>"##,
            left + plot_w,
            left + plot_w - 2.0,
            y - 4.0,
            escape(label)
        );
    }
    for (i, series) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = series
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for &(x, y) in &series.points {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                px(x),
                py(y)
            );
        }
        let legend_y = y0 + TOP + 6.0 + 14.0 * i as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{}" y1="{legend_y}" x2="{}" y2="{legend_y}" stroke="{color}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            left + 10.0,
            left + 26.0,
            left + 30.0,
            legend_y + 4.0,
            escape(&series.name)
        );
    }
}

/// 1000 -> "1k", 1000000 -> "1M".
fn pages_label(n: f64) -> String {
    match n {
        n if n >= 1e6 => format!("{}M", n / 1e6),
        n if n >= 1e3 => format!("{}k", n / 1e3),
        n => format!("{n}"),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_has_its_lines_points_and_labels() {
        let chart = Chart {
            title: "RSS".into(),
            format: |v| format!("{:.0} MB", v / 1e6),
            series: vec![Series {
                name: "stage 3 <ours>".into(),
                points: vec![(1e4, 20e6), (1e5, 60e6), (1e6, 190e6)],
            }],
            limit: Some((256e6, "target 256 MB".into())),
        };
        let svg = svg("Scale", &[chart]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("<polyline").count(), 1);
        for label in ["10k", "100k", "1M", "stage 3 &lt;ours&gt;", "target 256 MB"] {
            assert!(svg.contains(label), "{label}");
        }
        assert_eq!(pages_label(1e4), "10k");
    }
}
