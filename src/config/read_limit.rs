//! Reading a file irqsim did not write itself, bounded: only a regular file (never a
//! FIFO, a device, a socket or a directory, even behind a symbolic link), never more
//! than a stated number of bytes.
//!
//! A scenario, model or measured table naming `/dev/zero` would otherwise grow memory
//! until the machine runs out, a FIFO would block forever, and a checkpoint's run file
//! linked to a device would be read without end. The file is opened without blocking
//! (`O_NONBLOCK`, so that opening a FIFO returns at once), then what the open handle is
//! (`fstat`) decides: anything but a regular file is refused, and so is a file larger
//! than the limit. The read itself stops one byte past the limit, so a file that grows
//! while it is read is refused too.
//!
//! Limits per file, in bytes (stated in the book's chapter "Limits and refusals",
//! book/src/limits.md):
//! - [`MAX_INPUT_BYTES`] (16 MiB) for what a user writes: scenarios, models, measured
//!   tables, `timeline.csv`, `import-host` dumps;
//! - [`crate::config::capture::MAX_CAPTURE_BYTES`] (256 MiB) for a capture;
//! - [`MAX_RESULT_BYTES`] (1 GiB) for what irqsim writes and reads back: `results.json`
//!   (`plot`, `compare`), checkpoint and shard files (a run file at most what a run of
//!   its scenario can be, [`crate::experiment::run_file::max_bytes`]).
//!
//! **One budget per command.** One command reads many files (a scenario names a model,
//! measured tables and captures, and a sweep over a checkpoint reads its run files;
//! `import-host` reads hundreds of dumps; `compare` several results): each command
//! makes one [`ReadBudget`] where it starts (the command line) and every reader of that
//! command draws from it. The rule: a file's size (`fstat` of the open file, or of the
//! path when the file is only counted ahead, [`ReadBudget::reserve`]) is checked against
//! its own limit and against what is left of the budget before a byte of it is read; a
//! file read under two spellings (links, `./x` and `x`: one device and inode,
//! [`ReadBudget::identity`]) is counted once. The budget is [`COMMAND_BYTES`] (1 GiB,
//! the largest file irqsim reads: every command may read its largest file, and all its
//! files together no more); `import-host`'s is
//! [`crate::config::import::dump::MAX_DUMPS_TOTAL_BYTES`] (64 MiB: its dumps are text a
//! host prints, a 256-CPU host's under 1 MB).
//!
//! **Outside the budget**, each with its own limit: `/proc/meminfo` (64 KiB), and the
//! checks irqsim makes of its own outputs before it writes over or removes them (is this
//! file one irqsim wrote, unchanged since?). Those never hold the file: a checksum is
//! hashed as it is read, 64 KiB at a time ([`fnv1a_file`]), and a results.json or a
//! model is parsed as a stream keeping only the field checked ([`open_stream`]); only the
//! records of written files (`.irqsim-written`, at most 1 MiB and 16 MiB) are read whole.

use std::collections::HashMap;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

/// Largest scenario, model, measured table or timeline read \[bytes\]: 16 MiB, a
/// thousand times the largest shipped scenario.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Largest results.json, checkpoint or shard file read back \[bytes\]: 1 GiB.
pub const MAX_RESULT_BYTES: u64 = 1 << 30;

/// What one command may read in all, every file counted once \[bytes\]: 1 GiB, the
/// largest file irqsim reads ([`MAX_RESULT_BYTES`]) -- the budget of every command but
/// `import-host` ([`ReadBudget::command`]).
pub const COMMAND_BYTES: u64 = MAX_RESULT_BYTES;

