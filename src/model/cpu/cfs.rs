//! Linux's Completely Fair Scheduler (CFS) for the normal-priority tasks of one core:
//! vruntime, wake-up preemption, sleeper placement and the tick's slice check, as
//! Linux 5.10 does them (kernel/sched/fair.c at v5.10, before EEVDF replaced CFS in
//! 6.6).
//!
//! The tasks a core runs at [`crate::model::cpu::Level::User`] (ksoftirqd, threaded-NAPI
//! kthreads, the user process, the sending application) are its CFS run queue. Each has
//! a virtual runtime, its CPU time at the User level (nice 0 for all: weight 1,024,
//! so one ns of CPU time is one ns of vruntime, `calc_delta_fair`); the core's
//! `min_vruntime` follows the smallest of the runnable ones and never goes back
//! (`update_min_vruntime`). CPU time is the level's only: the time interrupts and
//! softirqs take while the task holds the level is not its own, as with
//! CONFIG_IRQ_TIME_ACCOUNTING's `rq_clock_task` (`update_curr`). The rules:
//!
//! - **Pick** (`pick_next_entity`, `__pick_first_entity`): the runnable task with the
//!   smallest vruntime (ties in wake-up order). The buddies (`next`, `last`, `skip`)
//!   are not modelled.
//! - **Placement of a sleeper** (`place_entity` with `initial` 0, GENTLE_FAIR_SLEEPERS
//!   on by default, kernel/sched/features.h): a task that slept and wakes gets
//!   `max(its vruntime, min_vruntime - latency / 2)` (`- latency` without gentle
//!   sleepers): a sleep earns at most that much credit. A task never seen before is
//!   placed as one that slept long (tasks exist from boot).
//! - **Wake-up preemption** (`check_preempt_wakeup` -> `wakeup_preempt_entity`,
//!   `wakeup_gran`): the woken task preempts the running one when the running one's
//!   vruntime exceeds the woken one's by more than `wakeup_granularity` (strictly:
//!   `vdiff > gran`). Preemption sets need_resched; the running task leaves the CPU at
//!   its next preemption point (see below).
//! - **The tick** (`check_preempt_tick`, from `entity_tick` when more than one task is
//!   runnable): at each clock tick (`kernel.clock.hz`) the running task is rescheduled
//!   when it has run longer than its slice since it was picked (`delta_exec >
//!   ideal_runtime`), or, once it has run at least `min_granularity`, when its vruntime
//!   exceeds the leftmost waiting task's by more than the slice. The slice
//!   (`sched_slice`, `__sched_period`): the period, `latency` (or `nr x
//!   min_granularity` past `latency / min_granularity` runnable tasks), times the task's
//!   share of the load: `period / nr` with equal weights.
//!
//! The tunables (`sysctl_sched_latency` 6 ms, `sysctl_sched_min_granularity` 0.75 ms,
//! `sysctl_sched_wakeup_granularity` 1 ms) are scaled at boot by `update_sysctl` with
//! `get_update_sysctl_factor`: under the default SCHED_TUNABLESCALING_LOG by `1 +
//! ilog2(min(online CPUs, 8))` (x1 for one CPU, x3 for six, x4 for eight or more);
//! `none` leaves them, `linear` multiplies them by `min(online CPUs, 8)`.
//!
//! Preemption points are the tasks' own: a task holding the level checks
//! [`Cfs::need_resched`] where it would (ksoftirqd after each net_rx_action, as
//! `__do_softirq`'s `need_resched()` and `run_ksoftirqd`'s `cond_resched()`; a threaded
//! NAPI kthread after each poll; a user process between its steps, as a return to user
//! mode does), and yields; the tick's check is evaluated there for the last tick that
//! fell since the task was picked.
//!
//! Parameters ([`SchedulerConfig::Cfs`]): `latency_ns` (default 6,000,000),
//! `min_granularity_ns` (750,000), `wakeup_granularity_ns` (1,000,000), all before
//! scaling; `tunable_scaling` (`log`); `online_cpus` (default: the model's `cpu.cores`);
//! `gentle_fair_sleepers` (true). Counters: `sched.wakeup_preemptions` (wake-ups that
//! set need_resched), `sched.tick_preemptions` (tasks that left the CPU for the tick's
//! check), `sched.placed_sleepers` (wake-ups whose vruntime was raised to
//! `min_vruntime - latency / 2`).

