//! Intel ixgbe's adaptive interrupt throttling: the driver's default `rx-usecs 1`
//! ("dynamic", `ethtool -C <dev> adaptive-rx on`), which recomputes a queue vector's
//! interrupt interval (its EITR) after every NAPI poll that completes.
//!
//! As the modelled kernel has it (Linux 4.18, `drivers/net/ethernet/intel/ixgbe/`;
//! read in github zzwd/linux-4.18-rt, whose ixgbe is 4.18's): `ixgbe_poll` calls
//! `ixgbe_set_itr` after `napi_complete_done` when `adapter->rx_itr_setting & 1`
//! (`rx_itr_setting` is 1 by default, `ixgbe_sw_init`), and `ixgbe_set_itr`
//! (ixgbe_main.c L2715-2735) runs `ixgbe_update_itr` (L2505-2676) on the vector's
//! transmit and receive ring containers, takes the smaller of their values, clears the
//! latency flag and writes `usecs << 2` to EITR when it changed (`ixgbe_write_eitr`
//! masks it with `IXGBE_MAX_EITR` 0xFF8: whole 2 us steps). `ixgbe_update_itr`, with
//! the packets and bytes the ring cleaned since its last update:
//!
//! - more than a jiffy since the last update (`time_after(jiffies, next_update)`): the
//!   counts are stale; the ring's value becomes 10 us in latency mode
//!   (`IXGBE_ITR_ADAPTIVE_MIN_USECS | IXGBE_ITR_ADAPTIVE_LATENCY`);
//! - no packet: the vector's current interval + 2 us (at most 126), keeping the ring's
//!   latency flag;
//! - fewer than 4 packets and under 9,000 bytes: latency mode, sized by the frames;
//! - 4 to 47 packets: current + 2 us (at most 126); 48 to 95: unchanged; 96 to 255:
//!   halved (at least 10);
//! - 256 and more: bulk mode, sized by the frames: the average wire size `bytes /
//!   packets` mapped piecewise (<= 60: 5,120; <= 316: x 40 + 2,720; <= 1,084: x 15 +
//!   11,452; <= 1,980: x 5 + 22,420; else 32,256), halved in latency mode, then
//!   `DIV_ROUND_UP(size, 2 x 256) x 2` us at 10 Gbit/s (`x 64` instead of `x 256` at
//!   1 and 2.5 Gbit/s).
//!
//! Constants from ixgbe.h (4.18 L413-417): `IXGBE_ITR_ADAPTIVE_MIN_INC` 2,
//! `_MIN_USECS` 10, `_MAX_USECS` 126, `_LATENCY` 0x80, `_BULK` 0. A receive vector
//! starts at `IXGBE_20K_ITR` (200: 50 us, ixgbe.h L490; ixgbe_lib.c
//! `ixgbe_alloc_q_vector` L900-904) with both rings at 126 us in latency mode (L886-890).
//!
//! What the model passes: the frames and bytes the NIC queue received since the last
//! update, as the receive ring's totals (ixgbe counts them per poll in
//! `ixgbe_clean_rx_irq`); the vector's transmit ring reports no packets (forwarded
//! frames leave by the output port's queues, whose completions the model does not
//! count on this vector), so its value climbs by 2 us per update as the driver's does
//! for an idle ring. `jiffies` are the kernel's clock ticks (`kernel.clock.hz`).

/// `IXGBE_ITR_ADAPTIVE_MIN_INC` \[us\].
const MIN_INC: u32 = 2;
/// `IXGBE_ITR_ADAPTIVE_MIN_USECS` \[us\].
const MIN_USECS: u32 = 10;
/// `IXGBE_ITR_ADAPTIVE_MAX_USECS` \[us\].
const MAX_USECS: u32 = 126;
/// `IXGBE_ITR_ADAPTIVE_LATENCY`: the flag bit of a ring's value.
const LATENCY: u32 = 0x80;
/// `IXGBE_ITR_ADAPTIVE_BULK`.
const BULK: u32 = 0;
/// `IXGBE_MAX_EITR`.
const MAX_EITR: u32 = 0xFF8;
/// `IXGBE_20K_ITR`: a receive vector's first interval (50 us) \[us << 2\].
const START: u32 = 200;

/// One ring container's state (`struct ixgbe_ring_container`: `itr`, `next_update`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingItr {
    /// Its last value: microseconds, with `LATENCY` as a flag \[us | flag\].
    pub itr: u32,
    /// The jiffy by which the next update must come for its counts to be fresh.
    pub next_update: u64,
}

