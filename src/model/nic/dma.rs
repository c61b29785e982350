//! A NIC's DMA engines and FIFOs: the receive and transmit bus masters of one chip.
//!
//! Models the bus-master DMA of a DEC 21143 (dc(4)) between its FIFOs and host memory,
//! moving frames over the shared [`crate::model::bus`] in bursts:
//!
//! ```text
//!  wire -> RX FIFO --write bursts--> memory        (frame, then descriptor write-back)
//!  memory --read bursts--> TX FIFO -> wire          (descriptor fetch, then frame)
//! ```
//!
//! - **Receive** (`NicDma::rx_in`, `NicDma::rx_burst_done`, `NicDma::rx_next_burst`):
//!   a frame waits in the RX FIFO (`rx_fifo_bytes`) from its last bit (plus the NIC's
//!   `rx_latency_ns`) until it has been written to memory. A frame that does not fit
//!   is dropped (`RxIn::Dropped`; the host counts drop site `rx_fifo`, the chip's
//!   FIFO-overflow count); a frame larger than the whole FIFO still passes when the
//!   FIFO is empty (the chip writes it out while it arrives). The head frame is written
//!   in bursts of at most `burst_bytes`, its bytes then its descriptor write-back
//!   (`descriptor_bytes`), one burst queued or on the bus at a time; the frame's bytes
//!   leave the FIFO as they are written, and the frame completes into the RX ring after
//!   the last burst. A multi-queue NIC has one RX FIFO, its port's packet buffer,
//!   shared by its queues: each queue device's engine writes out its own queue's
//!   frames, and a frame fits if the bytes held for every queue leave room for it
//!   (`NicDma::rx_in`, the other queues' bytes given by the host).
//! - **Transmit** (`NicDma::tx_begin`, `NicDma::tx_burst_done`): once the driver
//!   has handed a frame over (eligible at the hand-over plus `tx_latency_ns`), the
//!   engine fetches its descriptor (`descriptor_bytes`), then the frame in bursts of at
//!   most `burst_bytes`, each a read that first waits `read_latency_ns`. The frame starts
//!   on the wire once `threshold` bytes are in the TX FIFO, at the later of that instant
//!   and its eligible time (`TxStep::Fetch` or `TxStep::Complete` with `started`).
//!   The threshold is the current step of `tx_thresholds_bytes` (capped at the frame);
//!   after the last step, store-and-forward: the whole frame.
//! - **Underrun**: a data burst that completes after the wire has sent the preamble
//!   (8 bytes) and every byte before it came too late: the FIFO ran dry
//!   (`TxStep::Underrun`); so did a frame whose wire time ends while it is still being
//!   fetched (`NicDma::tx_wire_end`). The frame is aborted; the host counts drop site
//!   `tx_underrun` and raises TX_UNDERRUN for the driver, which steps the threshold
//!   (`NicDma::raise_threshold`; see [`crate::model::policy::interrupt`]).
//! - **Reset** (`NicDma::reset`, `NicDma::reset_engines`): a chip reset empties
//!   the FIFOs; a burst already on the bus still completes, and its engine ignores it.
//! - Not modelled: the transmit engine does not prefetch the next frame while one is on
//!   the wire (it starts fetching the next one when the previous has left), and a frame
//!   is written to memory only once it has fully arrived (no receive cut-through).
//!
//! The engine decides; the host routes: it hands the returned [`Burst`]s to the
//! `crate::model::bus::Bus`, completed receive frames to the NIC's RX ring, started and
//! complete transmit frames to the output wire.
//!
//! Parameters: per NIC ([`NicDmaConfig`]) `rx_fifo_bytes` 2048 \[bytes\],
//! `tx_thresholds_bytes` [128, 256, 512, 1024] \[bytes\] (the 21143's CSR6 TR field at
//! 100 Mbit/s; NetBSD's tlp_10_100_txthresh_tab); from the bus ([`BusConfig`])
//! `burst_bytes` 64, `descriptor_bytes` 16 (a 21143 descriptor), `read_latency_ns` 0.
//!
//! Counters: `<nic>.tx_underruns`, `<nic>.tx_threshold_step` (0 = the first threshold;
//! the number of thresholds = store-and-forward).

use crate::model::bus::{Burst, BusConfig, Dir};
use crate::model::nic::link::Link;
use crate::model::packet::Packet;
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Bytes of preamble the wire sends before a frame's first byte \[bytes\].
const PREAMBLE_BYTES: u32 = 8;

