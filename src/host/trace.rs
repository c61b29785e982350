//! The host's routing for [`crate::trace`]: a run that records a window.
//!
//! The run is the untraced loop up to the window, then the same loop that after every
//! event shows the recorder the CPU, the queues, the counters and where the followed
//! frames are, then the untraced loop again. The frames leaving reach the recorder
//! through [`Taps`], the hook the latency timeline already uses, so a run without a
//! trace executes exactly what it did before.

use crate::host::attach::{Attached, Shape};
use crate::host::cores::CoreModel;
use crate::host::events::{Next, Source};
use crate::host::{Host, RunSpec, RunStats, SimError, Task};
use crate::model::packet::Packet;
use crate::model::timeline::Timeline;
use crate::sim::engine::Scheduler;
use crate::sim::time::SimTime;
use crate::trace::{Counters, DROP_SITES, Layout, Place, Queue, Recorder, TraceOutput, TraceSpec};

/// What watches the packets leaving the host.
#[derive(Debug, Default)]
pub(crate) struct Taps {
    /// The latency timeline.
    pub timeline: Option<Timeline>,
    /// The trace recorder.
    pub trace: Option<Box<Recorder>>,
}

impl Taps {
    /// A frame leaves by `out_nic`: first bit at `start`, last at `done`, latency `lat`.
    #[inline]
    pub fn delivered(
        &mut self,
        pkt: Packet,
        out_nic: usize,
        start: SimTime,
        done: SimTime,
        lat: SimTime,
    ) {
        if let Some(tl) = &mut self.timeline {
            tl.record(pkt.t_in, lat);
        }
        if let Some(r) = &mut self.trace {
            r.delivered(pkt, out_nic, start, done, lat);
        }
    }
}

impl<M: Shape> Host<M> {
    /// [`Host::run`], recording `trace`'s window.
    pub fn run_traced(
        mut self,
        spec: &RunSpec,
        trace: TraceSpec,
    ) -> Result<(RunStats, TraceOutput), SimError> {
        let (from, to) = (trace.from, trace.to);
        let queues = self.trace_queues();
        let rec = Recorder::new(trace, self.trace_layout(), queues.clone());
        self.acct.install_recorder(Box::new(rec));
        let mut s = Scheduler::new();
        self.start(spec, &mut s);
        while let Some(next) = self.peek_next(&s) {
            if next.key.at >= from {
                break;
            }
            self.fire_apart(&mut s, next);
        }
        let mut rec = self.take_recorder();
        let mut holding = Vec::new();
        for c in 0..self.cores.count() {
            for &l in crate::model::cpu::Level::ALL.iter() {
                if let Some(task) = self.cores.get(c).runq().current(l) {
                    holding.push((c, l, task, self.pass_of(task)));
                }
            }
        }
        rec.begin(self.trace_counters(from), &holding);
        self.observe(from, None, &mut rec, &queues);
        self.put_recorder(rec);
        let (mut end, mut truncated) = (to, false);
        while let Some(next) = self.peek_next(&s) {
            if next.key.at >= to {
                break;
            }
            let now = next.key.at;
            let burst_core = self.burst_core(next);
            if let Some(flow) = self.arriving_flow(next)
                && let Some(fr) = self.acct.flow(flow).pending
            {
                let pkt = Packet {
                    flow: flow as u32,
                    bytes: fr.bytes,
                    seq: fr.seq,
                    t_in: fr.end,
                };
                let nic = self.acct.flow(flow).in_nic;
                self.recorder().frame_in(pkt, nic);
            }
            self.fire_apart(&mut s, next);
            let mut rec = self.take_recorder();
            self.observe(now, burst_core, &mut rec, &queues);
            let full = rec.full();
            self.put_recorder(rec);
            if full {
                (end, truncated) = (now, true);
                break;
            }
        }
        // Frames whose last bit arrived in the window but whose DMA completes later.
        for f in 0..self.acct.flows().len() {
            if let Some(fr) = self.acct.flow(f).pending
                && fr.end < end
            {
                let pkt = Packet {
                    flow: f as u32,
                    bytes: fr.bytes,
                    seq: fr.seq,
                    t_in: fr.end,
                };
                let nic = self.acct.flow(f).in_nic;
                self.recorder().frame_in(pkt, nic);
            }
        }
        let c = self.trace_counters(end);
        self.recorder().finish_window(end, &c, truncated);
        while let Some(next) = self.peek_next(&s) {
            self.fire_apart(&mut s, next);
        }
        let rec = self.take_recorder();
        let end = s.now().max(spec.duration);
        let stats = self.finish(spec, end, s.events_processed())?;
        Ok((stats, rec.into_output()))
    }

