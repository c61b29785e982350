//! The model skeleton built from a host's dumps, every value with a note saying where it
//! came from.
//!
//! Decisions where the dumps leave a choice (the book's chapter "Host from its own dumps"
//! says the same):
//!
//! - **Cores are the online logical CPUs** (`On-line CPU(s) list`, else `CPU(s)`):
//!   interrupt affinities, RSS and XPS name logical CPUs, so only they can be mapped;
//!   core `i` of the model is the `i`-th online CPU. With more than one thread per core
//!   each hyperthread is modelled as a whole core (the model has no SMT), which the
//!   notes and the report say.
//! - **The clock** is `--clock-mhz` when given; else the nominal one of the brand string
//!   (`@ 3.60GHz`), as the shipped models use; else `CPU max MHz`, else `CPU MHz` (one
//!   reading), else the highest `cpu MHz` of /proc/cpuinfo ([`super::cpuinfo`]: a
//!   virtual machine's lscpu has none); the notes say which. None is refused.
//! - **The line rate** is `--line-rate` when given for the interface (or for all);
//!   else ethtool's `Speed:`; `Speed: Unknown!` or no `ethtool-<if>` is refused, naming
//!   the file, the line and `--line-rate` (a virtual NIC has no speed to read, and the
//!   model's 100 Mbit/s default would be a silent guess).
//! - **`linux_driver`** is the driver's when irqsim writes its `ethtool -S` (`linux_driver` below).
//! - **Queues** are the current channels with a receive queue (`Combined` + `RX` of
//!   `ethtool -l`); a driver without channels has one.
//! - **Moderation** follows the driver, since `rx-usecs` means different things:
//!   mlx5 (`mlx5_core`): with `Adaptive RX: on`, DIM (`nics[].dim`) in the CQ period
//!   mode of `CQE mode RX` (mlx5's default, CQE-based, when the line is absent); off,
//!   `rx-frames` is `moderation.packets` and `rx-usecs` the CQ period,
//!   `cq_period_ns` with `cq_period_mode` `cqe` (restarted by each completion) or `eqe`
//!   (restarted by each event); a period of 0 is no moderation (`mlx5e_ethtool_set_coalesce`,
//!   `mlx5_core_modify_cq_moderation`). Intel's ITR drivers (ixgbe, ixgbevf, igb, igc,
//!   i40e, iavf, ice): `rx-usecs` is the interval between interrupts,
//!   `moderation.min_interval_ns`; 0 is off; ixgbe's 1 and igb's 1-3 select their
//!   dynamic ITR, and i40e's and ice's `Adaptive RX: on` theirs, which are not modelled
//!   (nothing is written, the report says so). The paravirtual NICs of virtual machines
//!   (virtio_net, ena, gve, vmxnet3): rx-usecs 0 with rx-frames 1 or n/a is no
//!   moderation (virtio_net without `VIRTIO_NET_F_NOTF_COAL` reports exactly that);
//!   anything else, and `Adaptive RX: on`, is coalescing done by the hypervisor or the
//!   device, not modelled: nothing written, the note says what the values mean there
//!   (`Family::Paravirtual`). Any other driver: nothing written.
//!   Transmit coalescing is not used (the model's transmit completions interrupt only
//!   with `nics[].tx_completion`, which no dump shows).
//! - **Vectors' cores** (`cpu.irq_affinity`): a queue's vector by its handler's name in
//!   `/proc/interrupts` ([`super::interrupts`]), its CPU from `effective_affinity_list`,
//!   else from `smp_affinity_list` when it names one CPU; a list of several CPUs without
//!   the effective one is not guessed between (the line keeps the model's round robin).
//! - **Costs** are not in any dump: from `--profile` ([`super::profile`]) or left out
//!   (the driver's) or 0 (`kernel.netisr_per_packet`, which the loader requires), each
//!   with a note "not measured".

use super::dump::{CpuList, Findings, Sourced};
use super::ethtool::{Flag, Num};
use super::profile::Profile;
use super::{HostDumps, NicDumps};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

mod drivers;
use drivers::*;

/// The notes of the model being built: field path to source.
#[derive(Debug, Default)]
pub struct Notes {
    /// By field path.
    pub map: BTreeMap<String, String>,
    /// What the dumps did not give, one sentence each (for the report).
    pub not_filled: Vec<String>,
}

