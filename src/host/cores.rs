//! The host's processors (cores): what the CPU scheduler knows of each and its kernel
//! queues, the state a host has once per core (Linux's per-CPU `softnet_data`,
//! FreeBSD's per-CPU netisr queues): `cpu.cores` of them, one by default.
//!
//! [`Cores`] owns them: the core in hand (whose CPU burst is being handled, whose task
//! steps; a software interrupt raised by the step runs on it), the parked ones, which
//! core each interrupt line is bound to (`cpu.irq_affinity`, or round robin), and which
//! parked cores may have a scheduling decision to make. The scheduling policy itself is
//! in [`crate::model::cpu`] (levels, preemption, time accounting) and
//! [`crate::model::cpu::runq`] (who runs within a level); the host's loop drives them
//! (`Host::reschedule`), asking [`Cores::next_unsettled`] which core to decide next.

use crate::model::cpu::cfs::Cfs;
use crate::model::cpu::idle::Idle;
use crate::model::cpu::runq::RunQueues;
use crate::model::cpu::task::{Step, Task};
use crate::model::cpu::{Cpu, Dispatch, Level, Pick};
use crate::model::kernel::section::SharedSection;
use crate::model::kernel::{NETISR_IP, Netisr};
use crate::model::packet::Packet;
use crate::sim::engine::{SlotTable, SlotTree, Slots};
use crate::sim::time::SimTime;
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

/// One CPU's state during a run: its CPU (which level runs), its run queues (which task
/// of a level), its netisr, and the burst whose end is in the host's CPU slot. Its parts
/// are its own: the host's dispatch asks it what to run and tells it what ran through
/// the operations below, and reads them through [`Core::cpu`], [`Core::runq`],
/// [`Core::netisr`].
pub(crate) struct Core {
    /// Levels, the burst running at each, preemption, CPU time per level.
    cpu: Cpu,
    /// Which task of each level runs and which wait.
    runq: RunQueues,
    /// Level and generation of the CPU burst whose completion is in the host's CPU
    /// slot.
    due: (Level, u32),
    /// Its software interrupts and protocol input queue (ipintrq / backlog).
    netisr: Netisr,
    /// The NIC whose interrupt handler is stepping on it, if one is (see
    /// `Host::line_asserted`).
    isr_running: Option<usize>,
    /// The fair scheduler of its User-level tasks, under Linux's CFS
    /// (`kernel.scheduler`); `None`: round robin.
    cfs: Option<Box<Cfs>>,
}

impl Core {
    /// A core with nothing to run, whose software interrupts use `netisr`, whose idle
    /// periods are spent in `idle`'s states if it has them, and whose User-level tasks
    /// share it under `cfs` if given (round robin otherwise).
    pub(crate) fn new(netisr: Netisr, idle: Option<Idle>, cfs: Option<Cfs>) -> Core {
        Core {
            cpu: idle.map_or_else(Cpu::new, Cpu::with_idle),
            due: (Level::HardIrq, 0),
            runq: RunQueues::default(),
            netisr,
            isr_running: None,
            cfs: cfs.map(Box::new),
        }
    }

    /// Under CFS, whether the task holding the User level should leave the CPU at
    /// `now` ([`Cfs::need_resched`]); `None` under round robin.
    #[inline]
    pub(crate) fn user_need_resched(&self, now: SimTime) -> Option<bool> {
        let cfs = self.cfs.as_deref()?;
        Some(cfs.need_resched(now, self.cpu.level_ps_at(now, Level::User)))
    }

    /// `task`, which was not at its level (asleep) when `slept`, is woken at `now`:
    /// under CFS its placement and the wake-up preemption check.
    #[inline]
    fn cfs_wake(&mut self, task: Task, slept: bool, now: SimTime) {
        if let Some(cfs) = self.cfs.as_deref_mut()
            && task.level() == Level::User
        {
            cfs.wake(task, slept, self.cpu.level_ps_at(now, Level::User));
        }
    }

