//! Interrupt handlers, and the classic interrupt-driven receive path (4.4BSD; FreeBSD
//! 2.x-4.x dc(4), xl(4)).
//!
//! When a NIC asserts its line, the driver's handler runs at hardware-interrupt priority:
//!
//! ```text
//! isr_entry        interrupt dispatch, handler entry, mask the chip (IMR = 0),
//!                  read and acknowledge the status register
//! loop:            (policy `interrupt`) while the ring has received frames:
//!   rx_per_packet    rxeof for one frame: unlink the mbuf, refill the descriptor,
//!                    ether_input, IF_ENQUEUE on ipintrq (dropped if full), schednetisr
//! isr_exit         (policy `interrupt`) unmask the chip; return from interrupt
//! ```
//!
//! The loop re-checks the ring after each frame, so frames that arrive while the handler
//! runs are taken in the same invocation and share its fixed cost. Frames that arrive
//! after the last check, during `isr_exit`, find the chip masked: the line is asserted
//! when it is unmasked and the handler runs again at once. Interrupts of other NICs
//! that arrive meanwhile wait (handlers at the same IPL do not nest) and are taken in the
//! order they were raised.
//!
//! The other interrupt-driven policies use the same entry and exit but replace the loop:
//! NAPI schedules a softirq poll, Mogul-Ramakrishnan wakes its thread, the deferred
//! handler enqueues a task; all three leave the chip masked until the poller is done.
//!
//! Parameters ([`DriverConfig`], costs in the forms of [`crate::cost`]): `isr_entry`,
//! `rx_per_packet`, `isr_exit` (required), `poll_call` (default 0: one call of the
//! driver's poll routine by a polling policy), `poll_status_check` (default 0: the status
//! register read and acknowledged in a FreeBSD poll with POLL_AND_CHECK_STATUS), `rx_copy_ns_per_byte` (default 0),
//! `isr_idle` (default 0: the handler on a shared line with nothing pending),
//! `tx_per_packet` (default 0: txeof per frame), `max_frames_per_interrupt` (default
//! 0: unbounded loop), `link_watch` (default none, see [`crate::link_watch`]).
//!
//! The `interrupt` loop, per step: a received frame while the ring has one (and the
//! frame limit is not reached); else, with a transmit cause, txeof for every sent
//! descriptor; else a receive error or a transmit underrun (dc_init); else exit.
//!
//! Counters: `Nic::interrupts` (handler invocations with work), `Line::passes`
//! (interrupts taken: what `RunStats::interrupts` sums), frames taken by handler loops
//! (`Host::isr_packets`).

use crate::cost::{Cost, CostParam};
use crate::link_watch::LinkWatchConfig;
use crate::packet::Packet;
use crate::problems::Problems;
use crate::rng::StreamRng;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Driver costs as written in a model file.
///
/// The costs of a path the NIC uses must be given; those of paths it never takes may
/// be left out (see [`crate::host::ModelConfig::check_roles`]): a NIC that receives
/// needs `rx_per_packet`, and `isr_entry` and `isr_exit` when its handler runs (an
/// interrupt-driven policy, transmit-completion or statistics-overflow interrupts, or
/// transmit underruns on a bus).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriverConfig {
    /// Fixed cost of one handler invocation up to its first ring check (required when
    /// the NIC's handler runs) [cost].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr_entry: Option<CostParam>,
    /// Cost of receiving one frame (rxeof): in the handler loop, or in a poll
    /// (required when the NIC receives) [cost].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_per_packet: Option<CostParam>,
    /// Fixed cost after the last ring check until return from interrupt (required
    /// when the NIC's handler runs) [cost].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr_exit: Option<CostParam>,
    /// Cost of one call of the driver's poll routine, before its frames (default 0)
    /// [cost].
    #[serde(default)]
    pub poll_call: CostParam,
    /// Reading and acknowledging the status register in a poll called with
    /// POLL_AND_CHECK_STATUS (FreeBSD polling, one tick in `reg_frac`; dc_poll reads
    /// CSR5), on top of `poll_call` (default 0) [cost].
    #[serde(default)]
    pub poll_status_check: CostParam,
    /// Copy of each received frame into a fresh mbuf (`m_devget`), on top of
    /// `rx_per_packet` [ns per byte of frame] (default 0: the buffer is passed up).
    #[serde(default)]
    pub rx_copy_ns_per_byte: f64,
    /// Handler invocation on a shared line when its device has nothing pending: mask,
    /// read the status register, unmask (default 0) [cost].
    #[serde(default)]
    pub isr_idle: CostParam,
    /// Reclaiming one transmitted frame's descriptor and freeing its mbuf (`txeof`),
    /// when the NIC's transmit completions are handled by the driver (default 0) [cost].
    #[serde(default)]
    pub tx_per_packet: CostParam,
    /// Reaction to a transmit underrun and periodic link check, dc(4)'s dc_init and
    /// dc_tick (default: none; with a bus, an underrun then only raises the threshold)
    /// (see [`crate::link_watch`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_watch: Option<LinkWatchConfig>,
    /// Most frames one handler invocation takes before it returns with work left (the
    /// device then interrupts again); a bound on the handler's loop such as later
    /// dc_intr's 16 rounds or an rx process limit (default 0: loop until the ring is
    /// empty) [frames].
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub max_frames_per_interrupt: u32,
}