impl Notes {
    fn set(&mut self, path: impl Into<String>, note: impl Into<String>) {
        self.map.insert(path.into(), note.into());
    }

    /// A note that also goes to the report's list of what is not from the dumps.
    fn missing(&mut self, path: impl Into<String>, note: impl Into<String>) {
        let (path, note) = (path.into(), note.into());
        self.not_filled.push(format!("{path}: {note}"));
        self.map.insert(path, note);
    }
}

/// `(<file> line <n>: <text>)`.
fn at<T>(s: &Sourced<T>) -> String {
    format!("({}: `{}`)", s.at, s.text)
}

/// Linux's default transmit queue length of an Ethernet device \[packets\].
const LINUX_TXQUEUELEN: u64 = 1000;

/// The NIC's queue count and its note; `None` (a fault pushed) when it cannot be used.
fn queues(nic: &NicDumps, f: &mut Findings, notes: &mut Notes) -> Option<u16> {
    let c = &nic.channels;
    let path = format!("nics.{}.queues", nic.name);
    if !c.reported {
        notes.set(
            &path,
            format!(
                "1: ethtool -l {} reports no channels (the driver does not support it: one \
                 queue)",
                nic.name
            ),
        );
        return Some(1);
    }
    let comb = some_num(&c.combined);
    let rx = some_num(&c.rx);
    let n = comb.map_or(0, |x| x.0) + rx.map_or(0, |x| x.0);
    let src: Vec<String> = [("Combined", comb), ("RX", rx)]
        .iter()
        .filter_map(|(k, v)| v.map(|(x, s)| format!("{k} {x} {}", at(s))))
        .collect();
    let file = format!("ethtool-l-{}", nic.name);
    if n == 0 {
        f.fault(
            file,
            "the current settings give no channel with a receive queue (Combined and RX are 0 or n/a)",
        );
        return None;
    }
    if n > 64 {
        f.fault(
            file,
            format!("{n} receive queues: the model has at most 64 per NIC"),
        );
        return None;
    }
    notes.set(
        &path,
        format!(
            "{n}: the current channels with a receive queue, ethtool -l {}, Current hardware \
             settings: {}; each queue an RX/TX pair with its vector (<nic>-q<k>)",
            nic.name,
            src.join(" + ")
        ),
    );
    Some(n as u16)
}

/// A ring size: required.
fn ring(
    nic: &NicDumps,
    which: &str,
    s: &Option<Sourced<Num>>,
    f: &mut Findings,
    notes: &mut Notes,
) -> Option<u64> {
    let field = if which == "RX" {
        "rx_ring_slots"
    } else {
        "tx_ring_slots"
    };
    match some_num(s).filter(|(x, _)| *x >= 1 && *x <= u32::MAX as u64) {
        Some((x, src)) => {
            notes.set(
                format!("nics.{}.{field}", nic.name),
                format!(
                    "{x}: ethtool -g {}, Current hardware settings {which} {}",
                    nic.name,
                    at(src)
                ),
            );
            Some(x)
        }
        None => {
            f.fault(
                format!("ethtool-g-{}", nic.name),
                format!("no current {which} ring size (a number of at least 1): it is required"),
            );
            None
        }
    }
}

/// The model's core of CPU `cpu`: its rank among the online CPUs.
fn core_of(cpu: u32, online: &CpuList) -> Option<usize> {
    online.rank(cpu)
}

