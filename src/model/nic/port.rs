//! The transmit side of a port: its transmit queues, the one wire they share, the
//! arbiter that gives it to one of them at a time, and XPS. A NIC of one queue is a port
//! of one queue: the host starts every transmission through a [`TxPort`].
//!
//! A multi-queue NIC (ixgbe, mlx5) has one transmit ring per queue but one MAC and one
//! wire: one frame is on the wire at a time, and the NIC's arbiter decides whose frame
//! goes next ([`super::tx_arbiter`]). [`TxPort`] is that wire. Every transmission on a
//! queue of the port starts through it: [`TxPort::output`] (if_output on a queue),
//! [`TxPort::start`] (the driver's start routine), [`TxPort::restart`] (after an
//! underrun), [`TxPort::wire_end`] (the frame on the wire ended: the holder's
//! descriptor is freed and the arbiter hands the wire on) and [`TxPort::wire_cut`] (an
//! underrun or a reset cut it). A queue's transmitter starts a frame only when the port
//! says the wire is free ([`Wire::Free`]) or gives it the wire ([`Nic::tx_turn`]), and
//! the port takes the wire for it at once: two frames on one wire cannot happen by
//! construction, and the wire never idles while a queue has a frame ready (both are
//! the invariants the tests below check over random sequences of operations). Where
//! the construction would still fail, the port returns a typed [`WireError`].
//!
//! The queues are the queue devices' [`Nic`]s, lent to each call through [`TxQueues`]:
//! each queue keeps its own send queue, ring, counters and (on the receive side) its
//! vector, moderation and policy instance, as the hardware's queues do; what they share
//! is here. XPS ([`super::xps`]) picks the queue of a frame from the core that sends it
//! ([`TxPort::pick`]).
//!
//! Parameters: the number of queues, the number of cores and whether XPS maps them
//! (`xps`, default true). Counters: none (each queue counts its frames).

use crate::model::nic::tx_arbiter::{TakeError, TxArbiter};
use crate::model::nic::xps::Xps;
use crate::model::nic::{Nic, TxStart, Wire};
use crate::model::packet::Packet;
use crate::sim::time::SimTime;

/// The transmit queues of one port, by queue number (queue 0 first).
pub trait TxQueues {
    /// Queue `q`.
    fn queue(&self, q: u16) -> &Nic;
    /// Queue `q`, to change.
    fn queue_mut(&mut self, q: u16) -> &mut Nic;
}

impl TxQueues for [Nic] {
    #[inline]
    fn queue(&self, q: u16) -> &Nic {
        &self[q as usize]
    }
    #[inline]
    fn queue_mut(&mut self, q: u16) -> &mut Nic {
        &mut self[q as usize]
    }
}

/// A broken invariant of a port's wire (a bug in irqsim, reported, never wrapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// A queue started a frame on the wire while a frame was on it.
    Taken {
        /// The queue that started it.
        queue: u16,
        /// Why the wire was not its to take.
        why: TakeError,
    },
    /// The arbiter gave the free wire to queue `0`, which had a frame ready but did not
    /// start it: the wire would idle with work waiting (a lost wakeup).
    Idles(u16),
    /// Queue `0` has a frame on the wire while the arbiter holds the wire free.
    Untracked(u16),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Taken { queue, why } => {
                write!(f, "queue {queue} started a frame on its port's wire: {why}")
            }
            WireError::Idles(q) => write!(
                f,
                "queue {q} had a frame ready but did not start it on its port's free wire"
            ),
            WireError::Untracked(q) => write!(
                f,
                "queue {q} has a frame on its port's wire, which the arbiter holds free"
            ),
        }
    }
}

impl std::error::Error for WireError {}

/// One port's wire: who holds it, whose turn is next, and XPS. On a port of one
/// queue the queue's own transmitter is the wire's state (it starts a frame only when it
/// is not sending one, [`Nic::transmitting`]): there is no turn to hand out, so the
/// arbiter keeps none, and the invariants are checked against the queue.
#[derive(Clone, Debug)]
pub struct TxPort {
    xps: Xps,
    arbiter: TxArbiter,
}

