//! Result files under the output directory, each written atomically (a temporary file
//! in the same directory, then renamed) so that an interrupted run never leaves a
//! truncated file.
//!
//! - `results.json`: every figure of every point ([`crate::results`]);
//! - `smartbits.csv`: all points in the SmartBits layout, for scenarios without variants;
//! - `smartbits-<variant>.csv`: one per variant, for scenarios with variants;
//! - `timeline.csv`: the latency timeline, when the scenario asks for one
//!   (`variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us`);
//! - `linux/<variant>/<point>/...`: a point's counters in the layouts of Linux's files
//!   ([`crate::results::linux`]), with `irqsim run --linux-counters`; [`write_linux`].

use crate::config::smartbits;
use crate::results::Results;
use std::io;
use std::path::Path;

/// Write `bytes` to `path` atomically: into a new temporary file beside it
/// (`.<name>.<random>.tmp`, `tempfile::NamedTempFile`: created exclusively, so a link
/// planted at that name cannot send the write outside the directory), then
/// renamed over `path` (a link at `path` itself is replaced, not followed). When
/// writing or renaming fails (a full disk: ENOSPC), the temporary file is removed, so a
/// failed write leaves `path` as it was and nothing beside it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?
        .to_string_lossy()
        .into_owned();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // 0o666 less the umask, as a file created by `File::create` (tempfile's own
    // default, 0o600, would hide the results from the user's group).
    let mut file = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    file.write_all(bytes)?;
    // On an error the temporary file is dropped, which removes it.
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
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
        // Counted first, then written into a buffer of exactly that size (grown as it
        // was written, it held up to twice the file).
        let counted = timeline_csv(&r.timeline, Counter(0))?.0;
        let bytes = timeline_csv(&r.timeline, Vec::with_capacity(counted))?;
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

/// The directory of the Linux-format counter files under the output directory.
pub const LINUX_DIR: &str = "linux";

/// The record irqsim keeps in [`LINUX_DIR`] of the files it wrote there, a line each:
/// the FNV-1a (64 bits, hex) of the bytes, a space and the path under [`LINUX_DIR`].
pub const LINUX_WRITTEN: &str = ".irqsim-written";

/// Write the Linux-format files `files` (paths under `dir/linux/`, as
/// `<variant>/<point>/<file>`, and their bytes) and remove those an earlier run wrote
/// there that this one does not: a file is removed only when `linux/.irqsim-written`
/// lists it with the bytes it still has (a file of the user's, or one edited since,
/// stays), and a directory only when that leaves it empty. With no files, only that
/// removal: a run without `--linux-counters` leaves no Linux files of another run.
///
/// Each path's parts must be names [`crate::config::names::check_variant`] accepts
/// (the variant's, the point's, the file's), and `linux` and the directories under it
/// must be directories of their own, not symbolic links: otherwise an
/// `InvalidInput` error, before anything is written (with no files, a `linux` that is
/// not a directory of its own is left alone). Returns the paths written.
pub fn write_linux(dir: &Path, files: &[(String, Vec<u8>)]) -> io::Result<Vec<String>> {
    let root = dir.join(LINUX_DIR);
    let record = root.join(LINUX_WRITTEN);
    let listed = match own_dir(&root) {
        Ok(true) => linux_written(&record),
        Ok(false) => Vec::new(),
        // Not irqsim's (a link, a file): nothing of its own to remove there.
        Err(_) if files.is_empty() => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    if files.is_empty() && listed.is_empty() {
        return Ok(Vec::new());
    }
    for (path, _) in files {
        safe_parts(path)?;
    }
    std::fs::create_dir_all(&root)?;
    let mut text = String::new();
    let mut written = Vec::new();
    for (path, bytes) in files {
        let mut at = root.clone();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            at.push(part);
            if !own_dir(&at)? {
                std::fs::create_dir(&at)?;
            }
        }
        write_named(&root.join(path), bytes)?;
        text.push_str(&format!("{} {path}\n", timeline_checksum(bytes)));
        written.push(format!("{LINUX_DIR}/{path}"));
    }
    for (sum, path) in &listed {
        if files.iter().any(|(p, _)| p == path) || safe_parts(path).is_err() {
            continue;
        }
        let file = root.join(path);
        // Every directory on the way must be irqsim's own, not a link elsewhere.
        let mut ok = true;
        let mut at = root.clone();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            at.push(part);
            ok &= matches!(own_dir(&at), Ok(true));
        }
        if ok && timeline_matches(&file, sum) {
            std::fs::remove_file(&file)?;
            // Its directories, when that left them empty (an error: not empty).
            let mut d = file.parent().map(Path::to_path_buf);
            while let Some(p) = d.filter(|p| p != &root) {
                if std::fs::remove_dir(&p).is_err() {
                    break;
                }
                d = p.parent().map(Path::to_path_buf);
            }
        }
    }
    if files.is_empty() {
        std::fs::remove_file(&record)?;
        let _ = std::fs::remove_dir(&root);
    } else {
        write_named(&record, text.as_bytes())?;
    }
    Ok(written)
}