    /// Under CFS, `task` left the User level at `now` with `step` (asleep unless it
    /// waits again; preempted when it yielded).
    #[inline]
    fn cfs_put(&mut self, l: Level, task: Task, step: Step, now: SimTime) {
        if l == Level::User
            && let Some(cfs) = self.cfs.as_deref_mut()
        {
            let slept = !self.runq.is_ready(l, task);
            cfs.put(
                task,
                self.cpu.level_ps_at(now, l),
                slept,
                step == Step::Yield,
            );
        }
    }

    /// `nic`'s interrupt handler steps on it now ([`Core::isr_end`] when its step is
    /// over).
    #[inline(always)]
    pub(crate) fn isr_begin(&mut self, nic: usize) {
        self.isr_running = Some(nic);
    }

    /// The handler's step is over.
    #[inline(always)]
    pub(crate) fn isr_end(&mut self) {
        self.isr_running = None;
    }

    /// The NIC whose interrupt handler is stepping on it, if one is.
    #[inline(always)]
    pub(crate) fn isr_running(&self) -> Option<usize> {
        self.isr_running
    }

    /// Its CPU, to read.
    #[inline(always)]
    pub(crate) fn cpu(&self) -> &Cpu {
        &self.cpu
    }

    /// Its run queues, to read.
    #[inline(always)]
    pub(crate) fn runq(&self) -> &RunQueues {
        &self.runq
    }

    /// Its netisr, to read.
    #[inline(always)]
    pub(crate) fn netisr(&self) -> &Netisr {
        &self.netisr
    }

    /// Its netisr, lent to the software-interrupt dispatcher for its step.
    #[inline(always)]
    pub(crate) fn netisr_mut(&mut self) -> &mut Netisr {
        &mut self.netisr
    }

    /// The CPU time of a kernel cost `c` on it, drawn from its netisr's random stream.
    #[inline(always)]
    pub(crate) fn kernel_cost(&mut self, c: &crate::model::cost::Cost) -> SimTime {
        self.netisr.sample(c)
    }

    // ------------------------------------------------------------- dispatch

    /// Which level gets the CPU now ([`Cpu::pick`]).
    #[inline(always)]
    pub(crate) fn pick(&mut self, now: SimTime) -> Pick {
        self.cpu.pick(now)
    }

    /// Burst `d` runs: its end is the one in the host's CPU slot.
    #[inline(always)]
    pub(crate) fn dispatched(&mut self, d: Dispatch) {
        self.due = (d.level, d.generation);
    }

    /// The level of the burst whose end is in the CPU slot, if that burst is still the
    /// one running there (not preempted or cut since).
    #[inline(always)]
    pub(crate) fn due_current(&self) -> Option<Level> {
        let (level, generation) = self.due;
        self.cpu.is_current(level, generation).then_some(level)
    }

    /// How many tasks of level `l` wait to begin.
    #[inline(always)]
    pub(crate) fn waiting(&self, l: Level) -> usize {
        self.runq.waiting(l)
    }

    /// The next task of level `l` begins at `now`, if one waits: the first
    /// ([`RunQueues::begin_next`]), or at the User level under CFS the one with the
    /// smallest vruntime ([`Cfs::pick`]).
    #[inline(always)]
    pub(crate) fn begin_next(&mut self, l: Level, now: SimTime) -> Option<Task> {
        if l == Level::User
            && let Some(cfs) = self.cfs.as_deref_mut()
        {
            let task = cfs.pick(self.runq.ready(l))?;
            self.runq.begin_task(l, task);
            cfs.set_curr(task, self.cpu.level_ps_at(now, l), now);
            return Some(task);
        }
        self.runq.begin_next(l)
    }

    /// Task `task` of level `l` began at `now` with `step` ([`RunQueues::begun`]).
    #[inline(always)]
    pub(crate) fn begun(&mut self, l: Level, task: Task, step: Step, now: SimTime) {
        self.runq.begun(l, task, step);
        if !matches!(step, Step::Run(_)) {
            self.cfs_put(l, task, step, now);
        }
    }

