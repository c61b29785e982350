//! The kernel's forwarding path: ipintrq, the software-interrupt dispatcher, ip_forward
//! and if_output.
//!
//! Models 4.4BSD's software-interrupt forwarding path:
//!
//! ```text
//! driver -> IF_ENQUEUE(ipintrq)   bounded by ipintrq_maxlen (IFQ_MAXLEN = 50);
//!                                 full -> drop, counted as an ipintrq drop
//!        -> schednetisr(NETISR_IP)
//! swi_net (software-interrupt level, below every device interrupt): runs the pending
//!   netisr bits lowest first -- NETISR_POLL (0), Linux NET_RX (1), NETISR_IP (2),
//!   NETISR_POLLMORE (31) -- each to completion:
//!   ipintr: loop IF_DEQUEUE(ipintrq); ip_input -> ip_forward -> ip_output -> ether_output
//!           (netisr_per_packet) -> IF_ENQUEUE(if_snd of the output NIC) -> if_start
//! ```
//!
//! Pollers that run the protocol code inline (NAPI, Mogul-Ramakrishnan, busy polling,
//! direct dispatch) pay `netisr_per_packet` themselves and call `RxEnv::forward`. When
//! the model has a screend-like user process, forwarded packets pass through its queue
//! first.
//!
//! Parameters ([`KernelConfig`]) with defaults: `ipintrq_maxlen` 50 and `if_snd_maxlen`
//! 50 (BSD net/if.h IFQ_MAXLEN); `netisr_per_packet` (required); `timeslice_ns` 1e7 (10
//! ms round robin of normal-priority tasks); `scheduler` (default none: that round robin;
//! `cfs`: Linux's fair scheduler, [`crate::model::cpu::cfs`]); `clock` (`hz` 100,
//! `hardclock` 0: the clock
//! interrupt, not simulated unless it has a cost); `polling`, `napi`, `mogul`:
//! system-wide parameters of those policies.
//!
//! Counters: ipintrq and if_snd drops (per flow, see `stats`), `ipintrq.high_water`.
//!
//! Beside it, [`softirq`]: the software-interrupt bits (netisr numbers, NET_RX);
//! [`clock`]: the clock interrupt (hardclock); [`section`]: the section of the
//! forwarding path the cores share.
//!
//! Uses [`crate::sim`], and of the other components the CPU's levels and tasks
//! ([`crate::model::cpu`]), packets, costs and queues, and the policies' kernel
//! parameters ([`crate::model::policy`]); never the host or anything above it.

pub mod clock;
pub mod section;
pub mod softirq;

use crate::model::cost::{Cost, CostParam};
pub use crate::model::cpu::cfs::SchedulerConfig;
use crate::model::cpu::task::Step;
use crate::model::packet::Packet;
use crate::model::policy::freebsd_polling::PollingConfig;
use crate::model::policy::mogul::MogulConfig;
use crate::model::policy::napi::NapiConfig;
use crate::model::queue::BoundedQueue;
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
pub use clock::ClockConfig;
use serde::{Deserialize, Serialize};

