//! The scoreboard's files in an output directory: `scoreboard.json` and `scoreboard.md`,
//! each written atomically ([`crate::results::output::write_named`]), and never over a
//! file irqsim did not write: an existing `scoreboard.json` must be a JSON object whose
//! `format` is [`FORMAT`], an existing `scoreboard.md` must start with [`MD_HEADER`];
//! anything else at those names (another file, a directory, a device) is refused before
//! any table runs.

use super::scoreboard::{FORMAT, MD_HEADER, Scoreboard};
use crate::config::read_limit::{self, MAX_INPUT_BYTES};
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

/// The JSON file's name.
pub const JSON: &str = "scoreboard.json";
/// The Markdown file's name.
pub const MD: &str = "scoreboard.md";

/// A file the scoreboard would write over that irqsim did not write.
#[derive(Debug, thiserror::Error)]
#[error(
    "{}: not irqsim's own file ({why}), and `irqsim validate` would write over it: move it \
     away or give another --out (irqsim writes over only what it wrote)",
    file.display()
)]
pub struct NotOurs {
    /// The file.
    pub file: PathBuf,
    /// Why it is not irqsim's.
    pub why: String,
}

/// Whether the scoreboard may write its two files in `dir`: each absent, or irqsim's own.
pub fn check_own(dir: &Path) -> Result<(), NotOurs> {
    let json = dir.join(JSON);
    if exists(&json) {
        #[derive(serde::Deserialize)]
        struct Marker {
            format: String,
        }
        let ours = read_limit::open_stream(&json, MAX_INPUT_BYTES)
            .map_err(|e| e.to_string())
            .and_then(|r| serde_json::from_reader::<_, Marker>(r).map_err(|e| e.to_string()))
            .and_then(|m| {
                (m.format == FORMAT)
                    .then_some(())
                    .ok_or_else(|| format!("its `format` is not `{FORMAT}`"))
            });
        if let Err(why) = ours {
            return Err(NotOurs { file: json, why });
        }
    }
    let md = dir.join(MD);
    if exists(&md) {
        let first = read_limit::open_stream(&md, MAX_INPUT_BYTES).and_then(|r| {
            let mut line = String::new();
            io::BufReader::new(r.take(MD_HEADER.len() as u64 + 2)).read_line(&mut line)?;
            Ok(line)
        });
        match first {
            Ok(l) if l.trim_end_matches('\n') == MD_HEADER => {}
            Ok(_) => {
                return Err(NotOurs {
                    file: md,
                    why: format!("its first line is not `{MD_HEADER}`"),
                });
            }
            Err(e) => {
                return Err(NotOurs {
                    file: md,
                    why: e.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Whether anything is at `p` (a broken link too).
fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// Write `s` as `dir/scoreboard.json` and `dir/scoreboard.md` (after [`check_own`]
/// again, as the directory may have changed while the tables ran); returns the names
/// written.
pub fn write(dir: &Path, s: &Scoreboard) -> Result<Vec<String>, WriteError> {
    check_own(dir)?;
    for (name, text) in [(JSON, s.json()), (MD, s.markdown())] {
        crate::results::output::write_named(&dir.join(name), text.as_bytes())?;
    }
    Ok(vec![JSON.to_string(), MD.to_string()])
}

/// Why the scoreboard's files were not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file in the way: exit 2.
    #[error(transparent)]
    NotOurs(#[from] NotOurs),
    /// A machine fault: exit 1.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl WriteError {
    /// The exit code: 2 for a file in the way, 1 for a machine fault.
    pub fn exit_code(&self) -> u8 {
        match self {
            WriteError::NotOurs(_) => 2,
            WriteError::Io(_) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_irqsims_own_files_are_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let s = Scoreboard::new(Vec::new());
        // Absent: written; then its own: written again.
        assert_eq!(write(dir.path(), &s).unwrap(), [JSON, MD]);
        write(dir.path(), &s).unwrap();
        // A user's file at either name is refused, and left as it was.
        std::fs::write(dir.path().join(MD), "# my notes\n").unwrap();
        let e = write(dir.path(), &s).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("scoreboard.md"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(MD)).unwrap(),
            "# my notes\n"
        );
        std::fs::remove_file(dir.path().join(MD)).unwrap();
        std::fs::write(dir.path().join(JSON), "{\"format\": \"other\"}").unwrap();
        assert!(check_own(dir.path()).is_err());
        std::fs::create_dir(dir.path().join(MD)).ok();
        std::fs::remove_file(dir.path().join(JSON)).unwrap();
        assert!(
            check_own(dir.path()).is_err(),
            "a directory at scoreboard.md"
        );
    }
}
