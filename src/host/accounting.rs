//! The host's books during a run: the flows the tester offers and what became of their
//! frames, what watches the frames leaving (the latency timeline, a trace recorder),
//! the end of sending and of the run, the counters snapshot at the end of sending, and
//! the first broken invariant.
//!
//! The tester's side of a flow (its frame source, the next frame due, the NICs it
//! enters and leaves by, its hash and receive queue) is kept here beside its
//! statistics, because every frame's fate is booked against its flow: a frame leaves
//! ([`Accounting::deliver`]: latency from the input frame's last or first bit, RFC
//! 1242's two conventions; frames leaving after the end of sending count as drained;
//! a closed-loop flow's transaction time) or is dropped at a site
//! ([`Accounting::dropped`]). At the end, [`Accounting::close`] checks each flow's
//! conservation (received plus dropped never above sent) and hands the statistics on.

use crate::host::trace::Taps;
use crate::host::{Broken, Invariant, SimError};
use crate::model::cpu::LEVELS;
use crate::model::packet::Packet;
use crate::model::stats::{DropSite, FlowStats, LatencyFrom};
use crate::model::timeline::Timeline;
use crate::model::traffic::{FlowSource, Frame};
use crate::sim::time::SimTime;
use crate::trace::Recorder;

/// Per-flow state during a run.
#[derive(Clone, Debug)]
pub(crate) struct FlowState {
    /// Name in results.
    pub name: String,
    /// The tester port generating its frames (or the silent source of a sender's flow).
    pub source: FlowSource,
    /// The next frame, due at the input NIC when its arrival says (`Host::rx_slot`).
    pub pending: Option<Frame>,
    /// The NIC its frames arrive on.
    pub in_nic: usize,
    /// The NIC the host forwards them out of.
    pub out_nic: usize,
    /// Its counters and latency statistics.
    pub stats: FlowStats,
    /// The flow hash of its frames (skb->hash, for RPS): a hash of its 4-tuple. When
    /// the NIC hashes the ports (TCP, or UDP with `rss.udp_4tuple`) that is its RSS
    /// hash; when it hashes addresses only, get_rps_cpu finds no L4 hash and
    /// skb_get_hash computes one in software over the ports too (the flow dissector's
    /// keyed jhash/siphash, whose boot-time key is unknowable: the Toeplitz 4-tuple
    /// hash stands in for it).
    pub hash: u32,
    /// The receive queue the driver records in its frames' skb (`skb_record_rx_queue`:
    /// the number of the queue of its input NIC, 0 on a NIC with one queue), which picks
    /// the transmit queue when XPS does not; `None` for the host's own frames.
    pub rx_queue: Option<u16>,
}

/// Counters captured when the tester stops sending.
#[derive(Clone, Debug)]
pub(crate) struct LoadSnapshot {
    pub cpu_ps: [u64; LEVELS + 1],
    pub core_cpu_ps: Vec<[u64; LEVELS + 1]>,
    pub core_ksoftirqd_ps: Vec<u64>,
    pub task_ps: [u64; 2],
    pub core_cputime_ps: Vec<crate::model::cpu::cputime::CpuTimes>,
    pub core_idle_state_ps: Vec<Vec<(String, u64)>>,
    pub interrupts: u64,
    pub user_work: f64,
    pub sender_ps: u64,
}

/// The books of one run.
pub(crate) struct Accounting {
    /// The flows, by number.
    flows: Vec<FlowState>,
    /// What watches the packets leaving: the latency timeline, a trace recorder (none
    /// of either in most runs: one check per packet).
    taps: Option<Box<Taps>>,
    /// Where a frame's latency starts.
    latency_from: LatencyFrom,
    /// The counters when the tester stopped sending, once it has.
    load_end: Option<LoadSnapshot>,
    /// End of the run (sending plus drain): frames whose first bit would leave later
    /// are not received.
    stop: SimTime,
    /// End of sending: frames leaving later are counted as drained.
    load_stop: SimTime,
    /// The first broken invariant seen during the run (checked in release builds too;
    /// the run then stops and ends with [`SimError::Invariant`]).
    violation: Option<Broken>,
}