/// A NIC's FIFOs and transmit thresholds, used when the model has a bus.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NicDmaConfig {
    /// Receive FIFO \[bytes\] (default 2048); a multi-queue NIC's queues share it (the
    /// port's one packet buffer).
    #[serde(default = "d_rx_fifo")]
    #[schemars(range(min = 64))]
    pub rx_fifo_bytes: u32,
    /// Transmit start thresholds, in the order the driver steps through them after
    /// each underrun; after the last one the chip is put in store-and-forward mode
    /// \[bytes\] (default [128, 256, 512, 1024]).
    #[serde(default = "d_thresholds")]
    #[schemars(extend("items" = {"type": "integer", "minimum": 1}))]
    pub tx_thresholds_bytes: Vec<u32>,
    /// A frame whose turn to be written comes while its RX ring has no free
    /// descriptor is dropped unwritten, without using the bus (mlx5: no receive WQE
    /// posted, counted in `rx_out_of_buffer`). Default false: the engine writes it and
    /// the ring then refuses it, as the model has always done for the 21143.
    #[serde(default)]
    pub drop_without_descriptor: bool,
}

impl Default for NicDmaConfig {
    fn default() -> Self {
        NicDmaConfig {
            rx_fifo_bytes: d_rx_fifo(),
            tx_thresholds_bytes: d_thresholds(),
            drop_without_descriptor: false,
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

/// What became of a frame that reached the RX FIFO (`NicDma::rx_in`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RxIn {
    /// It did not fit in the FIFO: dropped (drop site `rx_fifo`).
    Dropped,
    /// The engine would start writing it at once, but the RX ring has no free
    /// descriptor and the NIC drops such a frame unwritten
    /// (`drop_without_descriptor`): dropped (drop site `rx_ring`).
    NoDescriptor,
    /// It waits in the FIFO. `request`: the receive engine was idle, ask the bus for
    /// this burst, ready now.
    Queued { request: Option<Burst> },
}

/// A transmit burst for the bus: it can use the bus from `ready`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TxRequest {
    /// The read burst (descriptor fetch or frame data).
    pub burst: Burst,
    /// When the engine asked plus the bus's read latency; the host never lets it be
    /// earlier than the bus's present.
    pub ready: SimTime,
}

/// A frame on the wire: first bit of its preamble at `start`, end of its gap at `done`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wire {
    /// First bit on the wire.
    pub start: SimTime,
    /// `start` plus the frame's wire time (preamble and inter-frame gap included).
    pub done: SimTime,
}

/// What the transmit engine does after a read burst (`NicDma::tx_burst_done`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TxStep {
    /// Nothing: no frame to fetch (the burst was of an aborted frame, or none left).
    Idle,
    /// More of the frame to fetch: request `next`. `started`: the threshold was
    /// reached with this burst, the frame goes on the wire (schedule its end).
    Fetch {
        started: Option<Wire>,
        next: TxRequest,
    },
    /// Every byte of `pkt` is in the FIFO: it leaves on `wire`. `started`: the frame
    /// went on the wire with this burst (schedule its end).
    Complete {
        pkt: Packet,
        wire: Wire,
        started: bool,
    },
    /// The burst came after the wire had sent the bytes before it: the FIFO ran dry,
    /// the frame is aborted (already counted in `tx_underruns`).
    Underrun,
}

/// A frame being fetched by the transmit engine.
#[derive(Clone, Copy, Debug)]
struct TxFetch {
    pkt: Packet,
    /// Earliest start (descriptor handed over plus `tx_latency_ns`).
    eligible: SimTime,
    /// Whether the descriptor has been fetched.
    desc_done: bool,
    /// Frame bytes in the FIFO or already sent \[bytes\].
    fetched: u32,
    /// First bit on the wire, once the threshold was reached.
    start: Option<SimTime>,
}

/// One NIC's DMA engines and FIFOs during a run.
///
/// Invariants: `rx_fifo_used` is the bytes of the frames in `rx_fifo` not yet written
/// to memory; at most one receive and one transmit burst is queued or on the bus
/// (`rx_busy`, `tx_busy`); `threshold_step <= thresholds.len()`.
#[derive(Clone, Debug)]
pub(crate) struct NicDma {
    /// This NIC's index: the master named in its bursts.
    nic: u16,
    /// Frames in the RX FIFO; the head is being written to memory.
    rx_fifo: VecDeque<Packet>,
    /// Bytes held in the RX FIFO \[bytes\].
    rx_fifo_used: u32,
    /// RX FIFO size (`rx_fifo_bytes`) \[bytes\] -- parameter.
    rx_fifo_cap: u32,
    /// Bytes of the head frame (plus descriptor) written so far \[bytes\].
    rx_written: u32,
    /// A receive burst is queued or on the bus.
    rx_busy: bool,
    /// The frame the transmit engine is fetching or sending.
    tx: Option<TxFetch>,
    /// A transmit burst is queued or on the bus.
    tx_busy: bool,
    /// Transmit thresholds, in the order an underrun steps through them
    /// (`tx_thresholds_bytes`) \[bytes\] -- parameter.
    thresholds: Vec<u32>,
    /// Current threshold step; `thresholds.len()` means store-and-forward -- counter.
    threshold_step: usize,
    /// Engines were reset while a burst was on the bus: ignore its completion.
    stale_rx: bool,
    /// The same for the transmit engine.
    stale_tx: bool,
    /// Largest burst (`burst_bytes`) \[bytes\] -- parameter.
    burst_bytes: u32,
    /// Descriptor fetch or write-back (`descriptor_bytes`) \[bytes\] -- parameter.
    descriptor_bytes: u32,
    /// Wait before a read burst can use the bus (`read_latency_ns`) -- parameter.
    read_latency: SimTime,
    /// Transmit underruns -- counter.
    tx_underruns: u64,
    /// `drop_without_descriptor` -- parameter.
    drop_without_descriptor: bool,
}

