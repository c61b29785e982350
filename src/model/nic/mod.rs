//! A network interface: receive descriptor ring, interrupt line, send queue, transmit
//! ring and the wire.
//!
//! Models a bus-master Ethernet controller such as the DEC/Intel 21143 (dc(4)) or the
//! 3c905B (xl(4)) with its BSD driver's `ifnet`:
//!
//! ```text
//!  wire -> [rx_latency: PHY, FIFO, DMA] -> RX ring (rx_ring_slots) -> interrupt line
//!  if_snd (ifq_maxlen) -> TX ring (tx_ring_slots) -> [tx_latency] -> wire (line rate)
//! ```
//!
//! - Receive: when a frame's DMA completes (`rx_latency_ns` after its last bit), it takes
//!   a ring slot; if all `rx_ring_slots` descriptors are owned by the host the frame is
//!   dropped (the 21143's "receive buffer unavailable", missed-frames counter CSR8). The
//!   NIC then asserts its interrupt line unless the driver masked it (IMR = 0).
//! - Transmit: the driver moves frames from if_snd to the TX ring while it has free
//!   descriptors; the NIC sends them in order at line rate. A frame starts
//!   `tx_latency_ns` after it was handed over (descriptor fetch, DMA, FIFO threshold) or
//!   when the previous frame has left, whichever is later. With `tx_poll_interval_ns` > 0
//!   an idle transmitter only notices new descriptors at its next automatic poll (the
//!   21143's CSR0 TAP field), as when the driver issues no transmit poll demand.
//!
//! Parameters ([`NicConfig`]) with defaults: `line_rate_bps` 100e6, `rx_ring_slots` 64
//! and `tx_ring_slots` 256 (dc(4)'s DC_RX_LIST_CNT / DC_TX_LIST_CNT), `rx_latency_ns` 0,
//! `tx_latency_ns` 0, `tx_poll_interval_ns` 0 (transmit poll demand on every frame).
//!
//! Statistics counters and their overflow interrupt: see [`crate::model::nic::counters`].
//!
//! Counters (in results as `<nic>.<counter>`): `rx_frames` (placed in the RX ring),
//! `rx_ring.drops` (frames dropped for want of a free RX descriptor: refused by a full
//! ring, or with `dma.drop_without_descriptor` dropped unwritten, mlx5's
//! `rx_out_of_buffer`; equal to the drops at site `rx_ring` of the frames that entered
//! by it), `rx_ring.high_water`, `interrupts` (handler
//! invocations with work; taken by the host when a handler reads the chip's status),
//! `tx_frames` (transmissions started and not aborted: counted when the transmitter
//! commits to a frame, uncounted if an underrun or a reset cuts it), `if_snd.drops`,
//! `if_snd.high_water`.
//!
//! The port's parts, each a module of this folder: [`config`] (the NIC's configuration and its validation), [`link`] (line rate, serialisation), [`dma`] (DMA engines and FIFOs), [`rss`], [`xps`], [`tx_arbiter`], [`port`] (a port's transmit queues, one or several, and the wire they share), [`dim`], [`counters`] (statistics counters and their overflow interrupt), [`link_watch`] (dc(4)'s underrun reset and link check).
//!
//! Uses [`crate::sim`] (time, keyed timers, random streams, problems), and of the other
//! components packets, costs, queues, the bus's bursts ([`crate::model::bus`]) and the
//! receive policy a NIC is configured with ([`crate::model::policy`]); never the host
//! or anything above it.

pub mod config;
pub mod counters;
pub mod dim;
pub mod dma;
pub mod ixgbe_itr;
pub mod link;
pub mod link_watch;
pub mod moderation;
pub mod port;
pub mod rss;
pub mod tx_arbiter;
pub mod xps;

