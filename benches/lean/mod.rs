//! A lean event loop of the simple model, written the way a careful person writes a
//! first simulator of it: the speed yardstick of `benches/baseline.rs`, checked against
//! irqsim by `tests/it/baseline.rs`.
//!
//! The model and its semantics are those of [`super::reference`] (the same
//! [`Params`](super::reference::Params), the same tie rule, the same output wire); what
//! differs is only how the loop is written:
//!
//! - **Integer time, integer arrivals.** Frame `k` of the tester starts at
//!   `round(k x period)` ps, the period being the exact fraction `1e12 / rate`; the
//!   quotient and remainder of that rounding are carried from frame to frame with one
//!   addition and one comparison each (no floating point and no division per frame).
//! - **`(time, sequence)` keys, no stale events.** The hardware's events (a frame's last
//!   bit reaching the NIC, the output wire coming free) are in a binary heap of packed
//!   `u128` keys `time << 64 | sequence << 1 | kind`; the end of the running CPU burst,
//!   the one event that preemption can move, is a slot of its own beside the heap,
//!   overwritten when the CPU changes hands, so nothing ever pops only to be thrown
//!   away. At one instant the hardware's events come before the end of a CPU burst.
//! - **One event per arrival, per handler phase, per netisr packet.** A burst of zero
//!   length (the simple model's exit) is run at once when no hardware event is due at
//!   the same instant (it would have to come first), not as an event.
//! - **Statistics by sums.** The latency's count, sum (exact, `u128`), minimum and
//!   maximum; the mean is computed once at the end.
//!
//! Plain Rust and `std` only; it shares no code with irqsim.

use super::reference::{PS_PER_S, Params};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What one load point gave.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Frames the tester sent.
    pub sent: u64,
    /// Frames that left the output port by the end of the run.
    pub received: u64,
    /// Frames dropped because the RX ring was full.
    pub drops_rx_ring: u64,
    /// Frames dropped because ipintrq was full.
    pub drops_ipintrq: u64,
    /// Frames dropped because the TX ring and if_snd were full.
    pub drops_if_snd: u64,
    /// Latency of the received frames: count, exact sum [ps], min and max [ps].
    pub latency_count: u64,
    pub latency_sum_ps: u128,
    pub latency_min_ps: u64,
    pub latency_max_ps: u64,
    /// Handler invocations.
    pub interrupts: u64,
    /// Events handled (heap pops and CPU-slot completions).
    pub events: u64,
}

// Read by `tests/it/baseline.rs`, not by the benchmark.
#[allow(dead_code)]
impl Outcome {
    /// Mean latency [us] (0 with nothing received).
    pub fn mean_latency_us(&self) -> f64 {
        if self.latency_count == 0 {
            return 0.0;
        }
        self.latency_sum_ps as f64 / self.latency_count as f64 / 1e6
    }

    /// Frames lost, of those sent.
    pub fn loss(&self) -> f64 {
        if self.sent == 0 {
            return 0.0;
        }
        1.0 - self.received as f64 / self.sent as f64
    }
}

/// Kind bit of a heap key: a frame's last bit reaching the input NIC.
const ARRIVAL: u128 = 0;
/// Kind bit of a heap key: the output wire came free.
const WIRE_FREE: u128 = 1;
/// No CPU burst running.
const NO_BURST: u64 = u64::MAX;

/// Where the interrupt handler is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handler {
    Idle,
    Entry,
    /// Working on a frame that arrived at this time [ps].
    Frame(u64),
    Exit,
}

/// The tester's constant-rate clock: frame `k` nominally starts at
/// `floor((2 k n + d) / 2d)` ps, `n / d` being the period, carried as quotient `q` and
/// remainder `r` of `2 k n + d` by `2d`.
pub struct Clock {
    q: u64,
    r: u64,
    step_q: u64,
    step_r: u64,
    two_d: u64,
}

