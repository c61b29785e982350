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
mod tests {
    use super::*;

    /// A queue whose wire is its own (a port of one queue, [`Wire::Free`]): the calls
    /// its port makes ([`super::port::TxPort`]), for testing the queue alone.
    impl Nic {
        fn output(&mut self, now: SimTime, pkt: Packet) -> Result<Option<TxStart>, Packet> {
            self.output_on(now, pkt, Wire::Free)
        }
        fn tx_done(&mut self, now: SimTime) -> Option<TxStart> {
            self.tx_done_on(now, Wire::Free)
        }
        fn start(&mut self, now: SimTime) -> Option<TxStart> {
            self.start_on(now, Wire::Free)
        }
        fn tx_restart(&mut self, now: SimTime) -> Option<TxStart> {
            self.tx_restart_on(now, Wire::Free)
        }
    }

    /// A 100 Mbit/s NIC with the default rings and no latencies.
    fn nic() -> Nic {
        let cfg: NicConfig =
            serde_json::from_value(serde_json::json!({ "name": "dc1" })).expect("config");
        Nic::new(&cfg, 50, 1000.0)
    }

    fn pkt(seq: u64) -> Packet {
        Packet {
            flow: 0,
            bytes: 1500,
            seq,
            t_in: SimTime::ZERO,
        }
    }

    /// 1,500 bytes plus 20 of preamble and gap at 100 Mbit/s: 121.6 us.
    const WIRE: SimTime = SimTime(121_600_000);

    #[test]
    fn only_a_taken_interrupt_is_taken_back() {
        let mut n = nic();
        // Unmasked, not asserted, none counted: nothing to take back.
        assert!(!n.untake_interrupt());
        assert!(!n.take_interrupt(), "not asserted: nothing taken");
        n.assert_irq();
        assert!(n.take_interrupt());
        assert_eq!(
            (n.irq_asserted(), n.irq_enabled, n.interrupts),
            (false, false, 1)
        );
        assert!(n.untake_interrupt());
        assert_eq!(
            (n.irq_asserted(), n.irq_enabled, n.interrupts),
            (true, true, 0)
        );
        // Taken back once already: a second undo is refused and changes nothing.
        assert!(!n.untake_interrupt());
        assert_eq!(n.interrupts, 0);
        // Taken, then unmasked by another core's napi_complete (busy polling) before
        // the folded handler began: the undo stands, and only once.
        assert!(n.take_interrupt());
        n.unmask_irq();
        assert!(n.untake_interrupt());
        assert_eq!(
            (n.irq_asserted(), n.irq_enabled, n.interrupts),
            (true, true, 0)
        );
        assert!(!n.untake_interrupt());
    }

