//! Deferred receive handler: FreeBSD 6/7 em(4) with EM_FAST_INTR.
//!
//! A fast interrupt filter (isr_entry + isr_exit: read ICR, mask the NIC, enqueue the
//! task) does no packet work. The taskqueue thread, at kernel-thread priority above
//! user processes, then runs the task (`task_overhead`: taskqueue dispatch and thread
//! switch), which receives up to `process_limit` frames (each `rx_per_packet`, plus
//! `netisr_per_packet` when `direct`, i.e. net.isr.direct = 1, else the frame goes to
//! ipintrq). If frames remain it re-enqueues itself behind other ready kernel threads;
//! when the ring is empty it reclaims sent descriptors if a transmit cause is pending
//! (em_txeof, `driver.tx_per_packet` each, with `tx_completion`), runs the start
//! routine (em_start_locked) and unmasks the NIC (em_enable_intr).
//!
//! Differences from em_handle_rxtx of FreeBSD 6.2 (if_em.c 1.65.2.21, lines
//! 1277-1299), which matter only under overload: the real task runs em_txeof and
//! em_enable_intr even when it re-enqueued itself; here the NIC stays masked until the
//! ring is empty. The real task runs in a taskqueue thread at PI_NET (above the netisr's
//! SWI_NET); here at kernel-thread priority, below the netisr.
//!
//! Parameters (per NIC): `process_limit` 100 (em_rx_process_limit), `task_overhead` 0,
//! `direct` false.
//!
//! Counters: `<nic>.taskq.runs`, `<nic>.taskq.requeues`.

use crate::cost::Cost;
use crate::engine::Scheduler;
use crate::host::{Event, Host, Step};
use crate::packet::Packet;
use crate::time::SimTime;

/// Task state of one NIC.
#[derive(Clone, Debug)]
pub struct Taskq {
    limit: u32,
    overhead: Cost,
    direct: bool,
    done: u32,
    /// The frame being received.
    pub current: Option<Packet>,
    /// Task runs -- counter.
    pub runs: u64,
    /// Runs that ended by re-enqueueing the task -- counter.
    pub requeues: u64,
}

impl Taskq {
    /// State from the per-NIC parameters.
    pub fn new(limit: u32, overhead: Cost, direct: bool) -> Taskq {
        Taskq {
            limit,
            overhead,
            direct,
            done: 0,
            current: None,
            runs: 0,
            requeues: 0,
        }
    }
}

impl Host {
    /// One step of `nic`'s task.
    pub(crate) fn taskq_step(
        &mut self,
        nic: usize,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let Some(t) = self.taskqs[nic].as_mut() else {
            return Step::Done;
        };
        if first {
            t.runs += 1;
            t.done = 0;
            let overhead = t.overhead.clone();
            return Step::Run(self.netisr.sample(&overhead));
        }
        if let Some(p) = t.current.take() {
            if t.direct {
                self.forward(p, now, s);
            } else {
                self.ipintrq_enqueue(p);
            }
        }
        let t = self.taskqs[nic].as_mut().expect("taskq");
        if t.done >= t.limit {
            if !self.nics[nic].rx_ring.is_empty() {
                t.requeues += 1;
                return Step::Yield;
            }
        } else if let Some(p) = self.nics[nic].rx_ring.pop() {
            t.done += 1;
            t.current = Some(p);
            let direct = t.direct;
            let mut d = self.drivers[nic].rx(p.bytes);
            if direct {
                d += self.netisr.forward_cost();
            }
            return Step::Run(d);
        }
        if let Some(k) = self.nics[nic].take_tx_completions() {
            return Step::Run(self.drivers[nic].txeof(k));
        }
        if self.nics[nic].tx_completion_interrupts() {
            // Reclaimed descriptors take frames waiting in if_snd.
            self.if_start(nic, now, s);
        }
        self.irq_unmask(nic, now, s);
        Step::Done
    }
}
