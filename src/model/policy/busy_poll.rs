//! Busy polling (a kernel loop, run to completion frame by frame; a DPDK poll-mode
//! driver with bursts and per-core lcores is `dpdk.rs`): a loop that owns the CPU and polls the
//! rings of its NICs round robin, with their interrupts off.
//!
//! Each frame found costs `rx_per_packet` + `netisr_per_packet` (received and forwarded
//! in the loop); a pass that finds every ring empty costs `empty_poll`. The loop never
//! sleeps: the CPU is never idle, and since it runs at kernel-thread priority, user
//! processes get nothing on a single CPU -- the price of the lowest latency.
//!
//! Parameters (in each NIC's `policy`; one loop polls them all, so every busy-poll NIC
//! must give the same value, which validation checks): `empty_poll` (default 100 ns;
//! must be > 0).
//!
//! Counters: `busy_poll.empty_polls`.

use crate::model::cost::{Cost, CostParam};
use crate::model::cpu::Level;
use crate::model::packet::Packet;
use crate::model::policy::env::{RxEnv, SchedEnv};
use crate::model::policy::interrupt::HandlerMode;
use crate::model::policy::{BuildCtx, PolicyConfig, RxPolicy};
use crate::sim::problems::Problems;
use crate::model::cpu::task::{PolicyTask, Step, Task};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A busy-polled NIC's own parameters (`"kind": "busy-poll"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BusyPollParams {
    /// Cost of one pass over the rings that finds nothing (default 100 ns); the same
    /// for every busy-poll NIC (one loop polls them all).
    #[serde(default = "d_empty_poll")]
    pub empty_poll: CostParam,
}

fn d_empty_poll() -> CostParam {
    CostParam::ns(100.0)
}

impl BusyPollParams {
    /// Range checks (its lower bound depends on the CPU clock: `validate_model`).
    pub fn validate(&self, p: &mut Problems) {
        if let Err(e) = self.empty_poll.check() {
            p.push("empty_poll", e);
        }
    }
}

/// Busy-poll loop state.
#[derive(Clone, Debug)]
pub struct BusyPoll {
    empty: Cost,
    /// Which NICs (by index) the loop polls.
    polled: Vec<bool>,
    /// The NIC the next pass starts at.
    next: usize,
    /// The frame being processed.
    current: Option<Packet>,
    /// Passes that found nothing -- counter.
    pub empty_polls: u64,
    /// Registry index (for the loop's task).
    kind: u8,
}

impl BusyPoll {
    /// The loop polling the NICs marked in `polled` (one entry per NIC of the host),
    /// with the cost of an empty pass.
    pub fn new(empty: Cost, polled: Vec<bool>) -> BusyPoll {
        BusyPoll {
            empty,
            polled,
            next: 0,
            current: None,
            empty_polls: 0,
            kind: 0,
        }
    }

    /// Frames held by the loop (the one being processed).
    pub fn held(&self) -> usize {
        self.current.is_some() as usize
    }

    /// One step of the loop: forward the frame just processed, then take the next
    /// frame from the next polled ring that has one (round robin, starting after the
    /// NIC served last), or spend an empty pass.
    pub fn step(&mut self, env: &mut impl RxEnv) -> Step {
        if let Some(p) = self.current.take() {
            env.forward(p);
        }
        let n = self.polled.len();
        for k in 0..n {
            let nic = (self.next + k) % n;
            if !self.polled[nic] {
                continue;
            }
            if let Some(p) = env.rx_pop(nic) {
                let d = env.rx_cost(nic, p.bytes) + env.forward_cost();
                self.next = (nic + 1) % n;
                self.current = Some(p);
                return Step::Run(d);
            }
        }
        self.empty_polls += 1;
        Step::Run(env.kernel_cost(&self.empty))
    }
}

