//! Receive-processing policies: how a NIC's arrivals reach the protocol stack.
//!
//! Each policy is a file of its own; a policy is chosen per NIC in the model file
//! (`nics[i].policy`, tagged by `kind`). System-wide parameters of a policy (FreeBSD's
//! `kern.polling.*`, Linux's `netdev_budget`...) live under `kernel.<policy>`.
//! Interrupt moderation is a NIC feature (`nics[i].moderation`,
//! [`crate::model::nic::moderation`]) that
//! combines with every interrupt-driven policy.
//!
//! The policies are listed once, one line each, in `with_policies!`: that list
//! declares their modules, makes their variants of [`PolicyConfig`] (the scenario
//! field, its JSON Schema and its checks) and is the host's registry
//! (`src/host/policies.rs`), which drives each policy through the hooks of
//! [`RxPolicy`]. See `docs/adding-a-policy.md`.
//!
//! | kind                 | file                 | mechanism                                                    |
//! |----------------------|----------------------|--------------------------------------------------------------|
//! | `interrupt`          | `interrupt.rs`       | classic BSD: the handler drains the ring into ipintrq        |
//! | `freebsd-polling`    | `freebsd_polling.rs` | interrupts off; poll at every clock tick, burst adapted      |
//! | `napi`               | `napi.rs`            | IRQ masks the NIC and schedules a softirq poll (Linux)       |
//! | `mogul-ramakrishnan` | `mogul.rs`           | IRQ wakes a polling thread; quota, feedback, cycle limit     |
//! | `deferred`           | `deferred.rs`        | fast filter + taskqueue task (FreeBSD em, EM_FAST_INTR)      |
//! | `busy-poll`          | `busy_poll.rs`       | a loop owns the CPU and polls the rings                      |
//! | `dpdk`               | `dpdk.rs`            | user-space lcores spin on their queues, bursts, no interrupts |
//!
//! Uses [`crate::sim`], and of the other components the CPU's levels and tasks, the
//! kernel's netisr, the NIC's configuration and its DIM, packets and costs; a policy
//! reaches the host only through its environment's role traits ([`mod@env`]), never the
//! host itself or anything above it.

pub mod env;
pub mod xdp;

/// The receive policies: one line each, `Variant(Params) => file::State`,
/// where `src/model/policy/file.rs` defines `Params` (the NIC's parameters in the
/// scenario, with a `validate` method) and `State`, which implements [`RxPolicy`].
/// Calls macro `$m` with the list; the list's order is the order of `PolicyConfig`'s
/// variants and of the host's registry, which fixes the order of the policies' first
/// timers and of their tasks' wake-ups at time 0 within a priority level (add new lines
/// at the end: the results of existing scenarios then stay the same). `interrupt`, the
/// default, is first; it has no timers or tasks, so its place changes no event's order.
macro_rules! with_policies {
    ($m:ident) => {
        $m! {
            /// Classic interrupt-driven receive (4.4BSD, FreeBSD 2.x-4.x): see [`interrupt`].
            Interrupt(InterruptParams) => interrupt::Interrupt,
            /// FreeBSD DEVICE_POLLING (parameters in `kernel.polling`): see [`freebsd_polling`].
            FreebsdPolling(PollingParams) => freebsd_polling::Polling,
            /// Linux NAPI (budget in `kernel.napi`): see [`napi`].
            Napi(NapiParams) => napi::Napi,
            /// Mogul & Ramakrishnan's polling thread (cycle limit in `kernel.mogul`): see [`mogul`].
            MogulRamakrishnan(MogulParams) => mogul::Mogul,
            /// Fast interrupt filter plus taskqueue task: see [`deferred`].
            Deferred(DeferredParams) => deferred::Deferred,
            /// A loop that owns the CPU and polls the rings: see [`busy_poll`].
            BusyPoll(BusyPollParams) => busy_poll::BusyPoll,
            /// A DPDK poll-mode driver's lcores spinning on their queues: see [`dpdk`].
            Dpdk(DpdkParams) => dpdk::Dpdk,
        }
    };
}
pub(crate) use with_policies;