/// Kernel parameters as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelConfig {
    /// Maximum length of ipintrq \[packets\] (default 50, IFQ_MAXLEN).
    #[serde(default = "d_ifq")]
    #[schemars(range(min = 1))]
    pub ipintrq_maxlen: u32,
    /// Maximum length of each interface's if_snd \[packets\] (default 50, IFQ_MAXLEN).
    #[serde(default = "d_ifq")]
    #[schemars(range(min = 1))]
    pub if_snd_maxlen: u32,
    /// CPU cost of forwarding one packet: ip_input, ip_forward, ip_output,
    /// ether_output, if_start (required) \[cost\].
    pub netisr_per_packet: CostParam,
    /// Time slice of the round robin between normal-priority tasks (user process,
    /// ksoftirqd) \[ns\] (default 10,000,000: 10 ms, the order of 4.4BSD's and Linux
    /// CFS's scheduling periods).
    #[serde(default = "d_slice")]
    #[schemars(range(min = 1.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub timeslice_ns: f64,
    /// How normal-priority tasks (ksoftirqd, NAPI threads, the user process, the
    /// sender) share a core: `{"kind": "cfs", ...}`, Linux's fair scheduler with its
    /// tunables ([`crate::model::cpu::cfs`]), or `{"kind": "round-robin"}` (default when
    /// absent: round robin by `timeslice_ns`, as 4.4BSD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<SchedulerConfig>,
    /// The clock interrupt (hardclock): rate and cost.
    #[serde(default)]
    pub clock: ClockConfig,
    /// FreeBSD DEVICE_POLLING parameters (kern.polling.*).
    #[serde(default)]
    pub polling: PollingConfig,
    /// Linux NAPI / softirq parameters.
    #[serde(default)]
    pub napi: NapiConfig,
    /// Mogul-Ramakrishnan polling-thread parameters.
    #[serde(default)]
    pub mogul: MogulConfig,
    /// The route lookup's cost per forwarded frame beyond the one `netisr_per_packet`
    /// includes (a table of one route) \[cost\]: it depends on the routing table (its
    /// size and how the lookups walk it; Linux's fib_table_lookup over an LC-trie), so
    /// a scenario gives it per table (default none: the table `netisr_per_packet` was
    /// measured with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_lookup: Option<CostParam>,
    /// A netfilter rule that drops every received frame before routing (`iptables -t
    /// raw -A PREROUTING -j DROP`): each frame's protocol work is ip_rcv up to the hook
    /// and the rule, `cost`, in place of `netisr_per_packet` and the route lookup, and
    /// the frame is dropped there (drop site `netfilter`), never routed, never in the
    /// shared section (default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prerouting_drop: Option<PreroutingDrop>,
    /// A section of the forwarding path that one core at a time executes, entered by
    /// every frame's protocol work ([`section`]; default none: the cores share nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_section: Option<section::SectionConfig>,
}

/// `kernel.prerouting_drop`: a rule in the raw table's PREROUTING chain that drops
/// every frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreroutingDrop {
    /// CPU cost of one frame's protocol work up to and with the rule (ip_rcv, the
    /// netfilter hook, the raw table's rule, kfree_skb) \[cost\] (required).
    pub cost: CostParam,
}

fn d_ifq() -> u32 {
    50
}
fn d_slice() -> f64 {
    10_000_000.0
}

impl KernelConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("ipintrq_maxlen", self.ipintrq_maxlen as u64, 1, "packet");
        p.at_least("if_snd_maxlen", self.if_snd_maxlen as u64, 1, "packet");
        if let Err(e) = self.netisr_per_packet.check() {
            p.push("netisr_per_packet", e);
        }
        p.period_ns("timeslice_ns", self.timeslice_ns);
        if let Some(sch) = &self.scheduler {
            p.at("scheduler", |p| sch.validate(p));
        }
        p.at("clock", |p| self.clock.validate(p));
        p.at("polling", |p| self.polling.validate(p));
        p.at("napi", |p| self.napi.validate(p));
        p.at("mogul", |p| self.mogul.validate(p));
        if let Some(c) = &self.route_lookup
            && let Err(e) = c.check()
        {
            p.push("route_lookup", e);
        }
        if let Some(d) = &self.prerouting_drop
            && let Err(e) = d.cost.check()
        {
            p.push("prerouting_drop.cost", e);
        }
        if let Some(s) = &self.shared_section {
            p.at("shared_section", |p| s.validate(p));
        }
    }
}

pub(crate) use crate::model::kernel::softirq::NETISR_IP;

/// Which handler the software-interrupt dispatcher is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwiWork {
    /// None: the dispatcher picks the next pending bit.
    None,
    /// ipintr.
    Ip,
    /// The handler of a receive policy's bit (netisr_poll, net_rx_action...).
    Policy(u32),
}

/// The IP software interrupt, its input queue, and the dispatcher's state.
#[derive(Clone, Debug)]
pub struct Netisr {
    /// ipintrq (IF_ENQUEUE drops when full).
    pub ipintrq: BoundedQueue<Packet>,
    cost: Cost,
    /// The route lookup's extra cost, if the table is not the one `cost` includes.
    lookup: Option<Cost>,
    /// The cost of a frame a rule drops before routing, if every frame is.
    drop: Option<Cost>,
    current: Option<Packet>,
    rng: StreamRng,
    pending: u32,
    work: SwiWork,
}