/// Whether `p` is a directory of its own (`false` when absent); a symbolic link or a
/// file there is an `InvalidInput` error.
fn own_dir(p: &Path) -> io::Result<bool> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => Ok(true),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a directory (a symbolic link or a file): irqsim writes and \
                 removes its own files there, so it must be a directory of the output \
                 directory's own (or absent); move it away",
                p.display()
            ),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Check that every part of a path under [`LINUX_DIR`] is a name irqsim writes.
fn safe_parts(path: &str) -> io::Result<()> {
    let parts: Vec<&str> = path.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        // The file's own name is a checked name with irqsim's prefix (`ethtool-S-<nic>`):
        // up to NAME_MAX; the directories are variant and point names.
        if i + 1 == parts.len() {
            crate::config::names::check_file_name(part)
        } else {
            crate::config::names::check_variant(part)
        }
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{LINUX_DIR}/{path}: {e}"),
            )
        })?;
    }
    Ok(())
}

/// The files the record at `path` lists, as (checksum, path), when it is readable.
fn linux_written(path: &Path) -> Vec<(String, String)> {
    crate::config::read_limit::read_text(path, 1 << 24)
        .map(|t| {
            t.lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(sum, p)| (sum.to_string(), p.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// File name of the latency timeline.
pub const TIMELINE: &str = "timeline.csv";

/// timeline.csv of `rows`, written into `out`.
fn timeline_csv<W: io::Write>(
    rows: &[crate::model::timeline::TimelineRow],
    out: W,
) -> io::Result<W> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out);
    for row in rows {
        w.serialize(row).map_err(io::Error::other)?;
    }
    w.into_inner().map_err(|e| io::Error::other(e.to_string()))
}

/// A writer that keeps nothing and counts the bytes given to it.
struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The timeline checksum the results.json in `dir` records, if it is there, readable
/// and records one.
///
/// The file is streamed: only that field is kept, whatever the file's size.
fn recorded_timeline(dir: &Path) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Recorded {
        timeline_csv_fnv1a: Option<String>,
    }
    let r = crate::config::read_limit::open_stream(
        &dir.join("results.json"),
        crate::config::read_limit::MAX_RESULT_BYTES,
    )
    .ok()?;
    serde_json::from_reader::<_, Recorded>(r)
        .ok()?
        .timeline_csv_fnv1a
}

/// Whether the file at `path` is there, readable, and has the checksum `sum` (hashed as
/// it is read, never held).
pub fn timeline_matches(path: &Path, sum: &str) -> bool {
    crate::config::read_limit::fnv1a_file(path, crate::config::read_limit::MAX_RESULT_BYTES)
        .is_ok_and(|h| format!("{h:016x}") == sum)
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

    #[test]
    fn linux_files_replace_only_irqsims_own() {
        let dir = tempfile::tempdir().expect("temp dir");
        let f = |p: &str, b: &str| (p.to_string(), b.as_bytes().to_vec());
        let first = [
            f("napi/00-10pct/net-dev", "a"),
            f("napi/01-20pct/net-dev", "b"),
            f("napi/02-30pct/net-dev", "c"),
        ];
        write_linux(dir.path(), &first).expect("first");
        let linux = dir.path().join(LINUX_DIR);
        // The user edits one file and adds one of their own.
        std::fs::write(linux.join("napi/01-20pct/net-dev"), "edited").unwrap();
        std::fs::write(linux.join("napi/mine.txt"), "mine").unwrap();
        let second = [f("napi/00-10pct/net-dev", "A")];
        write_linux(dir.path(), &second).expect("second");
        assert_eq!(
            std::fs::read(linux.join("napi/00-10pct/net-dev")).unwrap(),
            b"A"
        );
        assert_eq!(
            std::fs::read(linux.join("napi/01-20pct/net-dev")).unwrap(),
            b"edited"
        );
        assert_eq!(std::fs::read(linux.join("napi/mine.txt")).unwrap(), b"mine");
        // The unchanged file of the first run is gone, and its emptied directory.
        assert!(!linux.join("napi/02-30pct").exists());
        // A run without Linux files removes this run's own and keeps the rest.
        write_linux(dir.path(), &[]).expect("none");
        assert!(!linux.join("napi/00-10pct").exists());
        assert!(!linux.join(LINUX_WRITTEN).exists());
        assert_eq!(std::fs::read(linux.join("napi/mine.txt")).unwrap(), b"mine");
        // A path that leaves the directory, or a link in place of a directory: refused.
        assert!(write_linux(dir.path(), &[f("../x", "x")]).is_err());
        let outside = tempfile::tempdir().expect("temp dir");
        std::os::unix::fs::symlink(outside.path(), linux.join("v")).unwrap();
        assert!(write_linux(dir.path(), &[f("v/p/net-dev", "x")]).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