use crate::model::nic::counters::StatsCounters;
use crate::model::nic::link::Link;
use crate::model::packet::Packet;
use crate::model::queue::BoundedQueue;
use crate::sim::time::SimTime;
pub use config::{
    LINE_RATE_BPS_RANGE, LinuxDriver, NicConfig, RssConfig, TxCompletionConfig, queue_name,
};

/// A frame on the TX ring and the time the NIC may start sending it.
#[derive(Clone, Copy, Debug)]
struct TxSlot {
    pkt: Packet,
    eligible: SimTime,
}

/// A transmission the NIC has committed to: the model records the packet as sent from
/// the host at `start` and schedules the end of transmission at `done`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxStart {
    /// The frame.
    pub pkt: Packet,
    /// First bit on the output wire.
    pub start: SimTime,
    /// Last bit on the output wire; the TX slot frees then.
    pub done: SimTime,
}

/// NIC state during a run.
#[derive(Clone, Debug)]
pub struct Nic {
    /// Interface name.
    pub name: String,
    /// The attached link.
    pub link: Link,
    /// Receive descriptor ring; `drops` counts frames lost because it was full.
    pub rx_ring: BoundedQueue<Packet>,
    /// Interface send queue (`ifp->if_snd`); `drops` counts frames lost because it was full.
    pub if_snd: BoundedQueue<Packet>,
    tx_ring: BoundedQueue<TxSlot>,
    tx_active: bool,
    /// Descriptors of sent frames not yet reclaimed by the driver.
    tx_unreclaimed: u32,
    tx_completion: Option<TxCompletionConfig>,
    /// A transmit-completion cause (TX_OK or TX_NOBUF) is pending.
    pub tx_cause: bool,
    /// Frames sent since the start (drives "every Nth").
    tx_completed: u64,
    /// The driver considers the link up (dc(4)'s `sc->dc_link`); while it is down
    /// the start routine leaves frames in if_snd.
    link_up: bool,
    /// The transmitter stopped after an underrun, until the driver restarts it.
    pub tx_halted: bool,
    /// Restarted after an underrun, the transmitter is suspended until it next reads
    /// its ring: at a poll demand (which the start routine writes when it queues a
    /// frame) or, with `tx_poll_interval_ns`, at its next automatic poll.
    tx_suspended: bool,
    /// Frames an underrun cut, counted where they were cut for traces (the flows count
    /// the same frames as `tx_underrun` drops; the DMA engine counts underruns).
    pub underrun_drops: u64,
    /// A transmit-underrun cause (TX_UNDERRUN) is pending.
    underrun_cause: bool,
    /// A receive descriptor reports an error (a frame cut by a FIFO overflow).
    rx_error_cause: bool,
    /// A reset freed the ring while a frame was on the wire: its end is not a
    /// completion.
    skip_done: bool,
    /// Interrupts enabled in the chip's mask register (IMR); the driver clears it while
    /// its handler runs.
    irq_enabled: bool,
    /// An interrupt was taken and not taken back since ([`Nic::untake_interrupt`]).
    irq_taken: bool,
    /// The line is asserted and the interrupt not yet taken.
    irq_asserted: bool,
    /// Receive pipeline latency.
    pub rx_latency: SimTime,
    tx_latency: SimTime,
    tx_poll: SimTime,
    /// Frames placed in the RX ring -- counter.
    pub rx_frames: u64,
    /// Bytes of the frames placed in the RX ring -- counter.
    pub rx_bytes: u64,
    /// Interrupts taken (handler invocations) -- counter.
    pub interrupts: u64,
    /// Frames put on the output wire, less those an underrun or a reset cut -- counter.
    pub tx_frames: u64,
    /// Statistics counters, when modelled.
    pub stats: Option<StatsCounters>,
}

/// Whether a transmitter may start a frame on its wire now, as its port
/// ([`port::TxPort`]) says: on a port of one queue the wire is [`Wire::Free`] whenever the
/// queue is not sending itself; on a multi-queue port another queue may hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// No other queue has a frame on the wire.
    Free,
    /// Another queue of the port has the wire, or the arbiter decides who is next: the
    /// frames wait for the queue's turn ([`Nic::tx_turn`]).
    Held,
}

