//! The reference loop: a straightforward (first-draft) discrete-event simulation of one
//! forwarding host, written from scratch for one model only. It is the independent
//! implementation `tests/it/baseline.rs` checks irqsim against bit for bit (its
//! Welford statistics included), and one of the loops `benches/baseline.rs` times
//! (not the yardstick: that is the lean loop of `benches/lean/`).
//!
//! Plain Rust and `std` only: one `BinaryHeap` of (time, tie rank, sequence, event),
//! one `match` per event, integer picoseconds. It shares no code with irqsim.
//!
//! # The model
//!
//! ```text
//!  tester --100 Mbit/s--> NIC in: RX ring (64) --IRQ--> handler        [interrupt level]
//!                                                  entry, per frame, exit
//!                                                     | IF_ENQUEUE
//!                                                  ipintrq (50) --> netisr  [software
//!                                                     per packet      interrupt level]
//!                                                     | if_output
//!  tester <--100 Mbit/s-- NIC out: TX ring (256) <-- if_snd (50)
//! ```
//!
//! What happens, and when (the semantics of irqsim's `interrupt` policy for this
//! configuration: one NIC in, one out, each on an interrupt line of its own, no bus, no
//! clock interrupt, constant costs, no NIC latencies):
//!
//! - **Tester.** A constant-rate stream of `frame_bytes` frames at a load given in % of
//!   the line rate (`line_rate_bps / ((frame_bytes + 20) * 8)` frames/s: a frame
//!   occupies the wire with 8 bytes of preamble and 12 of inter-frame gap, 148,809.5
//!   frames/s for 64-byte frames at 100 Mbit/s). Frame `k` starts at
//!   `round(k * 1e12 / rate)` ps and reaches the NIC at its last bit, a wire time
//!   later (6.72 us); the tester sends `floor(rate * duration + 1e-6)` frames (the
//!   SmartBits count), one at a time (a frame never starts before the previous one
//!   ended).
//! - **RX ring.** A frame that arrives with all `rx_ring_slots` descriptors full is
//!   dropped (`drops_rx_ring`). A frame leaves the ring when the handler starts on it.
//! - **Interrupt.** The chip interrupts when a frame enters the ring while its handler
//!   is not running; the chip is masked from the handler's entry to the end of its exit.
//!   The handler starts at once, preempting the netisr.
//! - **Handler.** `isr_entry_ps`; then, while the ring holds frames, one frame per step:
//!   take it, `isr_per_frame_ps`, IF_ENQUEUE it on ipintrq (dropped if `ipintrq_maxlen`
//!   are there, `drops_ipintrq`). The ring is checked at the end of the entry and at
//!   the end of each frame. When a check finds it empty, `isr_exit_ps`, then the chip
//!   is unmasked: if frames arrived during the exit, it interrupts again and a new
//!   invocation (entry first) starts at once.
//! - **Netisr.** Whenever the handler is not running and ipintrq holds packets, the
//!   netisr takes one off ipintrq (when it gets the CPU, not before) and spends
//!   `netisr_per_packet_ps` of CPU time on it, then hands it to if_output. Preempted by
//!   the handler, it keeps the packet and the CPU time it still needs, and resumes
//!   when the handler returns.
//! - **Output.** Frames leave in order; one starts as soon as the wire is free (the
//!   previous frame's last bit, preamble and gap included, has left). The TX ring
//!   (`tx_ring_slots`, the frame on the wire included) and if_snd (`if_snd_maxlen`)
//!   hold the frames not yet sent; with both full a frame is dropped (`drops_if_snd`).
//! - **Latency** of a received frame: from its last bit in to its first bit out.
//! - **Ties.** At one instant, the hardware's events (a frame's last bit reaching the
//!   NIC, the output wire coming free) come before the end of a CPU burst: the
//!   software's check at the end of a burst sees everything the hardware did at that
//!   instant. A frame arriving exactly when the handler checks the ring is taken by
//!   that check; one arriving exactly when the netisr would have finished its packet
//!   preempts it with nothing left to do, and the packet is handed on after the
//!   handler.
//! - **End.** The tester sends for `duration_ps`; the run ends `drain_ps` later: events
//!   after that are not simulated, and a frame is received if its first bit left by
//!   then (during the drain it is also counted as `drained`).
//!
//! Nothing is random: costs are constant and arrivals evenly spaced.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// Preamble (8 bytes) and inter-frame gap (12 bytes) sent with every frame [bytes].
const WIRE_OVERHEAD_BYTES: u64 = 20;