    /// The core whose CPU burst the event `next` ends: the core a frame leaving a queue
    /// in it was taken by. With one core, always core 0 (whatever the event, the slice
    /// open on the CPU did it); with several, `None` for an event that is no CPU burst.
    fn burst_core(&self, next: Next) -> Option<usize> {
        if !<M::Cores as CoreModel>::MANY {
            return Some(0);
        }
        match self.events.source(next) {
            Source::Cpu(c) => Some(c),
            _ => None,
        }
    }

    fn recorder(&mut self) -> &mut Recorder {
        self.acct
            .recorder_mut()
            .expect("a traced run has a recorder")
    }

    fn take_recorder(&mut self) -> Box<Recorder> {
        self.acct
            .take_recorder()
            .expect("a traced run has a recorder")
    }

    fn put_recorder(&mut self, rec: Box<Recorder>) {
        self.acct.install_recorder(rec);
    }

    /// Names of what the trace shows.
    fn trace_layout(&self) -> Layout {
        Layout {
            nics: self.ports.iter().map(|p| p.nic().name.clone()).collect(),
            lines: self
                .lines
                .iter()
                .map(|l| {
                    let chain = l.chain.iter().map(|&n| self.ports[n].nic().name.clone());
                    (l.name.clone(), chain.collect())
                })
                .collect(),
            flows: self
                .acct
                .flows()
                .iter()
                .map(|f| (f.name.clone(), f.in_nic, f.out_nic))
                .collect(),
            swi: self.rx_policies.swi_name().unwrap_or("netisr").to_string(),
            latency_from_first_bit: self.acct.latency_from()
                == crate::model::stats::LatencyFrom::FirstBit,
            in_links: self
                .acct
                .flows()
                .iter()
                .map(|f| self.ports[f.in_nic].nic().link)
                .collect(),
            policy_task_name: Some(super::policies::task_name),
            cores: self.cores.count(),
            kthreads: self.rx_policies.backlog(0).is_some(),
        }
    }

    /// The queues drawn as counters: each NIC's (each queue device's) rings and send
    /// queue, ipintrq (with several cores each core's, and its RPS backlog when the
    /// receive policy has one), the bus.
    fn trace_queues(&self) -> Vec<Queue> {
        let mut q = Vec::new();
        for n in 0..self.ports.len() {
            q.extend([Queue::RxRing(n), Queue::TxRing(n), Queue::IfSnd(n)]);
        }
        if self.cores.count() > 1 {
            for c in 0..self.cores.count() {
                q.push(Queue::CoreIpintrq(c));
                if self.rx_policies.backlog(c).is_some() {
                    q.push(Queue::Backlog(c));
                }
            }
        } else {
            q.push(Queue::Ipintrq);
        }
        if M::PRESENT {
            q.push(Queue::Bus);
        }
        q
    }

    /// The counters the trace is checked against, as of `now`.
    fn trace_counters(&self, now: SimTime) -> Counters {
        let nics = self.ports.len();
        let mut drops = [0u64; 10];
        let mut drops_at = vec![[0u64; 10]; nics + 1];
        for f in self.acct.flows() {
            let d = &f.stats.drops;
            let by_site = [
                d.rx_ring,
                d.ipintrq,
                d.if_snd,
                d.user_queue,
                d.rx_fifo,
                d.tx_underrun,
                d.reset,
                d.xdp,
                d.netfilter,
                d.application,
            ];
            for (i, site) in DROP_SITES.iter().enumerate() {
                drops[i] += by_site[i];
                let at = match *site {
                    "rx_ring" | "rx_fifo" | "xdp" | "application" => f.in_nic,
                    // By the send queue or transmitter that dropped them, below: on a
                    // multi-queue NIC that is the queue the frame was steered to, not
                    // the flow's.
                    "if_snd" | "tx_underrun" => continue,
                    _ => nics,
                };
                drops_at[at][i] += by_site[i];
            }
        }
        // Every if_snd drop is one refused push, counted by that send queue too, and
        // every underrun drop by the transmitter that cut the frame.
        let site = |name: &str| DROP_SITES.iter().position(|&s| s == name).expect("site");
        let (if_snd, underrun) = (site("if_snd"), site("tx_underrun"));
        for (n, p) in self.ports.iter().enumerate() {
            drops_at[n][if_snd] = p.nic().if_snd.drops;
            drops_at[n][underrun] = p.nic().underrun_drops;
        }
        let (mut cpu_ps, mut core_cpu_ps, mut core_kthread_ps) = (
            self.cores.get(0).cpu().snapshot(now).0,
            Vec::new(),
            Vec::new(),
        );
        if self.cores.count() > 1 {
            cpu_ps = [0; crate::model::cpu::LEVELS + 1];
            for k in self.cores.all() {
                let (c, tags) = k.cpu().snapshot(now);
                cpu_ps.iter_mut().zip(c).for_each(|(a, b)| *a += b);
                core_cpu_ps.push(c);
                core_kthread_ps.push(super::tags_ps(&tags, &super::TAGS_POLICY_THREADS));
            }
        }
        Counters {
            cpu_ps,
            core_cpu_ps,
            core_kthread_ps,
            interrupts: self.lines.iter().map(|l| l.passes).sum(),
            drops,
            drops_at,
            resets: self
                .ports
                .iter()
                .map(|p| p.link_watch().map_or(0, |w| w.resets))
                .collect(),
        }
    }

