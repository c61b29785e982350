//! The receive-policy registry and the host's routing for every policy.
//!
//! A receive policy is a file of its own under `src/model/policy/` that implements
//! [`RxPolicy`]; registering it is one line in the list of
//! [`with_policies!`](crate::model::policy::with_policies), which also makes its scenario
//! field. Here that list goes through `registry!`, which generates the state set
//! ([`Policies`]: one optional, boxed state per policy, built
//! from the NICs' configurations), the registry indexes ([`kind`]: a policy's tasks and
//! timer carry its index) and the routing: each of the host's calls into a policy
//! matches the index and lends the policy's state, with a
//! [`HostEnv`](crate::host::env::HostEnv), to the hook (`Host::with_policy`, one
//! function for every hook: [`lend`] with the policy's [`Registered`] place). Static dispatch: no trait objects, and the hooks a policy does not want
//! on the per-packet path ([`RxPolicy::WATCHES_OUTPUT`]) are skipped at compile time.

use crate::host::attach::Shape;
use crate::host::env::lend;
use crate::host::{Event, Host, Step};
use crate::model::cpu::task::PolicyTask;
use crate::model::policy::{BuildCtx, PolicyConfig, RxPolicy};
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;
use std::collections::BTreeMap;

/// Generates the registry from the list of policies, one line each,
/// `Name(Params) => file::Type`, where `crate::model::policy::file::Type` implements
/// [`RxPolicy`] (`Params` and the doc comments make the scenario field, in
/// `crate::model::policy`; unused here). The order of the lines is the
/// registry's order: the order in which the policies' timers are first scheduled and
/// their tasks woken at the start of a run, within a level (keep it: it fixes the order
/// of events).
macro_rules! registry {
    ($($(#[$doc:meta])* $name:ident($params:ident) => $file:ident :: $ty:ident,)*) => {
        // The policies' software-interrupt bits are their own: no two policies share one,
        // and none takes ipintr's (the dispatcher would never hand it to them).
        const _: () = {
            let mut taken = crate::model::kernel::softirq::NETISR_IP;
            $(
                let bits = <crate::model::policy::$file::$ty as RxPolicy>::SWI_BITS;
                assert!(bits & taken == 0, "two policies claim one software-interrupt bit");
                taken |= bits;
                // The chip's error and underrun causes are serviced in the handler's
                // inline work only: a policy whose handler schedules a poller or does
                // nothing cannot claim them (its underruns would never be cleared).
                assert!(
                    !<crate::model::policy::$file::$ty as RxPolicy>::HANDLES_CHIP_ERRORS
                        || matches!(
                            <crate::model::policy::$file::$ty as RxPolicy>::HANDLER,
                            crate::model::policy::interrupt::HandlerMode::Inline
                        ),
                    "HANDLES_CHIP_ERRORS needs HANDLER = HandlerMode::Inline"
                );
            )*
            let _ = taken;
        };

        /// Registry index of each policy ([`PolicyTask::kind`], [`Event::PolicyTimer`]).
        #[allow(non_upper_case_globals, dead_code)]
        pub(crate) mod kind {
            #[repr(u8)]
            enum Index {
                $($name),*
            }
            $(pub(crate) const $name: u8 = Index::$name as u8;)*
        }

        /// The state of each policy some NIC uses (boxed: lent to each of its hooks,
        /// it moves as one pointer).
        #[allow(non_snake_case)]
        #[derive(Default)]
        pub(crate) struct Policies {
            $(pub(crate) $name: Option<Box<crate::model::policy::$file::$ty>>,)*
        }

        $(impl Registered for crate::model::policy::$file::$ty {
            const KIND: u8 = kind::$name;
            #[inline(always)]
            fn slot(p: &mut Policies) -> &mut Option<Box<Self>> {
                &mut p.$name
            }
        })*

        impl Policies {
            /// The states for a run; `ctx` gives a policy's build context from its index.
            pub(crate) fn build<'a>(ctx: impl Fn(u8) -> BuildCtx<'a>) -> Policies {
                Policies {
                    $($name: <crate::model::policy::$file::$ty as RxPolicy>::build(&ctx(kind::$name))
                        .map(Box::new),)*
                }
            }

            /// The index of the policy a NIC configured with `p` uses.
            pub(crate) fn kind_of(p: &PolicyConfig) -> u8 {
                match p {
                    $(PolicyConfig::$name(_) => kind::$name,)*
                }
            }

            /// Frames held by the policies' steps.
            pub(crate) fn held(&self) -> usize {
                0 $(+ self.$name.as_ref().map_or(0, |p| RxPolicy::held(&**p)))*
            }

            /// Core `core`'s RPS backlog, if a policy in use has one (traces).
            pub(crate) fn backlog(
                &self,
                core: usize,
            ) -> Option<&std::collections::VecDeque<crate::model::packet::Packet>> {
                $(if let Some(b) = self.$name.as_ref().and_then(|p| RxPolicy::backlog(&**p, core)) {
                    return Some(b);
                })*
                None
            }

            /// The counters the policies in use publish only once they count
            /// ([`RxPolicy::ONCE_COUNTED`]).
            pub(crate) fn once_counted(&self) -> Vec<&'static str> {
                let mut v = Vec::new();
                $(if self.$name.is_some() {
                    v.extend(<crate::model::policy::$file::$ty as RxPolicy>::ONCE_COUNTED);
                })*
                v
            }

            /// Publish the policies' counters.
            pub(crate) fn counters(&self, nic_names: &[String], c: &mut BTreeMap<String, f64>) {
                $(if let Some(p) = &self.$name {
                    RxPolicy::counters(&**p, nic_names, c);
                })*
            }

            /// The software-interrupt dispatcher's name in traces: the first policy in
            /// use that names it, in registry order.
            pub(crate) fn swi_name(&self) -> Option<&'static str> {
                $(if self.$name.is_some() {
                    if let Some(n) = <crate::model::policy::$file::$ty as RxPolicy>::SWI_NAME {
                        return Some(n);
                    }
                })*
                None
            }

            /// Whether a policy in use preempts interrupt handlers.
            pub(crate) fn preempt_handlers(&self) -> bool {
                false $(|| (<crate::model::policy::$file::$ty as RxPolicy>::PREEMPTS_HANDLERS
                    && self.$name.is_some()))*
            }
        }

        /// The name of a policy's task in traces.
        pub(crate) fn task_name(t: PolicyTask, nic_names: &[String]) -> String {
            match t.kind {
                $(kind::$name => {
                    <crate::model::policy::$file::$ty as RxPolicy>::task_name(t, nic_names)
                })*
                _ => String::new(),
            }
        }

        /// How the kernel accounts policy task `t`'s CPU time ([`RxPolicy::cputime`]).
        #[inline(always)]
        pub(crate) fn task_cputime(t: PolicyTask) -> crate::model::cpu::cputime::CpuTime {
            match t.kind {
                $(kind::$name => {
                    <crate::model::policy::$file::$ty as RxPolicy>::cputime(t)
                })*
                _ => crate::model::cpu::cputime::CpuTime::of_level(t.level),
            }
        }

        impl<M: Shape> Host<M> {
            /// One step of policy task `t` (out of line: it keeps the policies' code out
            /// of `Host::step`, whose other arms are the interrupt path).
            #[inline(never)]
            pub(crate) fn policy_step(
                &mut self,
                t: PolicyTask,
                now: SimTime,
                first: bool,
                s: &mut Scheduler<Event>,
            ) -> Step {
                match t.kind {
                    $(kind::$name => self
                        .with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                            RxPolicy::step(p, t, first, env)
                        })
                        .unwrap_or(Step::Done),)*
                    _ => Step::Done,
                }
            }

            /// The handler of `nic` hands the device to its policy.
            pub(crate) fn schedule_poll(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
                match self.ports[nic].policy_kind {
                    $(kind::$name => {
                        self.with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                            RxPolicy::schedule(p, nic, env)
                        });
                    })*
                    _ => {}
                }
            }

            /// A frame entered the ring of `nic`, polled by policy `k`.
            pub(crate) fn policy_rx_arrived(
                &mut self,
                k: u8,
                nic: usize,
                now: SimTime,
                s: &mut Scheduler<Event>,
            ) {
                match k {
                    $(kind::$name => {
                        self.with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                            RxPolicy::rx_arrived(p, nic, env)
                        });
                    })*
                    _ => {}
                }
            }

            /// Policy `k`'s periodic timer fired; the next one is scheduled as it says.
            pub(crate) fn policy_timer(&mut self, k: u8, now: SimTime, s: &mut Scheduler<Event>) {
                match k {
                    $(kind::$name => {
                        self.with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                            if let Some(d) = RxPolicy::timer(p, env) {
                                env.s.at(now + d, Event::PolicyTimer(k));
                            }
                        });
                    })*
                    _ => {}
                }
            }

            /// A one-shot timer of policy `k` fired (on the core in hand: the one that
            /// armed it).
            pub(crate) fn policy_alarm(
                &mut self,
                k: u8,
                arg: u16,
                now: SimTime,
                s: &mut Scheduler<Event>,
            ) {
                match k {
                    $(kind::$name => {
                        self.with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                            RxPolicy::alarm(p, arg, env)
                        });
                    })*
                    _ => {}
                }
            }

            /// One step of the user process's busy loop on `nic`, by its policy (`Done`:
            /// the loop is over).
            pub(crate) fn policy_busy_poll(
                &mut self,
                nic: usize,
                start: bool,
                deadline: SimTime,
                opts: crate::model::policy::SocketBusyPoll,
                now: SimTime,
                s: &mut Scheduler<Event>,
            ) -> Step {
                match self.ports[nic].policy_kind {
                    $(kind::$name => self
                        .with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                            RxPolicy::busy_poll(p, nic, start, deadline, opts, env)
                        })
                        .unwrap_or(Step::Done),)*
                    _ => Step::Done,
                }
            }

            /// The policies' first timers, in registry order.
            pub(crate) fn start_policy_timers(&mut self, s: &mut Scheduler<Event>) {
                $(if let Some(t) = self.rx_policies.$name.as_ref().and_then(|p| {
                    <crate::model::policy::$file::$ty as RxPolicy>::first_timer(p)
                }) {
                    s.at(t, Event::PolicyTimer(kind::$name));
                })*
            }

            /// The run starts: the policies wake their always-running tasks, in
            /// registry order.
            pub(crate) fn start_policies(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
                $(self.with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                    RxPolicy::start(p, env)
                });)*
            }

            /// A downstream queue drained a little (a frame left an output wire): the
            /// policies that watch the output hear of it.
            #[inline]
            pub(crate) fn output_drained(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
                $(if <crate::model::policy::$file::$ty as RxPolicy>::WATCHES_OUTPUT {
                    self.with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                        RxPolicy::output_drained(p, env)
                    });
                })*
            }

            /// The dispatcher took software-interrupt `bit`: whether its policy's
            /// handler runs.
            pub(crate) fn policy_swi_begin(&mut self, bit: u32, now: SimTime, s: &mut Scheduler<Event>) -> bool {
                $(if owns(<crate::model::policy::$file::$ty as RxPolicy>::SWI_BITS, bit) {
                    return self
                        .with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                            RxPolicy::swi_begin(p, bit, env)
                        })
                        .unwrap_or(false);
                })*
                false
            }

            /// One step of the handler of software-interrupt `bit`.
            pub(crate) fn policy_swi_step(&mut self, bit: u32, now: SimTime, s: &mut Scheduler<Event>) -> Step {
                $(if owns(<crate::model::policy::$file::$ty as RxPolicy>::SWI_BITS, bit) {
                    return self
                        .with_policy::<crate::model::policy::$file::$ty, _>(now, s, |p, env| {
                            RxPolicy::swi_step(p, bit, env)
                        })
                        .unwrap_or(Step::Done);
                })*
                Step::Done
            }
        }
    };
}