/// Bind each queue's vector to its core: `cpu.irq_affinity` entries with notes.
fn affinities(
    h: &HostDumps,
    nic: &NicDumps,
    queues: u16,
    online: &CpuList,
    aff: &mut Map<String, Value>,
    notes: &mut Notes,
) {
    let Some(ints) = &h.interrupts else {
        return;
    };
    let driver = nic.driver();
    let bus = nic.info.bus.as_ref().map(|b| b.value.as_str());
    let lone = h.nics.iter().filter(|n| n.driver() == driver).count() == 1;
    let mut unbound = Vec::new();
    for k in 0..queues {
        let line = if queues > 1 {
            crate::model::nic::queue_name(&nic.name, k)
        } else {
            nic.name.clone()
        };
        let row = match super::interrupts::queue_vector(
            ints,
            (&nic.name, driver, bus),
            (k, queues),
            lone,
        ) {
            Ok(Some(r)) => r,
            Ok(None) => {
                unbound.push(format!("{line} (no vector of that name)"));
                continue;
            }
            Err(rows) => {
                let irqs: Vec<String> = rows.iter().map(|r| r.irq.to_string()).collect();
                unbound.push(format!(
                    "{line} (several vectors match: {}; not guessed between)",
                    irqs.join(", ")
                ));
                continue;
            }
        };
        let name = row
            .tokens
            .last()
            .cloned()
            .unwrap_or_else(|| row.irq.to_string());
        let (list, what) = match h.affinity.as_ref().map(|a| {
            (
                a.effective.get(&row.irq).filter(|e| e.value.len() == 1),
                a.allowed.get(&row.irq),
            )
        }) {
            Some((Some(e), _)) => (e, "effective_affinity_list"),
            Some((None, Some(a))) if a.value.len() == 1 => (a, "smp_affinity_list"),
            Some((None, Some(a))) => {
                unbound.push(format!(
                    "{line} (vector {} may go to CPUs {} {} and no effective_affinity_list \
                     names one)",
                    row.irq,
                    a.value,
                    at(a)
                ));
                continue;
            }
            _ => {
                unbound.push(format!(
                    "{line} (vector {}: no affinity in the dump)",
                    row.irq
                ));
                continue;
            }
        };
        let Some(cpu) = list.value.first() else {
            continue;
        };
        let Some(core) = core_of(cpu, online) else {
            unbound.push(format!(
                "{line} (vector {} on CPU {cpu}, which is not online)",
                row.irq
            ));
            continue;
        };
        aff.insert(line.clone(), json!(core));
        notes.set(
            format!("cpu.irq_affinity.{line}"),
            format!(
                "core {core} (CPU {cpu}): queue {k}'s vector {} `{name}` ({}:{}) has {what} \
                 {cpu} {}",
                row.irq,
                row.at.file,
                row.at.line,
                at(list)
            ),
        );
    }
    if !unbound.is_empty() {
        notes.missing(
            format!("nics.{}.vectors", nic.name),
            format!(
                "left to the model's round robin (line i on core i mod the cores): {}",
                unbound.join("; ")
            ),
        );
    }
}

