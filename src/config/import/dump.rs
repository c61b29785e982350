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

/// Largest dump file read \[bytes\]: 16 MiB, the limit of every input irqsim reads
/// ([`crate::config::read_limit::MAX_INPUT_BYTES`]); `/proc/interrupts` of a 256-CPU
/// host with a thousand vectors is about 2.5 MB.
pub const MAX_DUMP_BYTES: u64 = crate::config::read_limit::MAX_INPUT_BYTES;

/// Most bytes `import-host` reads, its dumps and `--profile` together \[bytes\]: 64 MiB,
/// some 25 times the largest real dump directory (a 256-CPU host's `/proc/interrupts` of
/// 2.5 MB and 330 small files); without it 4,096 files of 16 MiB each could be read. The
/// command's one read budget ([`crate::config::read_limit::ReadBudget`]), made where the
/// command starts.
pub const MAX_DUMPS_TOTAL_BYTES: u64 = 64 << 20;

/// `s` with its control characters escaped (`\u{1b}`, `\n`), for a message: a dump's
/// line or a file's name is printed as text, never as terminal commands.
pub fn escape(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A dump file: its name in the dump directory and its text, with where each line
/// starts (4 bytes a line, not a string each: 16 MiB of empty lines is 64 MiB of
/// offsets, not 400 MB of strings).
#[derive(Clone, Debug)]
pub struct Dump {
    /// The file's name in the dump directory (`ethtool-g-eth0`).
    pub name: String,
    /// Its text.
    text: String,
    /// The byte offset of each line's start in `text`.
    starts: Vec<u32>,
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
        write!(f, "{} line {}", escape(&self.file), self.line)
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
            escape(&self.at.file),
            self.at.line,
            escape(&self.text),
            escape(&self.reason)
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
            Some((n, text)) => write!(
                f,
                "{}:{n}: `{}`: {}",
                escape(&self.file),
                escape(text),
                escape(&self.reason)
            ),
            None => write!(f, "{}: {}", escape(&self.file), escape(&self.reason)),
        }
    }
}

/// Lines not understood kept per file with their text (the report prints them); the
/// others are only counted ([`Findings::unparsed_more`]), so that a file of junk costs
/// a count, not a copy of each line (one 16 MiB dump of junk took 1.9 GB).
pub const UNPARSED_KEPT: usize = 20;

/// What the parsers found besides the values.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    /// Lines not understood, in file and line order of discovery: the first
    /// [`UNPARSED_KEPT`] of each file.
    pub unparsed: Vec<Unparsed>,
    /// Lines not understood beyond those kept, per file: (file, count).
    pub unparsed_more: Vec<(String, usize)>,
    /// Lines not understood per file, kept or not.
    per_file: std::collections::HashMap<String, usize>,
    /// Where each (file, what) of `ignored` is, and how many kinds each file has.
    ignored_at: std::collections::HashMap<(String, String), usize>,
    ignored_kinds: std::collections::HashMap<String, usize>,
    /// Lines understood but not used, per file: (file, lines, what they are).
    pub ignored: Vec<(String, usize, String)>,
    /// Missing or malformed values the model needs.
    pub faults: Vec<Fault>,
}

impl Findings {
    /// Report line `line` (1-based) of `d` as not understood.
    pub fn unparsed(&mut self, d: &Dump, line: usize, reason: impl Into<String>) {
        let seen = self.per_file.entry(d.name.clone()).or_insert(0);
        *seen += 1;
        if *seen > UNPARSED_KEPT {
            match self.unparsed_more.iter_mut().find(|(f, _)| *f == d.name) {
                Some((_, n)) => *n += 1,
                None => self.unparsed_more.push((d.name.clone(), 1)),
            }
            return;
        }
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
    /// Lines of one kind add up in one entry; past [`UNPARSED_KEPT`] kinds in a file,
    /// the rest are counted as "other lines" (a file of a million lines each of its own
    /// kind costs one entry, not a million).
    pub fn ignore(&mut self, file: &str, n: usize, what: impl Into<String>) {
        if n == 0 {
            return;
        }
        let mut key = (file.to_string(), what.into());
        if !self.ignored_at.contains_key(&key) {
            let kinds = self.ignored_kinds.entry(file.to_string()).or_insert(0);
            if *kinds >= UNPARSED_KEPT {
                key.1 = "other lines understood and not used".into();
            }
        }
        match self.ignored_at.get(&key) {
            Some(&i) => self.ignored[i].1 += n,
            None => {
                *self.ignored_kinds.entry(file.to_string()).or_insert(0) += 1;
                self.ignored_at.insert(key.clone(), self.ignored.len());
                self.ignored.push((key.0, n, key.1));
            }
        }
    }
}

impl Dump {
    /// The dump `name` of `dir`: `Ok(None)` when there is no such file, an error (with
    /// its reason in words) when it cannot be read (a symbolic link -- a dump must be a
    /// regular file of `dir` itself --, not a regular file, larger than
    /// [`MAX_DUMP_BYTES`], past the import's `budget`, unreadable).
    pub fn read(
        dir: &Path,
        name: &str,
        budget: &crate::config::read_limit::ReadBudget,
    ) -> Result<Option<Dump>, String> {
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            _ => {}
        }
        let bytes = budget
            .read_bytes(&path, MAX_DUMP_BYTES, false)
            .map_err(|e| format!("cannot read: {e}"))?;
        Ok(Some(Dump::from_text(
            name,
            &String::from_utf8_lossy(&bytes),
        )))
    }