impl Accounting {
    /// The books of a run of `flows` sending for `duration` then draining for `drain`,
    /// with the latency timeline of `timeline`-wide buckets if asked for.
    pub(crate) fn new(
        flows: Vec<FlowState>,
        latency_from: LatencyFrom,
        duration: SimTime,
        drain: SimTime,
        timeline: Option<SimTime>,
    ) -> Accounting {
        Accounting {
            flows,
            taps: timeline.map(|w| {
                Box::new(Taps {
                    timeline: Some(crate::model::timeline::Timeline::new(w, duration + drain)),
                    trace: None,
                })
            }),
            latency_from,
            load_end: None,
            stop: duration + drain,
            load_stop: duration,
            violation: None,
        }
    }

    /// Flow `f`.
    #[inline(always)]
    pub(crate) fn flow(&self, f: usize) -> &FlowState {
        &self.flows[f]
    }

    /// Flow `f`, to change: for tests that set counts the run could not reach.
    #[cfg(test)]
    pub(crate) fn flow_mut(&mut self, f: usize) -> &mut FlowState {
        &mut self.flows[f]
    }

    /// The sender (a closed-loop source) sent a frame of flow `f`.
    #[inline(always)]
    pub(crate) fn sent(&mut self, f: usize) {
        self.flows[f].source.sent += 1;
    }

    /// Flow `f`'s source makes its next frame, which then waits to arrive: the frame
    /// and the NIC it arrives at, if the source has one.
    #[inline(always)]
    pub(crate) fn next_frame(&mut self, f: usize) -> Option<(Frame, usize)> {
        let f = &mut self.flows[f];
        f.pending = f.source.next_frame();
        f.pending.map(|fr| (fr, f.in_nic))
    }

    /// Flow `f`'s waiting frame arrives: the frame and its NIC, if one was waiting.
    #[inline(always)]
    pub(crate) fn arrive(&mut self, f: usize) -> Option<(Frame, usize)> {
        let f = &mut self.flows[f];
        f.pending.take().map(|fr| (fr, f.in_nic))
    }

    /// The flows, by number.
    pub(crate) fn flows(&self) -> &[FlowState] {
        &self.flows
    }

    /// A frame of flow `flow` was dropped at `site`.
    #[inline(always)]
    pub(crate) fn dropped(&mut self, flow: u32, site: DropSite) {
        self.flows[flow as usize].stats.drops.count(site);
    }

    /// When the run ends (sending plus drain).
    #[inline(always)]
    pub(crate) fn stop(&self) -> SimTime {
        self.stop
    }

    /// Whether the run is over at `t`: past its end, or an invariant broke.
    #[inline(always)]
    pub(crate) fn over_at(&self, t: SimTime) -> bool {
        t > self.stop || self.violation.is_some()
    }

    /// Where a frame's latency starts.
    pub(crate) fn latency_from(&self) -> LatencyFrom {
        self.latency_from
    }

    /// Frame `pkt` leaves the host by device `nic`: first bit on the output wire at
    /// `start`, last at `done`; `in_time(in_nic, bytes)` is the input frame's time on
    /// its wire (for latency from the first bit). Returns whether the flow, a
    /// closed-loop one, now sends its next request and has none pending.
    #[inline(always)]
    pub(crate) fn deliver(
        &mut self,
        nic: usize,
        pkt: Packet,
        start: SimTime,
        done: SimTime,
        in_time: impl FnOnce(usize, u32) -> SimTime,
    ) -> bool {
        if start > self.stop {
            return false;
        }
        let f = &mut self.flows[pkt.flow as usize];
        let lat = match self.latency_from {
            LatencyFrom::LastBit => start - pkt.t_in,
            LatencyFrom::FirstBit => start - pkt.t_in + in_time(f.in_nic, pkt.bytes),
        };
        f.stats.deliver(pkt.seq, lat);
        if start > self.load_stop {
            f.stats.drained += 1;
        }
        if let Some(t) = &mut self.taps {
            t.delivered(pkt, nic, start, done, lat);
        }
        if f.source.is_closed_loop() {
            // The response reaches the peer at `done`: one transaction, from the
            // request's first bit at the peer to the response's last bit.
            let request_start = pkt.t_in.saturating_sub(f.source.wire_time(pkt.bytes));
            f.stats
                .rtt
                .get_or_insert_with(Default::default)
                .record(done - request_start);
            return f.source.respond(done) && f.pending.is_none();
        }
        false
    }