impl Nic {
    /// A NIC from its configuration; `if_snd_maxlen` comes from the kernel profile.
    pub fn new(cfg: &NicConfig, if_snd_maxlen: usize, clock_mhz: f64) -> Nic {
        let if_snd_maxlen = cfg.if_snd_maxlen.map_or(if_snd_maxlen, |q| q as usize);
        Nic {
            name: cfg.name.clone(),
            link: Link::new(cfg.line_rate_bps),
            rx_ring: BoundedQueue::new(cfg.rx_ring_slots as usize),
            if_snd: BoundedQueue::new(if_snd_maxlen),
            tx_ring: BoundedQueue::new(cfg.tx_ring_slots as usize),
            tx_active: false,
            tx_unreclaimed: 0,
            tx_completion: cfg.tx_completion.clone(),
            tx_cause: false,
            tx_completed: 0,
            link_up: true,
            tx_halted: false,
            tx_suspended: false,
            underrun_drops: 0,
            underrun_cause: false,
            rx_error_cause: false,
            skip_done: false,
            irq_enabled: true,
            irq_taken: false,
            irq_asserted: false,
            rx_latency: SimTime::from_ns_f64(cfg.rx_latency_ns),
            tx_latency: SimTime::from_ns_f64(cfg.tx_latency_ns),
            tx_poll: SimTime::from_ns_f64(cfg.tx_poll_interval_ns),
            rx_frames: 0,
            rx_bytes: 0,
            interrupts: 0,
            tx_frames: 0,
            stats: cfg
                .stats_counters
                .as_ref()
                .map(|c| StatsCounters::new(c, clock_mhz)),
        }
    }

    /// Frames in the TX ring waiting to be sent or on the wire.
    pub fn tx_ring_len(&self) -> usize {
        self.tx_ring.len()
    }

    /// DMA of a received frame completes: take a ring slot or drop it (counted in
    /// `rx_ring.drops`). Returns whether the frame is in the ring.
    #[inline]
    pub fn rx_dma(&mut self, pkt: Packet) -> bool {
        // (Written as a branch: `self.rx_frames += ok as u64` left the counter at 0 in
        // release builds of rustc 1.95.0 and counted in builds with debug assertions;
        // the golden outputs caught it.)
        let bytes = pkt.bytes as u64;
        if self.rx_ring.push(pkt).is_err() {
            return false;
        }
        self.rx_frames += 1;
        self.rx_bytes += bytes;
        true
    }

    /// A received frame was dropped unwritten because its turn to be written came while
    /// the RX ring had no free descriptor (`dma.drop_without_descriptor`, mlx5's
    /// `rx_out_of_buffer`): counted in `rx_ring.drops`, like a frame the full ring
    /// refused in [`Nic::rx_dma`].
    #[inline]
    pub fn rx_no_descriptor(&mut self) {
        self.rx_ring.drops += 1;
    }

    /// Whether the line should be raised now: work is pending and the interrupt is
    /// enabled and not already asserted.
    #[inline]
    pub fn wants_interrupt(&self) -> bool {
        self.irq_enabled
            && !self.irq_asserted
            && (!self.rx_ring.is_empty()
                || self.stats_cause()
                || self.tx_cause
                || self.underrun_cause
                || self.rx_error_cause)
    }

    /// Whether the line is asserted and the interrupt not yet taken.
    #[inline]
    pub fn irq_asserted(&self) -> bool {
        self.irq_asserted
    }

    /// Whether a receive descriptor reports an error not yet handled.
    #[inline]
    pub fn rx_error_pending(&self) -> bool {
        self.rx_error_cause
    }

    /// Whether a transmit-underrun cause (TX_UNDERRUN) is pending.
    #[inline]
    pub fn underrun_pending(&self) -> bool {
        self.underrun_cause
    }

