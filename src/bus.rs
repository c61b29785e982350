//! The I/O bus the NICs' DMA engines share, and the NIC FIFOs in front of it.
//!
//! Models a PCI bus (32-bit, 33 MHz by default) carrying bus-master DMA in both
//! directions, as on the reference router where four 21143s sit behind one DEC 21152
//! PCI-PCI bridge:
//!
//! ```text
//!  wire -> RX FIFO --write bursts--> memory        (frame + descriptor write-back)
//!  memory --read bursts--> TX FIFO -> wire          (descriptor fetch + frame)
//!                  one burst at a time, first come first served
//! ```
//!
//! - Every DMA engine (receive and transmit of each NIC) moves a frame in bursts of at
//!   most `burst_bytes`, one burst in flight at a time; the bus serves bursts in the order
//!   they became ready (a read burst after its latency), so engines interleave. A burst takes its overhead
//!   (`write_overhead_ns` or `read_overhead_ns`: arbitration, address phase,
//!   turnaround) plus `bytes / width_bytes` bus clocks. A read burst first waits
//!   `read_latency_ns` without holding the bus (memory latency; behind a PCI-PCI bridge
//!   the delayed transaction, during which the device is told to retry).
//! - Receive: a frame waits in the NIC's RX FIFO (`NicDmaConfig::rx_fifo_bytes`) from
//!   its last bit (plus `rx_latency_ns`) until its DMA completes; a frame that does not
//!   fit is dropped (drop site `rx_fifo`, the chip's FIFO-overflow count). The frame and
//!   its descriptor write-back then complete in the RX ring.
//! - Transmit: the chip fetches the descriptor, then the frame; it starts sending once
//!   `threshold` bytes are in its TX FIFO (the current step of
//!   `NicDmaConfig::tx_thresholds_bytes`; after the last step, store-and-forward: the
//!   whole frame). If a burst arrives after the wire has sent every byte before it (seen
//!   when the burst completes, or when the wire reaches the frame's end first), the
//!   FIFO ran dry: the frame is aborted (drop site `tx_underrun`) and the chip raises
//!   TX_UNDERRUN for its driver (see [`crate::policy::interrupt`]).
//! - Not modelled: the transmit engine does not prefetch the next frame while one is on
//!   the wire (it starts fetching the next one when the previous has left), so on a
//!   busy bus back-to-back frames leave gaps a real chip would fill; and a frame is
//!   written to memory only once it has fully arrived (no receive cut-through).
//!
//! Parameters ([`BusConfig`]) with defaults: `clock_mhz` 33.33, `width_bytes` 4,
//! `burst_bytes` 64, `write_overhead_ns` 120 (4 clocks), `read_overhead_ns` 120,
//! `read_latency_ns` 0,
//! `descriptor_bytes` 16 (a 21143 descriptor). Per NIC ([`NicDmaConfig`]):
//! `rx_fifo_bytes` 2048, `tx_thresholds_bytes` [128, 256, 512, 1024] (the 21143's
//! CSR6 TR field at 100 Mbit/s; NetBSD's tlp_10_100_txthresh_tab).
//!
//! Counters: `bus.busy_ms` (time the bus carried bursts), `bus.bursts`; per NIC
//! `<nic>.tx_underruns`, `<nic>.tx_threshold_step` (0 = the first threshold; the number
//! of thresholds = store-and-forward).

use crate::problems::Problems;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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

/// A NIC's FIFOs and transmit thresholds, used when the model has a bus.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NicDmaConfig {
    /// Receive FIFO [bytes] (default 2048).
    #[serde(default = "d_rx_fifo")]
    pub rx_fifo_bytes: u32,
    /// Transmit start thresholds, in the order the driver steps through them after
    /// each underrun; after the last one the chip is put in store-and-forward mode
    /// [bytes] (default [128, 256, 512, 1024]).
    #[serde(default = "d_thresholds")]
    pub tx_thresholds_bytes: Vec<u32>,
}

impl Default for NicDmaConfig {
    fn default() -> Self {
        NicDmaConfig {
            rx_fifo_bytes: d_rx_fifo(),
            tx_thresholds_bytes: d_thresholds(),
        }
    }
}

