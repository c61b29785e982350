//! Interrupt handlers, and the classic interrupt-driven receive path (4.4BSD; FreeBSD
//! 2.x-4.x dc(4), xl(4)).
//!
//! When a NIC asserts its line, the driver's handler runs at hardware-interrupt priority:
//!
//! ```text
//! isr_entry        interrupt dispatch, handler entry, mask the chip (IMR = 0),
//!                  read and acknowledge the status register
//! loop:            (policy `interrupt`) while the ring has received frames:
//!   rx_per_packet    rxeof for one frame: unlink the mbuf, refill the descriptor,
//!                    ether_input, IF_ENQUEUE on ipintrq (dropped if full), schednetisr
//! isr_exit         (policy `interrupt`) unmask the chip; return from interrupt
//! ```
//!
//! The loop re-checks the ring after each frame, so frames that arrive while the handler
//! runs are taken in the same invocation and share its fixed cost. Frames that arrive
//! after the last check, during `isr_exit`, find the chip masked: the line is asserted
//! when it is unmasked and the handler runs again at once. Interrupts of other NICs
//! that arrive meanwhile wait (handlers at the same IPL do not nest) and are taken in the
//! order they were raised.
//!
//! The other interrupt-driven policies use the same entry and exit but replace the loop:
//! NAPI schedules a softirq poll, Mogul-Ramakrishnan wakes its thread, the deferred
//! handler enqueues a task; all three leave the chip masked until the poller is done.
//!
//! Parameters ([`DriverConfig`], costs in the forms of [`crate::model::cost`]): `isr_entry`,
//! `rx_per_packet`, `isr_exit` (required), `poll_call` (default 0: one call of the
//! driver's poll routine by a polling policy), `poll_status_check` (default 0: the status
//! register read and acknowledged in a FreeBSD poll with POLL_AND_CHECK_STATUS), `rx_copy_ns_per_byte` (default 0),
//! `isr_idle` (default 0: the handler on a shared line with nothing pending),
//! `tx_per_packet` (default 0: txeof per frame), `max_frames_per_interrupt` (default
//! 0: unbounded loop), `link_watch` (default none, see [`crate::model::nic::link_watch`]).
//!
//! The `interrupt` loop, per step: a received frame while the ring has one (and the
//! frame limit is not reached); else, with a transmit cause, txeof for every sent
//! descriptor; else a receive error or a transmit underrun (dc_init); else exit.
//!
//! Counters: `Nic::interrupts` (handler invocations with work), `Line::passes`
//! (interrupts taken: what `RunStats::interrupts` sums), frames taken by handler loops
//! ([`Handler::packets`], summed into `RunStats::isr_packets`).