/// The model's parameters (times in picoseconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Line rate of both links [bit/s].
    pub line_rate_bps: u64,
    /// Frame size, FCS included, preamble not [bytes].
    pub frame_bytes: u64,
    /// Receive descriptors of the input NIC [frames].
    pub rx_ring_slots: usize,
    /// Handler entry: dispatch, mask the chip, read the status [ps].
    pub isr_entry_ps: u64,
    /// Handler work per received frame (rxeof, IF_ENQUEUE) [ps].
    pub isr_per_frame_ps: u64,
    /// Handler exit after the last ring check [ps].
    pub isr_exit_ps: u64,
    /// Netisr work per packet: ip_input, ip_forward, if_output [ps].
    pub netisr_per_packet_ps: u64,
    /// ipintrq length limit [packets].
    pub ipintrq_maxlen: usize,
    /// Transmit descriptors of the output NIC [frames].
    pub tx_ring_slots: usize,
    /// if_snd length limit of the output NIC [frames].
    pub if_snd_maxlen: usize,
}

impl Params {
    /// The issue's simple model: 64-byte frames at 100 Mbit/s, ring 64, handler entry
    /// 15 us, 5.2 us per frame, exit 0, netisr 5.6 us, ipintrq 50, and the BSD defaults
    /// for the output side (dc(4)'s 256 TX descriptors, if_snd IFQ_MAXLEN = 50).
    pub const SIMPLE: Params = Params {
        line_rate_bps: 100_000_000,
        frame_bytes: 64,
        rx_ring_slots: 64,
        isr_entry_ps: 15_000_000,
        isr_per_frame_ps: 5_200_000,
        isr_exit_ps: 0,
        netisr_per_packet_ps: 5_600_000,
        ipintrq_maxlen: 50,
        tx_ring_slots: 256,
        if_snd_maxlen: 50,
    };

    /// Time one frame occupies a wire, preamble and gap included [ps] (exact when the
    /// line rate divides 8e12 bits x bytes, as 10 Mbit/s to 1 Gbit/s do).
    pub fn wire_ps(&self) -> u64 {
        (self.frame_bytes + WIRE_OVERHEAD_BYTES) * 8 * PS_PER_S / self.line_rate_bps
    }

    /// Line rate [frames/s].
    pub fn line_rate_fps(&self) -> f64 {
        self.line_rate_bps as f64 / ((self.frame_bytes + WIRE_OVERHEAD_BYTES) as f64 * 8.0)
    }

    /// The tester's rate at `load_pct` % of the line rate [frames/s].
    pub fn rate_fps(&self, load_pct: f64) -> f64 {
        load_pct / 100.0 * self.line_rate_fps()
    }

    /// Frames the tester sends at `load_pct` % for `duration_ps`: `floor(rate x
    /// duration)`, with a tolerance for the binary rounding of the product.
    pub fn frames(&self, load_pct: f64, duration_ps: u64) -> u64 {
        (self.rate_fps(load_pct) * (duration_ps as f64 / PS_PER_S as f64) + 1e-6).floor() as u64
    }
}

/// Latency of the received frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latency {
    /// Frames measured.
    pub count: u64,
    /// Smallest [ps] (`u64::MAX` when none).
    pub min_ps: u64,
    /// Largest [ps].
    pub max_ps: u64,
    /// Sum [ps], exact.
    pub sum_ps: u128,
    /// Running mean [ns] and sum of squared deviations [ns^2] (Welford), updated in the
    /// same floating-point operations as irqsim's statistics, so that the two means
    /// can be compared bit for bit; `exact_mean_us` is the check on it.
    mean_ns: f64,
    m2_ns2: f64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            count: 0,
            min_ps: u64::MAX,
            max_ps: 0,
            sum_ps: 0,
            mean_ns: 0.0,
            m2_ns2: 0.0,
        }
    }
}

impl Latency {
    fn record(&mut self, lat_ps: u64) {
        self.count += 1;
        self.min_ps = self.min_ps.min(lat_ps);
        self.max_ps = self.max_ps.max(lat_ps);
        self.sum_ps += lat_ps as u128;
        let ns = lat_ps as f64 / 1_000.0;
        let d = ns - self.mean_ns;
        self.mean_ns += d / self.count as f64;
        self.m2_ns2 += d * (ns - self.mean_ns);
    }

    /// Mean [us], from the running (Welford) mean.
    pub fn mean_us(&self) -> f64 {
        self.mean_ns / 1e3
    }

    /// Mean [us] from the exact sum (0 when nothing was measured).
    pub fn exact_mean_us(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        self.sum_ps as f64 / self.count as f64 / 1e6
    }

    /// Population standard deviation [us] (0 when nothing was measured).
    pub fn stddev_us(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        (self.m2_ns2 / self.count as f64).sqrt() / 1e3
    }
}

