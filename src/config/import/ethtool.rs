//! `ethtool`'s outputs for one interface: `-i` (driver), `-g` (rings), `-l` (channels),
//! `-c` (coalescing) and, optionally, no option (link settings, for the speed).
//!
//! Formats, from ethtool's sources (ethtool 5.6 to 6.x, netlink; the older ioctl code
//! prints the same lines with `0` where netlink prints `n/a`):
//!
//! - `-i` (`ethtool.c`, `dump_drvinfo`): `driver: %s`, `version: %s`,
//!   `firmware-version: %s`, `expansion-rom-version: %s`, `bus-info: %s`,
//!   `supports-...: yes|no`;
//! - `-g` (`netlink/rings.c`, `rings_reply_cb`): `Ring parameters for %s:`, then
//!   `Pre-set maximums:` and `Current hardware settings:`, each with `RX:\t\t%u`, `RX
//!   Mini:\t%u`, `RX Jumbo:\t%u`, `TX:\t\t%u` (`n/a` when the driver does not say; later
//!   versions add `RX Buf Len:`, `CQE Size:`, `TX Push:`... under the current settings);
//! - `-l` (`netlink/channels.c`, `channels_reply_cb`): `Channel parameters for %s:`,
//!   the same two sections with `RX:`, `TX:`, `Other:`, `Combined:`;
//! - `-c` (`netlink/coalesce.c`, `coalesce_reply_cb`): `Coalesce parameters for %s:`,
//!   `Adaptive RX: %s  TX: %s` (`on`, `off`, `n/a`), `stats-block-usecs: %u`, ...,
//!   `rx-usecs: %u`, `rx-frames: %u`, ..., `tx-usecs: %u`, `tx-frames: %u`, ...; since
//!   5.15 also `CQE mode RX: %s  TX: %s`;
//! - no option (`ethtool.c`, `dump_link_usettings`; `netlink/settings.c`): `Settings
//!   for %s:`, then tab-indented fields, of which `Speed: %uMb/s` (`Unknown!` with the
//!   link down) is read; the rest, with its continuation lines, is not used.
//!
//! A header naming another interface than the file's name is a fault (the dump was
//! mixed up). A needed value (`driver:`, the current RX and TX ring sizes, `rx-usecs`,
//! `rx-frames`, `Adaptive RX` and the channel counts when present) that is malformed is
//! a fault; any other line that is not `Key: value` is reported.

use super::dump::{Dump, Findings, Sourced, key_value, whole};
use std::collections::BTreeMap;

/// A number, or `n/a` (the driver does not report it).
pub type Num = Option<u64>;

/// An `on`/`off` flag, or `n/a`.
pub type Flag = Option<bool>;

/// Check the first line `<what> parameters for <iface>:` (`-g`, `-l`, `-c`) or
/// `Settings for <iface>:`; true if the file has it. A different interface is a fault.
fn header(d: &Dump, iface: &str, what: &str, f: &mut Findings) -> Option<usize> {
    let (n, line) = d.numbered().next()?;
    let name = line.trim().strip_prefix(what)?.strip_suffix(':')?.trim();
    if name != iface {
        f.fault_at(
            d,
            n,
            format!("this is the output for `{name}`, the file's name says `{iface}`"),
        );
    }
    Some(n)
}

/// A value as `show_u32` prints it: a number or `n/a`.
fn num(v: &str) -> Option<Num> {
    if v == "n/a" {
        Some(None)
    } else {
        whole(v).map(Some)
    }
}

/// The two sections of `-g` and `-l`: `Pre-set maximums:` and `Current hardware
/// settings:`, each a map of its `Key: value` lines.
#[derive(Clone, Debug, Default)]
struct Sections {
    max: BTreeMap<String, Sourced<String>>,
    current: BTreeMap<String, Sourced<String>>,
}

