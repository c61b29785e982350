//! Assembling a host for one run: the components built from the model and wired
//! (each NIC's port with its moderation, DIM, DMA engines, link watch, driver costs,
//! line and policy routing; the cores; the interrupt lines and their handlers; the
//! receive policies; the user process and the sender; the flows), in the shape the
//! model asks for ([`Shape`]: a bus or none, one core or several, chosen once so that
//! the hot path folds what a host does not have); and the entry points that check a
//! model and a run, assemble the host and run it.

use crate::config::model::ModelConfig;
use crate::host::accounting::{Accounting, FlowState};
use crate::host::attach::{NoBus, Shape, WithBus};
use crate::host::cores::{Core, Cores};
use crate::host::cores::{ManyCores, OneCore};
use crate::host::events::Events;
use crate::host::port::{Port, PortParts, Ports, Wiring};
use crate::host::{Host, RunSpec, RunStats, SimError, policies, queues};
use crate::model::bus::Bus;
use crate::model::irq::Line;
use crate::model::kernel::Netisr;
use crate::model::kernel::clock::Hardclock;
use crate::model::kernel::section::SharedSection;
use crate::model::nic::Nic;
use crate::model::nic::dma::NicDma;
use crate::model::nic::link_watch::LinkWatch;
use crate::model::nic::moderation::Moderation;
use crate::model::policy::interrupt::{DriverCosts, Handler, HandlerMode};
use crate::model::policy::{BuildCtx, PolicyConfig};
use crate::model::sender::Sender;
use crate::model::stats::FlowStats;
use crate::model::traffic::{FlowConfig, FlowSource};
use crate::model::user::UserProcess;
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;

/// The moderation state and DIM instance of a NIC configured with `c`: its
/// `moderation`, with the profile DIM starts from programmed when DIM is on (a NIC with
/// DIM and no `moderation` gets one with no ITR), and the DIM instance with whether its
/// mode restarts the timer per frame (CQE).
#[allow(clippy::type_complexity)]
/// Where each device of `nics` (the expanded model, one device per queue, named by
/// [`crate::model::nic::queue_name`]) sits on its port.
fn queues_of(nics: &[crate::model::nic::NicConfig]) -> Vec<crate::model::policy::QueueOf> {
    nics.iter()
        .map(|n| {
            let (port, index) = match n.queue_of {
                Some((k, _)) => {
                    let suffix = crate::model::nic::queue_name("", k);
                    (n.name.strip_suffix(&suffix).unwrap_or(&n.name), k)
                }
                None => (n.name.as_str(), 0),
            };
            crate::model::policy::QueueOf {
                port: port.to_string(),
                index,
                tx_completion: n.tx_completion.is_some(),
            }
        })
        .collect()
}

fn moderation_of(
    c: &crate::model::nic::NicConfig,
) -> (
    Option<Moderation>,
    Option<(crate::model::nic::dim::Dim, bool)>,
) {
    let Some(d) = &c.dim else {
        return (c.moderation.as_ref().map(Moderation::new), None);
    };
    let dim = crate::model::nic::dim::Dim::new(d);
    let cqe = d.mode == crate::model::nic::dim::CqPeriodMode::Cqe;
    let mut m = Moderation::new(&c.moderation.clone().unwrap_or_default());
    let p = dim.table()[dim.programmed_profile()];
    m.program(p.usecs, p.pkts, cqe);
    (Some(m), Some((dim, cqe)))
}

