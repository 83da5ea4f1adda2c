//! The results table, as Markdown: printed by the benchmark and written to
//! book/src/generated/performance-table.md, which the book's Performance
//! appendix includes. Nobody types these numbers in.

use std::fmt::Write;

/// What a row's numbers measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Secs,
    Nanos,
    Bytes,
    /// Millions of bytes.
    Megabytes,
    /// A plain number (commands per URL).
    Count,
}

impl Unit {
    fn format(self, value: f64) -> String {
        match self {
            Unit::Secs => format!("{value:.3} s"),
            Unit::Nanos if value < 100.0 => format!("{value:.1} ns"),
            Unit::Nanos => format!("{value:.0} ns"),
            Unit::Bytes => format!("{value:.0} B"),
            Unit::Megabytes => format!("{:.1} MB", value / 1e6),
            Unit::Count => format!("{value:.2}"),
        }
    }
}

/// What a row must show to meet its target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// ours / theirs at most this.
    RatioAtMost(f64),
    /// ours below this, in the row's unit.
    Below(f64),
    /// ours at most this, in the row's unit, and no more than theirs.
    AtMostAndNoWorse(f64),
}

/// One line of the table. `None` marks a side that was not measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub what: String,
    pub unit: Unit,
    pub ours: Option<f64>,
    pub theirs: Option<f64>,
    pub target: Option<Target>,
}

impl Row {
    pub fn ratio(&self) -> Option<f64> {
        match (self.ours, self.theirs) {
            (Some(ours), Some(theirs)) if theirs > 0.0 => Some(ours / theirs),
            _ => None,
        }
    }

    /// Whether the target is met; `None` without a target or without the
    /// numbers to judge it.
    pub fn met(&self) -> Option<bool> {
        let ours = self.ours?;
        match self.target? {
            Target::RatioAtMost(limit) => Some(self.ratio()? <= limit),
            Target::Below(limit) => Some(ours < limit),
            Target::AtMostAndNoWorse(limit) => Some(ours <= limit && self.ratio()? <= 1.0),
        }
    }

    fn target_text(&self) -> String {
        match self.target {
            None => "".into(),
            Some(Target::RatioAtMost(limit)) => format!("≤ {limit:.2}×"),
            Some(Target::Below(limit)) => format!("< {}", self.unit.format(limit)),
            Some(Target::AtMostAndNoWorse(limit)) => {
                format!("≤ {} and ≤ 1.00×", self.unit.format(limit))
            }
        }
    }
}

/// The table, one row per line, with a header naming the two sides.
pub fn render(ours: &str, theirs: &str, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| benchmark | {ours} | {theirs} | ours ÷ theirs | target | met |"
    );
    out.push_str("|---|--:|--:|--:|---|---|\n");
    for row in rows {
        let cell = |v: Option<f64>| v.map_or("not run".into(), |v| row.unit.format(v));
        let ratio = row.ratio().map_or("".into(), |r| format!("{r:.2}×"));
        let met = match (row.target, row.met()) {
            (None, _) => "",
            (Some(_), None) => "not measured",
            (Some(_), Some(true)) => "yes",
            (Some(_), Some(false)) => "**no**",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {ratio} | {} | {met} |",
            row.what,
            cell(row.ours),
            cell(row.theirs),
            row.target_text()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ours: Option<f64>, theirs: Option<f64>, target: Option<Target>) -> Row {
        Row {
            what: "w".into(),
            unit: Unit::Secs,
            ours,
            theirs,
            target,
        }
    }

    #[test]
    fn targets_are_judged() {
        let r = |o, t, target| row(Some(o), Some(t), Some(target)).met();
        assert_eq!(r(0.3, 1.0, Target::RatioAtMost(0.3)), Some(true));
        assert_eq!(r(0.31, 1.0, Target::RatioAtMost(0.3)), Some(false));
        assert_eq!(r(63.0, 1.0, Target::Below(64.0)), Some(true));
        assert_eq!(r(64.0, 1.0, Target::Below(64.0)), Some(false));
        assert_eq!(r(0.43, 0.5, Target::AtMostAndNoWorse(0.44)), Some(true));
        assert_eq!(r(0.43, 0.42, Target::AtMostAndNoWorse(0.44)), Some(false));
        assert_eq!(r(0.45, 0.5, Target::AtMostAndNoWorse(0.44)), Some(false));
        assert_eq!(row(None, Some(1.0), Some(Target::Below(1.0))).met(), None);
        assert_eq!(row(Some(1.0), None, None).met(), None);
    }

    #[test]
    fn renders_markdown() {
        let rows = [
            Row {
                what: "(a) wall".into(),
                unit: Unit::Secs,
                ours: Some(1.0),
                theirs: Some(4.0),
                target: Some(Target::RatioAtMost(0.3)),
            },
            Row {
                what: "(c) idle".into(),
                unit: Unit::Bytes,
                ours: Some(200.4),
                theirs: None,
                target: None,
            },
            Row {
                what: "(c) RSS".into(),
                unit: Unit::Megabytes,
                ours: Some(70e6),
                theirs: Some(35e6),
                target: Some(Target::Below(64e6)),
            },
            Row {
                what: "(c) spawn".into(),
                unit: Unit::Nanos,
                ours: Some(85.25),
                theirs: Some(120.4),
                target: None,
            },
        ];
        assert_eq!(
            render("A", "B", &rows),
            "| benchmark | A | B | ours ÷ theirs | target | met |\n\
             |---|--:|--:|--:|---|---|\n\
             | (a) wall | 1.000 s | 4.000 s | 0.25× | ≤ 0.30× | yes |\n\
             | (c) idle | 200 B | not run |  |  |  |\n\
             | (c) RSS | 70.0 MB | 35.0 MB | 2.00× | < 64.0 MB | **no** |\n\
             | (c) spawn | 85.2 ns | 120 ns | 0.71× |  |  |\n"
        );
    }
}
