//! A look inside one run: what each CPU level did, how the queues filled, where frames
//! were lost, for a window of simulated time; written as a Chrome trace-event file
//! (`trace.json`, opened by Perfetto's UI and chrome://tracing) and, on request, as
//! pcap captures of the frames entering and leaving the host.
//!
//! Models nothing: it watches the run. The host feeds a [`Recorder`] while the window is
//! open (`Host::run_traced`); outside a traced run there is no recorder and the event
//! loop is the untraced one, so tracing costs nothing when not asked for.
//!
//! Uses [`crate::sim`] (time) and [`crate::model`] (CPU levels and tasks, packets,
//! latency statistics, links), not the host, which feeds it. Nothing below it imports
//! it: [`crate::host`], [`crate::experiment`] and the binary do.
//!
//! **What is recorded** (`[from, to)` of simulated time, `to` cut short by the size
//! limit):
//! - a *slice* per stretch of CPU time a task ran at a level, on one track per level
//!   (`cpu0 hardirq`...), named for the task (the interrupt of a line and its handlers,
//!   the netisr, hardclock, dc_tick, a statistics harvest, a polling thread...). A task
//!   preempted by a higher level ends its slice and starts another when it resumes; an
//!   interrupt slice says which pass over its line it is (`args.pass`) and whether it
//!   begins that pass (`args.begins`), so passes are counted exactly. Consecutive runs of
//!   the same other task with no gap show as one slice;
//! - *counters* (the occupancy of each RX ring, TX ring and `if_snd`, of ipintrq and of
//!   the bus's request queue), a sample whenever one changes;
//! - *instants* for drops (named for the site, `args.frames` lost at that instant) and
//!   chip resets;
//! - a slice per frame on each wire (`<nic> wire in`, `<nic> wire out`);
//! - *flow arrows* for every frame whose sequence number is a multiple of
//!   [`TraceSpec::sample_every`]: from its arrival on the input wire to the CPU slice that
//!   took it from the RX ring, the one that forwarded it from ipintrq (ipintr), and its
//!   transmission; each point at the start of the slice it binds to, so that Perfetto
//!   and Chrome DevTools both draw it (see [`chrome`]).
//!
//! **Several cores.** On a host with more than one core ([`Layout::cores`]) each core is
//! a process of the trace (`cpu<c>`) with its level tracks (`cpu1 hardirq`, `cpu1
//! softirq`...; on NAPI hosts the User level's kernel threads, ksoftirqd and the NAPI
//! threads, on tracks of their own beside the user process's); the host's process keeps
//! the kernel's and the NICs' tracks (each queue of a multi-queue NIC is a device, with
//! its rings and wires) and the counters, with ipintrq and the RPS backlog per core
//! (`cpu<c> ipintrq`, `cpu<c> backlog`). An arrow's point for a frame leaving a queue
//! binds to the slice that ran until then on the core whose CPU burst ended (the host
//! says which, [`Recorder::moved_on`]): the input wire, the core whose interrupt or poll
//! took the frame from its ring, the core whose backlog poll took it after an RPS
//! hand-off, and its transmission on the wire of the transmit queue XPS picked. No two
//! points of an arrow share a time (Chrome DevTools keys an arrow's points by time):
//! where two cores' slices began at one instant, the second core's slice is cut where
//! it took the frame, and its task goes on in a slice that does not begin its
//! activation ([`Recorder::settle`]). The window figures add the CPU time of each core
//! ([`WindowSummary::cores`]).
//!
//! Every slice, counter sample and instant lies inside the window; slices on one track
//! (on several cores: on one core's tracks) never overlap. Time is written in microseconds with six decimals (the file's
//! unit), that is to the picosecond of the simulation.
//!
//! **Window figures** ([`WindowSummary`], `trace-window.json`): from the run's own
//! counters at the window's two ends (CPU time per level, interrupts, drops per site),
//! and per flow the frames that entered and left in the window with the latency of the
//! frames that left, recorded as results.json records them.
//!
//! **pcap** ([`pcap`]): one file per NIC and direction with the frames entering (input
//! wire) or leaving (output wire) the host in the window.
//!
//! **Size.** Everything is held in memory until written; the recorder counts the bytes
//! it will write and stops at [`TraceSpec::limit_bytes`]: the window then ends at that
//! instant and [`TraceOutput::truncated_at`] says so.

pub mod chrome;
pub mod pcap;

use crate::model::cpu::task::{PolicyTask, Task};
use crate::model::cpu::{LEVELS, Level};
use crate::model::packet::Packet;
use crate::model::stats::{LatencyStats, LatencySummary};
use crate::sim::time::SimTime;
use chrome::{EventWriter, Track};
use serde::{Deserialize, Serialize};