impl NicDma {
    /// The engines of NIC `nic` with FIFOs `cfg`, mastering a bus `bus`.
    pub fn new(nic: u16, cfg: &NicDmaConfig, bus: &BusConfig) -> NicDma {
        NicDma {
            nic,
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
            burst_bytes: bus.burst_bytes,
            descriptor_bytes: bus.descriptor_bytes,
            read_latency: SimTime::from_ns_f64(bus.read_latency_ns),
            tx_underruns: 0,
            drop_without_descriptor: cfg.drop_without_descriptor,
        }
    }

    /// Whether the next frame to start would be dropped if its RX ring were full: the
    /// NIC drops frames without a descriptor (`drop_without_descriptor`) and no frame is
    /// being written.
    #[inline]
    pub fn rx_between_frames(&self) -> bool {
        self.drop_without_descriptor && !self.rx_busy && self.rx_written == 0
    }

    /// The RX ring has no free descriptor for the head frame, whose turn has come
    /// (`rx_between_frames`): drop it unwritten and return it.
    #[inline]
    pub fn rx_drop_head(&mut self) -> Option<Packet> {
        if !self.rx_between_frames() {
            return None;
        }
        let p = self.rx_fifo.pop_front()?;
        self.rx_fifo_used -= p.bytes;
        Some(p)
    }

    // ------------------------------------------------------------------ receive

    /// A frame reached an RX FIFO that also holds `others` bytes of other queues'
    /// frames (the port's one packet buffer, `rx_fifo_bytes`, shared by a multi-queue
    /// NIC's queues): queue it, or drop it if it does not fit beside them.
    #[inline]
    pub fn rx_in(&mut self, pkt: Packet, others: u32) -> RxIn {
        // (A frame larger than the whole FIFO still goes through when the FIFO is
        // empty: the chip writes it out while it arrives.)
        let used = self.rx_fifo_used + others;
        if used > 0 && used + pkt.bytes > self.rx_fifo_cap {
            return RxIn::Dropped;
        }
        self.rx_fifo_used += pkt.bytes;
        self.rx_fifo.push_back(pkt);
        let request = if self.rx_busy {
            None
        } else {
            self.rx_next_burst()
        };
        RxIn::Queued { request }
    }

    /// The next receive burst of the frame at the head of the FIFO, if there is one;
    /// the engine is then busy until `NicDma::rx_burst_done`. Call after
    /// `rx_burst_done` (once the completed frame, if any, has been routed).
    #[inline]
    pub fn rx_next_burst(&mut self) -> Option<Burst> {
        let head = self.rx_fifo.front()?;
        let total = head.bytes + self.descriptor_bytes;
        let bytes = (total - self.rx_written).min(self.burst_bytes);
        self.rx_busy = true;
        Some(Burst {
            nic: self.nic,
            dir: Dir::RxWrite,
            bytes,
        })
    }

    /// A receive burst of `bytes` ended: free the frame bytes it wrote from the FIFO.
    /// Returns the head frame when this was its last burst (its descriptor written
    /// back): it goes to the RX ring. Then ask `NicDma::rx_next_burst`.
    #[inline]
    pub fn rx_burst_done(&mut self, bytes: u32) -> Option<Packet> {
        self.rx_busy = false;
        if std::mem::take(&mut self.stale_rx) {
            return None;
        }
        let head = *self.rx_fifo.front().expect("frame in DMA");
        // The frame's bytes leave the FIFO as they are written; the descriptor
        // write-back comes last.
        let freed = bytes.min(head.bytes.saturating_sub(self.rx_written));
        self.rx_fifo_used -= freed;
        self.rx_written += bytes;
        if self.rx_written >= head.bytes + self.descriptor_bytes {
            self.rx_fifo.pop_front();
            self.rx_written = 0;
            return Some(head);
        }
        None
    }

    // ------------------------------------------------------------------ transmit

    /// The driver handed `pkt` to the chip, to start no earlier than `eligible`: fetch
    /// its descriptor, then the frame. Returns the descriptor fetch to request, asked
    /// at the later of `eligible` and `now`; none while a burst of an aborted frame is
    /// still queued or on the bus (its completion starts this one).
    #[inline]
    pub fn tx_begin(&mut self, pkt: Packet, eligible: SimTime, now: SimTime) -> Option<TxRequest> {
        self.tx = Some(TxFetch {
            pkt,
            eligible,
            desc_done: false,
            fetched: 0,
            start: None,
        });
        if self.tx_busy {
            return None;
        }
        self.tx_request(eligible.max(now))
    }

