//! `/proc/interrupts` and the vectors' CPU affinity: which CPU takes each queue's
//! interrupt.
//!
//! `/proc/interrupts` (`kernel/irq/proc.c`, `show_interrupts`, Linux 4.x to 6.x): a
//! header of `CPU<n>` columns, one per online CPU; then a row per interrupt, `%*d:`
//! (its number), one count per column, the chip's name (`IR-PCI-MSI`), the hardware
//! number and trigger (`1572864-edge`; older kernels `PCI-MSI-edge`), and the names of
//! its handlers, separated by `, ` (`mlx5_comp0@pci:0000:03:00.0`, `eth0-TxRx-0`).
//! Rows of the architecture's own counters (`NMI:`, `LOC:`, `ERR:`...) are understood
//! and not used; a numbered row with fewer counts than columns is reported.
//!
//! The affinities, in one file made by `grep -H . /proc/irq/*/smp_affinity_list
//! /proc/irq/*/effective_affinity_list`: lines `/proc/irq/<N>/smp_affinity_list:<list>`
//! (the CPUs the vector may go to, as the user or irqbalance set them;
//! `kernel/irq/proc.c`, `irq_affinity_list_proc_show`) and
//! `/proc/irq/<N>/effective_affinity_list:<list>` (since 4.15 on x86: the CPU the
//! vector is actually programmed to, `irq_effective_aff_list_proc_show`). Any other
//! line is reported.
//!
//! A queue's vector is found by its handler's name, as the drivers name them:
//! `<if>-TxRx-<k>` (ixgbe, igb, bnxt: `ixgbe_request_msix_irqs`), `<driver>-<if>-TxRx-<k>`
//! (i40e, ice: `i40e_vsi_request_irq_msix`), `<if>-rx-<k>` (a vector with an RX queue
//! only), `mlx5_comp<k>@pci:<bus-info>` (mlx5: channel `k` uses completion vector `k`,
//! `mlx5e_open_channel`; `mlx5_comp<k>` before the `@pci:` suffix, taken only when the
//! host has one mlx5 port), and `<if>` for a NIC with one vector. The paravirtual NICs
//! of virtual machines:
//!
//! - virtio_net: `virtio<N>-input.<k>` (virtio_pci's `vp_find_vqs_msix` names a
//!   virtqueue's vector `%s-%s`, the device's name and the queue's, `input.%u` from
//!   `virtnet_find_vqs`; N is the device's index on the virtio bus, which no ethtool
//!   output gives). The row is the port's when its chip is `PCI-MSIX-<bus-info>` (the
//!   per-device MSI domains of Linux 6.2 on, as in this repository's recorded guest),
//!   or, with the older global `PCI-MSI` chip, when the host has one virtio_net port.
//!   `virtio<N>-output.<k>` is the transmit queue's own vector, not the model's; a
//!   guest with too few vectors shares one, `virtio<N>-virtqueues`, which is not taken.
//! - ena (AWS): `<if>-Tx-Rx-<k>` (`ena_setup_io_intr`).
//! - gve (Google): `gve-ntfy-blk<b>@pci:<bus-info>` with `b` = the notify blocks / 2 +
//!   k (`gve_alloc_notify_blocks`, `gve_rx_idx_to_ntfy`: the first half of the blocks
//!   serve the transmit queues); the blocks are counted in the dump.
//! - vmxnet3 (VMware): `<if>-rxtx-<k>`, its default when the receive and transmit
//!   queues are as many (`VMXNET3_INTR_BUDDYSHARE`, `vmxnet3_request_irqs`); otherwise
//!   its `<if>-rx-<v>` counts vectors, not queues, and is not taken.

use super::dump::{At, CpuList, Dump, Findings, Sourced, cpu_list, whole};
use std::collections::BTreeMap;

/// One numbered row of `/proc/interrupts`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The interrupt's number.
    pub irq: u32,
    /// Its count in each CPU column (`%10u`, 32 bits), in the columns' order.
    pub counts: Vec<u64>,
    /// Its handlers' names and the chip's words, one token each (`,` removed).
    pub tokens: Vec<String>,
    /// Where.
    pub at: At,
}

/// `/proc/interrupts`: the CPU columns and the numbered rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interrupts {
    /// The CPU of each count column.
    pub cpus: Vec<u32>,
    /// The numbered rows.
    pub rows: Vec<Row>,
}

