//! The host's routing for [`crate::bus`].

use crate::bus::*;
use crate::engine::Scheduler;
use crate::host::{Event, Host, SLOT_BUS};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

impl Host {
    /// A frame reached `nic`'s RX FIFO: queue it for DMA, or drop it if the FIFO is
    /// full.
    pub(crate) fn dma_rx_in(
        &mut self,
        nic: usize,
        pkt: crate::packet::Packet,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let d = &mut self.dma[nic];
        // (A frame larger than the whole FIFO still goes through when the FIFO is
        // empty: the chip writes it out while it arrives.)
        if d.rx_fifo_used > 0 && d.rx_fifo_used + pkt.bytes > d.rx_fifo_cap {
            self.flows[pkt.flow as usize].stats.drops.rx_fifo += 1;
            // The damaged frame's descriptor carries the overflow error.
            if !self.nics[nic].rx_error_cause
                && matches!(self.policies[nic], PolicyConfig::Interrupt)
            {
                self.nics[nic].rx_error_cause = true;
                self.irq_cause(nic, now, s);
            }
            return;
        }
        d.rx_fifo_used += pkt.bytes;
        d.rx_fifo.push_back(pkt);
        if !d.rx_busy {
            self.dma_rx_burst(nic, now, s);
        }
    }

    /// Request the next receive burst of the frame at the head of the RX FIFO.
    fn dma_rx_burst(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let bus = self.bus.as_ref().expect("bus");
        let d = &self.dma[nic];
        let Some(head) = d.rx_fifo.front() else {
            return;
        };
        let total = head.bytes + bus.descriptor_bytes;
        let bytes = (total - d.rx_written).min(bus.burst_bytes);
        self.dma[nic].rx_busy = true;
        self.bus_request(
            Burst {
                nic: nic as u16,
                dir: Dir::RxWrite,
                bytes,
            },
            now,
            s,
        );
    }

    /// The driver handed a frame to the chip: fetch its descriptor, then the frame.
    pub(crate) fn tx_fetch_begin(
        &mut self,
        nic: usize,
        pkt: crate::packet::Packet,
        eligible: SimTime,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        self.dma[nic].tx = Some(TxFetch {
            pkt,
            eligible,
            desc_done: false,
            fetched: 0,
            start: None,
        });
        // The chip sees the descriptor `tx_latency` after the poll demand. A burst of
        // an aborted frame still on the bus goes first; its completion starts this one.
        if !self.dma[nic].tx_busy {
            self.dma_tx_burst(nic, eligible.max(now), s);
        }
    }

    /// Request the next transmit burst; its read latency starts at `at`.
    fn dma_tx_burst(&mut self, nic: usize, at: SimTime, s: &mut Scheduler<Event>) {
        let bus = self.bus.as_ref().expect("bus");
        let Some(f) = self.dma[nic].tx else { return };
        let bytes = if f.desc_done {
            (f.pkt.bytes - f.fetched).min(bus.burst_bytes)
        } else {
            bus.descriptor_bytes
        };
        self.dma[nic].tx_busy = true;
        let b = Burst {
            nic: nic as u16,
            dir: Dir::TxRead,
            bytes,
        };
        let ready = (at + bus.read_latency).max(s.now());
        self.bus_request(b, ready, s);
    }

    /// Ask the bus for a burst ready at `ready`.
    fn bus_request(&mut self, b: Burst, ready: SimTime, s: &mut Scheduler<Event>) {
        let now = s.now();
        if let Some(end) = self.bus.as_mut().expect("bus").request(b, ready, now) {
            self.slots.set(SLOT_BUS, Some(s.stamp(end)));
        }
    }

