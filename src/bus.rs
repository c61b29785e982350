//! The I/O bus the NICs' DMA engines share.
//!
//! Models a PCI bus (32-bit, 33 MHz by default) carrying bus-master DMA in both
//! directions, as on the reference router where four 21143s sit behind one DEC 21152
//! PCI-PCI bridge:
//!
//! ```text
//!  NIC 0 RX engine --write bursts--\
//!  NIC 0 TX engine <--read bursts---+-- bus, one burst at a time, FCFS --> memory
//!  NIC 1 ...      -----------------/
//! ```
//!
//! - Every DMA engine (receive and transmit of each NIC, [`crate::dma`]) moves a frame
//!   in bursts of at most `burst_bytes`, one burst in flight at a time; the bus serves
//!   bursts in the order they became ready (a read burst after its latency), so engines
//!   interleave. A burst takes its overhead (`write_overhead_ns` or `read_overhead_ns`:
//!   arbitration, address phase, turnaround) plus `bytes / width_bytes` bus clocks. A
//!   read burst first waits `read_latency_ns` without holding the bus (memory latency;
//!   behind a PCI-PCI bridge the delayed transaction, during which the device is told
//!   to retry).
//! - The FIFOs, the burst sequence of a frame, transmit thresholds and underruns are
//!   the engines' (`crate::dma::NicDma`); the bus only carries their bursts.
//!
//! Parameters ([`BusConfig`]) with defaults: `clock_mhz` 33.33, `width_bytes` 4,
//! `burst_bytes` 64, `write_overhead_ns` 120 (4 clocks), `read_overhead_ns` 120,
//! `read_latency_ns` 0, `descriptor_bytes` 16 (a 21143 descriptor). Per NIC
//! ([`crate::dma::NicDmaConfig`]): `rx_fifo_bytes` 2048, `tx_thresholds_bytes`
//! [128, 256, 512, 1024].
//!
//! Counters: `bus.busy_ms` (time the bus carried bursts), `bus.bursts`.

use crate::problems::Problems;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// The shared bus as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BusConfig {
    /// Bus clock [MHz] (default 33.33: PCI).
    #[serde(default = "d_clock")]
    pub clock_mhz: f64,
    /// Bytes per bus clock in a burst (default 4: 32-bit PCI).
    #[serde(default = "d_width")]
    pub width_bytes: u32,
    /// Largest burst a DMA engine makes [bytes] (default 64: 16 longwords).
    #[serde(default = "d_burst")]
    pub burst_bytes: u32,
    /// Fixed cost of a burst the device writes to memory: arbitration, address phase,
    /// turnaround; posted by a bridge [ns] (default 120).
    #[serde(default = "d_write")]
    pub write_overhead_ns: f64,
    /// Bus time of a burst the device reads from memory beyond its data clocks
    /// (default 120) [ns].
    #[serde(default = "d_write")]
    pub read_overhead_ns: f64,
    /// Time a read burst waits before it can use the bus, without holding it: memory
    /// latency and, behind a PCI-PCI bridge, the delayed transaction the bridge runs on
    /// the primary bus while the device is told to retry (default 0) [ns].
    #[serde(default)]
    pub read_latency_ns: f64,
    /// Size of a descriptor fetch or write-back [bytes] (default 16).
    #[serde(default = "d_desc")]
    pub descriptor_bytes: u32,
}

impl Default for BusConfig {
    /// The defaults a model file gets for an empty `bus` object.
    fn default() -> Self {
        BusConfig {
            clock_mhz: d_clock(),
            width_bytes: d_width(),
            burst_bytes: d_burst(),
            write_overhead_ns: d_write(),
            read_overhead_ns: d_write(),
            read_latency_ns: 0.0,
            descriptor_bytes: d_desc(),
        }
    }
}

fn d_clock() -> f64 {
    33.33
}
fn d_width() -> u32 {
    4
}
fn d_burst() -> u32 {
    64
}
fn d_write() -> f64 {
    120.0
}
fn d_desc() -> u32 {
    16
}

impl BusConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.positive("clock_mhz", self.clock_mhz, "MHz");
        if self.clock_mhz > 1e5 {
            p.push("clock_mhz", "must be at most 1e5 MHz");
        }
        p.at_least("width_bytes", self.width_bytes as u64, 1, "byte");
        p.at_least("burst_bytes", self.burst_bytes as u64, 1, "byte");
        p.time_ns("write_overhead_ns", self.write_overhead_ns);
        p.time_ns("read_overhead_ns", self.read_overhead_ns);
        p.time_ns("read_latency_ns", self.read_latency_ns);
        p.at_least("descriptor_bytes", self.descriptor_bytes as u64, 1, "byte");
    }
}

