//! A hand-specialised loop of the simple model: the practical limit of
//! `benches/baseline.rs`, what a person who knows this one model writes to make it as
//! fast as it can be while still simulating every frame. Checked against the lean loop
//! (and through it against irqsim) by `tests/it/baseline.rs`.
//!
//! The model, its tie rule and its results are those of [`super::lean`] (which takes
//! them from [`super::reference`]); what the specialisation removes is the event queue:
//!
//! - **No heap.** The model has three things that end at a time: the tester's next
//!   frame reaching the NIC, the output wire coming free, and the running CPU burst.
//!   Each is one `u64` (`NEVER` when nothing is pending), and the next event is the
//!   least of the three, the hardware's two first at a tie, as in the lean loop. (Two
//!   hardware events at one instant touch disjoint state, the ring and handler against
//!   the wire and output queue, so their order among themselves cannot change a
//!   result.)
//! - **Fixed rings.** The RX ring, ipintrq and the output queue are power-of-two
//!   circular buffers of arrival times, allocated once.
//! - **Integer time, the lean loop's clock** ([`Clock`]): one addition and one
//!   comparison per frame.
//! - **One event per arrival, per handler phase, per netisr packet and per frame on the
//!   wire**; a zero-length burst (the exit) runs at once when no hardware event is due
//!   at that instant, as in the lean loop.
//!
//! Plain Rust and `std` only; it shares no code with irqsim.

use super::lean::{Clock, Outcome};
use super::reference::Params;

/// No event pending.
const NEVER: u64 = u64::MAX;

/// A circular buffer of arrival times [ps] with room for at least `cap`.
struct Fifo {
    buf: Box<[u64]>,
    mask: usize,
    head: usize,
    len: usize,
}

impl Fifo {
    fn new(cap: usize) -> Fifo {
        let n = cap.max(1).next_power_of_two();
        Fifo {
            buf: vec![0; n].into_boxed_slice(),
            mask: n - 1,
            head: 0,
            len: 0,
        }
    }

    /// Append `t` (the caller has checked the model's limit, which is within the room).
    #[inline(always)]
    fn push(&mut self, t: u64) {
        self.buf[(self.head + self.len) & self.mask] = t;
        self.len += 1;
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let t = self.buf[self.head];
        self.head = (self.head + 1) & self.mask;
        self.len -= 1;
        Some(t)
    }
}

/// Where the interrupt handler is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Handler {
    Idle,
    Entry,
    /// Working on a frame that arrived at this time [ps].
    Frame(u64),
    Exit,
}

struct Sim {
    p: Params,
    now: u64,
    /// When the tester's next frame reaches the NIC [ps], or `NEVER`.
    arrival_at: u64,
    /// When the output wire comes free [ps], or `NEVER` when it is idle.
    wire_at: u64,
    /// When the running CPU burst ends [ps], or `NEVER`.
    cpu_at: u64,
    clock: Clock,
    frames: u64,
    sent: u64,
    tester_free: u64,
    wire_ps: u64,
    rx_ring: Fifo,
    handler: Handler,
    ipintrq: Fifo,
    /// The netisr holds a packet (of this arrival time) ...
    netisr: Option<u64>,
    /// ... which it finishes then if it keeps the CPU, or needs this much more CPU time
    /// while preempted [ps].
    netisr_done: u64,
    netisr_left: u64,
    output: Fifo,
    /// Frames in `output` (the TX ring and if_snd, the frame on the wire not counted).
    output_cap: usize,
    out: Outcome,
}

impl Sim {
    #[inline(always)]
    fn send_next_frame(&mut self) {
        if self.sent >= self.frames {
            self.arrival_at = NEVER;
            return;
        }
        let start = self.clock.next().max(self.tester_free);
        self.tester_free = start + self.wire_ps;
        self.sent += 1;
        self.arrival_at = self.tester_free;
    }

    /// The CPU runs a burst of `d`; a zero-length one ends at once unless a hardware
    /// event of this instant must come first.
    #[inline(always)]
    fn burst(&mut self, d: u64) {
        if d == 0 && self.arrival_at.min(self.wire_at) != self.now {
            self.cpu_at = NEVER;
            self.cpu_done();
        } else {
            self.cpu_at = self.now + d;
        }
    }