use crate::model::cost::{Cost, CostParam};
use crate::model::cpu::task::Step;
use crate::model::nic::link_watch::LinkWatchConfig;
use crate::model::packet::Packet;
use crate::model::policy::env::RxEnv;
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// Driver costs as written in a model file.
///
/// The costs of a path the NIC uses must be given; those of paths it never takes may
/// be left out (see [`crate::config::model::ModelConfig::check_roles`]): a NIC that receives
/// needs `rx_per_packet`, and `isr_entry` and `isr_exit` when its handler runs (an
/// interrupt-driven policy, transmit-completion or statistics-overflow interrupts, or
/// transmit underruns on a bus).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriverConfig {
    /// Fixed cost of one handler invocation up to its first ring check (required when
    /// the NIC's handler runs) \[cost\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr_entry: Option<CostParam>,
    /// Cost of receiving one frame (rxeof): in the handler loop, or in a poll
    /// (required when the NIC receives) \[cost\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_per_packet: Option<CostParam>,
    /// Fixed cost after the last ring check until return from interrupt (required
    /// when the NIC's handler runs) \[cost\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr_exit: Option<CostParam>,
    /// Cost of one call of the driver's poll routine, before its frames (default 0)
    /// \[cost\].
    #[serde(default)]
    pub poll_call: CostParam,
    /// Reading and acknowledging the status register in a poll called with
    /// POLL_AND_CHECK_STATUS (FreeBSD polling, one tick in `reg_frac`; dc_poll reads
    /// CSR5), on top of `poll_call` (default 0) \[cost\].
    #[serde(default)]
    pub poll_status_check: CostParam,
    /// Copy of each received frame into a fresh mbuf (`m_devget`), on top of
    /// `rx_per_packet` [ns per byte of frame] (default 0: the buffer is passed up).
    #[serde(default)]
    pub rx_copy_ns_per_byte: f64,
    /// Handler invocation on a shared line when its device has nothing pending: mask,
    /// read the status register, unmask (default 0) \[cost\].
    #[serde(default)]
    pub isr_idle: CostParam,
    /// Reclaiming one transmitted frame's descriptor and freeing its mbuf (`txeof`),
    /// when the NIC's transmit completions are handled by the driver (default 0) \[cost\].
    #[serde(default)]
    pub tx_per_packet: CostParam,
    /// Reaction to a transmit underrun and periodic link check, dc(4)'s dc_init and
    /// dc_tick (default: none; with a bus, an underrun then only raises the threshold)
    /// (see [`crate::model::nic::link_watch`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_watch: Option<LinkWatchConfig>,
    /// Most frames one handler invocation takes before it returns with work left (the
    /// device then interrupts again); a bound on the handler's loop such as later
    /// dc_intr's 16 rounds or an rx process limit (default 0: loop until the ring is
    /// empty) \[frames\].
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub max_frames_per_interrupt: u32,
}

fn is_zero_u32(x: &u32) -> bool {
    *x == 0
}

impl DriverConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        let zero = CostParam::default();
        for (name, c) in [
            ("isr_entry", self.isr_entry.as_ref().unwrap_or(&zero)),
            (
                "rx_per_packet",
                self.rx_per_packet.as_ref().unwrap_or(&zero),
            ),
            ("isr_exit", self.isr_exit.as_ref().unwrap_or(&zero)),
            ("poll_call", &self.poll_call),
            ("poll_status_check", &self.poll_status_check),
            ("isr_idle", &self.isr_idle),
            ("tx_per_packet", &self.tx_per_packet),
        ] {
            if let Err(e) = c.check() {
                p.push(name, e);
            }
        }
        if let Some(w) = &self.link_watch {
            p.at("link_watch", |p| w.validate(p));
        }
        p.non_negative("rx_copy_ns_per_byte", self.rx_copy_ns_per_byte, "ns/byte");
        if self.rx_copy_ns_per_byte > 1e6 {
            p.push("rx_copy_ns_per_byte", "must be at most 1e6 ns/byte");
        }
    }
}

/// Driver costs ready to sample, with their own random stream.
#[derive(Clone, Debug)]
pub struct DriverCosts {
    pub(crate) entry: Cost,
    pub(crate) rx: Cost,
    pub(crate) exit: Cost,
    pub(crate) poll_call: Cost,
    pub(crate) poll_status_check: Cost,
    pub(crate) copy_ps_per_byte: u64,
    pub(crate) idle: Cost,
    pub(crate) tx: Cost,
    pub rng: StreamRng,
}