/// What to trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpec {
    /// Start of the window (simulated time).
    pub from: SimTime,
    /// End of the window (simulated time), after `from`.
    pub to: SimTime,
    /// Also capture the frames entering and leaving the host as pcap.
    pub pcap: bool,
    /// Most bytes the trace and captures may take; the window ends where they would
    /// exceed it \[bytes\] (default [`TraceSpec::DEFAULT_LIMIT_BYTES`]).
    pub limit_bytes: u64,
    /// Frames whose per-flow sequence number is a multiple of this get flow arrows
    /// (default 16; 0 for none).
    pub sample_every: u64,
}

impl TraceSpec {
    /// Default size limit: 100 MB.
    pub const DEFAULT_LIMIT_BYTES: u64 = 100_000_000;

    /// A window with the default limit and sampling, without pcap.
    pub fn window(from: SimTime, to: SimTime) -> TraceSpec {
        TraceSpec {
            from,
            to,
            pcap: false,
            limit_bytes: Self::DEFAULT_LIMIT_BYTES,
            sample_every: 16,
        }
    }
}

/// What the host tells the recorder about its parts, once.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// NIC names, by index.
    pub nics: Vec<String>,
    /// Each interrupt line's name and the names of the NICs on its chain.
    pub lines: Vec<(String, Vec<String>)>,
    /// Flows: name, input NIC, output NIC.
    pub flows: Vec<(String, usize, usize)>,
    /// The software-interrupt task's name (`netisr`, or `NET_RX softirq` for NAPI).
    pub swi: String,
    /// Whether latency starts at the input frame's first bit (else its last).
    pub latency_from_first_bit: bool,
    /// Each flow's input link (to place a frame's first bit and its time on the wire).
    pub in_links: Vec<crate::model::nic::link::Link>,
    /// The names of the receive policies' tasks (from the host's policy registry,
    /// given the NIC names).
    pub policy_task_name: Option<fn(PolicyTask, &[String]) -> String>,
    /// The number of cores (0 or 1: one, traced as one CPU in the host's process).
    pub cores: usize,
    /// Whether the host's receive policy has User-level kernel threads (ksoftirqd, NAPI
    /// threads) that get tracks of their own on each core (several cores only).
    pub kthreads: bool,
}

/// Where frames are lost, as [`crate::model::stats::DropCounts`] names them.
pub const DROP_SITES: [&str; 10] = [
    "rx_ring",
    "ipintrq",
    "if_snd",
    "user_queue",
    "rx_fifo",
    "tx_underrun",
    "reset",
    "xdp",
    "netfilter",
    "application",
];

/// The host's counters at one instant, as the recorder compares them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    /// CPU time per level, then idle \[ps\].
    pub cpu_ps: [u64; LEVELS + 1],
    /// Interrupts taken (passes over the lines' chains).
    pub interrupts: u64,
    /// Drops per site ([`DROP_SITES`] order), summed over flows.
    pub drops: [u64; 10],
    /// The same per NIC whose track shows them (the input NIC for the RX ring and
    /// FIFO, XDP's and the DPDK application's drops, the output NIC for if_snd and
    /// underruns), then one for the kernel's (ipintrq, the user queue, resets, netfilter).
    pub drops_at: Vec<[u64; 10]>,
    /// Chip resets per NIC.
    pub resets: Vec<u64>,
    /// On a host with several cores: each core's CPU time per level, then idle \[ps\]
    /// (empty with one core).
    pub core_cpu_ps: Vec<[u64; LEVELS + 1]>,
    /// Each core's time in User-level kernel threads (ksoftirqd, NAPI threads), part of
    /// its User time \[ps\] (empty with one core).
    pub core_kthread_ps: Vec<u64>,
}

/// A queue the recorder draws as a counter track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// NIC `0`'s RX descriptor ring.
    RxRing(usize),
    /// NIC `0`'s TX descriptor ring.
    TxRing(usize),
    /// NIC `0`'s send queue.
    IfSnd(usize),
    /// The kernel's IP input queue.
    Ipintrq,
    /// Bursts waiting for or on the bus.
    Bus,
    /// Core `0`'s IP input queue (several cores).
    CoreIpintrq(usize),
    /// Core `0`'s RPS backlog (input_pkt_queue; several cores, NAPI).
    Backlog(usize),
}

/// Where a sampled frame is, as the host sees it after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// In its input NIC's RX ring.
    RxRing,
    /// On ipintrq.
    Ipintrq,
    /// Being forwarded by ipintr (the netisr's step holds it).
    Ipintr,
    /// On core `0`'s RPS backlog (after a hand-off by RPS).
    Backlog(usize),
    /// Anywhere else (a FIFO, a user queue, if_snd, the TX ring, dropped).
    Elsewhere,
}