/// [`validate_model`], from [`with_policies!`].
macro_rules! policy_validators {
    ($($(#[$doc:meta])* $name:ident($params:ident) => $file:ident :: $ty:ident,)*) => {
        /// Every registered policy's checks against the rest of the model, in registry
        /// order; `ctx` gives a policy's build context from its registry index (its
        /// line's place in `with_policies!`).
        pub fn validate_model<'a>(ctx: impl Fn(u8) -> BuildCtx<'a>, p: &mut Problems) {
            let mut kind = 0u8;
            $(
                <$file::$ty as RxPolicy>::validate_model(&ctx(kind), p);
                kind += 1;
            )*
            let _ = kind;
        }
    };
}
with_policies!(policy_validators);

/// The policies' modules and [`PolicyConfig`], from [`with_policies!`].
macro_rules! policy_config {
    ($($(#[$doc:meta])* $name:ident($params:ident) => $file:ident :: $ty:ident,)*) => {
        $(pub mod $file;)*

        /// Which receive policy a NIC uses, with its per-NIC parameters.
        #[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
        #[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
        pub enum PolicyConfig {
            $($(#[$doc])* $name($file::$params),)*
        }

        /// Read by `kind`, each policy's parameters with their own paths, in the
        /// words of the file ([`crate::sim::forms`]).
        impl<'de> Deserialize<'de> for PolicyConfig {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = crate::sim::forms::value(d)?;
                let kinds = PolicyConfig::kinds();
                crate::sim::forms::tagged(v, "kind", "a receive policy", &kinds, "{\"kind\": \"napi\"}",
                    |kind, rest| {
                        $(if kind == kebab(stringify!($name)) {
                            return Some(crate::sim::forms::fields(rest).map(PolicyConfig::$name));
                        })*
                        None
                    })
                .map_err(crate::sim::forms::to_error)
            }
        }

        impl PolicyConfig {
            /// The `kind`s a policy may have.
            pub fn kinds() -> Vec<String> {
                vec![$(kebab(stringify!($name))),*]
            }
        }

        impl PolicyConfig {
            /// What the NIC's policy supports, from its [`RxPolicy`] constants.
            pub fn capabilities(&self) -> Capabilities {
                match self {
                    $(PolicyConfig::$name(_) => Capabilities::of::<$file::$ty>(),)*
                }
            }

            /// The `kind`s of the policies whose capabilities pass `pred`, quoted, in
            /// registry order (`interrupt` first), for messages.
            pub fn kinds_that(pred: impl Fn(&Capabilities) -> bool) -> Vec<String> {
                let mut v = Vec::new();
                $(if pred(&Capabilities::of::<$file::$ty>()) {
                    v.push(format!("`{}`", kebab(stringify!($name))));
                })*
                v
            }

            /// Whether the NIC's receive interrupt is used (moderation applies): not
            /// when its policy keeps the interrupt off ([`RxPolicy::HANDLER`] is
            /// `Nothing`).
            pub fn interrupt_driven(&self) -> bool {
                self.capabilities().interrupt_driven
            }

            /// Whether the policy's code reclaims sent transmit descriptors (txeof), so
            /// that `tx_completion` can be modelled on its NIC ([`RxPolicy::RECLAIMS_TX`]).
            pub fn reclaims_tx(&self) -> bool {
                self.capabilities().reclaims_tx
            }

            /// The `kind`s of the policies that reclaim transmit descriptors, quoted.
            pub fn reclaiming_tx() -> Vec<String> {
                Self::kinds_that(|c| c.reclaims_tx)
            }

            /// Whether the NIC sends received frames back out of itself
            /// ([`RxPolicy::transmits_received`]: XDP_TX).
            pub fn transmits_received(&self) -> bool {
                match self {
                    $(PolicyConfig::$name(_) => <$file::$ty as RxPolicy>::transmits_received(self),)*
                }
            }

            /// Range checks of the NIC's parameters.
            pub fn validate(&self, p: &mut Problems) {
                match self {
                    $(PolicyConfig::$name(x) => x.validate(p),)*
                }
            }
        }
    };
}
with_policies!(policy_config);

/// A NIC without a `policy` uses `interrupt`.
impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig::Interrupt(interrupt::InterruptParams::default())
    }
}

use crate::model::cpu::task::{PolicyTask, Step};
use crate::model::kernel::KernelConfig;
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use env::RxEnv;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A receive policy as the host drives it: its state, built once per run from the
/// NICs' [`PolicyConfig`]s, and the hooks through which the host hands it work. Every
/// hook has a default that does nothing, so a policy implements only those it needs.
/// The host reaches policies through its registry (`src/host/policies.rs`, one line per
/// policy), generic over the environment (static dispatch): the constants let it skip
/// hooks at compile time on the per-packet path.
pub trait RxPolicy: Sized {
    /// The interrupt handler's share ([`interrupt::HandlerMode`]): `Schedule` if the
    /// handler hands the NIC over and leaves it masked ([`RxPolicy::schedule`]),
    /// `Nothing` if the policy keeps the interrupt off (see
    /// [`PolicyConfig::interrupt_driven`]; [`RxPolicy::rx_arrived`]).
    const HANDLER: interrupt::HandlerMode;
    /// The software-interrupt bits whose handlers are this policy's
    /// ([`RxPolicy::swi_begin`], [`RxPolicy::swi_step`]).
    const SWI_BITS: u32 = 0;
    /// Whether it wants [`RxPolicy::output_drained`] (called per transmitted frame).
    const WATCHES_OUTPUT: bool = false;
    /// Whether it can preempt interrupt handlers (a timer at the clock's level): then a
    /// handler's CPU time does not map to wall time in advance and the handlers' look-ahead
    /// is off.
    const PREEMPTS_HANDLERS: bool = false;
    /// Whether its code reclaims sent transmit descriptors (txeof), so that a NIC using
    /// it may model `tx_completion` (driver-reclaimed descriptors and their interrupts).
    const RECLAIMS_TX: bool = false;
    /// Whether it is modelled on a host with several cores: its state per core (one
    /// instance per core, sized from [`BuildCtx`]'s cores), its work on the core its step
    /// runs on, another core reached only explicitly (`docs/adding-a-policy.md`).
    const MANY_CORES: bool = false;
    /// Whether it samples DIM where its driver calls `net_dim` (`RxEnv::poll_completed`
    /// at the end of a poll that completes), so that a NIC using it may enable `dim`.
    const DRIVES_DIM: bool = false;
    /// Whether its interrupt handler services the chip's other causes, a receive
    /// descriptor's error (a frame cut by a FIFO overflow) and a transmit underrun, as
    /// dc(4)'s `dc_intr` does; with a policy that does not, no driver code is modelled
    /// for them (the chip raises its threshold and restarts by itself). Only with
    /// `HANDLER = Inline`, whose inline work services them (the registry refuses the
    /// combination at compile time otherwise).
    const HANDLES_CHIP_ERRORS: bool = false;
    /// The name of the software-interrupt dispatcher in traces when the policy is used
    /// (`NET_RX softirq` for NAPI; default: `netisr`).
    const SWI_NAME: Option<&'static str> = None;

    /// Whether a NIC with this configuration uses the policy.
    fn serves(p: &PolicyConfig) -> bool;
    /// Whether a NIC with this configuration sends received frames back out of itself
    /// (an XDP program's `XDP_TX`, on the queue that received them), so that its
    /// transmit side is built even when no flow leaves by it. Default: no.
    fn transmits_received(_p: &PolicyConfig) -> bool {
        false
    }
    /// The state for a run, or `None` when no NIC uses the policy.
    fn build(ctx: &BuildCtx<'_>) -> Option<Self>;
    /// Checks of the policy's parameters against the rest of the model (validation,
    /// before any run: the model may be invalid; `p` is at the model's root).
    fn validate_model(_ctx: &BuildCtx<'_>, _p: &mut Problems) {}
    /// Frames held by a step in progress (for packet conservation).
    fn held(&self) -> usize {
        0
    }
    /// Core `core`'s queue of frames handed to it by receive packet steering (Linux's
    /// input_pkt_queue), for traces; `None` when the policy has none.
    fn backlog(
        &self,
        _core: usize,
    ) -> Option<&std::collections::VecDeque<crate::model::packet::Packet>> {
        None
    }
    /// Publish the counters (`nic_names`: the NICs' names, by index).
    fn counters(&self, _nic_names: &[String], _c: &mut BTreeMap<String, f64>) {}
    /// The counters [`RxPolicy::counters`] publishes only once they have counted
    /// something (absent from a run where they did not: their absence means 0), by
    /// name: with the counters published from the start, every name a run can publish
    /// (what a measured table's `counters.<name>_per_s` is checked against).
    const ONCE_COUNTED: &'static [&'static str] = &[];
    /// The name of one of its tasks in traces.
    fn task_name(task: PolicyTask, nic_names: &[String]) -> String;
    /// How the kernel accounts one of its tasks' CPU time, in mpstat's categories
    /// ([`crate::model::cpu::cputime`]). Default: kernel code, a level's category
    /// ([`CpuTime::of_level`](crate::model::cpu::cputime::CpuTime::of_level)) above the
    /// user level and `%sys` at it (a kernel thread at normal priority).
    fn cputime(task: PolicyTask) -> crate::model::cpu::cputime::CpuTime {
        use crate::model::cpu::{Level, cputime::CpuTime};
        match task.level {
            Level::User => CpuTime::Sys,
            l => CpuTime::of_level(l),
        }
    }

    /// The receive interrupt handler of `nic` hands the device over (it stays masked).
    fn schedule(&mut self, _nic: usize, _env: &mut impl RxEnv) {}
    /// A frame entered the ring of `nic`, which the policy polls with interrupts off.
    fn rx_arrived(&mut self, _nic: usize, _env: &mut impl RxEnv) {}
    /// One step of one of its tasks (`first`: it has just been given the CPU).
    fn step(&mut self, _task: PolicyTask, _first: bool, _env: &mut impl RxEnv) -> Step {
        Step::Done
    }
    /// When its periodic timer first fires, if it has one.
    fn first_timer(&self) -> Option<SimTime> {
        None
    }
    /// Its periodic timer fired; returns the time to the next one.
    fn timer(&mut self, _env: &mut impl RxEnv) -> Option<SimTime> {
        None
    }
    /// A one-shot timer it armed (`RxEnv::set_alarm`) fired, on the core that armed it.
    fn alarm(&mut self, _arg: u16, _env: &mut impl RxEnv) {}
    /// One step of the user process's socket busy loop on `nic` (`start`: the loop
    /// begins, to end at `deadline`, with the socket's options `opts`); `Done` when the
    /// loop is over. Policies that do not support busy polling end it at once.
    fn busy_poll(
        &mut self,
        _nic: usize,
        _start: bool,
        _deadline: SimTime,
        _opts: SocketBusyPoll,
        _env: &mut impl RxEnv,
    ) -> Step {
        Step::Done
    }
    /// The run starts (wake the tasks that run from time 0).
    fn start(&mut self, _env: &mut impl RxEnv) {}
    /// A downstream queue drained a little (a frame left an output wire); only called
    /// when [`RxPolicy::WATCHES_OUTPUT`].
    fn output_drained(&mut self, _env: &mut impl RxEnv) {}
    /// The software-interrupt dispatcher took `bit` (one of [`RxPolicy::SWI_BITS`]):
    /// whether its handler now runs ([`RxPolicy::swi_step`] until done). A handler that
    /// does its work here, with no CPU time of its own, returns false.
    fn swi_begin(&mut self, _bit: u32, _env: &mut impl RxEnv) -> bool {
        false
    }
    /// One step of the handler of `bit`.
    fn swi_step(&mut self, _bit: u32, _env: &mut impl RxEnv) -> Step {
        Step::Done
    }
}

/// What a receive policy supports, read by the model's validation instead of the
/// policy's name: a new policy states it in its [`RxPolicy`] constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// The interrupt handler's share ([`RxPolicy::HANDLER`]).
    pub handler: interrupt::HandlerMode,
    /// Its NIC's receive interrupt is used ([`RxPolicy::HANDLER`] is not `Nothing`).
    pub interrupt_driven: bool,
    /// Its handler services the chip's receive-error and transmit-underrun causes
    /// ([`RxPolicy::HANDLES_CHIP_ERRORS`]).
    pub handles_chip_errors: bool,
    /// It reclaims sent transmit descriptors ([`RxPolicy::RECLAIMS_TX`]).
    pub reclaims_tx: bool,
    /// It runs on a host with several cores ([`RxPolicy::MANY_CORES`]).
    pub many_cores: bool,
    /// It samples DIM ([`RxPolicy::DRIVES_DIM`]).
    pub drives_dim: bool,
}

impl Capabilities {
    /// The capabilities of policy `P`, from its constants.
    pub const fn of<P: RxPolicy>() -> Capabilities {
        Capabilities {
            handler: P::HANDLER,
            interrupt_driven: !matches!(P::HANDLER, interrupt::HandlerMode::Nothing),
            handles_chip_errors: P::HANDLES_CHIP_ERRORS,
            reclaims_tx: P::RECLAIMS_TX,
            many_cores: P::MANY_CORES,
            drives_dim: P::DRIVES_DIM,
        }
    }
}

/// `items` as a list in words: `a`, `a and b`, `a, b and c`.
pub fn in_words(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A variant's name as a model file writes its `kind` (serde's kebab case:
/// `MogulRamakrishnan` is `mogul-ramakrishnan`).
fn kebab(name: &str) -> String {
    let mut s = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                s.push('-');
            }
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

/// A socket's busy-polling options, as napi_busy_loop takes them (net/core/dev.c,
/// Linux 5.11, `sk_busy_loop` in include/net/busy_poll.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocketBusyPoll {
    /// SO_PREFER_BUSY_POLL (Linux 5.11): the loop marks a device the softirq owns
    /// NAPI_STATE_PREFER_BUSY_POLL, and busy_poll_stop keeps its interrupt masked
    /// (the gro_flush_timeout hrtimer armed) when napi_defer_hard_irqs is set.
    pub prefer_busy_poll: bool,
    /// SO_BUSY_POLL_BUDGET: frames one poll of the loop may take \[frames\]
    /// (BUSY_POLL_BUDGET, 8, by default).
    pub budget: u32,
    /// The loop is epoll_wait()'s ep_busy_loop (net.core.busy_poll), not recv()'s:
    /// with SO_PREFER_BUSY_POLL its end suspends or resumes the device's interrupt
    /// when the device has an `irq_suspend_timeout` (Linux 6.13).
    pub epoll: bool,
}

impl Default for SocketBusyPoll {
    fn default() -> Self {
        SocketBusyPoll {
            prefer_busy_poll: false,
            budget: 8,
            epoll: false,
        }
    }
}

/// What a policy's [`RxPolicy::build`] gets.
/// (Also given to [`RxPolicy::validate_model`], before any run, for a model that may be
/// invalid.)
pub struct BuildCtx<'a> {
    /// The policy's index in the registry (for the tasks it wakes: [`PolicyTask::kind`]).
    pub kind: u8,
    /// Each NIC's policy, by index.
    pub nics: &'a [PolicyConfig],
    /// The kernel's parameters (`kernel.polling`, `kernel.napi`, `kernel.mogul`...).
    pub kernel: &'a KernelConfig,
    /// The CPU clock \[MHz\] (to build costs given in cycles).
    pub clock_mhz: f64,
    /// The scheduler's time slice for normal-priority tasks.
    pub timeslice: SimTime,
    /// The number of cores (`cpu.cores`).
    pub cores: usize,
    /// Where each NIC device sits on its port, by index (empty where not needed: the
    /// loader's checks).
    pub queues: &'a [QueueOf],
}

/// Where a NIC device sits: queue `index` of port `port` (a NIC with one queue is
/// queue 0 of itself), and whether its transmit completions interrupt
/// (`tx_completion`), for counters a driver keeps per channel. The host fills it in
/// from the expanded model (`host::assembly`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueOf {
    /// The port's name (`nics[].name` as written).
    pub port: String,
    /// The queue's index on the port (ethtool's channel number).
    pub index: u16,
    /// Its transmit completions interrupt.
    pub tx_completion: bool,
}

