//! `sysctl net.core`: the kernel's receive-path knobs.
//!
//! Format (procps `sysctl.c`, `ReadSetting`: `"%s = %s\n"`, name and value): one `key =
//! value` per line; `sysctl -a` works too (every key outside `net.core.` is understood
//! and not used). Read, from `net/core/sysctl_net_core.c` (Linux 4.18 to 6.x):
//!
//! - `net.core.netdev_budget` (frames one NET_RX softirq run may take, default 300);
//! - `net.core.netdev_budget_usecs` (its time limit \[us\], since 4.12, default 2 jiffies);
//! - `net.core.dev_weight` (frames one poll of a CPU's backlog takes, default 64);
//! - `net.core.netdev_max_backlog` (each CPU's backlog \[frames\], default 1000);
//! - `net.core.busy_poll`, `net.core.busy_read` (socket busy polling \[us\], default 0).
//!
//! A malformed value of one of these is a fault; a missing one keeps the model's
//! default (the Linux default) and says so. A line that is not `key = value` is
//! reported.

use super::dump::{Dump, Findings, Sourced, key_value, whole};
use std::collections::BTreeMap;

/// The keys read, without their `net.core.` prefix.
pub const KEYS: [&str; 6] = [
    "netdev_budget",
    "netdev_budget_usecs",
    "dev_weight",
    "netdev_max_backlog",
    "busy_poll",
    "busy_read",
];

/// The values read, by key without `net.core.`.
pub type Sysctl = BTreeMap<&'static str, Sourced<u64>>;

/// Parse `sysctl`'s output.
pub fn parse(d: &Dump, f: &mut Findings) -> Sysctl {
    let mut out = Sysctl::new();
    let (mut other_core, mut other) = (0, 0);
    for (n, line) in d.numbered() {
        let Some((k, v)) = key_value(line, '=') else {
            f.unparsed(d, n, "not `key = value`");
            continue;
        };
        let Some(short) = k.strip_prefix("net.core.") else {
            other += 1;
            continue;
        };
        let Some(key) = KEYS.iter().find(|&&x| x == short) else {
            other_core += 1;
            continue;
        };
        match whole(v).filter(|&x| x <= u32::MAX as u64) {
            Some(x) if !out.contains_key(key) => {
                out.insert(key, d.sourced(n, x));
            }
            Some(_) => f.unparsed(d, n, "the same key a second time: the first is used"),
            None => f.fault_at(d, n, format!("`{k}` is not a whole number")),
        }
    }
    f.ignore(&d.name, other_core, "other net.core keys");
    f.ignore(&d.name, other, "keys outside net.core");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_receive_knobs_are_read_with_their_lines() {
        // `sysctl net.core` on Linux 5.15 (excerpt, in its order).
        let text = "net.core.busy_poll = 0\nnet.core.busy_read = 50\nnet.core.default_qdisc = fq_codel\nnet.core.dev_weight = 64\nnet.core.netdev_budget = 600\nnet.core.netdev_budget_usecs = 8000\nnet.core.netdev_max_backlog = 1000\nnet.core.rps_sock_flow_entries = 0\n";
        let mut f = Findings::default();
        let s = parse(&Dump::from_text("sysctl-net.core", text), &mut f);
        assert!(f.faults.is_empty() && f.unparsed.is_empty());
        assert_eq!(s["netdev_budget"].value, 600);
        assert_eq!(s["netdev_budget"].at.line, 5);
        assert_eq!(s["busy_read"].value, 50);
        assert_eq!(s.len(), 6);
        assert_eq!(f.ignored[0].1, 2);
    }

    #[test]
    fn a_bad_value_refuses_and_a_stray_line_is_reported() {
        let text = "net.core.netdev_budget = lots\nsysctl: permission denied on key 'net.core.bpf_jit_harden'\n";
        let mut f = Findings::default();
        parse(&Dump::from_text("sysctl-net.core", text), &mut f);
        assert_eq!(f.faults.len(), 1);
        assert_eq!(f.unparsed.len(), 1);
        assert_eq!(f.unparsed[0].at.line, 2);
    }
}
