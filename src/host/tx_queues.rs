//! The host's routing for every NIC's transmit queues: every transmission starts
//! through the port's wire ([`TxPort`]), which picks the queue of a frame
//! ([`crate::model::nic::xps`]) and gives the wire to one queue at a time
//! ([`crate::model::nic::tx_arbiter`]). A NIC of one queue is a port of one queue: its
//! frames take the same path (its queue's transmitter is then the wire's state, and the
//! wire's event slot checks one frame per wire again, `Host::set_tx_slot`).
//!
//! The host expands a multi-queue NIC into one device per queue ([`super::queues`]),
//! each with its own vector, handler, moderation and policy instance as the hardware's
//! queues have; the devices of one NIC form a [`TxGroup`] (a NIC of one queue, a group
//! of one), whose [`TxPort`] borrows
//! them as its queues ([`TxQueues`] on the group's slice of ports). A flow's frames are
//! addressed to queue 0; at if_output the port picks the queue for the core that
//! forwards the frame. What the port starts, the host records ([`Host::transmit`]); a
//! broken wire invariant the port reports ([`WireError`]) is reported as the run's.

use crate::host::attach::Shape;
use crate::host::port::Port;
use crate::host::{Broken, Event, Host, Invariant};
use crate::model::nic::port::{TxPort, TxQueues, WireError};
use crate::model::nic::{Nic, TxStart};
use crate::model::packet::Packet;
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;

/// The transmit queues of one NIC (one, or one per queue device): devices
/// [`TxGroup::devices`], and their wire.
#[derive(Clone, Debug)]
pub(crate) struct TxGroup {
    /// The device of queue 0.
    pub first: usize,
    /// Its wire, its arbiter and XPS.
    pub port: TxPort,
}

impl TxGroup {
    /// The ports of the (expanded) devices `queue_of` describes: each queue's
    /// `(index, count)`, `None` for a NIC with one queue, which is a port of one queue
    /// (its wire its own, but started through a [`TxPort`] all the same, so that every
    /// transmission takes the one path and its invariants are the port's). Returns the
    /// groups and each device's group.
    pub fn build(
        queue_of: &[Option<(u16, u16)>],
        xps: &[bool],
        cores: usize,
    ) -> (Vec<TxGroup>, Vec<u16>) {
        let mut groups = Vec::new();
        let mut of = vec![0; queue_of.len()];
        for (i, q) in queue_of.iter().enumerate() {
            let count = match *q {
                None => 1,
                Some((0, count)) => count,
                Some(_) => continue,
            };
            for slot in &mut of[i..i + count as usize] {
                *slot = groups.len() as u16;
            }
            groups.push(TxGroup {
                first: i,
                port: TxPort::new(count, cores, xps[i]),
            });
        }
        (groups, of)
    }

    /// The devices of its queues, queue 0 first.
    #[inline]
    pub fn devices(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.port.queues() as usize
    }
}

/// A group's queue devices as its port's queues.
impl<D> TxQueues for [Port<D>] {
    #[inline]
    fn queue(&self, q: u16) -> &Nic {
        &self[q as usize].nic
    }
    #[inline]
    fn queue_mut(&mut self, q: u16) -> &mut Nic {
        &mut self[q as usize].nic
    }
}

/// What a port's operation started: a frame on queue device `0`, or nothing.
type Started = Result<Option<(u16, TxStart)>, WireError>;

impl<M: Shape> Host<M> {
    /// The device a frame of `flow` leaves by when the flow's output is device `out`:
    /// `out` itself, or for a multi-queue NIC the transmit queue picked for the core in
    /// hand.
    #[inline(always)]
    pub(crate) fn tx_device(&self, out: usize, flow: usize) -> usize {
        let g = &self.tx_groups[self.ports[out].tx_group as usize];
        if g.port.queues() == 1 {
            return out;
        }
        let f = self.acct.flow(flow);
        g.first + g.port.pick(self.cores.on(), f.hash, f.rx_queue) as usize
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
        let g = self.ports[nic].tx_group as usize;
        let grp = &mut self.tx_groups[g];
        let (first, devices) = (grp.first, grp.devices());
        match op(
            &mut grp.port,
            &mut self.ports[devices],
            (nic - first) as u16,
        ) {
            Ok(Some((q, tx))) => self.transmit(first + q as usize, tx, now, s),
            Ok(None) => {}
            Err(e) => self.port_broken(first, e, now),
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
        self.tx_groups.iter().find_map(|g| {
            let e = g.port.check(&self.ports[g.devices()]).err()?;
            let (q, invariant) = wire_invariant(e);
            let name = self.ports[g.first + q as usize].nic.name.clone();
            Some(Broken {
                invariant,
                component: name.clone(),
                at: end,
                detail: format!("{name} at the end of the run: {e}"),
            })
        })
    }

    /// Record a broken invariant of the wire of the port whose queues start at device
    /// `first`.
    #[cold]
    #[inline(never)]
    fn port_broken(&mut self, first: usize, e: WireError, now: SimTime) {
        let (q, invariant) = wire_invariant(e);
        let name = self.ports[first + q as usize].nic.name.clone();
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