impl Netisr {
    /// The netisr from the kernel's parameters, with the kernel's random stream.
    pub fn new(cfg: &KernelConfig, clock_mhz: f64, rng: StreamRng) -> Self {
        Netisr {
            ipintrq: BoundedQueue::new(cfg.ipintrq_maxlen as usize),
            cost: cfg.netisr_per_packet.build(clock_mhz),
            lookup: cfg.route_lookup.as_ref().map(|c| c.build(clock_mhz)),
            drop: cfg
                .prerouting_drop
                .as_ref()
                .map(|d| d.cost.build(clock_mhz)),
            current: None,
            rng,
            pending: 0,
            work: SwiWork::None,
        }
    }

    /// Sample the forwarding cost of one packet (with its route lookup's extra cost), or
    /// with a rule dropping every frame before routing, the cost up to the drop.
    #[inline]
    pub fn forward_cost(&mut self) -> SimTime {
        if let Some(d) = &self.drop {
            return d.sample(&mut self.rng);
        }
        let d = self.cost.sample(&mut self.rng);
        match &self.lookup {
            None => d,
            Some(l) => d + l.sample(&mut self.rng),
        }
    }

    /// Whether a rule drops every frame before routing (`kernel.prerouting_drop`).
    #[inline(always)]
    pub fn drops_before_routing(&self) -> bool {
        self.drop.is_some()
    }

    /// Sample another kernel cost from the kernel's stream.
    pub fn sample(&mut self, c: &Cost) -> SimTime {
        c.sample(&mut self.rng)
    }

    /// schednetisr / raise_softirq: mark `bits` pending.
    pub fn raise(&mut self, bits: u32) {
        self.pending |= bits;
    }

    /// The handler the dispatcher is in.
    pub fn work(&self) -> SwiWork {
        self.work
    }

    /// The dispatcher enters a handler (or none).
    pub fn set_work(&mut self, w: SwiWork) {
        self.work = w;
    }

    /// The handler in progress finished (the dispatcher is in none until it enters the
    /// next): the lowest pending bit, now cleared, or `None` when nothing is pending (the
    /// dispatcher returns).
    pub fn next_bit(&mut self) -> Option<u32> {
        self.work = SwiWork::None;
        if self.pending == 0 {
            return None;
        }
        let bit = 1u32 << self.pending.trailing_zeros();
        self.pending &= !bit;
        Some(bit)
    }

    /// ipintr, first half of a step: the packet whose protocol work just ended (for
    /// ip_forward / if_output).
    pub fn ip_finished(&mut self) -> Option<Packet> {
        self.current.take()
    }

    /// ipintr, second half: the next packet of ipintrq and its forwarding cost, or done.
    pub fn ip_next(&mut self) -> Step {
        match self.ipintrq.pop() {
            Some(p) => {
                self.current = Some(p);
                Step::Run(self.forward_cost())
            }
            None => Step::Done,
        }
    }

    /// The packet ipintr is forwarding, if any.
    pub fn in_hand(&self) -> Option<&Packet> {
        self.current.as_ref()
    }

    /// Packets held by ipintr (the one being forwarded: 0 or 1).
    pub fn held(&self) -> usize {
        self.current.is_some() as usize
    }

