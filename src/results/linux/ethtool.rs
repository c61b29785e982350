//! `ethtool -S <nic>` of a load point.
//!
//! Layout of ethtool's `-S` (ethtool.c, `dump_stats`): `NIC statistics:`, then a line
//! per counter, `     %.*s: %llu` (five spaces). A real driver prints every counter it
//! has (ixgbe about 100 and its queues, mlx5 several hundred); the file has those the
//! model keeps, in the driver's order, with the driver's names:
//!
//! - **mlx5** (drivers/net/ethernet/mellanox/mlx5/core/en_stats.c, 4.18): `rx_packets`,
//!   `rx_bytes`, `tx_packets`, `tx_bytes` (as net-dev); `rx_xdp_drop`,
//!   `rx_xdp_redirect`, `rx_xdp_tx_xmit` (when an XDP program runs: its verdicts);
//!   `rx_out_of_buffer` (`drops.rx_ring`: no WQE posted); `rx_discards_phy`
//!   (`drops.rx_fifo`: the port's buffer full); per channel `ch<k>_events`
//!   (`<nic>.ch<k>_events`, else the vector's interrupts), `ch<k>_poll`, `ch<k>_arm`
//!   (when the model keeps them); per queue `rx<k>_packets`, `rx<k>_bytes`,
//!   `rx<k>_xdp_drop`, `tx<k>_packets`, `tx<k>_bytes`, `tx<k>_cqes`.
//! - **ixgbe** (drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c,
//!   `ixgbe_gstrings_stats` and ixgbe_get_strings): `rx_packets`, `tx_packets`,
//!   `rx_bytes`, `tx_bytes`, `rx_dropped` (the backlog's drops), `rx_missed_errors`
//!   (`drops.rx_fifo`), `rx_no_dma_resources` (`drops.rx_ring`: with several queues
//!   ixgbe sets SRRCTL.DROP_EN, and a frame with no descriptor is dropped and counted
//!   in QPRDC), then `tx_queue_<k>_packets`, `tx_queue_<k>_bytes` and
//!   `rx_queue_<k>_packets`, `rx_queue_<k>_bytes` for the model's queues (a real ixgbe
//!   lists every queue it allocated, the unused ones at 0).
//! - **e1000** (drivers/net/ethernet/intel/e1000/e1000_ethtool.c,
//!   `e1000_gstrings_stats`): `rx_packets` (GPRC), `tx_packets` (GPTC), `rx_bytes`,
//!   `tx_bytes` (GORC and GOTC, the hardware's octet counts, which include the 4-byte
//!   FCS: frames x frame size, where /proc/net/dev's software counts have size - 4),
//!   `rx_missed_errors` (MPC: `drops.rx_ring + drops.rx_fifo`, as net-dev), and
//!   `rx_long_byte_count` (GORC again), in that table's order. Not written, not
//!   modelled: `rx_no_buffer_count` (RNBC counts the times the ring was found empty,
//!   not frames), the error, collision, flow-control, checksum and SMBus counters.
//! - **virtio_net** (drivers/net/virtio_net.c, `virtnet_get_ethtool_stats`, Linux 6.18
//!   as recorded on a KVM guest in tests/data/kvm-virtio-guest/counters/*/ethtool-S-eth0,
//!   whose packet and byte counts moved to the netlink queue statistics): the sums
//!   `rx_drops`, `rx_xdp_packets`, `rx_xdp_tx`, `rx_xdp_redirects`, `rx_xdp_drops`,
//!   `rx_kicks`, `tx_xdp_tx`, `tx_xdp_tx_drops`, `tx_kicks`, `tx_tx_timeouts`, then the
//!   same per receive queue (`rx<k>_...`), then per transmit queue (`tx<k>_...`; the
//!   receive queues first as the sums have them: the recording has one queue, so the
//!   order of several is virtnet_get_strings' loops, not checked against a host). From the model: the XDP verdicts
//!   (`rx_xdp_packets` every frame the program saw: pass, drop, redirect and tx);
//!   written 0, not modelled: `rx_drops` (frames the driver drops, e.g. too short: a full
//!   ring drops in the hypervisor, which the guest never counts), the kicks (the guest's
//!   notifications to the device), `tx_xdp_tx*` and `tx_tx_timeouts`.
//! - **ixgbevf** (drivers/net/ethernet/intel/ixgbevf/ethtool.c, 4.18,
//!   `ixgbevf_gstrings_stats` and ixgbevf_get_strings): `rx_packets`, `tx_packets`,
//!   `rx_bytes`, `tx_bytes` (dev_get_stats', the rings' counts: frame size - 4), then
//!   `tx_queue_<k>_packets`, `tx_queue_<k>_bytes` and `rx_queue_<k>_packets`,
//!   `rx_queue_<k>_bytes`. Not written, not modelled: `tx_busy`, `tx_restart_queue`,
//!   `tx_timeout_count`, `multicast`, the checksum and allocation counters, and the XDP
//!   transmit queues' `xdp_queue_<k>_*` (listed when an XDP program is attached). A
//!   VF has no drop counter of its own: the ring's and the FIFO's drops are in no file.
//! - **igb** (drivers/net/ethernet/intel/igb/igb_ethtool.c, 4.18, `igb_gstrings_stats`,
//!   `igb_gstrings_net_stats` and igb_get_strings): `rx_packets` (GPRC), `tx_packets`
//!   (GPTC), `rx_bytes`, `tx_bytes` (GORC and GOTC, with the FCS, as e1000's),
//!   `rx_missed_errors` (MPC: with one queue `drops.rx_ring + drops.rx_fifo`, with
//!   several `drops.rx_fifo`: igb sets SRRCTL.DROP_EN only with several queues,
//!   igb_setup_srrctl, and a frame with no descriptor is then dropped and counted in its
//!   queue's RQDPC), `rx_long_byte_count` (GORC again), `rx_fifo_errors` (the RQDPCs +
//!   MPC, igb_update_stats), then `tx_queue_<k>_packets`, `tx_queue_<k>_bytes` and
//!   `rx_queue_<k>_packets`, `rx_queue_<k>_bytes` (the rings' counts, frame size - 4:
//!   igb_clean_rx_irq counts `skb->len` with the FCS stripped), `rx_queue_<k>_drops`
//!   (its RQDPC: `<q>.rx_ring.drops` with several queues, 0 with one). Not written, not
//!   modelled: `rx_no_buffer_count` (RNBC counts the times the ring was found empty, not
//!   frames), `tx_queue_<k>_restart`, `rx_queue_<k>_csum_err`,
//!   `rx_queue_<k>_alloc_failed`, the error, collision, flow-control, SMBus, BMC and
//!   timestamp counters.
//! - **i40e** (drivers/net/ethernet/intel/i40e/i40e_ethtool.c, 4.18,
//!   i40e_get_stat_strings): from `i40e_gstrings_net_stats` (the VSI's own statistics,
//!   not dev_get_stats': without the backlog's drops) `rx_packets`, `tx_packets`,
//!   `rx_bytes`, `tx_bytes` (the rings' counts, frame size - 4), `rx_dropped` (the VSI's
//!   discards, GLV_RDPC: `drops.rx_ring`, the frames its queues had no descriptor for,
//!   as the XL710 datasheet describes the register; not checked against a host); per
//!   queue `tx-<k>.tx_packets`, `tx-<k>.tx_bytes`, `rx-<k>.rx_packets`,
//!   `rx-<k>.rx_bytes`; of `i40e_gstrings_stats` (the port's, printed for the PF's main
//!   VSI) `port.rx_dropped` (GLPRT_RDPC, the port's receive buffer's discards:
//!   `drops.rx_fifo`). Not written, not modelled: the unicast, multicast and broadcast
//!   counts, the error, allocation-failure, VEB, flow-control, size-histogram, flow
//!   director and LPI counters; a real i40e lists every queue it allocated.
//! - **ice** (drivers/net/ethernet/intel/ice/ice_ethtool.c, 4.18, ice_get_strings): of
//!   `ice_gstrings_vsi_stats` `rx_discards` (GLV_RDPC: `drops.rx_ring`, as for i40e);
//!   per transmit queue `tx-queue-<k>.tx_packets`, `tx-queue-<k>.tx_bytes`, then per
//!   receive queue `rx-queue-<k>.rx_packets`, `rx-queue-<k>.rx_bytes` (the rings'
//!   counts, frame size - 4); of `ice_gstrings_pf_stats`, printed `port.%s`,
//!   `port.rx_dropped` (GLPRT_RDPC: `drops.rx_fifo`). Not written: the VSI's and the
//!   port's octet counters (`rx_bytes`, `tx_bytes`: whether the hardware's counts
//!   include the FCS the driver does not say), the unicast, multicast and broadcast
//!   counts, the error, allocation-failure, size-histogram and flow-control counters.
//!   The names are 4.18's, ice's first release: later kernels rename the queues'
//!   (`tx_queue_<k>_packets`) and suffix the port's `.nic`.
//! - **ena** (drivers/net/ethernet/amazon/ena/ena_ethtool.c, 4.18, ena_get_strings and
//!   ena_queue_strings): per queue pair, transmit first, `queue_<k>_tx_cnt`,
//!   `queue_<k>_tx_bytes`, `queue_<k>_rx_cnt`, `queue_<k>_rx_bytes` (the rings' counts,
//!   frame size - 4: a virtual device has no FCS). Not written, not modelled: the
//!   global counters (`tx_timeout`, `suspend`, `resume`, `wd_expired`,
//!   `interface_up`, ...), the queues' others (`queue_stop`, `doorbells`,
//!   `empty_rx_ring`, ...) and the admin queue's (`ena_admin_q_*`). The device's own
//!   drop count (the keep-alive event's `rx_drops`, in /proc/net/dev only) is not the
//!   model's.
//! - **gve** (drivers/net/ethernet/google/gve/gve_ethtool.c as stored for torvalds/linux
//!   at commit 039535ec, a 6.x tree: `u64_stats_fetch_begin` without `_irq`, 6.2 on;
//!   gve_get_strings): of `gve_gstrings_main_stats` `rx_packets`, `tx_packets`,
//!   `rx_bytes`, `tx_bytes` (the rings' `rpackets`, `pkt_done`, `rbytes`, `bytes_done`:
//!   frame size - 4); per receive queue `rx_bytes[<k>]`, then per transmit queue
//!   `tx_bytes[<k>]`. Not written, not modelled: the driver's drops (`rx_dropped`:
//!   allocation failures and bad descriptors), the descriptor counts
//!   (`rx_posted_desc[<k>]`, ...), the counters the device reports with the
//!   `report-stats` private flag on (`rx_no_buffers_posted[<k>]`, ...: zero without
//!   it) and the admin queue's.
//! - **vmxnet3** (drivers/net/vmxnet3/vmxnet3_ethtool.c, 4.18, vmxnet3_get_strings):
//!   per transmit queue `Tx Queue#` (its index), `  ucast pkts tx`, `  ucast bytes
//!   tx` (the device's `UPT1_TxStats`; the model's frames are unicast), then per receive
//!   queue `Rx Queue#`, `  ucast pkts rx`, `  ucast bytes rx` and `  pkts rx OOB`
//!   (`pktsRxOutOfBuf`, frames the device had no receive buffer for: the queue's
//!   `<q>.rx_ring.drops`); the names keep their leading spaces, as ethtool prints
//!   them. Bytes are frame size - 4 (no FCS on a virtual device). Not written, not
//!   modelled: TSO, LRO, multicast and broadcast counts, errors, the driver's drops and
//!   `tx timeout count`.
//! - **tulip**: no file. Its `ethtool_ops` have no `get_ethtool_stats`, so
//!   `ethtool -S` prints `no stats available` (on standard error) on a real host.
//! - No `linux_driver`: no file for that NIC.
//!
//! A NIC under the `dpdk` policy belongs to a user-space application (bound to
//! vfio-pci, not a kernel netdev): it has no row in net-dev or interrupts and no
//! ethtool file.