fn sections(d: &Dump, iface: &str, what: &str, f: &mut Findings) -> Option<Sections> {
    let first = header(d, iface, what, f);
    if first.is_none() {
        f.fault(
            &d.name,
            format!(
                "no `{what} {iface}:` line: not the output of the ethtool command it is named after"
            ),
        );
        return None;
    }
    let mut s = Sections::default();
    let mut in_current = None;
    for (n, line) in d.numbered().filter(|(n, _)| Some(*n) != first) {
        match line.trim() {
            "Pre-set maximums:" => in_current = Some(false),
            "Current hardware settings:" => in_current = Some(true),
            _ => match (key_value(line, ':'), in_current) {
                (Some((k, v)), Some(cur)) => {
                    let map = if cur { &mut s.current } else { &mut s.max };
                    map.entry(k.to_string())
                        .or_insert_with(|| d.sourced(n, v.to_string()));
                }
                (Some(_), None) => f.unparsed(d, n, "before any section"),
                (None, _) => f.unparsed(d, n, "not `Key: value`"),
            },
        }
    }
    Some(s)
}

/// A needed numeric field of a section: a fault when malformed, `None` when absent.
fn field(
    d: &Dump,
    map: &BTreeMap<String, Sourced<String>>,
    key: &str,
    f: &mut Findings,
) -> Option<Sourced<Num>> {
    let s = map.get(key)?;
    match num(&s.value) {
        Some(v) => Some(Sourced {
            value: v,
            at: s.at.clone(),
            text: s.text.clone(),
        }),
        None => {
            f.fault_at(d, s.at.line, format!("`{key}` is not a number or n/a"));
            None
        }
    }
}

/// `ethtool -g`: the current and the largest ring sizes \[descriptors\].
#[derive(Clone, Debug, Default)]
pub struct Rings {
    /// Current RX ring.
    pub rx: Option<Sourced<Num>>,
    /// Current TX ring.
    pub tx: Option<Sourced<Num>>,
    /// Largest RX ring the driver allows.
    pub rx_max: Option<Sourced<Num>>,
    /// Largest TX ring.
    pub tx_max: Option<Sourced<Num>>,
}

/// Parse `ethtool -g <iface>`.
pub fn rings(d: &Dump, iface: &str, f: &mut Findings) -> Rings {
    let Some(s) = sections(d, iface, "Ring parameters for", f) else {
        return Rings::default();
    };
    Rings {
        rx: field(d, &s.current, "RX", f),
        tx: field(d, &s.current, "TX", f),
        rx_max: field(d, &s.max, "RX", f),
        tx_max: field(d, &s.max, "TX", f),
    }
}

/// `ethtool -l`: the current channels.
#[derive(Clone, Debug, Default)]
pub struct Channels {
    /// Whether the file has the `Current hardware settings:` section (a driver without
    /// channel support prints only the header, and an error on stderr).
    pub reported: bool,
    /// RX-only channels.
    pub rx: Option<Sourced<Num>>,
    /// TX-only channels.
    pub tx: Option<Sourced<Num>>,
    /// Channels with an RX and a TX queue.
    pub combined: Option<Sourced<Num>>,
}

/// Parse `ethtool -l <iface>`.
pub fn channels(d: &Dump, iface: &str, f: &mut Findings) -> Channels {
    let Some(s) = sections(d, iface, "Channel parameters for", f) else {
        return Channels::default();
    };
    let max_other = s.max.len();
    f.ignore(
        &d.name,
        max_other,
        "pre-set maximums (the current settings are used)",
    );
    Channels {
        reported: !s.current.is_empty(),
        rx: field(d, &s.current, "RX", f),
        tx: field(d, &s.current, "TX", f),
        combined: field(d, &s.current, "Combined", f),
    }
}

/// `ethtool -c`: the coalescing parameters the model uses.
#[derive(Clone, Debug, Default)]
pub struct Coalesce {
    /// `Adaptive RX:`.
    pub adaptive_rx: Option<Sourced<Flag>>,
    /// `CQE mode RX:` (ethtool 5.15 on): the CQ period restarts with each completion.
    pub cqe_mode_rx: Option<Sourced<Flag>>,
    /// `rx-usecs:` \[us\].
    pub rx_usecs: Option<Sourced<Num>>,
    /// `rx-frames:` \[frames\].
    pub rx_frames: Option<Sourced<Num>>,
    /// `tx-usecs:` \[us\].
    pub tx_usecs: Option<Sourced<Num>>,
    /// `tx-frames:` \[frames\].
    pub tx_frames: Option<Sourced<Num>>,
}

