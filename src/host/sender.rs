//! The host's routing for [`crate::sender`].

use crate::engine::Scheduler;
use crate::host::{Event, Host, Step, Task};
use crate::packet::Packet;
use crate::time::SimTime;

impl Host {
    /// One step of the sending process: hand over the packet just built, then build the
    /// next one, or sleep on a full if_snd, or yield at the end of a time slice.
    pub(crate) fn sender_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let Some(snd) = self.sender.as_mut() else {
            return Step::Done;
        };
        if first {
            snd.slice_used = SimTime::ZERO;
        }
        if std::mem::take(&mut snd.building) {
            snd.packets += 1;
            let (flow, seq, bytes) = (snd.flow, snd.packets - 1, snd.frame_bytes);
            let f = &mut self.flows[flow];
            f.source.sent += 1;
            let p = Packet {
                flow: flow as u32,
                bytes,
                seq,
                t_in: now,
            };
            self.if_output(p, now, s);
        }
        let contended = self.user_level_contended();
        let snd = self.sender.as_mut().expect("sender");
        if now >= snd.stop {
            return Step::Done;
        }
        if snd.slice_used >= snd.quantum && contended {
            return Step::Yield;
        }
        if self.nics[snd.nic].if_snd.is_full() {
            snd.blocked = true;
            snd.blocks += 1;
            return Step::Done;
        }
        let d = snd.packet_cost();
        snd.building = true;
        snd.slice_used += d;
        Step::Run(d)
    }

    /// The driver freed room in `nic`'s if_snd: wake the sender if it sleeps on it.
    #[inline]
    pub(crate) fn sender_room(&mut self, nic: usize) {
        let Some(snd) = self.sender.as_mut() else {
            return;
        };
        if snd.blocked && snd.nic == nic && !self.nics[nic].if_snd.is_full() {
            snd.blocked = false;
            self.wake(Task::Sender);
        }
    }
}
