//! The transmit arbiter of a multi-queue NIC: its transmit queues share one wire, and
//! the NIC takes one frame at a time from them in round robin.
//!
//! Each transmit queue of a multi-queue NIC has its own send queue and descriptor ring
//! (Linux's `mq` qdisc gives each its own child qdisc), but the port has one wire, and
//! the NIC's transmit arbiter decides whose frame goes next. Modelled as round robin,
//! frame by frame -- an assumption standing for the equal-weight arbitration of NICs
//! without DCB/ETS configured, whose exact granularity (descriptor fetch in batches,
//! byte credits) data sheets describe in their own terms. When a frame ends, the next
//! queue after the one that sent it whose head frame can start now (handed over and
//! past its `tx_latency_ns`) sends next; the queue that just sent is asked last. When
//! no head can start yet, the one that can start first gets the wire (the wire would
//! idle until then anyway).
//!
//! A backlogged queue therefore gets at least 1/n of the frames sent whatever the
//! others offer -- 1/n of the wire's time when the frames are of one size: max-min
//! fairness between queues in frames, where one FIFO would share the wire in proportion
//! to the load offered.
//!
//! Not modelled: descriptor fetch in batches (the arbiter sees the head of each queue
//! at once), byte-based fairness, and weighted or strict-priority arbitration (DCB/ETS).
//!
//! Parameters: the number of queues. Counters: none (each queue counts its frames).

/// Why [`TxArbiter::take`] refused a queue the wire: one wire carries one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TakeError {
    /// Another queue (this one) has a frame on the wire.
    HeldByOther(u16),
    /// The queue asking already has a frame on the wire: a second frame of its own
    /// would overlap the first.
    AlreadyHeld,
}

impl std::fmt::Display for TakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TakeError::HeldByOther(q) => write!(f, "queue {q} has a frame on the wire"),
            TakeError::AlreadyHeld => write!(f, "the queue already has a frame on the wire"),
        }
    }
}

impl std::error::Error for TakeError {}

/// Which transmit queue holds the wire, and whose turn is next.
#[derive(Clone, Debug)]
pub struct TxArbiter {
    queues: u16,
    /// The queue whose frame is on the wire (or committed to it).
    on_wire: Option<u16>,
    /// The queue that started the last frame; the round robin goes on after it.
    last: u16,
}

impl TxArbiter {
    /// An idle wire shared by `queues` transmit queues.
    pub fn new(queues: u16) -> TxArbiter {
        TxArbiter {
            queues: queues.max(1),
            on_wire: None,
            last: queues.max(1) - 1,
        }
    }

    /// The number of queues sharing the wire.
    #[inline]
    pub fn queues(&self) -> u16 {
        self.queues
    }

    /// The queue whose frame is on the wire, if any.
    #[inline]
    pub fn on_wire(&self) -> Option<u16> {
        self.on_wire
    }

    /// Queue `q` starts a frame on the free wire. Refused if any queue, `q` itself
    /// included, has a frame on it: one wire carries one frame.
    #[inline]
    pub fn take(&mut self, q: u16) -> Result<(), TakeError> {
        match self.on_wire {
            Some(other) if other != q => Err(TakeError::HeldByOther(other)),
            Some(_) => Err(TakeError::AlreadyHeld),
            None => {
                self.on_wire = Some(q);
                self.last = q;
                Ok(())
            }
        }
    }

    /// The frame on the wire ended (or was cut): the wire is free.
    #[inline]
    pub fn release(&mut self) {
        self.on_wire = None;
    }

    /// The queue whose turn it is at `now`, given when each queue's head frame can
    /// start (`eligible`, `None` for a queue with no frame): the first after the last
    /// sender in round-robin order whose head can start by `now`, the last sender
    /// itself last; if none can yet, the one whose head can start first (the first in
    /// round-robin order among equals).
    #[inline]
    pub fn next(
        &self,
        now: crate::sim::time::SimTime,
        mut eligible: impl FnMut(u16) -> Option<crate::sim::time::SimTime>,
    ) -> Option<u16> {
        let mut first: Option<(crate::sim::time::SimTime, u16)> = None;
        for q in (1..=self.queues).map(|i| (self.last + i) % self.queues) {
            match eligible(q) {
                Some(t) if t <= now => return Some(q),
                Some(t) if first.is_none_or(|(f, _)| t < f) => first = Some((t, q)),
                _ => {}
            }
        }
        first.map(|(_, q)| q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::SimTime;

    /// Frames sent, in order, when the queues hold `backlog[q]` frames each and the
    /// wire serves them one at a time until all are sent.
    fn drain(backlog: &mut [u32]) -> Vec<u16> {
        let mut a = TxArbiter::new(backlog.len() as u16);
        let mut sent = Vec::new();
        let now = SimTime(0);
        while let Some(q) = a.next(now, |q| (backlog[q as usize] > 0).then_some(now)) {
            a.take(q).expect("free wire");
            backlog[q as usize] -= 1;
            sent.push(q);
            a.release();
        }
        sent
    }

    #[test]
    fn backlogged_queues_take_turns_frame_by_frame() {
        assert_eq!(drain(&mut [3, 1, 2]), [0, 1, 2, 0, 2, 0]);
    }

    #[test]
    fn a_lone_queue_sends_back_to_back() {
        assert_eq!(drain(&mut [0, 0, 3]), [2, 2, 2]);
    }

    #[test]
    fn a_second_queue_cannot_take_a_busy_wire() {
        let mut a = TxArbiter::new(2);
        a.take(1).unwrap();
        assert_eq!(a.take(0), Err(TakeError::HeldByOther(1)));
        assert_eq!(a.on_wire(), Some(1));
        a.release();
        // After queue 1, queue 0's turn comes first.
        assert_eq!(a.next(SimTime(0), |_| Some(SimTime(0))), Some(0));
        a.take(0).unwrap();
        assert_eq!(a.on_wire(), Some(0));
    }

    #[test]
    fn a_queue_holding_the_wire_cannot_take_it_again() {
        // Queue 0 has a frame on the wire; a second take by queue 0 would put a second
        // frame on it: refused, and the wire stays queue 0's until released.
        let mut a = TxArbiter::new(2);
        a.take(0).unwrap();
        assert_eq!(a.take(0), Err(TakeError::AlreadyHeld));
        assert_eq!(a.on_wire(), Some(0));
        a.release();
        assert_eq!(a.take(0), Ok(()));
    }

    #[test]
    fn a_head_that_can_start_now_goes_before_one_that_cannot_yet() {
        let mut a = TxArbiter::new(3);
        a.take(2).unwrap();
        a.release();
        // Queue 0's turn, but its frame can start only at 50; queue 1's at 10 <= now.
        let at = [Some(SimTime(50)), Some(SimTime(10)), None];
        assert_eq!(a.next(SimTime(20), |q| at[q as usize]), Some(1));
        // None can start by 5: the earliest, queue 1 (10), not queue 0 (50).
        assert_eq!(a.next(SimTime(5), |q| at[q as usize]), Some(1));
        // Equal times: round-robin order.
        let same = [Some(SimTime(30)), Some(SimTime(30)), None];
        assert_eq!(a.next(SimTime(5), |q| same[q as usize]), Some(0));
        assert_eq!(a.next(SimTime(5), |_| None), None);
    }
}
