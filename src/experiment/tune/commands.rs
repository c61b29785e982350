//! The Linux commands that apply a setting of [`super::knobs`] to a real host: a
//! `commands.sh` to read, then run as root.
//!
//! Syntax, checked against the tools' own sources:
//! - `ethtool -C IF adaptive-rx on|off rx-usecs N rx-frames N` (ethtool's
//!   `do_scoalesce`, the `-C` option table of ethtool.c; parameters in any order, one
//!   command per interface), `ethtool -L IF combined N` (`do_schannels`),
//!   `ethtool -G IF rx N` (`do_sring`);
//! - `sysctl -w net.core.NAME=N` for the sysctls of net/core/sysctl_net_core.c's
//!   `net_core_table` (`netdev_budget` L512, `netdev_budget_usecs` L535, `dev_weight`
//!   L346, `netdev_max_backlog` L367 at Linux 5.11; [`SYSCTLS`] lists them);
//! - writes of a decimal number into `/sys/class/net/IF/{napi_defer_hard_irqs,
//!   gro_flush_timeout,threaded}` (net/core/net-sysfs.c) and of a hexadecimal CPU mask
//!   into `/sys/class/net/IF/queues/rx-K/rps_cpus` (`store_rps_map`, bitmap_parse);
//! - a CPU list into `/proc/irq/N/smp_affinity_list` (kernel/irq/proc.c), N found in
//!   `/proc/interrupts` by the vector's name, which the driver sets ([`vector_name`]).
//!
//! The interfaces are named as in the model (`eth0`): `IF_<name>` variables at the top
//! of the script hold them, so that a host whose ports have other names edits one line.

use super::knobs::{KnobId, Scope, knob, tuned_nics};
use crate::config::model::ModelConfig;
use crate::model::nic::LinuxDriver;
use std::fmt::Write as _;

/// The sysctls the commands set: each exists in Linux 5.11's net/core/sysctl_net_core.c
/// `net_core_table` (line of its `.procname`).
pub const SYSCTLS: [(&str, u32); 4] = [
    ("net.core.netdev_budget", 512),
    ("net.core.netdev_budget_usecs", 535),
    ("net.core.dev_weight", 346),
    ("net.core.netdev_max_backlog", 367),
];

/// The ethtool parameters the commands use, per option: each one ethtool accepts
/// (ethtool.c's `-C`, `-L` and `-G` parameter tables).
pub const ETHTOOL_PARAMS: [(&str, &[&str]); 3] = [
    ("-C", &["adaptive-rx", "rx-usecs", "rx-frames"]),
    ("-L", &["combined"]),
    ("-G", &["rx"]),
];

/// The name of queue `q`'s interrupt vector as `/proc/interrupts` shows it, for the
/// drivers the knobs support: mlx5 `mlx5_comp<q>@pci:<PCI address>`
/// (mlx5_irq_table's `mlx5_comp%d@pci:%s`), ixgbe `<IF>-TxRx-<q>`
/// (ixgbe_request_msix_irqs). A shell word, the interface's variable expanded.
pub fn vector_name(driver: Option<LinuxDriver>, var: &str, q: u16) -> String {
    match driver {
        Some(LinuxDriver::Mlx5) => {
            format!("mlx5_comp{q}@pci:$(basename \"$(readlink -f /sys/class/net/${var}/device)\")")
        }
        _ => format!("${{{var}}}-TxRx-{q}"),
    }
}

/// The shell variable holding interface `name`.
fn var(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("IF_{clean}")
}