impl DriverCosts {
    pub fn new(cfg: &DriverConfig, clock_mhz: f64, rng: StreamRng) -> Self {
        DriverCosts {
            // A cost left out belongs to a path the NIC never takes (checked by
            // `ModelConfig::check_roles`).
            entry: cfg.isr_entry.clone().unwrap_or_default().build(clock_mhz),
            rx: cfg
                .rx_per_packet
                .clone()
                .unwrap_or_default()
                .build(clock_mhz),
            exit: cfg.isr_exit.clone().unwrap_or_default().build(clock_mhz),
            poll_call: cfg.poll_call.build(clock_mhz),
            poll_status_check: cfg.poll_status_check.build(clock_mhz),
            copy_ps_per_byte: (cfg.rx_copy_ns_per_byte * 1e3).round() as u64,
            idle: cfg.isr_idle.build(clock_mhz),
            tx: cfg.tx_per_packet.build(clock_mhz),
            rng,
        }
    }
    pub fn entry(&mut self) -> SimTime {
        self.entry.sample(&mut self.rng)
    }
    /// Receiving one frame of `bytes` bytes: rx_per_packet plus the copy.
    pub fn rx(&mut self, bytes: u32) -> SimTime {
        self.rx.sample(&mut self.rng) + SimTime(self.copy_ps_per_byte * bytes as u64)
    }
    pub fn idle(&mut self) -> SimTime {
        self.idle.sample(&mut self.rng)
    }
    /// txeof for `n` frames.
    pub fn txeof(&mut self, n: u32) -> SimTime {
        let mut t = SimTime::ZERO;
        for _ in 0..n {
            t += self.tx.sample(&mut self.rng);
        }
        t
    }
    pub fn exit(&mut self) -> SimTime {
        self.exit.sample(&mut self.rng)
    }
    pub fn poll_call(&mut self) -> SimTime {
        self.poll_call.sample(&mut self.rng)
    }
    /// The status check of a poll with POLL_AND_CHECK_STATUS.
    pub fn poll_status_check(&mut self) -> SimTime {
        self.poll_status_check.sample(&mut self.rng)
    }
}

/// Where a NIC's handler is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum IsrStep {
    #[default]
    Idle,
    Entry,
    /// xl_stats_update for STATSOFLOW, at the handler's priority.
    Stats,
    Packet(Packet),
    /// One frame and then the exit, as one burst: known in advance that the ring check
    /// after the frame finds nothing (see [`IsrEnv::quiet_until`]).
    PacketExit(Packet),
    /// Entry, the one frame in the ring and the exit, as one burst (see
    /// [`Handler::whole`]); the frame is taken from the ring when the burst ends.
    Whole,
    /// txeof for the transmit completions pending.
    Txeof,
    Exit,
}

/// What the handler does between its entry and its exit: the receive policy's share of
/// the interrupt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HandlerMode {
    /// `interrupt`: the receive loop, txeof, error handling; at the end the chip is
    /// unmasked and the start routine runs.
    Inline,
    /// NAPI, Mogul-Ramakrishnan, deferred: hand the device to its poller and leave it
    /// masked.
    Schedule,
    /// Polling policies: nothing (their interrupts are off).
    #[default]
    Nothing,
}

/// The `interrupt` policy's parameters in a model file: none (`{"kind": "interrupt"}`);
/// its driver's costs are the NIC's `driver`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterruptParams {}

impl InterruptParams {
    /// Nothing to check.
    pub fn validate(&self, _p: &mut Problems) {}
}

/// The `interrupt` policy in the registry. Its work is each NIC's [`Handler`] (the host
/// keeps one per NIC whatever its policy), so it has no state of its own and no hook
/// the host calls: what it is, it says in its constants, as every policy does. Its
/// handler receives inline ([`HandlerMode::Inline`]), reclaims transmit descriptors
/// (txeof), services the chip's receive-error and underrun causes, runs on any core its
/// line is bound to, and does not sample DIM.
#[derive(Clone, Copy, Debug, Default)]
pub struct Interrupt;