/// Why a file is refused before its content is read.
#[derive(Debug, thiserror::Error)]
pub enum ReadLimitError {
    /// Not a regular file.
    #[error(
        "is {0}, not a regular file: irqsim reads only regular files (a FIFO, a device such as /dev/zero or a directory, also behind a symbolic link, is refused)"
    )]
    NotRegular(&'static str),
    /// Would take the command's reads past its budget.
    #[error(
        "would take what this command reads past {total} bytes ({size} bytes, with {used} \
         bytes read already from other files): a limit on all the files one command reads"
    )]
    OverBudget {
        /// The file's size \[bytes\].
        size: u64,
        /// Read already \[bytes\].
        used: u64,
        /// The budget \[bytes\].
        total: u64,
    },
    /// A symbolic link where irqsim reads only a file of the directory itself.
    #[error(
        "is a symbolic link: irqsim reads it only as a regular file of its own directory, not through a link"
    )]
    Link,
    /// Larger than the limit.
    #[error("is larger than {limit} bytes ({size} bytes), the most irqsim reads from such a file")]
    TooLarge {
        /// Its size, or at least how much could be read \[bytes\].
        size: u64,
        /// The limit \[bytes\].
        limit: u64,
    },
}

/// What kind of file a non-regular file type is, in words.
fn kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// What one command may read in all, shared by its readers (by `&`, from any thread).
#[derive(Debug)]
pub struct ReadBudget {
    total: u64,
    inner: Mutex<Counted>,
}

/// What a budget has counted.
#[derive(Debug, Default)]
struct Counted {
    used: u64,
    /// The size counted of each file read, by (device, inode): a file is counted once.
    seen: HashMap<(u64, u64), u64>,
}

impl ReadBudget {
    /// A budget of `total` bytes.
    pub fn new(total: u64) -> ReadBudget {
        ReadBudget {
            total,
            inner: Mutex::new(Counted::default()),
        }
    }

    /// The budget of a command: [`COMMAND_BYTES`].
    pub fn command() -> ReadBudget {
        ReadBudget::new(COMMAND_BYTES)
    }

    /// Bytes read (or counted ahead) so far.
    pub fn used(&self) -> u64 {
        self.counted().used
    }

    /// The budget \[bytes\].
    pub fn total(&self) -> u64 {
        self.total
    }

    fn counted(&self) -> std::sync::MutexGuard<'_, Counted> {
        // (Nothing panics while the lock is held: a poisoned lock is still right.)
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Count `size` bytes of the file `id` (or of no file), unless that file was counted
    /// at that size or more already; an error when they would take the reads past the
    /// budget (nothing counted then).
    fn count(&self, id: Option<(u64, u64)>, size: u64) -> io::Result<()> {
        let mut c = self.counted();
        let before = id.and_then(|id| c.seen.get(&id).copied()).unwrap_or(0);
        let more = size.saturating_sub(before);
        if more == 0 && id.is_some() {
            return Ok(());
        }
        if c.used.saturating_add(more) > self.total {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                ReadLimitError::OverBudget {
                    size,
                    used: c.used - before,
                    total: self.total,
                },
            ));
        }
        c.used += more;
        if let Some(id) = id {
            c.seen.insert(id, size);
        }
        Ok(())
    }

    /// Count `size` bytes read by other means (a file given in memory); an error when
    /// they would take the reads past the budget.
    pub fn charge(&self, size: u64) -> io::Result<()> {
        self.count(None, size)
    }

    /// Count the regular file `path` (following links) ahead of reading it: its size
    /// (`stat`), checked against `limit` and what is left, without a byte of it read; a
    /// later read of the same file costs nothing more (unless it has grown). Its size.
    pub fn reserve(&self, path: &Path, limit: u64) -> io::Result<u64> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)?;
        check(&meta, limit)?;
        self.count(Some((meta.dev(), meta.ino())), meta.len())?;
        Ok(meta.len())
    }

    /// The bytes of the regular file `path`, at most `limit` and at most what is left of
    /// the budget (a file read before, under any spelling, costs nothing again);
    /// `follow`: whether a symbolic link is followed (`false`: refused).
    pub fn read_bytes(&self, path: &Path, limit: u64, follow: bool) -> io::Result<Vec<u8>> {
        read_inner(path, limit, follow, Some(self))
    }

    /// The text of the regular file `path` (links followed), at most `limit` bytes of
    /// UTF-8, drawn from the budget as [`ReadBudget::read_bytes`].
    pub fn read_text(&self, path: &Path, limit: u64) -> io::Result<String> {
        utf8(self.read_bytes(path, limit, true)?)
    }

    /// The (device, inode) of the regular file `path`: two spellings of one file give
    /// one identity (for a cache of what was read).
    pub fn identity(path: &Path) -> io::Result<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok((m.dev(), m.ino()))
    }
}

