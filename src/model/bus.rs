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
//! - Every DMA engine (receive and transmit of each NIC, [`crate::model::nic::dma`]) moves a frame
//!   in bursts of at most `burst_bytes`, one burst in flight at a time; the bus serves
//!   bursts in the order they became ready (a read burst after its latency), so engines
//!   interleave. A burst takes its overhead (`write_overhead_ns` or `read_overhead_ns`:
//!   arbitration, address phase, turnaround) plus `bytes / width_bytes` bus clocks. A
//!   read burst first waits `read_latency_ns` without holding the bus (memory latency;
//!   behind a PCI-PCI bridge the delayed transaction, during which the device is told
//!   to retry).
//! - The FIFOs, the burst sequence of a frame, transmit thresholds and underruns are
//!   the engines' (`crate::model::nic::dma::NicDma`); the bus only carries their bursts.
//!
//! Parameters ([`BusConfig`]) with defaults: `clock_mhz` 33.33, `width_bytes` 4,
//! `burst_bytes` 64, `write_overhead_ns` 120 (4 clocks), `read_overhead_ns` 120,
//! `read_latency_ns` 0, `descriptor_bytes` 16 (a 21143 descriptor). Per NIC
//! ([`crate::model::nic::dma::NicDmaConfig`]): `rx_fifo_bytes` 2048, `tx_thresholds_bytes`
//! [128, 256, 512, 1024].
//!
//! Counters: `bus.busy_ms` (time the bus carried bursts), `bus.bursts`.

use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// The shared bus as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BusConfig {
    /// Bus clock \[MHz\] (default 33.33: PCI).
    #[serde(default = "d_clock")]
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 1e5))]
    pub clock_mhz: f64,
    /// Bytes per bus clock in a burst (default 4: 32-bit PCI).
    #[serde(default = "d_width")]
    #[schemars(range(min = 1))]
    pub width_bytes: u32,
    /// Largest burst a DMA engine makes \[bytes\] (default 64: 16 longwords).
    #[serde(default = "d_burst")]
    #[schemars(range(min = 1))]
    pub burst_bytes: u32,
    /// Fixed cost of a burst the device writes to memory: arbitration, address phase,
    /// turnaround; posted by a bridge \[ns\] (default 120).
    #[serde(default = "d_overhead")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub write_overhead_ns: f64,
    /// Bus time of a burst the device reads from memory beyond its data clocks
    /// (default 120) \[ns\].
    #[serde(default = "d_overhead")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub read_overhead_ns: f64,
    /// Time a read burst waits before it can use the bus, without holding it: memory
    /// latency and, behind a PCI-PCI bridge, the delayed transaction the bridge runs on
    /// the primary bus while the device is told to retry (default 0) \[ns\].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub read_latency_ns: f64,
    /// Size of a descriptor fetch or write-back \[bytes\] (default 16).
    #[serde(default = "d_desc")]
    #[schemars(range(min = 1))]
    pub descriptor_bytes: u32,
    /// A link with a lane in each direction, as PCI Express is, modelled by its
    /// device-to-host direction (default false: one shared bus, as PCI is). The bus
    /// then carries the device's writes (their data and `write_overhead_ns`) and its
    /// read requests (`read_overhead_ns` only: a request carries no data); the read
    /// data comes back on the host-to-device lanes, which are not modelled (they carry
    /// less: no receive data, no completion entries). A read request ready to go
    /// goes before the writes waiting: a device on such a link issues its reads ahead
    /// of need, many outstanding at once, so a send does not wait behind the receive
    /// writes queued on the link (the engines here fetch one frame at a time).
    #[serde(default)]
    pub full_duplex: bool,
}

