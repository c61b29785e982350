//! `/proc/net/dev` of a load point.
//!
//! Layout of `dev_seq_show` and `dev_seq_printf_stats`, net/core/net-procfs.c (at
//! 0e0939c0): the two header lines, then per NIC `%6s: %7llu %7llu %4llu %4llu %4llu
//! %5llu %10llu %9llu %8llu %7llu %4llu %4llu %4llu %5llu %7llu %10llu`.
//!
//! | column | from |
//! |---|---|
//! | rx bytes | rx packets x (frame size - 4): the drivers strip the FCS (ixgbe `IXGBE_HLREG0_RXCRCSTRP`, mlx5 by default) |
//! | rx packets | the NIC's frames placed in its RX rings (`<q>.rx_frames` summed); mlx5 counts only frames that become an skb (`mlx5e_complete_rx_cqe`), so an XDP program's drops, redirects and transmits (`<q>.rx_xdp_drop`, `.rx_xdp_redirect`, `.rx_xdp_tx_xmit`) are taken off; ixgbe counts them (ixgbe_clean_rx_irq) |
//! | rx drop | `rx_dropped + rx_missed_errors`: the backlog's drops of the flows entering the NIC (`drops.ipintrq`: enqueue_to_backlog counts them in the device's `rx_dropped`), plus for mlx5 `rx_out_of_buffer` (`drops.rx_ring`: mlx5e_get_stats reports it as `rx_dropped`), for ixgbe `rx_missed_errors` (the receive FIFO's overflow, `drops.rx_fifo`: ixgbe_update_stats sets it from MPC; ixgbe's ring drops, `rx_no_dma_resources`, are not in it, and show in `ethtool -S` only), for e1000 `rx_missed_errors` = MPC, which counts both (`drops.rx_ring + drops.rx_fifo`: an 8254x keeps a frame with no descriptor in its FIFO, and the FIFO overflows), for tulip `rx_missed_errors` = CSR8's missed-frame count (`drops.rx_ring`: no descriptor owned by the chip; tulip_get_stats reads CSR8 & 0xffff, so the FIFO overflow count in its bits 17-27, `drops.rx_fifo`, is in no file, as on a real host), for virtio_net nothing but the backlog's (a full receive virtqueue drops in the hypervisor's back end, which the guest never counts) |
//! | rx drop, continued | for igb `rx_missed_errors` = MPC: with one queue the ring's and the FIFO's drops (igb sets SRRCTL.DROP_EN only with several queues, igb_setup_srrctl: without it a frame with no descriptor waits in the FIFO until it overflows), with several the FIFO's (`drops.rx_fifo`); for i40e and ice `rx_dropped` = the VSI's discards, GLV_RDPC (`drops.rx_ring`: frames the queue had no descriptor for, as the XL710 and E810 datasheets describe the register; not checked against a host); for ixgbevf, ena, gve and vmxnet3 nothing but the backlog's (ixgbevf_get_stats sets no drop counter): ena's `rx_dropped` is the device's own count (the keep-alive event's `rx_drops`, which the driver does not define), gve_get_stats sets no drop counter, vmxnet3's `rx_dropped` is the driver's own (`drv dropped rx total`: errored frames, vmxnet3_get_stats64) |
//! | rx fifo | igb's `rx_fifo_errors`: RQDPC summed over the queues (with several queues: `drops.rx_ring`) + MPC (igb_update_stats); 0 for the other drivers |
//! | tx bytes, tx packets | frames whose transmission started (`<q>.tx_frames` summed) x (frame size - 4) |
//! | every other column | 0: no errored frame, collision, carrier error, compression or multicast is modelled (and no FIFO error but igb's) |
//!
//! Not in it, as on a real host: the qdisc's drops (`drops.if_snd`, shown by
//! `tc -s qdisc`), a netfilter rule's (`drops.netfilter`, by `iptables -nvL`), an XDP
//! program's (`ethtool -S`). In no file: an application's queue's drops
//! (`drops.user_queue`), a reset's and a transmit underrun's (`drops.reset`,
//! `drops.tx_underrun`). Not written: `lo` and other interfaces.

use super::*;

impl LinuxHost {
    /// /proc/net/dev: the two header lines and a row per NIC.
    pub fn net_dev(&self, p: &PointResult) -> String {
        let mut s = String::from(NET_DEV_HEADER);
        for (i, n) in self.nics.iter().enumerate() {
            let st = self.nic_stats(i, p);
            // The driver's `rx_dropped + rx_missed_errors`, and its `rx_fifo_errors`.
            let (nic_drop, rx_fifo) = match n.driver {
                Some(LinuxDriver::Mlx5 | LinuxDriver::Tulip) => (st.ring_drops, 0),
                Some(LinuxDriver::Ixgbe) => (st.fifo_drops, 0),
                Some(LinuxDriver::E1000) => (st.ring_drops + st.fifo_drops, 0),
                // igb_update_stats: rx_missed_errors = MPC, rx_fifo_errors = the
                // queues' RQDPC + MPC.
                Some(LinuxDriver::Igb) => {
                    let (mpc, rqdpc) = igb_drops(n, &st);
                    (mpc, rqdpc + mpc)
                }
                // i40e_update_vsi_stats, ice_update_vsi_stats: rx_dropped = the VSI's
                // discards (GLV_RDPC).
                Some(LinuxDriver::I40e | LinuxDriver::Ice) => (st.ring_drops, 0),
                // A full receive virtqueue drops in the hypervisor's back end
                // (vhost-net, QEMU), counted on the host's tap, never in the guest.
                // ixgbevf_get_stats sets no drop counter. ena's rx_dropped is the device's own count (the keep-alive event's
                // rx_drops), which the driver does not define; gve_get_stats sets
                // none; vmxnet3's are the driver's own (errored frames): none is the
                // model's.
                Some(
                    LinuxDriver::VirtioNet
                    | LinuxDriver::Ixgbevf
                    | LinuxDriver::Ena
                    | LinuxDriver::Gve
                    | LinuxDriver::Vmxnet3,
                )
                | None => (0, 0),
            };
            let rx_drop = st.backlog_drops + nic_drop;
            let _ = writeln!(
                s,
                "{:>6}: {:>7} {:>7} {:>4} {:>4} {:>4} {:>5} {:>10} {:>9} {:>8} {:>7} {:>4} {:>4} {:>4} {:>5} {:>7} {:>10}",
                n.name,
                st.rx_packets * n.rx_bytes,
                st.rx_packets,
                0,
                rx_drop,
                rx_fifo,
                0,
                0,
                0,
                st.tx_packets * n.tx_bytes,
                st.tx_packets,
                0,
                0,
                0,
                0,
                0,
                0
            );
        }
        s
    }
}