impl TxPort {
    /// The wire of a port with `queues` transmit queues on a host with `cores` cores;
    /// `xps`: whether its XPS map assigns queues to cores.
    pub fn new(queues: u16, cores: usize, xps: bool) -> TxPort {
        TxPort {
            xps: Xps::new(queues, cores, xps),
            arbiter: TxArbiter::new(queues),
        }
    }

    /// Its number of transmit queues.
    #[inline]
    pub fn queues(&self) -> u16 {
        self.arbiter.queues()
    }

    /// The transmit queue of a frame sent from `core` (XPS, [`Xps::pick`]).
    #[inline]
    pub fn pick(&self, core: usize, hash: u32, rx_queue: Option<u16>) -> u16 {
        self.xps.pick(core, hash, rx_queue)
    }

    /// Whether it is a port of one queue (a NIC's only queue owns the wire).
    #[inline(always)]
    fn single(&self) -> bool {
        self.arbiter.queues() == 1
    }

    /// The queue whose frame is on the wire, if any, its queues being `qs`.
    #[inline]
    pub fn on_wire<Q: TxQueues + ?Sized>(&self, qs: &Q) -> Option<u16> {
        if self.single() {
            return qs.queue(0).transmitting().then_some(0);
        }
        self.arbiter.on_wire()
    }

    /// The wire as a queue sees it now: on a port of one queue, the queue's own (free
    /// unless it is sending, which its transmitter knows).
    #[inline(always)]
    fn wire(&self) -> Wire {
        match self.arbiter.on_wire() {
            None => Wire::Free,
            Some(_) => Wire::Held,
        }
    }

    /// Queue `q` committed to `tx` (or to nothing): it now holds the wire (on a port of
    /// one queue, its transmitter's state says so).
    #[inline(always)]
    fn started(&mut self, q: u16, tx: Option<TxStart>) -> Result<Option<TxStart>, WireError> {
        if tx.is_some() && !self.single() {
            self.arbiter
                .take(q)
                .map_err(|why| WireError::Taken { queue: q, why })?;
        }
        Ok(tx)
    }

    /// if_output on queue `q` ([`Nic::output_on`]): the frame goes on its send queue and
    /// starts at once if the wire is free. The inner `Err` is a full if_snd's drop.
    #[inline(always)]
    pub fn output<Q: TxQueues + ?Sized>(
        &mut self,
        qs: &mut Q,
        q: u16,
        now: SimTime,
        pkt: Packet,
    ) -> Result<Result<Option<TxStart>, Packet>, WireError> {
        let wire = self.wire();
        match qs.queue_mut(q).output_on(now, pkt, wire) {
            Err(p) => Ok(Err(p)),
            Ok(tx) => self.started(q, tx).map(Ok),
        }
    }

    /// Queue `q`'s driver runs its start routine ([`Nic::start_on`]).
    #[inline(always)]
    pub fn start<Q: TxQueues + ?Sized>(
        &mut self,
        qs: &mut Q,
        q: u16,
        now: SimTime,
    ) -> Result<Option<TxStart>, WireError> {
        self.on_queue(qs, q, |n, wire| n.start_on(now, wire))
    }

    /// Queue `q`'s driver restarts its transmitter after an underrun
    /// ([`Nic::tx_restart_on`]).
    pub fn restart<Q: TxQueues + ?Sized>(
        &mut self,
        qs: &mut Q,
        q: u16,
        now: SimTime,
    ) -> Result<Option<TxStart>, WireError> {
        self.on_queue(qs, q, |n, wire| n.tx_restart_on(now, wire))
    }

    /// Run `op` on queue `q` with the wire as it sees it now; what it starts holds the
    /// wire.
    #[inline(always)]
    fn on_queue<Q: TxQueues + ?Sized>(
        &mut self,
        qs: &mut Q,
        q: u16,
        op: impl FnOnce(&mut Nic, Wire) -> Option<TxStart>,
    ) -> Result<Option<TxStart>, WireError> {
        let wire = self.wire();
        let tx = op(qs.queue_mut(q), wire);
        self.started(q, tx)
    }

