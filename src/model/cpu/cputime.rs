//! CPU time as a Linux kernel accounts it: the categories of `/proc/stat` that
//! `mpstat` (`%usr`, `%sys`, `%irq`, `%soft`, `%idle`) and `top` (`us`, `sy`, `hi`, `si`,
//! `id`) print.
//!
//! The model charges time to priority levels ([`Level`]) and, within a level, to burst
//! tags that tell its tasks apart; this module says which category of
//! `enum cpu_usage_stat` (include/linux/kernel_stat.h) the kernel books each to, as
//! kernel/sched/cputime.c does it with `CONFIG_IRQ_TIME_ACCOUNTING=y` (the distributions'
//! kernels; the model's time is exact, as irq time accounting's is, where tick sampling
//! gives the same shares on average):
//!
//! | the model's time | category | where the kernel decides |
//! |---|---|---|
//! | `Clock`, `HardIrq` (interrupt handlers) | `%irq` | `irqtime_account_irq`: `hardirq_count()` -> `CPUTIME_IRQ` |
//! | `SoftIrq`, `SoftClock` (softirqs run on interrupt exit or `local_bh_enable`) | `%soft` | `irqtime_account_irq`: `in_serving_softirq()` and not ksoftirqd -> `CPUTIME_SOFTIRQ` |
//! | ksoftirqd running softirqs (a `User`-level task) | `%soft` | `irqtime_account_process_tick`: `this_cpu_ksoftirqd() == p` -> `account_system_index_time(p, cputime, CPUTIME_SOFTIRQ)` (`irqtime_account_irq` leaves its softirq time to the thread); without irq time accounting `account_system_time`'s `in_serving_softirq()` |
//! | a threaded NAPI kthread (`napi/<dev>`) | `%sys` | its poll runs under `local_bh_disable()` (net/core/dev.c `napi_threaded_poll_loop`), which adds `SOFTIRQ_DISABLE_OFFSET`, not `SOFTIRQ_OFFSET`: not `in_serving_softirq()`, so `irqtime_account_process_tick`'s last branch, `CPUTIME_SYSTEM` |
//! | a process busy-polling in `recv()` or `epoll_wait()` (`busy_read`, `busy_poll`) | `%sys` | `napi_busy_loop` polls from the system call, in process context under `local_bh_disable()` (net/core/dev.c `__napi_busy_loop`): kernel mode, not serving a softirq, `CPUTIME_SYSTEM` |
//! | `Kernel` (kernel threads above user priority), `IdleLoop` | `%sys` | a kernel thread's time, `CPUTIME_SYSTEM` (`IdleLoop` is FreeBSD's `poll_in_idle_loop`, which no Linux host has: counted as the kernel work it is) |
//! | the sending application (`Sender`: the TCP send path) | `%sys` | kernel mode, `CPUTIME_SYSTEM` |
//! | a user process's own work (`cpu-bound`, `screend`'s per-packet cost), a DPDK lcore | `%usr` | `irqtime_account_process_tick`: `user_tick` -> `account_user_time`, `CPUTIME_USER` (an lcore polls its queues from user space, with no system call) |
//! | nothing to run | `%idle` | `account_idle_time` (the idle task) |
//!
//! A `screend` process's per-packet cost is one figure: the part that is its system
//! calls (recvmsg, sendmsg) is not told apart from its own code, and all of it counts
//! as `%usr`. `%nice`, `%iowait`, `%steal` and the guest categories are 0 in the model.
//! `%idle` is the total idle time: its split by idle state (cpuidle's
//! `stateN/time`) is for the idle-state model to fill ([`CpuTimes::idle_ps`]).

use crate::model::cpu::{LEVELS, Level};

/// A category of CPU time in `/proc/stat` (`enum cpu_usage_stat`), as mpstat names it;
/// idle time is not a task's, and has no variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuTime {
    /// `%usr`: `CPUTIME_USER`, user mode.
    Usr,
    /// `%sys`: `CPUTIME_SYSTEM`, kernel mode outside interrupts and softirqs.
    Sys,
    /// `%irq`: `CPUTIME_IRQ`, hardware interrupts.
    Irq,
    /// `%soft`: `CPUTIME_SOFTIRQ`, softirqs, also those ksoftirqd runs.
    Soft,
}

impl CpuTime {
    /// The category of a level's time (the table of the module's doc). The `User`
    /// level is a user process's: a task of that level that the kernel accounts
    /// otherwise (ksoftirqd, a kernel thread at normal priority, a process in a system
    /// call) is told apart by its burst tag.
    pub const fn of_level(level: Level) -> CpuTime {
        match level {
            Level::Clock | Level::HardIrq => CpuTime::Irq,
            Level::SoftIrq | Level::SoftClock => CpuTime::Soft,
            Level::Kernel | Level::IdleLoop => CpuTime::Sys,
            Level::User => CpuTime::Usr,
        }
    }
}

/// CPU time by category, of one core or summed over cores \[ps\] -- counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// `%usr` time \[ps\].
    pub usr_ps: u64,
    /// `%sys` time \[ps\].
    pub sys_ps: u64,
    /// `%irq` time \[ps\].
    pub irq_ps: u64,
    /// `%soft` time \[ps\].
    pub soft_ps: u64,
    /// `%idle` time, all idle states together \[ps\] (a split by idle state goes beside
    /// it with idle states: results' `mpstat.*.idle_states`).
    pub idle_ps: u64,
}