/// `on`, `off` or `n/a`.
fn flag(v: &str) -> Option<Flag> {
    match v {
        "on" => Some(Some(true)),
        "off" => Some(Some(false)),
        "n/a" => Some(None),
        _ => None,
    }
}

/// The RX flag of `Adaptive RX: on  TX: off` (the part after the key).
fn rx_flag(v: &str) -> Option<Flag> {
    let mut t = v.split_whitespace();
    let rx = flag(t.next()?)?;
    match (t.next(), t.next(), t.next()) {
        (Some("TX:"), Some(tx), None) if flag(tx).is_some() => Some(rx),
        (None, _, _) => Some(rx),
        _ => None,
    }
}

/// Parse `ethtool -c <iface>`.
pub fn coalesce(d: &Dump, iface: &str, f: &mut Findings) -> Coalesce {
    let first = header(d, iface, "Coalesce parameters for", f);
    let mut c = Coalesce::default();
    if first.is_none() {
        f.fault(
            &d.name,
            format!("no `Coalesce parameters for {iface}:` line: not the output of ethtool -c"),
        );
        return c;
    }
    let mut unused = 0;
    for (n, line) in d.numbered().filter(|(n, _)| Some(*n) != first) {
        let Some((k, v)) = key_value(line, ':') else {
            f.unparsed(d, n, "not `Key: value`");
            continue;
        };
        let slot = match k {
            "Adaptive RX" | "CQE mode RX" => {
                let target = if k == "Adaptive RX" {
                    &mut c.adaptive_rx
                } else {
                    &mut c.cqe_mode_rx
                };
                match rx_flag(v) {
                    Some(x) => *target = Some(d.sourced(n, x)),
                    None => f.fault_at(d, n, format!("`{k}` is not `on`, `off` or `n/a`")),
                }
                continue;
            }
            "rx-usecs" => &mut c.rx_usecs,
            "rx-frames" => &mut c.rx_frames,
            "tx-usecs" => &mut c.tx_usecs,
            "tx-frames" => &mut c.tx_frames,
            _ => {
                unused += 1;
                continue;
            }
        };
        match num(v) {
            Some(x) => *slot = Some(d.sourced(n, x)),
            None => f.fault_at(d, n, format!("`{k}` is not a number or n/a")),
        }
    }
    f.ignore(
        &d.name,
        unused,
        "other coalescing fields (irq, low, high, stats-block...)",
    );
    c
}

/// `ethtool -i`: the driver.
#[derive(Clone, Debug, Default)]
pub struct DriverInfo {
    /// `driver:`, e.g. `mlx5_core`.
    pub driver: Option<Sourced<String>>,
    /// `version:`.
    pub version: Option<Sourced<String>>,
    /// `firmware-version:`.
    pub firmware: Option<Sourced<String>>,
    /// `bus-info:`, e.g. `0000:03:00.0`.
    pub bus: Option<Sourced<String>>,
}

/// Parse `ethtool -i <iface>`. A missing or empty `driver:` is a fault.
pub fn driver_info(d: &Dump, f: &mut Findings) -> DriverInfo {
    let mut i = DriverInfo::default();
    let mut unused = 0;
    for (n, line) in d.numbered() {
        let Some((k, v)) = key_value(line, ':') else {
            f.unparsed(d, n, "not `key: value`");
            continue;
        };
        let slot = match k {
            "driver" => &mut i.driver,
            "version" => &mut i.version,
            "firmware-version" => &mut i.firmware,
            "bus-info" => &mut i.bus,
            _ => {
                unused += 1;
                continue;
            }
        };
        if slot.is_none() && !v.is_empty() {
            *slot = Some(d.sourced(n, v.to_string()));
        }
    }
    f.ignore(&d.name, unused, "other driver fields (supports-...)");
    if i.driver.is_none() {
        f.fault(
            &d.name,
            "no `driver:` line with a name: the driver is required",
        );
    }
    i
}

