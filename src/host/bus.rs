//! The host's routing for [`crate::model::bus`] and [`crate::model::nic::dma`]: the engines decide the
//! bursts, when a frame leaves a FIFO and when the TX FIFO ran dry; the host hands
//! their bursts to the bus and their frames to the RX ring and the output wire, and
//! keeps the flows' drop counts and the interrupt causes.

use crate::host::attach::{Attached, Shape};
use crate::host::{Event, Host};
use crate::model::bus::Dir;
use crate::model::nic::dma::{RxIn, TxRequest, TxStep};
use crate::model::stats::DropSite;
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;

impl<M: Shape> Host<M> {
    /// A frame reached `nic`'s RX FIFO: queue it for DMA, or drop it if the FIFO is
    /// full. The FIFO is the port's: the queue devices of a multi-queue NIC (its
    /// [`super::port::TxGroup`]) share it, each engine writing out its own
    /// queue's frames.
    #[inline]
    pub(crate) fn dma_rx_in(
        &mut self,
        nic: usize,
        pkt: crate::model::packet::Packet,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let others = self.ports.rx_fifo_beside(nic);
        match self.ports.at(nic).dma_rx_in(pkt, others) {
            RxIn::Dropped => {
                self.acct.dropped(pkt.flow, DropSite::RxFifo);
                // The damaged frame's descriptor carries the overflow error.
                if self.ports.at(nic).rx_overflow() {
                    self.irq_cause(nic, now, s);
                }
            }
            RxIn::NoDescriptor => self.acct.dropped(pkt.flow, DropSite::RxRing),
            RxIn::Queued { request: Some(b) } => self.bus_request(b, now, s),
            RxIn::Queued { request: None } => {}
        }
    }

    /// The driver handed a frame to the chip: fetch its descriptor, then the frame.
    #[inline]
    pub(crate) fn tx_fetch_begin(
        &mut self,
        nic: usize,
        pkt: crate::model::packet::Packet,
        eligible: SimTime,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        // The chip sees the descriptor `tx_latency` after the poll demand. A burst of
        // an aborted frame still on the bus goes first; its completion starts this one.
        if let Some(r) = self.ports.at(nic).dma_tx_begin(pkt, eligible, now) {
            self.bus_read(r, s);
        }
    }

    /// Ask the bus for a transmit burst, ready no earlier than now.
    #[inline]
    fn bus_read(&mut self, r: TxRequest, s: &mut Scheduler<Event>) {
        let ready = r.ready.max(s.now());
        self.bus_request(r.burst, ready, s);
    }

    /// Ask the bus for a burst ready at `ready`.
    #[inline]
    fn bus_request(
        &mut self,
        b: crate::model::bus::Burst,
        ready: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let now = s.now();
        if let Some(end) = self.bus.get_mut().expect("bus").request(b, ready, now) {
            self.events.set_bus(Some(s.stamp(end)));
        }
    }

    /// A burst ended: advance its engine, start the next burst.
    pub(crate) fn bus_done(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        let (b, next) = self.bus.get_mut().expect("bus").complete(now);
        if let Some(end) = next {
            self.events.set_bus(Some(s.stamp(end)));
        }
        let nic = b.nic as usize;
        match b.dir {
            Dir::RxWrite => {
                if let Some(pkt) = self.ports.at(nic).dma_rx_burst_done(b.bytes) {
                    self.rx_complete(nic, pkt, now, s);
                }
                while let Some(p) = self.ports.at(nic).dma_rx_no_descriptor() {
                    self.acct.dropped(p.flow, DropSite::RxRing);
                }
                if let Some(b) = self.ports.at(nic).dma_rx_next_burst() {
                    self.bus_request(b, now, s);
                }
            }
            Dir::TxRead => match self.ports.at(nic).dma_tx_burst_done(b.bytes, now) {
                TxStep::Idle => {}
                TxStep::Underrun => self.tx_underrun(nic, now, s),
                TxStep::Fetch { started, next } => {
                    if let Some(w) = started {
                        self.set_tx_slot(nic, Some(s.stamp(w.done)), now);
                    }
                    self.bus_read(next, s);
                }
                TxStep::Complete { pkt, wire, started } => {
                    if started {
                        self.set_tx_slot(nic, Some(s.stamp(wire.done)), now);
                    }
                    self.deliver(nic, pkt, wire.start, wire.done, s);
                }
            },
        }
    }

    /// `nic`'s engine found its TX FIFO ran dry (and aborted the frame): the frame is
    /// lost, the transmitter stops and raises TX_UNDERRUN.
    pub(crate) fn tx_underrun(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.set_tx_slot(nic, None, now);
        if let Some(p) = self.ports.at(nic).tx_abort() {
            self.acct.dropped(p.flow, DropSite::TxUnderrun);
        }
        // The cut frame frees a wire its NIC's other transmit queues share.
        self.tx_wire_free(nic, now, s);
        if self.ports[nic].handles_chip_errors() {
            self.irq_cause(nic, now, s);
        } else {
            // No driver handler modelled: the chip steps its threshold and goes on.
            self.ports.at(nic).ack_underrun();
            self.tx_restart(nic, now, s);
        }
    }

    /// Chip reset (dc_stop + dc_init): rings, FIFOs and DMA engines cleared, frames in
    /// them lost, link considered down until the driver's next link check.
    pub(crate) fn chip_reset(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        // A frame is on the wire, and whole (not a cut-through frame still being
        // fetched, which the reset cuts short): without a bus every frame on the wire is.
        let on_wire = self.ports[nic].whole_on_wire(self.tx_slot(nic).is_some());
        let acct = &mut self.acct;
        self.ports
            .at(nic)
            .reset(on_wire, |p| acct.dropped(p.flow, DropSite::Reset));
        if let Some(bus) = self.bus.get_mut() {
            // Waiting and reserved bursts are gone; only one already on the bus
            // completes, and its engine ignores it.
            if let Some(end) = bus.cancel(nic as u16, now) {
                self.events.set_bus(end.map(|e| s.stamp(e)));
            }
            self.ports.at(nic).reset_engines(bus.on_bus(now));
        }
        if !on_wire {
            self.set_tx_slot(nic, None, now);
            self.tx_wire_free(nic, now, s);
        }
        self.link_watch_rearm(nic, now, s);
    }
}