    /// One step of the software-interrupt dispatcher (swi_net / do_softirq): go on with
    /// the handler in progress, and when it has finished run the lowest pending bit's
    /// handler, until one needs the CPU ([`Step::Run`]) or nothing is pending
    /// ([`Step::Done`]). The handlers other than ipintr are the policies' (netisr_poll,
    /// netisr_pollmore, net_rx_action), reached through `env`, which also holds the
    /// netisr (a policy's poll may queue on ipintrq while it runs).
    pub fn dispatch(env: &mut impl SwiEnv) -> Step {
        loop {
            let step = match env.netisr().work() {
                SwiWork::None => Step::Done,
                SwiWork::Ip => {
                    if let Some(p) = env.netisr().ip_finished() {
                        env.ip_output(p);
                    }
                    match env.netisr().ip_next() {
                        Step::Run(d) => Step::Run(d + env.shared_section()),
                        step => step,
                    }
                }
                SwiWork::Policy(bit) => env.swi_step(bit),
            };
            if let Step::Run(_) = step {
                return step;
            }
            let Some(bit) = env.netisr().next_bit() else {
                return Step::Done;
            };
            let work = match bit {
                NETISR_IP => SwiWork::Ip,
                bit => {
                    if !env.swi_begin(bit) {
                        // Nothing runs for this bit (netisr_pollmore did its work at
                        // once; net_rx_action does not run in softirq context when
                        // ksoftirqd owns it or the raise was already handled): on to
                        // the next pending bit.
                        continue;
                    }
                    SwiWork::Policy(bit)
                }
            };
            env.netisr().set_work(work);
        }
    }
}