fn d_rx_fifo() -> u32 {
    2048
}
fn d_thresholds() -> Vec<u32> {
    vec![128, 256, 512, 1024]
}

impl NicDmaConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("rx_fifo_bytes", self.rx_fifo_bytes as u64, 64, "byte");
        for (i, t) in self.tx_thresholds_bytes.iter().enumerate() {
            p.at_least(&format!("tx_thresholds_bytes[{i}]"), *t as u64, 1, "byte");
        }
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
    /// Largest burst [bytes] (`burst_bytes`).
    pub burst_bytes: u32,
    /// Size of a DMA descriptor [bytes] (`descriptor_bytes`).
    pub descriptor_bytes: u32,
    /// Delay before a read burst's data is ready (`read_latency_ns`).
    pub read_latency: SimTime,
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
            burst_bytes: cfg.burst_bytes,
            descriptor_bytes: cfg.descriptor_bytes,
            read_latency: SimTime::from_ns_f64(cfg.read_latency_ns),
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

/// A frame being fetched by the transmit engine.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TxFetch {
    pub pkt: crate::packet::Packet,
    /// Earliest start (descriptor handed over plus `tx_latency_ns`).
    pub eligible: SimTime,
    /// Whether the descriptor has been fetched.
    pub desc_done: bool,
    /// Frame bytes in the FIFO or already sent.
    pub fetched: u32,
    /// First bit on the wire, once the threshold was reached.
    pub start: Option<SimTime>,
}

/// One NIC's DMA engines and FIFOs.
#[derive(Clone, Debug)]
pub(crate) struct NicDma {
    /// Frames in the RX FIFO; the head is being written to memory.
    pub rx_fifo: VecDeque<crate::packet::Packet>,
    /// Bytes held in the RX FIFO [bytes].
    pub rx_fifo_used: u32,
    /// RX FIFO size (`rx_fifo_bytes`) [bytes].
    pub rx_fifo_cap: u32,
    /// Bytes of the head frame (plus descriptor) written so far.
    pub rx_written: u32,
    /// A receive burst is queued or on the bus.
    pub rx_busy: bool,
    /// The frame the transmit engine is fetching or sending.
    pub tx: Option<TxFetch>,
    /// A transmit burst is queued or on the bus.
    pub tx_busy: bool,
    /// Transmit thresholds, in the order an underrun steps through them
    /// (`tx_thresholds_bytes`) [bytes].
    pub thresholds: Vec<u32>,
    /// Current threshold step; `thresholds.len()` means store-and-forward.
    pub threshold_step: usize,
    /// Engines were reset while a burst was on the bus: ignore its completion.
    pub stale_rx: bool,
    /// The same for the transmit engine.
    pub stale_tx: bool,
    /// Transmit underruns -- counter.
    pub tx_underruns: u64,
}

impl NicDma {
    pub fn new(cfg: &NicDmaConfig) -> NicDma {
        NicDma {
            rx_fifo: VecDeque::new(),
            rx_fifo_used: 0,
            rx_fifo_cap: cfg.rx_fifo_bytes,
            rx_written: 0,
            rx_busy: false,
            tx: None,
            tx_busy: false,
            thresholds: cfg.tx_thresholds_bytes.clone(),
            threshold_step: 0,
            stale_rx: false,
            stale_tx: false,
            tx_underruns: 0,
        }
    }

    /// Bytes the transmitter waits for before starting a frame of `bytes`.
    pub fn threshold(&self, bytes: u32) -> u32 {
        self.thresholds
            .get(self.threshold_step)
            .map_or(bytes, |t| (*t).min(bytes))
    }

    /// The driver raises the threshold one step after an underrun.
    pub fn raise_threshold(&mut self) {
        if self.threshold_step < self.thresholds.len() {
            self.threshold_step += 1;
        }
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
    fn thresholds_step_to_store_and_forward() {
        let mut d = NicDma::new(&NicDmaConfig::default());
        assert_eq!(d.threshold(600), 128);
        assert_eq!(d.threshold(64), 64);
        for _ in 0..3 {
            d.raise_threshold();
        }
        assert_eq!(d.threshold(2000), 1024);
        d.raise_threshold();
        assert_eq!(d.threshold(2000), 2000); // store-and-forward
        d.raise_threshold();
        assert_eq!(d.threshold(600), 600);
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
