//! FreeBSD DEVICE_POLLING (Rizzo, kern_poll.c; FreeBSD 4.x-6.x).
//!
//! Device interrupts are off. At every hardclock tick (`hz` per second)
//! `hardclock_device_poll` schedules the NETISR_POLL and NETISR_POLLMORE software
//! interrupts. `netisr_poll` calls every polling driver's poll routine for at most
//! `each_burst` frames (each frame: `rx_per_packet`, then ether_input into ipintrq);
//! the IP netisr then forwards them; `netisr_pollmore` schedules another round while
//! the tick's budget `poll_burst` is not used up. At the end of a tick's work it measures
//! the kernel time since the tick's first poll and adapts: if it exceeded
//! `(100 - user_frac)` % of the tick, `poll_burst` goes down by one, else up by one (to
//! `burst_max`). So at most about `(100 - user_frac)` % of the CPU goes to the network
//! and the rest stays with user processes. One tick in `reg_frac` polls with
//! POLL_AND_CHECK_STATUS: in that tick's first round each poll call also reads the
//! status register (the driver's `poll_status_check` cost; counter `status_checks`). With `idle_poll` the idle
//! loop polls as well (`poll_in_idle_loop`), using CPU nobody else wants.
//!
//! Parameters ([`PollingConfig`], `kernel.polling`) with kern_poll.c's defaults: `hz`
//! 1000, `burst_start` (poll_burst at the start of a run; default `burst_max`, see the
//! field), `burst_max` 150,
//! `each_burst` 5,
//! `user_frac` 50 [%], `reg_frac` 20 \[ticks\], `idle_poll` false. Invariant (checked):
//! 1 <= each_burst <= burst_max, 10 <= burst_max <= 1000.
//!
//! Counters (as sysctl kern.polling.*): `ticks`, `polls` (poll-routine calls),
//! `poll_burst` (final value), `lost_polls`, `suspect`, `stalled`, `pending_polls`,
//! `idle_polls`, and `status_checks` (poll calls with POLL_AND_CHECK_STATUS).

use crate::model::cpu::Level;
use crate::model::packet::Packet;
use crate::model::policy::env::{RxEnv, SchedEnv, StackEnv};
use crate::model::policy::interrupt::HandlerMode;
use crate::model::policy::{BuildCtx, PolicyConfig, RxPolicy};
use crate::sim::problems::Problems;
use crate::model::kernel::softirq::{NETISR_POLL, NETISR_POLLMORE};
use crate::model::cpu::task::{PolicyTask, Step, Task};
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A polled NIC's own parameters (`"kind": "freebsd-polling"`): none, kern_poll's are
/// system-wide (`kernel.polling`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PollingParams {}

impl PollingParams {
    /// Range checks (nothing to check).
    pub fn validate(&self, _p: &mut Problems) {}
}

/// kern.polling.* parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PollingConfig {
    /// Clock interrupts per second [1/s] (default 1000); must equal `kernel.clock.hz`
    /// when the clock interrupt is simulated (polling runs from hardclock, at HZ).
    #[serde(default = "d_hz")]
    pub hz: u32,
    /// poll_burst when the run starts \[frames\] (default: burst_max. kern_poll.c boots
    /// with 5 and adds one per tick while the kernel is under its share, so an idle
    /// system reaches burst_max within burst_max ticks, before any test traffic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_start: Option<u32>,
    /// Largest poll_burst [frames per tick] (default 150).
    #[serde(default = "d_burst_max")]
    pub burst_max: u32,
    /// Frames per poll-routine call \[frames\] (default 5).
    #[serde(default = "d_each")]
    pub each_burst: u32,
    /// CPU share reserved for user processes [%] (default 50).
    #[serde(default = "d_user_frac")]
    pub user_frac: u32,
    /// Ticks between status-register checks \[ticks\] (default 20).
    #[serde(default = "d_reg_frac")]
    pub reg_frac: u32,
    /// Also poll from the idle loop (default false).
    #[serde(default)]
    pub idle_poll: bool,
}

fn d_hz() -> u32 {
    1000
}
fn d_each() -> u32 {
    5
}
fn d_burst_max() -> u32 {
    150
}
fn d_user_frac() -> u32 {
    50
}
fn d_reg_frac() -> u32 {
    20
}