/// Refuse what is not a regular file, or is larger than `limit`.
fn check(meta: &std::fs::Metadata, limit: u64) -> io::Result<()> {
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            ReadLimitError::NotRegular(kind(meta.file_type())),
        ));
    }
    if meta.len() > limit {
        return Err(too_large(meta.len(), limit));
    }
    Ok(())
}

fn too_large(size: u64, limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        ReadLimitError::TooLarge { size, limit },
    )
}

/// The bytes of the regular file `path`, at most `limit` of them; an error of kind
/// `InvalidInput` (carrying a [`ReadLimitError`]) for anything else. Outside any
/// command's budget: for what is not a command's input (`/proc/meminfo`, irqsim's own
/// record of the files it wrote, checked before it writes over them).
pub fn read_bytes(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_inner(path, limit, true, None)
}

/// The regular file `path` opened for reading without blocking, with what `fstat` says
/// of it, when it is at most `limit` bytes; `follow`: whether a symbolic link is
/// followed (`false`: refused).
fn open_checked(
    path: &Path,
    limit: u64,
    follow: bool,
) -> io::Result<(std::fs::File, std::fs::Metadata)> {
    let flags = libc::O_NONBLOCK | if follow { 0 } else { libc::O_NOFOLLOW };
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
    {
        Err(e) if !follow && e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                ReadLimitError::Link,
            ));
        }
        r => r?,
    };
    let meta = file.metadata()?;
    check(&meta, limit)?;
    Ok((file, meta))
}

/// A reader of the regular file `path` (links followed) that gives at most `limit`
/// bytes and then fails, for a parser that streams (`serde_json::from_reader`) and so
/// holds only what it keeps, never the file. Outside any command's budget: for checks
/// of irqsim's own outputs before it writes over them.
pub fn open_stream(path: &Path, limit: u64) -> io::Result<impl Read + use<>> {
    let (file, _) = open_checked(path, limit, true)?;
    Ok(Bounded {
        inner: io::BufReader::with_capacity(STREAM_CHUNK, file),
        left: limit,
    })
}

/// The size of one read of a stream \[bytes\]: 64 KiB, all a streamed check holds.
const STREAM_CHUNK: usize = 64 << 10;

/// A reader that fails past its limit (a file that grew after it was checked).
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // One byte more than is left, so that growth past the limit is seen.
        let want = buf
            .len()
            .min(usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n as u64 > self.left {
            return Err(too_large(n as u64, self.left));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// The FNV-1a (64 bits) of the regular file `path` (links followed) of at most `limit`
/// bytes, read in 64 KiB pieces: what a check of a file irqsim wrote (is it unchanged
/// since?) costs in memory, whatever the file's size. Outside any command's budget, as
/// [`open_stream`].
pub fn fnv1a_file(path: &Path, limit: u64) -> io::Result<u64> {
    let mut r = open_stream(path, limit)?;
    let mut h = crate::sim::rng::FNV1A_START;
    let mut buf = vec![0u8; STREAM_CHUNK];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            return Ok(h);
        }
        h = crate::sim::rng::fnv1a_more(h, &buf[..n]);
    }
}

fn read_inner(
    path: &Path,
    limit: u64,
    follow: bool,
    budget: Option<&ReadBudget>,
) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::MetadataExt;
    let (file, meta) = open_checked(path, limit, follow)?;
    let id = (meta.dev(), meta.ino());
    if let Some(b) = budget {
        b.count(Some(id), meta.len())?;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64, limit));
    }
    // A file that grew while it was read is counted at what was read.
    if let Some(b) = budget {
        b.count(Some(id), bytes.len() as u64)?;
    }
    Ok(bytes)
}

