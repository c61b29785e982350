//! One host: CPU, kernel forwarding path and NICs, driven by the offered flows.
//!
//! This is where the components are wired, where tasks get the CPU, and where the event
//! loop lives. It knows nothing of files or JSON: it takes a [`ModelConfig`](crate::config::model::ModelConfig) and a
//! [`RunSpec`] and returns [`RunStats`].
//!
//! ```text
//!  tester --flow--> [NIC in] RX ring --irq--> handler / poller --> ipintrq or inline
//!                                                                    |
//!  tester <--wire-- [NIC out] TX ring <-- if_snd <---- ip_forward <--+
//! ```
//!
//! **Tasks.** Everything that uses the CPU is a [`Task`] at a priority [`Level`]: an
//! interrupt handler, the software-interrupt dispatcher, a kernel thread, a user process.
//! A level runs one task at a time; other tasks of the same level wait in FIFO order
//! (round robin for tasks that yield). A task is a small state machine: when it gets the
//! CPU it returns its first burst ([`Step::Run`]), and at the end of each burst it does
//! that step's action (enqueue a packet, unmask a chip...) and returns the next one, or
//! [`Step::Yield`] / [`Step::Done`]. After every event `Host::reschedule` asks the
//! [`Cpu`](crate::model::cpu::Cpu) which level runs.
//!
//! **What lives here.** `Host` (this file: its fields, the event dispatch, the packet
//! path and scheduling; `run.rs`: the run from its first events to `finish`) owns its parts, each in a file of its own that it routes
//! between: `port.rs` (each interface, `Port`, its parts private, and `Ports`, every
//! NIC's transmit group and wire), `cores.rs` (`Cores`: the core in hand, the parked
//! ones, which line runs where), `events.rs` (`Events`: the slots and arrivals, typed
//! `Source`), `accounting.rs` (`Accounting`: flows, taps, load end and stop, the first
//! broken invariant), `policies.rs` (the receive policies' registry), `attach.rs` (the
//! host's shape: a bus or none). The routing for one mechanism each: `bus.rs` (DMA and
//! the bus), `interrupt.rs` (causes, moderation, lines, handlers), `link_watch.rs`
//! (dc(4)'s link check and resets), `tx_queues.rs` (the transmit path through a port's
//! wire), `user.rs` (the user process), `env.rs` (the host as each component's
//! environment), `trace.rs` (a traced run's recorder). Beside them: `assembly.rs`
//! (building a host from a [`ModelConfig`](crate::config::model::ModelConfig)),
//! `queues.rs` (a multi-queue NIC's devices), `error.rs` (`SimError`, `Invariant`).
//!
//! **What it may use.** [`crate::sim`], [`crate::model`], [`crate::trace`] (the
//! recorder a traced run fills) and [`crate::config`] (the model it is built from);
//! never [`crate::results`] or [`crate::experiment`], which use it.

mod accounting;
mod assembly;
mod attach;
mod bus;
mod cores;
mod env;
mod error;
mod events;
mod interrupt;
mod link_watch;
mod policies;
mod port;
pub mod queues;
mod run;
mod trace;
mod tx_queues;
mod user;

use crate::model::cpu::cputime::{CpuTime, CpuTimes};
pub use crate::model::cpu::task::{Step, Task};
use crate::model::cpu::{Dispatch, LEVELS, Level, Pick, TAGS};
use crate::model::irq::Line;
use crate::model::kernel::Netisr;
use crate::model::kernel::clock::Hardclock;
use crate::model::nic::TxStart;
use crate::model::packet::Packet;
use crate::model::policy::interrupt::Handler;
use crate::model::sender::Sender;
use crate::model::stats::{DropSite, FlowStats};
use crate::model::traffic::FlowConfig;
use crate::model::user::UserProcess;
use crate::sim::engine::{Scheduler, Slot, TimerKey};
use crate::sim::rng::RunKey;
use crate::sim::time::SimTime;
use accounting::{Accounting, LoadSnapshot};
use attach::{Attached, Shape};
use cores::CoreModel;
use cores::Cores;
use events::{Events, Next, Source, WireMisuse};
use port::Ports;
use std::collections::BTreeMap;

pub use assembly::{counter_names, simulate, simulate_traced, simulate_unmerged};
pub use error::{Broken, Invariant, SimError};

/// What to run: the offered flows with their rates, and for how long.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The flows.
    pub flows: Vec<FlowConfig>,
    /// Offered rate of each flow [frames/s].
    pub rates_pps: Vec<f64>,
    /// How long the tester sends.
    pub duration: SimTime,
    /// How long after the end of sending the tester still counts frames received.
    pub drain: SimTime,
    /// Which run of a sweep this is (selects the random streams).
    pub key: RunKey,
    /// Width of the latency-timeline buckets, if a timeline is wanted.
    pub timeline: Option<SimTime>,
    /// Where latency starts (default: the input frame's last bit).
    pub latency_from: crate::model::stats::LatencyFrom,
}

