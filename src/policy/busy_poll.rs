//! Busy polling (DPDK-style run-to-completion): a loop that owns the CPU and polls the
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

use crate::cost::{Cost, CostParam};
use crate::cpu::Level;
use crate::packet::Packet;
use crate::policy::env::RxEnv;
use crate::policy::interrupt::HandlerMode;
use crate::policy::{BuildCtx, PolicyConfig, RxPolicy};
use crate::problems::Problems;
use crate::task::{PolicyTask, Step, Task};
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
        let mut first_busy: Option<(usize, &crate::cost::CostParam)> = None;
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
    fn start(&mut self, env: &mut impl RxEnv) {
        env.wake(Task::policy(self.kind, 0, Level::Kernel));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::env::mock::{Script, Signal, ns};

    fn empty_pass_ns(ns: f64) -> Cost {
        crate::cost::CostParam::ns(ns).build(1000.0)
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
}
