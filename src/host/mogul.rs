//! The host's routing for [`crate::policy::mogul`].

use crate::engine::Scheduler;
use crate::host::env::lend;
use crate::host::{Event, Host, Step};
use crate::policy::PolicyConfig;
use crate::time::SimTime;

/// Whether a NIC is served by the polling thread.
fn mogul(p: &PolicyConfig) -> bool {
    matches!(p, PolicyConfig::MogulRamakrishnan { .. })
}

impl Host {
    /// The receive interrupt of a NIC the polling thread serves.
    pub(crate) fn mogul_schedule(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        lend(
            self,
            now,
            s,
            |h| &mut h.mogul,
            |h| h.uses(mogul),
            |m, env| m.schedule(nic, env),
        );
    }

    /// Start of a cycle-limit period; the next one starts a period later.
    pub(crate) fn mogul_period(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        lend(
            self,
            now,
            s,
            |h| &mut h.mogul,
            |h| h.uses(mogul),
            |m, env| {
                m.period_start(env);
                env.s.at(now + m.period, Event::MogulPeriod);
            },
        );
    }

    /// Whether the queue after the receive path is full (`half`: more than half full)
    /// for the frame at the head of `nic`'s RX ring: the screend-like process's queue,
    /// or the output interface's if_snd.
    pub(crate) fn downstream_full(&self, nic: usize, half: bool) -> bool {
        if let Some(u) = &self.user
            && u.consumes_packets()
        {
            return if half {
                u.queue_above_half()
            } else {
                u.queue_full()
            };
        }
        let Some(p) = self.nics[nic].rx_ring.front() else {
            return false;
        };
        let q = &self.nics[self.flows[p.flow as usize].out_nic].if_snd;
        if half {
            q.len() * 2 > q.capacity()
        } else {
            q.is_full()
        }
    }

    /// A downstream queue drained a little (the polling thread's feedback).
    #[inline]
    pub(crate) fn output_drained(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        lend(
            self,
            now,
            s,
            |h| &mut h.mogul,
            |h| h.uses(mogul),
            |m, env| m.output_drained(env),
        );
    }

    /// One step of the polling thread.
    pub(crate) fn mogul_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        lend(
            self,
            now,
            s,
            |h| &mut h.mogul,
            |h| h.uses(mogul),
            |m, env| m.step(first, env),
        )
        .unwrap_or(Step::Done)
    }
}