/// A frame followed with flow arrows.
#[derive(Clone, Debug)]
struct Followed {
    flow: u32,
    seq: u64,
    /// Where it was at the last look (`None`: not yet in the RX ring).
    place: Option<Place>,
    /// Points of its arrow: track and time.
    points: Vec<(Track, SimTime)>,
    /// It has started on its output wire, or a later frame of its flow has (it was
    /// dropped): after the next look it is no longer looked for in the host
    /// ([`Recorder::settle`]).
    delivered: bool,
}

/// A frame captured for pcap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Captured {
    /// Capture time: the instant the tester's latency uses (the input frame's last or
    /// first bit; the output frame's first bit).
    pub at: SimTime,
    /// NIC it entered or left by.
    pub nic: usize,
    /// Leaving the host (else entering).
    pub out: bool,
    /// The frame.
    pub pkt: Packet,
    /// The tester's time stamp carried in the frame (the input capture time).
    pub stamp: SimTime,
    /// Output NIC of its flow (the frame's destination address).
    pub out_nic: usize,
    /// Input NIC of its flow (the frame's source address).
    pub in_nic: usize,
}

/// Per flow, what entered and left in the window.
#[derive(Clone, Debug, Default)]
struct FlowWindow {
    frames_in: u64,
    frames_out: u64,
    latency: LatencyStats,
}

/// The CPU slice open on a core's CPU (at most one per core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Open {
    level: Level,
    task: Task,
    pass: u64,
    start: SimTime,
    begins: bool,
}

/// Records one window of one run.
#[derive(Debug)]
pub struct Recorder {
    spec: TraceSpec,
    layout: Layout,
    out: EventWriter,
    /// The window ended here (`to`, or earlier when the size limit was reached).
    end: Option<SimTime>,
    truncated: Option<SimTime>,
    /// Per core, the slice open on its CPU.
    open: Vec<Option<Open>>,
    /// Per core and level: the task and pass of its last slice (to tell a resumption
    /// from a new activation).
    last_on_level: Vec<[Option<(Task, u64)>; LEVELS]>,
    queues: Vec<(Queue, usize)>,
    last: Counters,
    first: Counters,
    followed: Vec<Followed>,
    /// Followed frames that left the host in the window, their arrows drawn when the
    /// window closes (kept apart so that each event looks only for frames still
    /// inside: the look costs the frames in flight, not all the window's).
    left: Vec<Followed>,
    next_flow_id: u64,
    flows: Vec<FlowWindow>,
    captured: Vec<Captured>,
    pcap_bytes: u64,
    slices: u64,
    /// CPU slices written per core.
    core_slices: Vec<u64>,
    /// Points to bind once the cores' CPUs are known ([`Recorder::settle`]): core,
    /// flow, sequence number.
    deferred: Vec<(usize, u32, u64)>,
    /// End of the last frame drawn on each NIC's input wire.
    wire_in_end: Vec<SimTime>,
    /// Frames committed to an output wire while the window's end may still move (the
    /// size limit): written when it is known.
    leaving: Vec<(Packet, usize, SimTime, SimTime, SimTime)>,
}

/// Everything a traced run recorded.
#[derive(Debug)]
pub struct TraceOutput {
    /// `trace.json`: a Chrome trace-event file (JSON object format).
    pub json: Vec<u8>,
    /// The pcap files, by name (`<nic>-in.pcap`, `<nic>-out.pcap`), when asked for.
    pub pcaps: Vec<(String, Vec<u8>)>,
    /// The window's figures (`trace-window.json`).
    pub window: WindowSummary,
    /// Where the size limit cut the window short, if it did.
    pub truncated_at: Option<SimTime>,
}

/// The figures of a trace window (`trace-window.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowSummary {
    /// Start of the window \[s\].
    pub from_s: f64,
    /// End of the window \[s\] (earlier than asked when the size limit cut it).
    pub to_s: f64,
    /// End asked for \[s\].
    pub asked_to_s: f64,
    /// Whether the size limit cut the window short.
    pub truncated: bool,
    /// CPU time per level in the window \[us\], by level name, and `idle`.
    pub cpu_us: std::collections::BTreeMap<String, f64>,
    /// CPU time per level in the window \[ps\] (exact), by level name, and `idle`.
    pub cpu_ps: std::collections::BTreeMap<String, u64>,
    /// Interrupts taken in the window (passes over the lines' chains).
    pub interrupts: u64,
    /// Frames lost in the window, by site.
    pub drops: std::collections::BTreeMap<String, u64>,
    /// Chip resets in the window, by NIC.
    pub resets: std::collections::BTreeMap<String, u64>,
    /// Per flow.
    pub flows: Vec<FlowWindowSummary>,
    /// Per core, on a host with several cores (absent with one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<CoreWindowSummary>,
    /// Trace events written (slices, counter samples, instants, arrows, metadata).
    pub events: u64,
    /// CPU slices written.
    pub slices: u64,
}

