//! The NET_RX softirq (net_rx_action) and ksoftirqd: devices scheduled per core, polled
//! in turn within the budget, the repoll list, the restarts, and the completion that
//! unmasks a device.

use super::*;

impl Napi {
    /// napi_schedule on the current core (from the receive interrupt, or the hrtimer):
    /// wake the device's thread, or put it on the core's poll list and raise NET_RX.
    pub fn schedule(&mut self, dev: usize, env: &mut (impl StackEnv + SchedEnv)) {
        let c = env.core();
        self.schedule_on(c, dev, env);
    }

    pub(super) fn schedule_on(&mut self, c: usize, dev: usize, env: &mut (impl StackEnv + SchedEnv)) {
        let d = &mut self.devs[dev];
        if d.scheduled {
            return;
        }
        d.scheduled = true;
        if d.threaded {
            env.wake_on(c, self.napi_thread(dev));
        } else {
            self.cores[c].poll_list.push_back(dev);
            self.raise(c, env);
        }
    }

    /// raise_softirq(NET_RX) on core `c`: to its ksoftirqd while it is awake, else to
    /// the core's dispatcher.
    pub(super) fn raise(&mut self, c: usize, env: &mut (impl StackEnv + SchedEnv)) {
        self.cores[c].raised = true;
        if self.cores[c].ksoftirqd_awake {
            env.wake_on(c, self.ksoftirqd(c));
        } else {
            env.raise_softirq_on(c, NET_RX);
        }
    }

    /// The softirq dispatcher of the current core reached the NET_RX bit: start a
    /// net_rx_action unless ksoftirqd has the job. Returns whether it started.
    pub fn softirq_begin(&mut self, env: &mut impl RxEnv) -> bool {
        let now = env.now();
        let sn = &mut self.cores[env.core()];
        if sn.ksoftirqd_awake || !sn.raised {
            return false;
        }
        if sn.restarts == 0 {
            sn.softirq_start = now;
        }
        self.action_start(env.core(), now);
        true
    }

    pub(super) fn action_start(&mut self, c: usize, now: SimTime) {
        self.softirq_runs += 1;
        let sn = &mut self.cores[c];
        sn.raised = false;
        sn.budget_left = self.cfg.netdev_budget as i64;
        if self.cfg.net_rx_action == RxAction::Spliced {
            sn.list = std::mem::take(&mut sn.poll_list);
        }
        sn.t_end = now + SimTime::from_ns_f64(self.cfg.netdev_budget_usecs * 1e3);
        sn.dev = None;
    }

    /// One step of net_rx_action in softirq context; at its end, __do_softirq's restart
    /// or hand-over to ksoftirqd.
    pub fn softirq_step(&mut self, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        let c = env.core();
        if let Step::Run(d) = self.action_step(c, env) {
            return Step::Run(d);
        }
        let sn = &mut self.cores[c];
        if sn.raised {
            let elapsed = now.saturating_sub(sn.softirq_start);
            sn.restarts += 1;
            if sn.restarts < self.cfg.max_restart
                && elapsed < SimTime::from_ns_f64(self.cfg.max_restart_ns)
            {
                // Restart at once (the dispatcher picks NET_RX again).
                env.raise_softirq_on(c, NET_RX);
            } else {
                sn.restarts = 0;
                sn.ksoftirqd_awake = true;
                self.ksoftirqd_wakeups += 1;
                env.wake_on(c, self.ksoftirqd(c));
            }
        } else {
            sn.restarts = 0;
        }
        Step::Done
    }

    /// ksoftirqd of the current core: run net_rx_action while NET_RX is raised; after a
    /// time slice, yield to other normal-priority tasks (cond_resched under a fair
    /// scheduler); sleep when nothing is pending.
    pub fn ksoftirqd_step(&mut self, first: bool, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        let c = env.core();
        if first {
            if !self.cores[c].raised {
                self.cores[c].ksoftirqd_awake = false;
                return Step::Done;
            }
            self.cores[c].slice_start = now;
            self.action_start(c, now);
        }
        loop {
            if let Step::Run(d) = self.action_step(c, env) {
                return Step::Run(d);
            }
            if !self.cores[c].raised {
                self.cores[c].ksoftirqd_awake = false;
                return Step::Done;
            }
            if env.user_level_contended()
                && now.saturating_sub(self.cores[c].slice_start) >= self.timeslice
            {
                return Step::Yield;
            }
            self.action_start(c, now);
        }
    }