    /// Whether the driver considers the link up.
    #[inline]
    pub fn link_up(&self) -> bool {
        self.link_up
    }

    /// The chip asserts its interrupt line (a cause is pending and the interrupt is
    /// enabled: see [`Nic::wants_interrupt`]).
    #[inline]
    pub fn assert_irq(&mut self) {
        self.irq_asserted = true;
    }

    /// The driver writes the interrupt mask register (IMR) back: interrupts enabled.
    #[inline]
    pub fn unmask_irq(&mut self) {
        self.irq_enabled = true;
    }

    /// The handler reads and acknowledges the interrupt status: if the line is asserted
    /// it is taken (the chip masked, one more interrupt counted) and `true` returned.
    #[inline]
    pub fn take_interrupt(&mut self) -> bool {
        if !self.irq_asserted {
            return false;
        }
        self.irq_asserted = false;
        self.irq_enabled = false;
        self.irq_taken = true;
        self.interrupts += 1;
        true
    }

    /// Undo [`Nic::take_interrupt`] (a handler's start folded into a burst and taken
    /// back): asserted again, unmasked, the interrupt uncounted. Returns `false`, and
    /// changes nothing, if no interrupt stands taken (none taken since the last undo,
    /// or none counted): a broken invariant for the caller to report. The chip may
    /// have been unmasked meanwhile, or assert again: another core's busy poll can
    /// complete the device's NAPI instance (napi_complete unmasks it) while the handler
    /// folded into this core's burst has not yet begun; the undo stands.
    #[inline]
    pub fn untake_interrupt(&mut self) -> bool {
        if !self.irq_taken || self.interrupts == 0 {
            return false;
        }
        self.irq_taken = false;
        self.irq_asserted = true;
        self.irq_enabled = true;
        self.interrupts -= 1;
        true
    }

    /// A frame was cut by a receive FIFO overflow: its descriptor carries the error.
    /// Returns whether the cause is new (it was not already pending).
    #[inline]
    pub fn flag_rx_error(&mut self) -> bool {
        !std::mem::replace(&mut self.rx_error_cause, true)
    }

    /// The driver has handled the receive error cause.
    #[inline]
    pub fn ack_rx_error(&mut self) {
        self.rx_error_cause = false;
    }

    /// The transmit underrun cause has been handled (by the driver, or by the chip
    /// itself when no driver code for it is modelled).
    #[inline]
    pub fn ack_underrun(&mut self) {
        self.underrun_cause = false;
    }

    /// The driver's link check finds the link up again (dc_tick: `sc->dc_link`).
    #[inline]
    pub fn link_restored(&mut self) {
        self.link_up = true;
    }

    /// Whether frames wait to be sent after the one on the wire (TX ring or if_snd).
    #[inline]
    pub fn tx_backlog(&self) -> bool {
        self.tx_ring.len() > self.tx_active as usize || !self.if_snd.is_empty()
    }

    /// Whether no transmit descriptor is in use (dc(4)'s `dc_tx_cnt == 0`): nothing
    /// queued on the TX ring and nothing sent but unreclaimed.
    #[inline]
    pub fn tx_idle(&self) -> bool {
        self.tx_ring.is_empty() && self.tx_unreclaimed == 0
    }

    /// Whether transmissions completing raise a cause (`tx_completion` configured).
    #[inline]
    pub fn tx_completion_interrupts(&self) -> bool {
        self.tx_completion.is_some()
    }

    /// Whether the statistics-overflow cause (STATSOFLOW) is pending.
    #[inline]
    pub fn stats_cause(&self) -> bool {
        self.stats.as_ref().is_some_and(|s| s.cause)
    }

