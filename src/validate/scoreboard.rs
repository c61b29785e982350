//! The scoreboard: one row per measured figure of every table `irqsim validate` runs,
//! the simulated value beside it, the error, the tolerance and the verdict, and its
//! three renderings (the aligned table printed on the terminal, `scoreboard.md` and
//! `scoreboard.json`).
//!
//! A row's verdict comes from its tolerance and the list of known misses
//! ([`super::misses`]): within the tolerance it is `pass` (also when it is a declared
//! miss that now passes), outside it a declared miss is `known miss` (with the
//! mechanism behind it), anything else `FAIL`.

use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// How a row's error is expressed and bounded.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// 100 (simulated / measured - 1) \[%\], within +- the tolerance \[%\].
    Relative,
    /// simulated - measured, in the row's unit (percentage points for a loss in %),
    /// within +- the tolerance.
    Absolute,
    /// simulated / measured, within a factor of the tolerance either way (between
    /// 1 / tolerance and tolerance).
    Factor,
}

/// A row's tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// How the error is expressed.
    pub kind: ErrorKind,
    /// The bound: \[%\] for [`ErrorKind::Relative`], the row's unit for
    /// [`ErrorKind::Absolute`], a factor (> 1) for [`ErrorKind::Factor`].
    pub limit: f64,
}

impl Tolerance {
    /// Within `pct` % of the measured value.
    pub const fn relative(pct: f64) -> Tolerance {
        Tolerance {
            kind: ErrorKind::Relative,
            limit: pct,
        }
    }

    /// Within `abs` of the measured value, in the row's unit.
    pub const fn absolute(abs: f64) -> Tolerance {
        Tolerance {
            kind: ErrorKind::Absolute,
            limit: abs,
        }
    }

    /// Within a factor `f` of the measured value either way.
    pub const fn factor(f: f64) -> Tolerance {
        Tolerance {
            kind: ErrorKind::Factor,
            limit: f,
        }
    }

    /// The error of `simulated` against `measured` as this tolerance expresses it.
    pub fn error(&self, measured: f64, simulated: f64) -> f64 {
        match self.kind {
            ErrorKind::Relative => 100.0 * (simulated / measured - 1.0),
            ErrorKind::Absolute => simulated - measured,
            ErrorKind::Factor => simulated / measured,
        }
    }

    /// Whether `error` (as [`Tolerance::error`] gives it) is within the tolerance. A
    /// NaN error (a measured 0 against a relative tolerance) is not.
    pub fn holds(&self, error: f64) -> bool {
        match self.kind {
            ErrorKind::Relative | ErrorKind::Absolute => error.abs() <= self.limit,
            ErrorKind::Factor => error >= 1.0 / self.limit && error <= self.limit,
        }
    }

    /// The tolerance as printed: `±2 %`, `±5 pt`, `×1.5`.
    pub fn shown(&self, unit: &str) -> String {
        match self.kind {
            ErrorKind::Relative => format!("±{} %", self.limit),
            ErrorKind::Absolute => format!("±{} {}", self.limit, points(unit)),
            ErrorKind::Factor => format!("×{}", self.limit),
        }
    }
}

/// The unit of an absolute error: percentage points for a quantity in %.
fn points(unit: &str) -> &str {
    if unit == "%" { "pt" } else { unit }
}

/// A row's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Within the tolerance.
    #[serde(rename = "pass")]
    Pass,
    /// Outside the tolerance, and declared a known miss with its mechanism.
    #[serde(rename = "known miss")]
    KnownMiss,
    /// Outside the tolerance and not declared.
    #[serde(rename = "FAIL")]
    Fail,
}

impl Verdict {
    /// As printed: `pass`, `known miss`, `FAIL`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::KnownMiss => "known miss",
            Verdict::Fail => "FAIL",
        }
    }
}

/// What a table compares, before it is judged: one measured figure and its simulated
/// counterpart.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The case within the table (a load point, a variant, a core count).
    pub case: String,
    /// The quantity compared (`forwarded rate`, `avg latency`).
    pub quantity: String,
    /// Its unit (`frames/s`, `us`, `%`).
    pub unit: String,
    /// The measured value, from the table's file or constant.
    pub measured: f64,
    /// The simulated value.
    pub simulated: f64,
    /// The tolerance the project holds this row to.
    pub tolerance: Tolerance,
}