    /// The next read burst of the frame being fetched, asked at `at`.
    #[inline]
    fn tx_request(&mut self, at: SimTime) -> Option<TxRequest> {
        let f = self.tx.as_ref()?;
        let bytes = if f.desc_done {
            (f.pkt.bytes - f.fetched).min(self.burst_bytes)
        } else {
            self.descriptor_bytes
        };
        self.tx_busy = true;
        Some(TxRequest {
            burst: Burst {
                nic: self.nic,
                dir: Dir::TxRead,
                bytes,
            },
            ready: at + self.read_latency,
        })
    }

    /// A transmit burst of `bytes` ended at `now`; `link` is the output wire.
    /// Decides whether the FIFO ran dry, whether the frame starts on the wire, and
    /// whether it is complete or needs another burst.
    #[inline]
    pub fn tx_burst_done(&mut self, bytes: u32, now: SimTime, link: &Link) -> TxStep {
        self.tx_busy = false;
        if std::mem::take(&mut self.stale_tx) {
            // A burst of an aborted frame: go on with the frame now fetched.
            let at = match self.tx {
                Some(f) => f.eligible.max(now),
                None => return TxStep::Idle,
            };
            return match self.tx_request(at) {
                Some(next) => TxStep::Fetch {
                    started: None,
                    next,
                },
                None => TxStep::Idle,
            };
        }
        let Some(mut f) = self.tx else {
            return TxStep::Idle;
        };
        if !f.desc_done {
            f.desc_done = true;
        } else {
            let before = f.fetched;
            f.fetched += bytes;
            // Has the wire sent the preamble and `before` bytes by now?
            if let Some(start) = f.start
                && now > start + link.bytes_time(PREAMBLE_BYTES + before)
            {
                self.underrun();
                return TxStep::Underrun;
            }
        }
        let threshold = self.threshold(f.pkt.bytes);
        let complete = f.fetched >= f.pkt.bytes;
        let mut started = None;
        if f.start.is_none() && f.desc_done && f.fetched >= threshold {
            let start = now.max(f.eligible);
            f.start = Some(start);
            started = Some(Wire {
                start,
                done: start + link.wire_time(f.pkt.bytes),
            });
        }
        if complete {
            self.tx = None;
            let start = f.start.expect("started");
            TxStep::Complete {
                pkt: f.pkt,
                wire: Wire {
                    start,
                    done: start + link.wire_time(f.pkt.bytes),
                },
                started: started.is_some(),
            }
        } else {
            self.tx = Some(f);
            let next = self.tx_request(now).expect("a frame in fetch");
            TxStep::Fetch { started, next }
        }
    }

    /// The wire reached the end of its frame. If that frame is still being fetched,
    /// the FIFO ran dry on the way: abort it (counted in `tx_underruns`) and return
    /// true.
    #[inline]
    pub fn tx_wire_end(&mut self) -> bool {
        if self.tx.is_none() {
            return false;
        }
        self.underrun();
        true
    }

    /// The TX FIFO ran dry: the frame is lost; a burst of it still queued or on the bus
    /// is ignored when it ends.
    fn underrun(&mut self) {
        self.tx = None;
        self.stale_tx = self.tx_busy;
        self.tx_underruns += 1;
    }

    /// Bytes the transmitter waits for before starting a frame of `bytes` \[bytes\].
    #[inline]
    pub fn threshold(&self, bytes: u32) -> u32 {
        self.thresholds
            .get(self.threshold_step)
            .map_or(bytes, |t| (*t).min(bytes))
    }

    /// The driver raises the threshold one step after an underrun (after the last:
    /// store-and-forward, where it stays).
    pub fn raise_threshold(&mut self) {
        if self.threshold_step < self.thresholds.len() {
            self.threshold_step += 1;
        }
    }

    // ------------------------------------------------------------------ reset, state

