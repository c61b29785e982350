//! One host: CPU, kernel forwarding path and NICs, driven by the offered flows.
//!
//! This is where the components are wired and the event loop lives. It knows nothing of
//! files or JSON: it takes a [`ModelConfig`] and a [`RunSpec`] and returns [`RunStats`].
//!
//! ```text
//!  tester --flow--> [NIC in] RX ring --irq--> ISR (HardIrq) --> ipintrq
//!                                                                 |
//!  tester <--wire-- [NIC out] TX ring <-- if_snd <-- netisr (SoftIrq)
//! ```
//!
//! Events per forwarded packet: one receive DMA, one CPU burst completion per handler
//! step and per netisr packet, one end of transmission.

use crate::cpu::{Cpu, CpuConfig, Dispatch, LEVELS, Level};
use crate::engine::Scheduler;
use crate::kernel::{KernelConfig, Netisr};
use crate::nic::{Nic, NicConfig, TxStart};
use crate::packet::Packet;
use crate::policy::interrupt::{DriverCosts, Isr};
use crate::problems::Problems;
use crate::rng::RunKey;
use crate::stats::FlowStats;
use crate::time::SimTime;
use crate::traffic::{FlowConfig, FlowSource, Frame};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// A hardware/OS profile: what a model file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// What machine and OS this profile describes.
    #[serde(default)]
    pub description: String,
    /// Free-text notes keyed by parameter: where each value comes from. Not used by the
    /// simulation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, String>,
    /// The processor.
    pub cpu: CpuConfig,
    /// The kernel forwarding path.
    pub kernel: KernelConfig,
    /// Network interfaces, at least one.
    pub nics: Vec<NicConfig>,
}

impl ModelConfig {
    /// Range and consistency checks; every problem is collected.
    pub fn validate(&self, p: &mut Problems) {
        p.at("cpu", |p| self.cpu.validate(p));
        p.at("kernel", |p| self.kernel.validate(p));
        if self.nics.is_empty() {
            p.push("nics", "a model needs at least one NIC");
        }
        for (i, n) in self.nics.iter().enumerate() {
            p.at("nics", |p| p.at(format!("[{i}]"), |p| n.validate(p)));
            if self.nics[..i].iter().any(|m| m.name == n.name) {
                p.push(
                    &format!("nics[{i}].name"),
                    format!("duplicate NIC name `{}`", n.name),
                );
            }
        }
    }

    /// Index of the NIC called `name`.
    pub fn nic_index(&self, name: &str) -> Option<usize> {
        self.nics.iter().position(|n| n.name == name)
    }
}

/// What to run: the offered flows with their rates, and for how long.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The flows.
    pub flows: Vec<FlowConfig>,
    /// Offered rate of each flow [frames/s].
    pub rates_pps: Vec<f64>,
    /// How long the tester sends.
    pub duration: SimTime,
    /// How long after the end of sending the tester still counts frames received.
    pub drain: SimTime,
    /// Which run of a sweep this is (selects the random streams).
    pub key: RunKey,
}

/// Events of the host model.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The pending frame of flow `0` has been DMA'd by its input NIC.
    RxDma(u32),
    /// The CPU burst at a level completed (stale unless the generation matches).
    CpuDone(Level, u32),
    /// The frame on NIC `0`'s output wire has been sent.
    TxDone(u16),
    /// The tester stops sending: snapshot the load-period counters.
    EndOfLoad,
}

/// Per-flow state during a run.
#[derive(Clone, Debug)]
pub(crate) struct FlowState {
    pub name: String,
    pub source: FlowSource,
    pub pending: Option<Frame>,
    pub in_nic: usize,
    pub out_nic: usize,
    pub stats: FlowStats,
}

/// The host during a run.
pub struct Host {
    pub(crate) cpu: Cpu,
    pub(crate) nics: Vec<Nic>,
    pub(crate) netisr: Netisr,
    pub(crate) drivers: Vec<DriverCosts>,
    pub(crate) isr: Option<Isr>,
    pub(crate) irq_pending: VecDeque<usize>,
    pub(crate) flows: Vec<FlowState>,
    /// Frames taken by interrupt handlers -- counter.
    pub(crate) isr_packets: u64,
    load_end: Option<(SimTime, [u64; LEVELS + 1], u64)>,
    /// End of the run (sending plus drain): frames whose first bit would leave later
    /// are not received.
    stop: SimTime,
}

