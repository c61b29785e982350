//! The host's routing for [`crate::policy::napi`].

use crate::engine::Scheduler;
use crate::host::{Event, Host, Step, Task};
use crate::kernel::NET_RX;
use crate::policy::PolicyConfig;
use crate::policy::napi::*;
use crate::time::SimTime;

impl Host {
    /// napi_schedule: put `nic` on the poll list and raise NET_RX.
    pub(crate) fn napi_schedule(&mut self, nic: usize) {
        let Some(n) = &mut self.napi else { return };
        if !n.poll_list.contains(&nic) {
            n.poll_list.push_back(nic);
        }
        self.raise_net_rx();
    }

    fn raise_net_rx(&mut self) {
        let Some(n) = &mut self.napi else { return };
        n.raised = true;
        if n.ksoftirqd_awake {
            self.wake(Task::Ksoftirqd);
        } else {
            self.swi_raise(NET_RX);
        }
    }

    /// The softirq dispatcher reached the NET_RX bit: start a net_rx_action unless
    /// ksoftirqd has the job. Returns whether it started.
    pub(crate) fn net_rx_begin(&mut self, now: SimTime) -> bool {
        let Some(n) = &mut self.napi else {
            return false;
        };
        if n.ksoftirqd_awake || !n.raised {
            return false;
        }
        if n.restarts == 0 {
            n.softirq_start = now;
        }
        Self::net_rx_action_start(n, now);
        true
    }

    fn net_rx_action_start(n: &mut Napi, now: SimTime) {
        n.raised = false;
        n.softirq_runs += 1;
        n.budget_left = n.cfg.netdev_budget;
        n.t_end = now + SimTime::from_ns_f64(n.cfg.netdev_budget_usecs * 1e3);
        n.dev = None;
    }

    /// One step of net_rx_action in softirq context; at its end, __do_softirq's restart
    /// or hand-over to ksoftirqd.
    pub(crate) fn net_rx_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        match self.net_rx_action_step(now, s) {
            Step::Run(d) => Step::Run(d),
            _ => {
                let Some(n) = &mut self.napi else {
                    return Step::Done;
                };
                if n.raised {
                    let elapsed = now.saturating_sub(n.softirq_start);
                    n.restarts += 1;
                    if n.restarts < n.cfg.max_restart
                        && elapsed < SimTime::from_ns_f64(n.cfg.max_restart_ns)
                    {
                        // Restart at once (the dispatcher picks NET_RX again).
                        self.swi_raise(NET_RX);
                    } else {
                        n.restarts = 0;
                        n.ksoftirqd_awake = true;
                        n.ksoftirqd_wakeups += 1;
                        self.wake(Task::Ksoftirqd);
                    }
                } else {
                    n.restarts = 0;
                }
                Step::Done
            }
        }
    }

    /// ksoftirqd: run net_rx_action while NET_RX is raised; after a time slice, yield
    /// to other normal-priority tasks (cond_resched under a fair scheduler); sleep when
    /// nothing is pending.
    pub(crate) fn ksoftirqd_step(
        &mut self,
        now: SimTime,
        first: bool,
        s: &mut Scheduler<Event>,
    ) -> Step {
        let Some(n) = &mut self.napi else {
            return Step::Done;
        };
        if first {
            if !n.raised {
                n.ksoftirqd_awake = false;
                return Step::Done;
            }
            n.slice_start = now;
            Self::net_rx_action_start(n, now);
        }
        loop {
            match self.net_rx_action_step(now, s) {
                Step::Run(d) => return Step::Run(d),
                _ => {
                    let contended = self.user_level_contended();
                    let n = self.napi.as_mut().expect("napi");
                    if !n.raised {
                        n.ksoftirqd_awake = false;
                        return Step::Done;
                    }
                    if contended && now.saturating_sub(n.slice_start) >= n.timeslice {
                        return Step::Yield;
                    }
                    Self::net_rx_action_start(n, now);
                }
            }
        }
    }

    /// One frame or device switch of net_rx_action.
    fn net_rx_action_step(&mut self, now: SimTime, s: &mut Scheduler<Event>) -> Step {
        if let Some(p) = self.napi.as_mut().and_then(|n| n.current.take()) {
            self.forward(p, now, s);
        }
        loop {
            let n = self.napi.as_mut().expect("napi");
            let dev = match n.dev {
                Some(d) => d,
                None => {
                    if n.budget_left == 0 || now >= n.t_end {
                        if !n.poll_list.is_empty() {
                            n.time_squeeze += 1;
                            self.raise_net_rx();
                        }
                        return Step::Done;
                    }
                    let Some(&d) = n.poll_list.front() else {
                        return Step::Done;
                    };
                    n.dev = Some(d);
                    n.work = 0;
                    n.polls += 1;
                    return Step::Run(self.drivers[d].poll_call());
                }
            };
            let weight = match self.policies[dev] {
                PolicyConfig::Napi { weight } => weight,
                _ => unreachable!("only NAPI devices are on the poll list"),
            };
            if n.work < weight
                && n.budget_left > 0
                && let Some(p) = self.nics[dev].rx_ring.pop()
            {
                n.work += 1;
                n.budget_left -= 1;
                n.current = Some(p);
                let d = self.drivers[dev].rx(p.bytes) + self.netisr.forward_cost();
                return Step::Run(d);
            }
            // The poll of `dev` is over.
            n.dev = None;
            n.poll_list.pop_front();
            if n.work < weight && self.nics[dev].rx_ring.is_empty() {
                n.complete += 1;
                // napi_complete, then re-enable the interrupt and re-check the ring:
                // frames already there raise the interrupt again (irq_unmask), so none
                // is left waiting for a later frame's interrupt.
                self.irq_unmask(dev, now, s);
            } else {
                n.poll_list.push_back(dev);
            }
        }
    }

    /// Frames held by a NAPI poll step.
    pub(crate) fn napi_held(&self) -> usize {
        self.napi
            .as_ref()
            .map_or(0, |n| n.current.is_some() as usize)
    }
}