impl crate::model::policy::RxPolicy for Interrupt {
    const HANDLER: HandlerMode = HandlerMode::Inline;
    const RECLAIMS_TX: bool = true;
    const MANY_CORES: bool = true;
    const HANDLES_CHIP_ERRORS: bool = true;
    fn serves(p: &crate::model::policy::PolicyConfig) -> bool {
        matches!(p, crate::model::policy::PolicyConfig::Interrupt(_))
    }
    /// A state of size zero when some NIC uses it (nothing to hold).
    fn build(ctx: &crate::model::policy::BuildCtx<'_>) -> Option<Self> {
        ctx.nics_of::<Self>().next().map(|_| Interrupt)
    }
    /// It has no tasks of its own (its handler is the line's `Task::Isr`).
    fn task_name(
        _task: crate::model::cpu::task::PolicyTask,
        _nic_names: &[String],
    ) -> String {
        String::new()
    }
}

/// What an interrupt handler needs beyond [`RxEnv`]: its driver's costs, the chip's
/// interrupt status, the causes other than received frames, the poller it hands work
/// to, and what the host knows in advance about the next frames (for merged bursts).
pub trait IsrEnv: RxEnv {
    /// The driver's costs of `nic` (and their random stream).
    fn costs(&mut self, nic: usize) -> &mut DriverCosts;
    /// Read and acknowledge `nic`'s interrupt status: if the chip asserts, mask it,
    /// count the interrupt and return true.
    fn take_interrupt(&mut self, nic: usize) -> bool;
    /// STATSOFLOW pending on `nic`: harvest the counters and return the cost.
    fn stats_overflow(&mut self, nic: usize) -> Option<SimTime>;
    /// A receive error pending on `nic`: handle it (perhaps a chip reset) and return the
    /// cost.
    fn rx_error(&mut self, nic: usize) -> Option<SimTime>;
    /// A transmit underrun pending on `nic`: handle it and return the cost.
    fn underrun(&mut self, nic: usize) -> Option<SimTime>;
    /// Hand `nic` to its policy's poller (napi_schedule, wake the polling thread,
    /// enqueue the task).
    fn schedule_poll(&mut self, nic: usize);
    /// Whether a check of `nic`'s ring at `t` is certain to find it empty and nothing
    /// else pending (see `Host::quiet_until`).
    fn quiet_until(&self, nic: usize, t: SimTime) -> bool;
    /// Whether nothing can reach `nic`'s ring or raise a cause before `t`.
    fn nothing_arrives(&self, nic: usize, t: SimTime) -> bool;
    /// The size of the one frame in `nic`'s ring, when it holds exactly one and the
    /// handler may look ahead.
    fn lone_frame(&self, nic: usize) -> Option<u32>;
    /// The end of the run.
    fn stop(&self) -> SimTime;
}

/// A NIC's interrupt handler: entry, the policy's share ([`HandlerMode`]), exit.
#[derive(Clone, Debug, Default)]
pub struct Handler {
    nic: usize,
    mode: HandlerMode,
    /// Frame limit per invocation (0: none) and frames taken in the current one.
    max_frames: u32,
    taken: u32,
    step: IsrStep,
    /// Frames taken by the receive loop -- counter.
    pub packets: u64,
}

impl Handler {
    /// The handler of `nic`, for its policy, with its driver's frame limit.
    pub fn new(nic: usize, mode: HandlerMode, max_frames: u32) -> Handler {
        Handler {
            nic,
            mode,
            max_frames,
            ..Handler::default()
        }
    }

    /// Frames held by the step in progress.
    pub fn held(&self) -> usize {
        matches!(self.step, IsrStep::Packet(_) | IsrStep::PacketExit(_)) as usize
    }