impl Default for PollingConfig {
    fn default() -> Self {
        PollingConfig {
            hz: d_hz(),
            burst_start: None,
            burst_max: d_burst_max(),
            each_burst: d_each(),
            user_frac: d_user_frac(),
            reg_frac: d_reg_frac(),
            idle_poll: false,
        }
    }
}

impl PollingConfig {
    /// Range checks (kern_poll.c rejects what it would otherwise clamp).
    pub fn validate(&self, p: &mut Problems) {
        if !(1..=100_000).contains(&self.hz) {
            p.push("hz", format!("must be 1 to 100000, got {}", self.hz));
        }
        if !(10..=1000).contains(&self.burst_max) {
            p.push(
                "burst_max",
                format!(
                    "must be 10 to 1000 (MIN/MAX_POLL_BURST_MAX), got {}",
                    self.burst_max
                ),
            );
        }
        if self.each_burst < 1 || self.each_burst > self.burst_max {
            p.push(
                "each_burst",
                format!(
                    "must be 1 to burst_max ({}), got {}",
                    self.burst_max, self.each_burst
                ),
            );
        }
        if let Some(b) = self.burst_start
            && (b < 1 || b > self.burst_max)
        {
            p.push(
                "burst_start",
                format!("must be 1 to burst_max ({}), got {b}", self.burst_max),
            );
        }
        if self.user_frac > 99 {
            p.push(
                "user_frac",
                format!("must be 0 to 99 %, got {}", self.user_frac),
            );
        }
        if self.reg_frac < 1 || self.reg_frac > self.hz.max(1) {
            p.push(
                "reg_frac",
                format!("must be 1 to hz ({}), got {}", self.hz, self.reg_frac),
            );
        }
    }
}

/// Where the poll handler is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PollStage {
    /// About to call the poll routine of `nics[idx]`.
    Call,
    /// Taking frames: `left` more allowed.
    Frames,
}

/// DEVICE_POLLING state (kern_poll.c's globals).
#[derive(Clone, Debug)]
pub struct Polling {
    cfg: PollingConfig,
    /// Clock period.
    pub tick: SimTime,
    /// Polling NICs, in registration order.
    nics: Vec<usize>,
    /// Frames per tick the kernel currently allows.
    poll_burst: u32,
    residual_burst: u32,
    reg_frac_count: u32,
    /// This round's poll calls read the status register (POLL_AND_CHECK_STATUS).
    check_status: bool,
    pending_polls: u32,
    phase: u32,
    poll_start: SimTime,
    /// Whether the idle loop polls.
    pub idle_poll: bool,
    /// Registry index (for its task).
    kind: u8,
    // Current call.
    idx: usize,
    cycles: u32,
    left: u32,
    stage: PollStage,
    current: Option<Packet>,
    idle_current: Option<(usize, u32, Option<Packet>)>,
    ticks: u64,
    polls: u64,
    lost_polls: u64,
    suspect: u64,
    stalled: u64,
    idle_polls: u64,
    status_checks: u64,
}

impl Polling {
    /// State from kern.polling.* parameters and the polling NICs (in registration order).
    pub fn new(cfg: &PollingConfig, nics: Vec<usize>) -> Polling {
        Polling {
            cfg: cfg.clone(),
            tick: SimTime::from_ns_f64(1e9 / cfg.hz as f64),
            nics,
            poll_burst: cfg.burst_start.unwrap_or(cfg.burst_max),
            residual_burst: 0,
            reg_frac_count: 0,
            check_status: false,
            pending_polls: 0,
            phase: 0,
            poll_start: SimTime::ZERO,
            idle_poll: cfg.idle_poll,
            kind: 0,
            idx: 0,
            cycles: 0,
            left: 0,
            stage: PollStage::Call,
            current: None,
            idle_current: None,
            ticks: 0,
            polls: 0,
            lost_polls: 0,
            suspect: 0,
            stalled: 0,
            idle_polls: 0,
            status_checks: 0,
        }
    }

    /// Frames held by a poll step (netisr_poll's or the idle loop's).
    pub fn held(&self) -> usize {
        self.current.is_some() as usize
            + self.idle_current.is_some_and(|(_, _, c)| c.is_some()) as usize
    }

