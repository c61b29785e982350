//! The output directory's lock: one irqsim command at a time writes into a directory.
//!
//! Two runs into one `--out` used to both succeed, and the results.json of the second
//! (seed 2) held points of the first (seed 1): each wrote its runs into the same
//! `.checkpoint/` and resumed the other's. Every command that writes into an
//! output directory (`run`, `run --shard`, `merge`, `plot`, `compare`, `fit`, `run
//! --trace`) holds an advisory lock ([`std::fs::File::try_lock`], `flock(2)` on Linux)
//! on [`FILE`] in it for as long as it writes there; a second command finds it held and
//! is refused, with the holder's process id, which the holder writes into the file.
//!
//! The lock is released by the kernel when its holder exits, however it exits, so a
//! killed run leaves at most the file, which the next command locks and reuses. A
//! command that ends removes the file first, then unlocks: an output directory holds
//! the same files whether one command or several wrote it (the byte-for-byte
//! comparison of `.ci/run` between a single run and a merge of shards). A command that
//! opened the file just before it was removed finds, once it holds the lock, that the
//! file it locked is no longer the one at [`FILE`], and locks the new one instead.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Name of the lock file in the output directory.
pub const FILE: &str = ".irqsim.lock";

/// Why the output directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another command holds it (a problem of the command line: exit code 2).
    #[error(
        "{dir} is in use by another irqsim command (pid {pid}, written in {file}); wait for \
         it to finish or give another --out"
    )]
    Held {
        /// The output directory.
        dir: String,
        /// The lock file.
        file: String,
        /// The holder's process id as it wrote it (`unknown` if it has not yet).
        pid: String,
    },
    /// The directory or the lock file cannot be created or locked (a read-only or full
    /// file system, a link where the lock file should be: exit code 1).
    #[error("cannot lock the output directory: {file}: {source}")]
    Io {
        /// The lock file (or the directory, when it cannot be created).
        file: String,
        /// The OS error.
        source: io::Error,
    },
}

/// The held lock of an output directory; released (its file removed) when dropped.
#[derive(Debug)]
pub struct OutLock {
    file: File,
    path: PathBuf,
}

impl OutLock {
    /// The directory it locks.
    pub fn dir(&self) -> &Path {
        self.path
            .parent()
            .expect("the lock file is in the directory it locks")
    }

    /// Create `dir` if needed and lock it for this process, or say who holds it.
    pub fn acquire(dir: &Path) -> Result<OutLock, LockError> {
        let path = dir.join(FILE);
        let io_err = |p: &Path| {
            let file = p.display().to_string();
            move |source| LockError::Io { file, source }
        };
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                // Never through a link: the pid would be written wherever it points.
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(&path)
                .map_err(io_err(&path))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    // The holder writes a pid of a few bytes.
                    let _ = (&file).take(64).read_to_string(&mut text);
                    let pid = match text.trim() {
                        "" => "unknown".to_string(),
                        t => t.to_string(),
                    };
                    return Err(LockError::Held {
                        dir: dir.display().to_string(),
                        file: path.display().to_string(),
                        pid,
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io_err(&path)(e)),
            }
            // The holder before us may have removed the file between our open and our
            // lock: then the lock is on a file no one else will find.
            let here = file.metadata().map_err(io_err(&path))?;
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.dev() == here.dev() && m.ino() == here.ino() => {}
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(&path)(e)),
            }
            let pid = format!("{}\n", std::process::id());
            if let Err(e) = file
                .set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| file.write_all(pid.as_bytes()))
            {
                // Removed while still locked (as on release): a full disk must not
                // keep an empty lock file, which no command wrote a pid in.
                let _ = std::fs::remove_file(&path);
                return Err(io_err(&path)(e));
            }
            return Ok(OutLock { file, path });
        }
    }
}

impl Drop for OutLock {
    fn drop(&mut self) {
        // Removed while still locked, so that no other command locks this file after
        // it is gone (see the module doc); closing the file then unlocks it. A file
        // that cannot be removed (the directory was made read-only meanwhile) stays,
        // unlocked, and the next command reuses it.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holders_pid_and_the_file_goes_with_the_lock() {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("out");
        let first = OutLock::acquire(&out).expect("the first lock");
        let text = std::fs::read_to_string(out.join(FILE)).expect("lock file");
        assert_eq!(text, format!("{}\n", std::process::id()));
        // flock(2) locks belong to the open file, so a second open in this process
        // conflicts as another process's would.
        match OutLock::acquire(&out) {
            Err(LockError::Held { pid, .. }) => assert_eq!(pid, std::process::id().to_string()),
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        assert!(
            !out.join(FILE).exists(),
            "the lock file is removed with the lock"
        );
        let again = OutLock::acquire(&out).expect("free again");
        drop(again);
        assert_eq!(std::fs::read_dir(&out).expect("list").count(), 0);
    }

    #[test]
    fn a_stale_lock_file_is_reused_and_a_link_is_not_followed() {
        let dir = tempfile::tempdir().expect("temp dir");
        // A file left by a killed command: no one holds its lock.
        std::fs::write(dir.path().join(FILE), "999999\n").expect("stale file");
        let lock = OutLock::acquire(dir.path()).expect("reused");
        drop(lock);
        // A link in its place: refused, and its target is left alone.
        let target = dir.path().join("target");
        std::fs::write(&target, "keep").expect("target");
        std::os::unix::fs::symlink(&target, dir.path().join(FILE)).expect("link");
        match OutLock::acquire(dir.path()) {
            Err(LockError::Io { source, .. }) => {
                assert_eq!(source.raw_os_error(), Some(libc::ELOOP), "{source}")
            }
            other => panic!("expected Io, got {other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&target).expect("target"), "keep");
    }
}