use crate::model::cpu::task::Task;
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// How normal-priority tasks share a core (`kernel.scheduler`). Without it, round robin
/// by `kernel.timeslice_ns`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SchedulerConfig {
    /// Round robin by `kernel.timeslice_ns`: a task that has run a slice yields when
    /// another waits (4.4BSD's roundrobin(); the default).
    RoundRobin,
    /// Linux CFS (Linux 2.6.23 to 6.5; the rules of v5.10: see [`crate::model::cpu::cfs`]).
    Cfs {
        /// sysctl_sched_latency before scaling \[ns\] (default 6,000,000: 6 ms).
        #[serde(default = "d_latency")]
        #[schemars(range(min = 1.0, max = 1e9))]
        latency_ns: f64,
        /// sysctl_sched_min_granularity before scaling \[ns\] (default 750,000: 0.75
        /// ms).
        #[serde(default = "d_min_gran")]
        #[schemars(range(min = 1.0, max = 1e9))]
        min_granularity_ns: f64,
        /// sysctl_sched_wakeup_granularity before scaling \[ns\] (default 1,000,000: 1
        /// ms).
        #[serde(default = "d_wakeup_gran")]
        #[schemars(range(min = 0.0, max = 1e9))]
        wakeup_granularity_ns: f64,
        /// sysctl_sched_tunable_scaling: how the three grow with the CPUs (default
        /// `log`, SCHED_TUNABLESCALING_LOG).
        #[serde(default)]
        tunable_scaling: TunableScaling,
        /// CPUs online at boot, which the scaling counts (default: the model's
        /// `cpu.cores`; a host whose other CPUs the model leaves out says how many it
        /// has).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1, max = 4096))]
        online_cpus: Option<u16>,
        /// The GENTLE_FAIR_SLEEPERS feature: a sleeper's credit is half the latency
        /// (default true, kernel/sched/features.h).
        #[serde(default = "d_true")]
        gentle_fair_sleepers: bool,
    },
}

/// sysctl_sched_tunable_scaling.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum TunableScaling {
    /// SCHED_TUNABLESCALING_NONE: x1.
    None,
    /// SCHED_TUNABLESCALING_LOG: x(1 + ilog2(min(CPUs, 8))) (the default).
    #[default]
    Log,
    /// SCHED_TUNABLESCALING_LINEAR: x min(CPUs, 8).
    Linear,
}

fn d_latency() -> f64 {
    6_000_000.0
}
fn d_min_gran() -> f64 {
    750_000.0
}
fn d_wakeup_gran() -> f64 {
    1_000_000.0
}
fn d_true() -> bool {
    true
}

impl SchedulerConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        let SchedulerConfig::Cfs {
            latency_ns,
            min_granularity_ns,
            wakeup_granularity_ns,
            online_cpus,
            ..
        } = self
        else {
            return;
        };
        for (name, v, min) in [
            ("latency_ns", *latency_ns, 1.0),
            ("min_granularity_ns", *min_granularity_ns, 1.0),
            ("wakeup_granularity_ns", *wakeup_granularity_ns, 0.0),
        ] {
            if !(v.is_finite() && (min..=1e9).contains(&v)) {
                p.push(
                    name,
                    format!("must be {min} to 1,000,000,000 ns (the sysctl's range), got {v}"),
                );
            }
        }
        if let Some(n) = online_cpus
            && !(1..=4096).contains(n)
        {
            p.push("online_cpus", format!("must be 1 to 4096, got {n}"));
        }
    }

    /// The run-time parameters, for a host of `cores` cores whose clock ticks at `hz`;
    /// `None` for round robin.
    pub fn params(&self, cores: u16, hz: u32) -> Option<CfsParams> {
        let SchedulerConfig::Cfs {
            latency_ns,
            min_granularity_ns,
            wakeup_granularity_ns,
            tunable_scaling,
            online_cpus,
            gentle_fair_sleepers,
        } = self
        else {
            return None;
        };
        let factor = tunable_scaling.factor(online_cpus.unwrap_or(cores));
        let scaled = |ns: f64| SimTime::from_ns_f64(ns * factor as f64);
        Some(CfsParams {
            latency: scaled(*latency_ns),
            min_granularity: scaled(*min_granularity_ns),
            wakeup_granularity: scaled(*wakeup_granularity_ns),
            gentle_fair_sleepers: *gentle_fair_sleepers,
            tick: SimTime::from_ns_f64(1e9 / hz.max(1) as f64),
        })
    }
}

