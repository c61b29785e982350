//! A host's run: its first frames and timers, the event loop to the end of sending and
//! the drain, and what it returns ([`RunStats`]: the counters, CPU time by level and
//! task, the load at the end).

use super::*;

impl<M: Shape> Host<M> {
    /// Run to the end of sending plus the drain period (or until nothing is left to do)
    /// and return the statistics.
    pub fn run(mut self, spec: &RunSpec) -> Result<RunStats, SimError> {
        let mut s = Scheduler::new();
        self.start(spec, &mut s);
        while let Some(next) = self.peek_next(&s) {
            self.fire(&mut s, next);
        }
        let end = s.now().max(spec.duration);
        self.finish(spec, end, s.events_processed())
    }

    /// The first frames, the end of sending, the timers.
    pub(super) fn start(&mut self, spec: &RunSpec, s: &mut Scheduler<Event>) {
        for i in 0..self.acct.flows().len() {
            self.next_arrival(i, s);
        }
        s.at(spec.duration, Event::EndOfLoad);
        self.start_timers(s);
    }

    /// The next event, the earliest of the queued events, the slots and the arrivals
    /// ([`Events::peek`]). `None` when nothing is left, the run's end has passed, or an
    /// invariant broke.
    #[inline(always)]
    pub(super) fn peek_next(&self, s: &Scheduler<Event>) -> Option<Next> {
        let next = self.events.peek(s)?;
        if self.acct.over_at(next.key.at) {
            return None;
        }
        Some(next)
    }

    /// Periodic timers and always-running tasks.
    pub(super) fn start_timers(&mut self, s: &mut Scheduler<Event>) {
        self.start_policy_timers(s);
        if let Some(c) = &self.hardclock {
            s.at(c.period(), Event::Clock);
        }
        for (i, p) in self.ports.iter().enumerate() {
            if let Some(st) = &p.nic().stats {
                s.at(st.phase, Event::Harvest(i as u16));
            }
        }
        self.link_watch_start(s);
        self.start_policies(SimTime::ZERO, s);
        if self.user.is_some() {
            self.cores.wake(Task::UserProc);
        }
        if self.sender.is_some() {
            self.cores.wake(Task::Sender);
        }
        self.reschedule(SimTime::ZERO, s);
    }

    /// Every counter name a run of this host can publish: those of [`Host::counters`]
    /// (published from the start, whatever they count) and those the policies publish
    /// only once they count ([`crate::model::policy::RxPolicy::ONCE_COUNTED`]). Asked
    /// of a host as assembled, before any event.
    pub(crate) fn counter_names(&self) -> std::collections::BTreeSet<String> {
        let mut names: std::collections::BTreeSet<String> =
            self.counters(SimTime::ZERO).into_keys().collect();
        names.extend(
            self.rx_policies
                .once_counted()
                .into_iter()
                .map(String::from),
        );
        names
    }

    /// Every part's counters as of `end`, each written by the part that keeps them.
    pub(super) fn counters(&self, end: SimTime) -> BTreeMap<String, f64> {
        let mut c = BTreeMap::new();
        for p in self.ports.iter() {
            p.counters(end, &mut c);
        }
        let nic_names: Vec<String> = self.ports.iter().map(|p| p.nic().name.clone()).collect();
        self.rx_policies.counters(&nic_names, &mut c);
        self.cores.counters(&mut c);
        if let Some(u) = &self.user {
            u.counters(&mut c);
        }
        if let Some(snd) = &self.sender {
            snd.counters(&mut c);
        }
        for l in &self.lines {
            l.counters(&mut c);
        }
        if let Some(b) = self.bus.get() {
            b.counters(&mut c);
        }
        c
    }