/// One judged row of the scoreboard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The table (`irqsim validate --only` takes this name).
    pub table: String,
    /// The case within the table.
    pub case: String,
    /// The quantity compared.
    pub quantity: String,
    /// Its unit.
    pub unit: String,
    /// The measured value.
    pub measured: f64,
    /// The simulated value.
    pub simulated: f64,
    /// The error, as the tolerance expresses it ([`Tolerance::error`]).
    pub error: f64,
    /// The tolerance.
    pub tolerance: Tolerance,
    /// The verdict.
    pub verdict: Verdict,
    /// For a known miss, the mechanism behind it (one sentence); for a declared miss
    /// that now passes, the same sentence is kept so the declaration can be retired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<String>,
}

impl Row {
    /// Judge `check` of `table`: `miss` is the declared known miss of this row, if any
    /// (its mechanism).
    pub fn judge(table: &str, check: Check, miss: Option<&str>) -> Row {
        let error = check.tolerance.error(check.measured, check.simulated);
        let verdict = match (check.tolerance.holds(error), miss) {
            (true, _) => Verdict::Pass,
            (false, Some(_)) => Verdict::KnownMiss,
            (false, None) => Verdict::Fail,
        };
        Row {
            table: table.to_string(),
            case: check.case,
            quantity: check.quantity,
            unit: check.unit,
            measured: check.measured,
            simulated: check.simulated,
            error,
            tolerance: check.tolerance,
            verdict,
            mechanism: miss.map(str::to_string),
        }
    }

    /// The error as printed: `+1.67 %`, `-0.31 pt`, `×0.84`.
    pub fn error_shown(&self) -> String {
        match self.tolerance.kind {
            ErrorKind::Relative => format!("{:+.2} %", self.error),
            ErrorKind::Absolute => format!("{:+.2} {}", self.error, points(&self.unit)),
            ErrorKind::Factor => format!("×{:.2}", self.error),
        }
    }
}

/// A number as printed: thousands separated, decimals by size.
pub fn number(x: f64) -> String {
    let decimals = if x.abs() >= 1000.0 {
        0
    } else if x.abs() >= 100.0 {
        1
    } else {
        2
    };
    let s = format!("{:.*}", decimals, x.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s.as_str(), None),
    };
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if x < 0.0 { "-" } else { "" };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// Rows counted by verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Every row.
    pub rows: usize,
    /// Rows within their tolerance.
    pub pass: usize,
    /// Declared misses outside their tolerance.
    pub known_miss: usize,
    /// Undeclared rows outside their tolerance.
    pub fail: usize,
}

/// What `scoreboard.json` holds: its marker (so that irqsim knows the file as its own),
/// the summary and the rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scoreboard {
    /// Always [`FORMAT`]: what wrote the file.
    pub format: String,
    /// Rows counted by verdict.
    pub summary: Summary,
    /// Every row, table by table in the order of [`super::TABLES`], each table's rows in
    /// its own order.
    pub rows: Vec<Row>,
}

/// The `format` field of `scoreboard.json`.
pub const FORMAT: &str = "irqsim validate scoreboard 1";

/// The first line of `scoreboard.md` (and so of the book's page), by which irqsim
/// knows the file as its own.
pub const MD_HEADER: &str =
    "<!-- Written by `irqsim validate --out DIR` (DIR/scoreboard.md); do not edit. -->";

impl Scoreboard {
    /// The scoreboard of `rows`.
    pub fn new(rows: Vec<Row>) -> Scoreboard {
        let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
        Scoreboard {
            format: FORMAT.to_string(),
            summary: Summary {
                rows: rows.len(),
                pass: count(Verdict::Pass),
                known_miss: count(Verdict::KnownMiss),
                fail: count(Verdict::Fail),
            },
            rows,
        }
    }

