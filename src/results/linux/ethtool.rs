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
                put("rx_packets".into(), st.rx_packets);
                put("tx_packets".into(), st.tx_packets);
                put("rx_bytes".into(), st.rx_packets * n.rx_bytes);
                put("tx_bytes".into(), st.tx_packets * n.tx_bytes);
                put("rx_dropped".into(), st.backlog_drops);
                put("rx_missed_errors".into(), st.fifo_drops);
                put("rx_no_dma_resources".into(), st.ring_drops);
                for k in 0..n.queues {
                    let pk = count(c, &format!("{}.tx_frames", n.queue(k)));
                    put(format!("tx_queue_{k}_packets"), pk);
                    put(format!("tx_queue_{k}_bytes"), pk * n.tx_bytes);
                }
                for k in 0..n.queues {
                    let pk = count(c, &format!("{}.rx_frames", n.queue(k)));
                    put(format!("rx_queue_{k}_packets"), pk);
                    put(format!("rx_queue_{k}_bytes"), pk * n.rx_bytes);
                }
            }
            LinuxDriver::E1000 => {
                put("rx_packets".into(), st.rx_packets);
                put("tx_packets".into(), st.tx_packets);
                put("rx_bytes".into(), st.rx_packets * n.rx_wire);
                put("tx_bytes".into(), st.tx_packets * n.tx_wire);
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
        }
        let mut s = String::from("NIC statistics:\n");
        for (name, v) in lines {
            let _ = writeln!(s, "     {name}: {v}");
        }
        Some(s)
    }
}
