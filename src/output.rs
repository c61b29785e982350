//! Result files under the output directory, each written atomically (a temporary file
//! in the same directory, then renamed) so that an interrupted run never leaves a
//! truncated file.
//!
//! - `results.json`: every figure of every point ([`crate::results`]);
//! - `smartbits.csv`: all points in the SmartBits layout, for scenarios without variants;
//! - `smartbits-<variant>.csv`: one per variant, for scenarios with variants;
//! - `timeline.csv`: the latency timeline, when the scenario asks for one
//!   (`variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us`).

use crate::results::Results;
use crate::smartbits;
use std::io;
use std::path::Path;

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Variant names in order of first appearance.
pub fn variants(r: &Results) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in &r.points {
        if !v.contains(&p.variant) {
            v.push(p.variant.clone());
        }
    }
    v
}

/// Write `results.json` and the SmartBits table(s) into `dir` (created if needed).
/// Returns the names of the files written.
pub fn write_all(dir: &Path, r: &Results) -> io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut written = vec!["results.json".to_string()];
    write_atomic(&dir.join("results.json"), r.to_json().as_bytes())?;
    let vs = variants(r);
    for v in &vs {
        let rows: Vec<_> = r
            .points
            .iter()
            .filter(|p| &p.variant == v)
            .flat_map(|p| p.smartbits_rows())
            .collect();
        let mut csv = Vec::new();
        smartbits::write_table(&mut csv, &rows).map_err(io::Error::other)?;
        let name = if vs.len() == 1 && v == "default" {
            "smartbits.csv".to_string()
        } else {
            format!("smartbits-{v}.csv")
        };
        write_atomic(&dir.join(&name), &csv)?;
        written.push(name);
    }
    if !r.timeline.is_empty() {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        for row in &r.timeline {
            w.serialize(row).map_err(io::Error::other)?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| io::Error::other(e.to_string()))?;
        write_atomic(&dir.join("timeline.csv"), &bytes)?;
        written.push("timeline.csv".into());
    }
    Ok(written)
}
