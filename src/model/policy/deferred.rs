//! Deferred receive handler: FreeBSD 6/7 em(4) with EM_FAST_INTR.
//!
//! A fast interrupt filter (isr_entry + isr_exit: read ICR, mask the NIC, enqueue the
//! task) does no packet work. The taskqueue thread, at kernel-thread priority above
//! user processes, then runs the task (`task_overhead`: taskqueue dispatch and thread
//! switch), which receives up to `process_limit` frames (each `rx_per_packet`, plus
//! `netisr_per_packet` when `direct`, i.e. net.isr.direct = 1, else the frame goes to
//! ipintrq). If frames remain it re-enqueues itself behind other ready kernel threads;
//! when the ring is empty it reclaims sent descriptors if a transmit cause is pending
//! (em_txeof, `driver.tx_per_packet` each, with `tx_completion`), runs the start
//! routine (em_start_locked) and unmasks the NIC (em_enable_intr).
//!
//! Differences from em_handle_rxtx of FreeBSD 6.2 (if_em.c 1.65.2.21, lines
//! 1277-1299), which matter only under overload: the real task runs em_txeof and
//! em_enable_intr even when it re-enqueued itself; here the NIC stays masked until the
//! ring is empty. The real task runs in a taskqueue thread at PI_NET (above the netisr's
//! SWI_NET); here at kernel-thread priority, below the netisr.
//!
//! Parameters (per NIC): `process_limit` 100 (em_rx_process_limit), `task_overhead` 0,
//! `direct` false.
//!
//! Counters: `<nic>.taskq.runs`, `<nic>.taskq.requeues`.

use crate::model::cost::{Cost, CostParam};
use crate::model::cpu::Level;
use crate::model::packet::Packet;
use crate::model::policy::env::{RxEnv, SchedEnv};
use crate::model::policy::interrupt::HandlerMode;
use crate::model::policy::{BuildCtx, PolicyConfig, RxPolicy, nic_name};
use crate::sim::problems::Problems;
use crate::model::cpu::task::{PolicyTask, Step, Task};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A NIC's own parameters under the deferred handler (`"kind": "deferred"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeferredParams {
    /// Packets one task run may take before re-enqueueing itself (default 100,
    /// em_rx_process_limit).
    #[serde(default = "d_limit")]
    #[schemars(range(min = 1))]
    pub process_limit: u32,
    /// Cost of one task run: taskqueue dispatch and thread switch (default 0) \[cost\].
    #[serde(default)]
    pub task_overhead: CostParam,
    /// Whether the task runs the protocol code inline (net.isr.direct = 1) instead
    /// of queueing to ipintrq (default false).
    #[serde(default)]
    pub direct: bool,
}

fn d_limit() -> u32 {
    100
}

impl DeferredParams {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("process_limit", self.process_limit as u64, 1, "packet");
        if let Err(e) = self.task_overhead.check() {
            p.push("task_overhead", e);
        }
    }
}

/// The tasks of every NIC that uses the deferred handler.
#[derive(Clone, Debug)]
pub struct Deferred {
    /// Registry index (for the tasks).
    kind: u8,
    /// Each NIC's task (`None`: the NIC does not use the policy).
    taskqs: Vec<Option<Taskq>>,
}