/// One core's figures in a trace window (several cores).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoreWindowSummary {
    /// The core's number (its process in the trace is `cpu<core>`).
    pub core: usize,
    /// CPU time per level in the window \[ps\] (exact), by level name, and `idle`.
    pub cpu_ps: std::collections::BTreeMap<String, u64>,
    /// Of its `user` time, the User-level kernel threads' (ksoftirqd and NAPI threads)
    /// \[ps\].
    pub kthread_ps: u64,
    /// CPU slices written on its tracks.
    pub slices: u64,
}

/// One flow's figures in a trace window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowWindowSummary {
    /// Flow name.
    pub name: String,
    /// Frames whose last bit reached the input port in the window (whatever became of
    /// them).
    pub frames_in: u64,
    /// Frames whose first bit left the output port in the window.
    pub frames_out: u64,
    /// Latency of the frames that left in the window \[us\], computed as results.json
    /// computes it.
    pub latency: LatencySummary,
}

/// Track name of a CPU level.
pub fn level_track(l: Level) -> &'static str {
    match l {
        Level::Clock => "cpu0 clock",
        Level::HardIrq => "cpu0 hardirq",
        Level::SoftIrq => "cpu0 softirq",
        Level::SoftClock => "cpu0 softclock",
        Level::Kernel => "cpu0 kernel threads",
        Level::User => "cpu0 user",
        Level::IdleLoop => "cpu0 idle loop",
    }
}

/// Name of a core's track on a host with several cores (`cpu1 hardirq`, `cpu1
/// ksoftirqd`...).
pub fn core_track_name(t: Track) -> String {
    match t {
        Track::Core { core, level } => {
            let one = level_track(level);
            format!("cpu{core}{}", &one[4..])
        }
        Track::Ksoftirqd(c) => format!("cpu{c} ksoftirqd"),
        Track::NapiThreads(c) => format!("cpu{c} NAPI threads"),
        _ => String::new(),
    }
}

/// Key of a level in [`WindowSummary::cpu_ps`].
pub fn level_key(l: Level) -> &'static str {
    match l {
        Level::Clock => "clock",
        Level::HardIrq => "hardirq",
        Level::SoftIrq => "softirq",
        Level::SoftClock => "softclock",
        Level::Kernel => "kernel",
        Level::User => "user",
        Level::IdleLoop => "idle_loop",
    }
}

impl Recorder {
    /// A recorder for `spec`'s window of a host laid out as `layout`, watching
    /// `queues`.
    pub fn new(spec: TraceSpec, layout: Layout, queues: Vec<Queue>) -> Recorder {
        let mut out = EventWriter::new(&layout);
        for q in &queues {
            out.counter_name(*q, &layout);
        }
        let nflows = layout.flows.len();
        let ncores = layout.cores.max(1);
        Recorder {
            spec,
            out,
            end: None,
            truncated: None,
            open: vec![None; ncores],
            last_on_level: vec![[None; LEVELS]; ncores],
            core_slices: vec![0; ncores],
            deferred: Vec::new(),
            queues: queues.into_iter().map(|q| (q, usize::MAX)).collect(),
            last: Counters::default(),
            first: Counters::default(),
            followed: Vec::new(),
            left: Vec::new(),
            next_flow_id: 1,
            flows: vec![FlowWindow::default(); nflows],
            captured: Vec::new(),
            pcap_bytes: 0,
            slices: 0,
            wire_in_end: vec![SimTime::ZERO; layout.nics.len()],
            leaving: Vec::new(),
            layout,
        }
    }

    /// The window to record.
    pub fn spec(&self) -> &TraceSpec {
        &self.spec
    }

    /// The window opens with the host's counters `c` and the task holding each level
    /// of each core (running or preempted) with its pass: `(core, level, task, pass)`;
    /// their slices in the window continue activations begun before it.
    pub fn begin(&mut self, c: Counters, holding: &[(usize, Level, Task, u64)]) {
        self.first = c.clone();
        self.last = c;
        for &(core, l, task, pass) in holding {
            self.last_on_level[core][l as usize] = Some((task, pass));
        }
    }

    /// Whether the size limit has been reached: the window must end now.
    pub fn full(&self) -> bool {
        self.out.bytes() + self.pcap_bytes > self.spec.limit_bytes
    }

    /// The CPU after an event at `now`: `running` is the level that has it and the
    /// task holding that level, with its pass over its line for an interrupt (else 0).
    pub fn cpu(&mut self, now: SimTime, running: Option<(Level, Task, u64)>) {
        self.cpu_on(0, now, running)
    }

