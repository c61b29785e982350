//! The host's routing for every NIC's transmit queues: every transmission starts
//! through the port's wire ([`TxPort`]), which picks the queue of a frame
//! ([`crate::model::nic::xps`]) and gives the wire to one queue at a time
//! ([`crate::model::nic::tx_arbiter`]). A NIC of one queue is a port of one queue: its
//! frames take the same path (its queue's transmitter is then the wire's state, and the
//! wire's event slot checks one frame per wire again, `Host::set_tx_slot`).
//!
//! The host expands a multi-queue NIC into one device per queue ([`super::queues`]), each
//! with its own vector, handler, moderation and policy instance as the hardware's queues
//! have; the devices of one NIC form a [`TxGroup`](super::port::TxGroup) (a NIC of one
//! queue, a group of one), and the host's [`Ports`](super::port::Ports) owns the devices
//! and the groups: an operation on a wire goes through
//! [`Ports::on_wire`](super::port::Ports::on_wire), which lends the group's devices to its
//! [`TxPort`] as its queues. This file only routes: a flow's frames are addressed to queue
//! 0; at if_output the port picks the queue for the core that forwards the frame. What the
//! port starts, the host records ([`Host::transmit`]); a broken wire invariant the port
//! reports ([`WireError`]) is reported as the run's.

use crate::host::attach::Shape;
use crate::host::port::Port;
use crate::host::{Broken, Event, Host, Invariant};
use crate::model::nic::TxStart;
use crate::model::nic::port::{TxPort, WireError};
use crate::model::packet::Packet;
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;

/// What a port's operation started: a frame on queue device `0`, or nothing.
type Started = Result<Option<(u16, TxStart)>, WireError>;

impl<M: Shape> Host<M> {
    /// The device a frame of `flow` leaves by when the flow's output is device `out`:
    /// `out` itself, or for a multi-queue NIC the transmit queue picked for the core in
    /// hand.
    #[inline(always)]
    pub(crate) fn tx_device(&self, out: usize, flow: usize) -> usize {
        let f = self.acct.flow(flow);
        self.ports
            .tx_device(out, self.cores.on(), f.hash, f.rx_queue)
    }

    /// Run `op` on the port of queue device `nic` (its queue number given), with the
    /// group's devices as its queues; record what it started.
    #[inline(always)]
    fn on_port(
        &mut self,
        nic: usize,
        now: SimTime,
        s: &mut Scheduler<Event>,
        op: impl FnOnce(&mut TxPort, &mut [Port<M::Dma>], u16) -> Started,
    ) {
        match self.ports.on_wire(nic, op) {
            Ok(Some((device, tx))) => self.transmit(device, tx, now, s),
            Ok(None) => {}
            Err((first, e)) => self.port_broken(first, e, now),
        }
    }

    /// if_output on queue device `nic`; `Err` is a full if_snd's drop.
    #[inline(always)]
    pub(crate) fn queue_output(
        &mut self,
        nic: usize,
        p: Packet,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) -> Result<(), Packet> {
        let mut dropped = None;
        self.on_port(nic, now, s, |port, qs, q| {
            match port.output(qs, q, now, p)? {
                Ok(tx) => Ok(tx.map(|t| (q, t))),
                Err(p) => {
                    dropped = Some(p);
                    Ok(None)
                }
            }
        });
        dropped.map_or(Ok(()), Err)
    }

    /// The start routine of queue device `nic`'s driver.
    pub(crate) fn queue_start(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.on_port(nic, now, s, |port, qs, q| {
            Ok(port.start(qs, q, now)?.map(|t| (q, t)))
        });
    }

    /// Queue device `nic`'s transmitter is restarted after an underrun.
    pub(crate) fn queue_restart(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.on_port(nic, now, s, |port, qs, q| {
            Ok(port.restart(qs, q, now)?.map(|t| (q, t)))
        });
    }

    /// The frame of queue device `nic` has left the wire: its descriptor is freed and
    /// the wire goes to the queue whose turn it is.
    #[inline(always)]
    pub(crate) fn queue_wire_end(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.on_port(nic, now, s, |port, qs, q| port.wire_end(qs, q, now));
    }

    /// Queue device `nic`'s frame was cut from the wire, or a reset left it with none:
    /// the wire goes to the queue whose turn it is (none on a port of one queue: its
    /// transmitter is stopped or its ring empty until the driver starts it again).
    pub(crate) fn tx_wire_free(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.on_port(nic, now, s, |port, qs, q| port.wire_cut(qs, q, now));
    }

    /// At the end of a run, every port wire's invariants over its queues as they stand
    /// ([`TxPort::check`]): the first broken one, if any.
    pub(crate) fn wires_broken(&self, end: SimTime) -> Option<Broken> {
        let (first, e) = self.ports.wires_broken()?;
        let (q, invariant) = wire_invariant(e);
        let name = self.ports[first + q as usize].nic().name.clone();
        Some(Broken {
            invariant,
            component: name.clone(),
            at: end,
            detail: format!("{name} at the end of the run: {e}"),
        })
    }

    /// Record a broken invariant of the wire of the port whose queues start at device
    /// `first`.
    #[cold]
    #[inline(never)]
    fn port_broken(&mut self, first: usize, e: WireError, now: SimTime) {
        let (q, invariant) = wire_invariant(e);
        let name = self.ports[first + q as usize].nic().name.clone();
        self.acct
            .broke(invariant, &name, now, || format!("{name}: {e}"));
    }
}

/// The queue a [`WireError`] names and the host's invariant it breaks.
fn wire_invariant(e: WireError) -> (u16, Invariant) {
    match e {
        WireError::Taken { queue, .. } | WireError::Untracked(queue) => {
            (queue, Invariant::OneFramePerWire)
        }
        WireError::Idles(q) => (q, Invariant::WireWakeup),
    }
}
