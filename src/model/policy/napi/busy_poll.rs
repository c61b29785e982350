//! Busy polling from a process: napi_busy_loop in recv() and epoll_wait(), with
//! SO_PREFER_BUSY_POLL, its budget, and IRQ suspension at the end of an epoll loop.

use super::*;

impl Napi {
    /// The end of a busy loop in epoll_wait() (ep_busy_loop, fs/eventpoll.c, Linux
    /// 6.13) of a process with SO_PREFER_BUSY_POLL, on `dev`: events found,
    /// napi_suspend_irqs arms the hrtimer for `irq_suspend_timeout`; none (the loop
    /// timed out), napi_resume_irqs schedules the device. Nothing when the device has
    /// no `irq_suspend_timeout`.
    pub(super) fn epoll_busy_loop_end(&mut self, dev: usize, opts: SocketBusyPoll, env: &mut impl RxEnv) {
        let t = self.devs[dev].irq_suspend_timeout;
        if !(opts.epoll && opts.prefer_busy_poll) || t == SimTime::ZERO {
            return;
        }
        if env.socket_ready() {
            self.irq_suspends += 1;
            self.arm_timer_for(dev, t, env);
        } else {
            self.irq_resumes += 1;
            let c = env.core();
            self.schedule_on(c, dev, env);
        }
    }

    /// One step of a process's busy loop on NIC `dev` (napi_busy_loop with
    /// sk_busy_loop_end, net/core/dev.c; `start`: recv() found the socket empty and
    /// begins the loop, which ends at `deadline`; `opts`: the socket's
    /// SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET). Each round: if the device is idle,
    /// take it (SCHED and IN_BUSY_POLL: its interrupt, if it fires, can no longer
    /// schedule it) and poll it for up to the budget's frames, which go up the stack to
    /// the socket; a poll that empties the ring does not complete the device
    /// (napi_complete_done refuses in busy poll); if the softirq or a thread has the
    /// device, just spin -- marking it NAPI_STATE_PREFER_BUSY_POLL when the socket
    /// prefers busy polling, so that their next full-weight poll lets it go. The loop
    /// ends when the socket has a packet or the deadline passes; busy_poll_stop then
    /// polls once more and completes the device (re-enabling its interrupt unless
    /// deferred) or, if that poll used its whole budget, hands it to the softirq of the
    /// current core. With SO_PREFER_BUSY_POLL and both `defer_hard_irqs` and
    /// `gro_flush_timeout_ns` set, busy_poll_stop first resets the deferral count and
    /// arms the hrtimer, and a full last poll leaves the device idle with its interrupt
    /// masked (`skip_schedule`, Linux 5.11): the timer is the safety net. Returns
    /// `Done` when the loop is over.
    pub fn busy_step(
        &mut self,
        dev: usize,
        start: bool,
        deadline: SimTime,
        opts: SocketBusyPoll,
        env: &mut impl RxEnv,
    ) -> Step {
        let now = env.now();
        if start {
            self.prefer_used |= opts.prefer_busy_poll;
            self.busy = Some(BusyLoop {
                dev,
                deadline,
                owned: false,
                polling: false,
                work: 0,
                stopping: false,
                skip_schedule: false,
                opts,
                current: None,
            });
        }
        let Some(mut b) = self.busy.take() else {
            return Step::Done;
        };
        if let Some(h) = b.current.take() {
            self.deliver(h, env);
        }
        let c = env.core();
        let budget = b.opts.budget;
        if b.polling || b.stopping {
            if b.work < budget
                && let Some((h, d)) = self.take(c, b.dev, env)
            {
                b.work += 1;
                b.current = Some(h);
                self.busy_packets += 1;
                self.busy = Some(b);
                return Step::Run(d);
            }
            b.polling = false;
            if b.stopping {
                // busy_poll_stop: the driver's napi_complete_done now counts.
                if self.poll_done(b.work, budget, b.dev, env) {
                    self.complete(b.dev, b.work, env);
                } else if b.skip_schedule {
                    // __busy_poll_stop with skip_schedule: NAPI_STATE_SCHED cleared,
                    // the interrupt left masked, the hrtimer armed.
                    self.devs[b.dev].scheduled = false;
                } else {
                    self.devs[b.dev].scheduled = false;
                    self.schedule_on(c, b.dev, env);
                }
                self.epoll_busy_loop_end(b.dev, b.opts, env);
                return Step::Done;
            }
        }
        // napi_busy_loop polls before it asks sk_busy_loop_end / ep_busy_loop_end: the
        // first round always runs, so a zero window (epoll_wait() with
        // SO_PREFER_BUSY_POLL and busy_poll_usecs 0) is one poll.
        if !start && (env.socket_ready() || now >= b.deadline) {
            if !b.owned {
                self.epoll_busy_loop_end(b.dev, b.opts, env);
                return Step::Done;
            }
            b.stopping = true;
            b.work = 0;
            let d = &mut self.devs[b.dev];
            if b.opts.prefer_busy_poll {
                d.defer_count = d.defer_hard_irqs;
                if d.defer_count > 0 && d.gro_flush_timeout > SimTime::ZERO {
                    self.arm_timer(b.dev, env);
                    b.skip_schedule = true;
                }
            }
            let call = self.poll_begin(b.dev, env);
            self.busy = Some(b);
            return Step::Run(call);
        }
        if !b.owned {
            let d = &mut self.devs[b.dev];
            if d.scheduled {
                d.prefer_busy_poll |= b.opts.prefer_busy_poll;
            } else {
                d.scheduled = true;
                b.owned = true;
            }
        }
        let round = env.kernel_cost(&self.busy_loop_cost);
        if b.owned {
            b.polling = true;
            b.work = 0;
            self.busy_polls += 1;
            let call = self.poll_begin(b.dev, env);
            self.busy = Some(b);
            return Step::Run(round + call);
        }
        self.busy = Some(b);
        Step::Run(round)
    }
}