    /// The task holding level `l`, if one does.
    #[inline(always)]
    pub(crate) fn current(&self, l: Level) -> Option<Task> {
        self.runq.current(l)
    }

    /// The task holding level `l` runs a burst of CPU time `d`, tagged `tag` for its
    /// CPU-time account ([`Cpu::next_burst`]): the burst dispatched, unless a higher level has
    /// work.
    #[inline(always)]
    pub(crate) fn run(&mut self, now: SimTime, l: Level, d: SimTime, tag: u8) -> Option<Dispatch> {
        self.cpu.next_burst(now, l, d, tag)
    }

    /// Level `l` has nothing to run now.
    #[inline(always)]
    pub(crate) fn clear(&mut self, now: SimTime, l: Level) {
        self.cpu.clear(now, l);
    }

    /// `task`'s step sequence at level `l` ended with `step`: the level is free, and
    /// wants the CPU again if another of its tasks waits ([`RunQueues::ended`]).
    #[inline(always)]
    pub(crate) fn ended(&mut self, now: SimTime, l: Level, task: Task, step: Step) {
        let more = self.runq.ended(l, task, step);
        self.cfs_put(l, task, step, now);
        self.cpu.clear(now, l);
        if more {
            self.cpu.set_want(l);
        }
    }

    /// A handler burst folded with its neighbours is cut to `left` of CPU time from
    /// now ([`crate::model::irq::Line::device_asserted`]).
    #[inline]
    pub(crate) fn cut_handler_burst(&mut self, now: SimTime, left: SimTime) {
        self.cpu.set_burst(now, Level::HardIrq, left, 0);
    }
}

/// The cores of a host with cores `C` (one, or several).
pub(crate) struct Cores<C: CoreModel> {
    /// The core in hand: core `on`. Boxed with several cores, so that a switch moves
    /// two pointers.
    hand: C::Hand,
    /// Every core by number but the one in hand (`None` at `on`).
    parked: Vec<Option<C::Hand>>,
    /// The number of the core in hand.
    on: usize,
    /// The core each interrupt line is bound to, by line.
    line_core: Vec<usize>,
    /// The core each NIC's line is bound to, by NIC (its callouts and splimp work run
    /// there).
    nic_core: Vec<usize>,
    /// The parked cores whose CPU may have a decision to make (bit `c` for core `c`):
    /// those put down with one ([`Cores::switch_to`]) or reached ([`Cores::at`]) since
    /// [`Cores::next_unsettled`] last found them clean. The core in hand is always
    /// looked at.
    unsettled: C::CoreSet,
    /// The section of the forwarding path the cores contend for, if the kernel has one
    /// (`kernel.shared_section`).
    section: Option<SharedSection>,
    /// The time of the event being handled (the instant of a wake-up, for CFS).
    now: SimTime,
}

impl<C: CoreModel> Cores<C> {
    /// The cores, by number (at least one), core 0 in hand; line `l` bound to core
    /// `line_core[l]`, NIC `n` asserting line `nic_line[n]`; the section they contend
    /// for, if any.
    pub(crate) fn new(
        cores: Vec<Core>,
        line_core: Vec<usize>,
        nic_line: &[usize],
        section: Option<SharedSection>,
    ) -> Self {
        let n = cores.len();
        let mut cores = cores.into_iter();
        let hand = C::hand(cores.next().expect("at least one core"));
        Cores {
            hand,
            parked: std::iter::once(None)
                .chain(cores.map(|c| Some(C::hand(c))))
                .collect(),
            on: 0,
            nic_core: nic_line
                .iter()
                .map(|&l| line_core.get(l).copied().unwrap_or(0))
                .collect(),
            line_core,
            unsettled: C::CoreSet::first(n),
            section,
            now: SimTime::ZERO,
        }
    }