    /// Chip reset, first half: the FIFOs are emptied and the frame in transmit dropped.
    /// Returns the frames that were in the RX FIFO (lost). Then call
    /// `NicDma::reset_engines` once the bus has dropped this NIC's waiting bursts.
    pub fn reset(&mut self) -> std::collections::vec_deque::Drain<'_, Packet> {
        self.rx_fifo_used = 0;
        self.rx_written = 0;
        self.tx = None;
        self.rx_fifo.drain(..)
    }

    /// Chip reset, second half: `on_bus` is the burst on the bus now (this NIC's
    /// waiting and reserved ones were cancelled). A burst of this NIC's engine on the
    /// bus still completes, and the engine ignores it; otherwise the engine is idle.
    pub fn reset_engines(&mut self, on_bus: Option<Burst>) {
        let mine = |dir| on_bus.is_some_and(|b| b.nic == self.nic && b.dir == dir);
        self.stale_rx = mine(Dir::RxWrite);
        self.stale_tx = mine(Dir::TxRead);
        self.rx_busy = self.stale_rx;
        self.tx_busy = self.stale_tx;
    }

    /// Whether the transmit engine has a frame it is fetching (not yet all in the FIFO).
    #[inline]
    pub fn tx_fetching(&self) -> bool {
        self.tx.is_some()
    }

    /// No frame in the RX FIFO or in transmit fetch, no burst queued or on the bus.
    #[inline]
    pub fn idle(&self) -> bool {
        self.rx_fifo.is_empty() && !self.rx_busy && self.tx.is_none() && !self.tx_busy
    }

    /// Bytes of this engine's frames in the RX FIFO \[bytes\].
    #[inline]
    pub fn rx_fifo_bytes(&self) -> u32 {
        self.rx_fifo_used
    }

    /// Frames in the RX FIFO.
    pub fn rx_fifo_frames(&self) -> usize {
        self.rx_fifo.len()
    }

    /// Its counters under NIC `nic`'s name: `<nic>.tx_underruns` and
    /// `<nic>.tx_threshold_step`.
    pub fn counters(&self, nic: &str, c: &mut std::collections::BTreeMap<String, f64>) {
        c.insert(format!("{nic}.tx_underruns"), self.tx_underruns as f64);
        c.insert(
            format!("{nic}.tx_threshold_step"),
            self.threshold_step as f64,
        );
    }
}

#[cfg(test)]
mod tests {
    //! The engines driven alone, with the default configuration (`BusConfig` and
    //! `NicDmaConfig`): bursts of 64 bytes, 16-byte descriptors, a 2048-byte RX FIFO,
    //! thresholds [128, 256, 512, 1024], no read latency; a 100 Mbit/s wire sends a
    //! byte in 80 ns.
    use super::*;

    const NIC: u16 = 3;

    fn engine() -> NicDma {
        NicDma::new(NIC, &NicDmaConfig::default(), &BusConfig::default())
    }

    fn frame(seq: u64, bytes: u32) -> Packet {
        Packet {
            flow: 0,
            bytes,
            seq,
            t_in: SimTime::ZERO,
        }
    }

    fn us(x: f64) -> SimTime {
        SimTime::from_ns_f64(x * 1e3)
    }

    fn write(bytes: u32) -> Burst {
        Burst {
            nic: NIC,
            dir: Dir::RxWrite,
            bytes,
        }
    }

    fn read(bytes: u32, ready: SimTime) -> TxRequest {
        TxRequest {
            burst: Burst {
                nic: NIC,
                dir: Dir::TxRead,
                bytes,
            },
            ready,
        }
    }

    fn wire100() -> Link {
        Link::new(100e6)
    }

    /// One receive burst ends: the frame completed by it, and the next burst asked.
    fn rx_step(d: &mut NicDma, bytes: u32) -> (Option<Packet>, Option<Burst>) {
        let done = d.rx_burst_done(bytes);
        (done, d.rx_next_burst())
    }

    #[test]
    fn a_received_frame_goes_out_in_bursts_then_its_descriptor() {
        let mut d = engine();
        let a = frame(1, 150);
        // 150 bytes + 16 of descriptor = 166: bursts of 64, 64 and 38.
        assert_eq!(
            d.rx_in(a, 0),
            RxIn::Queued {
                request: Some(write(64))
            }
        );
        assert_eq!(d.rx_fifo_used, 150);
        // A second frame waits behind the head: the engine has a burst out already.
        let b = frame(2, 64);
        assert_eq!(d.rx_in(b, 0), RxIn::Queued { request: None });
        assert_eq!(d.rx_fifo_used, 214);
        // Each burst frees the frame bytes it wrote; the frame is not complete yet.
        assert_eq!(rx_step(&mut d, 64), (None, Some(write(64))));
        assert_eq!(d.rx_fifo_used, 214 - 64);
        assert_eq!(rx_step(&mut d, 64), (None, Some(write(38))));
        assert_eq!(d.rx_fifo_used, 214 - 128);
        // The last burst carries the frame's last 22 bytes and the descriptor: 22 bytes
        // freed, the frame completes into the ring, and the next frame's first burst
        // (64 + 16 = 80 bytes: 64) is asked.
        assert_eq!(rx_step(&mut d, 38), (Some(a), Some(write(64))));
        assert_eq!(d.rx_fifo_used, 64);
        assert_eq!(d.rx_fifo_frames(), 1);
        // The 64-byte frame: its data, then the 16-byte descriptor write-back, which
        // frees nothing.
        assert_eq!(rx_step(&mut d, 64), (None, Some(write(16))));
        assert_eq!(d.rx_fifo_used, 0);
        assert_eq!(rx_step(&mut d, 16), (Some(b), None));
        assert!(d.idle());
    }