    /// `if_output`: queue a forwarded frame on if_snd and run the driver's start
    /// routine, which fills free TX descriptors. Returns a transmission to record if the
    /// idle transmitter starts one; a full if_snd drops the frame (`Err`). `wire` is the
    /// port's wire as this queue sees it (its port, `super::port::TxPort`, says): a
    /// [`Wire::Held`] one keeps the frame for the queue's turn.
    #[inline]
    pub fn output_on(
        &mut self,
        now: SimTime,
        pkt: Packet,
        wire: Wire,
    ) -> Result<Option<TxStart>, Packet> {
        self.if_snd.push(pkt)?;
        // The start routine queues it and writes a poll demand.
        self.tx_suspended = false;
        self.fill_tx_ring(now);
        Ok(self.kick(now, false, wire))
    }

    fn fill_tx_ring(&mut self, now: SimTime) {
        if !self.link_up {
            return;
        }
        let cap = self.tx_ring.capacity() - self.tx_unreclaimed as usize;
        while self.tx_ring.len() < cap {
            let Some(pkt) = self.if_snd.pop() else { break };
            let eligible = now + self.tx_latency;
            let _ = self.tx_ring.push(TxSlot { pkt, eligible });
        }
    }

    /// Start the head of the TX ring if the transmitter is idle. A frame whose
    /// descriptor a reset freed is still on the wire until its end (`skip_done`): one
    /// wire carries one frame at a time, so nothing starts before then.
    fn kick(&mut self, now: SimTime, continuing: bool, wire: Wire) -> Option<TxStart> {
        if self.tx_active || self.tx_halted || self.skip_done || wire == Wire::Held {
            return None;
        }
        let slot = *self.tx_ring.front()?;
        let start = self.start_time(slot.eligible, now, continuing);
        self.tx_active = true;
        self.tx_suspended = false;
        self.tx_frames += 1;
        Some(TxStart {
            pkt: slot.pkt,
            start,
            done: start + self.link.wire_time(slot.pkt.bytes),
        })
    }

    /// When a frame handed over to be eligible at `eligible` starts, the transmitter
    /// looking at it at `now`: at once if it is eligible and the transmitter is
    /// `continuing` from a frame of its own (or there is no automatic poll, so that
    /// only a poll demand starts it); else, a suspended transmitter, at the next
    /// automatic poll at or after both.
    fn start_time(&self, eligible: SimTime, now: SimTime, continuing: bool) -> SimTime {
        let ready = eligible.max(now);
        if (continuing && eligible <= now) || self.tx_poll == SimTime::ZERO {
            ready
        } else {
            let p = self.tx_poll.0;
            SimTime(ready.0.div_ceil(p) * p)
        }
    }

    /// The frame the transmitter had committed to is cut. Only called while
    /// `tx_active`, which `kick` sets right after counting the frame, so the count is
    /// at least one.
    fn uncount_tx(&mut self) {
        debug_assert!(self.tx_frames > 0, "an active transmission is counted");
        self.tx_frames = self.tx_frames.saturating_sub(1);
    }

    /// The frame on the wire has been sent: free its descriptor (txeof), refill from
    /// if_snd, and start the next one if the wire is this queue's (`wire`): with
    /// [`Wire::Held`] (the port's arbiter picks the next queue) its next frame waits.
    #[inline]
    pub fn tx_done_on(&mut self, now: SimTime, wire: Wire) -> Option<TxStart> {
        if std::mem::take(&mut self.skip_done) {
            return self.kick(now, true, wire);
        }
        self.tx_ring.pop();
        self.tx_active = false;
        match &self.tx_completion {
            None => self.fill_tx_ring(now),
            Some(c) => {
                self.tx_unreclaimed += 1;
                self.tx_completed += 1;
                let every = c.interrupt_every as u64;
                if (every > 0 && self.tx_completed.is_multiple_of(every))
                    || (c.interrupt_on_idle && self.tx_ring.is_empty())
                {
                    self.tx_cause = true;
                }
            }
        }
        self.kick(now, true, wire)
    }

