//! The kernel's forwarding path: ipintrq, the IP netisr, and if_output.
//!
//! Models 4.4BSD's software-interrupt forwarding path:
//!
//! ```text
//! driver -> IF_ENQUEUE(ipintrq)   bounded by ipintrq_maxlen (IFQ_MAXLEN = 50);
//!                                 full -> drop, counted as an ipintrq drop
//!        -> schednetisr(NETISR_IP)
//! netisr (software-interrupt level, below every device interrupt):
//!   loop: IF_DEQUEUE(ipintrq); ip_input -> ip_forward -> ip_output -> ether_output
//!         (netisr_per_packet) -> IF_ENQUEUE(if_snd of the output NIC) -> if_start
//! ```
//!
//! The netisr runs whenever no interrupt handler does; it is preempted by every device
//! interrupt and resumes where it stopped.
//!
//! Parameters ([`KernelConfig`]) with defaults: `ipintrq_maxlen` 50 and `if_snd_maxlen`
//! 50 (BSD net/if.h IFQ_MAXLEN); `netisr_per_packet` (required).
//!
//! Counters: ipintrq drops and if_snd drops (per flow, see `stats`), `forwarded`.

use crate::cost::{Cost, CostParam};
use crate::cpu::Level;
use crate::engine::Scheduler;
use crate::host::{Event, Host, dispatch};
use crate::packet::Packet;
use crate::problems::Problems;
use crate::queue::BoundedQueue;
use crate::rng::StreamRng;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Kernel parameters as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelConfig {
    /// Maximum length of ipintrq [packets] (default 50, IFQ_MAXLEN).
    #[serde(default = "d_ifq")]
    pub ipintrq_maxlen: u32,
    /// Maximum length of each interface's if_snd [packets] (default 50, IFQ_MAXLEN).
    #[serde(default = "d_ifq")]
    pub if_snd_maxlen: u32,
    /// CPU cost of forwarding one packet in the netisr: ip_input, ip_forward, ip_output,
    /// ether_output, if_start [cost].
    pub netisr_per_packet: CostParam,
}

fn d_ifq() -> u32 {
    50
}

impl KernelConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("ipintrq_maxlen", self.ipintrq_maxlen as u64, 1, "packet");
        p.at_least("if_snd_maxlen", self.if_snd_maxlen as u64, 1, "packet");
        if let Err(e) = self.netisr_per_packet.check() {
            p.push("netisr_per_packet", e);
        }
    }
}

/// The IP software interrupt and its input queue.
#[derive(Clone, Debug)]
pub(crate) struct Netisr {
    pub ipintrq: BoundedQueue<Packet>,
    pub cost: Cost,
    pub current: Option<Packet>,
    /// Random stream of the forwarding cost.
    pub rng: StreamRng,
    /// Packets passed to if_output -- counter.
    pub forwarded: u64,
}

impl Netisr {
    pub fn new(cfg: &KernelConfig, clock_mhz: f64, rng: StreamRng) -> Self {
        Netisr {
            ipintrq: BoundedQueue::new(cfg.ipintrq_maxlen as usize),
            cost: cfg.netisr_per_packet.build(clock_mhz),
            current: None,
            rng,
            forwarded: 0,
        }
    }
}

impl Host {
    /// IF_ENQUEUE on ipintrq and schednetisr.
    pub(crate) fn ipintrq_enqueue(&mut self, p: Packet, now: SimTime, s: &mut Scheduler<Event>) {
        if let Err(p) = self.netisr.ipintrq.push(p) {
            self.flows[p.flow as usize].stats.drops.ipintrq += 1;
            return;
        }
        if !self.cpu.has_burst(Level::SoftIrq) {
            self.netisr_next(now, s, false);
        }
    }

    /// Take the next packet off ipintrq, or let the netisr finish. `chained` says the
    /// netisr is running now (just completed a packet).
    fn netisr_next(&mut self, now: SimTime, s: &mut Scheduler<Event>, chained: bool) {
        match self.netisr.ipintrq.pop() {
            Some(p) => {
                self.netisr.current = Some(p);
                let d = self.netisr.cost.sample(&mut self.netisr.rng);
                let disp = if chained {
                    Some(self.cpu.chain(now, Level::SoftIrq, d))
                } else {
                    self.cpu.start(now, Level::SoftIrq, d)
                };
                dispatch(disp, s);
            }
            None if chained => {
                self.netisr.current = None;
                let d = self.cpu.finish(now, Level::SoftIrq);
                dispatch(d, s);
            }
            None => {}
        }
    }

    /// The netisr finished forwarding its current packet: if_output on the output NIC.
    pub(crate) fn netisr_done(&mut self, now: SimTime, s: &mut Scheduler<Event>) {
        if let Some(p) = self.netisr.current.take() {
            self.netisr.forwarded += 1;
            let out = self.flows[p.flow as usize].out_nic;
            match self.nics[out].output(now, p) {
                Err(p) => self.flows[p.flow as usize].stats.drops.if_snd += 1,
                Ok(Some(tx)) => self.transmit(out, tx, s),
                Ok(None) => {}
            }
        }
        self.netisr_next(now, s, true);
    }
}