/// A policy in the registry: its index and its place in [`Policies`] (generated by
/// `registry!` for each line).
pub(crate) trait Registered: RxPolicy {
    /// Its registry index.
    const KIND: u8;
    /// Its state in the set.
    fn slot(p: &mut Policies) -> &mut Option<Box<Self>>;
}

impl<M: Shape> Host<M> {
    /// Lend policy `P`'s state to `f` with the host as its environment ([`lend`]):
    /// `None` if no NIC uses it. Every hook the registry routes goes through here.
    #[inline(always)]
    fn with_policy<P: Registered, R>(
        &mut self,
        now: SimTime,
        s: &mut Scheduler<Event>,
        f: impl FnOnce(&mut P, &mut crate::host::env::HostEnv<'_, M>) -> R,
    ) -> Option<R> {
        lend(
            self,
            now,
            s,
            |h| P::slot(&mut h.rx_policies),
            |h| h.ports.iter().any(|p| p.policy_kind == P::KIND),
            f,
        )
    }
}

/// Whether `bit` is one of `bits` (a policy's software-interrupt bits).
#[inline(always)]
fn owns(bits: u32, bit: u32) -> bool {
    bits & bit != 0
}

// The registry: the policies of `crate::model::policy::with_policies!`, one line each there.
crate::model::policy::with_policies!(registry);

impl<M: Shape> Host<M> {
    /// Whether the queue after the receive path is full (`half`: more than half full)
    /// for the frame at the head of `nic`'s RX ring: the screend-like process's queue,
    /// or the output interface's if_snd.
    pub(crate) fn downstream_full(&self, nic: usize, half: bool) -> bool {
        if let Some(u) = &self.user
            && u.consumes_packets()
        {
            return if half {
                u.queue_above_half()
            } else {
                u.queue_full()
            };
        }
        let Some(p) = self.ports[nic].nic().rx_ring.front() else {
            return false;
        };
        let flow = p.flow as usize;
        let q = &self.ports[self.tx_device(self.acct.flow(flow).out_nic, flow)]
            .nic()
            .if_snd;
        if half {
            q.len() * 2 > q.capacity()
        } else {
            q.is_full()
        }
    }
}
