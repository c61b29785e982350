//! Transmit-queue selection on a multi-queue NIC: Linux's `__netdev_pick_tx` (4.18;
//! `netdev_pick_tx` since 5.2) for a forwarded frame, with transmit packet steering
//! (XPS) set up the way ixgbe does.
//!
//! A forwarded frame has no socket, so `__netdev_pick_tx` (net/core/dev.c) asks
//! `get_xps_queue` first. That looks up the XPS map of the core that runs the
//! forwarding (`skb->sender_cpu`): the transmit queues whose XPS CPU mask contains that
//! core. With one queue in the map, that queue; with several,
//! `map->queues[reciprocal_scale(skb_get_hash(skb), map->len)]`. With no map for the
//! core (XPS off, or a core that no queue lists), `skb_tx_hash` picks. A frame whose
//! receive queue the driver recorded (`skb_record_rx_queue`, which ixgbe, i40e and mlx5
//! call for every frame) leaves by the transmit queue of the same number, reduced
//! modulo the queue count. A frame with no receive queue (one the host generates)
//! leaves by `reciprocal_scale(skb_get_hash(skb), count)`; the model's sending
//! application has hash 0, so its frames leave by queue 0.
//!
//! The XPS map is the one ixgbe writes when it configures a transmit ring
//! (`ixgbe_configure_tx_ring`: `netif_set_xps_queue` with the ring's queue vector's
//! affinity mask, once, `__IXGBE_TX_XPS_INIT_DONE`). `ixgbe_alloc_q_vector` (Linux
//! 4.18) sets vector v's mask to CPU v, with one traffic class, no SR-IOV, more than
//! one RSS queue and a non-zero `atr_sample_rate` (the default, 20). ixgbe has at most
//! one vector per online CPU (`ixgbe_set_interrupt_capability`) and interleaves its
//! rings over them (`txr_idx += v_count`), so transmit ring k is on vector k mod the
//! vectors: queue k serves core k mod cores. (irqsim gives every queue a vector of its
//! own even when queues outnumber cores, where ixgbe would share them; the map is the
//! same.) The map follows the driver, not `/proc/irq/N/smp_affinity`: binding every
//! vector to core 0 afterwards leaves the map as it was, so core 0 then sends by the
//! queues it lists (queue 0 alone when there are as many queues as cores).
//!
//! Parameters: the queue count and the number of cores, and whether the driver sets
//! XPS up (`nics[].xps`, default true). No counters; the NIC's queues count what they
//! send (`<nic>-q<k>.tx_frames`).

/// `reciprocal_scale(val, n)`: `val` scaled into `0..n` by its high bits, the kernel's
/// way of turning a 32-bit hash into an index.
#[inline(always)]
pub fn reciprocal_scale(val: u32, n: usize) -> usize {
    ((val as u64 * n as u64) >> 32) as usize
}

/// The transmit-queue selection of one multi-queue NIC.
#[derive(Clone, Debug)]
pub struct Xps {
    /// Transmit queues (`real_num_tx_queues`).
    count: u16,
    /// For each core, the queues its XPS map lists (empty: no map).
    map: Vec<Vec<u16>>,
}

impl Xps {
    /// The selection for a NIC with `count` transmit queues on a host with `cores`
    /// cores: with `xps` (and more than one queue), ixgbe's map, queue k for core k mod
    /// `cores`; without, no map.
    pub fn new(count: u16, cores: usize, xps: bool) -> Xps {
        let cores = cores.max(1);
        let mut map = vec![Vec::new(); cores];
        if xps && count > 1 {
            for q in 0..count {
                map[q as usize % cores].push(q);
            }
        }
        Xps {
            count: count.max(1),
            map,
        }
    }

    /// The transmit queue of a frame forwarded on `core`, whose flow hash is `hash`
    /// and whose receive queue, if the driver recorded one, is `rx_queue`.
    #[inline]
    pub fn pick(&self, core: usize, hash: u32, rx_queue: Option<u16>) -> u16 {
        match self.map.get(core).map(Vec::as_slice) {
            Some([q]) => *q,
            Some(qs) if !qs.is_empty() => qs[reciprocal_scale(hash, qs.len())],
            _ => match rx_queue {
                Some(r) => r % self.count,
                None => reciprocal_scale(hash, self.count as usize) as u16,
            },
        }
    }

    /// The queues core `core`'s XPS map lists (empty: none).
    pub fn queues_of(&self, core: usize) -> &[u16] {
        self.map.get(core).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_queue_per_core_sends_by_the_cores_own_queue() {
        let x = Xps::new(4, 4, true);
        for c in 0..4 {
            // Whatever the hash and the receive queue.
            assert_eq!(x.pick(c, 0xdead_beef, Some(3)), c as u16);
            assert_eq!(x.pick(c, 7, None), c as u16);
        }
    }

    #[test]
    fn more_queues_than_cores_share_a_core_by_hash() {
        // 6 queues on 4 cores: rings interleaved over 4 vectors, so core 0 lists 0 and
        // 4, core 1 lists 1 and 5.
        let x = Xps::new(6, 4, true);
        assert_eq!(x.queues_of(0), [0, 4]);
        assert_eq!(x.queues_of(1), [1, 5]);
        assert_eq!(x.queues_of(2), [2]);
        // get_xps_queue with map->len 2: reciprocal_scale(h, 2) is the hash's top bit.
        assert_eq!(x.pick(0, 0x7fff_ffff, None), 0);
        assert_eq!(x.pick(0, 0x8000_0000, None), 4);
        assert_eq!(x.pick(1, 0x8000_0000, Some(0)), 5);
    }

    #[test]
    fn one_queue_has_no_map() {
        // rss_i > 1 is one of ixgbe's conditions: a one-queue NIC gets no XPS.
        let x = Xps::new(1, 4, true);
        assert!(x.queues_of(0).is_empty());
        assert_eq!(x.pick(2, u32::MAX, Some(3)), 0);
    }

    #[test]
    fn a_core_without_a_map_falls_back_to_the_recorded_receive_queue_or_the_hash() {
        // 2 queues on 4 cores: cores 2 and 3 have no map.
        let x = Xps::new(2, 4, true);
        assert_eq!(x.pick(2, 0, Some(1)), 1);
        assert_eq!(x.pick(3, 0, Some(5)), 1, "5 mod 2");
        // Not recorded: reciprocal_scale(0xc000_0000, 2) = 1.
        assert_eq!(x.pick(3, 0xc000_0000, None), 1);
        assert_eq!(x.pick(3, 0x4000_0000, None), 0);
    }

    #[test]
    fn without_xps_a_frame_leaves_by_its_receive_queues_number() {
        let x = Xps::new(4, 4, false);
        assert_eq!(x.pick(0, 0, Some(3)), 3);
        assert_eq!(x.pick(3, 0, Some(0)), 0);
        assert_eq!(x.pick(1, u32::MAX, None), 3);
    }

    #[test]
    fn reciprocal_scale_is_the_kernels() {
        assert_eq!(reciprocal_scale(0, 6), 0);
        assert_eq!(reciprocal_scale(u32::MAX, 6), 5);
        assert_eq!(reciprocal_scale(1 << 31, 6), 3);
    }
}
