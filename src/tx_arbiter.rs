//! The transmit arbiter of a multi-queue NIC: its transmit queues share one wire, and
//! the NIC takes one frame at a time from them in round robin.
//!
//! Each transmit queue of a multi-queue NIC has its own send queue and descriptor ring
//! (Linux's `mq` qdisc gives each its own child qdisc), but the port has one wire. The
//! 82599 without DCB serves its transmit queues round robin. Here that is frame by
//! frame: when a frame ends, the next queue after the one that sent it that has a frame
//! ready sends next. The queue that just sent is asked last. A backlogged queue
//! therefore gets at least 1/n of the wire whatever the others offer. This is max-min
//! fairness between queues, where one FIFO would share the wire in proportion to the
//! load offered.
//!
//! Not modelled: descriptor fetch in batches (the arbiter sees the head of each queue
//! at once), and weighted or strict-priority arbitration (DCB/ETS).
//!
//! Parameters: the number of queues. Counters: none (each queue counts its frames).

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

    /// The queue whose frame is on the wire, if any.
    #[inline]
    pub fn on_wire(&self) -> Option<u16> {
        self.on_wire
    }

    /// Queue `q` starts a frame. `Err` with the queue already on the wire if another
    /// one holds it: one wire carries one frame.
    #[inline]
    pub fn take(&mut self, q: u16) -> Result<(), u16> {
        match self.on_wire {
            Some(other) if other != q => Err(other),
            _ => {
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

    /// The queue whose turn it is among those `ready` says have a frame: the first
    /// after the last sender in round-robin order, the last sender itself last.
    #[inline]
    pub fn next(&self, mut ready: impl FnMut(u16) -> bool) -> Option<u16> {
        (1..=self.queues)
            .map(|i| (self.last + i) % self.queues)
            .find(|&q| ready(q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames sent, in order, when the queues hold `backlog[q]` frames each and the
    /// wire serves them one at a time until all are sent.
    fn drain(backlog: &mut [u32]) -> Vec<u16> {
        let mut a = TxArbiter::new(backlog.len() as u16);
        let mut sent = Vec::new();
        while let Some(q) = a.next(|q| backlog[q as usize] > 0) {
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
        assert_eq!(a.take(0), Err(1));
        assert_eq!(a.on_wire(), Some(1));
        a.release();
        // After queue 1, queue 0's turn comes first.
        assert_eq!(a.next(|_| true), Some(0));
        a.take(0).unwrap();
        assert_eq!(a.on_wire(), Some(0));
    }
}