    /// An interrupt's pass over its line (0 for other tasks).
    fn pass_of(&self, task: Task) -> u64 {
        match task {
            Task::Isr(line) => self.lines[line as usize].passes,
            _ => 0,
        }
    }

    /// Show the recorder the host after an event at `now` that ended a CPU burst on
    /// core `burst_core` (see [`Host::burst_core`]).
    fn observe(
        &self,
        now: SimTime,
        burst_core: Option<usize>,
        rec: &mut Recorder,
        queues: &[Queue],
    ) {
        let many = self.cores.count() > 1;
        // Where the followed frames are (before the CPU: leaving a queue was the work
        // of the slice that ran until now).
        let followed: Vec<_> = rec.followed().collect();
        // Where the sampled frames are, from one pass over each queue (a frame is in one
        // place at most): looking each followed frame up in every queue would cost the
        // followed frames times the queues' lengths at every event.
        let mut at: std::collections::HashMap<(u32, u64), Place> = std::collections::HashMap::new();
        if !followed.is_empty() {
            let mut note = |p: &Packet, place: Place| {
                if rec.sampled(p.seq) {
                    at.entry((p.flow, p.seq)).or_insert(place);
                }
            };
            for port in self.ports.iter() {
                port.nic()
                    .rx_ring
                    .iter()
                    .for_each(|p| note(p, Place::RxRing));
            }
            for k in self.cores.all() {
                k.netisr()
                    .ipintrq
                    .iter()
                    .for_each(|p| note(p, Place::Ipintrq));
            }
            for k in self.cores.all() {
                if let Some(p) = k.netisr().in_hand() {
                    note(p, Place::Ipintr);
                }
            }
            if many {
                for c in 0..self.cores.count() {
                    if let Some(b) = self.rx_policies.backlog(c) {
                        b.iter().for_each(|p| note(p, Place::Backlog(c)));
                    }
                }
            }
        }
        for (i, flow, seq, was) in followed {
            let in_nic = self.acct.flow(flow as usize).in_nic;
            let place = at.get(&(flow, seq)).copied().unwrap_or(Place::Elsewhere);
            // The core that took the frame from where it was: a ring's by the core whose
            // burst ended (else the core of its device's vector, where its poll or
            // handler runs), a backlog's by its core, ipintrq's by the core whose burst
            // ended.
            let by = match was {
                _ if !many => Some(0),
                // (A CPU burst's core when the event ends one: a socket's busy poll
                // takes frames from the ring on its process's core.)
                Some(Place::RxRing) => burst_core.or(Some(self.cores.nic_core(in_nic))),
                Some(Place::Backlog(c)) => Some(c),
                _ => burst_core,
            };
            rec.moved_on(by, i, now, place);
        }
        for c in 0..self.cores.count() {
            let core = self.cores.get(c);
            let running = core.cpu().running().and_then(|l| {
                let task = core.runq().current(l)?;
                Some((l, task, self.pass_of(task)))
            });
            rec.cpu_from(c, now, core.cpu().runs_from(now), running);
        }
        rec.settle(now);
        for (i, q) in queues.iter().enumerate() {
            let len = match *q {
                Queue::RxRing(n) => self.ports[n].nic().rx_ring.len(),
                Queue::TxRing(n) => self.ports[n].nic().tx_ring_len(),
                Queue::IfSnd(n) => self.ports[n].nic().if_snd.len(),
                Queue::Ipintrq => self.cores.hand().netisr().ipintrq.len(),
                Queue::CoreIpintrq(c) => self.cores.get(c).netisr().ipintrq.len(),
                Queue::Backlog(c) => self.rx_policies.backlog(c).map_or(0, |b| b.len()),
                Queue::Bus => self.bus.get().map_or(0, |b| b.requests()),
            };
            rec.queue(now, i, len);
        }
        rec.counters(now, &self.trace_counters(now));
    }
}