/// The host's timer events, kept in the scheduler's heap: each names its handler, so
/// an event is dispatched once. The one-of-a-kind events (a CPU burst's completion, the
/// end of the burst on the bus, a flow's next frame, a frame's end on a wire) are not
/// events of this type but places of their own (`Host::events`), dispatched by
/// their source (`Host::fire`).
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// An interrupt-moderation timer of NIC `0` expired (a keyed timer: a no-op unless
    /// it is the one the NIC's moderation holds).
    Moderation(u16),
    /// The periodic timer of the receive policy of registry index `0` (FreeBSD
    /// polling's hardclock tick, the end of Mogul-Ramakrishnan's cycle-limit period).
    PolicyTimer(u8),
    /// A one-shot timer of the receive policy of registry index `0`, armed on core `1`,
    /// with the policy's argument `2` (NAPI's per-device hrtimer).
    PolicyAlarm(u8, u8, u16),
    /// The clock interrupt (hardclock).
    Clock,
    /// The periodic statistics harvest of NIC `0` is due (a softclock callout).
    Harvest(u16),
    /// The tester stops sending: snapshot the load-period counters.
    EndOfLoad,
    /// The link-check callout of NIC `0` fired (a keyed timer: a no-op unless it is the
    /// one the link watch holds).
    LinkTick(u16),
}

/// The host during a run. `M` says whether the model has a DMA bus: chosen once when
/// the host is assembled ([`simulate`]), so that a host without one neither stores nor
/// checks a bus (its bus and its NICs' DMA engines are [`attach::Absent`], of size zero).
pub(crate) struct Host<M: Shape> {
    /// The processors: the core in hand, the parked ones, which line runs on which
    /// core, which may have a decision to make ([`cores`]).
    pub(crate) cores: Cores<M::Cores>,
    /// The one-of-a-kind pending events outside the heap, by what they complete:
    /// each core's running CPU burst, the bus burst, each output wire's frame, each
    /// flow's next frame ([`events`]).
    pub(crate) events: Events<M::Cores>,
    /// Each NIC with what is wired to it (device, DMA engines, moderation, link watch,
    /// driver costs, line, policy routing), indexed by NIC.
    pub(crate) ports: Ports<M::Dma>,
    /// Each NIC's interrupt handler (taken out as a whole while one steps).
    pub(crate) handlers: Vec<Handler>,
    /// Interrupt lines, shared or private (taken out while one steps).
    pub(crate) lines: Vec<Line>,
    /// The DMA bus, if modelled.
    pub(crate) bus: M::Bus,
    /// The receive policies' states (see `policies.rs`, the registry).
    pub(crate) rx_policies: policies::Policies,
    pub(crate) user: Option<UserProcess>,
    pub(crate) sender: Option<Sender>,
    /// The books: the flows and their statistics, what watches frames leaving, the
    /// run's end, the first broken invariant ([`accounting`]).
    pub(crate) acct: Accounting,
    /// The clock interrupt, if it is simulated (it costs something).
    hardclock: Option<Hardclock>,
    /// Whether a handler's steps may share a CPU burst when the outcome is certain
    /// (the folded entry, `quiet_until`): fewer events, the same results.
    pub(crate) merge_bursts: bool,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct RunStats {
    /// Sending period.
    pub duration: SimTime,
    /// Per flow: name and statistics.
    pub flows: Vec<(String, FlowStats)>,
    /// Sum over flows.
    pub total: FlowStats,
    /// CPU time per level, then idle, during the sending period, summed over the cores
    /// \[ps\].
    pub cpu_ps: [u64; LEVELS + 1],
    /// The same for each core, on a host with more than one (empty with one) \[ps\].
    pub core_cpu_ps: Vec<[u64; LEVELS + 1]>,
    /// Each core's time in normal-priority kernel threads (ksoftirqd, NAPI threads),
    /// part of its User level in `core_cpu_ps` (empty with one core) \[ps\].
    pub core_ksoftirqd_ps: Vec<u64>,
    /// CPU time of the user process and of ksoftirqd during the sending period \[ps\].
    pub task_ps: [u64; 2],
    /// Each core's CPU time during the sending period in the categories a Linux kernel
    /// accounts (mpstat's `%usr`, `%sys`, `%irq`, `%soft`, `%idle`:
    /// [`crate::model::cpu::cputime`]), one per core, also with one core \[ps\].
    pub core_cputime_ps: Vec<CpuTimes>,
    /// Each core's residency in each idle state at the end of the sending period, by
    /// state name (cpuidle's `stateK/time`; a period still open then included) \[ps\];
    /// empty without idle states (`cpu.idle`).
    pub core_idle_state_ps: Vec<Vec<(String, u64)>>,
    /// Interrupts taken (passes over each line's handler chain; one per handler on a
    /// line of its own) during the sending period.
    pub interrupts: u64,
    /// Frames taken by interrupt handlers over the whole run.
    pub isr_packets: u64,
    /// Interrupts taken over the whole run.
    pub interrupts_all: u64,
    /// Work units done by the user process during the sending period.
    pub user_work: f64,
    /// Policy counters (kern_poll.c's, NAPI's, moderation's...), by name.
    pub counters: BTreeMap<String, f64>,
    /// Latency timeline, when asked for.
    pub timeline: Option<crate::model::timeline::Timeline>,
    /// Events processed.
    pub events: u64,
    /// Simulated time when the run stopped.
    pub end: SimTime,
    /// The sending application, when the model has one.
    pub sender: Option<SenderStats>,
}

/// What the sending application did.
#[derive(Clone, Debug)]
pub struct SenderStats {
    /// Index of its flow in [`RunStats::flows`].
    pub flow: usize,
    /// TCP payload per packet \[bytes\].
    pub payload_bytes: u32,
    /// Its CPU time during the sending period \[ps\].
    pub cpu_ps: u64,
}

/// CPU burst tags of the tasks that share the User level (tag 0: everything else, at
/// the other levels): the user process in its own code and in its socket busy loop (a
/// system call), ksoftirqd, the sending process, a policy's kernel thread at normal
/// priority (threaded NAPI) and a policy's user-space thread (a DPDK lcore).
const TAG_USER: u8 = 1;
const TAG_KSOFTIRQD: u8 = 2;
const TAG_SENDER: u8 = 3;
const TAG_USER_BUSY_POLL: u8 = 4;
const TAG_KTHREAD: u8 = 5;
const TAG_USER_THREAD: u8 = 6;

/// How the kernel accounts each tag's time at the User level (mpstat's categories,
/// [`crate::model::cpu::cputime`]); tag 0 has no User-level time.
const TAG_CPUTIME: [(u8, CpuTime); 6] = [
    (TAG_USER, CpuTime::Usr),
    (TAG_KSOFTIRQD, CpuTime::Soft),
    (TAG_SENDER, CpuTime::Sys),
    (TAG_USER_BUSY_POLL, CpuTime::Sys),
    (TAG_KTHREAD, CpuTime::Sys),
    (TAG_USER_THREAD, CpuTime::Usr),
];

/// The tags of the policies' tasks at the User level (the `cpu` fields' "ksoftirqd"
/// time, counted as software-interrupt time there).
const TAGS_POLICY_THREADS: [u8; 3] = [TAG_KSOFTIRQD, TAG_KTHREAD, TAG_USER_THREAD];

/// The CPU burst tag of `task`'s next burst; `busy_polling`: the user process is in its
/// socket busy loop.
#[inline(always)]
fn tag(task: Task, busy_polling: bool) -> u8 {
    match task {
        Task::UserProc if busy_polling => TAG_USER_BUSY_POLL,
        Task::UserProc => TAG_USER,
        // A policy's task at normal priority: ksoftirqd, a NAPI kthread, an lcore.
        Task::Policy(t) if t.level == Level::User => match policies::task_cputime(t) {
            CpuTime::Soft => TAG_KSOFTIRQD,
            CpuTime::Usr => TAG_USER_THREAD,
            CpuTime::Sys | CpuTime::Irq => TAG_KTHREAD,
        },
        Task::Sender => TAG_SENDER,
        _ => 0,
    }
}

/// Time of `tags` in `tag_ps` \[ps\].
fn tags_ps(tag_ps: &[u64; TAGS], tags: &[u8]) -> u64 {
    tags.iter().map(|&t| tag_ps[t as usize]).sum()
}

/// One core's time in mpstat's categories, from its time per level and per tag.
fn cputimes(level_ps: &[u64; LEVELS + 1], tag_ps: &[u64; TAGS]) -> CpuTimes {
    let user_level = TAG_CPUTIME.map(|(t, c)| (c, tag_ps[t as usize]));
    CpuTimes::split(level_ps, &user_level)
}

impl<M: Shape> Host<M> {
    /// When flow `f`'s pending frame reaches its NIC.
    #[inline(always)]
    pub(crate) fn rx_slot(&self, f: usize) -> Option<Slot> {
        self.events.arrival(f)
    }