    /// A frame arrived on a polling NIC (its interrupt is off): only the idle loop may
    /// notice it before the next tick.
    pub fn rx_arrived(&mut self, env: &mut impl SchedEnv) {
        if self.idle_poll {
            env.wake(self.idle_task());
        }
    }

    /// The idle loop's polling task (poll_in_idle_loop, at the idle level).
    pub fn idle_task(&self) -> Task {
        Task::policy(self.kind, 0, Level::IdleLoop)
    }

    /// hardclock_device_poll, at every tick.
    pub fn hardclock(&mut self, env: &mut impl StackEnv) {
        self.ticks += 1;
        if self.pending_polls > 100 {
            // Too much: assume it has stalled.
            self.stalled += 1;
            self.pending_polls = 0;
            self.phase = 0;
        }
        let mut raise = false;
        if self.phase <= 2 {
            if self.phase != 0 {
                self.suspect += 1;
            }
            self.phase = 1;
            raise = true;
            self.phase = 2;
        }
        if self.pending_polls > 0 {
            self.lost_polls += 1;
        }
        self.pending_polls += 1;
        if raise {
            env.raise_softirq(NETISR_POLL | NETISR_POLLMORE);
        }
    }

    /// netisr_poll: set up one round of poll-routine calls.
    pub fn netisr_poll_begin(&mut self, now: SimTime) {
        self.phase = 3;
        // kern_poll.c's `arg`: POLL_ONLY unless this first round of a tick is the one in
        // reg_frac that checks the status registers.
        self.check_status = false;
        if self.residual_burst == 0 {
            // First call in this tick.
            self.poll_start = now;
            if self.reg_frac_count == 0 {
                self.reg_frac_count = self.cfg.reg_frac - 1; // POLL_AND_CHECK_STATUS this time
                self.check_status = true;
            } else {
                self.reg_frac_count -= 1;
            }
            self.residual_burst = self.poll_burst;
        }
        self.cycles = self.residual_burst.min(self.cfg.each_burst);
        self.residual_burst -= self.cycles;
        self.idx = 0;
        self.stage = PollStage::Call;
    }

    /// One step of netisr_poll: a poll-routine call, or one frame (into ipintrq).
    pub fn netisr_poll_step(&mut self, env: &mut impl RxEnv) -> Step {
        if let Some(pk) = self.current.take() {
            env.ipintrq_enqueue(pk);
        }
        loop {
            if self.idx >= self.nics.len() {
                self.phase = 4;
                return Step::Done;
            }
            let nic = self.nics[self.idx];
            match self.stage {
                PollStage::Call => {
                    self.stage = PollStage::Frames;
                    self.left = self.cycles;
                    self.polls += 1;
                    let mut d = env.poll_call_cost(nic);
                    if self.check_status {
                        self.status_checks += 1;
                        d += env.status_check_cost(nic);
                    }
                    return Step::Run(d);
                }
                PollStage::Frames => {
                    if self.left > 0
                        && let Some(pk) = env.rx_pop(nic)
                    {
                        self.left -= 1;
                        self.current = Some(pk);
                        return Step::Run(env.rx_cost(nic, pk.bytes));
                    }
                    self.idx += 1;
                    self.stage = PollStage::Call;
                }
            }
        }
    }

    /// netisr_pollmore: another round, or adapt poll_burst at the end of the tick's work.
    pub fn netisr_pollmore(&mut self, env: &mut (impl StackEnv + SchedEnv)) {
        self.phase = 5;
        if self.residual_burst > 0 {
            env.raise_softirq(NETISR_POLL | NETISR_POLLMORE);
            return;
        }
        let kern_us = env.now().saturating_sub(self.poll_start).as_us_f64();
        let kern_load = kern_us * self.cfg.hz as f64 / 10_000.0; // % of a tick
        if kern_load > (100 - self.cfg.user_frac) as f64 {
            if self.poll_burst > 1 {
                self.poll_burst -= 1;
            }
        } else if self.poll_burst < self.cfg.burst_max {
            self.poll_burst += 1;
        }
        self.pending_polls = self.pending_polls.saturating_sub(1);
        if self.pending_polls == 0 {
            self.phase = 0;
        } else {
            // The last cycle was long and missed ticks: restart, with a smaller burst.
            self.poll_burst -= self.poll_burst / 8;
            self.poll_burst = self.poll_burst.max(1);
            self.phase = 6;
            env.raise_softirq(NETISR_POLL | NETISR_POLLMORE);
        }
    }

