//! The host's routing for [`crate::user`].

use crate::engine::Scheduler;
use crate::host::{Event, Host, Step, Task};
use crate::packet::Packet;
use crate::time::SimTime;

impl Host {
    /// A forwarded packet for the screend-like process.
    pub(crate) fn user_enqueue(&mut self, p: Packet) {
        let Some(q) = self.user.as_mut().and_then(|u| u.queue.as_mut()) else {
            return;
        };
        if let Err(p) = q.push(p) {
            self.flows[p.flow as usize].stats.drops.user_queue += 1;
            return;
        }
        self.wake(Task::UserProc);
    }

    /// Packets the user process has handled so far (screend; 0 for a cpu-bound one,
    /// whose work is its CPU time over its work unit, see `Host::user_work_done`).
    pub(crate) fn user_packets(&self) -> f64 {
        self.user.as_ref().map_or(0.0, |u| u.packets as f64)
    }

    /// One step of the user process.
    pub(crate) fn user_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let Some(u) = self.user.as_mut() else {
            return Step::Done;
        };
        if u.queue.is_none() {
            // cpu-bound: slices, yielding to other normal-priority tasks between them.
            if !first && self.user_level_contended() {
                return Step::Yield;
            }
            let u = self.user.as_mut().expect("user");
            return Step::Run(u.quantum);
        }
        if let Some(p) = u.current.take() {
            u.packets += 1;
            self.if_output(p, now, s);
            self.output_drained(now, s);
        }
        let u = self.user.as_mut().expect("user");
        match u.queue.as_mut().and_then(|q| q.pop()) {
            Some(p) => {
                u.current = Some(p);
                let c = u.per_packet.clone().expect("screend cost");
                Step::Run(c.sample(&mut u.rng))
            }
            None => Step::Done,
        }
    }

    /// Unit cost of the cpu-bound job [ns] (0 for screend).
    pub(crate) fn user_unit_ns(&self) -> f64 {
        self.user.as_ref().map_or(0.0, |u| u.unit_ns)
    }
}