/// Schedule the completion of a burst the CPU dispatched.
#[inline]
pub(crate) fn dispatch(d: Option<Dispatch>, s: &mut Scheduler<Event>) {
    if let Some(d) = d {
        s.at(d.done, Event::CpuDone(d.level, d.generation));
    }
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct RunStats {
    /// Sending period.
    pub duration: SimTime,
    /// Per flow: name and statistics.
    pub flows: Vec<(String, FlowStats)>,
    /// Sum over flows.
    pub total: FlowStats,
    /// CPU time per level, then idle, during the sending period [ps].
    pub cpu_ps: [u64; LEVELS + 1],
    /// Interrupt handler invocations during the sending period.
    pub interrupts: u64,
    /// Frames taken by interrupt handlers over the whole run.
    pub isr_packets: u64,
    /// Interrupt handler invocations over the whole run.
    pub interrupts_all: u64,
    /// Events processed.
    pub events: u64,
    /// Simulated time when the run stopped.
    pub end: SimTime,
}

impl Host {
    /// Build the host for one run. The configuration must have been validated and the
    /// flows must name existing NICs.
    pub fn new(cfg: &ModelConfig, spec: &RunSpec) -> Host {
        let mhz = cfg.cpu.clock_mhz;
        let nics: Vec<Nic> = cfg
            .nics
            .iter()
            .map(|n| Nic::new(n, cfg.kernel.if_snd_maxlen as usize))
            .collect();
        let flows = spec
            .flows
            .iter()
            .zip(&spec.rates_pps)
            .enumerate()
            .map(|(i, (f, &rate))| {
                let in_nic = cfg.nic_index(&f.from).expect("validated flow source");
                let out_nic = cfg.nic_index(&f.to).expect("validated flow destination");
                FlowState {
                    name: f.display_name(),
                    source: FlowSource::new(
                        f,
                        nics[in_nic].link,
                        rate,
                        spec.duration,
                        spec.key.stream(&format!("flow{i}.arrivals")),
                        spec.key.stream(&format!("flow{i}.sizes")),
                    ),
                    pending: None,
                    in_nic,
                    out_nic,
                    stats: FlowStats::default(),
                }
            })
            .collect();
        Host {
            cpu: Cpu::new(),
            drivers: cfg
                .nics
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    DriverCosts::new(&n.driver, mhz, spec.key.stream(&format!("nic{i}.driver")))
                })
                .collect(),
            nics,
            netisr: Netisr::new(&cfg.kernel, mhz, spec.key.stream("netisr")),
            isr: None,
            irq_pending: VecDeque::new(),
            flows,
            isr_packets: 0,
            load_end: None,
            stop: spec.duration + spec.drain,
        }
    }

    /// Record a transmission the NIC committed to and schedule its end.
    #[inline]
    pub(crate) fn transmit(&mut self, nic: usize, tx: TxStart, s: &mut Scheduler<Event>) {
        if tx.start <= self.stop {
            let f = &mut self.flows[tx.pkt.flow as usize];
            f.stats.deliver(tx.pkt.seq, tx.start - tx.pkt.t_in);
        }
        s.at(tx.done, Event::TxDone(nic as u16));
    }

    fn next_arrival(&mut self, flow: usize, s: &mut Scheduler<Event>) {
        let f = &mut self.flows[flow];
        f.pending = f.source.next_frame();
        if let Some(fr) = f.pending {
            s.at(
                fr.end + self.nics[f.in_nic].rx_latency,
                Event::RxDma(flow as u32),
            );
        }
    }

    fn on_rx(&mut self, flow: usize, now: SimTime, s: &mut Scheduler<Event>) {
        let f = &mut self.flows[flow];
        let Some(fr) = f.pending.take() else { return };
        let nic = f.in_nic;
        let pkt = Packet {
            flow: flow as u32,
            bytes: fr.bytes,
            seq: fr.seq,
            t_in: fr.end,
        };
        self.next_arrival(flow, s);
        if self.nics[nic].rx_dma(pkt) {
            self.irq_assert(nic, now, s);
        } else {
            self.flows[flow].stats.drops.rx_ring += 1;
        }
    }

    #[inline]
    fn handle(&mut self, now: SimTime, ev: Event, s: &mut Scheduler<Event>) {
        match ev {
            Event::RxDma(flow) => self.on_rx(flow as usize, now, s),
            Event::CpuDone(level, generation) => {
                if !self.cpu.is_current(level, generation) {
                    return;
                }
                match level {
                    Level::HardIrq => self.isr_step_done(now, s),
                    Level::SoftIrq => self.netisr_done(now, s),
                    Level::Kernel | Level::User => {
                        let d = self.cpu.finish(now, level);
                        dispatch(d, s);
                    }
                }
            }
            Event::TxDone(nic) => {
                if let Some(tx) = self.nics[nic as usize].tx_done(now) {
                    self.transmit(nic as usize, tx, s);
                }
            }
            Event::EndOfLoad => {
                let irqs = self.nics.iter().map(|n| n.interrupts).sum();
                self.load_end = Some((now, self.cpu.snapshot(now), irqs));
            }
        }
    }

    /// Run to the end of sending plus the drain period (or until nothing is left to do)
    /// and return the statistics.
    pub fn run(mut self, spec: &RunSpec) -> RunStats {
        let mut s = Scheduler::new();
        for i in 0..self.flows.len() {
            self.next_arrival(i, &mut s);
        }
        s.at(spec.duration, Event::EndOfLoad);
        while let Some(t) = s.peek_time() {
            if t > self.stop {
                break;
            }
            let (now, ev) = s.pop().expect("peeked");
            self.handle(now, ev, &mut s);
        }
        let end = s.now().max(spec.duration);
        self.finish(spec, end, s.events_processed())
    }

    fn finish(mut self, spec: &RunSpec, end: SimTime, events: u64) -> RunStats {
        // Frames still inside the host: attribute them to their flows.
        let mut held: Vec<u64> = vec![0; self.flows.len()];
        let mut count = |p: &Packet| held[p.flow as usize] += 1;
        for n in &self.nics {
            n.rx_ring.iter().for_each(&mut count);
            n.if_snd.iter().for_each(&mut count);
        }
        self.netisr.ipintrq.iter().for_each(&mut count);
        if let Some(p) = &self.netisr.current {
            count(p);
        }
        if let Some(Isr {
            step: crate::policy::interrupt::IsrStep::Packet(p),
            ..
        }) = &self.isr
        {
            count(p);
        }
        let mut total = FlowStats::default();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (f, h) in self.flows.iter_mut().zip(held) {
            f.stats.sent = f.source.sent;
            // Whatever is neither delivered, dropped nor found in a queue is on a TX ring
            // waiting for the wire when the run was cut.
            f.stats.in_flight_at_end = f.stats.sent - f.stats.received - f.stats.drops.total();
            debug_assert!(
                f.stats.in_flight_at_end >= h,
                "packet conservation violated"
            );
            total.merge(&f.stats);
            flows.push((f.name.clone(), f.stats.clone()));
        }
        let (_, cpu_ps, interrupts) = self.load_end.unwrap_or((
            end,
            self.cpu.snapshot(end),
            self.nics.iter().map(|n| n.interrupts).sum(),
        ));
        RunStats {
            duration: spec.duration,
            flows,
            total,
            cpu_ps,
            interrupts,
            isr_packets: self.isr_packets,
            interrupts_all: self.nics.iter().map(|n| n.interrupts).sum(),
            events,
            end,
        }
    }
}

/// Validate `cfg`, check the flows against it, build the host and run it.
pub fn simulate(
    cfg: &ModelConfig,
    spec: &RunSpec,
) -> Result<RunStats, Vec<crate::problems::Problem>> {
    let mut p = Problems::new();
    cfg.validate(&mut p);
    for (i, f) in spec.flows.iter().enumerate() {
        p.at(format!("flows[{i}]"), |p| {
            if cfg.nic_index(&f.from).is_none() {
                p.push("from", format!("no NIC named `{}` in the model", f.from));
            }
            if cfg.nic_index(&f.to).is_none() {
                p.push("to", format!("no NIC named `{}` in the model", f.to));
            }
            p.at("frame_bytes", |p| f.frame_bytes.validate(p));
        });
    }
    if spec.rates_pps.len() != spec.flows.len() {
        p.push("rates_pps", "one rate per flow is required");
    }
    for (i, r) in spec.rates_pps.iter().enumerate() {
        p.positive(&format!("rates_pps[{i}]"), *r, "frames/s");
    }
    if !p.is_empty() {
        return Err(p.list);
    }
    Ok(Host::new(cfg, spec).run(spec))
}