    /// The transmitter aborted the frame at the head of the ring (underrun) and
    /// stopped; returns the frame.
    pub fn tx_abort(&mut self) -> Option<Packet> {
        if self.tx_active {
            self.uncount_tx();
        }
        self.tx_active = false;
        self.tx_halted = true;
        self.underrun_cause = true;
        let cut = self.tx_ring.pop().map(|s| s.pkt);
        self.underrun_drops += cut.is_some() as u64;
        cut
    }

    /// Chip reset (dc_stop + dc_init): the rings are freed and rebuilt empty, the link
    /// is considered down; a pending underrun stays pending for the handler. Returns the frames freed; `keep_head` keeps the frame being
    /// sent on the wire (already delivered) out of the count.
    pub fn reset(&mut self, keep_head: bool) -> Vec<Packet> {
        let mut freed: Vec<Packet> = Vec::new();
        while let Some(p) = self.rx_ring.pop() {
            freed.push(p);
        }
        // The head of the ring is the frame on the wire only while the transmitter is
        // active; after an earlier reset that frame is no longer in the ring (and a
        // second reset while it is still on the wire leaves it there).
        let head_on_wire = keep_head && self.tx_active;
        if self.tx_active && !head_on_wire {
            // The frame being sent is cut short: it does not count as sent.
            self.uncount_tx();
        }
        self.skip_done = head_on_wire || (keep_head && self.skip_done);
        let mut first = true;
        while let Some(t) = self.tx_ring.pop() {
            if !(first && head_on_wire) {
                freed.push(t.pkt);
            }
            first = false;
        }
        self.tx_active = false;
        self.tx_unreclaimed = 0;
        self.tx_cause = false;
        self.rx_error_cause = false;
        // A transmit underrun the handler has not handled yet survives: dc_intr read
        // TX_UNDERRUN from CSR5 before dc_rxeof's dc_init, and still raises the
        // threshold (and re-initialises) for it. Until then the transmitter stays
        // stopped.
        self.tx_halted = self.underrun_cause;
        self.tx_suspended = false;
        self.link_up = false;
        freed
    }

    /// The handler sees a transmit cause: acknowledge it and reclaim every sent
    /// descriptor (txeof). Returns how many, or `None` without a cause.
    pub fn take_tx_completions(&mut self) -> Option<u32> {
        if !self.tx_cause {
            return None;
        }
        self.tx_cause = false;
        Some(std::mem::take(&mut self.tx_unreclaimed))
    }

    /// A poll cleans the TX ring: reclaim up to `max` sent descriptors whether or not
    /// one asked for an interrupt (ixgbe_clean_tx_irq, mlx5e_poll_tx_cq); the transmit
    /// cause is acknowledged once none is left. Returns those reclaimed and those left.
    pub fn reclaim_tx(&mut self, max: u32) -> (u32, u32) {
        let k = self.tx_unreclaimed.min(max);
        self.tx_unreclaimed -= k;
        if self.tx_unreclaimed == 0 {
            self.tx_cause = false;
        }
        (k, self.tx_unreclaimed)
    }

    /// The driver's start routine (dc_start): move frames from if_snd to free TX
    /// descriptors and start the transmitter if idle and the wire (`wire`) is its own.
    #[inline]
    pub fn start_on(&mut self, now: SimTime, wire: Wire) -> Option<TxStart> {
        if self.if_snd.is_empty() {
            return None;
        }
        self.tx_suspended = false;
        self.fill_tx_ring(now);
        self.kick(now, false, wire)
    }

    /// The driver has handled an underrun without re-initialising the chip (it raised
    /// the threshold, dc(4)'s `dc_intr`) and calls its start routine: the transmitter,
    /// suspended by the underrun, resumes at the ring's current descriptor when it is
    /// next polled. With an automatic transmit poll (`tx_poll_interval_ns` > 0) that is
    /// the next poll, whether or not the start routine queued a frame; without one, the
    /// poll demand that the start routine writes only when it queued a frame
    /// ([`Nic::start_on`]), so frames already in the ring wait for the next frame sent.
    pub fn tx_restart_on(&mut self, now: SimTime, wire: Wire) -> Option<TxStart> {
        self.tx_halted = false;
        self.tx_suspended = true;
        if self.tx_poll == SimTime::ZERO {
            return self.start_on(now, wire);
        }
        self.fill_tx_ring(now);
        self.kick(now, false, wire)
    }

