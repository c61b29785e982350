//! A measured table of rates per variant (`measured_rates` in a scenario): the figures
//! a paper or a testbed report gives for each configuration it ran, such as the XDP
//! paper's forwarding rate on 1-6 cores, compared with the simulated ones after a run.
//!
//! A CSV with a header and one row per measured figure (`#` starts a comment line):
//!
//! ```text
//! variant,figure,measured,source
//! single-route-1-core,forwarded_pps,1739672,tohojo/xdp-paper 672dc5a bench04_fwd.org L56
//! raw-drop-1-core,drops.netfilter_pps,5051787,bench01_baseline.org linux_iptables_drop
//! ```
//!
//! - `variant`: a variant of the scenario (`default` for a scenario without variants);
//! - `figure`: what was measured, as a rate over the sending period: `forwarded_pps`
//!   (frames delivered per second, the results' `total.forwarded_pps`),
//!   `drops.<site>_pps` (frames dropped at a site per second: `total.drops.<site>` over
//!   `duration_s`, with the sites of `total.drops`), or `counters.<name>_per_s` (a
//!   counter of the results per second, e.g. `counters.eth1.ch0_poll_per_s`);
//! - `measured`: the measured value, a finite number >= 0, in the figure's unit;
//! - `source` (optional column): where the number comes from.
//!
//! Each (variant, figure) appears once. The rates are over the sending period: a
//! scenario that compares drops or counters (which count the drain too) must have
//! `drain_s` 0, and every variant is compared at its one load point (a scenario with
//! several load points is refused: the table has no load column). Both are checked by
//! the scenario's loader.

use crate::config::error::InputError;
use crate::config::import::dump::escape;
use serde::{Deserialize, Serialize};

/// One measured figure of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasuredRate {
    /// The scenario's variant it was measured for.
    pub variant: String,
    /// What was measured ([`Figure`], as written).
    pub figure: String,
    /// The measured value, in the figure's unit.
    pub measured: f64,
    /// Where the number comes from (empty if not given).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Its line in the table, for the errors found once the variants' hosts are known
    /// ([`check_counters`]); not written (0 when read back from results.json).
    #[serde(skip)]
    pub line: u64,
}

/// What a measured rate is of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Frames delivered per second over the sending period.
    ForwardedPps,
    /// Frames dropped at a site (a name of [`crate::trace::DROP_SITES`]) per second.
    DropsPps(String),
    /// A counter of the results per second.
    CounterPerS(String),
}

impl Figure {
    /// Parse a figure as a table writes it.
    pub fn parse(s: &str) -> Result<Figure, String> {
        if s == "forwarded_pps" {
            return Ok(Figure::ForwardedPps);
        }
        if let Some(site) = s
            .strip_prefix("drops.")
            .and_then(|r| r.strip_suffix("_pps"))
        {
            if crate::trace::DROP_SITES.contains(&site) {
                return Ok(Figure::DropsPps(site.to_string()));
            }
            return Err(format!(
                "`{s}`: no drop site `{site}` (the sites: {})",
                crate::trace::DROP_SITES.join(", ")
            ));
        }
        if let Some(name) = s
            .strip_prefix("counters.")
            .and_then(|r| r.strip_suffix("_per_s"))
            .filter(|n| !n.is_empty())
        {
            return Ok(Figure::CounterPerS(name.to_string()));
        }
        Err(format!(
            "`{s}` is not a figure: `forwarded_pps`, `drops.<site>_pps` or \
             `counters.<name>_per_s`"
        ))
    }
}

/// The columns a table must have, in this order, and the optional last one.
const COLUMNS: [&str; 3] = ["variant", "figure", "measured"];
const SOURCE: &str = "source";

/// Most rows of a measured-rates table: 10,000 (ten figures for each of the 1,000
/// variants a scenario may have; 400,000 rows once took 754 MB).
pub const MAX_ROWS: usize = 10_000;