    /// The CPU of core `core` after an event at `now` (see [`Recorder::cpu`]).
    pub fn cpu_on(&mut self, core: usize, now: SimTime, running: Option<(Level, Task, u64)>) {
        self.cpu_from(core, now, now, running)
    }

    /// [`Recorder::cpu_on`] for a core whose running level starts work only at `start`
    /// (after `now` while the core wakes from an idle state: the exit latency is not the
    /// task's time, and a slice preempted before `start` is not written).
    pub fn cpu_from(
        &mut self,
        core: usize,
        now: SimTime,
        start: SimTime,
        running: Option<(Level, Task, u64)>,
    ) {
        let key = |o: &Open| (o.level, o.task, o.pass);
        if self.open[core].as_ref().map(key) == running {
            return;
        }
        self.close_slice(core, now);
        if let Some((level, task, pass)) = running {
            // A resumption after a preemption, or the window's first look (the task
            // began before the window), continues the activation; anything else
            // begins one.
            let begins = self.last_on_level[core][level as usize] != Some((task, pass));
            self.open[core] = Some(Open {
                level,
                task,
                pass,
                start: start.max(now),
                begins,
            });
        }
    }

    fn close_slice(&mut self, core: usize, now: SimTime) {
        let Some(o) = self.open[core].take() else {
            return;
        };
        // A slice of no length is not written: if it began an activation, the next
        // slice of that activation begins it instead.
        if now > o.start || !o.begins {
            self.last_on_level[core][o.level as usize] = Some((o.task, o.pass));
        }
        if now > o.start {
            let name = self.task_name(o.task);
            let pass = matches!(o.task, Task::Isr(_)).then_some(o.pass);
            let track = self.cpu_track(core, &o, &name);
            self.out.slice(track, &name, o.start, now, pass, o.begins);
            self.slices += 1;
            self.core_slices[core] += 1;
        }
    }

    /// The track of a slice of `o` named `name` on core `core`: its level's (one core:
    /// the host's level tracks); on several cores the core's, a User-level kernel
    /// thread of the receive policy on the core's ksoftirqd or NAPI-thread track.
    fn cpu_track(&self, core: usize, o: &Open, name: &str) -> Track {
        if self.layout.cores <= 1 {
            return Track::Level(o.level);
        }
        match o.task {
            Task::Policy(_) if o.level == Level::User && self.layout.kthreads => {
                if name.starts_with("ksoftirqd") {
                    Track::Ksoftirqd(core)
                } else {
                    Track::NapiThreads(core)
                }
            }
            _ => Track::Core {
                core,
                level: o.level,
            },
        }
    }

    /// The slice running on core `core` just before the current event, as an arrow
    /// binds to it: its track and its start (it is written, as it has length by `now`).
    fn responsible(&self, core: usize, now: SimTime) -> Option<(Track, SimTime)> {
        let o = self.open[core].as_ref()?;
        if now <= o.start {
            return None;
        }
        let name = self.task_name(o.task);
        Some((self.cpu_track(core, o, &name), o.start))
    }

    fn task_name(&self, t: Task) -> String {
        let nic = |n: u16| {
            self.layout
                .nics
                .get(n as usize)
                .cloned()
                .unwrap_or_default()
        };
        match t {
            Task::Hardclock => "hardclock".into(),
            Task::Isr(l) => match self.layout.lines.get(l as usize) {
                Some((name, chain)) => format!("interrupt {name}: {}", chain.join(", ")),
                None => "interrupt".into(),
            },
            Task::HarvestImp(n) => format!("{} statistics harvest (splimp)", nic(n)),
            Task::HarvestSoft(n) => format!("{} statistics harvest (softclock)", nic(n)),
            Task::Swi => self.layout.swi.clone(),
            Task::Policy(t) => match self.layout.policy_task_name {
                Some(name) => name(t, &self.layout.nics),
                None => "policy task".into(),
            },
            Task::UserProc => "user process".into(),
            Task::Sender => "sender".into(),
            Task::LinkTick(n) => format!("{} dc_tick", nic(n)),
            Task::LinkTickImp(n) => format!("{} dc_tick (splimp)", nic(n)),
        }
    }

    /// A queue's occupancy after an event at `now`.
    pub fn queue(&mut self, now: SimTime, i: usize, len: usize) {
        let (q, last) = &mut self.queues[i];
        if *last != len {
            *last = len;
            let q = *q;
            self.out.counter(q, now, len);
        }
    }