impl RxPolicy for Deferred {
    const HANDLER: HandlerMode = HandlerMode::Schedule;
    /// The task runs em_txeof (`Taskq::step`).
    const RECLAIMS_TX: bool = true;
    fn serves(p: &PolicyConfig) -> bool {
        matches!(p, PolicyConfig::Deferred(_))
    }
    fn build(ctx: &BuildCtx<'_>) -> Option<Self> {
        ctx.nics_of::<Self>().next()?;
        let taskqs = ctx
            .nics
            .iter()
            .enumerate()
            .map(|(nic, p)| match p {
                PolicyConfig::Deferred(d) => Some(Taskq::new(
                    nic,
                    d.process_limit,
                    d.task_overhead.build(ctx.clock_mhz),
                    d.direct,
                )),
                _ => None,
            })
            .collect();
        Some(Deferred {
            kind: ctx.kind,
            taskqs,
        })
    }
    fn held(&self) -> usize {
        self.taskqs.iter().flatten().map(|t| t.held()).sum()
    }
    fn counters(&self, nic_names: &[String], c: &mut BTreeMap<String, f64>) {
        for (i, t) in self.taskqs.iter().enumerate() {
            if let Some(t) = t {
                c.insert(format!("{}.taskq.runs", nic_names[i]), t.runs as f64);
                c.insert(
                    format!("{}.taskq.requeues", nic_names[i]),
                    t.requeues as f64,
                );
            }
        }
    }
    fn task_name(task: PolicyTask, nic_names: &[String]) -> String {
        format!("{} taskqueue", nic_name(nic_names, task.nic))
    }
    /// The fast filter enqueues the NIC's task.
    fn schedule(&mut self, nic: usize, env: &mut impl SchedEnv) {
        env.wake(Task::policy(self.kind, nic, Level::Kernel));
    }
    fn step(&mut self, task: PolicyTask, first: bool, env: &mut impl RxEnv) -> Step {
        match &mut self.taskqs[task.nic as usize] {
            Some(t) => t.step(first, env),
            None => Step::Done,
        }
    }
}

/// Task state of one NIC.
#[derive(Clone, Debug)]
pub struct Taskq {
    /// The NIC whose task this is.
    nic: usize,
    limit: u32,
    overhead: Cost,
    direct: bool,
    /// Frames received in this run of the task.
    done: u32,
    /// The frame being received.
    current: Option<Packet>,
    /// Task runs -- counter.
    pub runs: u64,
    /// Runs that ended by re-enqueueing the task -- counter.
    pub requeues: u64,
}

impl Taskq {
    /// The task of `nic`, from its per-NIC parameters.
    pub fn new(nic: usize, limit: u32, overhead: Cost, direct: bool) -> Taskq {
        Taskq {
            nic,
            limit,
            overhead,
            direct,
            done: 0,
            current: None,
            runs: 0,
            requeues: 0,
        }
    }

    /// Frames held by the task (the one being received).
    pub fn held(&self) -> usize {
        self.current.is_some() as usize
    }