    pub(super) fn finish(
        mut self,
        spec: &RunSpec,
        end: SimTime,
        events: u64,
    ) -> Result<RunStats, SimError> {
        if let Some(what) = self
            .acct
            .take_violation()
            .or_else(|| self.wires_broken(end))
        {
            return Err(SimError::broken(what));
        }
        let (flows, total) = self.acct.close(end)?;
        // Packet conservation: what was sent and neither delivered nor dropped is held in
        // a ring, queue or step, or was on a wire when the run stopped (a frame still
        // arriving, or one the output NIC had committed to start later).
        {
            let held = self.packets_held();
            let on_wires = self
                .acct
                .flows()
                .iter()
                .filter(|f| f.pending.is_some())
                .count()
                + self.ports.len();
            let in_flight = total.in_flight_at_end as usize;
            if !(held <= in_flight && in_flight <= held + on_wires) {
                return Err(SimError::broken(Broken {
                    invariant: Invariant::HostConservation,
                    component: "host".into(),
                    at: end,
                    detail: format!(
                        "{in_flight} frames unaccounted for at the end, but the host holds \
                         {held} and at most {on_wires} can be on wires"
                    ),
                }));
            }
        }
        let snap = self
            .acct
            .load_end()
            .cloned()
            .unwrap_or_else(|| self.load_snapshot(end));
        Ok(RunStats {
            duration: spec.duration,
            flows,
            total,
            cpu_ps: snap.cpu_ps,
            core_cpu_ps: snap.core_cpu_ps,
            core_ksoftirqd_ps: snap.core_ksoftirqd_ps,
            task_ps: snap.task_ps,
            core_cputime_ps: snap.core_cputime_ps,
            core_idle_state_ps: snap.core_idle_state_ps,
            interrupts: snap.interrupts,
            isr_packets: self.handlers.iter().map(|h| h.packets).sum(),
            interrupts_all: self.lines.iter().map(|l| l.passes).sum(),
            user_work: snap.user_work,
            counters: self.counters(end),
            timeline: self.acct.take_timeline(),
            events,
            end,
            sender: self.sender.as_ref().map(|snd| SenderStats {
                flow: snd.flow,
                payload_bytes: snd.payload_bytes,
                cpu_ps: snap.sender_ps,
            }),
        })
    }

    /// The load-period counters as of `now`.
    pub(super) fn load_snapshot(&self, now: SimTime) -> LoadSnapshot {
        let (mut cpu_ps, mut tag_ps) = self.cores.get(0).cpu().snapshot(now);
        let mut core_cpu_ps = Vec::new();
        let mut core_ksoftirqd_ps = Vec::new();
        let mut core_cputime_ps = vec![cputimes(&cpu_ps, &tag_ps)];
        if self.cores.count() > 1 {
            core_cpu_ps.push(cpu_ps);
            core_ksoftirqd_ps.push(tags_ps(&tag_ps, &TAGS_POLICY_THREADS));
            for k in self.cores.all().skip(1) {
                let (c, t) = k.cpu().snapshot(now);
                core_cpu_ps.push(c);
                core_ksoftirqd_ps.push(tags_ps(&t, &TAGS_POLICY_THREADS));
                core_cputime_ps.push(cputimes(&c, &t));
                cpu_ps.iter_mut().zip(c).for_each(|(a, b)| *a += b);
                tag_ps.iter_mut().zip(t).for_each(|(a, b)| *a += b);
            }
        }
        // The user process's time, in its own code and in its busy loop.
        let user_ps = tags_ps(&tag_ps, &[TAG_USER, TAG_USER_BUSY_POLL]);
        LoadSnapshot {
            cpu_ps,
            core_cpu_ps,
            core_ksoftirqd_ps,
            task_ps: [user_ps, tags_ps(&tag_ps, &TAGS_POLICY_THREADS)],
            core_cputime_ps,
            core_idle_state_ps: self
                .cores
                .all()
                .filter_map(|k| {
                    let names = k.cpu().idle()?.names().iter().cloned();
                    Some(names.zip(k.cpu().idle_residency_at(now)?).collect())
                })
                .collect(),
            interrupts: self.lines.iter().map(|l| l.passes).sum(),
            user_work: self.user_work_done(user_ps),
            sender_ps: tag_ps[TAG_SENDER as usize],
        }
    }

    /// Work done by the user process: CPU time / work unit (cpu-bound), or packets
    /// handled (screend).
    pub(super) fn user_work_done(&self, user_ps: u64) -> f64 {
        match self.user_unit_ns() {
            u if u > 0.0 => user_ps as f64 / 1e3 / u,
            _ => self.user_packets(),
        }
    }

    /// Frames inside the host: rings, queues, FIFOs, and those held by a running step.
    pub(super) fn packets_held(&self) -> usize {
        self.ports.iter().map(|p| p.held()).sum::<usize>()
            + self.cores.held()
            + self.handlers.iter().map(|h| h.held()).sum::<usize>()
            + self.rx_policies.held()
            + self.user.as_ref().map_or(0, |u| u.held())
    }
}