    #[test]
    fn a_reset_keeps_the_frame_on_the_wire_and_nothing_starts_before_its_end() {
        let mut n = nic();
        let first = n.output(SimTime::ZERO, pkt(0)).unwrap().expect("starts");
        assert_eq!(first.done, WIRE);
        n.output(SimTime(1), pkt(1)).unwrap();
        // dc_init with frame 0 on the wire: frame 1 is freed, frame 0 stays on the wire.
        let freed = n.reset(true);
        assert_eq!(freed.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1]);
        // dc_tick brings the link up and dc_start runs with a new frame: it must wait
        // for the end of frame 0.
        n.link_up = true;
        assert!(
            n.output(SimTime(2), pkt(2)).unwrap().is_none(),
            "second frame on a busy wire"
        );
        assert!(n.start(SimTime(3)).is_none(), "second frame on a busy wire");
        // Frame 0's end frees the wire: frame 2 starts then.
        let next = n.tx_done(WIRE).expect("frame 2 starts");
        assert_eq!((next.pkt.seq, next.start), (2, WIRE));
    }

    #[test]
    fn a_second_reset_before_the_frame_ends_still_keeps_the_wire_busy() {
        let mut n = nic();
        n.output(SimTime::ZERO, pkt(0)).unwrap().expect("starts");
        assert!(n.reset(true).is_empty());
        n.link_up = true;
        n.output(SimTime(1), pkt(1)).unwrap();
        // A second reset while frame 0 is still on the wire: frame 1 (waiting in the
        // ring, never started) is freed, and the wire stays busy.
        let freed = n.reset(true);
        assert_eq!(freed.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1]);
        n.link_up = true;
        assert!(
            n.output(SimTime(2), pkt(2)).unwrap().is_none(),
            "second frame on a busy wire"
        );
        assert!(n.start(SimTime(3)).is_none(), "second frame on a busy wire");
        let next = n.tx_done(WIRE).expect("frame 2 starts");
        assert_eq!(next.pkt.seq, 2);
        // Exactly one completion was skipped: frame 2's end is an ordinary one.
        assert!(n.tx_done(next.done).is_none());
        assert_eq!(n.held(), 0);
    }

    #[test]
    fn a_reset_that_cuts_the_frame_frees_it_too() {
        // keep_head false: the frame was still being fetched (cut-through) and the
        // reset cuts it; it is freed with the others and the wire is free at once.
        let mut n = nic();
        n.output(SimTime::ZERO, pkt(0)).unwrap().expect("starts");
        n.output(SimTime(1), pkt(1)).unwrap();
        let freed = n.reset(false);
        assert_eq!(freed.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0, 1]);
        n.link_up = true;
        let next = n.output(SimTime(2), pkt(2)).unwrap();
        assert_eq!(
            next.map(|t| t.start),
            Some(SimTime(2)),
            "the wire is free at once"
        );
        assert_eq!(n.held(), 0);
    }

    /// A NIC from the defaults plus the JSON fields in `extra`, with a kernel
    /// if_snd_maxlen of 50.
    fn nic_with(extra: serde_json::Value) -> Nic {
        let mut v = serde_json::json!({ "name": "dc1" });
        for (k, x) in extra.as_object().expect("object") {
            v[k] = x.clone();
        }
        let cfg: NicConfig = serde_json::from_value(v).expect("config");
        Nic::new(&cfg, 50, 1000.0)
    }

    /// A 64-byte frame.
    fn small(seq: u64) -> Packet {
        Packet {
            bytes: 64,
            ..pkt(seq)
        }
    }

    /// 64 bytes plus 20 of preamble and gap at 100 Mbit/s: 84 x 80 ns = 6.72 us.
    const WIRE64: SimTime = SimTime(6_720_000);

    fn us(x: f64) -> SimTime {
        SimTime::from_ns_f64(x * 1e3)
    }

    fn seqs<'a>(q: impl Iterator<Item = &'a Packet>) -> Vec<u64> {
        q.map(|p| p.seq).collect()
    }

    #[test]
    fn a_full_rx_ring_drops_and_the_ring_stays_fifo() {
        let mut n = nic_with(serde_json::json!({ "rx_ring_slots": 4 }));
        // Six frames into four descriptors: the last two are missed frames.
        let placed: Vec<bool> = (0..6).map(|k| n.rx_dma(small(k))).collect();
        assert_eq!(placed, [true, true, true, true, false, false]);
        assert_eq!(
            (n.rx_frames, n.rx_ring.drops, n.rx_ring.high_water),
            (4, 2, 4)
        );
        assert_eq!(n.held(), 4);
        // The driver takes the oldest; the freed descriptor takes the next frame.
        assert_eq!(n.rx_ring.pop().map(|p| p.seq), Some(0));
        assert!(n.rx_dma(small(6)));
        assert_eq!(seqs(n.rx_ring.iter()), [1, 2, 3, 6]);
        assert_eq!((n.rx_frames, n.rx_ring.drops), (5, 2));
    }

    #[test]
    fn the_line_is_raised_only_for_a_pending_cause_when_unmasked_and_not_yet_asserted() {
        let mut n = nic();
        assert!(!n.wants_interrupt(), "nothing pending");
        n.rx_dma(small(0));
        assert!(n.wants_interrupt(), "a frame in the ring");
        n.irq_asserted = true;
        assert!(!n.wants_interrupt(), "already asserted");
        n.irq_asserted = false;
        n.irq_enabled = false;
        assert!(!n.wants_interrupt(), "masked (IMR = 0)");
        n.irq_enabled = true;
        n.rx_ring.pop();
        assert!(!n.wants_interrupt(), "ring empty again");
        // Each other cause alone raises it.
        for cause in 0..3 {
            n.tx_cause = cause == 0;
            n.underrun_cause = cause == 1;
            n.rx_error_cause = cause == 2;
            assert!(n.wants_interrupt(), "cause {cause}");
        }
        n.rx_error_cause = false;
        assert!(!n.wants_interrupt());
        // The NIC does not count interrupts itself (the host does when it takes one).
        assert_eq!(n.interrupts, 0);
    }

    #[test]
    fn frames_leave_in_order_back_to_back_at_line_rate() {
        let mut n = nic();
        let t0 = n.output(us(0.0), small(0)).unwrap().expect("idle: starts");
        assert_eq!((t0.start, t0.done), (us(0.0), WIRE64));
        assert!(n.output(us(1.0), small(1)).unwrap().is_none());
        assert!(n.output(us(2.0), small(2)).unwrap().is_none());
        assert!(n.tx_backlog());
        assert_eq!((n.tx_ring_len(), n.held()), (3, 2));
        // Each end starts the next at once: 6.72, 13.44, 20.16 us.
        let t1 = n.tx_done(t0.done).expect("frame 1");
        assert_eq!(
            (t1.pkt.seq, t1.start, t1.done),
            (1, WIRE64, SimTime(2 * WIRE64.0))
        );
        let t2 = n.tx_done(t1.done).expect("frame 2");
        assert_eq!((t2.pkt.seq, t2.done), (2, SimTime(3 * WIRE64.0)));
        assert!(!n.tx_backlog());
        assert!(n.tx_done(t2.done).is_none());
        assert_eq!(n.tx_frames, 3);
        assert!(n.tx_idle());
        assert_eq!((n.tx_ring_len(), n.held()), (0, 0));
        // A 1,500-byte frame at 10 Mbit/s: 1,520 x 800 ns = 1,216 us.
        let mut slow = nic_with(serde_json::json!({ "line_rate_bps": 10e6 }));
        let t = slow.output(us(5.0), pkt(0)).unwrap().expect("starts");
        assert_eq!(t.done, us(5.0 + 1_216.0));
    }

    #[test]
    fn tx_latency_delays_an_idle_transmitter_only() {
        let mut n = nic_with(serde_json::json!({ "tx_latency_ns": 2000.0 }));
        // Idle transmitter: first bit 2 us after the hand-over, last 2 + 6.72 us.
        let t0 = n.output(us(0.0), small(0)).unwrap().expect("starts");
        assert_eq!((t0.start, t0.done), (us(2.0), us(8.72)));
        // Handed over at 1 us, eligible at 3 us, long before frame 0 ends: it follows
        // back to back at 8.72 us.
        assert!(n.output(us(1.0), small(1)).unwrap().is_none());
        let t1 = n.tx_done(t0.done).expect("frame 1");
        assert_eq!(t1.start, us(8.72));
        assert!(n.tx_done(t1.done).is_none());
        // Idle again: a frame handed over at 20 us starts at 22 us.
        let t2 = n.output(us(20.0), small(2)).unwrap().expect("starts");
        assert_eq!(t2.start, us(22.0));
        // Frame 2 ends at 28.72 us; frame 3, handed over at 28 us, is only eligible at
        // 30 us: the wire idles until then.
        n.output(us(28.0), small(3)).unwrap();
        assert_eq!(n.tx_done(t2.done).map(|t| t.start), Some(us(30.0)));
    }

    #[test]
    fn an_idle_transmitter_with_an_automatic_poll_waits_for_the_next_poll() {
        // The chip polls its descriptors every 10 us (multiples of 10 us from 0).
        let mut n = nic_with(serde_json::json!({ "tx_poll_interval_ns": 10000.0 }));
        // Handed over at 3 us: noticed at the 10 us poll.
        let t0 = n.output(us(3.0), small(0)).unwrap().expect("starts");
        assert_eq!((t0.start, t0.done), (us(10.0), us(16.72)));
        // A frame queued meanwhile follows back to back without waiting for a poll.
        n.output(us(4.0), small(1)).unwrap();
        let t1 = n.tx_done(t0.done).expect("frame 1");
        assert_eq!(t1.start, us(16.72));
        assert!(n.tx_done(t1.done).is_none());
        // Handed over exactly at a poll (30 us): starts then; just after one (40.001
        // us): at the next (50 us).
        let t2 = n.output(us(30.0), small(2)).unwrap().expect("starts");
        assert_eq!(t2.start, us(30.0));
        n.tx_done(t2.done);
        let t3 = n.output(us(40.001), small(3)).unwrap().expect("starts");
        assert_eq!(t3.start, us(50.0));
    }

    #[test]
    fn a_full_tx_ring_leaves_frames_in_if_snd_and_a_full_if_snd_drops() {
        // Two TX descriptors, if_snd of 2 (the NIC's own value overrides the kernel's).
        let mut n = nic_with(serde_json::json!({ "tx_ring_slots": 2, "if_snd_maxlen": 2 }));
        let t0 = n.output(us(0.0), small(0)).unwrap().expect("starts");
        for k in 1..4 {
            assert!(n.output(us(0.0), small(k)).unwrap().is_none());
        }
        // Frame 0 on the wire and 1 on the ring; 2 and 3 in if_snd; 4 is dropped.
        assert_eq!(n.output(us(0.0), small(4)).unwrap_err().seq, 4);
        assert_eq!((n.if_snd.drops, n.if_snd.high_water), (1, 2));
        assert_eq!(n.tx_ring_len(), 2);
        assert_eq!(seqs(n.if_snd.iter()), [2, 3]);
        // Held: if_snd 2 + the ring's frame not yet started 1.
        assert_eq!(n.held(), 3);
        // Frame 0 ends: its descriptor frees, frame 2 takes it, frame 1 starts.
        let t1 = n.tx_done(t0.done).expect("frame 1");
        assert_eq!((t1.pkt.seq, t1.start), (1, WIRE64));
        assert_eq!(seqs(n.if_snd.iter()), [3]);
        assert_eq!(n.tx_ring_len(), 2);
        let sent: Vec<u64> = std::iter::successors(Some(t1), |t| n.tx_done(t.done))
            .map(|t| t.pkt.seq)
            .collect();
        assert_eq!(sent, [1, 2, 3]);
        assert_eq!((n.tx_frames, n.held()), (4, 0));
    }

    #[test]
    fn while_the_link_is_down_frames_wait_in_if_snd() {
        let mut n = nic();
        n.link_up = false;
        assert!(n.output(us(0.0), small(0)).unwrap().is_none());
        assert!(n.output(us(1.0), small(1)).unwrap().is_none());
        assert_eq!((n.if_snd.len(), n.tx_ring_len()), (2, 0));
        assert!(n.start(us(2.0)).is_none(), "link still down");
        // The link comes up; the start routine hands both over and frame 0 starts.
        n.link_up = true;
        let t = n.start(us(5.0)).expect("starts");
        assert_eq!((t.pkt.seq, t.start), (0, us(5.0)));
        assert_eq!((n.if_snd.len(), n.tx_ring_len()), (0, 2));
        // With if_snd empty the start routine does nothing.
        assert!(n.start(us(6.0)).is_none());
    }

    #[test]
    fn tx_completions_interrupt_every_nth_frame_and_hold_descriptors_until_reclaimed() {
        let mut n = nic_with(serde_json::json!({
            "tx_ring_slots": 2,
            "tx_completion": { "interrupt_every": 2 }
        }));
        assert!(n.tx_completion_interrupts());
        let t0 = n.output(us(0.0), small(0)).unwrap().expect("starts");
        for k in 1..4 {
            n.output(us(0.0), small(k)).unwrap();
        }
        // Frame 0 sent: its descriptor is not reclaimed, no cause yet (1 of 2).
        let t1 = n.tx_done(t0.done).expect("frame 1 was on the ring");
        assert!(!n.tx_cause && !n.wants_interrupt());
        assert_eq!(n.take_tx_completions(), None);
        // ...and frame 2 did not take its place: if_snd still holds 2 and 3.
        assert_eq!(seqs(n.if_snd.iter()), [2, 3]);
        // Frame 1 sent: the 2nd completion raises TX_OK; both descriptors are held.
        assert!(n.tx_done(t1.done).is_none());
        assert!(n.tx_cause && n.wants_interrupt());
        assert!(!n.tx_idle());
        assert!(n.start(t1.done).is_none(), "no free descriptor");
        // txeof reclaims both; the start routine can then send frame 2.
        assert_eq!(n.take_tx_completions(), Some(2));
        assert!(!n.tx_cause && n.tx_idle());
        assert_eq!(n.take_tx_completions(), None);
        let t2 = n.start(t1.done).expect("frame 2 starts");
        assert_eq!((t2.pkt.seq, t2.start), (2, SimTime(2 * WIRE64.0)));
    }

    #[test]
    fn tx_completion_on_idle_interrupts_when_the_ring_runs_empty() {
        let mut n = nic_with(serde_json::json!({
            "tx_completion": { "interrupt_on_idle": true }
        }));
        let t0 = n.output(us(0.0), small(0)).unwrap().expect("starts");
        n.output(us(0.0), small(1)).unwrap();
        // Frame 1 still waits: no TX_NOBUF yet.
        let t1 = n.tx_done(t0.done).expect("frame 1");
        assert!(!n.tx_cause);
        // The ring runs empty: TX_NOBUF.
        assert!(n.tx_done(t1.done).is_none());
        assert!(n.tx_cause);
        assert_eq!(n.take_tx_completions(), Some(2));
    }

    #[test]
    fn an_underrun_stops_the_transmitter_with_a_cause_and_a_reset_keeps_it() {
        let mut n = nic();
        n.output(us(0.0), small(0)).unwrap().expect("starts");
        n.output(us(0.0), small(1)).unwrap();
        assert_eq!(n.tx_frames, 1);
        // The head frame is aborted: returned (lost), uncounted; the transmitter halts.
        assert_eq!(n.tx_abort().map(|p| p.seq), Some(0));
        assert_eq!(n.tx_frames, 0);
        assert!(n.tx_halted && n.underrun_cause && n.wants_interrupt());
        // Nothing starts while halted, even a new frame.
        assert!(n.output(us(1.0), small(2)).unwrap().is_none());
        assert_eq!(n.tx_ring_len(), 2);
        // A reset frees the rings and drops every cause but the underrun, which the
        // handler has yet to see; the transmitter stays halted and the link down.
        n.rx_dma(small(10));
        n.rx_error_cause = true;
        n.tx_cause = true;
        let freed = n.reset(true);
        assert_eq!(seqs(freed.iter()), [10, 1, 2]);
        assert!(n.underrun_cause && n.tx_halted && !n.link_up);
        assert!(!n.tx_cause && !n.rx_error_cause);
        assert_eq!(n.held(), 0);
    }

    #[test]
    fn a_reset_uncounts_the_frame_it_cuts_but_not_the_one_that_completes() {
        let mut n = nic();
        n.output(us(0.0), small(0)).unwrap().expect("starts");
        // The frame on the wire is whole and completes: still counted.
        n.reset(true);
        assert_eq!(n.tx_frames, 1);
        let mut n = nic();
        n.output(us(0.0), small(0)).unwrap().expect("starts");
        // A frame still being fetched (cut-through) is cut by the reset: uncounted.
        n.reset(false);
        assert_eq!(n.tx_frames, 0);
    }

    #[test]
    fn after_an_underrun_the_ring_resumes_at_the_next_automatic_poll() {
        // 64-byte frames at 100 Mbit/s: 84 bytes x 80 ns = 6.72 us on the wire.
        let mut n = nic_with(serde_json::json!({ "tx_poll_interval_ns": 10000.0 }));
        let first = n.output(us(0.0), small(0)).unwrap().expect("starts");
        assert_eq!(first.start, us(0.0));
        n.output(us(0.0), small(1)).unwrap();
        assert_eq!(n.tx_abort().map(|p| p.seq), Some(0));
        // The handler runs at 12 us with if_snd empty: frame 1, still in the ring,
        // leaves at the chip's next automatic poll, 20 us (polls every 10 us from 0).
        let tx = n.tx_restart(us(12.0)).expect("the poll finds frame 1");
        assert_eq!((tx.pkt.seq, tx.start, tx.done), (1, us(20.0), us(26.72)));
        assert!(!n.tx_halted);
    }

    #[test]
    fn after_an_underrun_without_an_automatic_poll_the_ring_waits_for_a_poll_demand() {
        let mut n = nic();
        n.output(us(0.0), small(0)).unwrap().expect("starts");
        n.output(us(0.0), small(1)).unwrap();
        n.tx_abort();
        // The start routine queues nothing, so writes no poll demand: frame 1 waits...
        assert!(n.tx_restart(us(12.0)).is_none());
        assert_eq!(n.held(), 1);
        // ...until the next frame sent, whose poll demand starts it at once.
        let tx = n.output(us(30.0), small(2)).unwrap().expect("poll demand");
        assert_eq!((tx.pkt.seq, tx.start), (1, us(30.0)));
    }
}