    /// One step of the task (`first`: the taskqueue thread has just started it).
    pub fn step(&mut self, first: bool, env: &mut impl RxEnv) -> Step {
        let nic = self.nic;
        if first {
            self.runs += 1;
            self.done = 0;
            return Step::Run(env.kernel_cost(&self.overhead));
        }
        if let Some(p) = self.current.take() {
            if self.direct {
                env.forward(p);
            } else {
                env.ipintrq_enqueue(p);
            }
        }
        if self.done >= self.limit {
            if !env.rx_empty(nic) {
                self.requeues += 1;
                return Step::Yield;
            }
        } else if let Some(p) = env.rx_pop(nic) {
            self.done += 1;
            self.current = Some(p);
            let mut d = env.rx_cost(nic, p.bytes);
            if self.direct {
                d += env.forward_cost();
            }
            return Step::Run(d);
        }
        if let Some(k) = env.take_tx_completions(nic) {
            return Step::Run(env.txeof_cost(nic, k));
        }
        if env.tx_completion_interrupts(nic) {
            // Reclaimed descriptors take frames waiting in if_snd.
            env.if_start(nic);
        }
        env.irq_unmask(nic);
        Step::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policy::env::mock::{Script, Signal, ns};
    use crate::sim::time::SimTime;

    fn cost(ns: f64) -> Cost {
        crate::model::cost::CostParam::ns(ns).build(1000.0)
    }

    /// Run the task from its start until it stops; the steps' lengths and how it ended.
    fn run(t: &mut Taskq, env: &mut Script) -> (Vec<SimTime>, Step) {
        let mut runs = Vec::new();
        let mut step = t.step(true, env);
        while let Step::Run(d) = step {
            runs.push(d);
            step = t.step(false, env);
        }
        (runs, step)
    }

    #[test]
    fn takes_at_most_process_limit_frames_then_requeues_itself() {
        // 5 frames, limit 2, frames to ipintrq (net.isr.direct = 0).
        let mut env = Script::new(&[5]);
        let mut t = Taskq::new(0, 2, cost(3_000.0), false);
        let (runs, end) = run(&mut t, &mut env);
        // Overhead 3 us, then 1 us per frame (no forwarding in the task).
        assert_eq!(runs, vec![ns(3_000), ns(1_000), ns(1_000)]);
        assert_eq!(end, Step::Yield);
        assert_eq!(env.take_log(), vec![Signal::Ipintrq(0), Signal::Ipintrq(1)]);
        // Second run: two more; third: the last frame, then the NIC is unmasked.
        run(&mut t, &mut env);
        let (runs, end) = run(&mut t, &mut env);
        assert_eq!((runs.len(), end), (2, Step::Done));
        assert_eq!(env.take_log()[2..], [Signal::Ipintrq(4), Signal::Unmask(0)]);
        assert_eq!((t.runs, t.requeues), (3, 2));
    }

    #[test]
    fn the_handler_wakes_the_nics_own_task_and_its_steps_run_that_nics_taskq() {
        // NICs 0 and 2 use the deferred handler (registry index 3), NIC 1 does not.
        let cfg = |limit| {
            PolicyConfig::Deferred(DeferredParams {
                process_limit: limit,
                task_overhead: crate::model::cost::CostParam::ns(0.0),
                direct: true,
            })
        };
        let nics = [cfg(100), PolicyConfig::default(), cfg(1)];
        let kernel: crate::model::kernel::KernelConfig =
            serde_json::from_value(serde_json::json!({ "netisr_per_packet": 5000 }))
                .expect("kernel");
        let ctx = BuildCtx {
            kind: 3,
            nics: &nics,
            kernel: &kernel,
            clock_mhz: 1000.0,
            timeslice: SimTime::from_ns_f64(1e7),
            cores: 1,
            queues: &[],
        };
        let mut d = Deferred::build(&ctx).expect("NICs use it");
        let mut env = Script::new(&[0, 0, 2]);
        d.schedule(2, &mut env);
        let task = Task::policy(3, 2, Level::Kernel);
        assert_eq!(env.take_log(), vec![Signal::Wake(task)]);
        let Task::Policy(t) = task else {
            unreachable!()
        };
        assert_eq!(d.step(t, true, &mut env), Step::Run(ns(0)));
        assert_eq!(d.step(t, false, &mut env), Step::Run(ns(6_000)));
        // NIC 2's limit is one frame: the task re-enqueues itself.
        assert_eq!(d.step(t, false, &mut env), Step::Yield);
        assert_eq!(env.take_log(), vec![Signal::Forward(200)]);
        assert_eq!(RxPolicy::held(&d), 0);
        let mut c = BTreeMap::new();
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        RxPolicy::counters(&d, &names, &mut c);
        assert_eq!(c.get("c.taskq.runs"), Some(&1.0));
        assert_eq!(c.get("c.taskq.requeues"), Some(&1.0));
        assert!(!c.contains_key("b.taskq.runs"));
        assert_eq!(Deferred::task_name(t, &names), "c taskqueue");
    }

    #[test]
    fn direct_dispatch_forwards_in_the_task_and_reclaims_sent_descriptors_at_the_end() {
        let mut env = Script::new(&[1]);
        env.tx_completions[0] = 3;
        env.tx_interrupts = true;
        let mut t = Taskq::new(0, 100, cost(0.0), true);
        let (runs, end) = run(&mut t, &mut env);
        // Overhead 0, the frame with the whole forwarding path (1 + 5 us), txeof of 3
        // descriptors (3 x 0.2 us).
        assert_eq!(runs, vec![ns(0), ns(6_000), ns(600)]);
        assert_eq!(end, Step::Done);
        assert_eq!(
            env.take_log(),
            vec![Signal::Forward(0), Signal::IfStart(0), Signal::Unmask(0)]
        );
    }
}