    /// mlx5's behaviour (`drop_without_descriptor`): a frame is dropped unwritten only
    /// when its turn comes, between frames; a frame being written is never cut; and
    /// without the option (the 21143's model) nothing is dropped here.
    #[test]
    fn a_frame_without_a_descriptor_is_dropped_only_when_its_turn_comes() {
        let cfg = NicDmaConfig {
            drop_without_descriptor: true,
            ..NicDmaConfig::default()
        };
        let mut d = NicDma::new(NIC, &cfg, &BusConfig::default());
        assert!(d.rx_between_frames());
        let (a, b) = (frame(1, 64), frame(2, 64));
        assert_eq!(
            d.rx_in(a, 0),
            RxIn::Queued {
                request: Some(write(64))
            }
        );
        assert_eq!(d.rx_in(b, 0), RxIn::Queued { request: None });
        // Frame a is being written: it is not dropped.
        assert!(!d.rx_between_frames());
        assert_eq!(d.rx_drop_head(), None);
        // Its data burst ends; its descriptor is still to come: still not dropped.
        assert_eq!(d.rx_burst_done(64), None);
        assert!(!d.rx_between_frames());
        assert_eq!(d.rx_next_burst(), Some(write(16)));
        assert_eq!(d.rx_burst_done(16), Some(a));
        // Between frames: b's turn, dropped unwritten, its bytes freed.
        assert!(d.rx_between_frames());
        assert_eq!(d.rx_drop_head(), Some(b));
        assert_eq!((d.rx_fifo_used, d.rx_drop_head()), (0, None));
        assert_eq!(d.rx_next_burst(), None);
        // Without the option the engine never drops a frame for want of a descriptor.
        let mut plain = engine();
        assert!(!plain.rx_between_frames());
        plain.rx_in(frame(3, 64), 0);
        plain.rx_in(frame(4, 64), 0);
        assert_eq!(plain.rx_burst_done(64), None);
        assert_eq!(plain.rx_next_burst(), Some(write(16)));
        assert_eq!(plain.rx_burst_done(16), Some(frame(3, 64)));
        // Between frames, frame 4 at the head: still not dropped.
        assert_eq!(plain.rx_drop_head(), None);
        assert_eq!(plain.rx_next_burst(), Some(write(64)));
    }

    #[test]
    fn a_frame_that_does_not_fit_the_rx_fifo_is_dropped() {
        let mut d = engine();
        assert!(matches!(d.rx_in(frame(1, 1500), 0), RxIn::Queued { .. }));
        // 1500 + 600 = 2100 > 2048: dropped, the FIFO unchanged.
        assert_eq!(d.rx_in(frame(2, 600), 0), RxIn::Dropped);
        assert_eq!((d.rx_fifo_used, d.rx_fifo_frames()), (1500, 1));
        // Once a 64-byte burst is written, 1436 + 600 = 2036 fits.
        assert_eq!(rx_step(&mut d, 64), (None, Some(write(64))));
        assert_eq!(d.rx_in(frame(3, 600), 0), RxIn::Queued { request: None });
        // 2036 + 12 = 2048 fits exactly; one byte more does not.
        assert_eq!(d.rx_in(frame(4, 13), 0), RxIn::Dropped);
        assert_eq!(d.rx_in(frame(5, 12), 0), RxIn::Queued { request: None });
        assert_eq!(d.rx_fifo_used, 2048);
    }

    #[test]
    fn a_frame_fits_beside_the_other_queues_frames_in_the_ports_fifo() {
        // The port's 2,048-byte FIFO holds 1,500 bytes of another queue's frames: a
        // 600-byte frame does not fit beside them (2,100), a 548-byte one does (2,048
        // exactly); and with the other queues holding anything, the FIFO is not empty,
        // so a frame larger than all of it is dropped.
        let mut d = engine();
        assert_eq!(d.rx_in(frame(1, 600), 1500), RxIn::Dropped);
        assert!(matches!(d.rx_in(frame(2, 548), 1500), RxIn::Queued { .. }));
        assert_eq!((d.rx_fifo_bytes(), d.rx_fifo_frames()), (548, 1));
        let mut e = engine();
        assert_eq!(e.rx_in(frame(3, 3000), 1), RxIn::Dropped);
        assert!(matches!(e.rx_in(frame(4, 3000), 0), RxIn::Queued { .. }));
    }