    /// The protocol work of one packet begins on the core in hand at `now`: its cost
    /// (`kernel.netisr_per_packet`), plus the wait for and the hold of the shared
    /// section if the kernel has one.
    #[inline(always)]
    pub(crate) fn forward_cost(&mut self, now: SimTime) -> SimTime {
        let d = self.hand.netisr.forward_cost();
        match &mut self.section {
            Some(s) if !self.hand.netisr.drops_before_routing() => d + s.enter(now),
            _ => d,
        }
    }

    /// The packet ipintr takes on the core in hand at `now` enters the shared section:
    /// the CPU time that adds (zero without one).
    #[inline(always)]
    pub(crate) fn enter_section(&mut self, now: SimTime) -> SimTime {
        match &mut self.section {
            Some(s) if !self.hand.netisr.drops_before_routing() => s.enter(now),
            _ => SimTime::ZERO,
        }
    }

    /// The processors' counters: the shared section's if there is one,
    /// `cpu.preemptions` (summed over the cores), under CFS `sched.wakeup_preemptions`,
    /// `sched.tick_preemptions` and `sched.placed_sleepers` (summed over the cores),
    /// and `ipintrq.high_water` (the highest of the cores'), and on a host with several cores the same per core
    /// (`cpu<i>.preemptions`, `cpu<i>.ipintrq.high_water`).
    pub(crate) fn counters(&self, c: &mut BTreeMap<String, f64>) {
        if let Some(s) = &self.section {
            s.counters(c);
        }
        let preemptions: u64 = self.all().map(|k| k.cpu.preemptions).sum();
        c.insert("cpu.preemptions".into(), preemptions as f64);
        if self.get(0).cfs.is_some() {
            let sum = |f: fn(&Cfs) -> u64| -> f64 {
                self.all()
                    .filter_map(|k| k.cfs.as_deref())
                    .map(f)
                    .sum::<u64>() as f64
            };
            c.insert(
                "sched.wakeup_preemptions".into(),
                sum(|s| s.wakeup_preemptions),
            );
            c.insert("sched.tick_preemptions".into(), sum(|s| s.tick_preemptions));
            c.insert("sched.placed_sleepers".into(), sum(|s| s.placed_sleepers));
        }
        let high = self.all().map(|k| k.netisr.ipintrq.high_water).max();
        c.insert("ipintrq.high_water".into(), high.unwrap_or(0) as f64);
        self.idle_counters(c);
        if self.count() > 1 {
            for (i, k) in self.all().enumerate() {
                c.insert(format!("cpu{i}.preemptions"), k.cpu.preemptions as f64);
                let high = k.netisr.ipintrq.high_water as f64;
                c.insert(format!("cpu{i}.ipintrq.high_water"), high);
            }
        }
    }

    /// With idle states (`cpu.idle`), as cpuidle's sysfs files and summed over the
    /// cores: `cpu.idle.<state>.usage` (entries), `cpu.idle.<state>.time_ms`
    /// (residency of the idle periods that ended), `cpu.idle.wakeups` (wake-ups by work)
    /// and `cpu.idle.exit_latency_ms` (the exit latency those wake-ups waited for); with
    /// a cache refill cost, `cpu.idle.cold_wakeups` (wake-ups from a state that flushed
    /// the core's caches) and `cpu.idle.cache_refill_ms` (the CPU time their first work
    /// spent refilling them); on a host with several cores the same per core
    /// (`cpu<i>.idle...`).
    fn idle_counters(&self, c: &mut BTreeMap<String, f64>) {
        let Some(first) = self.get(0).cpu().idle() else {
            return;
        };
        let refill = first.refills();
        let put = |c: &mut BTreeMap<String, f64>, prefix: &str, idle: &[&Idle]| {
            for (s, name) in first.names().iter().enumerate() {
                let usage: u64 = idle.iter().map(|i| i.usage[s]).sum();
                let time: u64 = idle.iter().map(|i| i.time_ps[s]).sum();
                c.insert(format!("{prefix}.idle.{name}.usage"), usage as f64);
                c.insert(format!("{prefix}.idle.{name}.time_ms"), time as f64 / 1e9);
            }
            let wakeups: u64 = idle.iter().map(|i| i.wakeups).sum();
            let exit: u64 = idle.iter().map(|i| i.exit_ps).sum();
            c.insert(format!("{prefix}.idle.wakeups"), wakeups as f64);
            c.insert(format!("{prefix}.idle.exit_latency_ms"), exit as f64 / 1e9);
            if refill {
                let cold: u64 = idle.iter().map(|i| i.cold_wakeups).sum();
                let ps: u64 = idle.iter().map(|i| i.cache_refill_ps).sum();
                c.insert(format!("{prefix}.idle.cold_wakeups"), cold as f64);
                c.insert(format!("{prefix}.idle.cache_refill_ms"), ps as f64 / 1e9);
            }
        };
        let all: Vec<&Idle> = self.all().filter_map(|k| k.cpu.idle()).collect();
        put(c, "cpu", &all);
        if all.len() > 1 {
            for (i, idle) in all.iter().enumerate() {
                put(c, &format!("cpu{i}"), &[idle]);
            }
        }
    }