use super::*;

impl LinuxHost {
    /// `ethtool -S <nic>`, or `None` for a NIC that is not the model's, names no
    /// driver, or has no statistics (tulip).
    pub fn ethtool_s(&self, nic: &str, p: &PointResult) -> Option<String> {
        let i = self.nics.iter().position(|n| n.name == nic)?;
        let n = &self.nics[i];
        let c = &p.figures.counters;
        let st = self.nic_stats(i, p);
        let mut lines: Vec<(String, u64)> = Vec::new();
        let mut put = |name: String, v: u64| lines.push((name, v));
        match n.driver? {
            LinuxDriver::Mlx5 => {
                put("rx_packets".into(), st.rx_packets);
                put("rx_bytes".into(), st.rx_packets * n.rx_bytes);
                put("tx_packets".into(), st.tx_packets);
                put("tx_bytes".into(), st.tx_packets * n.tx_bytes);
                for x in XDP_VERDICTS {
                    if (0..n.queues).any(|k| c.contains_key(&format!("{}.{x}", n.queue(k)))) {
                        let sum = (0..n.queues)
                            .map(|k| count(c, &format!("{}.{x}", n.queue(k))))
                            .sum();
                        put(x.to_string(), sum);
                    }
                }
                put("rx_out_of_buffer".into(), st.ring_drops);
                put("rx_discards_phy".into(), st.fifo_drops);
                for k in 0..n.queues {
                    let own = format!("{}.ch{k}_events", n.name);
                    let events = if c.contains_key(&own) {
                        count(c, &own)
                    } else {
                        count(c, &format!("{}.interrupts", n.queue(k)))
                    };
                    put(format!("ch{k}_events"), events);
                    for x in ["poll", "arm"] {
                        let key = format!("{}.ch{k}_{x}", n.name);
                        if c.contains_key(&key) {
                            put(format!("ch{k}_{x}"), count(c, &key));
                        }
                    }
                }
                for k in 0..n.queues {
                    let q = n.queue(k);
                    let pk = mlx5_rx_packets(c, &q);
                    put(format!("rx{k}_packets"), pk);
                    put(format!("rx{k}_bytes"), pk * n.rx_bytes);
                    let key = format!("{q}.rx_xdp_drop");
                    if c.contains_key(&key) {
                        put(format!("rx{k}_xdp_drop"), count(c, &key));
                    }
                }
                for k in 0..n.queues {
                    let pk = count(c, &format!("{}.tx_frames", n.queue(k)));
                    put(format!("tx{k}_packets"), pk);
                    put(format!("tx{k}_bytes"), pk * n.tx_bytes);
                    let key = format!("{}.tx{k}_cqes", n.name);
                    if c.contains_key(&key) {
                        put(format!("tx{k}_cqes"), count(c, &key));
                    }
                }
            }
            LinuxDriver::Ixgbe => {
                put_totals(&mut put, &st, n.rx_bytes, n.tx_bytes);
                put("rx_dropped".into(), st.backlog_drops);
                put("rx_missed_errors".into(), st.fifo_drops);
                put("rx_no_dma_resources".into(), st.ring_drops);
                put_queues(&mut put, n, c, Way::Tx, |k| format!("tx_queue_{k}_"));
                put_queues(&mut put, n, c, Way::Rx, |k| format!("rx_queue_{k}_"));
            }
            LinuxDriver::E1000 => {
                put_totals(&mut put, &st, n.rx_wire, n.tx_wire);
                put("rx_missed_errors".into(), st.ring_drops + st.fifo_drops);
                put("rx_long_byte_count".into(), st.rx_packets * n.rx_wire);
            }
            LinuxDriver::VirtioNet => {
                // Per queue: (xdp_packets, xdp_tx, xdp_redirects, xdp_drops).
                let per: Vec<[u64; 4]> = (0..n.queues)
                    .map(|k| {
                        let q = n.queue(k);
                        let g = |x: &str| count(c, &format!("{q}.{x}"));
                        let (tx, redirect, drop) =
                            (g("rx_xdp_tx_xmit"), g("rx_xdp_redirect"), g("rx_xdp_drop"));
                        [g("xdp_pass") + tx + redirect + drop, tx, redirect, drop]
                    })
                    .collect();
                let sum = |i: usize| per.iter().map(|p| p[i]).sum::<u64>();
                let rx = |pre: &str, lines: &mut Vec<(String, u64)>, v: [u64; 4]| {
                    for (x, val) in [
                        ("drops", 0),
                        ("xdp_packets", v[0]),
                        ("xdp_tx", v[1]),
                        ("xdp_redirects", v[2]),
                        ("xdp_drops", v[3]),
                        ("kicks", 0),
                    ] {
                        lines.push((format!("rx{pre}_{x}"), val));
                    }
                };
                let tx = |pre: &str, lines: &mut Vec<(String, u64)>| {
                    for x in ["xdp_tx", "xdp_tx_drops", "kicks", "tx_timeouts"] {
                        lines.push((format!("tx{pre}_{x}"), 0));
                    }
                };
                // virtnet_get_strings: the sums (receive, then transmit), then every
                // receive queue, then every transmit queue.
                rx("", &mut lines, [sum(0), sum(1), sum(2), sum(3)]);
                tx("", &mut lines);
                for (k, v) in per.iter().enumerate() {
                    rx(&k.to_string(), &mut lines, *v);
                }
                for k in 0..per.len() {
                    tx(&k.to_string(), &mut lines);
                }
            }
            // tulip's ethtool_ops have no statistics: `ethtool -S` prints
            // "no stats available".
            LinuxDriver::Tulip => return None,
            LinuxDriver::Ixgbevf => {
                put_totals(&mut put, &st, n.rx_bytes, n.tx_bytes);
                put_queues(&mut put, n, c, Way::Tx, |k| format!("tx_queue_{k}_"));
                put_queues(&mut put, n, c, Way::Rx, |k| format!("rx_queue_{k}_"));
            }
            LinuxDriver::Igb => {
                let (mpc, rqdpc) = igb_drops(n, &st);
                put_totals(&mut put, &st, n.rx_wire, n.tx_wire);
                put("rx_missed_errors".into(), mpc);
                put("rx_long_byte_count".into(), st.rx_packets * n.rx_wire);
                put("rx_fifo_errors".into(), rqdpc + mpc);
                put_queues(&mut put, n, c, Way::Tx, |k| format!("tx_queue_{k}_"));
                for k in 0..n.queues {
                    let q = n.queue(k);
                    let pk = count(c, &format!("{q}.rx_frames"));
                    put(format!("rx_queue_{k}_packets"), pk);
                    put(format!("rx_queue_{k}_bytes"), pk * n.rx_bytes);
                    let drops = if n.queues > 1 {
                        count(c, &format!("{q}.rx_ring.drops"))
                    } else {
                        0
                    };
                    put(format!("rx_queue_{k}_drops"), drops);
                }
            }
            LinuxDriver::I40e => {
                put_totals(&mut put, &st, n.rx_bytes, n.tx_bytes);
                put("rx_dropped".into(), st.ring_drops);
                for k in 0..n.queues {
                    put_queue(
                        &mut put,
                        n,
                        c,
                        k,
                        Way::Tx,
                        &format!("tx-{k}.tx_"),
                        "packets",
                    );
                    put_queue(
                        &mut put,
                        n,
                        c,
                        k,
                        Way::Rx,
                        &format!("rx-{k}.rx_"),
                        "packets",
                    );
                }
                put("port.rx_dropped".into(), st.fifo_drops);
            }
            LinuxDriver::Ice => {
                put("rx_discards".into(), st.ring_drops);
                put_queues(&mut put, n, c, Way::Tx, |k| format!("tx-queue-{k}.tx_"));
                put_queues(&mut put, n, c, Way::Rx, |k| format!("rx-queue-{k}.rx_"));
                put("port.rx_dropped".into(), st.fifo_drops);
            }
            LinuxDriver::Ena => {
                for k in 0..n.queues {
                    put_queue(&mut put, n, c, k, Way::Tx, &format!("queue_{k}_tx_"), "cnt");
                    put_queue(&mut put, n, c, k, Way::Rx, &format!("queue_{k}_rx_"), "cnt");
                }
            }
            LinuxDriver::Gve => {
                put_totals(&mut put, &st, n.rx_bytes, n.tx_bytes);
                for k in 0..n.queues {
                    let pk = count(c, &format!("{}.rx_frames", n.queue(k)));
                    put(format!("rx_bytes[{k}]"), pk * n.rx_bytes);
                }
                for k in 0..n.queues {
                    let pk = count(c, &format!("{}.tx_frames", n.queue(k)));
                    put(format!("tx_bytes[{k}]"), pk * n.tx_bytes);
                }
            }
            LinuxDriver::Vmxnet3 => {
                for k in 0..n.queues {
                    let pk = count(c, &format!("{}.tx_frames", n.queue(k)));
                    put("Tx Queue#".into(), u64::from(k));
                    put("  ucast pkts tx".into(), pk);
                    put("  ucast bytes tx".into(), pk * n.tx_bytes);
                }
                for k in 0..n.queues {
                    let q = n.queue(k);
                    let pk = count(c, &format!("{q}.rx_frames"));
                    put("Rx Queue#".into(), u64::from(k));
                    put("  ucast pkts rx".into(), pk);
                    put("  ucast bytes rx".into(), pk * n.rx_bytes);
                    put(
                        "  pkts rx OOB".into(),
                        count(c, &format!("{q}.rx_ring.drops")),
                    );
                }
            }
        }
        let mut s = String::from("NIC statistics:\n");
        for (name, v) in lines {
            let _ = writeln!(s, "     {name}: {v}");
        }
        Some(s)
    }
}

