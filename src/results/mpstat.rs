//! CPU time as `mpstat -P ALL` shows it: the per-core and total rows of a point.

use super::*;

/// CPU time as `mpstat -P ALL` (and `top`) shows it on a Linux host, during the
/// sending period: the categories the kernel accounts (kernel/sched/cputime.c), mapped
/// from the model's levels and tasks as [`crate::model::cpu::cputime`] says (a DPDK
/// lcore is `%usr`, ksoftirqd `%soft`, a threaded NAPI kthread and a process
/// busy-polling in a system call `%sys`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MpstatResult {
    /// All cores together, mpstat's `all` row (each core's time counts once).
    pub all: MpstatRow,
    /// Each core, in core order (mpstat's rows `0`, `1`, ...), also with one core.
    pub cores: Vec<MpstatRow>,
}

/// One row of mpstat [% of the time; the five sum to 100].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MpstatRow {
    /// `%usr`: user mode (user processes, DPDK lcores).
    pub usr: f64,
    /// `%sys`: kernel mode outside interrupts and softirqs (kernel threads, threaded
    /// NAPI, socket busy polling in recv() or epoll_wait(), the sending application).
    pub sys: f64,
    /// `%irq`: hardware interrupt handlers (and the clock interrupt).
    pub irq: f64,
    /// `%soft`: softirqs, on interrupt exit or in ksoftirqd.
    pub soft: f64,
    /// `%idle`: nothing to run, all idle states together.
    pub idle: f64,
    /// Time in each idle state [% of the time], by state name, summing to `idle`
    /// (cpuidle's `/sys/devices/system/cpu/cpuN/cpuidle/stateK/time`), with idle
    /// states (`cpu.idle`; absent without): `idle` split in the proportions of the
    /// states' residencies up to the end of the sending period (the exit latencies are
    /// idle time booked to no state, so they are shared out alike).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub idle_states: BTreeMap<String, f64>,
}

impl MpstatRow {
    /// The row of `t` \[ps\], in % of its total time (all 0 when it has none).
    pub fn of(t: &crate::model::cpu::cputime::CpuTimes) -> MpstatRow {
        let total = t.total_ps();
        let pct = |ps: u64| {
            if total > 0 {
                100.0 * ps as f64 / total as f64
            } else {
                0.0
            }
        };
        MpstatRow {
            usr: pct(t.usr_ps),
            sys: pct(t.sys_ps),
            irq: pct(t.irq_ps),
            soft: pct(t.soft_ps),
            idle: pct(t.idle_ps),
            idle_states: BTreeMap::new(),
        }
    }
}

impl MpstatRow {
    /// `idle` split by idle state in the proportions of `residency_ps` (by state name).
    fn split_idle(&mut self, residency_ps: &[(String, u64)]) {
        let total: u64 = residency_ps.iter().map(|(_, t)| t).sum();
        for (name, t) in residency_ps {
            let share = if total > 0 {
                self.idle * *t as f64 / total as f64
            } else {
                0.0
            };
            self.idle_states.insert(name.clone(), share);
        }
    }
}

impl MpstatResult {
    /// The rows of each core's times \[ps\] (`cores`, in core order) and of their sum,
    /// with the idle time split by each core's idle-state residencies `idle_states`
    /// (empty without idle states).
    pub fn of(
        cores: &[crate::model::cpu::cputime::CpuTimes],
        idle_states: &[Vec<(String, u64)>],
    ) -> MpstatResult {
        let mut all = crate::model::cpu::cputime::CpuTimes::default();
        cores.iter().for_each(|c| all.add(c));
        let mut r = MpstatResult {
            all: MpstatRow::of(&all),
            cores: cores.iter().map(MpstatRow::of).collect(),
        };
        if idle_states.len() == cores.len() && !idle_states.is_empty() {
            let mut sum: Vec<(String, u64)> = idle_states[0].clone();
            for core in &idle_states[1..] {
                for (s, (_, t)) in sum.iter_mut().zip(core) {
                    s.1 += t;
                }
            }
            r.all.split_idle(&sum);
            for (row, res) in r.cores.iter_mut().zip(idle_states) {
                row.split_idle(res);
            }
        }
        r
    }
}
