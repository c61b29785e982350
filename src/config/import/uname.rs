//! `uname -r`: the kernel's release, for what changed between versions.
//!
//! Format: one line, `<major>.<minor>[.<patch>][-<extra>]` (`4.18.0-rc7+`,
//! `5.15.0-91-generic`; the kernel's `UTS_RELEASE`). Read: major and minor. It decides
//! `kernel.napi.net_rx_action`: `spliced` from 4.0 (commit d75b1ade, "net: less
//! interrupt masking in NAPI"), `live-list` before.

use super::dump::{Dump, Findings, Sourced, whole};

/// Parse `uname -r`: (major, minor), or a reported line.
pub fn parse(d: &Dump, f: &mut Findings) -> Option<Sourced<(u64, u64)>> {
    let (n, line) = d.numbered().next()?;
    let mut it = line.trim().split(['.', '-']);
    match (it.next().and_then(whole), it.next().and_then(whole)) {
        (Some(a), Some(b)) => Some(d.sourced(n, (a, b))),
        _ => {
            f.unparsed(d, n, "not a kernel release such as `5.15.0-91-generic`");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_read() {
        let mut f = Findings::default();
        let r = parse(&Dump::from_text("uname-r", "4.18.0-rc7+\n"), &mut f).unwrap();
        assert_eq!(r.value, (4, 18));
        assert!(parse(&Dump::from_text("uname-r", "Linux\n"), &mut f).is_none());
        assert_eq!(f.unparsed.len(), 1);
    }
}