    /// poll_idle: the idle loop polls each NIC for `each_burst` frames.
    pub fn idle_step(&mut self, env: &mut impl RxEnv) -> Step {
        if let Some((nic, left, cur)) = self.idle_current.take() {
            if let Some(pk) = cur {
                env.ipintrq_enqueue(pk);
            }
            if left > 0
                && let Some(pk) = env.rx_pop(nic)
            {
                self.idle_current = Some((nic, left - 1, Some(pk)));
                return Step::Run(env.rx_cost(nic, pk.bytes));
            }
        }
        match self.nics.iter().copied().find(|n| !env.rx_empty(*n)) {
            Some(nic) => {
                self.idle_polls += 1;
                self.idle_current = Some((nic, self.cfg.each_burst, None));
                Step::Run(env.poll_call_cost(nic))
            }
            None => Step::Done,
        }
    }

    /// Publish the counters.
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        for (k, v) in [
            ("ticks", self.ticks),
            ("polls", self.polls),
            ("poll_burst", self.poll_burst as u64),
            ("lost_polls", self.lost_polls),
            ("suspect", self.suspect),
            ("stalled", self.stalled),
            ("pending_polls", self.pending_polls as u64),
            ("idle_polls", self.idle_polls),
            ("status_checks", self.status_checks),
        ] {
            c.insert(format!("polling.{k}"), v as f64);
        }
    }
}

impl RxPolicy for Polling {
    const HANDLER: HandlerMode = HandlerMode::Nothing;
    const SWI_BITS: u32 = NETISR_POLL | NETISR_POLLMORE;
    // Polling runs from hardclock, which preempts interrupt handlers.
    const PREEMPTS_HANDLERS: bool = true;