/// Parse `/proc/interrupts`. A file whose first line is not the `CPU<n>` header is
/// reported and gives nothing.
pub fn parse(d: &Dump, f: &mut Findings) -> Interrupts {
    let mut out = Interrupts::default();
    let mut lines = d.numbered();
    let Some((hn, header)) = lines.next() else {
        return out;
    };
    let cpus: Option<Vec<u32>> = header
        .split_whitespace()
        .map(|t| {
            t.strip_prefix("CPU")
                .and_then(whole)
                .and_then(|x| u32::try_from(x).ok())
        })
        .collect();
    match cpus {
        Some(c) if !c.is_empty() => out.cpus = c,
        _ => {
            f.unparsed(
                d,
                hn,
                "not the header of /proc/interrupts (`CPU0 CPU1 ...`): the file is not used",
            );
            return out;
        }
    }
    let mut arch = 0;
    for (n, line) in lines {
        let Some((label, rest)) = line.trim_start().split_once(':') else {
            f.unparsed(d, n, "not `<irq>: <counts> <chip> <names>`");
            continue;
        };
        let Some(irq) = whole(label).and_then(|x| u32::try_from(x).ok()) else {
            arch += 1;
            continue;
        };
        let toks: Vec<&str> = rest.split_whitespace().collect();
        if toks.len() < out.cpus.len() || !toks[..out.cpus.len()].iter().all(|t| whole(t).is_some())
        {
            f.unparsed(
                d,
                n,
                format!("fewer than {} counts (one per CPU column)", out.cpus.len()),
            );
            continue;
        }
        out.rows.push(Row {
            irq,
            counts: toks[..out.cpus.len()]
                .iter()
                .filter_map(|t| whole(t))
                .collect(),
            tokens: toks[out.cpus.len()..]
                .iter()
                .map(|t| t.trim_end_matches(',').to_string())
                .filter(|t| !t.is_empty())
                .collect(),
            at: d.at(n),
        });
    }
    f.ignore(
        &d.name,
        arch,
        "the architecture's own counters (NMI, LOC, ...)",
    );
    out
}

/// The affinities of the vectors, by interrupt number.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Affinity {
    /// `smp_affinity_list`.
    pub allowed: BTreeMap<u32, Sourced<CpuList>>,
    /// `effective_affinity_list`.
    pub effective: BTreeMap<u32, Sourced<CpuList>>,
}

/// Parse the `grep -H` lines of the affinity lists.
pub fn affinity(d: &Dump, f: &mut Findings) -> Affinity {
    let mut out = Affinity::default();
    for (n, line) in d.numbered() {
        let parsed = line.trim().strip_prefix("/proc/irq/").and_then(|rest| {
            let (num, rest) = rest.split_once('/')?;
            let (file, list) = rest.split_once(':')?;
            Some((whole(num)?, file, cpu_list(list)?))
        });
        let Some((irq, file, list)) = parsed else {
            f.unparsed(
                d,
                n,
                "not `/proc/irq/<N>/smp_affinity_list:<cpus>` (grep -H's form)",
            );
            continue;
        };
        let Ok(irq) = u32::try_from(irq) else {
            f.unparsed(d, n, "interrupt number out of range");
            continue;
        };
        let map = match file {
            "smp_affinity_list" => &mut out.allowed,
            "effective_affinity_list" => &mut out.effective,
            _ => {
                f.unparsed(
                    d,
                    n,
                    "neither smp_affinity_list nor effective_affinity_list",
                );
                continue;
            }
        };
        map.entry(irq).or_insert_with(|| d.sourced(n, list));
    }
    out
}

/// The handler names queue `k` of interface `iface` may have (see the module doc):
/// `bus` is its `bus-info`, `lone` whether it is the host's only port of its driver
/// (mlx5, virtio_net), `ints` the dump (gve's blocks are counted in it).
fn names(
    ints: &Interrupts,
    (iface, driver, bus): (&str, &str, Option<&str>),
    k: u16,
    lone: bool,
) -> Vec<String> {
    let mut v = vec![
        format!("{iface}-TxRx-{k}"),
        format!("{driver}-{iface}-TxRx-{k}"),
    ];
    match driver {
        "mlx5_core" => {
            if let Some(b) = bus {
                v.push(format!("mlx5_comp{k}@pci:{b}"));
            }
            if lone {
                v.push(format!("mlx5_comp{k}"));
            }
        }
        "ena" => v.push(format!("{iface}-Tx-Rx-{k}")),
        "gve" => {
            if let Some(b) = bus {
                let suffix = format!("@pci:{b}");
                let blocks = ints
                    .rows
                    .iter()
                    .filter(|r| {
                        r.tokens.iter().any(|t| {
                            t.strip_prefix("gve-ntfy-blk")
                                .and_then(|x| x.strip_suffix(suffix.as_str()))
                                .is_some_and(|n| whole(n).is_some())
                        })
                    })
                    .count();
                if blocks > 0 {
                    v.push(format!(
                        "gve-ntfy-blk{}{suffix}",
                        blocks / 2 + usize::from(k)
                    ));
                }
            }
        }
        "vmxnet3" => {
            v.push(format!("{iface}-rxtx-{k}"));
            return v;
        }
        _ => {}
    }
    v.push(format!("{iface}-rx-{k}"));
    v
}