impl<M: Shape> Host<M> {
    /// Build the host for one run. The configuration must have been validated and the
    /// flows must name existing NICs.
    pub(crate) fn new(cfg: &ModelConfig, spec: &RunSpec) -> Self {
        let mhz = cfg.cpu.clock_mhz;
        let key = spec.key;
        let nics: Vec<Nic> = cfg
            .nics
            .iter()
            .map(|n| Nic::new(n, cfg.kernel.if_snd_maxlen as usize, mhz))
            .collect();
        let policies: Vec<PolicyConfig> = cfg.nics.iter().map(|n| n.policy.clone()).collect();
        let mut flows: Vec<FlowState> = spec
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
                        key.stream(&format!("flow{i}.arrivals")),
                        key.stream(&format!("flow{i}.sizes")),
                    ),
                    pending: None,
                    in_nic,
                    out_nic,
                    stats: FlowStats::default(),
                    hash: queues::tuple_of(&spec.flows, i)
                        .flow_tuple()
                        .rss_hash(&crate::model::nic::rss::DEFAULT_KEY, true),
                    rx_queue: Some(cfg.nics[in_nic].queue_of.map_or(0, |(k, _)| k)),
                }
            })
            .collect();
        let mut lines: Vec<Line> = Vec::new();
        let mut nic_line = vec![usize::MAX; nics.len()];
        for (i, l) in cfg.irq_lines.iter().enumerate() {
            let chain: Vec<usize> = l
                .chain
                .iter()
                .map(|n| cfg.nic_index(n).expect("validated chain"))
                .collect();
            for &n in &chain {
                nic_line[n] = lines.len();
            }
            lines.push(Line::shared(l, chain, mhz, key.stream(&format!("irq{i}"))));
        }
        for (n, nic) in nics.iter().enumerate() {
            if nic_line[n] == usize::MAX {
                nic_line[n] = lines.len();
                lines.push(Line::private(
                    &nic.name,
                    n,
                    key.stream(&format!("nic{n}.irq")),
                ));
            }
        }
        // The sending application's packets form a flow after the tester's, whose own
        // source never emits a frame (its `sent` counts packets handed to if_output).
        // How normal-priority tasks share a core: under CFS (`kernel.scheduler`) a task
        // leaves the CPU when need_resched says so, so the round robin's slice is zero
        // (a task's own slice check always passes); else round robin by
        // `kernel.timeslice_ns`.
        let cfs_params = cfg
            .kernel
            .scheduler
            .as_ref()
            .and_then(|s| s.params(cfg.cpu.cores, cfg.kernel.clock.hz));
        let timeslice = match cfs_params {
            Some(_) => SimTime::ZERO,
            None => SimTime::from_ns_f64(cfg.kernel.timeslice_ns),
        };
        let sender = cfg.sender.as_ref().map(|c| {
            let nic = cfg.nic_index(&c.nic).expect("validated sender NIC");
            let silent: FlowConfig = FlowConfig {
                tuple: None,
                name: Some(c.name.clone()),
                from: c.nic.clone(),
                to: c.nic.clone(),
                frame_bytes: crate::model::traffic::FrameSize::Fixed(c.frame_bytes),
                arrivals: Default::default(),
                turnaround_ns: 0.0,
                peer_coalescing: None,
                start_phase: Default::default(),
                clock_ppm: Default::default(),
                rate_pps: None,
            };
            flows.push(FlowState {
                name: c.name.clone(),
                source: FlowSource::new(
                    &silent,
                    nics[nic].link,
                    1.0,
                    SimTime::ZERO,
                    key.stream("sender.arrivals"),
                    key.stream("sender.sizes"),
                ),
                pending: None,
                in_nic: nic,
                out_nic: nic,
                stats: FlowStats::default(),
                hash: 0,
                rx_queue: None,
            });
            Sender::new(
                c,
                flows.len() - 1,
                nic,
                mhz,
                timeslice,
                spec.duration,
                key.stream("sender"),
            )
        });
        let mut rx_flows = vec![Vec::new(); nics.len()];
        for (i, f) in flows.iter().enumerate() {
            rx_flows[f.in_nic].push(i);
        }
        let (tx_groups, tx_group) = crate::host::port::TxGroup::build(
            &cfg.nics.iter().map(|n| n.queue_of).collect::<Vec<_>>(),
            &cfg.nics.iter().map(|n| n.xps).collect::<Vec<_>>(),
            cfg.cpu.cores.max(1) as usize,
        );
        // A NIC transmits if a flow leaves by it, or by another queue of its NIC, or if
        // an XDP program sends its frames back out of it (XDP_TX, on the queue that
        // received them).
        let xdp_tx = |i: usize| cfg.nics[i].policy.transmits_received();
        let transmits: Vec<bool> = (0..cfg.nics.len())
            .map(|i| {
                let group = |j: usize| tx_group[j] == tx_group[i];
                flows.iter().any(|f| f.out_nic == i || group(f.out_nic)) || xdp_tx(i)
            })
            .collect();
        let queue_of = queues_of(&cfg.nics);
        let rx_policies = policies::Policies::build(|kind| BuildCtx {
            kind,
            nics: &policies,
            kernel: &cfg.kernel,
            clock_mhz: mhz,
            timeslice,
            cores: cfg.cpu.cores as usize,
            queues: &queue_of,
        });
        let ports: Vec<Port<M::Dma>> = nics
            .into_iter()
            .zip(policies)
            .zip(rx_flows)
            .enumerate()
            .map(|(i, ((nic, policy), rx_flows))| {
                let c = &cfg.nics[i];
                let policy_kind = policies::Policies::kind_of(&policy);
                let caps = policy.capabilities();
                let (mut moderation, dim) = moderation_of(c);
                if let Some(m) = &mut moderation {
                    let hz = cfg.kernel.clock.hz.max(1);
                    m.set_ixgbe_clock(c.line_rate_bps, SimTime(1_000_000_000_000 / u64::from(hz)));
                }
                let lookahead = caps.handler == HandlerMode::Inline
                    && nic.stats.is_none()
                    && rx_flows.iter().all(|&f| !flows[f].source.is_closed_loop());
                let parts = PortParts {
                    nic,
                    dma: M::dma(
                        cfg.bus.as_ref().map(|bus| {
                            NicDma::new(i as u16, &c.dma.clone().unwrap_or_default(), bus)
                        }),
                    ),
                    moderation,
                    dim,
                    link_watch: c
                        .driver
                        .link_watch
                        .as_ref()
                        .map(|w| LinkWatch::new(w, mhz, key.stream(&format!("nic{i}.link_watch")))),
                    driver: DriverCosts::new(&c.driver, mhz, key.stream(&format!("nic{i}.driver"))),
                };
                Port::new(
                    parts,
                    Wiring {
                        caps,
                        lookahead,
                        line: nic_line[i],
                        polled_by: (!policy.interrupt_driven()).then_some(policy_kind),
                        policy_kind,
                        policy,
                        transmits: transmits[i],
                        tx_group: tx_group[i],
                        rx_flows,
                    },
                )
            })
            .collect();
        let cores = cfg.cpu.cores.max(1) as usize;
        let events = Events::new(&transmits, cores, flows.len());
        let mut host = Host {
            // Core 0's netisr stream is `netisr`, the others' their own.
            cores: Cores::new(
                (0..cores)
                    .map(|c| {
                        let name = match c {
                            0 => "netisr".to_string(),
                            c => format!("cpu{c}.netisr"),
                        };
                        let idle =
                            cfg.cpu.idle.as_ref().map(|i| {
                                crate::model::cpu::idle::Idle::new(i, cfg.kernel.clock.hz)
                            });
                        let cfs = cfs_params.map(crate::model::cpu::cfs::Cfs::new);
                        Core::new(Netisr::new(&cfg.kernel, mhz, key.stream(&name)), idle, cfs)
                    })
                    .collect(),
                cfg.line_cores(),
                &nic_line,
                cfg.kernel
                    .shared_section
                    .as_ref()
                    .map(|c| SharedSection::new(c, mhz, key.stream("kernel.shared_section"))),
            ),
            events,
            handlers: cfg
                .nics
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    Handler::new(i, ports[i].caps.handler, n.driver.max_frames_per_interrupt)
                })
                .collect(),
            lines,
            bus: M::bus(cfg.bus.as_ref().map(Bus::new)),
            rx_policies,
            user: cfg.user.as_ref().map(|u| {
                // Under CFS a compute job checks need_resched at every tick.
                let quantum = match cfs_params {
                    Some(p) => p.tick,
                    None => SimTime::from_ns_f64(cfg.kernel.timeslice_ns),
                };
                UserProcess::new(u, quantum, mhz, key.stream("user"))
            }),
            sender,
            ports: Ports::new(ports, tx_groups),
            acct: Accounting::new(
                flows,
                spec.latency_from,
                spec.duration,
                spec.drain,
                spec.timeline,
            ),
            hardclock: Hardclock::new(&cfg.kernel.clock, mhz, key.stream("clock")),
            merge_bursts: true,
        };
        // Nothing preempts interrupt handlers but the clock interrupt and a policy that
        // runs at its level. The clock's ticks are known in advance (a burst that no
        // tick can reach keeps its wall time, `Host::no_tick_within`); a policy's
        // preemptions are not.
        if host.rx_policies.preempt_handlers() {
            host.ports.iter_mut().for_each(|p| p.no_lookahead());
        }
        host
    }
}