/// Read a measured-rates table of a scenario whose variants are `variants`.
pub fn read_table(
    file: &str,
    text: &str,
    variants: &[String],
) -> Result<Vec<MeasuredRate>, InputError> {
    let err = |line: u64, msg: String| InputError::Csv {
        file: file.into(),
        line,
        msg,
    };
    // A quote opened and never closed: the CSV reader would take the rest of the file
    // as the field (an unclosed quote in the last field was accepted). Quotes
    // inside a quoted field are doubled, so a table's quotes (comments aside) come in
    // pairs.
    let mut quotes = 0usize;
    let mut opened = 0u64;
    for (i, l) in text.lines().enumerate() {
        if quotes.is_multiple_of(2) && l.trim_start().starts_with('#') {
            continue;
        }
        for _ in l.bytes().filter(|&b| b == b'"') {
            if quotes.is_multiple_of(2) {
                opened = i as u64 + 1;
            }
            quotes += 1;
        }
    }
    if !quotes.is_multiple_of(2) {
        return Err(err(
            opened,
            "a quote `\"` opened on this line is never closed".into(),
        ));
    }
    let mut rdr = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let head = rdr.headers().map_err(|e| err(1, e.to_string()))?;
    // The header's line (after any comment or empty lines), for the errors about it.
    let head_line = 1 + text
        .lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .count() as u64;
    let header: Vec<String> = head.iter().map(String::from).collect();
    let with_source = header.len() == 4 && header[3] == SOURCE;
    if header.len() < 3 || header[..3] != COLUMNS || !(header.len() == 3 || with_source) {
        return Err(err(
            head_line,
            format!(
                "not a measured-rates table: expected the header `{}` or `{},{SOURCE}`, found `{}`",
                COLUMNS.join(","),
                COLUMNS.join(","),
                header.join(",")
            ),
        ));
    }
    let mut rows: Vec<MeasuredRate> = Vec::new();
    let mut seen: std::collections::HashSet<(String, String)> = Default::default();
    for rec in rdr.records() {
        let rec =
            rec.map_err(|e| err(e.position().map(|p| p.line()).unwrap_or(0), e.to_string()))?;
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        if rows.len() == MAX_ROWS {
            return Err(err(
                line,
                format!("more than {MAX_ROWS} rows: at most {MAX_ROWS} measured figures"),
            ));
        }
        // The table's text reaches results.json and the comparison printed on the
        // terminal: a control character (an escape sequence) there is refused.
        if let Some((i, f)) = rec
            .iter()
            .enumerate()
            .find(|(_, f)| f.chars().any(char::is_control))
        {
            let column = header.get(i).map_or("?", String::as_str);
            return Err(err(
                line,
                format!(
                    "column `{column}`: `{}` has a control character; a table holds text to show",
                    escape(f)
                ),
            ));
        }
        let variant = rec[0].to_string();
        if !variants.contains(&variant) {
            return Err(err(
                line,
                format!(
                    "column `variant`: `{variant}` is not a variant of the scenario (its \
                     variants: {})",
                    variants.join(", ")
                ),
            ));
        }
        let figure = rec[1].to_string();
        Figure::parse(&figure).map_err(|m| err(line, format!("column `figure`: {m}")))?;
        let measured = rec[2]
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| {
                err(
                    line,
                    format!(
                        "column `measured`: `{}` is not a finite number >= 0",
                        &rec[2]
                    ),
                )
            })?;
        if !seen.insert((variant.clone(), figure.clone())) {
            return Err(err(
                line,
                format!("`{variant}`, `{figure}` is measured twice"),
            ));
        }
        let source = if with_source {
            rec[3].to_string()
        } else {
            String::new()
        };
        rows.push(MeasuredRate {
            variant,
            figure,
            measured,
            source,
            line,
        });
    }
    if rows.is_empty() {
        return Err(err(head_line, "the table has no rows".into()));
    }
    Ok(rows)
}

/// How many known counter names an error about an unknown one offers.
const NEAREST: usize = 3;