/// Whether `row` is virtio_net queue `k`'s receive vector (`virtio<N>-input.<k>`) of
/// the port at `bus` (see the module doc).
fn virtio_input(row: &Row, bus: Option<&str>, k: u16, lone: bool) -> bool {
    let named = row.tokens.iter().any(|t| {
        t.strip_prefix("virtio")
            .and_then(|x| x.split_once("-input."))
            .is_some_and(|(n, q)| whole(n).is_some() && whole(q) == Some(u64::from(k)))
    });
    if !named {
        return false;
    }
    match row.tokens.iter().find_map(|t| t.strip_prefix("PCI-MSIX-")) {
        Some(chip_bus) => bus == Some(chip_bus),
        None => lone,
    }
}

/// The row of queue `k`'s vector (`queues` is the NIC's queue count: a NIC with one
/// vector may also be named after the interface alone; `lone` whether the NIC is the
/// host's only port of its driver). `Err` with the rows when several match (reported,
/// not guessed between).
pub fn queue_vector<'a>(
    ints: &'a Interrupts,
    (iface, driver, bus): (&str, &str, Option<&str>),
    (k, queues): (u16, u16),
    lone: bool,
) -> Result<Option<&'a Row>, Vec<&'a Row>> {
    let mut want = names(ints, (iface, driver, bus), k, lone);
    if queues == 1 {
        want.push(iface.to_string());
    }
    let found: Vec<&Row> = ints
        .rows
        .iter()
        .filter(|r| {
            r.tokens.iter().any(|t| want.contains(t))
                || (driver == "virtio_net" && virtio_input(r, bus, k, lone))
        })
        .collect();
    match found.len() {
        0 => Ok(None),
        1 => Ok(Some(found[0])),
        _ => Err(found),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 6-CPU host with an mlx5 port (Linux 5.15, x86 with interrupt remapping).
    const PROC: &str = "            CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       \n   0:         22          0          0          0          0          0  IR-IO-APIC    2-edge      timer\n 130:       1234          0          0          0          0          0  IR-PCI-MSI 1572864-edge      mlx5_async0@pci:0000:03:00.0\n 131:      98765          0          0          0          0          0  IR-PCI-MSI 1572865-edge      mlx5_comp0@pci:0000:03:00.0\n 132:          0      87654          0          0          0          0  IR-PCI-MSI 1572866-edge      mlx5_comp1@pci:0000:03:00.0\n NMI:          0          0          0          0          0          0   Non-maskable interrupts\n LOC:     123456     123456     123456     123456     123456     123456   Local timer interrupts\n ERR:          0\n";

    #[test]
    fn rows_are_read_with_their_names_and_arch_counters_ignored() {
        let mut f = Findings::default();
        let i = parse(&Dump::from_text("proc-interrupts", PROC), &mut f);
        assert!(f.unparsed.is_empty(), "{f:?}");
        assert_eq!(i.cpus, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(i.rows.len(), 4);
        assert_eq!(i.rows[2].irq, 131);
        assert_eq!(i.rows[2].at.line, 4);
        assert_eq!(f.ignored[0].1, 3);
        let r = queue_vector(
            &i,
            ("eth0", "mlx5_core", Some("0000:03:00.0")),
            (1, 6),
            false,
        );
        assert_eq!(r.unwrap().unwrap().irq, 132);
        // Another port's bus: not this port's vector.
        let r = queue_vector(
            &i,
            ("eth1", "mlx5_core", Some("0000:03:00.1")),
            (1, 6),
            false,
        );
        assert_eq!(r.unwrap(), None);
    }

    #[test]
    fn intel_names_and_short_rows() {
        let text = "           CPU0       CPU1\n  45:   10   20   PCI-MSI-edge      eth0-TxRx-0\n  46:   10   20   IR-PCI-MSI 524289-edge      i40e-eth1-TxRx-0\n  47:   10   PCI-MSI-edge eth0-TxRx-1\n";
        let mut f = Findings::default();
        let i = parse(&Dump::from_text("proc-interrupts", text), &mut f);
        assert_eq!(f.unparsed.len(), 1);
        assert_eq!(f.unparsed[0].at.line, 4);
        let r = queue_vector(&i, ("eth0", "ixgbe", None), (0, 2), false);
        assert_eq!(r.unwrap().unwrap().irq, 45);
        let r = queue_vector(&i, ("eth1", "i40e", None), (0, 2), false);
        assert_eq!(r.unwrap().unwrap().irq, 46);
    }

    #[test]
    fn affinity_lines_are_read_in_greps_form() {
        let text = "/proc/irq/131/smp_affinity_list:0-5\n/proc/irq/131/effective_affinity_list:3\n/proc/irq/132/smp_affinity_list:1\nsmp_affinity_list:2\n";
        let mut f = Findings::default();
        let a = affinity(&Dump::from_text("irq-affinity", text), &mut f);
        assert_eq!(a.allowed[&131].value.to_string(), "0-5");
        assert_eq!(a.effective[&131].value.to_string(), "3");
        assert_eq!(a.allowed[&132].at.line, 3);
        assert_eq!(f.unparsed.len(), 1);
        assert_eq!(f.unparsed[0].at.line, 4);
    }

    /// The recorded KVM guest's /proc/interrupts (tests/data/kvm-virtio-guest/host):
    /// eth0 is virtio2 at 0000:00:03.0; virtio4 (a virtio-input device) has an `input`
    /// queue without a number, virtio3 (vsock) `rx`/`tx`.
    #[test]
    fn virtio_input_vectors_are_found_by_their_bus() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/kvm-virtio-guest/host/proc-interrupts"
        ))
        .unwrap();
        let mut f = Findings::default();
        let i = parse(&Dump::from_text("proc-interrupts", &text), &mut f);
        assert!(f.unparsed.is_empty(), "{f:?}");
        let r = queue_vector(
            &i,
            ("eth0", "virtio_net", Some("0000:00:03.0")),
            (0, 1),
            false,
        );
        assert_eq!(r.unwrap().unwrap().irq, 38);
        // Another bus: not this port's.
        let r = queue_vector(
            &i,
            ("eth0", "virtio_net", Some("0000:00:09.0")),
            (0, 1),
            true,
        );
        assert_eq!(r.unwrap(), None);
    }

    #[test]
    fn the_cloud_drivers_vector_names() {
        let text = "           CPU0       CPU1\n  40:   1   0   PCI-MSI 1-edge   virtio1-input.0\n  41:   1   0   PCI-MSI 2-edge   virtio1-output.0\n  42:   1   0   PCI-MSI 3-edge   virtio1-input.1\n  50:   1   0   PCI-MSI 4-edge   ens5-Tx-Rx-1\n  60:   1   0   PCI-MSI 5-edge   gve-mgmnt@pci:0000:00:04.0\n  61:   1   0   PCI-MSI 6-edge   gve-ntfy-blk0@pci:0000:00:04.0\n  62:   1   0   PCI-MSI 7-edge   gve-ntfy-blk1@pci:0000:00:04.0\n  63:   1   0   PCI-MSI 8-edge   gve-ntfy-blk2@pci:0000:00:04.0\n  64:   1   0   PCI-MSI 9-edge   gve-ntfy-blk3@pci:0000:00:04.0\n  70:   1   0   PCI-MSI 10-edge   ens192-rxtx-0\n  71:   1   0   PCI-MSI 11-edge   ens192-rx-1\n";
        let mut f = Findings::default();
        let i = parse(&Dump::from_text("proc-interrupts", text), &mut f);
        assert!(f.unparsed.is_empty(), "{f:?}");
        let irq = |who: (&str, &str, Option<&str>), k: u16, lone: bool| {
            queue_vector(&i, who, (k, 2), lone).unwrap().map(|r| r.irq)
        };
        // The global PCI-MSI chip: a lone virtio_net port's input vectors only.
        assert_eq!(irq(("eth0", "virtio_net", None), 1, true), Some(42));
        assert_eq!(irq(("eth0", "virtio_net", None), 1, false), None);
        assert_eq!(irq(("ens5", "ena", None), 1, false), Some(50));
        // Four blocks: receive queue 1's is block 4 / 2 + 1 = 3.
        assert_eq!(
            irq(("ens4", "gve", Some("0000:00:04.0")), 1, false),
            Some(64)
        );
        assert_eq!(irq(("ens192", "vmxnet3", None), 0, false), Some(70));
        // vmxnet3's `-rx-<v>` numbers vectors: not taken as queue 1's.
        assert_eq!(irq(("ens192", "vmxnet3", None), 1, false), None);
    }
}