    /// Drop and reset counters after an event at `now`.
    pub fn counters(&mut self, now: SimTime, c: &Counters) {
        let nics = self.layout.nics.len();
        for (k, (now_at, was_at)) in c.drops_at.iter().zip(&self.last.drops_at).enumerate() {
            for (i, site) in DROP_SITES.iter().enumerate() {
                let n = now_at[i] - was_at[i];
                if n > 0 {
                    let track = if k < nics {
                        Track::Nic(k)
                    } else {
                        Track::Kernel
                    };
                    self.out
                        .instant(track, &format!("drop: {site}"), now, Some(n));
                }
            }
        }
        for (nic, (&r, &was)) in c.resets.iter().zip(&self.last.resets).enumerate() {
            if r > was {
                let name = format!("{} chip reset (dc_init)", self.layout.nics[nic]);
                self.out.instant(Track::Nic(nic), &name, now, None);
            }
        }
        self.last = c.clone();
    }

    /// Whether a frame of this sequence number is followed with arrows.
    pub fn sampled(&self, seq: u64) -> bool {
        self.spec.sample_every > 0 && seq.is_multiple_of(self.spec.sample_every)
    }

    /// A frame entered the host: its last bit reached the input port of `nic` at
    /// `pkt.t_in` (recorded when it is inside the window).
    pub fn frame_in(&mut self, pkt: Packet, nic: usize) {
        let end = self.end.unwrap_or(self.spec.to);
        if pkt.t_in < self.spec.from || pkt.t_in >= end {
            return;
        }
        let flow = pkt.flow as usize;
        let link = &self.layout.in_links[flow];
        let (bytes_time, wire_time) = (link.bytes_time(pkt.bytes), link.wire_time(pkt.bytes));
        self.flows[flow].frames_in += 1;
        let first_bit = pkt.t_in.saturating_sub(bytes_time);
        // Flows into one NIC arrive independently (and unpaced Poisson frames may
        // overlap): a slice starts no earlier than the previous one on its track ended.
        let on_wire = pkt
            .t_in
            .saturating_sub(wire_time)
            .max(self.spec.from)
            .max(self.wire_in_end[nic])
            .min(pkt.t_in);
        self.wire_in_end[nic] = pkt.t_in;
        let name = self.layout.flows[flow].0.clone();
        self.out
            .frame(Track::WireIn(nic), &name, on_wire, pkt.t_in, pkt.seq, None);
        if self.sampled(pkt.seq) {
            self.followed.push(Followed {
                flow: pkt.flow,
                seq: pkt.seq,
                place: None,
                points: vec![(Track::WireIn(nic), on_wire)],
                delivered: false,
            });
        }
        if self.spec.pcap {
            let at = if self.layout.latency_from_first_bit {
                first_bit
            } else {
                pkt.t_in
            };
            self.capture(Captured {
                at,
                nic,
                out: false,
                pkt,
                stamp: at,
                out_nic: self.layout.flows[flow].2,
                in_nic: nic,
            });
        }
    }

    fn capture(&mut self, c: Captured) {
        self.pcap_bytes += pcap::record_bytes(c.pkt.bytes);
        self.captured.push(c);
    }