/// What one load point gave.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Frames the tester sent.
    pub sent: u64,
    /// Frames that left the output port by the end of the run.
    pub received: u64,
    /// Of those, frames whose first bit left after the tester stopped sending.
    pub drained: u64,
    /// Frames dropped because the RX ring was full.
    pub drops_rx_ring: u64,
    /// Frames dropped because ipintrq was full.
    pub drops_ipintrq: u64,
    /// Frames dropped because the TX ring and if_snd were full.
    pub drops_if_snd: u64,
    /// Received frames whose sequence number was not the next expected one (one per
    /// gap, as SmartBits counts).
    pub out_of_sequence: u64,
    /// Latency of the received frames.
    pub latency: Latency,
    /// Handler invocations.
    pub interrupts: u64,
    /// Of those, invocations raised at the unmask, by frames that arrived during the
    /// exit.
    pub interrupts_at_unmask: u64,
    /// Netisr packets preempted by the handler.
    pub preemptions: u64,
    /// Events popped from the heap (stale CPU completions included).
    pub events: u64,
}

/// A frame inside the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Packet {
    /// The tester's sequence number.
    seq: u64,
    /// When its last bit reached the input NIC [ps].
    t_in_ps: u64,
}

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The last bit of tester frame `seq` reached the input NIC.
    Arrival { seq: u64 },
    /// The frame on the output wire has left completely.
    WireFree,
    /// The CPU burst started with this generation ended (stale if a preemption or a
    /// new burst came since).
    CpuDone { generation: u64 },
}

/// Tie rank of hardware events: before a CPU burst ending at the same instant.
const RANK_HARDWARE: u8 = 0;
/// Tie rank of the end of a CPU burst.
const RANK_CPU: u8 = 1;

/// Where the interrupt handler is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handler {
    /// Not running; the chip is unmasked.
    Idle,
    /// In its entry.
    Entry,
    /// Working on this frame.
    Frame(Packet),
    /// In its exit.
    Exit,
}

/// The host, the tester and the event queue during one run.
struct Sim {
    p: Params,
    now_ps: u64,
    /// The future events: `Reverse` makes the max-heap pop the earliest (time, tie
    /// rank, scheduling order) first.
    queue: BinaryHeap<Reverse<(u64, u8, u64, Event)>>,
    next_seq: u64,
    /// Tester: period [ps], frames to send, frames sent, when its wire is free [ps].
    period_ps: f64,
    frames: u64,
    sent: u64,
    tester_wire_free_ps: u64,
    wire_ps: u64,
    rx_ring: VecDeque<Packet>,
    handler: Handler,
    ipintrq: VecDeque<Packet>,
    /// The packet the netisr is forwarding, when it ends if it keeps the CPU [ps],
    /// and the CPU time it still needs while preempted [ps].
    netisr: Option<Packet>,
    netisr_done_ps: u64,
    netisr_left_ps: u64,
    /// Generation of the CPU burst now running.
    generation: u64,
    /// Frames waiting for the output wire (TX ring and if_snd), and whether a frame is
    /// on it.
    output: VecDeque<Packet>,
    wire_busy: bool,
    load_end_ps: u64,
    next_expected_seq: u64,
    out: Outcome,
}

impl Sim {
    fn schedule(&mut self, at_ps: u64, rank: u8, event: Event) {
        self.queue
            .push(Reverse((at_ps, rank, self.next_seq, event)));
        self.next_seq += 1;
    }

    /// The tester sends its next frame, if it has one left.
    fn send_next_frame(&mut self) {
        if self.sent >= self.frames {
            return;
        }
        let nominal_ps = (self.sent as f64 * self.period_ps + 0.5) as u64;
        let start_ps = nominal_ps.max(self.tester_wire_free_ps);
        let end_ps = start_ps + self.wire_ps;
        self.tester_wire_free_ps = end_ps;
        let seq = self.sent;
        self.sent += 1;
        self.schedule(end_ps, RANK_HARDWARE, Event::Arrival { seq });
    }

    /// Start a CPU burst of `dur_ps` for whoever has the CPU.
    fn burst(&mut self, dur_ps: u64) {
        self.generation += 1;
        let g = self.generation;
        self.schedule(
            self.now_ps + dur_ps,
            RANK_CPU,
            Event::CpuDone { generation: g },
        );
    }

    fn arrival(&mut self, seq: u64) {
        self.send_next_frame();
        if self.rx_ring.len() >= self.p.rx_ring_slots {
            self.out.drops_rx_ring += 1;
            return;
        }
        self.rx_ring.push_back(Packet {
            seq,
            t_in_ps: self.now_ps,
        });
        if self.handler == Handler::Idle {
            // The chip interrupts. With the handler idle, the netisr (if it has a
            // packet) is running: it is preempted and keeps what it has left.
            if self.netisr.is_some() {
                self.netisr_left_ps = self.netisr_done_ps - self.now_ps;
                self.out.preemptions += 1;
            }
            self.handler_entry();
        }
    }