/// Build the host of `cfg`'s shape (a bus or none, one core or several: [`Shape`])
/// as `$h` and evaluate `$body` with it.
macro_rules! assembled {
    ($cfg:expr, $spec:expr, $h:ident => $body:expr) => {
        match ($cfg.bus.is_some(), $cfg.cpu.cores > 1) {
            (true, false) => {
                let $h = Host::<WithBus<OneCore>>::new($cfg, $spec);
                $body
            }
            (true, true) => {
                let $h = Host::<WithBus<ManyCores>>::new($cfg, $spec);
                $body
            }
            (false, false) => {
                let $h = Host::<NoBus<OneCore>>::new($cfg, $spec);
                $body
            }
            (false, true) => {
                let $h = Host::<NoBus<ManyCores>>::new($cfg, $spec);
                $body
            }
        }
    };
}

/// Validate `cfg`, check the flows against it, build the host and run it.
pub fn simulate(cfg: &ModelConfig, spec: &RunSpec) -> Result<RunStats, SimError> {
    check(cfg, spec)?;
    let expanded = queues::expand(cfg, spec);
    let (cfg, spec) = expanded.as_ref().map_or((cfg, spec), |(c, s)| (c, s));
    assembled!(cfg, spec, h => h.run(spec))
}

/// Every counter name a run of `cfg` with `spec`'s flows can publish
/// (`Host::counter_names`): the host is validated and assembled as [`simulate`] does,
/// and asked its counters before any event (cheap: no frame is simulated). Per-NIC,
/// per-queue, per-core and per-policy names depend on the model and the flows, so this
/// is the one honest list of them.
pub fn counter_names(
    cfg: &ModelConfig,
    spec: &RunSpec,
) -> Result<std::collections::BTreeSet<String>, SimError> {
    check(cfg, spec)?;
    let expanded = queues::expand(cfg, spec);
    let (cfg, spec) = expanded.as_ref().map_or((cfg, spec), |(c, s)| (c, s));
    assembled!(cfg, spec, h => Ok(h.counter_names()))
}