    /// Frames the kernel's forwarding path holds on every core: in a netisr step and
    /// in ipintrq.
    pub(crate) fn held(&self) -> usize {
        self.all()
            .map(|k| k.netisr.held() + k.netisr.ipintrq.len())
            .sum()
    }

    /// The core in hand.
    #[inline(always)]
    pub(crate) fn hand(&self) -> &Core {
        &self.hand
    }

    /// The core in hand, to change.
    #[inline(always)]
    pub(crate) fn hand_mut(&mut self) -> &mut Core {
        &mut self.hand
    }

    /// The number of the core in hand (0 on a host with one core).
    #[inline(always)]
    pub(crate) fn on(&self) -> usize {
        if C::MANY { self.on } else { 0 }
    }

    /// How many cores.
    pub(crate) fn count(&self) -> usize {
        self.parked.len()
    }

    /// Make core `c` the one in hand; the one put down is remembered as unsettled if
    /// its CPU has a decision to make.
    #[inline(always)]
    pub(crate) fn switch_to(&mut self, c: usize) {
        if C::MANY && c != self.on {
            let next = self.parked[c].take().expect("a parked core");
            let prev = std::mem::replace(&mut self.hand, next);
            if prev.cpu.is_dirty() {
                self.unsettled.insert(self.on);
            }
            self.parked[self.on] = Some(prev);
            self.on = c;
        }
    }

    /// Core `c`, in hand or parked, to change (a parked one is then unsettled).
    #[inline(always)]
    pub(crate) fn at(&mut self, c: usize) -> &mut Core {
        if !C::MANY || c == self.on {
            &mut self.hand
        } else {
            self.unsettled.insert(c);
            self.parked[c].as_deref_mut().expect("a parked core")
        }
    }

    /// Core `c`, in hand or parked.
    #[inline(always)]
    pub(crate) fn get(&self, c: usize) -> &Core {
        if !C::MANY || c == self.on {
            &self.hand
        } else {
            self.parked[c].as_deref().expect("a parked core")
        }
    }

