//! Busy polling (DPDK-style run-to-completion): a loop that owns the CPU and polls the
//! rings of its NICs round robin, with their interrupts off.
//!
//! Each frame found costs `rx_per_packet` + `netisr_per_packet` (received and forwarded
//! in the loop); a pass that finds every ring empty costs `empty_poll`. The loop never
//! sleeps: the CPU is never idle, and since it runs at kernel-thread priority, user
//! processes get nothing on a single CPU -- the price of the lowest latency.
//!
//! Parameters (in each NIC's `policy`; one loop polls them all, so every busy-poll NIC
//! must give the same value, which validation checks): `empty_poll` (default 100 ns;
//! must be > 0).
//!
//! Counters: `busy_poll.empty_polls`.

use crate::cost::Cost;
use crate::engine::Scheduler;
use crate::host::{Event, Host, Step};
use crate::packet::Packet;
use crate::policy::PolicyConfig;
use crate::time::SimTime;

/// Busy-poll loop state.
#[derive(Clone, Debug)]
pub struct BusyPoll {
    empty: Cost,
    next: usize,
    /// The frame being processed.
    pub current: Option<Packet>,
    /// Passes that found nothing -- counter.
    pub empty_polls: u64,
}

impl BusyPoll {
    /// State with the cost of an empty pass.
    pub fn new(empty: Cost) -> BusyPoll {
        BusyPoll {
            empty,
            next: 0,
            current: None,
            empty_polls: 0,
        }
    }
}

impl Host {
    /// One step of the loop.
    pub(crate) fn busy_step(
        &mut self,
        now: SimTime,
        _first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        if let Some(p) = self.busy.as_mut().and_then(|b| b.current.take()) {
            self.forward(p, now, s);
        }
        let n = self.nics.len();
        let start = self.busy.as_ref().map_or(0, |b| b.next);
        for k in 0..n {
            let nic = (start + k) % n;
            if !matches!(self.policies[nic], PolicyConfig::BusyPoll { .. }) {
                continue;
            }
            if let Some(p) = self.nics[nic].rx_ring.pop() {
                let d = self.drivers[nic].rx(p.bytes) + self.netisr.forward_cost();
                let b = self.busy.as_mut().expect("busy");
                b.next = (nic + 1) % n;
                b.current = Some(p);
                return Step::Run(d);
            }
        }
        let Some(b) = self.busy.as_mut() else {
            return Step::Done;
        };
        b.empty_polls += 1;
        let d = self.netisr.sample(&b.empty.clone());
        Step::Run(d)
    }
}