    /// When the frame on `nic`'s output wire ends.
    #[inline(always)]
    pub(crate) fn tx_slot(&self, nic: usize) -> Option<Slot> {
        self.events.wire(nic)
    }

    /// Set or clear the end of the frame on device `nic`'s output wire. Its port gives
    /// the wire to one frame at a time, and the slot checks it again where the frame's
    /// end is set: a second frame in the device's slot is a broken invariant, as is a
    /// frame on a device without a wire. The slot is the device's (a queue of a
    /// multi-queue NIC has its own), so across the queues of one port the port's
    /// arbiter is the check ([`crate::model::nic::port::TxPort`], and `wires_broken`
    /// at the end of every run).
    #[inline(always)]
    pub(crate) fn set_tx_slot(&mut self, nic: usize, k: Option<Slot>, now: SimTime) {
        if let Err(e) = self.events.set_wire(nic, k) {
            self.wire_broken(nic, e, now);
        }
    }

    /// Record a broken output-wire invariant (the first broken invariant is reported).
    #[cold]
    #[inline(never)]
    fn wire_broken(&mut self, nic: usize, e: WireMisuse, now: SimTime) {
        let name = self.ports[nic].nic().name.clone();
        if e == WireMisuse::Busy {
            self.acct.broke(Invariant::OneFramePerWire, &name, now, || {
                format!("a second frame started on {name}'s output wire while one was on it")
            });
        } else {
            self.acct
                .broke(Invariant::TransmitWithoutWire, &name, now, || {
                    format!("{name} transmitted, but no flow leaves by it (it has no wire slot)")
                });
        }
    }