impl Clock {
    /// The clock of `rate = load_pct / 100 x line_rate_bps / (bits per frame)`: the
    /// period is `1e12 x 100 x bits / (load_pct x line_rate_bps)` ps, an exact integer
    /// fraction for a whole-percent load. Only whole percents from 1 to 100 are taken
    /// (the sweep's loads): for them the exact rounding of `k x period` is never within
    /// 0.005 ps of a half, so it agrees with the floating-point `k x period + 0.5` of
    /// irqsim and the reference loop for every frame of a run of up to 10 s (whose rounding
    /// error stays under 0.003 ps); a finer load could land within their rounding error
    /// of a half and start a frame 1 ps apart.
    pub fn new(p: &Params, load_pct: f64) -> Clock {
        assert!(
            load_pct.fract() == 0.0 && (1.0..=100.0).contains(&load_pct),
            "the lean loop takes whole-percent loads from 1 to 100, not {load_pct}"
        );
        let load = load_pct as u128;
        let bits = ((p.frame_bytes + 20) * 8) as u128;
        let n = PS_PER_S as u128 * 100 * bits;
        let d = load * p.line_rate_bps as u128;
        let (two_n, two_d) = (2 * n, 2 * d);
        Clock {
            q: (d / two_d) as u64,
            r: (d % two_d) as u64,
            step_q: (two_n / two_d) as u64,
            step_r: (two_n % two_d) as u64,
            two_d: two_d as u64,
        }
    }

    /// The nominal start of the next frame [ps]; then advance by one period.
    #[inline(always)]
    pub fn next(&mut self) -> u64 {
        let t = self.q;
        self.q += self.step_q;
        self.r += self.step_r;
        if self.r >= self.two_d {
            self.r -= self.two_d;
            self.q += 1;
        }
        t
    }
}

struct Sim {
    p: Params,
    now: u64,
    heap: BinaryHeap<Reverse<u128>>,
    seq: u64,
    /// End of the running CPU burst [ps], or `NO_BURST`.
    cpu_at: u64,
    clock: Clock,
    frames: u64,
    sent: u64,
    tester_free: u64,
    wire_ps: u64,
    /// Arrival time of each frame in the RX ring [ps] (the sequence numbers are not
    /// needed: frames stay in order).
    rx_ring: VecDeque<u64>,
    handler: Handler,
    ipintrq: VecDeque<u64>,
    /// The netisr's packet (its arrival time), when it ends if it keeps the CPU, and the
    /// CPU time it still needs while preempted [ps].
    netisr: Option<u64>,
    netisr_done: u64,
    netisr_left: u64,
    output: VecDeque<u64>,
    wire_busy: bool,
    out: Outcome,
}

impl Sim {
    #[inline(always)]
    fn schedule(&mut self, at: u64, kind: u128) {
        self.heap
            .push(Reverse((at as u128) << 64 | (self.seq as u128) << 1 | kind));
        self.seq += 1;
    }

    /// Whether a hardware event is due at the current instant (it comes before a CPU
    /// burst ending now).
    #[inline(always)]
    fn hardware_due_now(&self) -> bool {
        self.heap
            .peek()
            .is_some_and(|Reverse(k)| (k >> 64) as u64 == self.now)
    }

    fn send_next_frame(&mut self) {
        if self.sent >= self.frames {
            return;
        }
        let start = self.clock.next().max(self.tester_free);
        let end = start + self.wire_ps;
        self.tester_free = end;
        self.sent += 1;
        self.schedule(end, ARRIVAL);
    }

    /// The CPU runs a burst of `d` for whoever has it; a zero-length one ends at once
    /// unless a hardware event of this instant must come first.
    #[inline(always)]
    fn burst(&mut self, d: u64) {
        if d == 0 && !self.hardware_due_now() {
            self.cpu_at = NO_BURST;
            self.cpu_done();
        } else {
            self.cpu_at = self.now + d;
        }
    }

    fn arrival(&mut self) {
        self.send_next_frame();
        if self.rx_ring.len() >= self.p.rx_ring_slots {
            self.out.drops_rx_ring += 1;
            return;
        }
        self.rx_ring.push_back(self.now);
        if self.handler == Handler::Idle {
            // The chip interrupts; a netisr packet in progress is preempted.
            if self.netisr.is_some() {
                self.netisr_left = self.netisr_done - self.now;
            }
            self.handler_entry();
        }
    }

    fn handler_entry(&mut self) {
        self.out.interrupts += 1;
        self.handler = Handler::Entry;
        self.burst(self.p.isr_entry_ps);
    }

    fn ring_check(&mut self) {
        match self.rx_ring.pop_front() {
            Some(t_in) => {
                self.handler = Handler::Frame(t_in);
                self.burst(self.p.isr_per_frame_ps);
            }
            None => {
                self.handler = Handler::Exit;
                self.burst(self.p.isr_exit_ps);
            }
        }
    }

