//! The host's routing for a multi-queue NIC's transmit queues: which queue a frame
//! leaves by ([`crate::model::nic::xps`]) and which queue's frame goes on the shared wire next
//! ([`crate::model::nic::tx_arbiter`]).
//!
//! The host expands a multi-queue NIC into one device per queue ([`super::queues`]);
//! the devices of one NIC form a [`TxGroup`]. A flow's frames are addressed to queue 0;
//! at if_output the group picks the queue for the core that forwards the frame. Only
//! one queue of a group transmits at a time: while one has a frame on the wire, the
//! others' transmitters wait ([`crate::model::nic::Nic::wire_taken`]), and when it ends the
//! arbiter hands the wire to the next queue with a frame ready.

use crate::host::attach::Shape;
use crate::host::{Broken, Event, Host, Invariant};
use crate::model::nic::Nic;
use crate::model::nic::tx_arbiter::{TakeError, TxArbiter};
use crate::model::nic::xps::Xps;
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;

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

/// The queue the arbiter hands the free wire to at `now`, among the queues `queue`
/// returns by number: each is offered with the time its head frame can really start
/// ([`Nic::tx_start_at`]; a queue restarted after an underrun, at its next automatic
/// poll), so a queue that can start now goes before one that only seems to.
#[inline]
pub(crate) fn next_turn<'a>(
    arbiter: &TxArbiter,
    now: SimTime,
    queue: impl Fn(u16) -> &'a Nic,
) -> Option<u16> {
    arbiter.next(now, |q| queue(q).tx_start_at(now))
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
                let f = self.acct.flow(flow);
                g.first + g.xps.pick(self.cores.on(), f.hash, f.rx_queue) as usize
            }
        }
    }

    /// Device `nic` committed to a frame: if it is a queue of a multi-queue NIC it now
    /// holds the shared wire, and the other queues wait. A second frame on a held wire
    /// is a broken invariant, reported.
    #[inline]
    pub(crate) fn tx_wire_taken(&mut self, nic: usize, now: SimTime) {
        let Some(g) = self.ports[nic].tx_group else {
            return;
        };
        let grp = &mut self.tx_groups[g as usize];
        let (first, devices) = (grp.first, grp.devices());
        match grp.arbiter.take((nic - first) as u16) {
            Ok(()) => {}
            Err(TakeError::HeldByOther(other)) => {
                let name = self.ports[first + other as usize].nic.name.clone();
                let me = self.ports[nic].nic.name.clone();
                self.acct.broke(Invariant::OneFramePerWire, &me, now, || {
                    format!("{me} started a frame on the wire it shares with {name}, which had one on it")
                });
            }
            Err(TakeError::AlreadyHeld) => {
                let me = self.ports[nic].nic.name.clone();
                self.acct.broke(Invariant::OneFramePerWire, &me, now, || {
                    format!(
                        "{me} started a frame on its shared wire while its previous one was on it"
                    )
                });
            }
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
        if let Some(q) = next_turn(&grp.arbiter, now, |q| &ports[q as usize].nic) {
            let dev = first + q as usize;
            match self.ports[dev].nic.tx_turn(now) {
                Some(tx) => self.transmit(dev, tx, now, s),
                None => self.wire_idles(dev, now),
            }
        }
    }

    /// A queue had a frame ready but did not start it on the free wire: the wire would
    /// idle with work waiting (a lost wakeup), a bug in irqsim, reported.
    #[cold]
    #[inline(never)]
    fn wire_idles(&mut self, nic: usize, now: SimTime) {
        let name = self.ports[nic].nic.name.clone();
        self.acct.broke(Invariant::WireWakeup, &name, now, || {
            format!("{name} had a frame ready but did not start it on its free shared wire")
        });
    }

    /// The frame of queue device `nic` has left the wire: free its descriptor
    /// ([`crate::model::nic::Nic::tx_done`]) with its next frame held back for the arbiter,
    /// then hand the wire on.
    pub(crate) fn tx_done_shared(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.ports[nic].nic.wire_taken = true;
        if let Some(tx) = self.ports[nic].nic.tx_done(now) {
            // Held back by `wire_taken`, so never: a frame started behind the
            // arbiter's back would never end. Reported, and sent, rather than lost.
            let me = self.ports[nic].nic.name.clone();
            self.acct.broke(Invariant::WireArbitration, &me, now, || {
                format!("{me} started a frame on its shared wire without the arbiter")
            });
            self.transmit(nic, tx, now, s);
            return;
        }
        self.tx_wire_free(nic, now, s);
    }

    /// At the end of a run: a shared wire left free while one of its queues has a frame
    /// that could start is a lost wakeup; `None` when every group is consistent.
    pub(crate) fn tx_groups_check(&self, end: SimTime) -> Option<Broken> {
        for g in &self.tx_groups {
            if g.arbiter.on_wire().is_some() {
                continue;
            }
            let ports = &self.ports[g.devices()];
            if let Some(p) = ports.iter().find(|p| p.nic.tx_ready()) {
                return Some(Broken {
                    invariant: Invariant::WireWakeup,
                    component: p.nic.name.clone(),
                    at: end,
                    detail: format!(
                        "{}'s shared wire is free at the end of the run while it has a \
                         frame ready",
                        p.nic.name
                    ),
                });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::nic::NicConfig;
    use crate::model::packet::Packet;

    /// A transmit queue of a 100 Mbit/s NIC that polls its ring every 10 us
    /// (`tx_poll_interval_ns`), with no latencies.
    fn queue(name: &str) -> Nic {
        let cfg: NicConfig = serde_json::from_value(serde_json::json!({
            "name": name, "tx_poll_interval_ns": 10_000.0
        }))
        .expect("config");
        Nic::new(&cfg, 50, 1000.0)
    }

    fn pkt(seq: u64) -> Packet {
        Packet {
            flow: 0,
            bytes: 64,
            seq,
            t_in: SimTime::ZERO,
        }
    }

    /// `x` [ns].
    fn ns(x: u64) -> SimTime {
        SimTime(x * 1000)
    }

    /// Queue `k` takes the shared wire, as [`Host::tx_wire_taken`] does.
    fn take(a: &mut TxArbiter, q: &mut [Nic; 2], k: u16) {
        a.take(k).expect("free wire");
        q.iter_mut().for_each(|n| n.wire_taken = true);
    }

    /// The wire is free again, as in [`Host::tx_wire_free`].
    fn free(a: &mut TxArbiter, q: &mut [Nic; 2]) {
        a.release();
        q.iter_mut().for_each(|n| n.wire_taken = false);
    }

    #[test]
    fn a_queue_restarted_after_an_underrun_waits_for_its_poll_while_a_ready_one_sends() {
        // Polls every 10 us, 64-byte frames on 100 Mbit/s: 84 bytes, 6.72 us a frame.
        let mut a = TxArbiter::new(2);
        let mut q = [queue("out-q0"), queue("out-q1")];
        // Queue 0 starts a frame at the poll at 0 and underruns: the frame is cut and
        // the transmitter stops.
        let first = q[0].output(ns(0), pkt(0)).unwrap().expect("starts");
        assert_eq!(first.start, ns(0));
        take(&mut a, &mut q, 0);
        assert!(q[0].tx_abort().is_some());
        free(&mut a, &mut q);
        // Queue 1's frame, handed over at 2 us, starts at the poll at 10 us.
        let on_wire = q[1].output(ns(2000), pkt(1)).unwrap().expect("starts");
        assert_eq!((on_wire.start, on_wire.done), (ns(10000), ns(16720)));
        take(&mut a, &mut q, 1);
        // Queue 0 gets a frame at 3 us (its transmitter stopped) and the driver
        // restarts it at 4 us: suspended, it reads its ring at its next poll.
        assert!(q[0].output(ns(3000), pkt(2)).unwrap().is_none());
        assert!(q[0].tx_restart(ns(4000)).is_none(), "the wire is queue 1's");
        // Queue 1 gets its next frame at 5 us.
        assert!(q[1].output(ns(5000), pkt(3)).unwrap().is_none());
        // Queue 1's frame ends at 16.72 us (as Host::tx_done_shared: its next frame is
        // held for the arbiter).
        let end = ns(16720);
        q[1].wire_taken = true;
        assert!(q[1].tx_done(end).is_none());
        free(&mut a, &mut q);
        // Queue 0's turn comes first in round robin, but it can start only at its poll
        // at 20 us; queue 1's frame can start now: queue 1 gets the wire.
        assert_eq!(q[0].tx_start_at(end), Some(ns(20000)));
        assert_eq!(q[1].tx_start_at(end), Some(end));
        assert_eq!(next_turn(&a, end, |k| &q[k as usize]), Some(1));
        let next = q[1].tx_turn(end).expect("starts");
        assert_eq!((next.start, next.done), (end, ns(23440)));
        take(&mut a, &mut q, 1);
        // When it ends, queue 0 (alone with a frame) gets the wire and starts at its
        // poll at 30 us, the first at or after 23.44 us.
        q[1].wire_taken = true;
        assert!(q[1].tx_done(ns(23440)).is_none());
        free(&mut a, &mut q);
        assert_eq!(next_turn(&a, ns(23440), |k| &q[k as usize]), Some(0));
        assert_eq!(q[0].tx_turn(ns(23440)).expect("starts").start, ns(30000));
    }
}
