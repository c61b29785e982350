//! The host's routing for [`crate::user`].

use crate::engine::Scheduler;
use crate::host::attach::Shape;
use crate::host::{Event, Host, Step, Task};
use crate::packet::Packet;
use crate::time::SimTime;

impl<M: Shape> Host<M> {
    /// A forwarded packet for the screend-like process.
    pub(crate) fn user_enqueue(&mut self, p: Packet) {
        let Some(u) = self.user.as_mut().filter(|u| u.consumes_packets()) else {
            return;
        };
        if let Err(p) = u.enqueue(p) {
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

    /// One step of the user process: the packet it finished goes to if_output (and
    /// may let the polling thread's feedback resume input) before it takes the next.
    pub(crate) fn user_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let Some(u) = self.user.as_mut() else {
            return Step::Done;
        };
        if let Some(p) = u.finished() {
            self.if_output(p, now, s);
            self.output_drained(now, s);
        }
        let contended = self.user_level_contended();
        match self.user.as_mut() {
            Some(u) => u.next(first, contended),
            None => Step::Done,
        }
    }

    /// Unit cost of the cpu-bound job [ns] (0 for screend).
    pub(crate) fn user_unit_ns(&self) -> f64 {
        self.user.as_ref().map_or(0.0, |u| u.unit_ns())
    }
}