/// [`simulate`] with every handler step as its own CPU burst and event
/// ([`Host::unmerged`]): for checking that merged bursts change nothing but the event
/// count.
#[doc(hidden)]
pub fn simulate_unmerged(cfg: &ModelConfig, spec: &RunSpec) -> Result<RunStats, SimError> {
    check(cfg, spec)?;
    let expanded = queues::expand(cfg, spec);
    let (cfg, spec) = expanded.as_ref().map_or((cfg, spec), |(c, s)| (c, s));
    assembled!(cfg, spec, h => h.unmerged().run(spec))
}

/// [`simulate`], recording the window of `trace` (see [`crate::trace`]). The run is the
/// same as without: its statistics are equal.
pub fn simulate_traced(
    cfg: &ModelConfig,
    spec: &RunSpec,
    trace: crate::trace::TraceSpec,
) -> Result<(RunStats, crate::trace::TraceOutput), SimError> {
    check(cfg, spec)?;
    let mut p = Problems::new();
    if trace.to <= trace.from {
        p.push("trace", "the window must end after it starts");
    }
    if trace.to > spec.duration + spec.drain {
        p.push(
            "trace",
            format!(
                "the window ends at {} s, after the run ({} s of sending and {} s of drain)",
                trace.to.as_secs_f64(),
                spec.duration.as_secs_f64(),
                spec.drain.as_secs_f64()
            ),
        );
    }
    if !p.is_empty() {
        return Err(SimError::Invalid(p.list));
    }
    let expanded = queues::expand(cfg, spec);
    let (cfg, spec) = expanded.as_ref().map_or((cfg, spec), |(c, s)| (c, s));
    assembled!(cfg, spec, h => h.run_traced(spec, trace))
}

/// The checks of a model and a run before simulating.
fn check(cfg: &ModelConfig, spec: &RunSpec) -> Result<(), SimError> {
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
            if let Some(c) = f.arrivals.capture()
                && c.replay.is_none()
            {
                p.push(
                    "arrivals.pcap",
                    format!(
                        "the capture `{}` has not been read (the scenario loader reads it)",
                        c.pcap
                    ),
                );
            }
        });
    }
    cfg.check_roles(&spec.flows, &mut p);
    if spec.rates_pps.len() != spec.flows.len() {
        p.push("rates_pps", "one rate per flow is required");
    }
    for (i, r) in spec.rates_pps.iter().enumerate() {
        p.positive(&format!("rates_pps[{i}]"), *r, "frames/s");
    }
    if !p.is_empty() {
        return Err(SimError::Invalid(p.list));
    }
    Ok(())
}
