//! One dump file of a host, read bounded, and what the parsers report about its lines.
//!
//! A [`Dump`] is a file of the dump directory as lines (read with
//! [`crate::config::read_limit`], at most [`MAX_DUMP_BYTES`]; bytes that are not UTF-8
//! become U+FFFD, so a line that carries one fails to parse where it matters instead of
//! refusing the whole file). A value taken from it is a [`Sourced`] value: the value, the
//! file and line it came from, and the line's text, which the model's `notes` quote.
//! [`Findings`] collects what the parsers say: lines not understood ([`Unparsed`],
//! reported and never used), lines understood but not used ([`Findings::ignore`],
//! counted), and values the model cannot do without that are missing or malformed
//! ([`Fault`], which refuse the import before anything is written).

use std::fmt;
use std::path::Path;

/// Largest dump file read [bytes]: 16 MiB, the limit of every input irqsim reads
/// ([`crate::config::read_limit::MAX_INPUT_BYTES`]); `/proc/interrupts` of a 256-CPU
/// host with a thousand vectors is about 2.5 MB.
pub const MAX_DUMP_BYTES: u64 = crate::config::read_limit::MAX_INPUT_BYTES;

/// A dump file: its name in the dump directory and its lines.
#[derive(Clone, Debug)]
pub struct Dump {
    /// The file's name in the dump directory (`ethtool-g-eth0`).
    pub name: String,
    /// Its lines, without line ends.
    pub lines: Vec<String>,
}

/// Where a value was read: a file of the dump directory and a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct At {
    /// The file's name in the dump directory.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} line {}", self.file, self.line)
    }
}

/// A value read from a dump, with where it was read and the line's text.
#[derive(Clone, Debug, PartialEq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Where.
    pub at: At,
    /// The line as the tool printed it (trimmed).
    pub text: String,
}

/// A line that was not understood: reported, never used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unparsed {
    /// Where.
    pub at: At,
    /// The line (trimmed).
    pub text: String,
    /// Why it was not understood.
    pub reason: String,
}

impl fmt::Display for Unparsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: `{}`: {}",
            self.at.file, self.at.line, self.text, self.reason
        )
    }
}

/// A value the model needs that is missing or malformed: the import is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The file (in the dump directory, or the directory itself).
    pub file: String,
    /// The line and its text, when the fault is on a line.
    pub line: Option<(usize, String)>,
    /// What is wrong, and what to do.
    pub reason: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.line {
            Some((n, text)) => write!(f, "{}:{n}: `{text}`: {}", self.file, self.reason),
            None => write!(f, "{}: {}", self.file, self.reason),
        }
    }
}

/// What the parsers found besides the values.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    /// Lines not understood, in file and line order of discovery.
    pub unparsed: Vec<Unparsed>,
    /// Lines understood but not used, per file: (file, lines, what they are).
    pub ignored: Vec<(String, usize, String)>,
    /// Missing or malformed values the model needs.
    pub faults: Vec<Fault>,
}

impl Findings {
    /// Report line `line` (1-based) of `d` as not understood.
    pub fn unparsed(&mut self, d: &Dump, line: usize, reason: impl Into<String>) {
        self.unparsed.push(Unparsed {
            at: d.at(line),
            text: d.text(line),
            reason: reason.into(),
        });
    }

    /// Refuse the import for line `line` of `d`.
    pub fn fault_at(&mut self, d: &Dump, line: usize, reason: impl Into<String>) {
        self.faults.push(Fault {
            file: d.name.clone(),
            line: Some((line, d.text(line))),
            reason: reason.into(),
        });
    }

    /// Refuse the import for file `file` as a whole.
    pub fn fault(&mut self, file: impl Into<String>, reason: impl Into<String>) {
        self.faults.push(Fault {
            file: file.into(),
            line: None,
            reason: reason.into(),
        });
    }

    /// Count `n` lines of `file` understood and not used (`what` says which).
    pub fn ignore(&mut self, file: &str, n: usize, what: impl Into<String>) {
        if n > 0 {
            self.ignored.push((file.to_string(), n, what.into()));
        }
    }
}