fn is_zero_u32(x: &u32) -> bool {
    *x == 0
}

impl DriverConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        let zero = CostParam::default();
        for (name, c) in [
            ("isr_entry", self.isr_entry.as_ref().unwrap_or(&zero)),
            (
                "rx_per_packet",
                self.rx_per_packet.as_ref().unwrap_or(&zero),
            ),
            ("isr_exit", self.isr_exit.as_ref().unwrap_or(&zero)),
            ("poll_call", &self.poll_call),
            ("poll_status_check", &self.poll_status_check),
            ("isr_idle", &self.isr_idle),
            ("tx_per_packet", &self.tx_per_packet),
        ] {
            if let Err(e) = c.check() {
                p.push(name, e);
            }
        }
        if let Some(w) = &self.link_watch {
            p.at("link_watch", |p| w.validate(p));
        }
        p.non_negative("rx_copy_ns_per_byte", self.rx_copy_ns_per_byte, "ns/byte");
        if self.rx_copy_ns_per_byte > 1e6 {
            p.push("rx_copy_ns_per_byte", "must be at most 1e6 ns/byte");
        }
    }
}

/// Driver costs ready to sample, with their own random stream.
#[derive(Clone, Debug)]
pub(crate) struct DriverCosts {
    pub(crate) entry: Cost,
    pub(crate) rx: Cost,
    pub(crate) exit: Cost,
    pub(crate) poll_call: Cost,
    pub(crate) poll_status_check: Cost,
    pub(crate) copy_ps_per_byte: u64,
    /// Frame limit per invocation (0: none) and frames taken in the current one.
    pub max_frames: u32,
    pub taken: u32,
    pub(crate) idle: Cost,
    pub(crate) tx: Cost,
    pub rng: StreamRng,
}

impl DriverCosts {
    pub fn new(cfg: &DriverConfig, clock_mhz: f64, rng: StreamRng) -> Self {
        DriverCosts {
            // A cost left out belongs to a path the NIC never takes (checked by
            // `ModelConfig::check_roles`).
            entry: cfg.isr_entry.clone().unwrap_or_default().build(clock_mhz),
            rx: cfg
                .rx_per_packet
                .clone()
                .unwrap_or_default()
                .build(clock_mhz),
            exit: cfg.isr_exit.clone().unwrap_or_default().build(clock_mhz),
            poll_call: cfg.poll_call.build(clock_mhz),
            poll_status_check: cfg.poll_status_check.build(clock_mhz),
            copy_ps_per_byte: (cfg.rx_copy_ns_per_byte * 1e3).round() as u64,
            max_frames: cfg.max_frames_per_interrupt,
            taken: 0,
            idle: cfg.isr_idle.build(clock_mhz),
            tx: cfg.tx_per_packet.build(clock_mhz),
            rng,
        }
    }
    pub fn entry(&mut self) -> SimTime {
        self.entry.sample(&mut self.rng)
    }
    /// Receiving one frame of `bytes` bytes: rx_per_packet plus the copy.
    pub fn rx(&mut self, bytes: u32) -> SimTime {
        self.rx.sample(&mut self.rng) + SimTime(self.copy_ps_per_byte * bytes as u64)
    }
    pub fn idle(&mut self) -> SimTime {
        self.idle.sample(&mut self.rng)
    }
    /// txeof for `n` frames.
    pub fn txeof(&mut self, n: u32) -> SimTime {
        let mut t = SimTime::ZERO;
        for _ in 0..n {
            t += self.tx.sample(&mut self.rng);
        }
        t
    }
    pub fn exit(&mut self) -> SimTime {
        self.exit.sample(&mut self.rng)
    }
    pub fn poll_call(&mut self) -> SimTime {
        self.poll_call.sample(&mut self.rng)
    }
    /// The status check of a poll with POLL_AND_CHECK_STATUS.
    pub fn poll_status_check(&mut self) -> SimTime {
        self.poll_status_check.sample(&mut self.rng)
    }
}

/// Where a NIC's handler is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IsrStep {
    Idle,
    Entry,
    /// xl_stats_update for STATSOFLOW, at the handler's priority.
    Stats,
    Packet(Packet),
    /// One frame and then the exit, as one burst: known in advance that the ring check
    /// after the frame finds nothing (see `Host::quiet_until`).
    PacketExit(Packet),
    /// Entry, the one frame in the ring and the exit, as one burst (see
    /// `Host::whole_handler`); the frame is taken from the ring when the burst ends.
    Whole,
    /// txeof for the transmit completions pending.
    Txeof,
    Exit,
}
