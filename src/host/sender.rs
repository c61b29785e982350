//! The host's routing for [`crate::model::sender`].

use crate::host::attach::Shape;
use crate::host::{Event, Host, Step, Task};
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;

impl<M: Shape> Host<M> {
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
        if let Some(p) = snd.built(first, now) {
            self.acct.flow_mut(p.flow as usize).source.sent += 1;
            self.if_output(p, now, s);
        }
        let contended = self.user_level_contended();
        let Some(snd) = self.sender.as_mut() else {
            return Step::Done;
        };
        let full = self.ports[snd.nic].nic.if_snd.is_full();
        snd.next(now, contended, full)
    }

    /// The driver freed room in `nic`'s if_snd: wake the sender if it sleeps on it.
    #[inline]
    pub(crate) fn sender_room(&mut self, nic: usize) {
        let Some(snd) = self.sender.as_mut().filter(|snd| snd.nic == nic) else {
            return;
        };
        if snd.room(self.ports[nic].nic.if_snd.is_full()) {
            self.wake(Task::Sender);
        }
    }
}