    /// Whether this transmit queue would start a frame if its port's wire were its own
    /// (on a port of one queue it is): a frame waits in its ring and its transmitter is
    /// neither busy nor stopped.
    #[inline]
    pub fn tx_ready(&self) -> bool {
        // Suspended without an automatic poll, it waits for a poll demand.
        let awaits_demand = self.tx_suspended && self.tx_poll == SimTime::ZERO;
        !(self.tx_active
            || self.tx_halted
            || self.skip_done
            || self.tx_ring.is_empty()
            || awaits_demand)
    }

    /// When the frame at the head of this transmit queue would start if the arbiter
    /// gave the queue the wire at `now` ([`Nic::tx_turn`]), if the queue is
    /// [`Nic::tx_ready`]: when it was handed over plus `tx_latency_ns`, and, for a
    /// transmitter that an underrun's restart left suspended or whose head is not yet
    /// eligible, the next automatic poll after that (never before `now`).
    #[inline]
    pub fn tx_start_at(&self, now: SimTime) -> Option<SimTime> {
        if !self.tx_ready() {
            return None;
        }
        let s = self.tx_ring.front()?;
        Some(self.start_time(s.eligible, now, !self.tx_suspended))
    }

    /// The arbiter of a multi-queue port gives this transmit queue the wire
    /// ([`Nic::tx_ready`]): its
    /// transmitter, which was running but waiting its turn, starts its next frame (as
    /// after a frame of its own: a frame already eligible starts at once, without
    /// waiting for an automatic poll), unless an underrun's restart left it suspended,
    /// when it starts at its next automatic poll.
    #[inline]
    pub fn tx_turn(&mut self, now: SimTime) -> Option<TxStart> {
        self.kick(now, !self.tx_suspended, Wire::Free)
    }

    /// Whether a frame of this transmitter is on the wire: one it has committed to that
    /// has not ended (with a bus, possibly still being fetched for it), or one whose
    /// descriptor a reset freed while it was being sent (`skip_done`).
    #[inline]
    pub fn transmitting(&self) -> bool {
        self.tx_active || self.skip_done
    }

    /// Frames held in the NIC (RX ring, if_snd, TX ring not yet started).
    pub fn held(&self) -> usize {
        self.rx_ring.len()
            + self.if_snd.len()
            + self.tx_ring.len().saturating_sub(self.tx_active as usize)
    }

    /// Its counters under its name: `<nic>.rx_frames`, `.tx_frames`, `.interrupts`,
    /// `.rx_ring.drops`, `.rx_ring.high_water`, `.if_snd.drops`, `.if_snd.high_water`,
    /// and its statistics counters' when modelled ([`StatsCounters::counters`]).
    pub fn counters(&self, c: &mut std::collections::BTreeMap<String, f64>) {
        let name = &self.name;
        c.insert(format!("{name}.rx_frames"), self.rx_frames as f64);
        c.insert(format!("{name}.tx_frames"), self.tx_frames as f64);
        c.insert(format!("{name}.interrupts"), self.interrupts as f64);
        c.insert(format!("{name}.rx_ring.drops"), self.rx_ring.drops as f64);
        let high = self.rx_ring.high_water as f64;
        c.insert(format!("{name}.rx_ring.high_water"), high);
        c.insert(format!("{name}.if_snd.drops"), self.if_snd.drops as f64);
        let high = self.if_snd.high_water as f64;
        c.insert(format!("{name}.if_snd.high_water"), high);
        if let Some(st) = &self.stats {
            st.counters(name, c);
        }
    }
}

#[cfg(test)]
mod tests;