    /// A burst ended: advance its engine, start the next burst.
    pub(crate) fn bus_done(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let (b, next) = self.bus.as_mut().expect("bus").complete(now);
        if let Some(end) = next {
            self.slots.set(SLOT_BUS, Some(s.stamp(end)));
        }
        let nic = b.nic as usize;
        match b.dir {
            Dir::RxWrite => {
                let d = &mut self.dma[nic];
                d.rx_busy = false;
                if std::mem::take(&mut d.stale_rx) {
                    self.dma_rx_burst(nic, now, s);
                    return;
                }
                let desc = self.bus.as_ref().expect("bus").descriptor_bytes;
                let head = *d.rx_fifo.front().expect("frame in DMA");
                // The frame's bytes leave the FIFO as they are written; the
                // descriptor write-back comes last.
                let freed = b.bytes.min(head.bytes.saturating_sub(d.rx_written));
                d.rx_fifo_used -= freed;
                d.rx_written += b.bytes;
                if d.rx_written >= head.bytes + desc {
                    d.rx_fifo.pop_front();
                    d.rx_written = 0;
                    self.rx_complete(nic, head, now, s);
                }
                self.dma_rx_burst(nic, now, s);
            }
            Dir::TxRead => {
                let d = &mut self.dma[nic];
                d.tx_busy = false;
                if std::mem::take(&mut d.stale_tx) {
                    // A burst of an aborted frame: go on with the frame now fetched.
                    if let Some(f) = d.tx {
                        self.dma_tx_burst(nic, f.eligible.max(now), s);
                    }
                    return;
                }
                let Some(mut f) = d.tx else { return };
                if !f.desc_done {
                    f.desc_done = true;
                } else {
                    let before = f.fetched;
                    f.fetched += b.bytes;
                    if let Some(start) = f.start {
                        // The wire has sent the preamble and `before` bytes by now?
                        let link = self.nics[nic].link;
                        if now > start + link.bytes_time(8 + before) {
                            self.tx_underrun(nic, now, s);
                            return;
                        }
                    }
                }
                let threshold = d.threshold(f.pkt.bytes);
                let complete = f.fetched >= f.pkt.bytes;
                if f.start.is_none() && f.desc_done && f.fetched >= threshold {
                    let start = now.max(f.eligible);
                    f.start = Some(start);
                    let done = start + self.nics[nic].link.wire_time(f.pkt.bytes);
                    self.set_tx_slot(nic, Some(s.stamp(done)));
                }
                self.dma[nic].tx = if complete { None } else { Some(f) };
                if complete {
                    let start = f.start.expect("started");
                    let done = start + self.nics[nic].link.wire_time(f.pkt.bytes);
                    self.deliver(f.pkt, start, done, s);
                } else {
                    self.dma_tx_burst(nic, now, s);
                }
            }
        }
    }

    /// The TX FIFO ran dry: the frame is lost, the transmitter stops and raises
    /// TX_UNDERRUN.
    pub(crate) fn tx_underrun(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.dma[nic].tx = None;
        // A burst of this frame still waiting or on the bus is ignored when it ends.
        self.dma[nic].stale_tx = self.dma[nic].tx_busy;
        self.dma[nic].tx_underruns += 1;
        self.set_tx_slot(nic, None);
        if let Some(p) = self.nics[nic].tx_abort() {
            self.flows[p.flow as usize].stats.drops.tx_underrun += 1;
        }
        if matches!(self.policies[nic], PolicyConfig::Interrupt) {
            self.irq_cause(nic, now, s);
        } else {
            // No driver handler modelled: the chip steps its threshold and goes on.
            self.nics[nic].underrun_cause = false;
            self.nics[nic].tx_halted = false;
            self.dma[nic].raise_threshold();
            self.if_start(nic, now, s);
        }
    }

    /// Chip reset (dc_stop + dc_init): rings, FIFOs and DMA engines cleared, frames in
    /// them lost, link considered down until the driver's next link check.
    pub(crate) fn chip_reset(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        // A frame is on the wire, and whole (not a cut-through frame still being
        // fetched, which the reset cuts short): without a bus every frame on the wire is.
        let on_wire =
            self.dma.get(nic).is_none_or(|d| d.tx.is_none()) && self.tx_slot(nic).is_some();
        for p in self.nics[nic].reset(on_wire) {
            self.flows[p.flow as usize].stats.drops.reset += 1;
        }
        if let Some(d) = self.dma.get_mut(nic) {
            for p in d.rx_fifo.drain(..) {
                self.flows[p.flow as usize].stats.drops.reset += 1;
            }
            d.rx_fifo_used = 0;
            d.rx_written = 0;
            d.tx = None;
            if let Some(bus) = self.bus.as_mut() {
                // Waiting and reserved bursts are gone; only one already on the bus
                // completes, and its engine ignores it.
                if let Some(end) = bus.cancel(nic as u16, now) {
                    self.slots.set(SLOT_BUS, end.map(|e| s.stamp(e)));
                }
                let on_bus = bus.on_bus(now);
                d.stale_rx = on_bus.is_some_and(|b| b.nic as usize == nic && b.dir == Dir::RxWrite);
                d.stale_tx = on_bus.is_some_and(|b| b.nic as usize == nic && b.dir == Dir::TxRead);
                d.rx_busy = d.stale_rx;
                d.tx_busy = d.stale_tx;
            }
        }
        if !on_wire {
            self.set_tx_slot(nic, None);
        }
        self.link_watch_rearm(nic, now, s);
    }
}