    /// The frame of queue `q` on the wire ended: its descriptor is freed
    /// ([`Nic::tx_done_on`], its next frame held for the arbiter) and the wire goes to the
    /// queue whose turn it is (on a port of one queue, back to the queue, whose
    /// transmitter goes on as after any frame of its own). Returns the queue and frame
    /// that start, if one does.
    #[inline(always)]
    pub fn wire_end<Q: TxQueues + ?Sized>(
        &mut self,
        qs: &mut Q,
        q: u16,
        now: SimTime,
    ) -> Result<Option<(u16, TxStart)>, WireError> {
        if self.single() {
            // A port of one queue: nobody else can want the wire, so the queue's
            // transmitter goes on to its next frame itself (as a NIC of one queue does),
            // with no turn to hand out.
            return Ok(qs.queue_mut(q).tx_done_on(now, Wire::Free).map(|t| (q, t)));
        }
        // With the wire held, the queue's transmitter cannot start its next frame: the
        // arbiter decides who sends next.
        if qs.queue_mut(q).tx_done_on(now, Wire::Held).is_some() {
            return Err(WireError::Taken {
                queue: q,
                why: TakeError::AlreadyHeld,
            });
        }
        self.wire_cut(qs, q, now)
    }

    /// Queue `q`'s frame was cut from the wire (an underrun), or a reset left it with
    /// none: the wire is free unless another queue holds it, and goes to the queue
    /// whose turn it is. Returns the queue and frame that start, if one does.
    pub fn wire_cut<Q: TxQueues + ?Sized>(
        &mut self,
        qs: &mut Q,
        q: u16,
        now: SimTime,
    ) -> Result<Option<(u16, TxStart)>, WireError> {
        if self.single() {
            // The queue's cut frame leaves its transmitter stopped or its ring empty (an
            // underrun halts it; a reset frees the ring): the driver starts it again.
            return Ok(None);
        }
        if self.arbiter.on_wire().is_some_and(|h| h != q) {
            // Another queue holds the wire (a reset of one that was not sending).
            return Ok(None);
        }
        self.arbiter.release();
        let Some(next) = self.arbiter.next(now, |k| qs.queue(k).tx_start_at(now)) else {
            return Ok(None);
        };
        match qs.queue_mut(next).tx_turn(now) {
            Some(tx) => self.started(next, Some(tx)).map(|t| t.map(|t| (next, t))),
            None => Err(WireError::Idles(next)),
        }
    }

