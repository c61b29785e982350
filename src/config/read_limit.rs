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
//! Limits, in bytes (stated in the README's "Limits" section):
//! - [`MAX_INPUT_BYTES`] (16 MiB) for what a user writes: scenarios, models, measured
//!   tables, `timeline.csv`;
//! - [`MAX_RESULT_BYTES`] (1 GiB) for what irqsim writes and reads back: `results.json`
//!   (`plot`, `compare`), checkpoint and shard files.

use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Largest scenario, model, measured table or timeline read [bytes]: 16 MiB, a
/// thousand times the largest shipped scenario.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Largest results.json, checkpoint or shard file read back [bytes]: 1 GiB.
pub const MAX_RESULT_BYTES: u64 = 1 << 30;

/// Why a file is refused before its content is read.
#[derive(Debug, thiserror::Error)]
pub enum ReadLimitError {
    /// Not a regular file.
    #[error(
        "is {0}, not a regular file: irqsim reads only regular files (a FIFO, a device such as /dev/zero or a directory, also behind a symbolic link, is refused)"
    )]
    NotRegular(&'static str),
    /// Larger than the limit.
    #[error("is larger than {limit} bytes ({size} bytes), the most irqsim reads from such a file")]
    TooLarge {
        /// Its size, or at least how much could be read [bytes].
        size: u64,
        /// The limit [bytes].
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

/// The bytes of the regular file `path`, at most `limit` of them; an error of kind
/// `InvalidInput` (carrying a [`ReadLimitError`]) for anything else.
pub fn read_bytes(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            ReadLimitError::NotRegular(kind(meta.file_type())),
        ));
    }
    let too_large = |size| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            ReadLimitError::TooLarge { size, limit },
        )
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The text of the regular file `path`, at most `limit` bytes of UTF-8.
pub fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
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