/// Which way a queue's frames go.
#[derive(Clone, Copy)]
enum Way {
    Rx,
    Tx,
}

/// The `<prefix>packets` and `<prefix>bytes` lines of every queue's frames going `way`
/// (`prefix(k)` for queue `k`: `tx_queue_0_` for ixgbe, `rx-queue-0.rx_` for ice): the
/// per-queue counters most drivers keep, under their own names ([`put_queue`]).
fn put_queues(
    put: &mut impl FnMut(String, u64),
    n: &Nic,
    c: &BTreeMap<String, f64>,
    way: Way,
    prefix: impl Fn(u16) -> String,
) {
    for k in 0..n.queues {
        put_queue(put, n, c, k, way, &prefix(k), "packets");
    }
}

/// The `<pre><packets>` and `<pre>bytes` lines of queue `k`'s frames going `way`
/// (`packets` is the driver's word for the count: `packets`, ena's `cnt`). Bytes are
/// frame size less the FCS, as Linux counts them.
fn put_queue(
    put: &mut impl FnMut(String, u64),
    n: &Nic,
    c: &BTreeMap<String, f64>,
    k: u16,
    way: Way,
    pre: &str,
    packets: &str,
) {
    let (frames, bytes) = match way {
        Way::Rx => ("rx_frames", n.rx_bytes),
        Way::Tx => ("tx_frames", n.tx_bytes),
    };
    let pk = count(c, &format!("{}.{frames}", n.queue(k)));
    put(format!("{pre}{packets}"), pk);
    put(format!("{pre}bytes"), pk * bytes);
}

/// The totals `rx_packets`, `tx_packets`, `rx_bytes`, `tx_bytes` (in that order), with
/// `rx_size` and `tx_size` bytes a frame (less the FCS, or with it for the drivers whose
/// counters are the MAC's octets).
fn put_totals(put: &mut impl FnMut(String, u64), st: &NicStats, rx_size: u64, tx_size: u64) {
    put("rx_packets".into(), st.rx_packets);
    put("tx_packets".into(), st.tx_packets);
    put("rx_bytes".into(), st.rx_packets * rx_size);
    put("tx_bytes".into(), st.tx_packets * tx_size);
}