    /// One frame or device switch of core `c`'s net_rx_action. A poll takes up to the
    /// device's whole weight whatever is left of the budget (`n->poll(n, weight)`), so
    /// the budget can go below zero. [`RxAction::LiveList`] (Linux 2.6-3.19): before
    /// each poll, a spent budget or time ends the run (`time_squeeze` if devices are
    /// left) and re-raises NET_RX; a device that used its weight goes to the tail of the
    /// live list and may be polled again in this run. [`RxAction::Spliced`] (Linux 4.0
    /// on): the run polls the devices that were on the list when it started, each once;
    /// after each poll a spent budget or time ends it (`time_squeeze`); devices that
    /// used their weight (repoll) and devices scheduled meanwhile wait for the next run.
    pub(super) fn action_step(&mut self, c: usize, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        if let Some(h) = self.cores[c].current.take() {
            self.deliver(h, env);
        }
        let spliced = self.cfg.net_rx_action == RxAction::Spliced;
        loop {
            let sn = &mut self.cores[c];
            let dev = match sn.dev {
                Some(d) => d,
                None => {
                    let list = if spliced { &sn.list } else { &sn.poll_list };
                    if !spliced && (sn.budget_left <= 0 || now >= sn.t_end) {
                        if !sn.poll_list.is_empty() {
                            sn.time_squeeze += 1;
                            self.raise(c, env);
                        }
                        return Step::Done;
                    }
                    let Some(&d) = list.front() else {
                        if spliced {
                            self.action_end(c, env);
                        }
                        return Step::Done;
                    };
                    sn.dev = Some(d);
                    sn.work = 0;
                    self.polls += 1;
                    if d < self.nics {
                        return Step::Run(self.poll_begin(d, env));
                    }
                    // process_backlog: no driver call to pay for.
                    continue;
                }
            };
            let weight = self.devs[dev].weight;
            debug_assert!(weight > 0, "only NAPI devices are on the poll list");
            if sn.work < weight
                && let Some((h, d)) = self.take(c, dev, env)
            {
                let sn = &mut self.cores[c];
                sn.work += 1;
                sn.budget_left -= 1;
                sn.current = Some(h);
                return Step::Run(d);
            }
            // The poll of `dev` is over.
            let sn = &mut self.cores[c];
            let work = sn.work;
            sn.dev = None;
            if spliced {
                sn.list.pop_front();
            } else {
                sn.poll_list.pop_front();
            }
            let done = if dev < self.nics {
                self.poll_done(work, weight, dev, env)
            } else {
                work < weight && self.dev_empty(c, dev, env)
            };
            if done {
                self.complete(dev, work, env);
            } else if self.devs[dev].prefer_busy_poll {
                // __napi_poll: more work, but busy polling is preferred: exit early.
                self.prefer_yields += 1;
                if self.napi_complete_done(dev, work, env) {
                    self.schedule_on(c, dev, env);
                }
            } else if spliced {
                self.cores[c].repoll.push_back(dev);
            } else {
                self.cores[c].poll_list.push_back(dev);
            }
            let sn = &mut self.cores[c];
            if spliced && (sn.budget_left <= 0 || now >= sn.t_end) {
                sn.time_squeeze += 1;
                self.action_end(c, env);
                return Step::Done;
            }
        }
    }

    /// The end of a spliced net_rx_action on core `c`: the devices left unpolled, then
    /// those scheduled during the run, then those that used their weight, make the
    /// poll list; NET_RX is raised again if it is not empty.
    pub(super) fn action_end(&mut self, c: usize, env: &mut (impl StackEnv + SchedEnv)) {
        let sn = &mut self.cores[c];
        let mut list = std::mem::take(&mut sn.list);
        list.append(&mut sn.poll_list);
        list.append(&mut sn.repoll);
        sn.poll_list = list;
        if !sn.poll_list.is_empty() {
            self.raise(c, env);
        }
    }

    /// Whether `dev` has nothing left to poll (core `c`'s backlog when it is one).
    pub(super) fn dev_empty(&self, c: usize, dev: usize, env: &impl RingEnv) -> bool {
        if dev < self.nics {
            env.rx_empty(dev)
        } else {
            debug_assert_eq!(dev - self.nics, c, "a backlog is polled by its core");
            self.cores[c].backlog.is_empty()
        }
    }