    /// A traced run's recorder watches the frames leaving from now on (and is lent
    /// back here between steps: [`Accounting::take_recorder`]).
    pub(crate) fn install_recorder(&mut self, rec: Box<Recorder>) {
        self.taps.get_or_insert_with(Default::default).trace = Some(rec);
    }

    /// The recorder, if one is installed.
    pub(crate) fn recorder_mut(&mut self) -> Option<&mut Recorder> {
        self.taps.as_mut()?.trace.as_deref_mut()
    }

    /// The recorder taken out, if one is installed.
    pub(crate) fn take_recorder(&mut self) -> Option<Box<Recorder>> {
        self.taps.as_mut()?.trace.take()
    }

    /// The latency timeline taken out at the end of the run, if the run keeps one.
    pub(crate) fn take_timeline(&mut self) -> Option<Timeline> {
        self.taps.as_mut()?.timeline.take()
    }

    /// Record a broken invariant: the first one broken is the run's error (the run
    /// stops at the next event).
    #[cold]
    #[inline(never)]
    pub(crate) fn broke(
        &mut self,
        invariant: Invariant,
        component: &str,
        at: SimTime,
        detail: impl FnOnce() -> String,
    ) {
        if self.violation.is_none() {
            self.violation = Some(Broken {
                invariant,
                component: component.to_string(),
                at,
                detail: detail(),
            });
        }
    }

    /// The tester stopped sending: the load period's counters are `snap`.
    pub(crate) fn end_of_load(&mut self, snap: LoadSnapshot) {
        self.load_end = Some(snap);
    }

    /// The load period's counters, if sending has ended.
    pub(crate) fn load_end(&self) -> Option<&LoadSnapshot> {
        self.load_end.as_ref()
    }

    /// The first broken invariant, taken (the run is over).
    pub(crate) fn take_violation(&mut self) -> Option<Broken> {
        self.violation.take()
    }

    /// Close the books at `end`: each flow's sent count from its source and what is
    /// still in flight, checked (received plus dropped above sent is a frame counted
    /// twice, an error, never a wrapped count); the flows' statistics by name and
    /// their sum, taken out.
    pub(crate) fn close(
        &mut self,
        end: SimTime,
    ) -> Result<(Vec<(String, FlowStats)>, FlowStats), SimError> {
        let mut total = FlowStats::default();
        let mut flows = Vec::with_capacity(self.flows.len());
        for f in self.flows.iter_mut() {
            f.stats.sent = f.source.sent;
            let out = f.stats.received + f.stats.drops.total();
            f.stats.in_flight_at_end = f.stats.sent.checked_sub(out).ok_or_else(|| {
                SimError::broken(Broken {
                    invariant: Invariant::FlowConservation,
                    component: format!("flow {}", f.name),
                    at: end,
                    detail: format!(
                        "{} sent but {} received and {} dropped",
                        f.stats.sent,
                        f.stats.received,
                        f.stats.drops.total()
                    ),
                })
            })?;
            total.merge(&f.stats);
            // (Taken, not copied: the host ends here, and a copy doubled the
            // memory of every flow's histograms at the end of a run.)
            flows.push((f.name.clone(), std::mem::take(&mut f.stats)));
        }
        Ok((flows, total))
    }
}