    /// The cores in order of their numbers.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Core> {
        (0..self.parked.len()).map(|c| self.get(c))
    }

    /// The core NIC `n`'s line is bound to (0 on a host with one core).
    #[inline(always)]
    pub(crate) fn nic_core(&self, n: usize) -> usize {
        if !C::MANY {
            return 0;
        }
        self.nic_core[n]
    }

    /// The core line `l` is bound to.
    #[inline(always)]
    pub(crate) fn line_core(&self, l: usize) -> usize {
        if !C::MANY {
            return 0;
        }
        self.line_core[l]
    }

    /// The core `task` runs on: an interrupt line's handlers on the line's core
    /// (`cpu.irq_affinity`), a NIC's callouts and splimp work on its line's core, the
    /// software-interrupt dispatcher on the core that raised it (the one in hand), a
    /// receive policy's tasks on the core that scheduled them (the interrupt's or the
    /// softirq's core), everything else (the clock interrupt, the user process, the
    /// sender) on core 0.
    #[inline(always)]
    pub(crate) fn core_of(&self, task: Task) -> usize {
        if !C::MANY {
            return 0;
        }
        match task {
            Task::Isr(l) => self.line_core[l as usize],
            Task::HarvestImp(n)
            | Task::HarvestSoft(n)
            | Task::LinkTick(n)
            | Task::LinkTickImp(n) => self.nic_core[n as usize],
            Task::Swi | Task::Policy(_) => self.on,
            Task::Hardclock | Task::UserProc | Task::Sender => 0,
        }
    }

    /// Make `task` ready at its level on its core ([`Cores::core_of`]; no effect if it
    /// is running or already waiting there).
    #[inline]
    pub(crate) fn wake(&mut self, task: Task) {
        self.wake_on(self.core_of(task), task)
    }

    /// The time of the event being handled.
    #[inline(always)]
    pub(crate) fn now(&self) -> SimTime {
        self.now
    }

    /// The event being handled happens at `now`.
    #[inline(always)]
    pub(crate) fn set_now(&mut self, now: SimTime) {
        self.now = now;
    }

    /// Make `task` ready at its level on core `c` (no effect if it is running or
    /// already waiting there; under CFS a User-level task that slept is placed and may
    /// preempt the running one).
    #[inline(always)]
    pub(crate) fn wake_on(&mut self, c: usize, task: Task) {
        let now = self.now;
        let core = self.at(c);
        let slept = core.cfs.is_some() && !core.runq.holds(task);
        if core.runq.wake(task) {
            core.cpu.set_want(task.level());
        }
        if slept {
            core.cfs_wake(task, true, now);
        }
    }

    /// schednetisr / raise_softirq on core `c`: mark software-interrupt `bits` pending
    /// on its dispatcher and make the dispatcher ready there.
    #[inline(always)]
    pub(crate) fn raise_softirq(&mut self, c: usize, bits: u32) {
        self.at(c).netisr.raise(bits);
        self.wake_on(c, Task::Swi);
    }

    /// IF_ENQUEUE on the ipintrq of the core in hand and schednetisr(NETISR_IP); `Err`
    /// gives back the packet a full queue refused.
    #[inline(always)]
    pub(crate) fn ipintrq_enqueue(&mut self, p: Packet) -> Result<(), Packet> {
        self.hand.netisr.ipintrq.push(p)?;
        self.raise_softirq(self.on, NETISR_IP);
        Ok(())
    }

    /// Whether some core may have a scheduling decision to make.
    #[inline(always)]
    pub(crate) fn unsettled(&self) -> bool {
        self.hand.cpu.is_dirty() || (C::MANY && self.unsettled.mask() != 0)
    }

    /// The lowest-numbered core with a decision to make, switched to and settled (the
    /// caller makes the decision); the cores found clean on the way are settled too.
    /// `None` when no core has one.
    #[inline(always)]
    pub(crate) fn next_unsettled(&mut self) -> Option<usize> {
        let mut look = self.unsettled.mask() | 1 << self.on;
        let c = loop {
            if look == 0 {
                return None;
            }
            let c = look.trailing_zeros() as usize;
            if self.get(c).cpu.is_dirty() {
                break c;
            }
            self.unsettled.remove(c);
            look &= look - 1;
        };
        self.switch_to(c);
        self.unsettled.remove(c);
        Some(c)
    }
}

/// One core or several.
pub(crate) trait CoreModel: 'static {
    /// Whether the host has more than one core (a constant the compiler folds).
    const MANY: bool;
    /// The core in hand, as the host stores it.
    type Hand: DerefMut<Target = Core>;
    /// The host's slots of one-of-a-kind events: scanned with one core (a handful of
    /// slots), indexed with several (a CPU slot per core, and the many flows such hosts
    /// carry).
    type Slots: Slots;
    /// A set of the host's cores (the parked cores that may have a decision to make):
    /// nothing with one core, a bit mask with several.
    type CoreSet: CoreSet;
    /// The stored form of `c`.
    fn hand(c: Core) -> Self::Hand;
}