    /// The followed frames and where they were at the last look: (index, flow, seq,
    /// place). The host looks where each is now and calls [`Recorder::moved`].
    pub fn followed(&self) -> impl Iterator<Item = (usize, u32, u64, Option<Place>)> + '_ {
        self.followed
            .iter()
            .enumerate()
            .map(|(i, f)| (i, f.flow, f.seq, f.place))
    }

    /// Followed frame `i` is at `place` after the event at `now`: leaving the RX ring,
    /// or ipintrq or ipintr for anywhere but ipintr, was the doing of the CPU slice that
    /// ran until now. (A frame that the handler takes from the ring and the netisr from
    /// ipintrq at one instant goes from the ring to ipintr in one event: the handler's
    /// point; the netisr's comes when ipintr is done with it.)
    pub fn moved(&mut self, i: usize, now: SimTime, place: Place) {
        self.moved_on(Some(0), i, now, place)
    }

    /// [`Recorder::moved`] on a host with several cores: `core` is the core whose CPU
    /// burst ended in the event (`None`: no burst ended; a frame leaving a queue then
    /// gets no point). Leaving an RPS backlog was also the doing of that core.
    pub fn moved_on(&mut self, core: Option<usize>, i: usize, now: SimTime, place: Place) {
        let was = self.followed[i].place;
        if was == Some(place) {
            return;
        }
        let done_with = match was {
            Some(Place::RxRing) | Some(Place::Backlog(_)) => true,
            Some(Place::Ipintrq) | Some(Place::Ipintr) => place != Place::Ipintr,
            _ => false,
        };
        if done_with && let Some(core) = core {
            let many = self.layout.cores > 1;
            match self.responsible(core, now) {
                // On several cores, a point at or before the time of one already on
                // the arrow (two cores' slices that began at one instant, or a long
                // softirq or ksoftirqd slice that began before the frame arrived)
                // would not be drawn by Chrome DevTools, which keys an arrow's points
                // by time, or would send the arrow back in time: the slice is cut here
                // and the point binds to the part that begins now.
                Some(p) if many && self.followed[i].points.iter().any(|q| q.1 >= p.1) => {
                    let f = &self.followed[i];
                    self.deferred.push((core, f.flow, f.seq));
                }
                Some(p) => self.push_point(i, p),
                // The core was idle or its slice begins now: the frame was taken as its
                // task got the CPU, by the slice that opens now ([`Recorder::settle`]).
                None if many => {
                    let f = &self.followed[i];
                    self.deferred.push((core, f.flow, f.seq));
                }
                None => {}
            }
        }
        if was.is_none() && place != Place::RxRing {
            // Not in the ring yet (in a FIFO) or never (dropped): wait.
            return;
        }
        self.followed[i].place = Some(place);
    }

    /// After the cores' CPUs were shown ([`Recorder::cpu_on`]) at `now`: the points of
    /// frames taken by a core whose slice opens now bind to that slice; a slice that
    /// began earlier is cut at `now` (its task goes on in a slice that does not begin
    /// its activation), and the point binds to the part that begins now.
    pub fn settle(&mut self, now: SimTime) {
        for (core, flow, seq) in std::mem::take(&mut self.deferred) {
            let Some(o) = self.open[core] else { continue };
            if o.start < now {
                self.close_slice(core, now);
                self.open[core] = Some(Open {
                    start: now,
                    begins: false,
                    ..o
                });
            }
            let Some(o) = self.open[core] else { continue };
            let name = self.task_name(o.task);
            let point = (self.cpu_track(core, &o, &name), o.start);
            if let Some(i) = self
                .followed
                .iter()
                .position(|f| f.flow == flow && f.seq == seq)
            {
                self.push_point(i, point);
            }
        }
        // Frames that started on their output wire have had their last look.
        if self.followed.iter().any(|f| f.delivered) {
            let (gone, inside): (Vec<_>, Vec<_>) = std::mem::take(&mut self.followed)
                .into_iter()
                .partition(|f| f.delivered);
            self.followed = inside;
            self.left.extend(gone);
        }
    }

    /// Add a point to followed frame `i`'s arrow. On several cores a point on the slice
    /// of the one before it is not repeated (a frame RPS steers to the polling core
    /// itself may leave its ring and that core's backlog within one softirq slice):
    /// Chrome DevTools binds a slice to one point of an arrow only.
    fn push_point(&mut self, i: usize, p: (Track, SimTime)) {
        let points = &mut self.followed[i].points;
        if self.layout.cores > 1 && points.last() == Some(&p) {
            return;
        }
        points.push(p);
    }

    /// A frame leaves the host: its first bit on the output wire at `start`, its last
    /// at `done`, with latency `lat` (as results.json records it).
    pub fn delivered(
        &mut self,
        pkt: Packet,
        out_nic: usize,
        start: SimTime,
        done: SimTime,
        lat: SimTime,
    ) {
        if self.end.is_none() {
            if start >= self.spec.from && start < self.spec.to {
                self.leaving.push((pkt, out_nic, start, done, lat));
                self.pcap_bytes += 200;
                // This frame has left; so have the flow's frames sent before it that
                // are still followed: they were dropped (a flow keeps its order through
                // its one ring, backlog and transmit queue), and their arrows end where
                // they were last seen.
                for f in self
                    .followed
                    .iter_mut()
                    .filter(|f| f.flow == pkt.flow && f.seq <= pkt.seq)
                {
                    f.delivered = true;
                }
            }
            return;
        }
        self.leave(pkt, out_nic, start, done, lat);
    }

    fn leave(&mut self, pkt: Packet, out_nic: usize, start: SimTime, done: SimTime, lat: SimTime) {
        let end = self.end.unwrap_or(self.spec.to);
        if start < self.spec.from || start >= end {
            return;
        }
        let flow = pkt.flow as usize;
        let fw = &mut self.flows[flow];
        fw.frames_out += 1;
        fw.latency.record(lat);
        let name = self.layout.flows[flow].0.clone();
        let shown_end = done.min(end);
        self.out.frame(
            Track::WireOut(out_nic),
            &name,
            start,
            shown_end,
            pkt.seq,
            Some(lat),
        );
        let is = |f: &Followed| f.flow == pkt.flow && f.seq == pkt.seq;
        let found = match self.left.iter().position(is) {
            Some(k) => Some(self.left.swap_remove(k)),
            None => self
                .followed
                .iter()
                .position(is)
                .map(|k| self.followed.swap_remove(k)),
        };
        if let Some(mut f) = found {
            f.points.push((Track::WireOut(out_nic), start));
            self.arrow(&f);
        }
        if self.spec.pcap {
            let in_nic = self.layout.flows[flow].1;
            let first_bit = self.layout.latency_from_first_bit;
            let bt = self.layout.in_links[flow].bytes_time(pkt.bytes);
            let stamp = if first_bit {
                pkt.t_in.saturating_sub(bt)
            } else {
                pkt.t_in
            };
            self.capture(Captured {
                at: start,
                nic: out_nic,
                out: true,
                pkt,
                stamp,
                out_nic,
                in_nic,
            });
        }
    }

    fn arrow(&mut self, f: &Followed) {
        if f.points.len() < 2 {
            return;
        }
        let id = self.next_flow_id;
        self.next_flow_id += 1;
        let name = format!("{} #{}", self.layout.flows[f.flow as usize].0, f.seq);
        self.out.arrow(id, &name, &f.points);
    }

    /// The window closes at `now` with the host's counters `c`.
    pub fn finish_window(&mut self, now: SimTime, c: &Counters, truncated: bool) {
        for core in 0..self.open.len() {
            self.close_slice(core, now);
        }
        self.end = Some(now);
        self.pcap_bytes -= 200 * self.leaving.len() as u64;
        for (pkt, nic, start, done, lat) in std::mem::take(&mut self.leaving) {
            self.leave(pkt, nic, start, done, lat);
        }
        if truncated {
            self.truncated = Some(now);
            self.out
                .instant(Track::Kernel, "trace cut here: size limit", now, None);
        }
        self.last = c.clone();
    }

    /// Everything recorded, with the host's counters at the window's end.
    pub fn into_output(mut self) -> TraceOutput {
        let end = self.end.unwrap_or(self.spec.to);
        let mut rest = std::mem::take(&mut self.left);
        rest.append(&mut self.followed);
        for f in rest {
            self.arrow(&f);
        }
        let (first, last) = (&self.first, &self.last);
        let mut cpu_ps = std::collections::BTreeMap::new();
        let mut cpu_us = std::collections::BTreeMap::new();
        for l in Level::ALL {
            let v = last.cpu_ps[l as usize] - first.cpu_ps[l as usize];
            cpu_ps.insert(level_key(l).to_string(), v);
            cpu_us.insert(level_key(l).to_string(), SimTime(v).as_us_f64());
        }
        let idle = last.cpu_ps[LEVELS] - first.cpu_ps[LEVELS];
        cpu_ps.insert("idle".to_string(), idle);
        cpu_us.insert("idle".to_string(), SimTime(idle).as_us_f64());
        let drops = DROP_SITES
            .iter()
            .enumerate()
            .map(|(i, s)| (s.to_string(), last.drops[i] - first.drops[i]))
            .collect();
        let resets = self
            .layout
            .nics
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let d = last.resets.get(i).copied().unwrap_or(0)
                    - first.resets.get(i).copied().unwrap_or(0);
                (n.clone(), d)
            })
            .collect();
        let flows = self
            .flows
            .iter()
            .zip(&self.layout.flows)
            .map(|(w, (name, _, _))| FlowWindowSummary {
                name: name.clone(),
                frames_in: w.frames_in,
                frames_out: w.frames_out,
                latency: w.latency.summary(),
            })
            .collect();
        let cores = (0..last.core_cpu_ps.len())
            .map(|k| {
                let (a, b) = (&first.core_cpu_ps[k], &last.core_cpu_ps[k]);
                let mut cpu_ps: std::collections::BTreeMap<String, u64> = Level::ALL
                    .iter()
                    .map(|&l| (level_key(l).to_string(), b[l as usize] - a[l as usize]))
                    .collect();
                cpu_ps.insert("idle".to_string(), b[LEVELS] - a[LEVELS]);
                CoreWindowSummary {
                    core: k,
                    cpu_ps,
                    kthread_ps: last.core_kthread_ps[k] - first.core_kthread_ps[k],
                    slices: self.core_slices.get(k).copied().unwrap_or(0),
                }
            })
            .collect();
        let window = WindowSummary {
            from_s: self.spec.from.as_secs_f64(),
            to_s: end.as_secs_f64(),
            asked_to_s: self.spec.to.as_secs_f64(),
            truncated: self.truncated.is_some(),
            cpu_us,
            cpu_ps,
            interrupts: last.interrupts - first.interrupts,
            drops,
            resets,
            flows,
            cores,
            events: self.out.events(),
            slices: self.slices,
        };
        let pcaps = if self.spec.pcap {
            pcap::files(&self.layout.nics, &mut self.captured)
        } else {
            Vec::new()
        };
        TraceOutput {
            json: self.out.finish(self.spec.from, end, self.truncated),
            pcaps,
            window,
            truncated_at: self.truncated,
        }
    }
}