    /// The summary line: `142 rows: 120 pass, 22 known miss, 0 FAIL`.
    pub fn summary_line(&self) -> String {
        let s = &self.summary;
        format!(
            "{} rows: {} pass, {} known miss, {} FAIL",
            s.rows, s.pass, s.known_miss, s.fail
        )
    }

    /// The row of `table`, `case` and `quantity`, if any.
    pub fn row(&self, table: &str, case: &str, quantity: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.table == table && r.case == case && r.quantity == quantity)
    }

    /// The aligned table printed by `irqsim validate`, with the summary line last; the
    /// mechanisms of the known misses follow the table, numbered.
    pub fn text(&self) -> String {
        let head = [
            "table",
            "case",
            "quantity",
            "unit",
            "measured",
            "simulated",
            "error",
            "tolerance",
            "verdict",
        ];
        let mut notes: Vec<&str> = Vec::new();
        let cells: Vec<[String; 9]> = self
            .rows
            .iter()
            .map(|r| {
                let mut verdict = r.verdict.as_str().to_string();
                if let Some(n) = note_number(r, &mut notes) {
                    verdict = format!("{verdict} [{n}]");
                }
                [
                    r.table.clone(),
                    r.case.clone(),
                    r.quantity.clone(),
                    r.unit.clone(),
                    number(r.measured),
                    number(r.simulated),
                    r.error_shown(),
                    r.tolerance.shown(&r.unit),
                    verdict,
                ]
            })
            .collect();
        let mut w = head.map(|h| h.chars().count());
        for c in &cells {
            for (i, x) in c.iter().enumerate() {
                w[i] = w[i].max(x.chars().count());
            }
        }
        // Text columns left-aligned, numbers right-aligned.
        let right = [false, false, false, false, true, true, true, true, false];
        let line = |c: &[String]| {
            let mut s = String::new();
            for (i, x) in c.iter().enumerate() {
                let pad = w[i] - x.chars().count();
                if i > 0 {
                    s.push_str("  ");
                }
                if right[i] {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(x);
                } else {
                    s.push_str(x);
                    if i + 1 < c.len() {
                        s.push_str(&" ".repeat(pad));
                    }
                }
            }
            s
        };
        let mut out = String::new();
        let _ = writeln!(out, "{}", line(&head.map(str::to_string)));
        for c in &cells {
            let _ = writeln!(out, "{}", line(c));
        }
        for (i, m) in notes.iter().enumerate() {
            let _ = writeln!(out, "[{}] {m}", i + 1);
        }
        let _ = writeln!(out, "{}", self.summary_line());
        out
    }

    /// `scoreboard.md`: the book's page "Validation scoreboard", one section per table
    /// (its title and source from [`super::TABLES`]), the known misses' mechanisms under
    /// their table.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{MD_HEADER}\n");
        let _ = writeln!(out, "# Validation scoreboard\n");
        let _ = writeln!(
            out,
            "Every measured table irqsim ships, run by `irqsim validate` and judged row by \
             row: the measured value, the simulated one, the error (relative in %, absolute \
             in the row's unit -- percentage points for a loss --, or a factor), the \
             tolerance the project holds it to and the verdict. `known miss` is a row \
             outside its tolerance whose mechanism is known and stated (declared in \
             `src/validate/misses.rs`); `FAIL` is one outside its tolerance that is not \
             declared. What each table is and why the model gives what it gives: \
             [Validation](validation.md). This page is the command's own \
             `scoreboard.md`; `cargo test --test it scoreboard` fails when they differ.\n"
        );
        let _ = writeln!(out, "**{}.**\n", self.summary_line());
        for t in super::TABLES {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.table == t.name).collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(out, "## {}: {}\n", t.name, t.title);
            let _ = writeln!(out, "Scenario `{}`; measured: {}.\n", t.scenario, t.source);
            let _ = writeln!(
                out,
                "| case | quantity | measured | simulated | error | tolerance | verdict |"
            );
            let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---|");
            let mut notes: Vec<&str> = Vec::new();
            for r in &rows {
                let mut verdict = match r.verdict {
                    Verdict::Fail => "**FAIL**".to_string(),
                    v => v.as_str().to_string(),
                };
                if let Some(n) = note_number(r, &mut notes) {
                    verdict = format!("{verdict} ({n})");
                }
                let _ = writeln!(
                    out,
                    "| {} | {} [{}] | {} | {} | {} | {} | {} |",
                    r.case,
                    r.quantity,
                    r.unit,
                    number(r.measured),
                    number(r.simulated),
                    r.error_shown(),
                    r.tolerance.shown(&r.unit),
                    verdict
                );
            }
            let _ = writeln!(out);
            for (i, m) in notes.iter().enumerate() {
                let _ = writeln!(out, "({}) {m}\n", i + 1);
            }
        }
        out
    }

    /// `scoreboard.json`, pretty-printed, with a final newline.
    pub fn json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a scoreboard serialises");
        s.push('\n');
        s
    }
}