    #[test]
    fn a_frame_larger_than_the_rx_fifo_passes_when_the_fifo_is_empty() {
        let mut d = engine();
        // 3000 bytes > 2048, but the FIFO is empty: the chip writes it out as it
        // arrives.
        assert_eq!(
            d.rx_in(frame(1, 3000), 0),
            RxIn::Queued {
                request: Some(write(64))
            }
        );
        // Anything behind it is dropped until enough of it is written.
        assert_eq!(d.rx_in(frame(2, 64), 0), RxIn::Dropped);
        // 3016 bytes in all: 47 bursts of 64 and one of 8.
        for _ in 0..46 {
            assert_eq!(rx_step(&mut d, 64), (None, Some(write(64))));
        }
        assert_eq!(rx_step(&mut d, 64), (None, Some(write(8))));
        assert_eq!(rx_step(&mut d, 8).0.map(|p| p.seq), Some(1));
        assert!(d.idle());
    }

    #[test]
    fn transmit_fetches_the_descriptor_then_data_and_starts_at_the_threshold() {
        let mut d = engine();
        let link = wire100();
        let p = frame(7, 300);
        // Handed over at 1 us, eligible at 2 us: the descriptor fetch is asked at 2 us.
        assert_eq!(d.tx_begin(p, us(2.0), us(1.0)), Some(read(16, us(2.0))));
        assert!(d.tx_fetching());
        // Descriptor in at 2.24 us: the first data burst, 64 bytes.
        let step = d.tx_burst_done(16, us(2.24), &link);
        assert_eq!(
            step,
            TxStep::Fetch {
                started: None,
                next: read(64, us(2.24))
            }
        );
        // 64 bytes in: below the threshold of 128.
        let step = d.tx_burst_done(64, us(2.84), &link);
        assert_eq!(
            step,
            TxStep::Fetch {
                started: None,
                next: read(64, us(2.84))
            }
        );
        // 128 bytes in: the frame starts on the wire now (later than its eligible
        // time); it occupies the wire for (300 + 20) bytes x 80 ns = 25.6 us.
        let start = us(3.44);
        let wire = Wire {
            start,
            done: start + us(25.6),
        };
        let step = d.tx_burst_done(64, start, &link);
        assert_eq!(
            step,
            TxStep::Fetch {
                started: Some(wire),
                next: read(64, start)
            }
        );
        // 192, then 256 bytes; the last 44 bytes complete it, and it leaves as started.
        assert_eq!(
            d.tx_burst_done(64, us(4.04), &link),
            TxStep::Fetch {
                started: None,
                next: read(64, us(4.04))
            }
        );
        assert_eq!(
            d.tx_burst_done(64, us(4.64), &link),
            TxStep::Fetch {
                started: None,
                next: read(44, us(4.64))
            }
        );
        assert_eq!(
            d.tx_burst_done(44, us(5.2), &link),
            TxStep::Complete {
                pkt: p,
                wire,
                started: false
            }
        );
        assert!(!d.tx_fetching());
        assert!(d.idle());
        assert_eq!(d.tx_underruns, 0);
    }

    #[test]
    fn a_frame_within_the_threshold_starts_and_completes_with_one_burst() {
        let mut d = engine();
        let link = wire100();
        let p = frame(1, 64);
        assert_eq!(d.tx_begin(p, us(1.0), us(1.0)), Some(read(16, us(1.0))));
        // The threshold is min(128, 64) = 64: the whole frame.
        assert_eq!(
            d.tx_burst_done(16, us(1.24), &link),
            TxStep::Fetch {
                started: None,
                next: read(64, us(1.24))
            }
        );
        // In at 1.84 us: (64 + 20) x 80 ns = 6.72 us on the wire.
        let start = us(1.84);
        assert_eq!(
            d.tx_burst_done(64, start, &link),
            TxStep::Complete {
                pkt: p,
                wire: Wire {
                    start,
                    done: start + us(6.72)
                },
                started: true
            }
        );
    }

    #[test]
    fn the_wire_starts_no_earlier_than_the_frame_is_eligible() {
        let mut d = engine();
        let link = wire100();
        let p = frame(1, 64);
        // Asked at 1 us (now) but eligible only at 5 us: start = max(now, eligible).
        // (The host asks at the later of the two, so this is the engine's own guard.)
        d.tx_begin(p, us(5.0), us(1.0));
        d.tx_burst_done(16, us(1.5), &link);
        let step = d.tx_burst_done(64, us(2.0), &link);
        let TxStep::Complete { wire, started, .. } = step else {
            panic!("{step:?}");
        };
        assert!(started);
        assert_eq!(wire.start, us(5.0));
    }

    #[test]
    fn a_read_waits_the_bus_read_latency() {
        let bus = BusConfig {
            read_latency_ns: 300.0,
            ..BusConfig::default()
        };
        let mut d = NicDma::new(NIC, &NicDmaConfig::default(), &bus);
        assert_eq!(
            d.tx_begin(frame(1, 64), us(2.0), us(1.0)),
            Some(read(16, us(2.3)))
        );
    }