    /// Every handler step as its own CPU burst and event (no folded entry, no
    /// look-ahead): for checking that merged bursts change nothing but the event count.
    #[doc(hidden)]
    pub fn unmerged(mut self) -> Self {
        self.merge_bursts = false;
        self.ports.iter_mut().for_each(|p| p.no_lookahead());
        self
    }

    /// Whether no clock tick falls in [`from`, `to`] ([`Hardclock::no_tick_within`]): a
    /// handler burst that starts at `from` then reaches `to` at wall time `to`, whatever
    /// its CPU time, since only the clock preempts it (policies that preempt handlers
    /// turn the look-ahead off).
    #[inline(always)]
    pub(crate) fn no_tick_within(&self, from: SimTime, to: SimTime) -> bool {
        self.hardclock
            .as_ref()
            .is_none_or(|c| c.no_tick_within(from, to))
    }

    /// Whether nothing can change what `nic`'s interrupt handler finds on its next check
    /// of the chip if that check happens at `t`, an empty ring: no frame can reach its
    /// RX ring before then (no frame in its receive FIFO or on the bus, every flow's
    /// next frame due later), and no other cause is pending or can arise (with a bus,
    /// no transmission in its DMA engine or waiting behind the frame on the wire, which
    /// could underrun; with transmit-completion interrupts, an idle transmitter); and
    /// the run does not end before `t` (the end of a merged burst must be an instant
    /// the unmerged run reaches too). The handler then runs its last frame and its exit as one CPU
    /// burst: one event instead of two, same result. Only for the `interrupt` policy,
    /// without statistics counters (whose overflow cause a transmission could raise)
    /// and without a policy that preempts handlers; with a clock interrupt, only when
    /// no tick falls between the burst's start and `t` (the caller's
    /// `Host::no_tick_within`: a tick would preempt the burst and move the check later
    /// in time).
    pub(crate) fn quiet_until(&self, nic: usize, t: SimTime) -> bool {
        self.ports[nic].nic().rx_ring.is_empty() && self.nothing_arrives(nic, t)
    }

    /// `quiet_until` but for the frames already in the ring: nothing new reaches the
    /// ring before `t`, and no other cause is pending or can arise.
    pub(crate) fn nothing_arrives(&self, nic: usize, t: SimTime) -> bool {
        if !self.ports[nic].lookahead() {
            return false;
        }
        let n = self.ports[nic].nic();
        if t > self.acct.stop() || n.rx_error_pending() || n.underrun_pending() {
            return false;
        }
        // A transmit-completion cause can arise, or is pending, only while a frame is in
        // the transmit ring or a sent one's descriptor waits to be reclaimed (`tx_idle`).
        // While the handler runs nothing fills an empty ring: the netisr and processes
        // run below it, and frames left in if_snd with an empty ring wait for a link
        // check (below it too) or an underrun's handling (a cause, refused above).
        if n.tx_completion_interrupts() && !n.tx_idle() {
            return false;
        }
        // On a host with several cores another core's netisr can start a transmission
        // on it while the handler runs (a completion or an underrun to come): only a NIC
        // that no flow leaves by is certain.
        if M::Cores::MANY && self.ports[nic].transmits {
            return false;
        }
        // With a bus, a frame that starts after the one on the wire could underrun.
        if M::PRESENT && n.tx_backlog() {
            return false;
        }
        if self.ports[nic].dma().is_some_and(|d| !d.idle()) {
            return false;
        }
        // A plain loop: the look-ahead asks this about twice per frame, and the
        // iterator's `all` was a call of its own (35 instructions for one flow).
        for &f in &self.ports[nic].rx_flows {
            if self.rx_slot(f).is_some_and(|k| k.at <= t) {
                return false;
            }
        }
        true
    }

    // ------------------------------------------------------------------ scheduling

    /// Whether the task holding the User level should let another normal-priority
    /// task have it now: under round robin, whether one waits (the task's own slice
    /// decides when); under CFS, need_resched ([`crate::model::cpu::cfs::Cfs::need_resched`]).
    pub(crate) fn user_level_contended(&self) -> bool {
        let core = self.cores.hand();
        match core.user_need_resched(self.cores.now()) {
            Some(resched) => resched,
            None => core.runq().contended(Level::User),
        }
    }

    /// Under CFS, whether the task holding the User level should leave the CPU now
    /// (need_resched); always false under round robin.
    pub(crate) fn user_need_resched(&self) -> bool {
        self.cores
            .hand()
            .user_need_resched(self.cores.now())
            .unwrap_or(false)
    }

    /// The CPU runs burst `d`: its completion goes in the CPU slot. A CPU burst that
    /// ends at the same instant as other events ends after them (the software's next
    /// check sees what the hardware did at that instant), whenever its completion was
    /// scheduled: how a handler's steps are split into bursts then cannot reorder
    /// simultaneous events.
    #[inline(always)]
    fn cpu_dispatched(&mut self, d: Dispatch, s: &mut Scheduler<Event>) {
        let at = s.stamp(d.done).at;
        self.events
            .set_cpu(self.cores.on(), Some(Slot { at, seq: u64::MAX }));
        self.cores.hand_mut().dispatched(d);
    }