    #[inline(always)]
    fn arrival(&mut self) {
        self.send_next_frame();
        if self.rx_ring.len >= self.p.rx_ring_slots {
            self.out.drops_rx_ring += 1;
            return;
        }
        self.rx_ring.push(self.now);
        if self.handler == Handler::Idle {
            if self.netisr.is_some() {
                self.netisr_left = self.netisr_done - self.now;
            }
            self.handler_entry();
        }
    }

    #[inline(always)]
    fn handler_entry(&mut self) {
        self.out.interrupts += 1;
        self.handler = Handler::Entry;
        self.burst(self.p.isr_entry_ps);
    }

    #[inline(always)]
    fn ring_check(&mut self) {
        match self.rx_ring.pop() {
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

    #[inline(always)]
    fn netisr_runs(&mut self) {
        if self.netisr.is_some() {
            self.netisr_done = self.now + self.netisr_left;
            self.burst(self.netisr_left);
        } else if let Some(t_in) = self.ipintrq.pop() {
            self.netisr = Some(t_in);
            self.netisr_done = self.now + self.p.netisr_per_packet_ps;
            self.burst(self.p.netisr_per_packet_ps);
        } else {
            self.cpu_at = NEVER;
        }
    }

    fn cpu_done(&mut self) {
        match self.handler {
            Handler::Entry => self.ring_check(),
            Handler::Frame(t_in) => {
                if self.ipintrq.len >= self.p.ipintrq_maxlen {
                    self.out.drops_ipintrq += 1;
                } else {
                    self.ipintrq.push(t_in);
                }
                self.ring_check();
            }
            Handler::Exit => {
                if self.rx_ring.len == 0 {
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

    #[inline(always)]
    fn if_output(&mut self, t_in: u64) {
        if self.wire_at == NEVER {
            self.transmit(t_in);
        } else if self.output.len >= self.output_cap {
            self.out.drops_if_snd += 1;
        } else {
            self.output.push(t_in);
        }
    }

    #[inline(always)]
    fn transmit(&mut self, t_in: u64) {
        self.wire_at = self.now + self.wire_ps;
        let lat = self.now - t_in;
        let o = &mut self.out;
        o.received += 1;
        o.latency_count += 1;
        o.latency_sum_ps += lat as u128;
        o.latency_min_ps = o.latency_min_ps.min(lat);
        o.latency_max_ps = o.latency_max_ps.max(lat);
    }

    #[inline(always)]
    fn wire_free(&mut self) {
        self.wire_at = NEVER;
        if let Some(t_in) = self.output.pop() {
            self.transmit(t_in);
        }
    }
}

/// Simulate one load point: `load_pct` % of the line rate (a whole percent, as for the
/// lean loop's clock) for `duration_ps`, then `drain_ps` in which the host may still
/// deliver what it holds.
pub fn run(p: &Params, load_pct: f64, duration_ps: u64, drain_ps: u64) -> Outcome {
    let stop = duration_ps + drain_ps;
    // The lean loop drops at if_output when `len + 1 >= tx_ring_slots + if_snd_maxlen`.
    let output_cap = (p.tx_ring_slots + p.if_snd_maxlen).saturating_sub(1);
    let mut sim = Sim {
        p: *p,
        now: 0,
        arrival_at: NEVER,
        wire_at: NEVER,
        cpu_at: NEVER,
        clock: Clock::new(p, load_pct),
        frames: p.frames(load_pct, duration_ps),
        sent: 0,
        tester_free: 0,
        wire_ps: p.wire_ps(),
        rx_ring: Fifo::new(p.rx_ring_slots),
        handler: Handler::Idle,
        ipintrq: Fifo::new(p.ipintrq_maxlen),
        netisr: None,
        netisr_done: 0,
        netisr_left: 0,
        output: Fifo::new(output_cap),
        output_cap,
        out: Outcome {
            latency_min_ps: u64::MAX,
            ..Outcome::default()
        },
    };
    sim.send_next_frame();
    loop {
        let hw = sim.arrival_at.min(sim.wire_at);
        if hw <= sim.cpu_at {
            if hw > stop {
                break;
            }
            sim.now = hw;
            sim.out.events += 1;
            if sim.arrival_at == hw {
                sim.arrival();
            } else {
                sim.wire_free();
            }
        } else if sim.cpu_at <= stop {
            sim.now = sim.cpu_at;
            sim.cpu_at = NEVER;
            sim.out.events += 1;
            sim.cpu_done();
        } else {
            break;
        }
    }
    sim.out.sent = sim.sent;
    sim.out
}