/// A host with one core: the core in place.
pub(crate) struct OneCore;

impl CoreModel for OneCore {
    const MANY: bool = false;
    type Hand = InPlace;
    type Slots = SlotTable;
    type CoreSet = ();
    fn hand(c: Core) -> InPlace {
        InPlace(c)
    }
}

/// A host with several cores: the core in hand boxed.
pub(crate) struct ManyCores;

impl CoreModel for ManyCores {
    const MANY: bool = true;
    type Hand = Box<Core>;
    type Slots = SlotTree;
    type CoreSet = u64;
    fn hand(c: Core) -> Box<Core> {
        Box::new(c)
    }
}

/// A set of cores, by number (at most 64).
pub(crate) trait CoreSet {
    /// Cores `0..n`.
    fn first(n: usize) -> Self;
    /// Add core `c`.
    fn insert(&mut self, c: usize);
    /// Remove core `c`.
    fn remove(&mut self, c: usize);
    /// The cores as a mask: bit `c` for core `c`.
    fn mask(&self) -> u64;
}

/// No cores: the set a host with one core keeps, of size zero.
impl CoreSet for () {
    fn first(_: usize) -> Self {}
    #[inline(always)]
    fn insert(&mut self, _: usize) {}
    #[inline(always)]
    fn remove(&mut self, _: usize) {}
    #[inline(always)]
    fn mask(&self) -> u64 {
        0
    }
}

impl CoreSet for u64 {
    fn first(n: usize) -> Self {
        assert!((1..=64).contains(&n), "{n} cores in a set of at most 64");
        u64::MAX >> (64 - n)
    }
    #[inline(always)]
    fn insert(&mut self, c: usize) {
        *self |= 1 << c;
    }
    #[inline(always)]
    fn remove(&mut self, c: usize) {
        *self &= !(1 << c);
    }
    #[inline(always)]
    fn mask(&self) -> u64 {
        *self
    }
}

/// A core stored in place.
pub(crate) struct InPlace(Core);

impl Deref for InPlace {
    type Target = Core;
    #[inline(always)]
    fn deref(&self) -> &Core {
        &self.0
    }
}

impl DerefMut for InPlace {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::KernelConfig;
    use crate::sim::rng::RunKey;

    fn cores(n: usize) -> Cores<ManyCores> {
        let k: KernelConfig = serde_json::from_value(serde_json::json!({
            "ipintrq_maxlen": 50, "if_snd_maxlen": 50, "netisr_per_packet": 5000,
        }))
        .expect("kernel");
        let key = RunKey::single(1);
        let all = (0..n)
            .map(|c| {
                Core::new(
                    Netisr::new(&k, 1000.0, key.stream(&format!("n{c}"))),
                    None,
                    None,
                )
            })
            .collect();
        Cores::new(all, vec![2, 1], &[], None)
    }

    #[test]
    fn the_lowest_numbered_core_with_a_decision_is_decided_first() {
        let mut c = cores(3);
        // Every core starts unsettled; none has a decision, so all are settled.
        assert_eq!(c.next_unsettled(), None);
        assert!(!c.unsettled());
        // A task made ready on a parked core unsettles it; the lowest such core comes
        // first, in hand.
        c.wake_on(2, Task::Swi);
        c.wake_on(1, Task::UserProc);
        assert!(c.unsettled());
        assert_eq!(c.next_unsettled(), Some(1));
        assert_eq!(c.on(), 1);
        assert!(c.hand().runq.waiting(Level::User) > 0);
        // Core 1, put down still undecided, is remembered; core 2 is still waiting.
        c.switch_to(0);
        assert_eq!(c.next_unsettled(), Some(1));
        assert_eq!((c.get(2).cpu.is_dirty(), c.line_core(0)), (true, 2));
        assert_eq!(c.all().count(), 3);
    }
}