/// A CPU mask as rps_cpus takes it: hexadecimal, 32-bit words separated by commas.
pub fn cpu_mask(cpus: &[u16]) -> String {
    let top = cpus.iter().copied().max().map_or(0, |c| c as usize / 32);
    let mut words = vec![0u32; top + 1];
    for &c in cpus {
        words[c as usize / 32] |= 1 << (c % 32);
    }
    words
        .iter()
        .rev()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                format!("{w:x}")
            } else {
                format!("{w:08x}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The commands that set `setting` (knob, value) on the host `m` describes (`m` is the
/// model after the setting: its interfaces' queues are the new ones). `header` goes into
/// the opening comment.
pub fn script(m: &ModelConfig, setting: &[(KnobId, i64)], header: &str) -> String {
    let mut s = String::from("#!/bin/sh\n");
    for line in header.lines() {
        let _ = writeln!(s, "# {line}");
    }
    s.push_str("# Run as root. The interfaces as the model names them; edit to the host's.\n");
    s.push_str("set -e\n");
    let nics = tuned_nics(m);
    for &i in &nics {
        let _ = writeln!(s, "{}={}", var(&m.nics[i].name), m.nics[i].name);
    }
    let get = |id: KnobId| setting.iter().find(|(k, _)| *k == id).map(|(_, v)| *v);
    let mut irq_fn = false;
    for &i in &nics {
        let n = &m.nics[i];
        let v = var(&n.name);
        // Channels and rings first: they reset the queues the other settings name.
        if let Some(c) = get(KnobId::Combined) {
            let _ = writeln!(s, "ethtool -L \"${v}\" combined {c}");
        }
        if let Some(r) = get(KnobId::RxRing) {
            let _ = writeln!(s, "ethtool -G \"${v}\" rx {r}");
        }
        let mut coal = Vec::new();
        let usecs = get(KnobId::RxUsecs);
        let frames = get(KnobId::RxFrames);
        match get(KnobId::AdaptiveRx) {
            Some(1) => coal.push("adaptive-rx on".to_string()),
            Some(_) => coal.push("adaptive-rx off".to_string()),
            None if (usecs.is_some() || frames.is_some())
                && n.linux_driver == Some(LinuxDriver::Mlx5) =>
            {
                coal.push("adaptive-rx off".to_string())
            }
            None => {}
        }
        if get(KnobId::AdaptiveRx) != Some(1) {
            if let Some(u) = usecs {
                coal.push(format!("rx-usecs {u}"));
            }
            if let Some(f) = frames {
                coal.push(format!("rx-frames {f}"));
            }
        }
        if !coal.is_empty() {
            let _ = writeln!(s, "ethtool -C \"${v}\" {}", coal.join(" "));
        }
        for (id, file) in [
            (KnobId::NapiDeferHardIrqs, "napi_defer_hard_irqs"),
            (KnobId::GroFlushTimeout, "gro_flush_timeout"),
            (KnobId::Threaded, "threaded"),
        ] {
            if let Some(x) = get(id) {
                let _ = writeln!(s, "echo {x} > \"/sys/class/net/${v}/{file}\"");
            }
        }
        if let Some(r) = get(KnobId::Rps) {
            let cpus: Vec<u16> = (0..r as u16).collect();
            let mask = if cpus.is_empty() {
                "0".to_string()
            } else {
                cpu_mask(&cpus)
            };
            for q in 0..n.queues {
                let _ = writeln!(
                    s,
                    "echo {mask} > \"/sys/class/net/${v}/queues/rx-{q}/rps_cpus\""
                );
            }
        }
    }
    for (id, name) in [
        (KnobId::NetdevBudget, SYSCTLS[0].0),
        (KnobId::NetdevBudgetUsecs, SYSCTLS[1].0),
        (KnobId::DevWeight, SYSCTLS[2].0),
        (KnobId::NetdevMaxBacklog, SYSCTLS[3].0),
    ] {
        debug_assert_eq!(knob(id).scope, Scope::Host);
        if let Some(x) = get(id) {
            let _ = writeln!(s, "sysctl -w {name}={x}");
        }
    }
    if let Some(spread) = get(KnobId::IrqAffinity) {
        for &i in &nics {
            let n = &m.nics[i];
            for q in 0..n.queues {
                if !irq_fn {
                    s.push_str(
                        "# The IRQ of a vector, by the name the driver gave it in /proc/interrupts.\n\
                         irq_of() { awk -v n=\"$1\" '$NF == n { sub(\":\", \"\", $1); print $1 }' /proc/interrupts; }\n",
                    );
                    irq_fn = true;
                }
                let core = i64::from(q) % spread.max(1);
                let _ = writeln!(
                    s,
                    "echo {core} > \"/proc/irq/$(irq_of \"{}\")/smp_affinity_list\"",
                    vector_name(n.linux_driver, &var(&n.name), q)
                );
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_hex_words() {
        assert_eq!(cpu_mask(&[0, 1, 2, 3]), "f");
        assert_eq!(cpu_mask(&[0, 5]), "21");
        assert_eq!(cpu_mask(&[33]), "2,00000000");
    }

    /// The script for a setting of every knob on the XDP testbed's model: one ethtool
    /// command per option and interface, the sysctls by their kernel names.
    #[test]
    fn a_full_setting_renders() {
        let text = include_str!("../../../models/xeon-e5-1650v4-mlx5-linux.json");
        let mut m: ModelConfig = serde_json::from_str(text).expect("model");
        let setting = vec![
            (KnobId::RxUsecs, 8),
            (KnobId::RxFrames, 64),
            (KnobId::Combined, 2),
            (KnobId::RxRing, 2048),
            (KnobId::NetdevBudget, 600),
            (KnobId::NapiDeferHardIrqs, 2),
            (KnobId::Threaded, 1),
            (KnobId::Rps, 4),
            (KnobId::IrqAffinity, 2),
        ];
        for (k, v) in &setting {
            knob(*k).apply(&mut m, *v);
        }
        let s = script(&m, &setting, "test");
        assert!(s.contains("ethtool -L \"$IF_eth0\" combined 2\n"), "{s}");
        assert!(s.contains("ethtool -G \"$IF_eth1\" rx 2048\n"), "{s}");
        assert!(
            s.contains("ethtool -C \"$IF_eth0\" adaptive-rx off rx-usecs 8 rx-frames 64\n"),
            "{s}"
        );
        assert!(s.contains("sysctl -w net.core.netdev_budget=600\n"), "{s}");
        assert!(s.contains("echo f > \"/sys/class/net/$IF_eth0/queues/rx-1/rps_cpus\""));
        assert!(s.contains("echo 1 > \"/sys/class/net/$IF_eth1/threaded\""));
        assert!(s.contains("mlx5_comp1@pci:"), "{s}");
        assert_eq!(s.matches("smp_affinity_list").count(), 4, "{s}");
    }
}