impl CpuTimes {
    /// The split of `level_ps` (time per level, then idle, as [`crate::model::cpu::Cpu`]
    /// counts it), where `user_level` gives the parts of the `User` level's time that
    /// the kernel books to another category than `%usr` (by the burst tags of the tasks
    /// concerned); the rest of that level is `%usr`.
    pub fn split(level_ps: &[u64; LEVELS + 1], user_level: &[(CpuTime, u64)]) -> CpuTimes {
        let mut t = CpuTimes {
            idle_ps: level_ps[LEVELS],
            ..CpuTimes::default()
        };
        for l in Level::ALL {
            if l != Level::User {
                *t.get_mut(CpuTime::of_level(l)) += level_ps[l as usize];
            }
        }
        let mut usr = level_ps[Level::User as usize];
        for &(c, ps) in user_level {
            if c != CpuTime::Usr {
                debug_assert!(ps <= usr, "a task's time is part of its level's");
                let ps = ps.min(usr);
                usr -= ps;
                *t.get_mut(c) += ps;
            }
        }
        t.usr_ps += usr;
        t
    }

    /// The counter of category `c`.
    fn get_mut(&mut self, c: CpuTime) -> &mut u64 {
        match c {
            CpuTime::Usr => &mut self.usr_ps,
            CpuTime::Sys => &mut self.sys_ps,
            CpuTime::Irq => &mut self.irq_ps,
            CpuTime::Soft => &mut self.soft_ps,
        }
    }

    /// Add another core's times.
    pub fn add(&mut self, o: &CpuTimes) {
        self.usr_ps += o.usr_ps;
        self.sys_ps += o.sys_ps;
        self.irq_ps += o.irq_ps;
        self.soft_ps += o.soft_ps;
        self.idle_ps += o.idle_ps;
    }

    /// All the time counted \[ps\].
    pub fn total_ps(&self) -> u64 {
        self.usr_ps + self.sys_ps + self.irq_ps + self.soft_ps + self.idle_ps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_is_booked_where_kernel_sched_cputime_books_it() {
        // The table of the module's doc, level by level.
        let want = [
            (Level::Clock, CpuTime::Irq),
            (Level::HardIrq, CpuTime::Irq),
            (Level::SoftIrq, CpuTime::Soft),
            (Level::SoftClock, CpuTime::Soft),
            (Level::Kernel, CpuTime::Sys),
            (Level::User, CpuTime::Usr),
            (Level::IdleLoop, CpuTime::Sys),
        ];
        assert_eq!(want.len(), LEVELS);
        for (l, c) in want {
            assert_eq!(CpuTime::of_level(l), c, "{l:?}");
        }
    }

    #[test]
    fn the_user_levels_time_is_split_by_its_tasks() {
        // 1 to 8 ps per level (Clock .. IdleLoop), idle 100 ps; of the User level's 6 ps,
        // 1 is ksoftirqd's (%soft) and 2 a kernel thread's (%sys): %usr keeps 3.
        let mut level_ps = [0u64; LEVELS + 1];
        for (k, v) in level_ps.iter_mut().enumerate().take(LEVELS) {
            *v = k as u64 + 1;
        }
        level_ps[LEVELS] = 100;
        let t = CpuTimes::split(
            &level_ps,
            &[
                (CpuTime::Soft, 1),
                (CpuTime::Sys, 2),
                (CpuTime::Usr, 3), // already %usr: nothing moves
            ],
        );
        assert_eq!(
            t,
            CpuTimes {
                usr_ps: 6 - 1 - 2,
                sys_ps: 5 + 7 + 2,
                irq_ps: 1 + 2,
                soft_ps: 3 + 4 + 1,
                idle_ps: 100,
            }
        );
        // Nothing is lost or counted twice.
        assert_eq!(t.total_ps(), level_ps.iter().sum::<u64>());
        let mut two = t;
        two.add(&t);
        assert_eq!(two.total_ps(), 2 * t.total_ps());
        assert_eq!(two.sys_ps, 28);
    }

    #[test]
    fn a_dpdk_lcore_is_user_time_and_ksoftirqd_softirq_time() {
        // One core whose whole time is the User level: as an lcore (%usr, nothing to
        // move) it is 100 % usr; as ksoftirqd, 100 % soft; as a NAPI kthread, 100 % sys.
        let mut level_ps = [0u64; LEVELS + 1];
        level_ps[Level::User as usize] = 1_000;
        let lcore = CpuTimes::split(&level_ps, &[(CpuTime::Usr, 1_000)]);
        assert_eq!((lcore.usr_ps, lcore.soft_ps), (1_000, 0));
        let ksoftirqd = CpuTimes::split(&level_ps, &[(CpuTime::Soft, 1_000)]);
        assert_eq!((ksoftirqd.usr_ps, ksoftirqd.soft_ps), (0, 1_000));
        let kthread = CpuTimes::split(&level_ps, &[(CpuTime::Sys, 1_000)]);
        assert_eq!((kthread.usr_ps, kthread.sys_ps), (0, 1_000));
    }
}