/// What the software-interrupt dispatcher ([`Netisr::dispatch`]) drives: the netisr
/// itself and the handlers of the bits that belong to receive policies.
pub trait SwiEnv {
    /// The netisr (bits, ipintrq, ipintr).
    fn netisr(&mut self) -> &mut Netisr;
    /// ip_forward and if_output of a packet ipintr has finished.
    fn ip_output(&mut self, p: Packet);
    /// A receive policy's `bit` is taken (NETISR_POLL, NET_RX, NETISR_POLLMORE...):
    /// whether its handler now runs ([`SwiEnv::swi_step`] until it is done). A handler
    /// with no CPU time of its own (netisr_pollmore) does its work here and returns
    /// false, as does net_rx_action when it does not run in softirq context (ksoftirqd
    /// owns it, or the raise was already handled).
    fn swi_begin(&mut self, bit: u32) -> bool;
    /// The next step of the handler of `bit`.
    fn swi_step(&mut self, bit: u32) -> Step;
    /// The packet ipintr takes now enters the kernel's shared section
    /// ([`section::SharedSection::enter`]): the CPU time that adds to its protocol work
    /// (zero on a host without one).
    fn shared_section(&mut self) -> SimTime {
        SimTime::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::softirq::{NET_RX, NETISR_POLL, NETISR_POLLMORE};
    use crate::sim::rng::RunKey;

    fn netisr(maxlen: u32) -> Netisr {
        let cfg: KernelConfig = serde_json::from_value(serde_json::json!({
            "ipintrq_maxlen": maxlen,
            "if_snd_maxlen": 50,
            "netisr_per_packet": 5600,
        }))
        .expect("kernel");
        Netisr::new(&cfg, 1000.0, RunKey::single(1).stream("netisr"))
    }

    fn pkt(seq: u64) -> Packet {
        Packet {
            flow: 0,
            bytes: 64,
            seq,
            t_in: SimTime::ZERO,
        }
    }

    #[test]
    fn pending_bits_run_lowest_first_each_once() {
        let mut n = netisr(50);
        n.raise(NETISR_IP | NETISR_POLLMORE);
        n.raise(NETISR_POLL | NET_RX);
        n.raise(NETISR_IP);
        let order: Vec<u32> = std::iter::from_fn(|| n.next_bit()).collect();
        assert_eq!(order, vec![NETISR_POLL, NET_RX, NETISR_IP, NETISR_POLLMORE]);
        assert_eq!(n.work(), SwiWork::None);
    }

    #[test]
    fn ipintr_forwards_the_queue_in_order_and_the_queue_drops_beyond_its_length() {
        let mut n = netisr(2);
        assert!(n.ipintrq.push(pkt(1)).is_ok() && n.ipintrq.push(pkt(2)).is_ok());
        assert_eq!(n.ipintrq.push(pkt(3)), Err(pkt(3)));
        // Taking a packet off frees its place: ipintrq holds 2 waiting plus 1 in hand.
        assert_eq!(n.ip_next(), Step::Run(SimTime::from_ns_f64(5_600.0)));
        assert!(n.ipintrq.push(pkt(3)).is_ok());
        assert_eq!(n.held(), 1);
        assert_eq!(n.ip_finished(), Some(pkt(1)));
        n.ip_next();
        assert_eq!(n.ip_finished(), Some(pkt(2)));
        n.ip_next();
        assert_eq!(n.ip_finished(), Some(pkt(3)));
        assert_eq!(n.ip_next(), Step::Done);
    }

    /// A scripted environment for the dispatcher: netisr_poll takes `poll_steps` bursts
    /// of 2 us and queues a packet on ipintrq in its first one; net_rx_action starts in
    /// softirq context only if `net_rx_starts`; every call is logged.
    struct Swi {
        n: Netisr,
        poll_steps: u32,
        net_rx_starts: bool,
        log: Vec<String>,
    }

    impl SwiEnv for Swi {
        fn netisr(&mut self) -> &mut Netisr {
            &mut self.n
        }
        fn ip_output(&mut self, p: Packet) {
            self.log.push(format!("output {}", p.seq));
        }
        fn swi_begin(&mut self, bit: u32) -> bool {
            match bit {
                NETISR_POLL => {
                    self.log.push("poll begin".into());
                    true
                }
                NET_RX => {
                    self.log.push("net_rx begin".into());
                    self.net_rx_starts
                }
                _ => {
                    self.log.push("pollmore".into());
                    false
                }
            }
        }
        fn swi_step(&mut self, bit: u32) -> Step {
            if bit == NET_RX {
                self.log.push("net_rx step".into());
                return Step::Done;
            }
            self.log.push("poll step".into());
            if self.poll_steps == 0 {
                return Step::Done;
            }
            if self.poll_steps == 2 {
                let _ = self.n.ipintrq.push(pkt(9));
                self.n.raise(NETISR_IP);
            }
            self.poll_steps -= 1;
            Step::Run(SimTime::from_ns_f64(2_000.0))
        }
    }

    #[test]
    fn the_dispatcher_runs_each_pending_handler_to_completion_lowest_bit_first() {
        // Pending: POLL, IP with one packet, POLLMORE. netisr_poll runs two 2 us bursts
        // and queues packet 9 on ipintrq; ipintr then takes packets 1 and 9 at netisr_per_packet (5.6 us) each; pollmore runs last
        // and takes no CPU time of its own.
        let mut env = Swi {
            n: netisr(50),
            poll_steps: 2,
            net_rx_starts: false,
            log: Vec::new(),
        };
        assert!(env.n.ipintrq.push(pkt(1)).is_ok());
        env.n.raise(NETISR_POLL | NETISR_IP | NETISR_POLLMORE);
        let mut bursts = Vec::new();
        while let Step::Run(d) = Netisr::dispatch(&mut env) {
            bursts.push(d.0 / 1_000);
        }
        assert_eq!(bursts, vec![2_000, 2_000, 5_600, 5_600]);
        assert_eq!(
            env.log,
            vec![
                "poll begin",
                "poll step",
                "poll step",
                "poll step",
                "output 1",
                "output 9",
                "pollmore",
            ]
        );
        assert_eq!(env.n.work(), SwiWork::None);
        assert_eq!(Netisr::dispatch(&mut env), Step::Done);
    }

    #[test]
    fn a_net_rx_bit_with_nothing_to_run_is_skipped_without_rerunning_the_last_handler() {
        // net_rx_action finishes (Done) while NET_RX is pending again, but ksoftirqd now
        // owns it (net_rx_begin refuses): the dispatcher goes on to NETISR_IP and does
        // not call net_rx_action again in softirq context (__do_softirq runs each
        // pending bit's handler once, and NET_RX's defers to ksoftirqd).
        let mut env = Swi {
            n: netisr(50),
            poll_steps: 0,
            net_rx_starts: false,
            log: Vec::new(),
        };
        env.n.set_work(SwiWork::Policy(NET_RX));
        env.n.raise(NET_RX | NETISR_IP);
        assert!(env.n.ipintrq.push(pkt(4)).is_ok());
        assert_eq!(
            Netisr::dispatch(&mut env),
            Step::Run(SimTime::from_ns_f64(5_600.0))
        );
        assert_eq!(env.log, vec!["net_rx step", "net_rx begin"]);
        assert_eq!(env.n.work(), SwiWork::Ip);
    }
}