    /// Give each core's CPU to its highest level with work, beginning tasks as needed.
    #[inline(always)]
    pub(crate) fn reschedule(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        if !M::Cores::MANY {
            if self.cores.hand().cpu().is_dirty() {
                self.reschedule_changed(now, s);
            }
        } else if self.cores.unsettled() {
            self.reschedule_cores(now, s);
        }
    }

    /// [`Host::reschedule`] on a host with several cores: in core order, until none has
    /// a decision left (a task beginning on one core can wake one on another).
    #[inline(never)]
    fn reschedule_cores(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        // The lowest-numbered core with a decision to make, until none has one: only
        // the core in hand and the unsettled ones can have one.
        while self.cores.next_unsettled().is_some() {
            self.reschedule_changed(now, s);
        }
    }

    #[inline(never)]
    fn reschedule_changed(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        loop {
            match self.cores.hand_mut().pick(now) {
                Pick::Idle | Pick::Unchanged => return,
                Pick::Dispatch(d) => {
                    self.cpu_dispatched(d, s);
                    return;
                }
                Pick::Begin(l) => {
                    if self.begin_level(l, now, s) {
                        return;
                    }
                }
            }
        }
    }

    /// Level `l` got the CPU with no task holding it: begin the first ready task that has
    /// work, or clear the level's want. Returns whether its burst was dispatched (nothing
    /// above it has work: no further decision is needed); `false` when the general
    /// decision must be made again (a higher level has work, or no task began).
    fn begin_level(&mut self, l: Level, now: SimTime, s: &mut Scheduler<Event>) -> bool {
        // Each waiting task is asked at most once, so tasks that yield cannot spin.
        for _ in 0..self.cores.hand().waiting(l) {
            let Some(task) = self.cores.hand_mut().begin_next(l, now) else {
                break;
            };
            let step = self.step(task, now, true, s);
            self.cores.hand_mut().begun(l, task, step, now);
            if let Step::Run(d) = step {
                let tag = tag(task, self.user_busy_polling());
                return match self.cores.hand_mut().run(now, l, d, tag) {
                    Some(d) => {
                        self.cpu_dispatched(d, s);
                        true
                    }
                    None => false,
                };
            }
        }
        self.cores.hand_mut().clear(now, l);
        false
    }

    /// The burst at `l` completed.
    fn burst_done(&mut self, l: Level, now: SimTime, s: &mut Scheduler<Event>) {
        let Some(task) = self.cores.hand().current(l) else {
            self.cores.hand_mut().clear(now, l);
            return;
        };
        match self.step(task, now, false, s) {
            // A wake-up while the task runs is kept for when this step sequence ends.
            // When nothing above it has work, the burst runs on at once.
            Step::Run(d) => {
                let tag = tag(task, self.user_busy_polling());
                if let Some(d) = self.cores.hand_mut().run(now, l, d, tag) {
                    self.cpu_dispatched(d, s);
                }
            }
            step => {
                self.cores.hand_mut().ended(now, l, task, step);
            }
        }
    }

    /// Dispatch a task step to the code of its mechanism. `first` is true when the task
    /// has just been given the CPU.
    fn step(&mut self, task: Task, now: SimTime, first: bool, s: &mut Scheduler<Event>) -> Step {
        match task {
            Task::Hardclock => self.clock_step(first),
            Task::Isr(l) => self.line_step(l as usize, now, first, s),
            Task::HarvestImp(n) | Task::HarvestSoft(n) => {
                self.periodic_harvest_step(n as usize, first)
            }
            // The software-interrupt dispatcher ([`Netisr::dispatch`]).
            Task::Swi => Netisr::dispatch(&mut env::HostEnv { h: self, now, s }),
            Task::Policy(t) => self.policy_step(t, now, first, s),
            Task::UserProc => self.user_step(now, first, s),
            Task::Sender => self.sender_step(now, first, s),
            Task::LinkTick(n) => self.link_tick_step(n as usize, now, first, false, s),
            Task::LinkTickImp(n) => self.link_tick_step(n as usize, now, first, true, s),
        }
    }

    /// A step of the clock interrupt: one burst of its cost.
    #[inline(never)]
    fn clock_step(&mut self, first: bool) -> Step {
        match (&mut self.hardclock, first) {
            (Some(c), true) => Step::Run(c.tick_cost()),
            _ => Step::Done,
        }
    }

    /// A step of the sending process ([`Sender::step`]), taken out of the host for it:
    /// nothing its if_output reaches wakes it (the driver frees room in if_snd only when
    /// a frame's end fires, later).
    #[inline(never)]
    fn sender_step(&mut self, now: SimTime, first: bool, s: &mut Scheduler<Event>) -> Step {
        let Some(mut snd) = self.sender.take() else {
            return Step::Done;
        };
        let step = snd.step(first, now, &mut env::HostEnv { h: self, now, s });
        self.sender = Some(snd);
        step
    }

    // ------------------------------------------------------------------ packets

    /// The NIC committed to a transmission: with a bus, fetch it first (the start
    /// depends on the DMA); without, record it and schedule its end.
    #[inline]
    pub(crate) fn transmit(
        &mut self,
        nic: usize,
        tx: TxStart,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        if M::PRESENT {
            self.tx_fetch_begin(nic, tx.pkt, tx.start, now, s);
            return;
        }
        self.deliver(nic, tx.pkt, tx.start, tx.done, s);
        self.set_tx_slot(nic, Some(s.stamp(tx.done)), now);
    }