    /// The next step; `first` when the line's pass calls the handler.
    pub fn step(&mut self, first: bool, env: &mut impl IsrEnv) -> Step {
        let nic = self.nic;
        if first {
            if !env.take_interrupt(nic) {
                // (The line folds the handlers of devices with nothing pending.)
                return Step::Done;
            }
            self.step = IsrStep::Entry;
            self.taken = 0;
            return Step::Run(env.costs(nic).entry());
        }
        if self.step == IsrStep::Entry
            && let Some(d) = env.stats_overflow(nic)
        {
            self.step = IsrStep::Stats;
            return Step::Run(d);
        }
        match self.step {
            IsrStep::Entry | IsrStep::Stats | IsrStep::Packet(_) | IsrStep::Txeof => {
                if let IsrStep::Packet(p) = self.step {
                    self.packets += 1;
                    env.ipintrq_enqueue(p);
                }
                match self.mode {
                    HandlerMode::Inline => {
                        if let Some(step) = self.inline_work(env) {
                            return step;
                        }
                    }
                    HandlerMode::Schedule => env.schedule_poll(nic),
                    HandlerMode::Nothing => {}
                }
                self.step = IsrStep::Exit;
                Step::Run(env.costs(nic).exit())
            }
            IsrStep::PacketExit(p) => {
                self.packets += 1;
                env.ipintrq_enqueue(p);
                self.end(env)
            }
            IsrStep::Whole => {
                let p = env.rx_pop(nic).expect("the frame seen at entry");
                self.packets += 1;
                env.ipintrq_enqueue(p);
                self.end(env)
            }
            IsrStep::Exit => self.end(env),
            IsrStep::Idle => Step::Done,
        }
    }

    /// The `interrupt` loop's next step: a frame, txeof, a receive error, an underrun;
    /// `None` when there is nothing left (the exit follows).
    fn inline_work(&mut self, env: &mut impl IsrEnv) -> Option<Step> {
        let nic = self.nic;
        let limited = self.max_frames > 0 && self.taken >= self.max_frames;
        if !limited && let Some(p) = env.rx_pop(nic) {
            self.taken += 1;
            let now = env.now();
            let rx = env.costs(nic).rx(p.bytes);
            if env.quiet_until(nic, now + rx) {
                // The check after this frame will find nothing: the exit follows in the
                // same burst (unless the run ends first).
                let saved = env.costs(nic).rng.clone();
                let exit = env.costs(nic).exit();
                if now + rx + exit <= env.stop() {
                    self.step = IsrStep::PacketExit(p);
                    return Some(Step::Run(rx + exit));
                }
                env.costs(nic).rng = saved;
            }
            self.step = IsrStep::Packet(p);
            return Some(Step::Run(rx));
        }
        if let Some(k) = env.take_tx_completions(nic) {
            self.step = IsrStep::Txeof;
            return Some(Step::Run(env.costs(nic).txeof(k)));
        }
        if let Some(d) = env.rx_error(nic) {
            self.step = IsrStep::Txeof;
            return Some(Step::Run(d));
        }
        if let Some(d) = env.underrun(nic) {
            // "TX underrun -- increasing TX threshold" (dc_init first).
            self.step = IsrStep::Txeof;
            return Some(Step::Run(d));
        }
        None
    }

    /// The handler returns: for `interrupt`, unmask the chip and run the start routine
    /// (dc_intr ends with dc_start when if_snd is not empty).
    fn end(&mut self, env: &mut impl IsrEnv) -> Step {
        self.step = IsrStep::Idle;
        if self.mode == HandlerMode::Inline {
            env.irq_unmask(self.nic);
            env.if_start(self.nic);
        }
        Step::Done
    }

    /// The handler, its entry ending at `t`: when the ring holds one frame and nothing
    /// can arrive or be raised before the handler returns
    /// ([`IsrEnv::nothing_arrives`]), its frame and exit are certain and join the
    /// entry's burst. Returns the added CPU time (zero when not certain, the costs'
    /// random stream untouched).
    pub fn whole(&mut self, t: SimTime, env: &mut impl IsrEnv) -> SimTime {
        let nic = self.nic;
        let Some(bytes) = env.lone_frame(nic) else {
            return SimTime::ZERO;
        };
        let saved = env.costs(nic).rng.clone();
        let rx = env.costs(nic).rx(bytes);
        let exit = env.costs(nic).exit();
        // Until the end of the exit, not just the check: the frame stays in the ring
        // until then, where the unmerged handler has already taken it.
        if !env.nothing_arrives(nic, t + rx + exit) {
            env.costs(nic).rng = saved;
            return SimTime::ZERO;
        }
        self.step = IsrStep::Whole;
        rx + exit
    }