/// Refuse the first row of `rows` (a table read from `file`) whose figure is a counter
/// that no run of its variant can publish: `names(variant)` gives every counter name a
/// run of that variant publishes (its host as assembled, and the counters published
/// only once they count). The error names the line, the column, the counter and the
/// known names nearest to it (a typo ran with exit 0 and printed "no such
/// counter" after the sweep).
pub fn check_counters<'a>(
    file: &str,
    rows: &[MeasuredRate],
    mut names: impl FnMut(&str) -> &'a std::collections::BTreeSet<String>,
) -> Result<(), InputError> {
    for r in rows {
        let Ok(Figure::CounterPerS(name)) = Figure::parse(&r.figure) else {
            continue;
        };
        let known = names(&r.variant);
        if known.contains(&name) {
            continue;
        }
        let mut near: Vec<(f64, &String)> = known
            .iter()
            .map(|k| (strsim::normalized_damerau_levenshtein(&name, k), k))
            .collect();
        near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let near: Vec<String> = near
            .iter()
            .take(NEAREST)
            .map(|(_, k)| format!("`{k}`"))
            .collect();
        return Err(InputError::Csv {
            file: file.into(),
            line: r.line,
            msg: format!(
                "column `figure`: `{}`: no counter `{}` in the model of variant `{}` \
                 (its {} counters; the nearest: {})",
                escape(&r.figure),
                escape(&name),
                r.variant,
                known.len(),
                near.join(", ")
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variants() -> Vec<String> {
        vec!["one-core".into(), "two-cores".into()]
    }

    fn read(text: &str) -> Result<Vec<MeasuredRate>, String> {
        read_table("t.csv", text, &variants()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_table_gives_its_rows_with_their_sources() {
        let rows = read(
            "# the paper's table\nvariant,figure,measured,source\n\
             one-core,forwarded_pps,1739672,B04 L56\n\
             two-cores, drops.netfilter_pps ,10226514,\n\
             two-cores,counters.eth1.ch0_poll_per_s,27183,B01 L852\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].measured, 1_739_672.0);
        assert_eq!(rows[0].source, "B04 L56");
        assert_eq!(rows[1].figure, "drops.netfilter_pps");
        assert_eq!(
            Figure::parse(&rows[2].figure),
            Ok(Figure::CounterPerS("eth1.ch0_poll".into()))
        );
        // Without the source column.
        let rows = read("variant,figure,measured\none-core,forwarded_pps,5\n").unwrap();
        assert_eq!(rows[0].source, "");
    }

    #[test]
    fn a_control_character_in_any_column_is_refused_and_shown_escaped() {
        // Before: a source (or variant) with an escape sequence was taken, and went raw
        // to the comparison on the terminal (a variant's, into the error message).
        for (row, column) in [
            ("one-core,forwarded_pps,5,B04\u{1b}[2J", "source"),
            ("one\u{1b}[31m,forwarded_pps,5,B04", "variant"),
        ] {
            let e = read(&format!("variant,figure,measured,source\n{row}\n")).unwrap_err();
            assert!(e.starts_with("t.csv: line 2: column `"), "{e}");
            assert!(e.contains(&format!("column `{column}`")), "{e}");
            assert!(e.contains("\\u{1b}") && !e.contains('\u{1b}'), "{e}");
        }
    }

    #[test]
    fn an_unclosed_quote_and_too_many_rows_are_refused() {
        let e =
            read("variant,figure,measured,source\none-core,forwarded_pps,5,\"B04\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("never closed"), "{e}");
        assert!(
            read("variant,figure,measured,source\none-core,forwarded_pps,5,\"a \"\"b\"\"\"\n")
                .is_ok()
        );
        let mut t = String::from("variant,figure,measured\n");
        for i in 0..=MAX_ROWS {
            t.push_str(&format!("one-core,counters.c{i}_per_s,1\n"));
        }
        let e = read(&t).unwrap_err();
        assert!(e.contains("more than 10000 rows"), "{e}");
    }

    #[test]
    fn a_bad_row_is_refused_with_its_line_and_why() {
        let head = "variant,figure,measured\n";
        for (row, says) in [
            (
                "three-cores,forwarded_pps,1",
                "`three-cores` is not a variant",
            ),
            ("one-core,drops.nowhere_pps,1", "no drop site `nowhere`"),
            ("one-core,loss_pct,1", "`loss_pct` is not a figure"),
            ("one-core,forwarded_pps,-1", "not a finite number >= 0"),
            ("one-core,forwarded_pps,NaN", "not a finite number >= 0"),
            ("one-core,forwarded_pps,fast", "not a finite number >= 0"),
        ] {
            let e = read(&format!("{head}{row}\n")).unwrap_err();
            assert!(e.contains("t.csv") && e.contains("line 2"), "{e}");
            assert!(e.contains(says), "{row}: {e}");
        }
        let e = read(&format!(
            "{head}one-core,forwarded_pps,1\none-core,forwarded_pps,2\n"
        ))
        .unwrap_err();
        assert!(e.contains("line 3") && e.contains("measured twice"), "{e}");
        for bad in [
            "",
            "variant,figure\n",
            "variant,measured,figure\nx,y,z\n",
            "variant,figure,measured,notes\n",
        ] {
            let e = read(bad).unwrap_err();
            assert!(e.contains("line 1"), "{bad:?}: {e}");
        }
        let e = read(head).unwrap_err();
        assert!(e.contains("no rows"), "{e}");
        // After comment lines the header's own line is named.
        let e = read("# a table\n# of rates\nvariant,figure\n").unwrap_err();
        assert!(
            e.contains("line 3") && e.contains("expected the header"),
            "{e}"
        );
    }
}