    /// A dump from its text (tests, and [`Dump::read`]; at most 4 GiB).
    pub fn from_text(name: &str, text: &str) -> Dump {
        let mut starts = Vec::new();
        let mut at = 0usize;
        while at < text.len() {
            starts.push(at as u32);
            at = text[at..].find('\n').map_or(text.len(), |k| at + k + 1);
        }
        Dump {
            name: name.to_string(),
            text: text.to_string(),
            starts,
        }
    }

    /// Line `i` (0-based), without its line end.
    fn line(&self, i: usize) -> Option<&str> {
        let a = *self.starts.get(i)? as usize;
        let b = self
            .starts
            .get(i + 1)
            .map_or(self.text.len(), |&b| b as usize);
        let l = &self.text[a..b];
        Some(l.strip_suffix('\n').unwrap_or(l).trim_end_matches('\r'))
    }

    /// Where line `line` (1-based) is.
    pub fn at(&self, line: usize) -> At {
        At {
            file: self.name.clone(),
            line,
        }
    }

    /// Line `line` (1-based), trimmed, as messages and notes quote it: a line longer than
    /// [`QUOTED_BYTES`] is cut there (at a character's boundary) and says how long it is,
    /// so a 0.8 MB line costs a notes entry or an error message 200 bytes, not 0.8 MB.
    pub fn text(&self, line: usize) -> String {
        self.line(line.wrapping_sub(1))
            .map(|l| quoted(l.trim()))
            .unwrap_or_default()
    }

    /// The lines with their 1-based numbers, blank ones left out.
    pub fn numbered(&self) -> impl Iterator<Item = (usize, &str)> {
        (0..self.starts.len())
            .filter_map(|i| Some((i + 1, self.line(i)?)))
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

/// The longest line a message or a note quotes whole \[bytes\]; a longer one is cut.
pub const QUOTED_BYTES: usize = 200;

/// `line` as a message quotes it: whole up to [`QUOTED_BYTES`], else its first
/// [`QUOTED_BYTES`] bytes (fewer, to end on a character) and `... (N bytes in all)`.
pub fn quoted(line: &str) -> String {
    if line.len() <= QUOTED_BYTES {
        return line.to_string();
    }
    let mut end = QUOTED_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes in all)", &line[..end], line.len())
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

/// Largest CPU number a CPU list may name, plus one: 65,536 (a larger number is taken
/// for garbage; the kernel's `NR_CPUS` is at most 8,192 on x86-64, arch/x86/Kconfig).
pub const CPU_LIST_END: u32 = 65_536;

/// A set of CPUs as the kernel prints one (`0-3,5`), held as sorted, disjoint,
/// non-adjacent ranges: its size is that of the text at most, however many CPUs it
/// names (`0-65535` repeated 100,000 times is one range, not 6.5e9 numbers).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuList {
    /// (first, last) CPU of each range, inclusive, in increasing order.
    ranges: Vec<(u32, u32)>,
}

impl CpuList {
    /// How many CPUs.
    pub fn len(&self) -> usize {
        self.ranges.iter().map(|&(a, b)| (b - a) as usize + 1).sum()
    }

    /// Whether it names no CPU.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The lowest CPU.
    pub fn first(&self) -> Option<u32> {
        self.ranges.first().map(|r| r.0)
    }

    /// The CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(|&(a, b)| a..=b)
    }

    /// The CPUs of `0..n`.
    pub fn upto(n: u32) -> CpuList {
        CpuList {
            ranges: if n == 0 { Vec::new() } else { vec![(0, n - 1)] },
        }
    }

    /// The rank of `cpu` among the CPUs (its index in increasing order).
    pub fn rank(&self, cpu: u32) -> Option<usize> {
        let mut before = 0usize;
        for &(a, b) in &self.ranges {
            if (a..=b).contains(&cpu) {
                return Some(before + (cpu - a) as usize);
            }
            before += (b - a) as usize + 1;
        }
        None
    }
}