impl BuildCtx<'_> {
    /// The NICs that use policy `P`.
    pub fn nics_of<P: RxPolicy>(&self) -> impl Iterator<Item = (usize, &PolicyConfig)> + '_ {
        self.nics.iter().enumerate().filter(|(_, p)| P::serves(p))
    }
}

/// The name of NIC `n` in traces (empty if unknown).
pub fn nic_name(nic_names: &[String], n: u16) -> String {
    nic_names.get(n as usize).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_policy_supports_is_read_from_its_constants() {
        // The registry's answer, policy by policy (napi.rs sets MANY_CORES and
        // DRIVES_DIM, dpdk.rs MANY_CORES; interrupt.rs states the `interrupt` policy's
        // capabilities).
        assert_eq!(
            PolicyConfig::kinds_that(|c| c.many_cores),
            ["`interrupt`", "`napi`", "`dpdk`"]
        );
        assert_eq!(PolicyConfig::kinds_that(|c| c.drives_dim), ["`napi`"]);
        assert_eq!(
            PolicyConfig::kinds_that(|c| c.handles_chip_errors),
            ["`interrupt`"]
        );
        assert_eq!(
            PolicyConfig::kinds_that(|c| c.handler == interrupt::HandlerMode::Schedule),
            ["`napi`", "`mogul-ramakrishnan`", "`deferred`"]
        );
        assert_eq!(
            PolicyConfig::kinds_that(|c| !c.interrupt_driven),
            ["`freebsd-polling`", "`busy-poll`", "`dpdk`"]
        );
        assert_eq!(
            in_words(&PolicyConfig::reclaiming_tx()),
            "`interrupt`, `napi` and `deferred`"
        );
        assert_eq!(in_words(&["a".into()]), "a");
        assert_eq!(
            in_words(&["a".into(), "b".into(), "c".into()]),
            "a, b and c"
        );
        // A NIC with DIM and a policy that does not sample it is refused by that reason.
        let nic: crate::model::nic::NicConfig = serde_json::from_value(serde_json::json!({
            "name": "a", "policy": { "kind": "deferred" }, "dim": { "mode": "cqe" },
        }))
        .expect("nic");
        let mut p = Problems::default();
        nic.validate(&mut p);
        let text: Vec<String> = p.list.iter().map(|x| x.to_string()).collect();
        assert!(
            text.iter()
                .any(|t| t.starts_with("at `dim`") && t.contains("mlx5e_napi_poll): `napi`")),
            "{text:?}"
        );
    }

    #[test]
    fn kinds_are_the_variants_in_kebab_case_as_serde_writes_them() {
        assert_eq!(kebab("MogulRamakrishnan"), "mogul-ramakrishnan");
        assert_eq!(kebab("Napi"), "napi");
        let cfg = PolicyConfig::Deferred(deferred::DeferredParams {
            process_limit: 100,
            task_overhead: crate::model::cost::CostParam::default(),
            direct: false,
        });
        let json = serde_json::to_value(&cfg).expect("serialise");
        assert_eq!(
            format!("`{}`", json["kind"].as_str().expect("kind")),
            PolicyConfig::reclaiming_tx()[2]
        );
        assert_eq!(
            PolicyConfig::reclaiming_tx(),
            vec!["`interrupt`", "`napi`", "`deferred`"]
        );
    }
}