/// Direction of a burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Receive DMA: the device writes memory.
    RxWrite,
    /// Transmit DMA: the device reads memory.
    TxRead,
}

/// One burst on the bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Burst {
    /// The NIC whose DMA engine masters the bus.
    pub nic: u16,
    /// Receive write to memory or transmit read from it.
    pub dir: Dir,
    /// Bytes carried [bytes].
    pub bytes: u32,
}

/// The bus during a run.
///
/// Bursts are carried one at a time, each ready burst in the order it became ready
/// (ties: in request order). A read burst becomes ready `read_latency` after it is
/// asked for; the bus does not wait for it meanwhile. When the bus is idle and the
/// next burst is not ready yet, that burst is reserved to start at its ready time, and
/// a burst that becomes ready earlier takes its place.
#[derive(Clone, Debug)]
pub(crate) struct Bus {
    /// Bursts waiting: ready time, request order, burst.
    pending: Vec<(SimTime, u64, Burst)>,
    /// The burst on the bus or reserved: burst, start, end, ready time, request order.
    pub current: Option<(Burst, SimTime, SimTime, SimTime, u64)>,
    seq: u64,
    ps_per_byte: f64,
    write_ps: u64,
    read_ps: u64,
    /// Data time of a burst of `b` bytes for every `b` up to the largest burst or
    /// descriptor (at most 4,096 entries), computed once as `duration` would [ps].
    data_ps: Vec<u64>,
    /// Time spent carrying bursts [ps] -- counter.
    pub busy_ps: u64,
    /// Bursts carried -- counter.
    pub bursts: u64,
}

impl Bus {
    pub fn new(cfg: &BusConfig) -> Bus {
        let ps_per_byte = 1e6 / cfg.clock_mhz / cfg.width_bytes as f64;
        let table = cfg.burst_bytes.max(cfg.descriptor_bytes).min(4096);
        Bus {
            pending: Vec::new(),
            current: None,
            seq: 0,
            data_ps: (0..=table)
                .map(|b| Self::data_time(ps_per_byte, b))
                .collect(),
            ps_per_byte,
            write_ps: SimTime::from_ns_f64(cfg.write_overhead_ns).0,
            read_ps: SimTime::from_ns_f64(cfg.read_overhead_ns).0,
            busy_ps: 0,
            bursts: 0,
        }
    }

    /// Bursts waiting for the bus or on it.
    pub fn requests(&self) -> usize {
        self.pending.len() + self.current.is_some() as usize
    }

    /// Data clocks of `bytes` bytes [ps] (+ 0.5 and truncation: round half up without
    /// a libm call).
    fn data_time(ps_per_byte: f64, bytes: u32) -> u64 {
        (bytes as f64 * ps_per_byte + 0.5) as u64
    }

    fn duration(&self, b: &Burst) -> SimTime {
        let over = match b.dir {
            Dir::RxWrite => self.write_ps,
            Dir::TxRead => self.read_ps,
        };
        let data = match self.data_ps.get(b.bytes as usize) {
            Some(&d) => d,
            None => Self::data_time(self.ps_per_byte, b.bytes),
        };
        SimTime(over + data)
    }

    /// Request a burst that is ready at `ready` (at or after `now`). Returns the new
    /// end time of the burst on the bus when it changed (the caller re-arms its
    /// completion), `None` when the burst waits behind the current one.
    pub fn request(&mut self, b: Burst, ready: SimTime, now: SimTime) -> Option<SimTime> {
        let seq = self.seq;
        self.seq += 1;
        match self.current {
            Some((c, start, _, c_ready, c_seq)) if start > now && ready < start => {
                // The reserved burst has not started and this one is ready first.
                self.pending.push((c_ready, c_seq, c));
                Some(self.start(b, ready, seq, now))
            }
            Some(_) => {
                self.pending.push((ready, seq, b));
                None
            }
            None => Some(self.start(b, ready, seq, now)),
        }
    }

    fn start(&mut self, b: Burst, ready: SimTime, seq: u64, now: SimTime) -> SimTime {
        let start = ready.max(now);
        let end = start + self.duration(&b);
        self.current = Some((b, start, end, ready, seq));
        end
    }

