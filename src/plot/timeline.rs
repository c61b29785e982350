//! The latency timeline, `timeline.csv` next to `results.json`, when a run recorded one.
//!
//! Header `variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us`: one row per time
//! bucket per load point. Buckets in which no frame was delivered (`packets` = 0) leave a
//! gap in the line.

use irqsim::error::InputError;
use serde::Deserialize;
use std::path::Path;

/// File name of the timeline, beside `results.json`.
pub const FILE: &str = "timeline.csv";

/// One time bucket of one load point.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct TimelineRow {
    /// Variant name.
    pub variant: String,
    /// Offered load of the point [% of line rate].
    pub load_pct: f64,
    /// Time of the bucket [ms].
    pub t_ms: f64,
    /// Frames delivered in the bucket.
    pub packets: f64,
    /// Their average latency [us].
    pub avg_latency_us: f64,
    /// Their largest latency [us].
    pub max_latency_us: f64,
}

/// Read a timeline CSV; errors name the file and line.
pub fn read(path: &Path) -> Result<Vec<TimelineRow>, InputError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| InputError::Read {
        file: file.clone(),
        source,
    })?;
    parse(&file, &text)
}

/// Parse timeline CSV text.
pub fn parse(file: &str, text: &str) -> Result<Vec<TimelineRow>, InputError> {
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for rec in rdr.deserialize::<TimelineRow>() {
        let row = rec.map_err(|e| InputError::Csv {
            file: file.into(),
            line: e.position().map(|p| p.line()).unwrap_or(0),
            msg: e.to_string(),
        })?;
        rows.push(row);
    }
    Ok(rows)
}

/// The buckets of one load point: (load %, rows by time).
pub type PointRows<'a> = (f64, Vec<&'a TimelineRow>);

/// Rows grouped by variant, then by load point, each in order of first appearance, the
/// buckets of a point sorted by time.
pub fn panels(rows: &[TimelineRow]) -> Vec<(String, Vec<PointRows<'_>>)> {
    let mut out: Vec<(String, Vec<PointRows<'_>>)> = Vec::new();
    for r in rows {
        let vi = match out.iter().position(|(v, _)| v == &r.variant) {
            Some(i) => i,
            None => {
                out.push((r.variant.clone(), Vec::new()));
                out.len() - 1
            }
        };
        let loads = &mut out[vi].1;
        match loads.iter_mut().find(|(l, _)| *l == r.load_pct) {
            Some((_, v)) => v.push(r),
            None => loads.push((r.load_pct, vec![r])),
        }
    }
    for (_, loads) in &mut out {
        for (_, v) in loads.iter_mut() {
            v.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_groups() {
        let text = "variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us\n\
                    default,10,1,15,29.1,29.1\n\
                    default,10,0,14,29.1,29.1\n\
                    default,30,0,9,2954,2960\n";
        let rows = parse("t.csv", text).unwrap();
        let p = panels(&rows);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].1.len(), 2);
        assert_eq!(p[0].1[0].1[0].t_ms, 0.0);
    }

    #[test]
    fn bad_rows_name_file_and_line() {
        let text = "variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us\n\
                    default,10,x,15,29.1,29.1\n";
        let e = parse("t.csv", text).unwrap_err().to_string();
        assert!(e.starts_with("t.csv: line 2:"), "{e}");
    }
}
