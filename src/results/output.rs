//! Result files under the output directory, each written atomically (a temporary file
//! in the same directory, then renamed) so that an interrupted run never leaves a
//! truncated file.
//!
//! - `results.json`: every figure of every point ([`crate::results`]);
//! - `smartbits.csv`: all points in the SmartBits layout, for scenarios without variants;
//! - `smartbits-<variant>.csv`: one per variant, for scenarios with variants;
//! - `timeline.csv`: the latency timeline, when the scenario asks for one
//!   (`variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us`).

use crate::config::smartbits;
use crate::results::Results;
use std::io;
use std::path::Path;

/// Write `bytes` to `path` atomically: into a new temporary file beside it
/// (`.<name>.<pid>-<n>.tmp`, created exclusively and without following a symbolic link,
/// so a link planted at that name cannot send the write outside the directory), then
/// renamed over `path` (a link at `path` itself is replaced, not followed). When
/// writing or renaming fails (a full disk: ENOSPC), the temporary file is removed, so a
/// failed write leaves `path` as it was and nothing beside it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?
        .to_string_lossy()
        .into_owned();
    let (tmp, mut file) = loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            // Someone else's file (or link) there: never touched, another name taken.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        // The first error is the one to report.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// [`write_atomic`], with the file named in the error (`<path>: No space left on
/// device`), so that the first failed write is reported with its file.
pub fn write_named(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic(path, bytes)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
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

/// The checksum results.json records of its timeline.csv: FNV-1a (64 bits, hex) of the
/// file's bytes. It tells this run's timeline from another's, not a forgery.
pub fn timeline_checksum(bytes: &[u8]) -> String {
    format!("{:016x}", crate::sim::rng::fnv1a(bytes))
}

/// Write `results.json` and the SmartBits table(s) into `dir` (created if needed), and
/// the timeline when the results have one. Returns the names of the files written.
///
/// results.json is written last and records the checksum of the timeline.csv written
/// with it, so that `irqsim plot` draws only that one. When these results have no
/// timeline, a timeline.csv there is removed if it is irqsim's own (the results.json
/// there records its checksum) and left otherwise; either way results.json then
/// records no timeline, and none is drawn.
pub fn write_all(dir: &Path, r: &Results) -> io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut written = vec!["results.json".to_string()];
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
        write_named(&dir.join(&name), &csv)?;
        written.push(name);
    }
    let timeline = dir.join(TIMELINE);
    let checksum = if !r.timeline.is_empty() {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        for row in &r.timeline {
            w.serialize(row).map_err(io::Error::other)?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| io::Error::other(e.to_string()))?;
        write_named(&timeline, &bytes)?;
        written.push(TIMELINE.into());
        Some(timeline_checksum(&bytes))
    } else {
        if recorded_timeline(dir).is_some_and(|sum| timeline_matches(&timeline, &sum)) {
            std::fs::remove_file(&timeline)?;
        }
        None
    };
    write_named(
        &dir.join("results.json"),
        r.to_json_with_timeline(checksum.as_deref()).as_bytes(),
    )?;
    Ok(written)
}

/// File name of the latency timeline.
pub const TIMELINE: &str = "timeline.csv";

/// The timeline checksum the results.json in `dir` records, if it is there, readable
/// and records one.
fn recorded_timeline(dir: &Path) -> Option<String> {
    let text = crate::config::read_limit::read_text(
        &dir.join("results.json"),
        crate::config::read_limit::MAX_RESULT_BYTES,
    )
    .ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("timeline_csv_fnv1a")?.as_str().map(str::to_string)
}

/// Whether the file at `path` is there, readable, and has the checksum `sum`.
pub fn timeline_matches(path: &Path, sum: &str) -> bool {
    crate::config::read_limit::read_bytes(path, crate::config::read_limit::MAX_RESULT_BYTES)
        .is_ok_and(|b| timeline_checksum(&b) == sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("results.json");
        write_atomic(&path, b"old").expect("first write");
        // Renaming over a directory fails after the temporary file is written (as a
        // full disk fails after it is created): the file is unchanged, no .tmp is left.
        let blocked = dir.path().join("plots");
        std::fs::create_dir(&blocked).expect("dir");
        std::fs::write(blocked.join("x"), b"x").expect("file in dir");
        assert!(write_atomic(&blocked, b"new").is_err());
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["plots", "results.json"]);
        assert_eq!(std::fs::read(&path).expect("read"), b"old");
    }

    #[test]
    fn a_link_planted_at_a_temporary_name_is_not_followed() {
        // A link at the old fixed temporary name (and at this process's next one) to a
        // file outside the directory: the write goes to a fresh file, the outside file
        // is untouched, and the links stay as they were.
        let outside = tempfile::tempdir().expect("temp dir");
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, b"mine").unwrap();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("results.json");
        let old_tmp = dir.path().join("results.json.tmp");
        std::os::unix::fs::symlink(&victim, &old_tmp).unwrap();
        for n in 0..64 {
            let guess = dir
                .path()
                .join(format!(".results.json.{}-{n}.tmp", std::process::id()));
            std::os::unix::fs::symlink(&victim, &guess).unwrap();
        }
        write_atomic(&path, b"{}").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        assert!(
            !std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::symlink_metadata(&old_tmp)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