    /// A frame leaves the host by device `nic` (a multi-queue NIC's transmit queue):
    /// first bit on the output wire at `start`, last at `done`.
    pub(crate) fn deliver(
        &mut self,
        nic: usize,
        pkt: Packet,
        start: SimTime,
        done: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        let ports = &self.ports;
        let next = self.acct.deliver(nic, pkt, start, done, |in_nic, bytes| {
            ports[in_nic].nic().link.bytes_time(bytes)
        });
        if next {
            self.next_arrival(pkt.flow as usize, s);
        }
    }

    /// The end of the kernel's forwarding work for `p`: to the user process's queue if
    /// there is a screend-like consumer, else if_output.
    pub(crate) fn forward(&mut self, p: Packet, now: SimTime, s: &mut Scheduler<Event>) {
        if self.cores.hand().netisr().drops_before_routing() {
            // A netfilter rule before routing (`kernel.prerouting_drop`).
            self.acct.dropped(p.flow, DropSite::Netfilter);
        } else if self.user.as_ref().is_some_and(|u| u.consumes_packets()) {
            self.user_enqueue(p);
        } else {
            self.if_output(p, now, s);
        }
    }

    /// if_output on the flow's output NIC (its transmit queue for the core in hand, on
    /// a multi-queue NIC): if_snd, TX ring, wire.
    pub(crate) fn if_output(&mut self, p: Packet, now: SimTime, s: &mut Scheduler<Event>) {
        let flow = p.flow as usize;
        let out = self.tx_device(self.acct.flow(flow).out_nic, flow);
        self.output_on(out, p, now, s)
    }

    /// Output on transmit device `out` itself (a NIC, or one queue of a multi-queue
    /// NIC): if_snd, TX ring, wire.
    #[inline(always)]
    pub(crate) fn output_on(
        &mut self,
        out: usize,
        p: Packet,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        if let Err(p) = self.queue_output(out, p, now, s) {
            self.acct.dropped(p.flow, DropSite::IfSnd);
        }
    }

    /// The frame on `nic`'s output wire has been sent: free its descriptor, start the
    /// next one, raise a transmit cause if one is due.
    fn tx_end(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        if M::PRESENT && self.ports.at(nic).dma_tx_wire_end() {
            // The wire reached the end of the frame before all of it was in the FIFO:
            // it ran dry on the way.
            self.tx_underrun(nic, now, s);
            return;
        }
        self.count_frame(nic, false, now, s);
        // The next frame, the queue's or another's, goes on the wire when the port says.
        self.queue_wire_end(nic, now, s);
        if self.ports.at(nic).tx_cause(now) {
            self.irq_cause(nic, now, s);
        }
        self.output_drained(now, s);
        self.sender_room(nic);
    }

    /// The driver's start routine run from its interrupt handler (dc_start at the end
    /// of dc_intr): frames waiting in if_snd go to free descriptors.
    pub(crate) fn if_start(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        // With if_snd empty the routine has nothing to move and starts nothing.
        if !self.ports[nic].nic().if_snd.is_empty() {
            self.queue_start(nic, now, s);
        }
        self.sender_room(nic);
    }

    /// The driver restarts `nic`'s transmitter after an underrun (`Nic::tx_restart_on`).
    pub(crate) fn tx_restart(&mut self, nic: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.queue_restart(nic, now, s);
        self.sender_room(nic);
    }

    /// The driver freed room in `nic`'s if_snd: wake the sender if it sleeps on it.
    #[inline]
    fn sender_room(&mut self, nic: usize) {
        let Some(snd) = self.sender.as_mut().filter(|snd| snd.nic == nic) else {
            return;
        };
        if snd.room(self.ports[nic].nic().if_snd.is_full()) {
            self.cores.wake(Task::Sender);
        }
    }

    fn next_arrival(&mut self, flow: usize, s: &mut Scheduler<Event>) {
        if let Some((fr, in_nic)) = self.acct.next_frame(flow) {
            let k = s.stamp(fr.end + self.ports[in_nic].nic().rx_latency);
            self.events.set_arrival(flow, k);
        }
    }

    fn on_rx(&mut self, flow: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let Some((fr, nic)) = self.acct.arrive(flow) else {
            return;
        };
        let pkt = Packet {
            flow: flow as u32,
            bytes: fr.bytes,
            seq: fr.seq,
            t_in: fr.end,
        };
        self.next_arrival(flow, s);
        if M::PRESENT {
            self.dma_rx_in(nic, pkt, now, s);
        } else {
            self.rx_complete(nic, pkt, now, s);
        }
    }

    /// A received frame's DMA completed: it takes an RX descriptor, or is dropped when
    /// the ring is full.
    pub(crate) fn rx_complete(
        &mut self,
        nic: usize,
        pkt: Packet,
        now: SimTime,
        s: &mut Scheduler<Event>,
    ) {
        if self.ports.at(nic).rx_dma(pkt) {
            self.count_frame(nic, true, now, s);
            self.rx_cause(nic, now, pkt.bytes, s);
        } else {
            self.acct.dropped(pkt.flow, DropSite::RxRing);
        }
    }