    /// Take back a start of the handler folded into a burst that does not happen
    /// after all (the host restores the chip's status and the driver's random stream).
    pub fn cancel(&mut self) {
        self.step = IsrStep::Idle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cpu::task::Task;
    use crate::model::policy::env::mock::{Script, Signal, ns, pkt};
    use crate::model::policy::env::{CostEnv, RingEnv, SchedEnv, StackEnv};
    use crate::sim::rng::RunKey;

    /// A scripted chip and host around [`Script`]: the interrupt status, the driver's
    /// costs (entry 10 us, rx 2 us, exit 1 us, txeof 0.5 us per descriptor), causes.
    struct Chip {
        env: Script,
        costs: DriverCosts,
        asserted: bool,
        interrupts: u32,
        quiet: bool,
        stats: bool,
        polls_scheduled: Vec<usize>,
        /// A frame that reaches the ring when the handler takes the first one (it
        /// arrives while the handler runs).
        arriving: Option<Packet>,
    }

    impl Chip {
        fn new(frames: u64) -> Chip {
            let cfg = DriverConfig {
                isr_entry: Some(CostParam::ns(10_000.0)),
                rx_per_packet: Some(CostParam::ns(2_000.0)),
                isr_exit: Some(CostParam::ns(1_000.0)),
                tx_per_packet: CostParam::ns(500.0),
                ..DriverConfig::default()
            };
            Chip {
                env: Script::new(&[frames]),
                costs: DriverCosts::new(&cfg, 1000.0, RunKey::single(1).stream("driver")),
                asserted: true,
                interrupts: 0,
                quiet: false,
                stats: false,
                polls_scheduled: Vec::new(),
                arriving: None,
            }
        }
    }

    impl RingEnv for Chip {
        fn rx_pop(&mut self, nic: usize) -> Option<Packet> {
            let p = self.env.rx_pop(nic);
            if let Some(a) = self.arriving.take() {
                self.env.rings[nic].push_back(a);
            }
            p
        }
        fn rx_empty(&self, nic: usize) -> bool {
            self.env.rx_empty(nic)
        }
        fn take_tx_completions(&mut self, nic: usize) -> Option<u32> {
            self.env.take_tx_completions(nic)
        }
        fn reclaim_tx(&mut self, nic: usize, max: u32) -> (u32, u32) {
            self.env.reclaim_tx(nic, max)
        }
        fn tx_completion_interrupts(&self, nic: usize) -> bool {
            self.env.tx_completion_interrupts(nic)
        }
        fn if_start(&mut self, nic: usize) {
            self.env.if_start(nic)
        }
        fn downstream_full(&self, nic: usize, half: bool) -> bool {
            self.env.downstream_full(nic, half)
        }
    }

    impl CostEnv for Chip {
        fn rx_cost(&mut self, _nic: usize, bytes: u32) -> SimTime {
            self.costs.rx(bytes)
        }
        fn poll_call_cost(&mut self, _nic: usize) -> SimTime {
            self.costs.poll_call()
        }
        fn status_check_cost(&mut self, _nic: usize) -> SimTime {
            self.costs.poll_status_check()
        }
        fn txeof_cost(&mut self, _nic: usize, n: u32) -> SimTime {
            self.costs.txeof(n)
        }
    }

    impl StackEnv for Chip {
        fn forward_cost(&mut self) -> SimTime {
            self.env.forward_cost()
        }
        fn kernel_cost(&mut self, c: &Cost) -> SimTime {
            self.env.kernel_cost(c)
        }
        fn forward(&mut self, p: Packet) {
            self.env.forward(p)
        }
        fn ipintrq_enqueue(&mut self, p: Packet) {
            self.env.ipintrq_enqueue(p)
        }
        fn raise_softirq(&mut self, bits: u32) {
            self.env.raise_softirq(bits)
        }
        fn raise_softirq_on(&mut self, core: usize, bits: u32) {
            self.env.raise_softirq_on(core, bits)
        }
        fn flow_hash(&self, p: &Packet) -> u32 {
            self.env.flow_hash(p)
        }
        fn backlog_drop(&mut self, p: Packet) {
            self.env.backlog_drop(p)
        }
        fn xdp_drop(&mut self, p: Packet) {
            self.env.xdp_drop(p)
        }
        fn xdp_redirect(&mut self, p: Packet) {
            self.env.xdp_redirect(p)
        }
        fn xdp_tx(&mut self, p: Packet) {
            self.env.xdp_tx(p)
        }
        fn xsk_rcv(&mut self, p: Packet) {
            self.env.xsk_rcv(p)
        }
        fn app_free(&mut self, p: Packet) {
            self.env.app_free(p)
        }
        fn app_tx(&mut self, p: Packet) {
            self.env.app_tx(p)
        }
    }

    impl SchedEnv for Chip {
        fn now(&self) -> SimTime {
            self.env.now()
        }
        fn irq_unmask(&mut self, nic: usize) {
            self.env.irq_unmask(nic)
        }
        fn poll_completed(&mut self, nic: usize) {
            self.env.poll_completed(nic)
        }
        fn wake(&mut self, task: Task) {
            self.env.wake(task)
        }
        fn wake_on(&mut self, core: usize, task: Task) {
            self.env.wake_on(core, task)
        }
        fn core(&self) -> usize {
            self.env.core()
        }
        fn socket_ready(&self) -> bool {
            self.env.socket_ready()
        }
        fn set_alarm(&mut self, after: SimTime, kind: u8, arg: u16) {
            self.env.set_alarm(after, kind, arg)
        }
        fn user_level_contended(&self) -> bool {
            false
        }
    }

    impl IsrEnv for Chip {
        fn costs(&mut self, _nic: usize) -> &mut DriverCosts {
            &mut self.costs
        }
        fn take_interrupt(&mut self, _nic: usize) -> bool {
            let was = std::mem::take(&mut self.asserted);
            self.interrupts += was as u32;
            was
        }
        fn stats_overflow(&mut self, _nic: usize) -> Option<SimTime> {
            std::mem::take(&mut self.stats).then(|| ns(3_000))
        }
        fn rx_error(&mut self, _nic: usize) -> Option<SimTime> {
            None
        }
        fn underrun(&mut self, _nic: usize) -> Option<SimTime> {
            None
        }
        fn schedule_poll(&mut self, nic: usize) {
            self.polls_scheduled.push(nic);
        }
        fn quiet_until(&self, nic: usize, _t: SimTime) -> bool {
            self.quiet && self.env.rx_empty(nic)
        }
        fn nothing_arrives(&self, _nic: usize, _t: SimTime) -> bool {
            self.quiet
        }
        fn lone_frame(&self, nic: usize) -> Option<u32> {
            (self.quiet && self.env.rings[nic].len() == 1).then_some(64)
        }
        fn stop(&self) -> SimTime {
            SimTime::from_ns_f64(1e9)
        }
    }

    /// Run the handler from its call to its return: the steps' lengths.
    fn invoke(h: &mut Handler, chip: &mut Chip) -> Vec<SimTime> {
        let mut runs = Vec::new();
        let mut step = h.step(true, chip);
        while let Step::Run(d) = step {
            runs.push(d);
            step = h.step(false, chip);
        }
        runs
    }

    #[test]
    fn the_interrupt_loop_takes_every_frame_including_one_arriving_meanwhile() {
        let mut chip = Chip::new(2);
        chip.arriving = Some(pkt(7));
        let mut h = Handler::new(0, HandlerMode::Inline, 0);
        let runs = invoke(&mut h, &mut chip);
        // Entry, three frames (the third arrived during the first), exit.
        assert_eq!(
            runs,
            vec![ns(10_000), ns(2_000), ns(2_000), ns(2_000), ns(1_000)]
        );
        assert_eq!(
            chip.env.take_log(),
            vec![
                Signal::Ipintrq(0),
                Signal::Ipintrq(1),
                Signal::Ipintrq(7),
                Signal::Unmask(0),
                Signal::IfStart(0),
            ]
        );
        assert_eq!((h.packets, chip.interrupts, h.held()), (3, 1, 0));
    }

    #[test]
    fn a_frame_limit_ends_the_loop_and_leaves_the_rest_for_the_next_interrupt() {
        let mut chip = Chip::new(5);
        let mut h = Handler::new(0, HandlerMode::Inline, 2);
        assert_eq!(invoke(&mut h, &mut chip).len(), 4);
        assert_eq!(chip.env.rings[0].len(), 3);
        // The unmask at the end is what raises the next interrupt (the host re-asserts).
        assert_eq!(
            chip.env.take_log(),
            vec![
                Signal::Ipintrq(0),
                Signal::Ipintrq(1),
                Signal::Unmask(0),
                Signal::IfStart(0)
            ]
        );
    }

    #[test]
    fn transmit_completions_and_counter_overflow_are_handled_in_the_same_invocation() {
        let mut chip = Chip::new(1);
        chip.env.tx_completions[0] = 4;
        chip.stats = true;
        let mut h = Handler::new(0, HandlerMode::Inline, 0);
        // Entry, the statistics harvest (3 us), the frame, txeof of 4 (4 x 0.5 us), exit.
        assert_eq!(
            invoke(&mut h, &mut chip),
            vec![ns(10_000), ns(3_000), ns(2_000), ns(2_000), ns(1_000)]
        );
    }

    #[test]
    fn a_polled_policy_hands_the_device_over_and_leaves_it_masked() {
        let mut chip = Chip::new(3);
        let mut h = Handler::new(0, HandlerMode::Schedule, 0);
        assert_eq!(invoke(&mut h, &mut chip), vec![ns(10_000), ns(1_000)]);
        assert_eq!(chip.polls_scheduled, vec![0]);
        // No frame taken, no unmask, no start routine.
        assert!(chip.env.take_log().is_empty());
        assert_eq!(chip.env.rings[0].len(), 3);
    }

    #[test]
    fn a_device_not_asserting_costs_nothing() {
        let mut chip = Chip::new(3);
        chip.asserted = false;
        let mut h = Handler::new(0, HandlerMode::Inline, 0);
        assert!(invoke(&mut h, &mut chip).is_empty());
        assert_eq!(chip.interrupts, 0);
    }

    #[test]
    fn when_nothing_can_arrive_the_last_frame_and_the_exit_share_a_burst() {
        // Same total CPU time as the unmerged handler (entry, frame, exit), fewer steps.
        let mut chip = Chip::new(2);
        chip.quiet = true;
        let mut h = Handler::new(0, HandlerMode::Inline, 0);
        assert_eq!(
            invoke(&mut h, &mut chip),
            vec![ns(10_000), ns(2_000), ns(3_000)]
        );
        // The whole handler of a lone frame joins its entry.
        let mut chip = Chip::new(1);
        chip.quiet = true;
        let mut h = Handler::new(0, HandlerMode::Inline, 0);
        assert_eq!(h.step(true, &mut chip), Step::Run(ns(10_000)));
        assert_eq!(h.whole(ns(10_000), &mut chip), ns(3_000));
        assert_eq!(h.step(false, &mut chip), Step::Done);
        assert_eq!(
            chip.env.take_log(),
            vec![Signal::Ipintrq(0), Signal::Unmask(0), Signal::IfStart(0)]
        );
    }
}