/// A queue vector's adaptive ITR (`q_vector->itr` and its two ring containers).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IxgbeItr {
    /// `q_vector->itr`: the interval written to EITR, in quarter microseconds
    /// (`usecs << 2`).
    pub itr: u32,
    /// The receive ring's container.
    pub rx: RingItr,
    /// The transmit ring's container.
    pub tx: RingItr,
    /// Link at 1 or 2.5 Gbit/s (else 10 Gbit/s or 100 Mbit/s): the size scaling.
    pub slow_link: bool,
    /// Updates that changed the interval -- counter.
    pub changes: u64,
}

impl IxgbeItr {
    /// A vector on a link of `line_rate_bps`, its interval not yet set.
    pub fn new(line_rate_bps: f64) -> IxgbeItr {
        let ring = RingItr {
            itr: MAX_USECS | LATENCY,
            next_update: 0,
        };
        IxgbeItr {
            itr: START,
            rx: ring,
            tx: ring,
            slow_link: (1e9..=2.5e9).contains(&line_rate_bps),
            changes: 0,
        }
    }

    /// The interval EITR holds \[ns\]: `itr & IXGBE_MAX_EITR` quarter microseconds.
    pub fn interval_ns(&self) -> u64 {
        u64::from(self.itr & MAX_EITR) * 250
    }