    /// Start the earliest ready pending burst, if any; its end time.
    fn next(&mut self, now: SimTime) -> Option<SimTime> {
        let k = (0..self.pending.len()).min_by_key(|&k| (self.pending[k].0, self.pending[k].1))?;
        let (ready, seq, b) = self.pending.swap_remove(k);
        Some(self.start(b, ready, seq, now))
    }

    /// The current burst ended: return it, and start the next one (its end time).
    pub fn complete(&mut self, now: SimTime) -> (Burst, Option<SimTime>) {
        let (b, start, end, _, _) = self.current.take().expect("a burst in progress");
        self.busy_ps += (end - start).0;
        self.bursts += 1;
        (b, self.next(now))
    }

    /// Forget every waiting or reserved burst of `nic` (chip reset); a burst already on
    /// the bus completes (its engine ignores it). Returns the bus's end time when it
    /// changed: `Some(None)` if the bus is now idle.
    pub fn cancel(&mut self, nic: u16, now: SimTime) -> Option<Option<SimTime>> {
        self.pending.retain(|(_, _, b)| b.nic != nic);
        match self.current {
            Some((b, start, ..)) if b.nic == nic && start > now => {
                self.current = None;
                Some(self.next(now))
            }
            _ => None,
        }
    }

    /// The burst on the bus now, if one has started.
    pub fn on_bus(&self, now: SimTime) -> Option<Burst> {
        self.current
            .and_then(|(b, start, ..)| (start <= now).then_some(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_time_is_overhead_plus_clocks() {
        // 64 bytes on a 32-bit 33.33 MHz bus: 16 clocks of 30.003 ns = 480 ns, plus
        // 120 ns of overhead for a write, 600 ns for a read.
        let mut bus = Bus::new(&BusConfig {
            clock_mhz: 33.33,
            width_bytes: 4,
            burst_bytes: 64,
            write_overhead_ns: 120.0,
            read_overhead_ns: 600.0,
            read_latency_ns: 0.0,
            descriptor_bytes: 16,
        });
        let w = Burst {
            nic: 0,
            dir: Dir::RxWrite,
            bytes: 64,
        };
        let end = bus.request(w, SimTime::ZERO, SimTime::ZERO).unwrap();
        assert!((end.0 as f64 - 600_048.0).abs() < 10.0, "{end:?}");
        // A second request waits; it starts when the first ends.
        let r = Burst {
            dir: Dir::TxRead,
            ..w
        };
        assert_eq!(bus.request(r, SimTime(1), SimTime(1)), None);
        let (done, next) = bus.complete(end);
        assert_eq!(done, w);
        let next = next.unwrap();
        assert!(((next - end).0 as f64 - 1_080_048.0).abs() < 10.0);
        assert_eq!(bus.bursts, 1); // counted when carried
    }

    #[test]
    fn a_burst_ready_earlier_takes_the_place_of_a_reserved_one() {
        let mut bus = Bus::new(&BusConfig {
            clock_mhz: 33.33,
            width_bytes: 4,
            burst_bytes: 64,
            write_overhead_ns: 120.0,
            read_overhead_ns: 120.0,
            read_latency_ns: 300.0,
            descriptor_bytes: 16,
        });
        let us = |x: f64| SimTime::from_ns_f64(x * 1e3);
        let read = Burst {
            nic: 0,
            dir: Dir::TxRead,
            bytes: 16,
        };
        let write = Burst {
            nic: 1,
            dir: Dir::RxWrite,
            bytes: 16,
        };
        // A read asked for at 0, ready at 0.3 us: reserved from 0.3 to 0.54 us.
        let end = bus.request(read, us(0.3), us(0.0)).unwrap();
        assert_eq!(end, us(0.3) + SimTime::from_ns_f64(240.012));
        // A write ready at 0.1 us goes first; the read waits behind it.
        let end = bus.request(write, us(0.1), us(0.1)).unwrap();
        assert_eq!(end, us(0.1) + SimTime::from_ns_f64(240.012));
        let (done, next) = bus.complete(end);
        assert_eq!(done, write);
        assert_eq!(next.unwrap(), end + SimTime::from_ns_f64(240.012));
        // A reset cancels the read before it started? It has started: nothing changes.
        assert_eq!(bus.cancel(0, end), None);
    }
}