    /// The wire's invariants, checked over its queues `qs` as they stand: at most one
    /// queue has a frame on the wire and it is the one that holds it, and a free wire
    /// has no queue with a frame ready (no lost wakeup). The host checks them at the end
    /// of every run; the tests after every operation.
    pub fn check<Q: TxQueues + ?Sized>(&self, qs: &Q) -> Result<(), WireError> {
        let mut sending = (0..self.queues()).filter(|&k| qs.queue(k).transmitting());
        match (sending.next(), sending.next(), self.on_wire(qs)) {
            // Two frames on the wire: the second queue's started on a held wire.
            (Some(a), Some(b), _) => Err(WireError::Taken {
                queue: b,
                why: TakeError::HeldByOther(a),
            }),
            (Some(a), None, Some(h)) if a != h => Err(WireError::Taken {
                queue: a,
                why: TakeError::HeldByOther(h),
            }),
            (Some(a), None, None) => Err(WireError::Untracked(a)),
            (None, _, None) => match (0..self.queues()).find(|&k| qs.queue(k).tx_ready()) {
                Some(k) => Err(WireError::Idles(k)),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::nic::NicConfig;
    use proptest::prelude::*;

    /// A transmit queue of a 100 Mbit/s NIC that polls its ring every `poll_ns`
    /// (`tx_poll_interval_ns`), with no latencies.
    fn queue(name: &str, poll_ns: f64) -> Nic {
        let cfg: NicConfig = serde_json::from_value(serde_json::json!({
            "name": name, "tx_poll_interval_ns": poll_ns, "tx_ring_slots": 4
        }))
        .expect("config");
        Nic::new(&cfg, 8, 1000.0)
    }

    fn pkt(seq: u64) -> Packet {
        Packet {
            flow: 0,
            bytes: 64,
            seq,
            t_in: SimTime::ZERO,
        }
    }

    /// `x` \[ns\].
    fn ns(x: u64) -> SimTime {
        SimTime(x * 1000)
    }

    #[test]
    fn a_queue_restarted_after_an_underrun_waits_for_its_poll_while_a_ready_one_sends() {
        // Polls every 10 us, 64-byte frames on 100 Mbit/s: 84 bytes, 6.72 us a frame.
        let mut p = TxPort::new(2, 1, false);
        let mut q = [queue("out-q0", 10_000.0), queue("out-q1", 10_000.0)];
        // Queue 0 starts a frame at the poll at 0 and underruns: the frame is cut, the
        // transmitter stops and the wire is free (nothing else to send).
        let first = p.output(&mut q[..], 0, ns(0), pkt(0)).unwrap().unwrap();
        assert_eq!(first.expect("starts").start, ns(0));
        assert_eq!(p.on_wire(&q[..]), Some(0));
        assert!(q[0].tx_abort().is_some());
        assert_eq!(p.wire_cut(&mut q[..], 0, ns(1000)).unwrap(), None);
        // Queue 1's frame, handed over at 2 us, starts at the poll at 10 us.
        let on_wire = p.output(&mut q[..], 1, ns(2000), pkt(1)).unwrap().unwrap();
        let on_wire = on_wire.expect("starts");
        assert_eq!((on_wire.start, on_wire.done), (ns(10000), ns(16720)));
        assert_eq!(p.on_wire(&q[..]), Some(1));
        // Queue 0 gets a frame at 3 us (its transmitter stopped) and the driver
        // restarts it at 4 us: the wire is queue 1's.
        assert_eq!(p.output(&mut q[..], 0, ns(3000), pkt(2)), Ok(Ok(None)));
        assert_eq!(p.restart(&mut q[..], 0, ns(4000)), Ok(None));
        // Queue 1 gets its next frame at 5 us.
        assert_eq!(p.output(&mut q[..], 1, ns(5000), pkt(3)), Ok(Ok(None)));
        // Queue 1's frame ends at 16.72 us. Queue 0's turn comes first in round robin,
        // but it can start only at its poll at 20 us; queue 1's frame can start now:
        // queue 1 gets the wire.
        let end = ns(16720);
        assert_eq!(q[0].tx_start_at(end), Some(ns(20000)));
        let (k, next) = p.wire_end(&mut q[..], 1, end).unwrap().expect("hands over");
        assert_eq!((k, next.start, next.done), (1, end, ns(23440)));
        // When it ends, queue 0 (alone with a frame) gets the wire and starts at its
        // poll at 30 us, the first at or after 23.44 us.
        let (k, next) = p
            .wire_end(&mut q[..], 1, ns(23440))
            .unwrap()
            .expect("hands over");
        assert_eq!((k, next.start), (0, ns(30000)));
    }

    /// One step of a random run of a port's queues.
    #[derive(Clone, Debug)]
    enum Op {
        /// A frame is forwarded to queue `0`.
        Output(u16),
        /// The driver of queue `0` runs its start routine.
        Start(u16),
        /// The frame on the wire ends (if one is).
        End,
        /// The frame on the wire underruns (if one is); its driver restarts the queue
        /// after the next operation.
        Underrun,
        /// Queue `0`'s chip is reset (dc_stop + dc_init): its rings are freed; a frame
        /// it has on the wire stays there until its end.
        Reset(u16),
        /// Time passes by `0` ns.
        Wait(u64),
    }

    fn op(queues: u16) -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..queues).prop_map(Op::Output),
            1 => (0..queues).prop_map(Op::Start),
            3 => Just(Op::End),
            1 => Just(Op::Underrun),
            1 => (0..queues).prop_map(Op::Reset),
            2 => (0u64..20_000).prop_map(Op::Wait),
        ]
    }