impl RxPolicy for BusyPoll {
    const HANDLER: HandlerMode = HandlerMode::Nothing;
    fn serves(p: &PolicyConfig) -> bool {
        matches!(p, PolicyConfig::BusyPoll(_))
    }
    fn build(ctx: &BuildCtx<'_>) -> Option<Self> {
        let empty = ctx.nics.iter().find_map(|p| match p {
            PolicyConfig::BusyPoll(b) => Some(b.empty_poll.build(ctx.clock_mhz)),
            _ => None,
        })?;
        let polled = ctx.nics.iter().map(Self::serves).collect();
        let mut b = BusyPoll::new(empty, polled);
        b.kind = ctx.kind;
        Some(b)
    }
    /// One busy-poll loop polls every NIC that uses it: it has one empty-pass cost, of
    /// at least 1 ns at this CPU's clock (a pass that takes no simulated time would
    /// never let time advance).
    fn validate_model(ctx: &BuildCtx<'_>, p: &mut Problems) {
        let mhz = ctx.clock_mhz;
        let mut first_busy: Option<(usize, &crate::model::cost::CostParam)> = None;
        for (i, n) in ctx.nics.iter().enumerate() {
            if let PolicyConfig::BusyPoll(BusyPollParams { empty_poll }) = n {
                let ns = empty_poll.mean_ns(mhz);
                if empty_poll.check().is_ok() && ns < 1.0 {
                    p.push(
                        &format!("nics[{i}].policy.empty_poll"),
                        format!(
                            "must be at least 1 ns (an empty poll takes time); it is {ns} ns at \
                             cpu.clock_mhz = {mhz}"
                        ),
                    );
                }
                match first_busy {
                    None => first_busy = Some((i, empty_poll)),
                    Some((j, e)) if e != empty_poll => p.push(
                        &format!("nics[{i}].policy.empty_poll"),
                        format!(
                            "differs from nics[{j}]'s: one busy-poll loop polls every \
                             busy-poll NIC, so they must give the same empty_poll"
                        ),
                    ),
                    Some(_) => {}
                }
            }
        }
    }
    fn held(&self) -> usize {
        BusyPoll::held(self)
    }
    fn counters(&self, _nic_names: &[String], c: &mut BTreeMap<String, f64>) {
        c.insert("busy_poll.empty_polls".into(), self.empty_polls as f64);
    }
    fn task_name(_task: PolicyTask, _nic_names: &[String]) -> String {
        "busy poll".into()
    }
    fn step(&mut self, _task: PolicyTask, _first: bool, env: &mut impl RxEnv) -> Step {
        BusyPoll::step(self, env)
    }
    /// The loop runs from the start.
    fn start(&mut self, env: &mut impl SchedEnv) {
        env.wake(Task::policy(self.kind, 0, Level::Kernel));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policy::env::mock::{Script, Signal, ns};

    fn empty_pass_ns(ns: f64) -> Cost {
        crate::model::cost::CostParam::ns(ns).build(1000.0)
    }

    #[test]
    fn polls_its_rings_round_robin_and_forwards_each_frame_in_the_loop() {
        // NICs 0 and 2 are polled (2 and 1 frames), NIC 1 is not (its frame stays).
        let mut env = Script::new(&[2, 1, 1]);
        let mut b = BusyPoll::new(empty_pass_ns(100.0), vec![true, false, true]);
        // Frame 0 of NIC 0: rx 1 us + forward 5 us in one step.
        assert_eq!(b.step(&mut env), Step::Run(ns(6_000)));
        // Next pass starts after NIC 0: NIC 2's frame, then NIC 0's second.
        assert_eq!(b.step(&mut env), Step::Run(ns(6_000)));
        assert_eq!(b.step(&mut env), Step::Run(ns(6_000)));
        assert_eq!(b.held(), 1);
        // All polled rings empty: an empty pass of 100 ns, NIC 1's frame untouched.
        assert_eq!(b.step(&mut env), Step::Run(ns(100)));
        assert_eq!(b.empty_polls, 1);
        assert_eq!(env.rings[1].len(), 1);
        assert_eq!(
            env.take_log(),
            vec![Signal::Forward(0), Signal::Forward(200), Signal::Forward(1)]
        );
    }

    #[test]
    fn a_frame_costs_its_receive_and_forwarding_and_is_forwarded_at_the_next_step() {
        let mut env = Script::new(&[2]);
        env.rx_ns = 2_000;
        env.forward_ns = 3_000;
        let mut b = BusyPoll::new(empty_pass_ns(100.0), vec![true]);
        assert_eq!(b.held(), 0);
        // Frame 0 taken: rx 2 us + forward 3 us = 5 us; it is held, not yet forwarded.
        assert_eq!(b.step(&mut env), Step::Run(ns(5_000)));
        assert_eq!(b.held(), 1);
        assert!(env.take_log().is_empty());
        // Next step: frame 0 leaves (if_output), frame 1 is taken.
        assert_eq!(b.step(&mut env), Step::Run(ns(5_000)));
        assert_eq!(env.take_log(), vec![Signal::Forward(0)]);
        // Then frame 1 leaves and the ring is empty: an empty pass, nothing held.
        assert_eq!(b.step(&mut env), Step::Run(ns(100)));
        assert_eq!(env.take_log(), vec![Signal::Forward(1)]);
        assert_eq!((b.held(), b.empty_polls), (0, 1));
    }

    #[test]
    fn the_loop_never_sleeps_and_counts_every_empty_pass() {
        let mut env = Script::new(&[0, 0]);
        let mut b = BusyPoll::new(empty_pass_ns(250.0), vec![true, true]);
        // Empty rings: every step is a 250 ns pass, never Done or Yield, no signal (no
        // interrupt unmasked: the loop keeps the NICs' interrupts off).
        for k in 1..=5 {
            assert_eq!(b.step(&mut env), Step::Run(ns(250)));
            assert_eq!(b.empty_polls, k);
        }
        assert!(env.take_log().is_empty());
        // A frame arriving on NIC 1 is found by the next pass: rx 1 us + forward 5 us.
        env.rings[1].push_back(crate::model::policy::env::mock::pkt(7));
        assert_eq!(b.step(&mut env), Step::Run(ns(6_000)));
        assert_eq!(b.step(&mut env), Step::Run(ns(250)));
        assert_eq!(env.take_log(), vec![Signal::Forward(7)]);
        assert_eq!(b.empty_polls, 6);
    }

    #[test]
    fn round_robin_takes_one_frame_per_ring_in_turn() {
        // Three frames on each of two rings: they alternate, NIC 0 first.
        let mut env = Script::new(&[3, 3]);
        let mut b = BusyPoll::new(empty_pass_ns(100.0), vec![true, true]);
        for _ in 0..6 {
            assert_eq!(b.step(&mut env), Step::Run(ns(6_000)));
        }
        // The 7th step forwards the last frame and finds both rings empty.
        assert_eq!(b.step(&mut env), Step::Run(ns(100)));
        let order: Vec<Signal> = [0, 100, 1, 101, 2, 102]
            .into_iter()
            .map(Signal::Forward)
            .collect();
        assert_eq!(env.take_log(), order);
        // A burst on one ring does not starve the other: after NIC 0's frame the pass
        // starts at NIC 1, which is served even though NIC 0 has more.
        env.rings[0].extend((10..13).map(crate::model::policy::env::mock::pkt));
        env.rings[1].push_back(crate::model::policy::env::mock::pkt(110));
        for _ in 0..5 {
            b.step(&mut env);
        }
        assert_eq!(
            env.take_log(),
            vec![
                Signal::Forward(10),
                Signal::Forward(110),
                Signal::Forward(11),
                Signal::Forward(12)
            ]
        );
    }

    /// The registry's view: NICs 0 and 2 busy-poll with `empty` ns passes, NIC 1 is
    /// interrupt-driven.
    fn ctx_nics(empty: [f64; 2]) -> [PolicyConfig; 3] {
        let bp = |ns: f64| {
            PolicyConfig::BusyPoll(BusyPollParams {
                empty_poll: CostParam::ns(ns),
            })
        };
        [bp(empty[0]), PolicyConfig::default(), bp(empty[1])]
    }

    fn kernel() -> crate::model::kernel::KernelConfig {
        serde_json::from_value(serde_json::json!({ "netisr_per_packet": 5000 })).expect("kernel")
    }

    #[test]
    fn the_registry_builds_one_loop_for_its_nics_and_wakes_it_at_the_start() {
        let nics = ctx_nics([400.0, 400.0]);
        let kernel = kernel();
        let ctx = BuildCtx {
            kind: 4,
            nics: &nics,
            kernel: &kernel,
            clock_mhz: 1000.0,
            timeslice: crate::sim::time::SimTime::from_ns_f64(1e7),
            cores: 1,
            queues: &[],
        };
        let mut b = BusyPoll::build(&ctx).expect("two NICs busy-poll");
        // The loop is one kernel thread (registry index 4), woken at the start.
        let mut env = Script::new(&[1, 1, 1]);
        RxPolicy::start(&mut b, &mut env);
        let task = Task::policy(4, 0, Level::Kernel);
        assert_eq!(env.take_log(), vec![Signal::Wake(task)]);
        let Task::Policy(t) = task else {
            unreachable!()
        };
        assert_eq!(BusyPoll::task_name(t, &[]), "busy poll");
        // It polls NICs 0 and 2 only, with the 400 ns empty pass.
        let steps: Vec<Step> = (0..3)
            .map(|k| RxPolicy::step(&mut b, t, k == 0, &mut env))
            .collect();
        assert_eq!(steps, [Step::Run(ns(6_000)), Step::Run(ns(6_000)), Step::Run(ns(400))]);
        assert_eq!(env.rings[1].len(), 1);
        assert_eq!(RxPolicy::held(&b), 0);
        let mut c = BTreeMap::new();
        RxPolicy::counters(&b, &[], &mut c);
        assert_eq!(c.get("busy_poll.empty_polls"), Some(&1.0));
        // With interrupts off, moderation does not apply to a busy-polled NIC.
        assert!(!nics[0].interrupt_driven());
        assert!(nics[1].interrupt_driven());
        // No NIC busy-polls: no loop.
        let none = [PolicyConfig::default()];
        let ctx = BuildCtx { nics: &none, ..ctx };
        assert!(BusyPoll::build(&ctx).is_none());
    }

    #[test]
    fn validation_wants_one_empty_pass_cost_of_at_least_1_ns() {
        let kernel = kernel();
        let problems = |nics: &[PolicyConfig], mhz: f64| {
            let ctx = BuildCtx {
                kind: 4,
                nics,
                kernel: &kernel,
                clock_mhz: mhz,
                timeslice: crate::sim::time::SimTime::from_ns_f64(1e7),
                cores: 1,
                queues: &[],
            };
            let mut p = Problems::new();
            BusyPoll::validate_model(&ctx, &mut p);
            p.list.into_iter().map(|x| x.path).collect::<Vec<_>>()
        };
        assert!(problems(&ctx_nics([100.0, 100.0]), 1000.0).is_empty());
        // Two busy-poll NICs with different costs: the second is reported.
        assert_eq!(
            problems(&ctx_nics([100.0, 200.0]), 1000.0),
            ["nics[2].policy.empty_poll"]
        );
        // 0.5 ns is too short (a pass must advance time): both NICs are reported.
        assert_eq!(
            problems(&ctx_nics([0.5, 0.5]), 1000.0),
            ["nics[0].policy.empty_poll", "nics[2].policy.empty_poll"]
        );
        // In cycles the bound depends on the clock: 2 cycles are 1 ns at 2 GHz, 0.5 ns
        // at 4 GHz.
        let cycles = |c: f64| {
            PolicyConfig::BusyPoll(BusyPollParams {
                empty_poll: CostParam(crate::model::cost::CostSpec {
                    cycles: Some(c),
                    ..Default::default()
                }),
            })
        };
        assert!(problems(&[cycles(2.0)], 2000.0).is_empty());
        assert_eq!(problems(&[cycles(2.0)], 4000.0), ["nics[0].policy.empty_poll"]);
        // The parameters' own check: a negative cost.
        let mut p = Problems::new();
        BusyPollParams {
            empty_poll: CostParam::ns(-1.0),
        }
        .validate(&mut p);
        assert_eq!(p.list.len(), 1);
        assert_eq!(p.list[0].path, "empty_poll");
    }

    #[test]
    fn an_empty_pass_in_cycles_takes_its_time_at_the_cpu_clock() {
        // 448 cycles at 448 MHz: exactly 1 us.
        let c = CostParam(crate::model::cost::CostSpec {
            cycles: Some(448.0),
            ..Default::default()
        })
        .build(448.0);
        let mut env = Script::new(&[0]);
        let mut b = BusyPoll::new(c, vec![true]);
        assert_eq!(b.step(&mut env), Step::Run(ns(1_000)));
        // The default parameters: a 100 ns pass.
        let d: BusyPollParams = serde_json::from_str("{}").expect("defaults");
        assert_eq!(d.empty_poll, CostParam::ns(100.0));
    }
}
