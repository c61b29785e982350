//! SmartBits-style result tables: read measured ones, write simulated ones.
//!
//! Layout (exactly that of the reference report's CSV): a header, then per load point
//! one `Total` row and one row per flow (`in-port`-`out-port`):
//!
//! ```text
//! Name,Load (%),Sent,Received,Lost,Out Of Sequence,Min Latency (uSecs),Avg Latency (uSecs),Max Latency (uSecs),Standard Deviation (uSecs)
//! Total,10.0000,148809,148803,6,3,29.1,65.4,121.5,62.1
//! 100-101,10.0000,148809,148803,6,3,29.1,65.4,121.5,62.1
//! ```
//!
//! `Lost = Sent - Received`; latencies are in microseconds over the received frames,
//! all zero when none was received.

use crate::config::error::InputError;
use serde::{Deserialize, Serialize};
use std::io::Write;

/// Longest name of a flow row \[bytes\]: 256, a flow's name (at most
/// [`crate::config::names::MAX_NAME_BYTES`]) and the 5-tuple a replayed capture's flow
/// adds to it in irqsim's own tables (`/<src>:<port>-<dst>:<port>/<udp|tcp>`, at most 48).
pub const ROW_NAME_BYTES: usize = 256;

/// The header line of a SmartBits table.
pub const HEADER: [&str; 10] = [
    "Name",
    "Load (%)",
    "Sent",
    "Received",
    "Lost",
    "Out Of Sequence",
    "Min Latency (uSecs)",
    "Avg Latency (uSecs)",
    "Max Latency (uSecs)",
    "Standard Deviation (uSecs)",
];

/// One row of a SmartBits table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// `Total` or the flow name.
    pub name: String,
    /// Offered load [% of line rate].
    pub load_pct: f64,
    /// Frames sent.
    pub sent: f64,
    /// Frames received.
    pub received: f64,
    /// Frames lost.
    pub lost: f64,
    /// Frames out of sequence.
    pub out_of_sequence: f64,
    /// Latency \[us\].
    pub min_us: f64,
    /// Latency \[us\].
    pub avg_us: f64,
    /// Latency \[us\].
    pub max_us: f64,
    /// Latency \[us\].
    pub stddev_us: f64,
}

impl Row {
    /// Loss in percent of sent.
    pub fn loss_pct(&self) -> f64 {
        if self.sent > 0.0 {
            100.0 * self.lost / self.sent
        } else {
            0.0
        }
    }
}

/// One load point of a measured table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasuredPoint {
    /// Offered load [% of line rate].
    pub load_pct: f64,
    /// The `Total` row.
    pub total: Row,
    /// Per-flow rows.
    pub flows: Vec<Row>,
}

/// Parse a SmartBits CSV. Trailing empty columns (as in the original e-mail attachment)
/// are ignored.
pub fn read_table(file: &str, text: &str) -> Result<Vec<MeasuredPoint>, InputError> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let err = |line: u64, msg: String| InputError::Csv {
        file: file.into(),
        line,
        msg,
    };
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| err(1, e.to_string()))?
        .iter()
        .filter(|h| !h.is_empty())
        .map(String::from)
        .collect();
    if header != HEADER {
        return Err(err(
            1,
            format!(
                "not a SmartBits table: expected header {:?}",
                HEADER.join(",")
            ),
        ));
    }
    let mut points: Vec<MeasuredPoint> = Vec::new();
    for rec in rdr.records() {
        let rec =
            rec.map_err(|e| err(e.position().map(|p| p.line()).unwrap_or(0), e.to_string()))?;
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        let f: Vec<&str> = rec.iter().collect();
        if f.len() < 10 {
            return Err(err(line, format!("expected 10 columns, found {}", f.len())));
        }
        let num = |i: usize| -> Result<f64, InputError> {
            f[i].trim().parse::<f64>().map_err(|_| {
                err(
                    line,
                    format!("column `{}`: `{}` is not a number", HEADER[i], f[i]),
                )
            })
        };
        // A flow row's name is shown beside the simulated flows' (and may be one of
        // irqsim's own, a replayed capture's `<flow>/<5-tuple>`): no control character,
        // at most ROW_NAME_BYTES.
        if f[0].chars().any(char::is_control) || f[0].len() > ROW_NAME_BYTES {
            let head: String = f[0].chars().take(40).collect();
            return Err(err(
                line,
                format!(
                    "column `{}`: `{}{}` ({} bytes): a flow's name, at most {ROW_NAME_BYTES} \
                     bytes without a control character",
                    HEADER[0],
                    crate::config::import::dump::escape(&head),
                    if head.len() < f[0].len() { "..." } else { "" },
                    f[0].len()
                ),
            ));
        }
        let row = Row {
            name: f[0].to_string(),
            load_pct: num(1)?,
            sent: num(2)?,
            received: num(3)?,
            lost: num(4)?,
            out_of_sequence: num(5)?,
            min_us: num(6)?,
            avg_us: num(7)?,
            max_us: num(8)?,
            stddev_us: num(9)?,
        };
        if row.name == "Total" {
            points.push(MeasuredPoint {
                load_pct: row.load_pct,
                total: row,
                flows: vec![],
            });
        } else {
            match points.last_mut() {
                Some(p) if (p.load_pct - row.load_pct).abs() < 1e-6 => p.flows.push(row),
                _ => {
                    return Err(err(
                        line,
                        format!(
                            "flow row `{}` does not follow a `Total` row of the same load",
                            row.name
                        ),
                    ));
                }
            }
        }
    }
    if points.is_empty() {
        return Err(err(1, "the table has no load points".into()));
    }
    Ok(points)
}