    fn handler_entry(&mut self) {
        self.out.interrupts += 1;
        self.handler = Handler::Entry;
        self.burst(self.p.isr_entry_ps);
    }

    /// The handler checks its ring: the next frame, or the exit.
    fn ring_check(&mut self) {
        match self.rx_ring.pop_front() {
            Some(pkt) => {
                self.handler = Handler::Frame(pkt);
                self.burst(self.p.isr_per_frame_ps);
            }
            None => {
                self.handler = Handler::Exit;
                self.burst(self.p.isr_exit_ps);
            }
        }
    }

    /// The handler returned: the netisr gets the CPU, resuming its packet or taking
    /// the next one off ipintrq.
    fn netisr_runs(&mut self) {
        if self.netisr.is_some() {
            self.netisr_done_ps = self.now_ps + self.netisr_left_ps;
            self.burst(self.netisr_left_ps);
        } else if let Some(pkt) = self.ipintrq.pop_front() {
            self.netisr = Some(pkt);
            self.netisr_done_ps = self.now_ps + self.p.netisr_per_packet_ps;
            self.burst(self.p.netisr_per_packet_ps);
        }
    }

    fn cpu_done(&mut self) {
        match self.handler {
            Handler::Entry => self.ring_check(),
            Handler::Frame(pkt) => {
                if self.ipintrq.len() >= self.p.ipintrq_maxlen {
                    self.out.drops_ipintrq += 1;
                } else {
                    self.ipintrq.push_back(pkt);
                }
                self.ring_check();
            }
            Handler::Exit => {
                // Unmasked: frames that arrived during the exit interrupt again.
                if self.rx_ring.is_empty() {
                    self.handler = Handler::Idle;
                    self.netisr_runs();
                } else {
                    self.out.interrupts_at_unmask += 1;
                    self.handler_entry();
                }
            }
            Handler::Idle => {
                let pkt = self.netisr.take().expect("the netisr's burst ended");
                self.if_output(pkt);
                self.netisr_runs();
            }
        }
    }

    fn if_output(&mut self, pkt: Packet) {
        if !self.wire_busy {
            self.transmit(pkt);
        } else if self.output.len() + 1 >= self.p.tx_ring_slots + self.p.if_snd_maxlen {
            self.out.drops_if_snd += 1;
        } else {
            self.output.push_back(pkt);
        }
    }

    /// `pkt`'s first bit leaves now.
    fn transmit(&mut self, pkt: Packet) {
        self.wire_busy = true;
        self.schedule(self.now_ps + self.wire_ps, RANK_HARDWARE, Event::WireFree);
        self.out.received += 1;
        if self.now_ps > self.load_end_ps {
            self.out.drained += 1;
        }
        if pkt.seq != self.next_expected_seq {
            self.out.out_of_sequence += 1;
        }
        self.next_expected_seq = pkt.seq + 1;
        self.out.latency.record(self.now_ps - pkt.t_in_ps);
    }

    fn wire_free(&mut self) {
        self.wire_busy = false;
        if let Some(pkt) = self.output.pop_front() {
            self.transmit(pkt);
        }
    }
}

/// Simulate one load point: `load_pct` % of the line rate for `duration_ps`, then
/// `drain_ps` in which the host may still deliver what it holds.
pub fn run(p: &Params, load_pct: f64, duration_ps: u64, drain_ps: u64) -> Outcome {
    let stop_ps = duration_ps + drain_ps;
    let mut sim = Sim {
        p: *p,
        now_ps: 0,
        queue: BinaryHeap::with_capacity(16),
        next_seq: 0,
        period_ps: PS_PER_S as f64 / p.rate_fps(load_pct),
        frames: p.frames(load_pct, duration_ps),
        sent: 0,
        tester_wire_free_ps: 0,
        wire_ps: p.wire_ps(),
        rx_ring: VecDeque::with_capacity(p.rx_ring_slots),
        handler: Handler::Idle,
        ipintrq: VecDeque::with_capacity(p.ipintrq_maxlen),
        netisr: None,
        netisr_done_ps: 0,
        netisr_left_ps: 0,
        generation: 0,
        output: VecDeque::new(),
        wire_busy: false,
        load_end_ps: duration_ps,
        next_expected_seq: 0,
        out: Outcome::default(),
    };
    sim.send_next_frame();
    while let Some(Reverse((at_ps, _, _, event))) = sim.queue.pop() {
        if at_ps > stop_ps {
            break;
        }
        sim.now_ps = at_ps;
        sim.out.events += 1;
        match event {
            Event::Arrival { seq } => sim.arrival(seq),
            Event::WireFree => sim.wire_free(),
            Event::CpuDone { generation } if generation == sim.generation => sim.cpu_done(),
            Event::CpuDone { .. } => {}
        }
    }
    sim.out.sent = sim.sent;
    sim.out
}
