//! The host's routing for [`crate::kernel`].

use crate::engine::Scheduler;
use crate::host::{Event, Host, Step, Task};
use crate::kernel::*;
use crate::packet::Packet;
use crate::time::SimTime;

impl Host {
    /// schednetisr: mark `bits` pending and make the dispatcher ready.
    pub(crate) fn swi_raise(&mut self, bits: u32) {
        self.netisr.raise(bits);
        self.wake(Task::Swi);
    }

    /// IF_ENQUEUE on ipintrq and schednetisr(NETISR_IP).
    pub(crate) fn ipintrq_enqueue(&mut self, p: Packet) {
        if let Err(p) = self.netisr.ipintrq.push(p) {
            self.flows[p.flow as usize].stats.drops.ipintrq += 1;
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

    /// Frames held by the IP netisr and the polling handlers.
    pub(crate) fn netisr_held(&self) -> usize {
        self.netisr.held() + self.polling_held()
    }

    /// The next step of the software-interrupt dispatcher: the step of the handler it
    /// is in; when that handler is done, the lowest pending bit's handler.
    pub(crate) fn swi_step(
        &mut self,
        now: SimTime,
        _first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        loop {
            let step = match self.netisr.work() {
                SwiWork::None => Step::Done,
                SwiWork::Ip => self.ipintr_step(now, s),
                SwiWork::Poll => self.netisr_poll_step(now, s),
                SwiWork::NetRx => self.net_rx_step(now, s),
            };
            if let Step::Run(_) = step {
                return step;
            }
            let Some(bit) = self.netisr.next_bit() else {
                return Step::Done;
            };
            let work = match bit {
                NETISR_POLL => {
                    self.netisr_poll_begin(now);
                    SwiWork::Poll
                }
                NET_RX => {
                    if !self.net_rx_begin(now) {
                        continue;
                    }
                    SwiWork::NetRx
                }
                NETISR_IP => SwiWork::Ip,
                NETISR_POLLMORE => {
                    self.netisr_pollmore(now, s);
                    SwiWork::None
                }
                _ => SwiWork::None,
            };
            self.netisr.set_work(work);
        }
    }

    /// ipintr: forward the packet just processed, take the next one off ipintrq.
    fn ipintr_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        if let Some(p) = self.netisr.ip_finished() {
            self.forward(p, now, s);
        }
        self.netisr.ip_next()
    }
}