impl Default for BusConfig {
    /// The defaults a model file gets for an empty `bus` object.
    fn default() -> Self {
        BusConfig {
            clock_mhz: d_clock(),
            width_bytes: d_width(),
            burst_bytes: d_burst(),
            write_overhead_ns: d_overhead(),
            read_overhead_ns: d_overhead(),
            read_latency_ns: 0.0,
            descriptor_bytes: d_desc(),
            full_duplex: false,
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
/// Default overhead of a burst, write or read \[ns\]: 4 clocks at 33 MHz.
fn d_overhead() -> f64 {
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
    /// Bytes carried \[bytes\].
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
    /// Read bursts hold the bus for their request only (`full_duplex`) -- parameter.
    read_request_only: bool,
    /// Data time of a burst of `b` bytes for every `b` up to the largest burst or
    /// descriptor (at most 4,096 entries), computed once as `duration` would \[ps\].
    data_ps: Vec<u64>,
    /// Time spent carrying bursts \[ps\] -- counter.
    pub busy_ps: u64,
    /// Bursts carried -- counter.
    pub bursts: u64,
}

impl Bus {
    /// Its counters: `bus.busy_ms` (time carrying bursts \[ms\]) and `bus.bursts`.
    pub fn counters(&self, c: &mut std::collections::BTreeMap<String, f64>) {
        c.insert("bus.busy_ms".into(), self.busy_ps as f64 / 1e9);
        c.insert("bus.bursts".into(), self.bursts as f64);
    }

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
            read_request_only: cfg.full_duplex,
            busy_ps: 0,
            bursts: 0,
        }
    }

    /// Bursts waiting for the bus or on it.
    pub fn requests(&self) -> usize {
        self.pending.len() + self.current.is_some() as usize
    }

    /// Data clocks of `bytes` bytes \[ps\] (+ 0.5 and truncation: round half up without
    /// a libm call).
    fn data_time(ps_per_byte: f64, bytes: u32) -> u64 {
        (bytes as f64 * ps_per_byte + 0.5) as u64
    }

    fn duration(&self, b: &Burst) -> SimTime {
        let over = match b.dir {
            Dir::RxWrite => self.write_ps,
            Dir::TxRead if self.read_request_only => return SimTime(self.read_ps),
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
        let k = if self.read_request_only {
            // Among the bursts ready by now (or, if none is, the first to be), a read
            // request first.
            (0..self.pending.len()).min_by_key(|&k| {
                let (ready, seq, b) = self.pending[k];
                (ready.max(now), b.dir != Dir::TxRead, ready, seq)
            })?
        } else {
            (0..self.pending.len()).min_by_key(|&k| (self.pending[k].0, self.pending[k].1))?
        };
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
            full_duplex: false,
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
            full_duplex: false,
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

    /// A bus with round numbers: 25 MHz x 4 bytes = 10 ns per byte (exactly 10,000 ps
    /// in floating point), 100 ns write overhead, 200 ns read overhead, no read latency.
    /// A 64-byte write takes 100 + 640 = 740 ns, a 64-byte read 200 + 640 = 840 ns.
    fn round_bus() -> Bus {
        Bus::new(&BusConfig {
            clock_mhz: 25.0,
            width_bytes: 4,
            burst_bytes: 64,
            write_overhead_ns: 100.0,
            read_overhead_ns: 200.0,
            read_latency_ns: 0.0,
            descriptor_bytes: 16,
            full_duplex: false,
        })
    }

    fn ns(x: u64) -> SimTime {
        SimTime(x * 1_000)
    }

    fn write(nic: u16, bytes: u32) -> Burst {
        Burst {
            nic,
            dir: Dir::RxWrite,
            bytes,
        }
    }

    fn read(nic: u16, bytes: u32) -> Burst {
        Burst {
            nic,
            dir: Dir::TxRead,
            bytes,
        }
    }

    #[test]
    fn the_defaults_are_those_documented() {
        let cfg: BusConfig = serde_json::from_str("{}").expect("empty bus object");
        assert_eq!(cfg, BusConfig::default());
        assert_eq!(
            (
                cfg.clock_mhz,
                cfg.width_bytes,
                cfg.burst_bytes,
                cfg.descriptor_bytes
            ),
            (33.33, 4, 64, 16)
        );
        assert_eq!(
            (
                cfg.write_overhead_ns,
                cfg.read_overhead_ns,
                cfg.read_latency_ns
            ),
            (120.0, 120.0, 0.0)
        );
        let mut p = Problems::new();
        cfg.validate(&mut p);
        assert!(p.is_empty());
        let mut p = Problems::new();
        BusConfig {
            clock_mhz: 0.0,
            width_bytes: 0,
            ..cfg
        }
        .validate(&mut p);
        let paths: Vec<_> = p.list.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["clock_mhz", "width_bytes"]);
    }

    #[test]
    fn burst_time_follows_the_parameters() {
        let mut bus = round_bus();
        let mut time = |b: Burst| {
            let end = bus.request(b, ns(0), ns(0)).expect("idle bus");
            bus.complete(end);
            end
        };
        // 64-byte write: 100 ns + 64 x 10 ns.
        assert_eq!(time(write(0, 64)), ns(740));
        // 64-byte read: 200 ns + 640 ns.
        assert_eq!(time(read(0, 64)), ns(840));
        // A 16-byte descriptor write-back: 100 + 160 ns; a 1-byte write 100 + 10 ns.
        assert_eq!(time(write(0, 16)), ns(260));
        assert_eq!(time(write(0, 1)), ns(110));
        // Larger than the precomputed table (64 bytes): 100 + 1,000 ns all the same.
        assert_eq!(time(write(0, 100)), ns(1_100));
        // 64-bit 66 MHz PCI: 8 clocks of 15.1515 ns = 121,212.1 ps, rounded to 121,212,
        // plus 120 ns overhead.
        let mut wide = Bus::new(&BusConfig {
            clock_mhz: 66.0,
            width_bytes: 8,
            ..BusConfig::default()
        });
        let end = wide.request(write(0, 64), ns(0), ns(0)).expect("idle bus");
        assert_eq!(end, SimTime(120_000 + 121_212));
    }

    /// PCI Express 3.0 x16 as `scenarios/xdp-paper-xdp-drop.json` writes it: 16 lanes at
    /// 8 GT/s with 128b/130b coding are 16 bytes per 1.015625 ns (984.615 MHz), and a
    /// TLP's own bytes (the STP token 4, which carries the sequence number, a 4-DW
    /// header 16, LCRC 4: 24 bytes, 1.523 ns) are the overhead. Full duplex: a write
    /// carries its data, a read only its request.
    #[test]
    fn a_full_duplex_link_charges_a_read_its_request_only() {
        let cfg = BusConfig {
            clock_mhz: 984.615,
            width_bytes: 16,
            write_overhead_ns: 1.523,
            read_overhead_ns: 1.523,
            descriptor_bytes: 64,
            full_duplex: true,
            ..BusConfig::default()
        };
        let mut bus = Bus::new(&cfg);
        let mut time = |b: Burst| {
            let end = bus.request(b, ns(0), ns(0)).expect("idle bus");
            bus.complete(end);
            end.0
        };
        // 64-byte write: 1,523 ps + 64 / 16 x 1,015.625 ps (4,062.5, rounded half up).
        assert_eq!(time(write(0, 64)), 1_523 + 4_063);
        // A read of any size holds the device-to-host lanes for its request alone.
        assert_eq!(time(read(0, 64)), 1_523);
        assert_eq!(time(read(0, 1_500)), 1_523);
        let half = Bus::new(&BusConfig {
            full_duplex: false,
            ..cfg
        });
        assert_eq!(half.duration(&read(0, 64)).0, 1_523 + 4_063);
    }

    /// With `full_duplex`, among the bursts waiting when the bus frees, a read request
    /// goes before a write that became ready earlier; without it, first come first served.
    #[test]
    fn a_full_duplex_link_serves_a_waiting_read_before_a_waiting_write() {
        for (duplex, first) in [(true, Dir::TxRead), (false, Dir::RxWrite)] {
            let mut bus = Bus::new(&BusConfig {
                full_duplex: duplex,
                ..BusConfig::default()
            });
            let end = bus.request(write(0, 64), ns(0), ns(0)).expect("idle bus");
            assert_eq!(bus.request(write(1, 64), ns(1), ns(1)), None);
            assert_eq!(bus.request(read(2, 64), ns(2), ns(2)), None);
            let (done, _) = bus.complete(end);
            assert_eq!(done.nic, 0);
            assert_eq!(bus.current.expect("next burst").0.dir, first, "{duplex}");
        }
    }

    #[test]
    fn bursts_ready_together_are_served_first_come_first_served() {
        let mut bus = round_bus();
        // NICs 2, 0, 1 ask at the same instant (in that order): the first gets the bus,
        // the others wait, whatever their NIC number.
        assert_eq!(bus.request(write(2, 64), ns(0), ns(0)), Some(ns(740)));
        assert_eq!(bus.request(write(0, 64), ns(0), ns(0)), None);
        assert_eq!(bus.request(read(1, 64), ns(0), ns(0)), None);
        assert_eq!(bus.requests(), 3);
        assert_eq!(bus.on_bus(ns(10)), Some(write(2, 64)));
        // Back to back: 740, then + 740, then + 840 ns.
        assert_eq!(bus.complete(ns(740)), (write(2, 64), Some(ns(1_480))));
        assert_eq!(bus.on_bus(ns(1_000)), Some(write(0, 64)));
        assert_eq!(bus.complete(ns(1_480)), (write(0, 64), Some(ns(2_320))));
        assert_eq!(bus.complete(ns(2_320)), (read(1, 64), None));
        assert_eq!(bus.requests(), 0);
        assert_eq!(bus.on_bus(ns(2_400)), None);
        // Counters: 3 bursts, 740 + 740 + 840 ns carried.
        assert_eq!((bus.bursts, bus.busy_ps), (3, ns(2_320).0));
    }

    #[test]
    fn the_burst_ready_first_goes_next_not_the_one_asked_first() {
        let mut bus = round_bus();
        // A write holds the bus 0-740 ns.
        bus.request(write(0, 64), ns(0), ns(0)).expect("idle bus");
        // At 100 ns NIC 1 asks for a read that is ready at 600 ns (memory latency); at
        // 200 ns NIC 2 asks for a write ready at once; at 300 ns NIC 3 a write also
        // ready at 600 ns.
        assert_eq!(bus.request(read(1, 64), ns(600), ns(100)), None);
        assert_eq!(bus.request(write(2, 64), ns(200), ns(200)), None);
        assert_eq!(bus.request(write(3, 64), ns(600), ns(300)), None);
        // Served by ready time: NIC 2 (200 ns), then NIC 1 and NIC 3 (both ready at
        // 600 ns: in request order).
        assert_eq!(bus.complete(ns(740)), (write(0, 64), Some(ns(1_480))));
        assert_eq!(bus.complete(ns(1_480)), (write(2, 64), Some(ns(2_320))));
        assert_eq!(bus.complete(ns(2_320)), (read(1, 64), Some(ns(3_060))));
        assert_eq!(bus.complete(ns(3_060)), (write(3, 64), None));
    }

    #[test]
    fn the_bus_waits_for_a_read_that_is_not_ready_without_counting_it_busy() {
        let mut bus = round_bus();
        bus.request(write(0, 64), ns(0), ns(0)).expect("idle bus");
        // A read asked at 100 ns is ready at 1,000 ns: after the write ends (740 ns)
        // the bus is reserved for it from 1,000 to 1,840 ns, idle meanwhile.
        assert_eq!(bus.request(read(1, 64), ns(1_000), ns(100)), None);
        assert_eq!(bus.complete(ns(740)), (write(0, 64), Some(ns(1_840))));
        assert_eq!(bus.on_bus(ns(900)), None);
        assert_eq!(bus.on_bus(ns(1_000)), Some(read(1, 64)));
        assert_eq!(bus.complete(ns(1_840)).1, None);
        // Busy 740 + 840 ns: the 260 ns gap is not counted.
        assert_eq!(bus.busy_ps, ns(1_580).0);
    }

    #[test]
    fn a_reserved_burst_gives_way_only_to_one_ready_before_its_start() {
        let mut bus = round_bus();
        // Idle bus: a read ready at 500 ns is reserved for 500-1,340 ns.
        assert_eq!(bus.request(read(0, 64), ns(500), ns(0)), Some(ns(1_340)));
        // A write ready at 600 ns (after the reserved start) waits.
        assert_eq!(bus.request(write(1, 64), ns(600), ns(100)), None);
        // A write ready at 200 ns takes the bus at once (200-940 ns); the read goes
        // back to waiting.
        assert_eq!(bus.request(write(2, 64), ns(200), ns(200)), Some(ns(940)));
        assert_eq!(bus.requests(), 3);
        // Then by ready time: the read (500 ns) from 940 to 1,780 ns, the write (600
        // ns) from 1,780 to 2,520 ns.
        assert_eq!(bus.complete(ns(940)), (write(2, 64), Some(ns(1_780))));
        assert_eq!(bus.complete(ns(1_780)), (read(0, 64), Some(ns(2_520))));
        assert_eq!(bus.complete(ns(2_520)), (write(1, 64), None));
        assert_eq!(bus.bursts, 3);
    }

    #[test]
    fn a_reset_forgets_the_nics_waiting_and_reserved_bursts() {
        let mut bus = round_bus();
        // NIC 0's write is on the bus (0-740 ns); NIC 1, NIC 0 and NIC 1 again wait.
        bus.request(write(0, 64), ns(0), ns(0)).expect("idle bus");
        bus.request(write(1, 64), ns(0), ns(0));
        bus.request(read(0, 16), ns(0), ns(0));
        bus.request(read(1, 16), ns(0), ns(0));
        // NIC 0 resets at 100 ns: its waiting read is forgotten; its write, already on
        // the bus, completes; the bus end time does not change.
        assert_eq!(bus.cancel(0, ns(100)), None);
        assert_eq!(bus.requests(), 3);
        assert_eq!(bus.complete(ns(740)), (write(0, 64), Some(ns(1_480))));
        // 16-byte read: 200 + 160 ns.
        assert_eq!(bus.complete(ns(1_480)), (write(1, 64), Some(ns(1_840))));
        assert_eq!(bus.complete(ns(1_840)), (read(1, 16), None));

        // A reserved burst not started yet is withdrawn: the next one takes its place
        // (NIC 3's read, ready at 2,600 ns: 2,600-3,440 ns)...
        assert_eq!(
            bus.request(read(2, 64), ns(2_500), ns(2_000)),
            Some(ns(3_340))
        );
        assert_eq!(bus.request(read(3, 64), ns(2_600), ns(2_000)), None);
        assert_eq!(bus.cancel(2, ns(2_100)), Some(Some(ns(3_440))));
        // ...or the bus goes idle.
        assert_eq!(bus.cancel(3, ns(2_200)), Some(None));
        assert_eq!(bus.requests(), 0);
        // Withdrawn bursts are not counted as carried.
        assert_eq!(bus.bursts, 3);
    }
}