    /// A frame was received (`rx`) or sent OK on `nic`: count it; a counter nearing
    /// overflow raises STATSOFLOW.
    fn count_frame(&mut self, nic: usize, rx: bool, now: SimTime, s: &mut Scheduler<Event>) {
        if self.ports.at(nic).count_frame(rx) && self.ports[nic].policy.interrupt_driven() {
            self.irq_cause(nic, now, s);
        }
    }

    /// The periodic statistics harvest (xl_stats_update from softclock).
    fn periodic_harvest_step(&mut self, nic: usize, first: bool) -> Step {
        if !first {
            return Step::Done;
        }
        let Some(c) = self.ports.at(nic).harvest(false) else {
            return Step::Done;
        };
        Step::Run(self.cores.hand_mut().kernel_cost(&c))
    }

    // ------------------------------------------------------------------ the loop

    /// Run the next event, found by [`Host::peek_next`]: a slot goes straight to the
    /// component whose event it is, a timer event from the heap to its handler; then
    /// the CPU goes to the level that should run. Inlined into [`Host::run`]'s loop,
    /// the hot path; other loops (a traced run) call [`Host::fire_apart`].
    #[inline(always)]
    fn fire(&mut self, s: &mut Scheduler<Event>, next: Next) {
        let now = next.key.at;
        self.cores.set_now(now);
        if next.is_timer() {
            let (key, ev) = s.pop_keyed().expect("peeked");
            self.timer(now, key, ev, s);
        } else {
            s.advance(next.key);
            self.events.take(next);
            match self.events.source(next) {
                Source::Cpu(c) => self.cpu_done(c, now, s),
                Source::Bus => self.bus_done(now, s),
                Source::Wire(nic) => self.tx_end(nic, now, s),
                Source::Arrival(f) => self.on_rx(f, now, s),
                Source::Timer => {}
            }
        }
        self.reschedule(now, s);
        self.events.settle();
    }

    /// The burst due on core `c` completed (ignored if it is no longer the one
    /// running). The core's slot is not a heap timer: it holds one completion, replaced
    /// at every dispatch (`cpu_dispatched`), so a preempted burst's completion never
    /// fires; the (level, generation) pair it was set for is checked only so that a burst
    /// the CPU dropped without dispatching another cannot end twice.
    #[inline(always)]
    fn cpu_done(&mut self, c: usize, now: SimTime, s: &mut Scheduler<Event>) {
        self.cores.switch_to(c);
        if let Some(level) = self.cores.hand().due_current() {
            self.burst_done(level, now, s);
        }
    }

    /// A timer event from the heap.
    fn timer(&mut self, now: SimTime, key: TimerKey, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::Moderation(nic) => self.moderation_timer(nic as usize, key, now, s),
            Event::PolicyTimer(k) => self.policy_timer(k, now, s),
            Event::PolicyAlarm(k, core, arg) => {
                self.cores.switch_to(core as usize);
                self.policy_alarm(k, arg, now, s)
            }
            Event::LinkTick(nic) => self.link_tick_due(nic as usize, key),
            Event::Clock => {
                if let Some(c) = &self.hardclock {
                    s.at(now + c.period(), Event::Clock);
                    self.cores.wake(Task::Hardclock);
                }
            }
            Event::Harvest(nic) => {
                if let Some(st) = &self.ports[nic as usize].nic().stats {
                    s.at(now + st.period, Event::Harvest(nic));
                    self.cores.wake(match st.periodic_spl {
                        crate::model::nic::counters::Spl::Softclock => Task::HarvestSoft(nic),
                        crate::model::nic::counters::Spl::Splimp => Task::HarvestImp(nic),
                    });
                }
            }
            Event::EndOfLoad => {
                let snap = self.load_snapshot(now);
                self.acct.end_of_load(snap)
            }
        }
    }

    /// [`Host::fire`] as a function of its own, for the loops that are not the hot path.
    #[inline(never)]
    fn fire_apart(&mut self, s: &mut Scheduler<Event>, next: Next) {
        self.fire(s, next);
    }