    /// Take the next frame of `dev` on core `c`, and the CPU time of handling it: the
    /// driver's receive work and, without RPS, the protocol path; with RPS, the
    /// steering; for a backlog, the protocol path.
    ///
    /// A frame that goes up the protocol path here counts in core `c`'s `processed`,
    /// which Linux bumps in __netif_receive_skb_core, on the core that runs it. With
    /// RPS, netif_receive_skb sends every frame get_rps_cpu places, on this core too,
    /// to enqueue_to_backlog instead: the frame counts once, when its target's
    /// process_backlog takes it (and not at all if that backlog drops it).
    pub(super) fn take(&mut self, c: usize, dev: usize, env: &mut (impl RingEnv + CostEnv + StackEnv)) -> Option<(Held, SimTime)> {
        if dev >= self.nics {
            let p = self.cores[c].backlog.pop_front()?;
            self.cores[c].processed += 1;
            let h = Held {
                p,
                to: None,
                xdp: None,
            };
            return Some((h, env.forward_cost()));
        }
        let p = env.rx_pop(dev)?;
        // The XDP program first, on the frame as the ring holds it.
        let mut program = SimTime::ZERO;
        if let Some(x) = &mut self.devs[dev].xdp {
            program = env.kernel_cost(&x.program);
            match x.action {
                XdpAction::Drop | XdpAction::Redirect | XdpAction::Tx | XdpAction::Xsk => {
                    let rx = env.kernel_cost(&x.rx);
                    match x.action {
                        XdpAction::Drop => x.drop += 1,
                        XdpAction::Redirect | XdpAction::Xsk => x.redirect += 1,
                        _ => x.tx += 1,
                    }
                    let h = Held {
                        p,
                        to: None,
                        xdp: Some(x.action),
                    };
                    return Some((h, rx + program));
                }
                XdpAction::Pass => x.pass += 1,
            }
        }
        let rx = env.rx_cost(dev, p.bytes) + program;
        let rps = &self.devs[dev].rps;
        if rps.is_empty() {
            self.cores[c].processed += 1;
            let h = Held {
                p,
                to: None,
                xdp: None,
            };
            return Some((h, rx + env.forward_cost()));
        }
        // get_rps_cpu: reciprocal_scale(skb->hash, map->len).
        let k = ((env.flow_hash(&p) as u64 * rps.len() as u64) >> 32) as usize;
        let to = Some(rps[k]);
        self.rps_steered += 1;
        let h = Held { p, to, xdp: None };
        Some((h, rx + env.kernel_cost(&self.rps_cost)))
    }

    /// The end of a frame's step: up the protocol path (the output interface), or
    /// enqueue_to_backlog of the core RPS chose, scheduling its backlog if it was idle.
    pub(super) fn deliver(&mut self, h: Held, env: &mut (impl StackEnv + SchedEnv)) {
        match h.xdp {
            Some(XdpAction::Drop) => return env.xdp_drop(h.p),
            // ndo_xdp_xmit on the output port's queue for this core.
            Some(XdpAction::Redirect) => return env.xdp_redirect(h.p),
            // The receiving channel's own transmit queue.
            Some(XdpAction::Tx) => return env.xdp_tx(h.p),
            // __xsk_map_redirect: into the AF_XDP socket's RX ring.
            Some(XdpAction::Xsk) => return env.xsk_rcv(h.p),
            Some(XdpAction::Pass) | None => {}
        }
        let Some(t) = h.to else {
            env.forward(h.p);
            return;
        };
        let t = t as usize;
        let sn = &mut self.cores[t];
        if sn.backlog.len() >= self.cfg.netdev_max_backlog as usize {
            sn.dropped += 1;
            env.backlog_drop(h.p);
            return;
        }
        sn.backlog.push_back(h.p);
        let dev = self.nics + t;
        if !self.devs[dev].scheduled {
            if t != env.core() {
                self.cores[t].received_rps += 1;
            }
            self.schedule_on(t, dev, env);
        }
    }

    /// napi_complete_done for `dev` after a poll that took `work` frames: off its list
    /// (a backlog: that is all), then the interrupt re-enabled -- or, while hard
    /// interrupts are deferred, the hrtimer armed instead.
    pub(super) fn complete(&mut self, dev: usize, work: u32, env: &mut impl SchedEnv) {
        if !self.napi_complete_done(dev, work, env) {
            return;
        }
        // The driver's DIM sample, then re-enable the interrupt and re-check the ring:
        // frames already there raise the interrupt again (irq_unmask), so none is left
        // waiting for a later frame's interrupt.
        let d = &mut self.devs[dev];
        if let Some(ch) = &mut d.channel {
            ch.arm += 1;
        }
        env.poll_completed(dev);
        env.irq_unmask(dev);
    }

    /// napi_complete_done (net/core/dev.c, Linux 5.11) for `dev` after a poll that took
    /// `work` frames: off its list, NAPI_STATE_PREFER_BUSY_POLL cleared; for a NIC, the
    /// deferral count reset by a poll that found work, and while it is above zero,
    /// decremented with the hrtimer armed for `gro_flush_timeout` instead of the
    /// interrupt. Returns whether the driver may re-enable the interrupt (false for a
    /// backlog, which has none).
    pub(super) fn napi_complete_done(&mut self, dev: usize, work: u32, env: &mut impl SchedEnv) -> bool {
        self.complete += 1;
        let d = &mut self.devs[dev];
        d.scheduled = false;
        d.prefer_busy_poll = false;
        if dev >= self.nics {
            return false;
        }
        if work > 0 {
            d.defer_count = d.defer_hard_irqs;
        }
        if d.defer_count > 0 {
            d.defer_count -= 1;
            if d.gro_flush_timeout > SimTime::ZERO {
                self.deferred_irqs += 1;
                self.arm_timer(dev, env);
                return false;
            }
        }
        true
    }
}