/// The footnote number of a known miss's mechanism among `notes` (1-based), adding it
/// when it is new; none for a row that is not a known miss.
fn note_number<'r>(r: &'r Row, notes: &mut Vec<&'r str>) -> Option<usize> {
    if r.verdict != Verdict::KnownMiss {
        return None;
    }
    let m = r.mechanism.as_deref()?;
    Some(match notes.iter().position(|x| *x == m) {
        Some(i) => i + 1,
        None => {
            notes.push(m);
            notes.len()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(measured: f64, simulated: f64, tolerance: Tolerance) -> Check {
        Check {
            case: "c".into(),
            quantity: "q".into(),
            unit: "%".into(),
            measured,
            simulated,
            tolerance,
        }
    }

    #[test]
    fn a_row_is_judged_by_its_tolerance_and_its_declaration() {
        let t = Tolerance::relative(2.0);
        // 1.5 % off: pass, declared or not.
        assert_eq!(
            Row::judge("t", check(100.0, 101.5, t), None).verdict,
            Verdict::Pass
        );
        assert_eq!(
            Row::judge("t", check(100.0, 101.5, t), Some("m")).verdict,
            Verdict::Pass
        );
        // 2.5 % off: a known miss when declared, FAIL when not.
        let r = Row::judge("t", check(100.0, 102.5, t), Some("m"));
        assert_eq!(r.verdict, Verdict::KnownMiss);
        assert!((r.error - 2.5).abs() < 1e-9);
        assert_eq!(
            Row::judge("t", check(100.0, 97.5, t), None).verdict,
            Verdict::Fail
        );
        // Absolute points and factors.
        let a = Row::judge("t", check(32.82, 32.07, Tolerance::absolute(5.0)), None);
        assert_eq!(
            (a.verdict, a.error_shown()),
            (Verdict::Pass, "-0.75 pt".into())
        );
        let f = Tolerance::factor(1.5);
        assert!(f.holds(0.7) && f.holds(1.5) && !f.holds(0.66) && !f.holds(1.51));
        // A relative error against a measured 0 is never within.
        assert!(!t.holds(t.error(0.0, 1.0)));
    }

    #[test]
    fn the_summary_counts_each_verdict() {
        let t = Tolerance::relative(2.0);
        let s = Scoreboard::new(vec![
            Row::judge("t", check(100.0, 101.0, t), None),
            Row::judge("t", check(100.0, 110.0, t), Some("m")),
            Row::judge("t", check(100.0, 110.0, t), None),
        ]);
        assert_eq!(s.summary_line(), "3 rows: 1 pass, 1 known miss, 1 FAIL");
        let text = s.text();
        assert!(
            text.contains("known miss [1]") && text.contains("[1] m\n"),
            "{text}"
        );
        assert!(text.ends_with("3 rows: 1 pass, 1 known miss, 1 FAIL\n"));
    }

    #[test]
    fn numbers_are_grouped_and_rounded_by_size() {
        assert_eq!(number(9_285_971.0), "9,285,971");
        assert_eq!(number(1_846.4), "1,846");
        assert_eq!(number(121.54), "121.5");
        assert_eq!(number(0.004), "0.00");
        assert_eq!(number(-3_014.2), "-3,014");
    }
}