fn utf8(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// The text of the regular file `path`, at most `limit` bytes of UTF-8.
pub fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    utf8(read_bytes(path, limit)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        for (path, want) in [
            (Path::new("/dev/zero"), "a character device"),
            (Path::new("/dev/urandom"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            let e = read_text(path, MAX_INPUT_BYTES).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            assert!(e.to_string().contains(want), "{}: {e}", path.display());
        }
        // A FIFO with no writer: opening it for reading would block forever.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, MAX_INPUT_BYTES).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        // A symbolic link to a device is the device.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read_text(&link, MAX_INPUT_BYTES).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
    }

    #[test]
    fn a_streamed_check_hashes_as_the_whole_and_keeps_the_limits() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        // Three and a half 64 KiB pieces: the streamed hash is the hash of the whole.
        let bytes: Vec<u8> = (0..(STREAM_CHUNK * 7 / 2))
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&f, &bytes).unwrap();
        let len = bytes.len() as u64;
        assert_eq!(fnv1a_file(&f, len).unwrap(), crate::sim::rng::fnv1a(&bytes));
        // One byte over the limit, a device and a FIFO: refused, as read_bytes refuses them.
        let e = fnv1a_file(&f, len - 1).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        let e = fnv1a_file(Path::new("/dev/zero"), MAX_RESULT_BYTES).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(fnv1a_file(&fifo, MAX_RESULT_BYTES).is_err());
        // A stream stops with an error once it passes its limit (a file that grew after
        // it was checked reads as one past the limit here).
        let mut r = Bounded {
            inner: &bytes[..],
            left: 10,
        };
        let mut out = Vec::new();
        let e = r.read_to_end(&mut out).unwrap_err();
        assert!(e.to_string().contains("larger than 10 bytes"), "{e}");
    }

    #[test]
    fn a_budget_bounds_the_total_counts_a_file_once_and_can_refuse_links() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, [0u8; 60]).unwrap();
        std::fs::write(&b, [0u8; 50]).unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let budget = ReadBudget::new(100);
        assert_eq!(budget.read_bytes(&a, 1000, true).unwrap().len(), 60);
        // The same file through a link: no more of the budget.
        assert_eq!(budget.read_bytes(&link, 1000, true).unwrap().len(), 60);
        assert_eq!(budget.used(), 60);
        let e = budget.read_bytes(&b, 1000, true).unwrap_err();
        assert!(
            e.to_string()
                .contains("past 100 bytes (50 bytes, with 60 bytes read already"),
            "{e}"
        );
        let e = ReadBudget::new(1000)
            .read_bytes(&link, 1000, false)
            .unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
    }

    #[test]
    fn a_file_counted_ahead_is_not_read_and_costs_nothing_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, fifo) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("f"),
        );
        std::fs::write(&a, [0u8; 60]).unwrap();
        std::fs::write(&b, [0u8; 50]).unwrap();
        let budget = ReadBudget::new(100);
        assert_eq!(budget.reserve(&a, 1000).unwrap(), 60);
        // Its own limit is checked too, and nothing is counted for a refusal.
        let e = budget.reserve(&b, 40).unwrap_err();
        assert!(
            e.to_string().contains("larger than 40 bytes (50 bytes)"),
            "{e}"
        );
        let e = budget.reserve(&b, 1000).unwrap_err();
        assert!(
            e.to_string().contains("past 100 bytes (50 bytes, with 60"),
            "{e}"
        );
        assert_eq!(budget.used(), 60);
        // Read after it was counted: no more of the budget.
        assert_eq!(budget.read_bytes(&a, 1000, true).unwrap().len(), 60);
        assert_eq!(budget.used(), 60);
        // A file that grew since it was counted is counted at what was read.
        std::fs::write(&a, [0u8; 90]).unwrap();
        assert_eq!(budget.read_bytes(&a, 1000, true).unwrap().len(), 90);
        assert_eq!(budget.used(), 90);
        // A FIFO is refused without being opened (which would block).
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = budget.reserve(&fifo, 1000).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
    }

    #[test]
    fn files_up_to_the_limit_are_read_and_larger_ones_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f.json");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_text(&f, 10).unwrap(), "0123456789");
        let e = read_text(&f, 9).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(
            e.to_string().contains("larger than 9 bytes (10 bytes)"),
            "{e}"
        );
    }
}