    #[test]
    fn a_burst_after_the_wire_sent_the_bytes_before_it_is_an_underrun() {
        let mut d = engine();
        let link = wire100();
        d.tx_begin(frame(1, 600), us(1.0), us(1.0));
        d.tx_burst_done(16, us(1.24), &link);
        d.tx_burst_done(64, us(1.84), &link);
        let start = us(2.44);
        let step = d.tx_burst_done(64, start, &link);
        assert!(matches!(step, TxStep::Fetch { started: Some(w), .. } if w.start == start));
        // The burst carrying bytes 128..192 must be in before the wire has sent the
        // preamble and 128 bytes: (8 + 128) x 80 ns = 10.88 us after the start. At that
        // very instant it is in time.
        let step = d.tx_burst_done(64, start + us(10.88), &link);
        assert!(
            matches!(step, TxStep::Fetch { started: None, .. }),
            "{step:?}"
        );
        // Bytes 192..256 are due by (8 + 192) x 80 ns = 16 us after the start; 1 ps later
        // the FIFO ran dry.
        let late = start + us(16.0) + SimTime(1);
        assert_eq!(d.tx_burst_done(64, late, &link), TxStep::Underrun);
        assert_eq!(d.tx_underruns, 1);
        assert!(!d.tx_fetching());
        assert!(d.idle());
        // The driver steps the threshold: 256 from now on.
        d.raise_threshold();
        assert_eq!(d.threshold(600), 256);
    }

    #[test]
    fn the_wire_ending_while_the_frame_is_fetched_is_an_underrun() {
        let mut d = engine();
        let link = wire100();
        assert!(!d.tx_wire_end()); // nothing fetched: a frame sent whole
        d.tx_begin(frame(1, 600), us(1.0), us(1.0));
        d.tx_burst_done(16, us(1.24), &link);
        d.tx_burst_done(64, us(1.84), &link);
        d.tx_burst_done(64, us(2.44), &link); // started; a 64-byte read is out
        assert!(d.tx_wire_end());
        assert_eq!(d.tx_underruns, 1);
        // The next frame waits for the aborted frame's read to come back ...
        let next = frame(2, 64);
        assert_eq!(d.tx_begin(next, us(60.0), us(59.0)), None);
        // ... which is ignored: the next frame's descriptor is asked at once, at the
        // later of now and its eligible time.
        assert_eq!(
            d.tx_burst_done(64, us(61.0), &link),
            TxStep::Fetch {
                started: None,
                next: read(16, us(61.0))
            }
        );
    }

    #[test]
    fn thresholds_step_to_store_and_forward() {
        let mut d = engine();
        assert_eq!(d.threshold(600), 128);
        assert_eq!(d.threshold(64), 64);
        for _ in 0..3 {
            d.raise_threshold();
        }
        assert_eq!(d.threshold(2000), 1024);
        assert_eq!(d.threshold_step, 3);
        d.raise_threshold();
        assert_eq!(d.threshold(2000), 2000); // store-and-forward
        d.raise_threshold();
        assert_eq!(d.threshold(600), 600);
        assert_eq!(d.threshold_step, 4);
    }

    #[test]
    fn store_and_forward_starts_the_wire_with_the_last_burst() {
        let mut d = engine();
        let link = wire100();
        for _ in 0..4 {
            d.raise_threshold();
        }
        let p = frame(1, 200);
        d.tx_begin(p, us(1.0), us(1.0));
        // Descriptor, then 64, 64, 64 and 8 bytes; nothing starts before the last.
        d.tx_burst_done(16, us(1.24), &link);
        for t in [1.84, 2.44, 3.04] {
            let step = d.tx_burst_done(64, us(t), &link);
            assert!(
                matches!(step, TxStep::Fetch { started: None, .. }),
                "{step:?}"
            );
        }
        let step = d.tx_burst_done(8, us(3.4), &link);
        assert_eq!(
            step,
            TxStep::Complete {
                pkt: p,
                wire: Wire {
                    start: us(3.4),
                    done: us(3.4) + us(17.6) // (200 + 20) x 80 ns
                },
                started: true
            }
        );
    }

    #[test]
    fn a_reset_empties_the_fifos_and_ignores_the_burst_on_the_bus() {
        let mut d = engine();
        d.rx_in(frame(1, 100), 0);
        d.rx_in(frame(2, 100), 0);
        d.tx_begin(frame(3, 100), us(1.0), us(1.0));
        let lost: Vec<u64> = d.reset().map(|p| p.seq).collect();
        assert_eq!(lost, [1, 2]);
        // The receive write is on the bus (the transmit read was cancelled).
        d.reset_engines(Some(write(64)));
        assert!(!d.idle());
        // A frame arriving now waits for that write to come back, which is ignored.
        assert_eq!(d.rx_in(frame(4, 64), 0), RxIn::Queued { request: None });
        assert_eq!(rx_step(&mut d, 64), (None, Some(write(64))));
        // Another NIC's burst on the bus leaves this engine idle.
        d.reset();
        d.reset_engines(Some(Burst {
            nic: 0,
            ..write(64)
        }));
        assert!(d.idle());
    }
}