    proptest! {
        /// Over random sequences of frames forwarded, frames ended, underruns and
        /// restarts on 1-4 queues (one: the port of a NIC of one queue; with and without
        /// an automatic transmit poll): at most
        /// one queue has a frame on the wire, it is the one the arbiter says holds it,
        /// the wire is never free while a queue has a frame ready (no lost wakeup), and
        /// no operation reports a broken invariant.
        #[test]
        fn one_frame_on_the_wire_and_no_lost_wakeup(
            (queues, ops) in (1u16..=4).prop_flat_map(|n| (Just(n), prop::collection::vec(op(n), 1..200))),
            poll in prop_oneof![Just(0.0), Just(10_000.0)],
        ) {
            let mut p = TxPort::new(queues, 1, false);
            let mut q: Vec<Nic> = (0..queues).map(|k| queue(&format!("q{k}"), poll)).collect();
            let mut now = SimTime::ZERO;
            // The frame on the wire: its queue and end.
            let mut wire: Option<(u16, SimTime)> = None;
            let mut restart: Option<u16> = None;
            // The frame on the wire is one a reset freed (it only ends).
            let mut reset_on_wire = false;
            let mut seq = 0;
            for o in ops {
                let pending_restart = restart.take();
                let started = match o {
                    Op::Output(k) => {
                        seq += 1;
                        p.output(&mut q[..], k, now, pkt(seq)).map(|r| r.ok().flatten().map(|t| (k, t)))
                    }
                    Op::Start(k) => p.start(&mut q[..], k, now).map(|t| t.map(|t| (k, t))),
                    Op::End => match wire.take() {
                        Some((k, done)) => {
                            now = now.max(done);
                            p.wire_end(&mut q[..], k, now)
                        }
                        None => Ok(None),
                    },
                    // An underrun cuts a frame still being fetched, never one a reset
                        // left on the wire.
                    Op::Underrun if reset_on_wire => Ok(None),
                    Op::Underrun => match wire.take() {
                        Some((k, _)) => {
                            prop_assert!(q[k as usize].tx_abort().is_some());
                            q[k as usize].underrun_cause = false;
                            restart = Some(k);
                            p.wire_cut(&mut q[..], k, now)
                        }
                        None => Ok(None),
                    },
                    Op::Reset(k) => {
                        // As Host::chip_reset: a frame on the wire stays; otherwise the
                        // queue has none, and the wire goes on unless another holds it.
                        let on_wire = wire.is_some_and(|(h, _)| h == k);
                        q[k as usize].reset(on_wire);
                        q[k as usize].underrun_cause = false;
                        q[k as usize].tx_halted = false;
                        q[k as usize].link_up = true;
                        if restart == Some(k) {
                            restart = None;
                        }
                        if on_wire {
                            reset_on_wire = true;
                            Ok(None)
                        } else {
                            p.wire_cut(&mut q[..], k, now)
                        }
                    }
                    Op::Wait(d) => {
                        now += SimTime(d * 1000);
                        Ok(None)
                    }
                };
                let mut started = vec![started];
                if let Some(k) = pending_restart {
                    started.push(p.restart(&mut q[..], k, now).map(|t| t.map(|t| (k, t))));
                }
                for s in started {
                    match s {
                        Err(e) => prop_assert!(false, "broken invariant: {e}"),
                        Ok(Some((k, tx))) => {
                            prop_assert!(wire.is_none(), "queue {k} started on a busy wire");
                            wire = Some((k, tx.done));
                            reset_on_wire = false;
                        }
                        Ok(None) => {}
                    }
                }
                let sending: Vec<u16> = (0..queues).filter(|&k| q[k as usize].transmitting()).collect();
                prop_assert!(sending.len() <= 1, "queues {sending:?} on one wire");
                prop_assert_eq!(p.on_wire(&q[..]), wire.map(|(k, _)| k));
                prop_assert_eq!(sending.first().copied(), wire.map(|(k, _)| k));
                if let Err(e) = p.check(&q[..]) {
                    prop_assert!(false, "{e}");
                }
            }
        }
    }
}
