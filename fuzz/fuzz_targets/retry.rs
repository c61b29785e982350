//! File operations of the fuzz targets, tried again when a signal interrupts them.
//!
//! libFuzzer's timer signal (SIGALRM, armed by `-timeout`) can land while a target is
//! in a system call; the call then fails with `EINTR` (`ErrorKind::Interrupted`):
//! `std::fs::copy` in `damaged_runs` did, and the target panicked on it, a finding of
//! the harness rather than of irqsim. Every file operation of a target goes through
//! [`retry`], which repeats it until it ends otherwise.

/// `op` until it ends in anything but `ErrorKind::Interrupted`.
pub fn retry<T>(mut op: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    loop {
        match op() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}