impl TunableScaling {
    /// get_update_sysctl_factor for `cpus` online CPUs.
    pub fn factor(self, cpus: u16) -> u32 {
        let cpus = (cpus as u32).clamp(1, 8);
        match self {
            TunableScaling::None => 1,
            TunableScaling::Log => 1 + cpus.ilog2(),
            TunableScaling::Linear => cpus,
        }
    }
}

/// CFS's tunables as the kernel uses them (scaled), and the tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CfsParams {
    /// sysctl_sched_latency, scaled.
    pub latency: SimTime,
    /// sysctl_sched_min_granularity, scaled.
    pub min_granularity: SimTime,
    /// sysctl_sched_wakeup_granularity, scaled.
    pub wakeup_granularity: SimTime,
    /// GENTLE_FAIR_SLEEPERS.
    pub gentle_fair_sleepers: bool,
    /// The scheduler tick, 1 / HZ.
    pub tick: SimTime,
}

impl CfsParams {
    /// sched_slice for one of `nr` runnable tasks of equal weight: `__sched_period(nr)
    /// / nr`.
    pub fn slice(&self, nr: usize) -> SimTime {
        let nr = nr.max(1) as u64;
        // sched_nr_latency: latency / min_granularity (8 with the defaults).
        let nr_latency = self.latency.0.div_ceil(self.min_granularity.0.max(1));
        let period = if nr > nr_latency {
            nr * self.min_granularity.0
        } else {
            self.latency.0
        };
        SimTime(period / nr)
    }
}

/// One task's scheduling entity.
#[derive(Clone, Copy, Debug)]
struct Entity {
    task: Task,
    /// Its virtual runtime \[ps\].
    vruntime: i64,
    /// Runnable (running or waiting), not asleep.
    on_rq: bool,
    /// Its CPU time at the User level \[ps\] (sum_exec_runtime).
    sum_exec: u64,
}

/// The CFS run queue of one core.
#[derive(Clone, Debug)]
pub struct Cfs {
    p: CfsParams,
    ents: Vec<Entity>,
    min_vruntime: i64,
    /// The running task's entity.
    curr: Option<usize>,
    /// The User level's CPU time when the running task's vruntime was last updated
    /// \[ps\] (exec_start).
    exec_start: u64,
    /// Its `sum_exec` when it was picked (prev_sum_exec_runtime).
    prev_sum: u64,
    /// When it was picked.
    picked_at: SimTime,
    /// need_resched set by a wake-up.
    resched: bool,
    /// Wake-ups that set need_resched -- counter.
    pub wakeup_preemptions: u64,
    /// Tasks that left the CPU for the tick's slice check -- counter.
    pub tick_preemptions: u64,
    /// Wake-ups whose vruntime was raised to `min_vruntime - latency / 2` -- counter.
    pub placed_sleepers: u64,
}