    /// `ixgbe_update_itr` on `ring` with the `packets` and `bytes` it cleaned since its
    /// last update, at jiffy `jiffies`.
    fn update(&self, ring: &mut RingItr, jiffies: u64, packets: u32, bytes: u32) {
        let q = self.itr >> 2;
        let mut itr = MIN_USECS | LATENCY;
        let sized = 'size: {
            if jiffies > ring.next_update {
                break 'size false;
            }
            if packets == 0 {
                itr = (q + MIN_INC).min(MAX_USECS) + (ring.itr & LATENCY);
                break 'size false;
            }
            if packets < 4 && bytes < 9000 {
                itr = LATENCY;
                break 'size true;
            }
            if packets < 48 {
                itr = (q + MIN_INC).min(MAX_USECS);
                break 'size false;
            }
            if packets < 96 {
                itr = q;
                break 'size false;
            }
            if packets < 256 {
                itr = (self.itr >> 3).max(MIN_USECS);
                break 'size false;
            }
            itr = BULK;
            true
        };
        if sized {
            let avg = bytes / packets;
            let mut size = if avg <= 60 {
                5120
            } else if avg <= 316 {
                avg * 40 + 2720
            } else if avg <= 1084 {
                avg * 15 + 11452
            } else if avg <= 1980 {
                avg * 5 + 22420
            } else {
                32256
            };
            if itr & LATENCY != 0 {
                size >>= 1;
            }
            let per = if self.slow_link { 64 } else { 256 };
            itr += size.div_ceil(MIN_INC * per) * MIN_INC;
        }
        ring.itr = itr;
        ring.next_update = jiffies + 1;
    }

    /// `ixgbe_set_itr` after a poll that completed, at jiffy `jiffies`, with the
    /// receive ring's `packets` and `bytes` since the last call (the transmit ring's
    /// are none). Returns whether EITR changed.
    pub fn set_itr(&mut self, jiffies: u64, packets: u32, bytes: u32) -> bool {
        let (mut tx, mut rx) = (self.tx, self.rx);
        self.update(&mut tx, jiffies, 0, 0);
        self.update(&mut rx, jiffies, packets, bytes);
        (self.tx, self.rx) = (tx, rx);
        let new = (rx.itr.min(tx.itr) & !LATENCY) << 2;
        if new == self.itr {
            return false;
        }
        self.itr = new;
        self.changes += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vector at `usecs` whose rings were updated at jiffy 10.
    fn at(usecs: u32, rx_flag: u32, tx_flag: u32) -> IxgbeItr {
        IxgbeItr {
            itr: usecs << 2,
            rx: RingItr {
                itr: usecs | rx_flag,
                next_update: 11,
            },
            tx: RingItr {
                itr: usecs | tx_flag,
                next_update: 11,
            },
            ..IxgbeItr::new(10e9)
        }
    }

    /// Worked through the driver's own arithmetic (ixgbe_update_itr, ixgbe_set_itr,
    /// Linux 4.18), one case per branch.
    #[test]
    fn the_interval_follows_ixgbe_update_itr_branch_by_branch() {
        // 300 frames of 64 bytes at 10G in a poll: bulk; avg 64 -> 64 x 40 + 2,720 =
        // 5,280; DIV_ROUND_UP(5,280, 512) x 2 = 11 x 2 = 22 us (bulk, no flag). The
        // idle transmit ring: 50 >> 2... the vector was at 50 us: 50 + 2 = 52, bulk
        // flag kept (none). min(22, 52) = 22 us: EITR 88 (22 << 2), 22 us.
        let mut v = at(50, 0, 0);
        assert!(v.set_itr(11, 300, 300 * 64));
        assert_eq!((v.rx.itr, v.tx.itr, v.itr), (22, 52, 88));
        assert_eq!(v.interval_ns(), 22_000);
        // 300 frames of 1,500 bytes: avg 1,500 -> x 5 + 22,420 = 29,920; ceil(29,920 /
        // 512) = 59 -> 118 us; transmit 22 + 2 = 24; min 24 us.
        assert!(v.set_itr(12, 300, 300 * 1500));
        assert_eq!((v.rx.itr, v.tx.itr, v.itr >> 2), (118, 24, 24));
        // 2 frames of 64 bytes: latency mode; avg 64 -> 5,280 halved = 2,640; ceil(2,640
        // / 512) = 6 -> 0x80 + 12. min(0x80 + 12, 24 + 2 = 26) = 26: the flag makes the
        // latency value the larger, the transmit ring's the smaller (the driver's min()
        // compares the flagged values).
        assert!(v.set_itr(13, 2, 128));
        assert_eq!((v.rx.itr, v.tx.itr, v.itr >> 2), (LATENCY + 12, 26, 26));
        // 20 frames: current 26 + 2 = 28; 60 frames: unchanged (28); 150 frames:
        // halved, 28 << 2 >> 3 = 14; 10 frames after that, 14 + 2 = 16.
        v.set_itr(14, 20, 20 * 64);
        assert_eq!(v.itr >> 2, 28);
        assert!(!v.set_itr(15, 60, 60 * 64));
        assert_eq!((v.rx.itr, v.itr >> 2), (28, 28));
        v.set_itr(16, 150, 150 * 64);
        assert_eq!(v.rx.itr, 14);
        assert_eq!(v.itr >> 2, 14);
        // No frame: current + 2 for both rings (16), each keeping its flag.
        v.set_itr(17, 0, 0);
        assert_eq!((v.rx.itr, v.tx.itr, v.itr >> 2), (16, 16, 16));
        // 150 frames of 64 bytes on a 10 us vector: halving stops at 10 us.
        let mut w = at(10, 0, 0);
        w.set_itr(11, 150, 150 * 64);
        assert_eq!(w.rx.itr, MIN_USECS);
        // More than a jiffy since the last update: stale counts, both rings reset to
        // 10 us in latency mode, and the vector to 10 us.
        let mut s = at(60, 0, 0);
        assert!(s.set_itr(13, 300, 300 * 64));
        assert_eq!(
            (s.rx.itr, s.tx.itr, s.itr >> 2),
            (MIN_USECS | LATENCY, MIN_USECS | LATENCY, 10)
        );
        // At 1 Gbit/s the size scales by 64: 300 frames of 64 bytes -> ceil(5,280 /
        // 128) = 42 -> 84 us; the transmit ring 50 + 2 = 52 is smaller.
        let mut g = IxgbeItr {
            slow_link: true,
            ..at(50, 0, 0)
        };
        g.set_itr(11, 300, 300 * 64);
        assert_eq!((g.rx.itr, g.itr >> 2), (84, 52));
        // Large frames cap at 32,256 -> 63 x 2 = 126 us; tiny ones (<= 60) start at
        // 5,120 -> 10 x 2 = 20 us.
        let mut b = at(120, 0, 0);
        b.set_itr(11, 256, 256 * 9000);
        assert_eq!(b.rx.itr, 126);
        let mut t = at(120, 0, 0);
        t.set_itr(11, 256, 256 * 60);
        assert_eq!(t.rx.itr, 20);
        // The increments stop at 126 us.
        let mut m = at(126, 0, 0);
        m.set_itr(11, 10, 640);
        assert_eq!(m.rx.itr, MAX_USECS);
        // EITR keeps whole 2 us steps: 0xFF8 masks the low 3 bits of usecs << 2, so
        // 21 us is written as 20.
        let odd = IxgbeItr {
            itr: 21 << 2,
            ..IxgbeItr::default()
        };
        assert_eq!(odd.interval_ns(), 20_000);
        // A new vector: 50 us (IXGBE_20K_ITR), both rings 126 us in latency mode; its
        // first update with 300 small frames within a jiffy of 0 is bulk, 22 us (the
        // transmit ring: 50 + 2 with its latency flag, so the larger).
        let mut n = IxgbeItr::new(10e9);
        assert_eq!(n.interval_ns(), 50_000);
        assert!(n.set_itr(0, 300, 300 * 64));
        assert_eq!((n.rx.itr, n.tx.itr, n.itr >> 2), (22, LATENCY + 52, 22));
        assert!(IxgbeItr::new(1e9).slow_link && !n.slow_link);
    }
}