impl fmt::Display for CpuList {
    /// The kernel's list form (`0-3,5`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(a, b)) in self.ranges.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            if a == b {
                write!(f, "{sep}{a}")?;
            } else {
                write!(f, "{sep}{a}-{b}")?;
            }
        }
        Ok(())
    }
}

/// A CPU list as the kernel prints one (`0-3,5`, `bitmap_print_to_pagebuf`'s list
/// form, lib/bitmap.c), or `None` if malformed. CPUs below [`CPU_LIST_END`]. Ranges
/// are merged as they are read, never expanded: time and memory grow with the text,
/// not with the CPUs it names.
pub fn cpu_list(s: &str) -> Option<CpuList> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for part in s.trim().split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (whole(a)?, whole(b)?),
            None => {
                let a = whole(part)?;
                (a, a)
            }
        };
        if a > b || b >= CPU_LIST_END as u64 {
            return None;
        }
        ranges.push((a as u32, b as u32));
    }
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len().min(1024));
    for (a, b) in ranges {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged.shrink_to_fit();
    Some(CpuList { ranges: merged })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_the_kernel_prints_them() {
        let l = cpu_list("0-3,5").unwrap();
        assert_eq!(l.iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 5]);
        assert_eq!((l.len(), l.to_string()), (5, "0-3,5".to_string()));
        assert_eq!(cpu_list("7").unwrap().iter().collect::<Vec<_>>(), vec![7]);
        assert_eq!(cpu_list("5,0-3,4").unwrap().to_string(), "0-5");
        assert_eq!(cpu_list("8-11,0-3").unwrap().rank(9), Some(5));
        assert_eq!(cpu_list("3-1"), None);
        assert_eq!(cpu_list("a"), None);
        assert_eq!(cpu_list(""), None);
        assert_eq!(cpu_list("0-70000"), None);
    }

    /// `0-65535` repeated 100,000 times (0.8 MB) aborted with "memory
    /// allocation of 4294967296 bytes failed": each range was expanded before
    /// duplicates were removed. Now one range of 65,536 CPUs.
    #[test]
    fn a_long_cpu_list_is_merged_not_expanded() {
        let text = vec!["0-65535"; 100_000].join(",");
        let l = cpu_list(&text).unwrap();
        assert_eq!((l.len(), l.to_string()), (65_536, "0-65535".to_string()));
    }

    #[test]
    fn whole_numbers_are_digits_only() {
        assert_eq!(whole("1024"), Some(1024));
        assert_eq!(whole("-1"), None);
        assert_eq!(whole("n/a"), None);
        assert_eq!(whole("99999999999999999999999"), None);
    }

    #[test]
    fn lines_not_understood_past_the_first_ones_are_counted_not_kept() {
        let text = "junk\n".repeat(1000);
        let d = Dump::from_text("lscpu", &text);
        let mut f = Findings::default();
        for (n, _) in d.numbered() {
            f.unparsed(&d, n, "junk");
        }
        assert_eq!(f.unparsed.len(), UNPARSED_KEPT);
        assert_eq!(
            f.unparsed_more,
            vec![("lscpu".to_string(), 1000 - UNPARSED_KEPT)]
        );
    }

    #[test]
    fn lines_are_numbered_from_one_and_blank_ones_skipped() {
        let d = Dump::from_text("f", "a: 1\n\n  b: 2\r\n");
        let v: Vec<_> = d.numbered().collect();
        assert_eq!(v, vec![(1, "a: 1"), (3, "  b: 2")]);
        assert_eq!(d.text(3), "b: 2");
    }

    #[test]
    fn long_lines_are_quoted_cut_with_their_length() {
        // A line of 0.8 MB (issue 53's irq-affinity line) is quoted in 200 bytes and its
        // length; a multi-byte character at the cut is not split.
        let long = "0-65535,".repeat(100_000);
        let q = quoted(&long);
        assert!(q.starts_with("0-65535,0-65535"), "{q}");
        assert!(q.ends_with("... (800000 bytes in all)"), "{q}");
        assert!(q.len() < QUOTED_BYTES + 30, "{}", q.len());
        let wide = format!("{}é{}", "a".repeat(QUOTED_BYTES - 1), "b".repeat(300));
        assert!(quoted(&wide).starts_with(&"a".repeat(QUOTED_BYTES - 1)));
        assert!(!quoted(&wide).contains('é'));
        assert_eq!(quoted("short"), "short");
        assert_eq!(
            key_value("Model name:  Intel: x", ':'),
            Some(("Model name", "Intel: x"))
        );
    }
}