impl Dump {
    /// The dump `name` of `dir`: `Ok(None)` when there is no such file, an error (with
    /// its reason in words) when it cannot be read (not a regular file, larger than
    /// [`MAX_DUMP_BYTES`], unreadable).
    pub fn read(dir: &Path, name: &str) -> Result<Option<Dump>, String> {
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            _ => {}
        }
        let bytes = crate::config::read_limit::read_bytes(&path, MAX_DUMP_BYTES)
            .map_err(|e| format!("cannot read: {e}"))?;
        Ok(Some(Dump::from_text(
            name,
            &String::from_utf8_lossy(&bytes),
        )))
    }

    /// A dump from its text (tests, and [`Dump::read`]).
    pub fn from_text(name: &str, text: &str) -> Dump {
        Dump {
            name: name.to_string(),
            lines: text
                .lines()
                .map(|l| l.trim_end_matches('\r').to_string())
                .collect(),
        }
    }

    /// Where line `line` (1-based) is.
    pub fn at(&self, line: usize) -> At {
        At {
            file: self.name.clone(),
            line,
        }
    }

    /// Line `line` (1-based), trimmed.
    pub fn text(&self, line: usize) -> String {
        self.lines
            .get(line.wrapping_sub(1))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    }

    /// The lines with their 1-based numbers, blank ones left out.
    pub fn numbered(&self) -> impl Iterator<Item = (usize, &str)> {
        self.lines
            .iter()
            .enumerate()
            .map(|(i, l)| (i + 1, l.as_str()))
            .filter(|(_, l)| !l.trim().is_empty())
    }

    /// A value read at line `line`.
    pub fn sourced<T>(&self, line: usize, value: T) -> Sourced<T> {
        Sourced {
            value,
            at: self.at(line),
            text: self.text(line),
        }
    }
}

/// `key<sep>value` split at the first `sep`, both trimmed; `None` without `sep` or
/// with an empty key.
pub fn key_value(line: &str, sep: char) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(sep)?;
    let k = k.trim();
    (!k.is_empty()).then_some((k, v.trim()))
}

/// A whole number as the tools print one (decimal digits only, no sign).
pub fn whole(s: &str) -> Option<u64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// A CPU list as the kernel prints one (`0-3,5`, `bitmap_print_to_pagebuf`'s list
/// form, lib/bitmap.c): the CPUs in increasing order, or `None` if malformed. At most
/// 65,536 CPUs (a larger range is taken for garbage).
pub fn cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (whole(a)?, whole(b)?),
            None => {
                let a = whole(part)?;
                (a, a)
            }
        };
        if a > b || b >= 65_536 {
            return None;
        }
        out.extend(a as u32..=b as u32);
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_the_kernel_prints_them() {
        assert_eq!(cpu_list("0-3,5"), Some(vec![0, 1, 2, 3, 5]));
        assert_eq!(cpu_list("7"), Some(vec![7]));
        assert_eq!(cpu_list("3-1"), None);
        assert_eq!(cpu_list("a"), None);
        assert_eq!(cpu_list(""), None);
        assert_eq!(cpu_list("0-70000"), None);
    }

    #[test]
    fn whole_numbers_are_digits_only() {
        assert_eq!(whole("1024"), Some(1024));
        assert_eq!(whole("-1"), None);
        assert_eq!(whole("n/a"), None);
        assert_eq!(whole("99999999999999999999999"), None);
    }

    #[test]
    fn lines_are_numbered_from_one_and_blank_ones_skipped() {
        let d = Dump::from_text("f", "a: 1\n\n  b: 2\r\n");
        let v: Vec<_> = d.numbered().collect();
        assert_eq!(v, vec![(1, "a: 1"), (3, "  b: 2")]);
        assert_eq!(d.text(3), "b: 2");
        assert_eq!(
            key_value("Model name:  Intel: x", ':'),
            Some(("Model name", "Intel: x"))
        );
    }
}