/// The model (JSON) from the dumps and the profile, with its notes; faults for what the
/// model cannot do without.
pub fn model(
    h: &HostDumps,
    dir: &str,
    (profile, opts): (Option<&Profile>, &super::Options),
    f: &mut Findings,
) -> (Value, Notes) {
    let mut notes = Notes::default();
    // --- cpu ---
    let cpus = h.lscpu.cpus.as_ref();
    let online: CpuList = match (&h.lscpu.online, cpus) {
        (Some(o), _) => o.value.clone(),
        (None, Some(c)) => CpuList::upto(c.value),
        (None, None) => CpuList::default(),
    };
    let cores = online.len();
    if cores > 64 {
        f.fault(
            "lscpu",
            format!("{cores} online CPUs: the model has at most 64 cores"),
        );
    }
    let cores_note = match (&h.lscpu.online, cpus) {
        (Some(o), Some(c)) => format!(
            "{cores}: the online logical CPUs, lscpu `On-line CPU(s) list` {} (of `CPU(s)` {} \
             {}); core i is the i-th online CPU",
            at(o),
            c.value,
            at(c)
        ),
        (None, Some(c)) => format!("{cores}: the logical CPUs, lscpu `CPU(s)` {}", at(c)),
        _ => String::new(),
    };
    let smt = h
        .lscpu
        .threads_per_core
        .as_ref()
        .filter(|t| t.value > 1)
        .map(|t| {
            format!(
                " {} threads per core {}: each hyperthread is modelled as a whole core (the \
                 model has no SMT), which overstates the host's capacity",
                t.value,
                at(t)
            )
        })
        .unwrap_or_default();
    notes.set("cpu.cores", format!("{cores_note}.{smt}"));
    if !smt.is_empty() {
        notes.not_filled.push(format!("cpu.cores:{smt}"));
    }
    let lscpu_clock = h.lscpu.clock_mhz.as_ref();
    let cpuinfo_clock = h.cpuinfo.as_ref().and_then(|c| c.max_mhz.as_ref());
    let clock = match (opts.clock_mhz, lscpu_clock, cpuinfo_clock) {
        (Some(x), _, _) => {
            let dumps = lscpu_clock
                .or(cpuinfo_clock)
                .map_or("the dumps give none".to_string(), |c| {
                    format!("the dumps say {} MHz {}", c.value, at(c))
                });
            notes.set(
                "cpu.clock_mhz",
                format!("{x}: given with import-host --clock-mhz ({dumps})"),
            );
            Some(x)
        }
        (None, Some(c), _) => {
            notes.set(
                "cpu.clock_mhz",
                format!(
                    "{}: {} {}",
                    c.value,
                    match h.lscpu.clock_kind {
                        "nominal" => "the nominal clock of lscpu's `Model name`",
                        "max" => "lscpu's `CPU max MHz` (the brand string gives no nominal clock; turbo included)",
                        _ => "lscpu's `CPU MHz`, one reading of the current clock (no nominal or max clock in the dump)",
                    },
                    at(c)
                ),
            );
            Some(c.value)
        }
        (None, None, Some(c)) => {
            let n = h.cpuinfo.as_ref().map_or(0, |i| i.readings);
            notes.set(
                "cpu.clock_mhz",
                format!(
                    "{}: the highest of /proc/cpuinfo's {n} `cpu MHz` line(s) {} (lscpu has no \
                     clock: no `@ <x>GHz` in the brand string, no `CPU max MHz` or `CPU MHz`, \
                     as on a virtual machine without cpufreq, where the line is the TSC's \
                     calibrated clock, cpu_khz); check it, or give --clock-mhz",
                    c.value,
                    at(c)
                ),
            );
            Some(c.value)
        }
        (None, None, None) => {
            f.fault(
                super::LSCPU,
                format!(
                    "no clock: neither `Model name: ... @ <x>GHz`, `CPU max MHz:` nor `CPU \
                     MHz:`, and no `cpu MHz` line in {} ({}): give the clock with \
                     --clock-mhz MHZ, or add `cat /proc/cpuinfo > {}`",
                    super::CPUINFO,
                    if h.cpuinfo.is_some() {
                        "it has none"
                    } else {
                        "no such file"
                    },
                    super::CPUINFO
                ),
            );
            None
        }
    };
    let mut cpu = Map::new();
    cpu.insert("clock_mhz".into(), json!(clock.unwrap_or(0.0)));
    cpu.insert("cores".into(), json!(cores));
    // --- kernel ---
    let mut kernel = Map::new();
    let mut napi = Map::new();
    let defaults = crate::model::policy::napi::NapiConfig::default();
    for (key, default) in [
        ("netdev_budget", defaults.netdev_budget as u64),
        ("netdev_budget_usecs", defaults.netdev_budget_usecs as u64),
        ("dev_weight", defaults.dev_weight as u64),
        ("netdev_max_backlog", defaults.netdev_max_backlog as u64),
    ] {
        let path = format!("kernel.napi.{key}");
        match h.sysctl.get(key) {
            Some(s) => {
                napi.insert(key.into(), json!(s.value));
                notes.set(
                    path,
                    format!("{}: sysctl net.core.{key} {}", s.value, at(s)),
                );
            }
            None => notes.missing(
                path,
                format!(
                    "not in {}: the model's default {default} ({})",
                    super::SYSCTL,
                    if key == "netdev_budget_usecs" {
                        "Linux's default is 2 jiffies: 2000 us at HZ 1000, 8000 us at HZ \
                         250; check the host's value"
                    } else {
                        "Linux's default"
                    }
                ),
            ),
        }
    }
    if let Some(s) = h.sysctl.get("netdev_max_backlog") {
        kernel.insert("ipintrq_maxlen".into(), json!(s.value));
        notes.set(
            "kernel.ipintrq_maxlen",
            format!(
                "{}: sysctl net.core.netdev_max_backlog {} (the backlog of netif_rx that the \
                 interrupt policy's handler fills)",
                s.value,
                at(s)
            ),
        );
    }
    for key in ["busy_poll", "busy_read"] {
        if let Some(s) = h.sysctl.get(key) {
            let what = if s.value == 0 {
                "socket busy polling off for sockets that do not set SO_BUSY_POLL".to_string()
            } else {
                format!(
                    "the default busy-poll time of sockets [us]: in the model a property of a \
                     user process (user.{key}_us of a screend process), which the dumps do \
                     not describe; set it there to use {} us",
                    s.value
                )
            };
            notes.set(
                format!("kernel.net.core.{key}"),
                format!("{}: sysctl net.core.{key} {}: {what}", s.value, at(s)),
            );
        }
    }
    match &h.release {
        Some(r) => {
            let spliced = r.value.0 >= 4;
            napi.insert(
                "net_rx_action".into(),
                json!(if spliced { "spliced" } else { "live-list" }),
            );
            notes.set(
                "kernel.napi.net_rx_action",
                format!(
                    "{}: kernel {}.{} {}: {}",
                    if spliced { "spliced" } else { "live-list" },
                    r.value.0,
                    r.value.1,
                    at(r),
                    if spliced {
                        "4.0 on (commit d75b1ade)"
                    } else {
                        "before 4.0"
                    }
                ),
            );
        }
        None => notes.missing(
            "kernel.napi.net_rx_action",
            format!(
                "not in the dumps (no {}): the model's default live-list (Linux 2.6-3.19); \
                 set `spliced` for Linux 4.0 on",
                super::UNAME
            ),
        ),
    }
    kernel.insert("scheduler".into(), json!({ "kind": "cfs" }));
    notes.set(
        "kernel.scheduler",
        format!(
            "Linux's CFS (kernel/sched/fair.c as of v5.10) at its default tunables: latency \
             6 ms, minimum granularity 0.75 ms, wake-up granularity 1 ms, each scaled by 1 + \
             ilog2(min(online CPUs, 8)) for the {cores} online CPUs; not in the dumps (sysctl \
             kernel.sched_*). Linux 6.6 and later schedule by EEVDF, which the model does \
             not have: CFS is the nearest"
        ),
    );
    // --- costs from the profile, or not measured ---
    match profile {
        Some(p) => {
            for path in [
                "kernel.netisr_per_packet",
                "kernel.shared_section",
                "kernel.napi.rps_per_packet",
                "kernel.napi.busy_poll_loop",
            ] {
                let segs: Vec<&str> = path.split('.').collect();
                let Some(v) = p.get(&segs[1..]) else { continue };
                let target = if segs.len() == 3 {
                    &mut napi
                } else {
                    &mut kernel
                };
                target.insert(segs[segs.len() - 1].into(), v.clone());
                notes.set(path, p.note_for(path, path));
            }
        }
        None => {
            kernel.insert("netisr_per_packet".into(), json!({ "ns": 0 }));
            notes.missing(
                "kernel.netisr_per_packet",
                "not measured: 0 ns is a placeholder the loader requires. Fit it with irqsim \
                 fit (--param kernel.netisr_per_packet.ns=LO..HI) or take it from a profile \
                 (import-host --profile MODEL)",
            );
        }
    }
    if !napi.is_empty() {
        kernel.insert("napi".into(), Value::Object(napi));
    }
    // --- nics ---
    let mut nics = Vec::new();
    let mut aff = Map::new();
    for nic in &h.nics {
        let p = format!("nics.{}", nic.name);
        let driver = nic.driver();
        let mut m = Map::new();
        m.insert("name".into(), json!(nic.name));
        if let Some(d) = &nic.info.driver {
            let extra: Vec<String> = [
                ("version", &nic.info.version),
                ("firmware", &nic.info.firmware),
                ("bus", &nic.info.bus),
            ]
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {}", v.value)))
            .collect();
            notes.set(
                format!("{p}.driver_name"),
                format!(
                    "{}: ethtool -i {} {} ({})",
                    d.value,
                    nic.name,
                    at(d),
                    extra.join(", ")
                ),
            );
        }
        let given: Vec<&super::LineRate> = opts
            .line_rates
            .iter()
            .filter(|r| r.iface.as_deref() == Some(nic.name.as_str()))
            .collect();
        let given = match given.as_slice() {
            [] => opts.line_rates.iter().find(|r| r.iface.is_none()),
            [one] => Some(*one),
            _ => {
                f.fault(
                    format!("--line-rate {}=", nic.name),
                    format!("given {} times: give it once", given.len()),
                );
                None
            }
        };
        let file = format!("ethtool-{}", nic.name);
        let dumped = match &nic.speed {
            Some(s) => match s.value {
                Some(x) => format!("ethtool says {x}Mb/s {}", at(s)),
                None => format!("ethtool says `Speed: Unknown!` {}", at(s)),
            },
            None => format!("no speed in the dumps (no {file} or no `Speed:` line in it)"),
        };
        match (given, &nic.speed) {
            (Some(r), _) => {
                m.insert("line_rate_bps".into(), json!(r.bps));
                notes.set(
                    format!("{p}.line_rate_bps"),
                    format!(
                        "{:e}: given with import-host --line-rate {} ({dumped})",
                        r.bps, r.text
                    ),
                );
            }
            (None, Some(s)) if s.value.is_some() => {
                let v = s.value.unwrap_or_default();
                m.insert("line_rate_bps".into(), json!(v as f64 * 1e6));
                notes.set(
                    format!("{p}.line_rate_bps"),
                    format!("{v}e6: ethtool {} `Speed` {}", nic.name, at(s)),
                );
            }
            (None, Some(s)) => f.faults.push(super::dump::Fault {
                file: file.clone(),
                line: Some((s.at.line, s.text.clone())),
                reason: {
                    let driver = nic.driver();
                    let why = match driver {
                        "virtio_net" | "ena" | "gve" | "vmxnet3" => {
                            format!("{driver} is a virtual NIC, which need not report one")
                        }
                        "" => "its link may be down, or a virtual NIC".to_string(),
                        _ => format!("{driver}'s link may be down, or was when dumped"),
                    };
                    format!(
                        "the NIC reports no line rate ({why}); give it with --line-rate \
                         {}=RATE (in bit/s: `10G`, `25G`), as the link, the host's \
                         hypervisor or its cloud provider states it",
                        nic.name
                    )
                },
            }),
            (None, None) => f.fault(
                &file,
                format!(
                    "missing, or no `Speed:` line in it: the line rate is required; write it \
                     with `ethtool {0} > {1}`, or give --line-rate {0}=RATE (in bit/s: `10G`)",
                    nic.name, file
                ),
            ),
        }
        let q = queues(nic, f, &mut notes);
        if let Some(q) = q.filter(|&q| q > 1) {
            m.insert("queues".into(), json!(q));
        }
        if let Some(x) = ring(nic, "RX", &nic.rings.rx, f, &mut notes) {
            m.insert("rx_ring_slots".into(), json!(x));
        }
        if let Some(x) = ring(nic, "TX", &nic.rings.tx, f, &mut notes) {
            m.insert("tx_ring_slots".into(), json!(x));
        }
        m.insert("policy".into(), json!({ "kind": "napi" }));
        notes.set(
            format!("{p}.policy"),
            "napi: a Linux host's receive path. Its weight is the driver's (not in the dumps): \
             the model's default 64, NAPI_POLL_WEIGHT, which mlx5, ixgbe, i40e, ena, gve and \
             vmxnet3 pass (netif_napi_add's default) and virtio_net takes as its napi_weight \
             module parameter's default",
        );
        match linux_driver(driver) {
            Some(l) => {
                m.insert("linux_driver".into(), json!(l));
                notes.set(
                    format!("{p}.linux_driver"),
                    format!(
                        "{l}: the driver ethtool -i names ({driver}); names the NIC's counters \
                         in irqsim run --linux-counters' files"
                    ),
                );
            }
            None => notes.missing(
                format!("{p}.linux_driver"),
                format!(
                    "not written: irqsim has no ethtool -S layout for {driver} (it has \
                     {LINUX_DRIVERS}), so run --linux-counters refuses a model none of whose \
                     NICs names one; set linux_driver to the nearest by hand if its counter \
                     names will do"
                ),
            ),
        }
        if q.is_some_and(|q| q > 1) {
            notes.set(
                format!("{p}.xps"),
                "not in the dumps (/sys/class/net/<if>/queues/tx-<k>/xps_cpus): the model's \
                 default, transmit queue k serves core k mod the cores, as ixgbe and mlx5 set it",
            );
        }
        let (moder, dim) = moderation(nic, driver, &mut notes);
        if let Some(v) = moder {
            m.insert("moderation".into(), v);
        }
        if let Some(v) = dim {
            m.insert("dim".into(), v);
        }
        match h.qlen.as_ref().and_then(|q| q.get(&nic.name)) {
            Some(s) if s.value >= 1 => {
                m.insert("if_snd_maxlen".into(), json!(s.value));
                notes.set(
                    format!("{p}.if_snd_maxlen"),
                    format!("{}: the qdisc's limit, ip link `qlen` {}", s.value, at(s)),
                );
            }
            _ => {
                m.insert("if_snd_maxlen".into(), json!(LINUX_TXQUEUELEN));
                notes.missing(
                    format!("{p}.if_snd_maxlen"),
                    format!(
                        "{LINUX_TXQUEUELEN}: not in the dumps (no {} line with qlen for it): \
                         Linux's default txqueuelen for Ethernet (DEFAULT_TX_QUEUE_LEN, \
                         set by ether_setup, net/ethernet/eth.c)",
                        super::IP_LINK
                    ),
                )
            }
        }
        match profile {
            Some(pr) => {
                let (pname, pnic) = pr.nic(&nic.name);
                for key in ["driver", "tx_completion"] {
                    if let Some(v) = pnic.get(key) {
                        m.insert(key.into(), v.clone());
                        notes.set(
                            format!("{p}.{key}"),
                            pr.note_for(
                                &format!("nics.{pname}.{key}"),
                                &format!("nics.{pname}.{key}"),
                            ),
                        );
                    }
                }
            }
            None => notes.missing(
                format!("{p}.driver"),
                format!(
                    "not measured: no costs. A run in which {} receives is refused until \
                     rx_per_packet, isr_entry and isr_exit are given: fit them with irqsim fit \
                     (a scenario's overrides giving starting values) or take them from a \
                     profile (import-host --profile MODEL)",
                    nic.name
                ),
            ),
        }
        if let Some(q) = q {
            affinities(h, nic, q, &online, &mut aff, &mut notes);
        }
        nics.push(Value::Object(m));
    }
    if h.interrupts.is_none() {
        notes.missing(
            "cpu.irq_affinity",
            format!(
                "not in the dumps (no {}): every vector on the model's round robin",
                super::INTERRUPTS
            ),
        );
    } else if h.affinity.is_none() {
        notes.not_filled.push(format!(
            "cpu.irq_affinity: no {} file: the vectors' CPUs are not known",
            super::AFFINITY
        ));
    }
    if !aff.is_empty() {
        cpu.insert("irq_affinity".into(), Value::Object(aff));
    }
    // --- the whole ---
    let model_name = h
        .lscpu
        .model_name
        .as_ref()
        .map_or("an unnamed CPU".to_string(), |m| m.value.clone());
    let nic_words: Vec<String> = h
        .nics
        .iter()
        .map(|n| format!("{} ({})", n.name, n.driver()))
        .collect();
    notes.set(
        "source",
        format!(
            "irqsim import-host {dir}: the host's own dumps (lscpu, sysctl net.core, ethtool \
             -i/-g/-l/-c per interface{}{}{}{}); each value's note names its file and line",
            if h.nics.iter().any(|n| n.speed.is_some()) {
                ", ethtool"
            } else {
                ""
            },
            if h.interrupts.is_some() {
                ", /proc/interrupts"
            } else {
                ""
            },
            if h.affinity.is_some() {
                ", the vectors' affinity lists"
            } else {
                ""
            },
            if h.qlen.is_some() { ", ip link" } else { "" },
        ),
    );
    notes.set(
        "method",
        match profile {
            Some(p) => format!(
                "Structure and knobs from the dumps; costs from the profile {} (its CPU at {} \
                 MHz; costs in ns are not rescaled to this host's clock, costs in cycles are \
                 converted at it). Check them against this host with irqsim fit",
                p.path, p.config.cpu.clock_mhz
            ),
            None => "Structure and knobs from the dumps; costs not measured (no --profile): \
                     fit them with irqsim fit"
                .to_string(),
        },
    );
    let mut root = Map::new();
    root.insert(
        "description".into(),
        json!(format!(
            "Host imported from {dir}: {model_name}, {cores} cores, Linux NAPI; NICs {}",
            nic_words.join(", ")
        )),
    );
    root.insert("notes".into(), json!(notes.map));
    root.insert("cpu".into(), Value::Object(cpu));
    root.insert("kernel".into(), Value::Object(kernel));
    root.insert("nics".into(), Value::Array(nics));
    (Value::Object(root), notes)
}

#[cfg(test)]
mod tests;
