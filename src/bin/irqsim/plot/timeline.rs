//! The latency timeline, `timeline.csv` next to `results.json`, when a run recorded one.
//!
//! Header `variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us`: one row per time
//! bucket per load point. Buckets in which no frame was delivered (`packets` = 0, or no
//! row at all) are blank in the figure. Besides reading the file, this module shapes it
//! for the figure: the load points in order ([`loads`]), the bucket width
//! ([`bucket_ms`]), how often a point's latency is sampled ([`typical_gap_ms`]) and the
//! largest latency per column ([`column_max`]).

use irqsim::config::error::InputError;
use serde::Deserialize;

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

/// The rows of a run's own timeline, as they read back from the file it wrote (the
/// CSV's numbers round-trip exactly).
pub fn rows_of(rows: &[irqsim::model::timeline::TimelineRow]) -> Vec<TimelineRow> {
    rows.iter()
        .map(|r| TimelineRow {
            variant: r.variant.clone(),
            load_pct: r.load_pct,
            t_ms: r.t_ms,
            packets: r.packets as f64,
            avg_latency_us: r.avg_latency_us,
            max_latency_us: r.max_latency_us,
        })
        .collect()
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

/// The load points of `rows` [% of line rate], each once, in increasing order: the rows
/// of the figure, bottom to top.
pub fn loads(rows: &[TimelineRow]) -> Vec<f64> {
    let mut v: Vec<f64> = rows.iter().map(|r| r.load_pct).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// Width of a bucket [ms], inferred from the file: the smallest gap between the starts of
/// two buckets of one point. Only buckets with frames have rows, so a sparse point alone
/// can overstate it; results.json's timeline summary, when there is one, says it exactly.
/// None when no point has two buckets.
pub fn bucket_ms(rows: &[TimelineRow]) -> Option<f64> {
    panels(rows)
        .iter()
        .flat_map(|(_, loads)| loads.iter())
        .flat_map(|(_, b)| b.windows(2).map(|w| w[1].t_ms - w[0].t_ms))
        .filter(|d| *d > 0.0)
        .min_by(f64::total_cmp)
}

/// The median time [ms] between the starts of consecutive buckets with frames of one
/// point (sorted by time, as [`panels`] leaves them): how often its latency is sampled.
/// A point offered fewer frames than there are buckets has empty buckets between its
/// frames that say nothing about latency, and a figure drawing columns narrower than
/// this would stripe such a row. None with fewer than two buckets with frames.
pub fn typical_gap_ms(buckets: &[&TimelineRow]) -> Option<f64> {
    let starts: Vec<f64> = buckets
        .iter()
        .filter(|b| b.packets > 0.0)
        .map(|b| b.t_ms)
        .collect();
    let mut gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    Some(gaps[gaps.len() / 2])
}

/// The largest latency [us] in each of `n` equal columns over `span` = (start, end) [ms]:
/// the buckets (starting at `t_ms`, `width_ms` wide) count in every column they overlap,
/// so a spike one bucket wide shows however many buckets share a column. None where no
/// bucket with frames falls.
pub fn column_max(
    buckets: &[&TimelineRow],
    span: (f64, f64),
    width_ms: f64,
    n: usize,
) -> Vec<Option<f64>> {
    let mut out: Vec<Option<f64>> = vec![None; n];
    let (t0, t1) = span;
    if n == 0 || t1 <= t0 {
        return out;
    }
    let dt = (t1 - t0) / n as f64;
    // Column edges computed in floating point land a hair off whole numbers; a bucket
    // that ends on an edge must not spill into the next column.
    const EPS: f64 = 1e-9;
    for b in buckets.iter().filter(|b| b.packets > 0.0) {
        let first = ((b.t_ms - t0) / dt + EPS).floor().max(0.0) as usize;
        let end = ((b.t_ms + width_ms - t0) / dt - EPS).ceil().max(0.0) as usize;
        for c in out.iter_mut().take(end.min(n)).skip(first) {
            *c = Some(c.map_or(b.max_latency_us, |m| m.max(b.max_latency_us)));
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

    fn row(load_pct: f64, t_ms: f64, packets: f64, max: f64) -> TimelineRow {
        TimelineRow {
            variant: "v".into(),
            load_pct,
            t_ms,
            packets,
            avg_latency_us: max,
            max_latency_us: max,
        }
    }

    #[test]
    fn loads_run_from_the_lowest_up() {
        // In the file the points come in the order they were run, not by load.
        let rows = [
            row(30.0, 0.0, 1.0, 1.0),
            row(10.0, 0.0, 1.0, 1.0),
            row(30.0, 1.0, 1.0, 1.0),
        ];
        assert_eq!(loads(&rows), vec![10.0, 30.0]);
    }

    #[test]
    fn the_bucket_width_is_the_smallest_gap_within_a_point() {
        // 1 ms buckets; the 10 % point delivers a frame every 5 ms only, and the gap
        // between the two points' buckets (0 ms) is not a width.
        let rows = [
            row(10.0, 0.0, 1.0, 1.0),
            row(10.0, 5.0, 1.0, 1.0),
            row(30.0, 0.0, 9.0, 1.0),
            row(30.0, 1.0, 9.0, 1.0),
        ];
        assert_eq!(bucket_ms(&rows), Some(1.0));
        assert_eq!(bucket_ms(&rows[..1]), None);
    }

    #[test]
    fn the_typical_gap_is_the_median_between_buckets_with_frames() {
        // 300 frames/s in 1 ms buckets: a frame every 3.33 ms, so gaps of 3 and 4 ms;
        // the 12 ms hole (no frame delivered) is one gap among many and does not count.
        let t = [0.0, 3.0, 7.0, 10.0, 13.0, 25.0, 28.0, 32.0];
        let mut rows: Vec<TimelineRow> = t.iter().map(|t| row(1.0, *t, 1.0, 50.0)).collect();
        rows.push(row(1.0, 40.0, 0.0, 0.0));
        let b: Vec<&TimelineRow> = rows.iter().collect();
        assert_eq!(typical_gap_ms(&b), Some(3.0));
        assert_eq!(typical_gap_ms(&b[..1]), None);
    }

    #[test]
    fn columns_keep_the_largest_bucket() {
        // 10 buckets of 1 ms in 4 columns of 2.5 ms: the spike in bucket 3 (3-4 ms) is in
        // column 1 only; bucket 2 (2-3 ms) straddles columns 0 and 1; buckets 7 to 9 have
        // no frames, so column 3 (7.5-10 ms) is empty.
        let rows: Vec<TimelineRow> = (0..10)
            .map(|i| {
                let t = i as f64;
                let packets = if i >= 7 { 0.0 } else { 1.0 };
                row(10.0, t, packets, if i == 3 { 500.0 } else { 50.0 + t })
            })
            .collect();
        let b: Vec<&TimelineRow> = rows.iter().collect();
        assert_eq!(
            column_max(&b, (0.0, 10.0), 1.0, 4),
            vec![Some(52.0), Some(500.0), Some(56.0), None]
        );
        // More columns than buckets: a bucket fills every column it covers.
        assert_eq!(
            column_max(&b[..2], (0.0, 2.0), 1.0, 4),
            vec![Some(50.0), Some(50.0), Some(51.0), Some(51.0)]
        );
    }
}