    fn serves(p: &PolicyConfig) -> bool {
        matches!(p, PolicyConfig::FreebsdPolling(_))
    }
    fn build(ctx: &BuildCtx<'_>) -> Option<Self> {
        let nics: Vec<usize> = ctx.nics_of::<Self>().map(|(i, _)| i).collect();
        if nics.is_empty() {
            return None;
        }
        let mut p = Polling::new(&ctx.kernel.polling, nics);
        p.kind = ctx.kind;
        Some(p)
    }
    /// FreeBSD polls from hardclock (hardclock_device_poll), at HZ: with the clock
    /// interrupt simulated, the poll ticks are its ticks.
    fn validate_model(ctx: &BuildCtx<'_>, p: &mut Problems) {
        let polling = ctx.nics_of::<Self>().next().is_some();
        let clock = &ctx.kernel.clock;
        if polling
            && clock.hardclock.mean_ns(ctx.clock_mhz) > 0.0
            && ctx.kernel.polling.hz != clock.hz
        {
            p.push(
                "kernel.polling.hz",
                format!(
                    "must equal kernel.clock.hz ({}) when the clock interrupt is simulated: \
                     FreeBSD polls from hardclock, at HZ; got {}",
                    clock.hz, ctx.kernel.polling.hz
                ),
            );
        }
    }
    fn held(&self) -> usize {
        Polling::held(self)
    }
    fn counters(&self, _nic_names: &[String], c: &mut BTreeMap<String, f64>) {
        Polling::counters(self, c)
    }
    fn task_name(_task: PolicyTask, _nic_names: &[String]) -> String {
        "poll_in_idle_loop".into()
    }
    fn rx_arrived(&mut self, _nic: usize, env: &mut impl SchedEnv) {
        Polling::rx_arrived(self, env)
    }
    fn step(&mut self, _task: PolicyTask, _first: bool, env: &mut impl RxEnv) -> Step {
        self.idle_step(env)
    }
    fn first_timer(&self) -> Option<SimTime> {
        Some(self.tick)
    }
    fn timer(&mut self, env: &mut impl StackEnv) -> Option<SimTime> {
        self.hardclock(env);
        Some(self.tick)
    }
    fn start(&mut self, env: &mut impl SchedEnv) {
        if self.idle_poll {
            env.wake(self.idle_task());
        }
    }
    fn swi_begin(&mut self, bit: u32, env: &mut (impl StackEnv + SchedEnv)) -> bool {
        if bit == NETISR_POLL {
            self.netisr_poll_begin(env.now());
            true
        } else {
            // NETISR_POLLMORE: no CPU time of its own.
            self.netisr_pollmore(env);
            false
        }
    }
    fn swi_step(&mut self, _bit: u32, env: &mut impl RxEnv) -> Step {
        self.netisr_poll_step(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policy::env::mock::{Script, Signal, ns};

    fn polling(each_burst: u32, burst_max: u32, nics: Vec<usize>) -> Polling {
        let cfg = PollingConfig {
            each_burst,
            burst_max,
            ..PollingConfig::default()
        };
        Polling::new(&cfg, nics)
    }

    /// One netisr_poll round: the steps' lengths.
    fn round(p: &mut Polling, env: &mut Script) -> Vec<SimTime> {
        p.netisr_poll_begin(env.now);
        let mut runs = Vec::new();
        while let Step::Run(d) = p.netisr_poll_step(env) {
            runs.push(d);
        }
        runs
    }

    #[test]
    fn a_tick_schedules_rounds_of_each_burst_frames_per_nic_until_poll_burst_is_used() {
        // poll_burst 10 (burst_max), each_burst 5: two rounds per tick.
        let mut env = Script::new(&[12, 3]);
        let mut p = polling(5, 10, vec![0, 1]);
        p.hardclock(&mut env);
        assert_eq!(
            env.take_log(),
            vec![Signal::Raise(NETISR_POLL | NETISR_POLLMORE)]
        );
        // Round 1, first of the tick and of reg_frac: each call also checks status
        // (the mock's status check is 0.3 us). NIC 0: call + 5 frames; NIC 1: call + 3.
        let runs = round(&mut p, &mut env);
        assert_eq!(runs.len(), 10);
        assert_eq!((runs[0], runs[1]), (ns(800), ns(1_000)));
        assert_eq!(p.status_checks, 2);
        // Frames go to ipintrq (the IP netisr forwards them later).
        let log = env.take_log();
        assert_eq!(log.len(), 8);
        assert!(log.iter().all(|s| matches!(s, Signal::Ipintrq(_))));
        // pollmore: budget left (10 - 5), so another round is raised.
        p.netisr_pollmore(&mut env);
        assert_eq!(
            env.take_log(),
            vec![Signal::Raise(NETISR_POLL | NETISR_POLLMORE)]
        );
        let runs = round(&mut p, &mut env);
        assert_eq!((runs.len(), runs[0]), (7, ns(500)));
        assert_eq!((env.rings[0].len(), env.take_log().len()), (2, 5));
        // Budget used: pollmore ends the tick's work and adapts poll_burst.
        p.netisr_pollmore(&mut env);
        assert!(env.take_log().is_empty());
        assert_eq!(p.pending_polls, 0);
    }

    #[test]
    fn poll_burst_shrinks_when_the_kernel_takes_more_than_its_share_of_a_tick() {
        let mut env = Script::new(&[100]);
        let mut p = polling(5, 10, vec![0]);
        p.hardclock(&mut env);
        p.netisr_poll_begin(env.now);
        // The tick's work took 0.9 ms of a 1 ms tick: more than 100 - user_frac (50) %.
        p.residual_burst = 0;
        env.now = SimTime::from_ns_f64(900_000.0);
        p.netisr_pollmore(&mut env);
        assert_eq!(p.poll_burst, 9);
        // A short one (0.1 ms): it grows back, up to burst_max.
        p.hardclock(&mut env);
        env.now = SimTime::from_ns_f64(1_000_000.0);
        p.netisr_poll_begin(env.now);
        p.residual_burst = 0;
        env.now = SimTime::from_ns_f64(1_100_000.0);
        p.netisr_pollmore(&mut env);
        assert_eq!(p.poll_burst, 10);
    }

    #[test]
    fn a_tick_while_the_last_is_still_pending_counts_a_lost_poll() {
        let mut env = Script::new(&[0]);
        let mut p = polling(5, 10, vec![0]);
        p.hardclock(&mut env);
        p.hardclock(&mut env);
        assert_eq!((p.ticks, p.lost_polls, p.pending_polls), (2, 1, 2));
    }
}