/// Parse `ethtool <iface>` for its `Speed:` [Mbit/s]: `Some(None)` for `Unknown!`
/// (`dump_link_usettings` prints it for `SPEED_UNKNOWN`: a link that is down, or a
/// virtual NIC that reports no speed -- virtio_net without `VIRTIO_NET_F_SPEED_DUPLEX`,
/// as on this repository's recorded KVM guest); a malformed speed is reported and gives
/// none.
pub fn speed(d: &Dump, iface: &str, f: &mut Findings) -> Option<Sourced<Option<u64>>> {
    if header(d, iface, "Settings for", f).is_none() {
        f.unparsed(
            d,
            1,
            format!("no `Settings for {iface}:` line: not ethtool's output; no speed read"),
        );
        return None;
    }
    let (n, v) = d.numbered().find_map(|(n, l)| {
        key_value(l, ':')
            .filter(|(k, _)| *k == "Speed")
            .map(|(_, v)| (n, v))
    })?;
    if v == "Unknown!" {
        return Some(d.sourced(n, None));
    }
    match v.strip_suffix("Mb/s").and_then(whole).filter(|&x| x > 0) {
        Some(x) => Some(d.sourced(n, Some(x))),
        None => {
            f.unparsed(
                d,
                n,
                "not a speed in Mb/s nor `Unknown!`: no line rate read",
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Outputs of ethtool 5.16 on a ConnectX-5 port (mlx5_core), as the tool prints them
    // (tabs included).
    const G: &str = "Ring parameters for eth0:\nPre-set maximums:\nRX:\t\t8192\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t8192\nCurrent hardware settings:\nRX:\t\t1024\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t1024\n";
    const L: &str = "Channel parameters for eth0:\nPre-set maximums:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\tn/a\nCombined:\t63\nCurrent hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\tn/a\nCombined:\t6\n";
    const C: &str = "Coalesce parameters for eth0:\nAdaptive RX: on  TX: on\nstats-block-usecs: n/a\nsample-interval: n/a\npkt-rate-low: n/a\npkt-rate-high: n/a\n\nrx-usecs: 8\nrx-frames: 128\nrx-usecs-irq: n/a\nrx-frames-irq: n/a\n\ntx-usecs: 8\ntx-frames: 128\ntx-usecs-irq: n/a\ntx-frames-irq: n/a\n\nrx-usecs-low: n/a\nrx-frame-low: n/a\ntx-usecs-low: n/a\ntx-frame-low: n/a\n\nrx-usecs-high: n/a\nrx-frame-high: n/a\ntx-usecs-high: n/a\ntx-frame-high: n/a\n\nCQE mode RX: on  TX: off\n\n";
    const I: &str = "driver: mlx5_core\nversion: 5.15.0-91-generic\nfirmware-version: 16.35.2000 (MT_0000000012)\nexpansion-rom-version: \nbus-info: 0000:03:00.0\nsupports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: yes\n";

    #[test]
    fn rings_are_read_from_the_current_settings() {
        let mut f = Findings::default();
        let r = rings(&Dump::from_text("ethtool-g-eth0", G), "eth0", &mut f);
        assert!(f.faults.is_empty() && f.unparsed.is_empty(), "{f:?}");
        assert_eq!(r.rx.as_ref().unwrap().value, Some(1024));
        assert_eq!(r.rx.as_ref().unwrap().at.line, 8);
        assert_eq!(r.rx_max.unwrap().value, Some(8192));
        assert_eq!(r.tx.unwrap().at.line, 11);
    }

    #[test]
    fn channels_are_read_from_the_current_settings() {
        let mut f = Findings::default();
        let c = channels(&Dump::from_text("ethtool-l-eth0", L), "eth0", &mut f);
        assert!(f.faults.is_empty() && f.unparsed.is_empty(), "{f:?}");
        assert_eq!(c.combined.as_ref().unwrap().value, Some(6));
        assert_eq!(c.combined.unwrap().at.line, 11);
        assert_eq!(c.rx.unwrap().value, None);
        assert!(c.reported);
    }

    #[test]
    fn coalescing_reads_the_flags_and_the_rx_values() {
        let mut f = Findings::default();
        let c = coalesce(&Dump::from_text("ethtool-c-eth0", C), "eth0", &mut f);
        assert!(f.faults.is_empty() && f.unparsed.is_empty(), "{f:?}");
        assert_eq!(c.adaptive_rx.unwrap().value, Some(true));
        assert_eq!(c.cqe_mode_rx.unwrap().value, Some(true));
        assert_eq!(c.rx_usecs.as_ref().unwrap().value, Some(8));
        assert_eq!(c.rx_usecs.unwrap().at.line, 8);
        assert_eq!(c.rx_frames.unwrap().value, Some(128));
    }

    #[test]
    fn driver_info_reads_the_driver_and_the_bus() {
        let mut f = Findings::default();
        let i = driver_info(&Dump::from_text("ethtool-i-eth0", I), &mut f);
        assert!(f.faults.is_empty() && f.unparsed.is_empty(), "{f:?}");
        assert_eq!(i.driver.unwrap().value, "mlx5_core");
        assert_eq!(i.bus.unwrap().value, "0000:03:00.0");
    }

    #[test]
    fn the_speed_is_read_and_a_down_link_reported() {
        let up = "Settings for eth0:\n\tSupported ports: [ FIBRE ]\n\tSupported link modes:   10000baseKR/Full\n\t                        25000baseCR/Full\n\tSpeed: 100000Mb/s\n\tDuplex: Full\n\tLink detected: yes\n";
        let mut f = Findings::default();
        let s = speed(&Dump::from_text("ethtool-eth0", up), "eth0", &mut f).unwrap();
        assert_eq!((s.value, s.at.line), (Some(100_000), 5));
        // `Unknown!` is understood: a speed the NIC does not report.
        let down = "Settings for eth0:\n\tSpeed: Unknown!\n\tLink detected: no\n";
        let s = speed(&Dump::from_text("ethtool-eth0", down), "eth0", &mut f).unwrap();
        assert_eq!((s.value, s.at.line), (None, 2));
        assert!(f.unparsed.is_empty());
        let odd = "Settings for eth0:\n\tSpeed: fast\n";
        assert!(speed(&Dump::from_text("ethtool-eth0", odd), "eth0", &mut f).is_none());
        assert_eq!(f.unparsed[0].at.line, 2);
    }

    #[test]
    fn a_mixed_up_dump_and_malformed_values_refuse() {
        let mut f = Findings::default();
        rings(&Dump::from_text("ethtool-g-eth1", G), "eth1", &mut f);
        assert!(f.faults[0].reason.contains("`eth0`"), "{f:?}");
        let mut f = Findings::default();
        let bad = G.replace("RX:\t\t1024", "RX:\t\tmany");
        rings(&Dump::from_text("ethtool-g-eth0", &bad), "eth0", &mut f);
        assert_eq!(f.faults[0].line.as_ref().unwrap().0, 8);
        let mut f = Findings::default();
        let bad = C.replace("Adaptive RX: on  TX: on", "Adaptive RX: maybe  TX: on");
        coalesce(&Dump::from_text("ethtool-c-eth0", &bad), "eth0", &mut f);
        assert_eq!(f.faults[0].line.as_ref().unwrap().0, 2);
        let mut f = Findings::default();
        let odd = C.replace("sample-interval: n/a", "something odd");
        coalesce(&Dump::from_text("ethtool-c-eth0", &odd), "eth0", &mut f);
        assert!(f.faults.is_empty());
        assert_eq!(f.unparsed[0].at.line, 4);
    }
}