    fn netisr_runs(&mut self) {
        if self.netisr.is_some() {
            self.netisr_done = self.now + self.netisr_left;
            self.burst(self.netisr_left);
        } else if let Some(t_in) = self.ipintrq.pop_front() {
            self.netisr = Some(t_in);
            self.netisr_done = self.now + self.p.netisr_per_packet_ps;
            self.burst(self.p.netisr_per_packet_ps);
        } else {
            self.cpu_at = NO_BURST;
        }
    }

    fn cpu_done(&mut self) {
        match self.handler {
            Handler::Entry => self.ring_check(),
            Handler::Frame(t_in) => {
                if self.ipintrq.len() >= self.p.ipintrq_maxlen {
                    self.out.drops_ipintrq += 1;
                } else {
                    self.ipintrq.push_back(t_in);
                }
                self.ring_check();
            }
            Handler::Exit => {
                if self.rx_ring.is_empty() {
                    self.handler = Handler::Idle;
                    self.netisr_runs();
                } else {
                    self.handler_entry();
                }
            }
            Handler::Idle => {
                if let Some(t_in) = self.netisr.take() {
                    self.if_output(t_in);
                }
                self.netisr_runs();
            }
        }
    }

    fn if_output(&mut self, t_in: u64) {
        if !self.wire_busy {
            self.transmit(t_in);
        } else if self.output.len() + 1 >= self.p.tx_ring_slots + self.p.if_snd_maxlen {
            self.out.drops_if_snd += 1;
        } else {
            self.output.push_back(t_in);
        }
    }

    fn transmit(&mut self, t_in: u64) {
        self.wire_busy = true;
        self.schedule(self.now + self.wire_ps, WIRE_FREE);
        let lat = self.now - t_in;
        let o = &mut self.out;
        o.received += 1;
        o.latency_count += 1;
        o.latency_sum_ps += lat as u128;
        o.latency_min_ps = o.latency_min_ps.min(lat);
        o.latency_max_ps = o.latency_max_ps.max(lat);
    }

    fn wire_free(&mut self) {
        self.wire_busy = false;
        if let Some(t_in) = self.output.pop_front() {
            self.transmit(t_in);
        }
    }
}

/// Simulate one load point: `load_pct` % of the line rate for `duration_ps`, then
/// `drain_ps` in which the host may still deliver what it holds.
pub fn run(p: &Params, load_pct: f64, duration_ps: u64, drain_ps: u64) -> Outcome {
    let stop = duration_ps + drain_ps;
    let mut sim = Sim {
        p: *p,
        now: 0,
        heap: BinaryHeap::with_capacity(4),
        seq: 0,
        cpu_at: NO_BURST,
        clock: Clock::new(p, load_pct),
        frames: p.frames(load_pct, duration_ps),
        sent: 0,
        tester_free: 0,
        wire_ps: p.wire_ps(),
        rx_ring: VecDeque::with_capacity(p.rx_ring_slots),
        handler: Handler::Idle,
        ipintrq: VecDeque::with_capacity(p.ipintrq_maxlen),
        netisr: None,
        netisr_done: 0,
        netisr_left: 0,
        output: VecDeque::new(),
        wire_busy: false,
        out: Outcome {
            latency_min_ps: u64::MAX,
            ..Outcome::default()
        },
    };
    sim.send_next_frame();
    loop {
        let hw = sim.heap.peek().map(|Reverse(k)| (k >> 64) as u64);
        // The hardware's events first at a tie.
        if let Some(at) = hw.filter(|&at| at <= sim.cpu_at) {
            if at > stop {
                break;
            }
            let Some(Reverse(k)) = sim.heap.pop() else {
                break;
            };
            sim.now = at;
            sim.out.events += 1;
            if k & 1 == ARRIVAL {
                sim.arrival();
            } else {
                sim.wire_free();
            }
        } else if sim.cpu_at != NO_BURST && sim.cpu_at <= stop {
            sim.now = sim.cpu_at;
            sim.cpu_at = NO_BURST;
            sim.out.events += 1;
            sim.cpu_done();
        } else {
            break;
        }
    }
    sim.out.sent = sim.sent;
    sim.out
}
