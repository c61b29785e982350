//! The host's routing for [`crate::model::user`].

use crate::host::attach::Shape;
use crate::host::{Event, Host, Step, Task};
use crate::model::packet::Packet;
use crate::model::stats::DropSite;
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;

impl<M: Shape> Host<M> {
    /// A forwarded packet for the screend-like process.
    pub(crate) fn user_enqueue(&mut self, p: Packet) {
        let Some(u) = self.user.as_mut().filter(|u| u.consumes_packets()) else {
            return;
        };
        if let Err(p) = u.enqueue(p) {
            self.acct.dropped(p.flow, DropSite::UserQueue);
            return;
        }
        self.cores.wake(Task::UserProc);
    }

    /// Packets the user process has handled so far (screend; 0 for a cpu-bound one,
    /// whose work is its CPU time over its work unit, see `Host::user_work_done`).
    pub(crate) fn user_packets(&self) -> f64 {
        self.user.as_ref().map_or(0.0, |u| u.packets as f64)
    }

    /// One step of the user process: the packet it finished goes to if_output (and
    /// may let the polling thread's feedback resume input) before it takes the next.
    /// A process that busy-polls (`busy_read_us`, `busy_poll_us`) runs its busy loop,
    /// by the policy of the NIC its last packet came from, when it finds its queue
    /// empty, and takes what the loop brought.
    pub(crate) fn user_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let Some(u) = self.user.as_mut() else {
            return Step::Done;
        };
        let releases = u.releases();
        if let Some(p) = u.finished() {
            if releases {
                // xdpsock's rxdrop: the frame's buffer goes back to the fill ring.
                self.acct.dropped(p.flow, DropSite::Application);
            } else {
                self.if_output(p, now, s);
                self.output_drained(now, s);
            }
        }
        // A busy loop in progress; when it is over, the process takes what it brought
        // or sleeps (it does not loop again until a packet has woken it).
        let mut ended = false;
        let opts = self
            .user
            .as_ref()
            .map(|u| u.busy_opts())
            .unwrap_or_default();
        if let Some((deadline, nic)) = self.user.as_ref().and_then(|u| u.busy_loop()) {
            if let Step::Run(d) = self.policy_busy_poll(nic, false, deadline, opts, now, s) {
                return Step::Run(d);
            }
            if let Some(u) = self.user.as_mut() {
                u.end_busy_loop();
            }
            ended = true;
        }
        let contended = self.user_level_contended();
        let resched = self.user_need_resched();
        let Some(u) = self.user.as_mut() else {
            return Step::Done;
        };
        let step = u.next(first, contended, resched);
        if let Some(p) = u.current() {
            let nic = self.acct.flow(p.flow as usize).in_nic;
            u.took_from(nic);
        }
        // A blocking recv() sleeps after its busy loop; a non-blocking one returns
        // EAGAIN and the process calls it again: another round.
        if step != Step::Done || (ended && !u.nonblocking()) {
            return step;
        }
        // recv() found the socket empty: sk_busy_loop before sleeping (one round for a
        // non-blocking call).
        let Some((deadline, nic)) = u.begin_busy_loop(now) else {
            return step;
        };
        // The system call's own cost (xdpsock's recvfrom(); none for screend).
        let call = u.call_cost();
        if let Step::Run(d) = self.policy_busy_poll(nic, true, deadline, opts, now, s) {
            return Step::Run(call + d);
        }
        let Some(u) = self.user.as_mut() else {
            return Step::Done;
        };
        u.end_busy_loop();
        u.next(first, contended, resched)
    }

    /// Whether the user process is in its socket busy loop (napi_busy_loop, in a
    /// system call): its bursts are then kernel time (`%sys`).
    #[inline(always)]
    pub(crate) fn user_busy_polling(&self) -> bool {
        self.user.as_ref().is_some_and(|u| u.busy_loop().is_some())
    }

    /// Unit cost of the cpu-bound job \[ns\] (0 for screend).
    pub(crate) fn user_unit_ns(&self) -> f64 {
        self.user.as_ref().map_or(0.0, |u| u.unit_ns())
    }
}
