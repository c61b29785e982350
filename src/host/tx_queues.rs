//! The host's routing for a multi-queue NIC's transmit queues: which queue a frame
//! leaves by ([`crate::xps`]) and which queue's frame goes on the shared wire next
//! ([`crate::tx_arbiter`]).
//!
//! The host expands a multi-queue NIC into one device per queue ([`super::queues`]);
//! the devices of one NIC form a [`TxGroup`]. A flow's frames are addressed to queue 0;
//! at if_output the group picks the queue for the core that forwards the frame. Only
//! one queue of a group transmits at a time: while one has a frame on the wire, the
//! others' transmitters wait ([`crate::nic::Nic::wire_taken`]), and when it ends the
//! arbiter hands the wire to the next queue with a frame ready.

use crate::engine::Scheduler;
use crate::host::attach::Shape;
use crate::host::{Event, Host};
use crate::time::SimTime;
use crate::tx_arbiter::TxArbiter;
use crate::xps::Xps;

/// The transmit queues of one multi-queue NIC: devices [`TxGroup::devices`].
#[derive(Clone, Debug)]
pub(crate) struct TxGroup {
    /// The device of queue 0.
    pub first: usize,
    /// Transmit queue selection.
    pub xps: Xps,
    /// Who holds the wire, whose turn is next (and how many queues share it).
    pub arbiter: TxArbiter,
}

impl TxGroup {
    /// The groups of the (expanded) devices `queue_of` describes: each queue's
    /// `(index, count)`, `None` for a NIC with one queue. Returns the groups and each
    /// device's group.
    pub fn build(
        queue_of: &[Option<(u16, u16)>],
        xps: &[bool],
        cores: usize,
    ) -> (Vec<TxGroup>, Vec<Option<u16>>) {
        let mut groups = Vec::new();
        let mut of = vec![None; queue_of.len()];
        for (i, q) in queue_of.iter().enumerate() {
            if let Some((0, count)) = *q {
                for slot in &mut of[i..i + count as usize] {
                    *slot = Some(groups.len() as u16);
                }
                groups.push(TxGroup {
                    first: i,
                    xps: Xps::new(count, cores, xps[i]),
                    arbiter: TxArbiter::new(count),
                });
            }
        }
        (groups, of)
    }

    /// The devices of its queues, queue 0 first.
    #[inline]
    pub fn devices(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.arbiter.queues() as usize
    }
}

impl<M: Shape> Host<M> {
    /// The device a frame of `flow` leaves by when the flow's output is device `out`:
    /// `out` itself, or for a multi-queue NIC the transmit queue picked for the core in
    /// hand.
    #[inline(always)]
    pub(crate) fn tx_device(&self, out: usize, flow: usize) -> usize {
        match self.ports[out].tx_group {
            None => out,
            Some(g) => {
                let g = &self.tx_groups[g as usize];
                let f = &self.flows[flow];
                g.first + g.xps.pick(self.on_core(), f.hash, f.rx_queue) as usize
            }
        }
    }

    /// Device `nic` committed to a frame: if it is a queue of a multi-queue NIC it now
    /// holds the shared wire, and the other queues wait. A second frame on a held wire
    /// is a broken invariant, reported.
    #[inline]
    pub(crate) fn tx_wire_taken(&mut self, nic: usize) {
        let Some(g) = self.ports[nic].tx_group else {
            return;
        };
        let grp = &mut self.tx_groups[g as usize];
        let (first, devices) = (grp.first, grp.devices());
        if let Err(other) = grp.arbiter.take((nic - first) as u16) {
            let name = self.ports[first + other as usize].nic.name.clone();
            self.violation.get_or_insert(format!(
                "{} started a frame on the wire it shares with {name}, which had one on it",
                self.ports[nic].nic.name
            ));
        }
        for p in &mut self.ports[devices] {
            p.nic.wire_taken = true;
        }
    }

    /// The frame of queue device `nic` left the shared wire (or was cut): free the wire
    /// and start the frame of the queue whose turn it is, if one has a frame ready.
    pub(crate) fn tx_wire_free(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(g) = self.ports[nic].tx_group else {
            return;
        };
        let grp = &mut self.tx_groups[g as usize];
        let (first, devices) = (grp.first, grp.devices());
        if grp
            .arbiter
            .on_wire()
            .is_some_and(|q| first + q as usize != nic)
        {
            // Another queue holds the wire (a reset of one that was not sending).
            return;
        }
        grp.arbiter.release();
        let ports = &mut self.ports[devices];
        for p in ports.iter_mut() {
            p.nic.wire_taken = false;
        }
        let next = grp
            .arbiter
            .next(now, |q| ports[q as usize].nic.tx_head_eligible());
        if let Some(q) = next {
            let dev = first + q as usize;
            match self.ports[dev].nic.tx_turn(now) {
                Some(tx) => self.transmit(dev, tx, now, s),
                None => self.wire_idles(dev),
            }
        }
    }

    /// A queue had a frame ready but did not start it on the free wire: the wire would
    /// idle with work waiting (a lost wakeup), a bug in irqsim, reported.
    #[cold]
    #[inline(never)]
    fn wire_idles(&mut self, nic: usize) {
        let name = self.ports[nic].nic.name.clone();
        self.violation.get_or_insert(format!(
            "{name} had a frame ready but did not start it on its free shared wire"
        ));
    }

    /// The frame of queue device `nic` has left the wire: free its descriptor
    /// ([`crate::nic::Nic::tx_done`]) with its next frame held back for the arbiter,
    /// then hand the wire on.
    pub(crate) fn tx_done_shared(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.ports[nic].nic.wire_taken = true;
        if let Some(tx) = self.ports[nic].nic.tx_done(now) {
            // Held back by `wire_taken`, so never: a frame started behind the
            // arbiter's back would never end. Reported, and sent, rather than lost.
            self.violation.get_or_insert(format!(
                "{} started a frame on its shared wire without the arbiter",
                self.ports[nic].nic.name
            ));
            self.transmit(nic, tx, now, s);
            return;
        }
        self.tx_wire_free(nic, now, s);
    }

    /// At the end of a run: a shared wire left free while one of its queues has a frame
    /// that could start is a lost wakeup; `None` when every group is consistent.
    pub(crate) fn tx_groups_check(&self) -> Option<String> {
        for g in &self.tx_groups {
            if g.arbiter.on_wire().is_some() {
                continue;
            }
            let ports = &self.ports[g.devices()];
            if let Some(p) = ports.iter().find(|p| p.nic.tx_ready()) {
                return Some(format!(
                    "{}'s shared wire is free at the end of the run while it has a frame \
                     ready",
                    p.nic.name
                ));
            }
        }
        None
    }

    /// Whether device `nic` belongs to a multi-queue NIC's transmit group.
    #[inline(always)]
    pub(crate) fn tx_grouped(&self, nic: usize) -> bool {
        self.ports[nic].tx_group.is_some()
    }
}