impl Cfs {
    /// An empty run queue.
    pub fn new(p: CfsParams) -> Cfs {
        Cfs {
            p,
            ents: Vec::new(),
            min_vruntime: 0,
            curr: None,
            exec_start: 0,
            prev_sum: 0,
            picked_at: SimTime::ZERO,
            resched: false,
            wakeup_preemptions: 0,
            tick_preemptions: 0,
            placed_sleepers: 0,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &CfsParams {
        &self.p
    }

    /// The entity of `task`, made on first sight (as a task that slept long).
    fn ent(&mut self, task: Task) -> usize {
        if let Some(i) = self.ents.iter().position(|e| e.task == task) {
            return i;
        }
        self.ents.push(Entity {
            task,
            vruntime: i64::MIN / 4,
            on_rq: false,
            sum_exec: 0,
        });
        self.ents.len() - 1
    }

    /// `task`'s vruntime \[ps\], if the queue has seen it.
    pub fn vruntime(&self, task: Task) -> Option<i64> {
        self.ents
            .iter()
            .find(|e| e.task == task)
            .map(|e| e.vruntime)
    }

    /// The core's min_vruntime \[ps\].
    pub fn min_vruntime(&self) -> i64 {
        self.min_vruntime
    }

    /// update_curr: the running task's CPU time up to `clock` (the User level's CPU
    /// time \[ps\]) added to its vruntime.
    fn update_curr(&mut self, clock: u64) {
        if let Some(c) = self.curr {
            let d = clock.saturating_sub(self.exec_start);
            self.exec_start = clock;
            self.ents[c].vruntime += d as i64;
            self.ents[c].sum_exec += d;
        }
        self.update_min_vruntime();
    }

    /// The leftmost waiting task (runnable, not running): its entity.
    fn leftmost(&self) -> Option<usize> {
        (0..self.ents.len())
            .filter(|&i| self.ents[i].on_rq && Some(i) != self.curr)
            .min_by_key(|&i| self.ents[i].vruntime)
    }

    /// update_min_vruntime: the smallest vruntime of the running task and the
    /// leftmost, never decreasing.
    fn update_min_vruntime(&mut self) {
        let curr = self.curr.filter(|&c| self.ents[c].on_rq);
        let left = self.leftmost().map(|i| self.ents[i].vruntime);
        let v = match (curr.map(|c| self.ents[c].vruntime), left) {
            (Some(c), Some(l)) => c.min(l),
            (Some(c), None) => c,
            (None, Some(l)) => l,
            (None, None) => return,
        };
        self.min_vruntime = self.min_vruntime.max(v);
    }

    /// `task` wakes at `clock` (the User level's CPU time \[ps\]); `slept`: it was
    /// neither running nor waiting (a wake-up of a runnable task changes nothing). Its
    /// placement (place_entity), then whether it preempts the running task
    /// (check_preempt_wakeup): need_resched is set when the running task's vruntime
    /// exceeds the woken one's by more than the wake-up granularity.
    pub fn wake(&mut self, task: Task, slept: bool, clock: u64) {
        if !slept {
            return;
        }
        self.update_curr(clock);
        let e = self.ent(task);
        if self.ents[e].on_rq {
            return;
        }
        let thresh = if self.p.gentle_fair_sleepers {
            self.p.latency.0 / 2
        } else {
            self.p.latency.0
        };
        let placed = self.min_vruntime - thresh as i64;
        if placed > self.ents[e].vruntime {
            self.ents[e].vruntime = placed;
            self.placed_sleepers += 1;
        }
        self.ents[e].on_rq = true;
        if let Some(c) = self.curr
            && c != e
            && !self.resched
        {
            let vdiff = self.ents[c].vruntime - self.ents[e].vruntime;
            if vdiff > self.p.wakeup_granularity.0 as i64 {
                self.resched = true;
                self.wakeup_preemptions += 1;
            }
        }
    }

    /// pick_next_entity among the `ready` tasks (the level's waiting tasks, in wake-up
    /// order): the one with the smallest vruntime.
    pub fn pick(&mut self, ready: impl Iterator<Item = Task>) -> Option<Task> {
        let mut best: Option<(i64, Task)> = None;
        for t in ready {
            let e = self.ent(t);
            self.ents[e].on_rq = true;
            let v = self.ents[e].vruntime;
            if best.is_none_or(|(bv, _)| v < bv) {
                best = Some((v, t));
            }
        }
        best.map(|(_, t)| t)
    }

    /// set_next_entity: `task` holds the CPU from `now`, the User level's CPU time
    /// being `clock` \[ps\].
    pub fn set_curr(&mut self, task: Task, clock: u64, now: SimTime) {
        self.update_curr(clock);
        let e = self.ent(task);
        self.ents[e].on_rq = true;
        self.curr = Some(e);
        self.exec_start = clock;
        self.prev_sum = self.ents[e].sum_exec;
        self.picked_at = now;
        self.resched = false;
        self.update_min_vruntime();
    }

    /// The running `task` leaves the CPU at `clock`: asleep (`slept`: dequeued, its
    /// vruntime kept for its placement when it wakes) or still runnable; `preempted`:
    /// it yielded at a preemption point (counted as the tick's unless a wake-up set
    /// need_resched).
    pub fn put(&mut self, task: Task, clock: u64, slept: bool, preempted: bool) {
        let Some(c) = self.curr.filter(|&c| self.ents[c].task == task) else {
            return;
        };
        self.update_curr(clock);
        if preempted && !self.resched {
            self.tick_preemptions += 1;
        }
        self.curr = None;
        self.resched = false;
        if slept {
            self.ents[c].on_rq = false;
        }
        self.update_min_vruntime();
    }

    /// Whether the running task should leave the CPU at `now` (its preemption point),
    /// the User level's CPU time being `clock` \[ps\]: a wake-up set need_resched, or
    /// at the last tick since it was picked (`check_preempt_tick`, only when another
    /// task is runnable) it had run more than its slice, or at least the minimum
    /// granularity with a vruntime more than a slice ahead of the leftmost waiting
    /// task's.
    pub fn need_resched(&self, now: SimTime, clock: u64) -> bool {
        let Some(c) = self.curr else {
            return false;
        };
        if self.resched {
            return true;
        }
        let waiting = (0..self.ents.len())
            .filter(|&i| self.ents[i].on_rq && i != c)
            .count();
        let Some(left) = self.leftmost() else {
            return false;
        };
        let tick = self.p.tick.0.max(1);
        let last_tick = now.0 / tick * tick;
        if last_tick <= self.picked_at.0 {
            return false;
        }
        // Its CPU time at the tick: what it has now less the time since (an
        // interrupt's time since then is not the task's anyway, so this is at most
        // the CPU time it had).
        let since_tick = now.0 - last_tick;
        let ran_now = clock.saturating_sub(self.exec_start);
        let delta_exec = (self.ents[c].sum_exec + ran_now)
            .saturating_sub(self.prev_sum)
            .saturating_sub(since_tick);
        let ideal = self.p.slice(waiting + 1).0;
        if delta_exec > ideal {
            return true;
        }
        if delta_exec < self.p.min_granularity.0 {
            return false;
        }
        let v_at_tick = self.ents[c].vruntime + ran_now as i64 - ran_now.min(since_tick) as i64;
        v_at_tick - self.ents[left].vruntime > ideal as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cpu::Level;

    const MS: u64 = 1_000_000_000; // ps

    fn app() -> Task {
        Task::UserProc
    }
    fn ksoftirqd() -> Task {
        Task::policy(1, 0, Level::User)
    }

    /// The v5.10 defaults on one CPU (factor 1): latency 6 ms, min granularity 0.75 ms,
    /// wake-up granularity 1 ms, HZ 1000.
    fn cfs() -> Cfs {
        let cfg: SchedulerConfig = serde_json::from_str(r#"{ "kind": "cfs" }"#).unwrap();
        Cfs::new(cfg.params(1, 1000).unwrap())
    }

    #[test]
    fn the_tunables_scale_with_one_plus_ilog2_of_the_online_cpus_up_to_eight() {
        // get_update_sysctl_factor: 1, 2, 2, 3 (4 to 7 CPUs), 4 (8 and more).
        let log = TunableScaling::Log;
        let f: Vec<u32> = [1, 2, 3, 4, 6, 7, 8, 24].map(|n| log.factor(n)).to_vec();
        assert_eq!(f, [1, 2, 2, 3, 3, 3, 4, 4]);
        assert_eq!(TunableScaling::None.factor(24), 1);
        assert_eq!(TunableScaling::Linear.factor(24), 8);
        let cfg: SchedulerConfig =
            serde_json::from_str(r#"{ "kind": "cfs", "online_cpus": 24 }"#).unwrap();
        let p = cfg.params(1, 1000).unwrap();
        assert_eq!(p.latency, SimTime(24 * MS));
        assert_eq!(p.min_granularity, SimTime(3 * MS));
        assert_eq!(p.wakeup_granularity, SimTime(4 * MS));
        // The default counts the model's own cores.
        let cfg: SchedulerConfig = serde_json::from_str(r#"{ "kind": "cfs" }"#).unwrap();
        assert_eq!(cfg.params(6, 1000).unwrap().latency, SimTime(18 * MS));
        assert_eq!(SchedulerConfig::RoundRobin.params(6, 1000), None);
    }

    #[test]
    fn the_slice_is_the_latency_shared_until_it_would_go_below_the_granularity() {
        // __sched_period: latency up to sched_nr_latency (6 / 0.75 = 8) tasks, then
        // nr x min_granularity; the slice is the period over nr (equal weights).
        let c = cfs();
        assert_eq!(c.params().slice(1), SimTime(6 * MS));
        assert_eq!(c.params().slice(2), SimTime(3 * MS));
        assert_eq!(c.params().slice(8), SimTime(750_000_000));
        assert_eq!(c.params().slice(12), SimTime(750_000_000));
    }

    #[test]
    fn a_woken_task_preempts_only_beyond_the_wakeup_granularity() {
        // Both start placed as long sleepers at min_vruntime - 3 ms; ksoftirqd runs.
        for (ran_ms_x4, preempts) in [(4, false), (5, true)] {
            let mut c = cfs();
            c.wake(ksoftirqd(), true, 0);
            c.wake(app(), true, 0);
            let t = c.pick([ksoftirqd()].into_iter()).unwrap();
            c.set_curr(t, 0, SimTime::ZERO);
            // The app runs, sleeps; ksoftirqd then runs on.
            c.put(t, 0, false, true);
            c.set_curr(app(), 0, SimTime::ZERO);
            c.put(app(), 0, true, false);
            c.set_curr(ksoftirqd(), 0, SimTime::ZERO);
            // ksoftirqd runs 1 ms (4 x 0.25 ms) or 1.25 ms: its vruntime is then ahead
            // of the app's by that much (both were placed at the same point).
            let clock = ran_ms_x4 * MS / 4;
            c.wake(app(), true, clock);
            let vdiff = c.vruntime(ksoftirqd()).unwrap() - c.vruntime(app()).unwrap();
            assert_eq!(vdiff, clock as i64);
            // vdiff > gran (1 ms) preempts; exactly 1 ms does not (wakeup_preempt_entity
            // returns 0 at vdiff == gran).
            assert_eq!(
                c.need_resched(SimTime(clock), clock),
                preempts,
                "{ran_ms_x4}"
            );
            assert_eq!(c.wakeup_preemptions, preempts as u64);
        }
    }

    /// Both tasks woken at 0; the app runs 1 ms and sleeps, ksoftirqd runs from then.
    fn app_slept_after_a_ms() -> Cfs {
        let mut c = cfs();
        c.wake(app(), true, 0);
        c.wake(ksoftirqd(), true, 0);
        c.set_curr(app(), 0, SimTime::ZERO);
        c.put(app(), MS, true, false);
        c.set_curr(ksoftirqd(), MS, SimTime(MS));
        c
    }

    #[test]
    fn a_sleeper_is_placed_at_most_half_a_latency_behind_min_vruntime() {
        // The app runs 1 ms and sleeps; ksoftirqd runs 10 ms.
        let mut c = app_slept_after_a_ms();
        let before = c.vruntime(app()).unwrap();
        c.wake(app(), true, 11 * MS);
        // min_vruntime is ksoftirqd's (the only runnable task): the app, 10 ms behind,
        // comes back 3 ms (latency 6 ms / 2) behind it.
        let kv = c.vruntime(ksoftirqd()).unwrap();
        assert_eq!(c.min_vruntime(), kv);
        assert_eq!(c.vruntime(app()).unwrap(), kv - 3 * MS as i64);
        assert!(c.vruntime(app()).unwrap() > before);
        assert_eq!(c.placed_sleepers, 3); // the two first wake-ups and this one
        // 3 ms ahead > 1 ms: it preempts.
        assert!(c.need_resched(SimTime(11 * MS), 11 * MS));
        // A short sleep keeps its own vruntime: no credit beyond what it had.
        let mut c = app_slept_after_a_ms();
        let v = c.vruntime(app()).unwrap();
        c.wake(app(), true, MS + MS / 2);
        assert_eq!(c.vruntime(app()).unwrap(), v);
        // Without gentle sleepers the credit is the whole latency.
        let cfg: SchedulerConfig =
            serde_json::from_str(r#"{ "kind": "cfs", "gentle_fair_sleepers": false }"#).unwrap();
        let mut c = Cfs::new(cfg.params(1, 1000).unwrap());
        c.wake(ksoftirqd(), true, 0);
        c.set_curr(ksoftirqd(), 0, SimTime::ZERO);
        c.wake(app(), true, 20 * MS);
        assert_eq!(
            c.vruntime(ksoftirqd()).unwrap() - c.vruntime(app()).unwrap(),
            6 * MS as i64
        );
    }

    #[test]
    fn the_tick_reschedules_after_a_slice_and_not_before_the_granularity() {
        // Two runnable tasks with equal vruntime: the slice is 3 ms. ksoftirqd, picked
        // at 0.5 ms, is rescheduled at the first tick after it has run more than 3 ms:
        // at the 4 ms tick it has run 3.5 ms.
        let mut c = cfs();
        c.wake(ksoftirqd(), true, 0);
        c.wake(app(), true, 0);
        c.set_curr(ksoftirqd(), 0, SimTime(MS / 2));
        // Before any tick since it was picked: no.
        assert!(!c.need_resched(SimTime(MS - 1), MS / 2 - 1));
        // At 3.9 ms: the last tick (3 ms) saw 2.5 ms of running; the vruntime lead
        // over the app (2.5 ms) is within the slice: no.
        assert!(!c.need_resched(SimTime(3_900 * MS / 1000), 3_400 * MS / 1000));
        // At 4.1 ms: the 4 ms tick saw 3.5 ms > 3 ms: yes.
        assert!(c.need_resched(SimTime(4_100 * MS / 1000), 3_600 * MS / 1000));
        c.put(ksoftirqd(), 3_600 * MS / 1000, false, true);
        assert_eq!(c.tick_preemptions, 1);
        // The app, leftmost, is picked next.
        assert_eq!(c.pick([ksoftirqd(), app()].into_iter()), Some(app()));
        // Alone, nothing reschedules it.
        let mut c = cfs();
        c.wake(ksoftirqd(), true, 0);
        c.set_curr(ksoftirqd(), 0, SimTime::ZERO);
        assert!(!c.need_resched(SimTime(100 * MS), 100 * MS));
    }

    #[test]
    fn the_tick_reschedules_a_task_far_ahead_once_it_has_run_the_granularity() {
        // ksoftirqd, picked again with a lead of 2.5 ms over the waiting app, is
        // rescheduled by a tick only once it has run min_granularity (0.75 ms) since
        // that pick with a lead above the slice (3 ms).
        let mut c = cfs();
        c.wake(app(), true, 0);
        c.wake(ksoftirqd(), true, 0);
        c.set_curr(app(), 0, SimTime::ZERO);
        c.put(app(), 0, false, true);
        c.set_curr(ksoftirqd(), 0, SimTime::ZERO);
        // Run 2.5 ms; the app has waited (on_rq) at vruntime 0.
        c.put(ksoftirqd(), 2_500 * MS / 1000, false, true);
        c.set_curr(ksoftirqd(), 2_500 * MS / 1000, SimTime(2_500 * MS / 1000));
        // Picked again at 2.5 ms with a lead of 2.5 ms; at the 3 ms tick it has run
        // 0.5 ms (< 0.75 ms): no; at the 4 ms tick 1.5 ms, lead 4 ms > 3 ms: yes.
        assert!(!c.need_resched(SimTime(3_100 * MS / 1000), 3_100 * MS / 1000));
        assert!(c.need_resched(SimTime(4_100 * MS / 1000), 4_100 * MS / 1000));
    }
}