    /// The flow whose next frame the event found by [`Host::peek_next`] delivers to its
    /// NIC, if it is such an event.
    fn arriving_flow(&self, next: Next) -> Option<usize> {
        match self.events.source(next) {
            Source::Arrival(f) => Some(f),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::ModelConfig;
    use attach::NoBus;
    use cores::OneCore;
    use serde_json::json;

    /// Two NICs `a` -> `b` with small constant costs, one flow at 1,000 frames/s for
    /// 10 ms.
    fn host() -> (Host<NoBus<OneCore>>, RunSpec) {
        let cfg: ModelConfig = serde_json::from_value(json!({
            "cpu": { "clock_mhz": 1000 },
            "kernel": { "ipintrq_maxlen": 50, "if_snd_maxlen": 50, "netisr_per_packet": 5000 },
            "nics": [
                { "name": "a", "driver": { "isr_entry": 1000, "rx_per_packet": 1000, "isr_exit": 1000 } },
                { "name": "b" },
            ],
        }))
        .expect("model");
        let spec = RunSpec {
            flows: vec![serde_json::from_value(json!({ "from": "a", "to": "b" })).expect("flow")],
            rates_pps: vec![1000.0],
            duration: SimTime::from_secs_f64(0.01),
            drain: SimTime::ZERO,
            key: RunKey::single(1),
            timeline: None,
            latency_from: Default::default(),
        };
        (Host::new(&cfg, &spec), spec)
    }

    #[test]
    fn the_model_runs_clean() {
        let (h, spec) = host();
        let st = h.run(&spec).expect("no broken invariant");
        assert_eq!((st.total.sent, st.total.received), (10, 10));
    }

    #[test]
    fn a_one_queue_nic_sends_one_frame_at_a_time_the_next_when_the_first_ends() {
        // Two frames output at once on b, a NIC of one queue: its port gives the first
        // the wire and holds the second in the ring; when the first frame's end fires,
        // the second starts at that instant.
        let (mut h, _) = host();
        let mut s: Scheduler<Event> = Scheduler::new();
        let pkt = |seq| Packet {
            flow: 0,
            bytes: 64,
            seq,
            t_in: SimTime::ZERO,
        };
        h.output_on(1, pkt(0), SimTime(500), &mut s);
        h.output_on(1, pkt(1), SimTime(500), &mut s);
        let g = h.ports.group_of(1).devices();
        assert_eq!(g, 1..2, "a group of one");
        assert_eq!(
            h.ports[1].nic().tx_frames,
            1,
            "one frame committed to the wire"
        );
        let first = h.tx_slot(1).expect("the first frame is on the wire");
        // The loop's part of a wire event: the slot is taken, then the wire's end routed.
        h.events.set_wire(1, None).expect("b has a wire");
        h.tx_end(1, first.at, &mut s);
        assert_eq!(h.ports[1].nic().tx_frames, 2, "the second frame started");
        let second = h.tx_slot(1).expect("the second frame is on the wire");
        // 64 bytes plus 20 of preamble and gap at b's line rate, from the first's end.
        assert_eq!(
            second.at - first.at,
            h.ports[1].nic().link.wire_time(64),
            "back to back"
        );
        assert!(h.acct.take_violation().is_none());
        assert!(h.wires_broken(first.at).is_none());
    }

    #[test]
    fn a_second_frame_on_a_busy_wire_is_an_error_not_a_number() {
        let (mut h, spec) = host();
        let mut s: Scheduler<Event> = Scheduler::new();
        let first = s.stamp(SimTime(1_000));
        h.set_tx_slot(1, Some(first), SimTime(500));
        h.set_tx_slot(1, Some(s.stamp(SimTime(2_000))), SimTime(700));
        match h.finish(&spec, SimTime::ZERO, 0) {
            Err(SimError::Invariant(b)) => {
                assert_eq!(
                    (b.invariant, b.component.as_str(), b.at),
                    (Invariant::OneFramePerWire, "b", SimTime(700))
                );
                assert!(b.detail.contains("second frame started on b's"), "{b}");
                assert!(b.to_string().starts_with("one frame per wire: "), "{b}");
            }
            other => panic!("expected a broken invariant: {other:?}"),
        }
    }

    #[test]
    fn a_ready_queue_beside_a_free_wire_is_an_error_not_ignored() {
        // b, a NIC of one queue, has one frame on its wire and one in its ring; the frame
        // on the wire is cut and the transmitter let go again without its port's
        // knowledge (a lost wakeup: nothing will start the frame that waits). The
        // end-of-run check of its port names the invariant, the NIC and the time.
        let (mut h, spec) = host();
        let mut s: Scheduler<Event> = Scheduler::new();
        for seq in 0..2 {
            let p = Packet {
                flow: 0,
                bytes: 64,
                seq,
                t_in: SimTime::ZERO,
            };
            h.output_on(1, p, SimTime(500), &mut s);
        }
        assert!(h.ports.at(1).nic_mut().tx_abort().is_some());
        h.ports.at(1).nic_mut().tx_halted = false;
        h.ports.at(1).nic_mut().ack_underrun();
        match h.finish(&spec, SimTime(700), 0) {
            Err(SimError::Invariant(b)) => {
                assert_eq!(
                    (b.invariant, b.component.as_str(), b.at),
                    (Invariant::WireWakeup, "b", SimTime(700))
                );
                assert!(b.detail.contains("did not start it"), "{b}");
            }
            other => panic!("expected a broken invariant: {other:?}"),
        }
    }

    #[test]
    fn a_frame_counted_twice_is_an_error_not_a_wrapped_count() {
        // One frame sent, then counted both received and dropped: in_flight_at_end used
        // to wrap to 2^64 - 1.
        let (mut h, spec) = host();
        h.acct.flow_mut(0).source.sent = 1;
        h.acct.flow_mut(0).stats.received = 1;
        h.acct.flow_mut(0).stats.drops.reset = 1;
        match h.finish(&spec, SimTime(3), 0) {
            Err(SimError::Invariant(b)) => {
                assert_eq!(
                    (b.invariant, b.component.as_str(), b.at),
                    (Invariant::FlowConservation, "flow a-b", SimTime(3))
                );
                assert!(
                    b.detail.contains("1 sent but 1 received and 1 dropped"),
                    "{b}"
                )
            }
            other => panic!("expected a broken invariant: {other:?}"),
        }
    }
}
