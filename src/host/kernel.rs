//! The host's routing for [`crate::model::kernel`].

use crate::host::attach::Shape;
use crate::host::env::HostEnv;
use crate::host::{Event, Host, Step, Task};
use crate::model::kernel::{NETISR_IP, Netisr};
use crate::model::packet::Packet;
use crate::model::stats::DropSite;
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;

impl<M: Shape> Host<M> {
    /// schednetisr: mark `bits` pending and make the dispatcher ready.
    pub(crate) fn swi_raise(&mut self, bits: u32) {
        self.cores.hand_mut().netisr.raise(bits);
        self.wake(Task::Swi);
    }

    /// Mark software-interrupt `bits` pending on core `c` and make its dispatcher ready
    /// there.
    pub(crate) fn swi_raise_on(&mut self, c: usize, bits: u32) {
        self.cores.at(c).netisr.raise(bits);
        self.cores.wake_on(c, Task::Swi);
    }

    /// IF_ENQUEUE on ipintrq and schednetisr(NETISR_IP).
    pub(crate) fn ipintrq_enqueue(&mut self, p: Packet) {
        if let Err(p) = self.cores.hand_mut().netisr.ipintrq.push(p) {
            self.acct.dropped(p.flow, DropSite::Ipintrq);
            return;
        }
        self.swi_raise(NETISR_IP);
    }

    /// The end of the kernel's forwarding work for `p`: to the user process's queue if
    /// there is a screend-like consumer, else if_output.
    pub(crate) fn forward(&mut self, p: Packet, now: SimTime, s: &mut Scheduler<Event>) {
        if self.user.as_ref().is_some_and(|u| u.consumes_packets()) {
            self.user_enqueue(p);
        } else {
            self.if_output(p, now, s);
        }
    }

    /// One step of the software-interrupt dispatcher ([`Netisr::dispatch`]).
    pub(crate) fn swi_step(
        &mut self,
        now: SimTime,
        _first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        Netisr::dispatch(&mut HostEnv { h: self, now, s })
    }
}