fn write_row<W: Write>(w: &mut csv::Writer<W>, r: &Row) -> csv::Result<()> {
    w.write_record([
        r.name.clone(),
        format!("{:.4}", r.load_pct),
        format!("{:.0}", r.sent),
        format!("{:.0}", r.received),
        format!("{:.0}", r.lost),
        format!("{:.0}", r.out_of_sequence),
        format!("{:.1}", r.min_us),
        format!("{:.1}", r.avg_us),
        format!("{:.1}", r.max_us),
        format!("{:.1}", r.stddev_us),
    ])
}

/// Write rows (per load point the `Total` row, then one per flow) as a SmartBits table.
pub fn write_table<W: Write>(out: W, rows: &[Row]) -> csv::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out);
    w.write_record(HEADER)?;
    for r in rows {
        write_row(&mut w, r)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_reference_layout() {
        let t = "Name,Load (%),Sent,Received,Lost,Out Of Sequence,Min Latency (uSecs),Avg Latency (uSecs),Max Latency (uSecs),Standard Deviation (uSecs),,\n\
                 Total,28.0000,416666,279924,136742,87559,34.5,1845.9,2244.1,108.9,,\n\
                 100-101,28.0000,416666,279924,136742,87559,34.5,1845.9,2244.1,108.9,,\n";
        let p = read_table("t.csv", t).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].flows[0].name, "100-101");
        assert!((p[0].total.loss_pct() - 32.818).abs() < 0.001);
    }

    #[test]
    fn rejects_other_tables_with_the_line() {
        let e = read_table("t.csv", "a,b\n1,2\n").unwrap_err().to_string();
        assert!(e.contains("t.csv: line 1"), "{e}");
        let bad = format!("{}\nTotal,10,x,1,1,1,1,1,1,1\n", HEADER.join(","));
        let e = read_table("t.csv", &bad).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("Sent"), "{e}");
    }

    #[test]
    fn a_flow_rows_name_has_no_control_character_and_a_bounded_length() {
        // Before: taken as it was, an escape sequence or 100,000 bytes of it.
        for name in ["a\u{1b}[2J".to_string(), "f".repeat(100_000)] {
            let t = format!(
                "{}\nTotal,10,5,5,0,0,1,1,1,0\n{name},10,5,5,0,0,1,1,1,0\n",
                HEADER.join(",")
            );
            let e = read_table("t.csv", &t).unwrap_err().to_string();
            assert!(e.starts_with("t.csv: line 3: column `Name`: `"), "{e}");
            assert!(
                e.contains("at most 256 bytes without a control character"),
                "{e}"
            );
            assert!(!e.contains('\u{1b}') && e.len() < 300, "{e}");
        }
    }
}
