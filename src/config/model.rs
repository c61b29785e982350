//! A hardware/OS profile: what a model file holds, and its validation.
//!
//! [`ModelConfig`] gathers the components' own configurations (each validates its own
//! fields) and checks what only the whole profile can: names unique, roles of the NICs,
//! the lines' chains, the costs a policy needs, what a policy supports. The host
//! ([`crate::host`]) is assembled from it; the scenario loader reads it from a file.

use crate::model::bus::BusConfig;
use crate::model::cpu::CpuConfig;
use crate::model::irq::IrqLineConfig;
use crate::model::kernel::KernelConfig;
use crate::model::nic::NicConfig;
use crate::model::policy::{BuildCtx, PolicyConfig};
use crate::model::sender::SenderConfig;
use crate::model::traffic::FlowConfig;
use crate::model::user::UserConfig;
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A hardware/OS profile: what a model file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The kernel forwarding path and the system-wide policy parameters.
    pub kernel: KernelConfig,
    /// Network interfaces, at least one. On a shared interrupt line their handlers
    /// are called in the order of the line's `chain`.
    #[schemars(length(min = 1))]
    pub nics: Vec<NicConfig>,
    /// Interrupt lines shared by several NICs (default: none, every NIC has a line of
    /// its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub irq_lines: Vec<IrqLineConfig>,
    /// The I/O bus carrying the NICs' DMA (default: none, DMA is a fixed latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus: Option<BusConfig>,
    /// A user process competing for the CPU (none by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserConfig>,
    /// A ttcp-like sending application (none by default; see [`crate::model::sender`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<SenderConfig>,
}

impl ModelConfig {
    /// An XDP program that redirects to an AF_XDP socket needs the socket's application
    /// (a user process of kind `xdpsock`), and that application needs such a program.
    fn validate_xsk(&self, p: &mut Problems) {
        use crate::model::policy::xdp::XdpAction;
        let xsk: Vec<usize> = (self.nics.iter().enumerate())
            .filter(|(_, n)| {
                matches!(&n.policy, PolicyConfig::Napi(a)
                    if a.xdp.as_ref().is_some_and(|x| x.action == XdpAction::Xsk))
            })
            .map(|(i, _)| i)
            .collect();
        let app = matches!(self.user, Some(UserConfig::Xdpsock { .. }));
        match (xsk.first(), app) {
            (Some(i), false) => p.push(
                &format!("nics[{i}].policy.xdp.action"),
                "`xsk` redirects frames to an AF_XDP socket: the model needs its \
                 application, a `user` of kind `xdpsock`"
                    .to_string(),
            ),
            (None, true) => p.push(
                "user.kind",
                "`xdpsock` reads an AF_XDP socket: give a NIC the `napi` policy with an \
                 XDP program whose action is `xsk`"
                    .to_string(),
            ),
            _ => {}
        }
    }

    /// Range and consistency checks; every problem is collected.
    pub fn validate(&self, p: &mut Problems) {
        p.at("cpu", |p| self.cpu.validate(p));
        p.at("kernel", |p| self.kernel.validate(p));
        if let Some(idle) = &self.cpu.idle
            && u64::from(idle.next_timer_us) * u64::from(self.kernel.clock.hz.max(1)) <= 1_000_000
        {
            // A timer within the tick keeps the tick running in 4.18 and is what menu
            // sees as the next timer (tick_nohz_next_event / tick_nohz_get_sleep_length),
            // which the model's constant does not follow.
            p.push(
                "cpu.idle.next_timer_us",
                format!(
                    "must exceed one tick ({} us at kernel.clock.hz {}), got {}",
                    1_000_000 / self.kernel.clock.hz.max(1),
                    self.kernel.clock.hz,
                    idle.next_timer_us
                ),
            );
        }
        if self.cpu.idle.is_some() && self.kernel.clock.hardclock.mean_ns(self.cpu.clock_mhz) > 0.0
        {
            // The idle states' governor follows the tick itself (kept or stopped per
            // idle period, src/model/cpu/idle.rs); a hardclock that falls every tick
            // whatever the governor decided would wake stopped-tick cores and count
            // the tick twice.
            p.push(
                "kernel.clock.hardclock",
                "a clock interrupt cost cannot be combined with `cpu.idle`: the idle \
                 states model the tick (stopped on idle cores, NO_HZ_IDLE); remove one"
                    .to_string(),
            );
        }
        if self
            .cpu
            .idle
            .as_ref()
            .is_some_and(|i| i.cache_refill_ns > 0)
            && !self.irq_lines.is_empty()
        {
            // A shared line's handler folds its devices' steps into one burst and cuts
            // it by the time it has run (src/host/interrupt.rs), which a refill inside
            // the burst would falsify.
            p.push(
                "cpu.idle.cache_refill_ns",
                "a cache refill cannot be combined with shared interrupt lines (`irq_lines`): \
                 the shared handler's folded burst does not tell a refill from its devices' \
                 work; give each NIC a line of its own or set it to 0"
                    .to_string(),
            );
        }
        if self.nics.is_empty() {
            p.push("nics", "a model needs at least one NIC");
        }
        for (i, n) in self.nics.iter().enumerate() {
            p.at("nics", |p| p.at(format!("[{i}]"), |p| n.validate(p)));
            // A NIC's name names files (`ethtool-S-<nic>`): checked here, not after a
            // sweep (see crate::config::names).
            if let Err(e) = crate::config::names::check(&n.name) {
                p.push(&format!("nics[{i}].name"), e.to_string());
            }
            if self.nics[..i].iter().any(|m| m.name == n.name) {
                p.push(
                    &format!("nics[{i}].name"),
                    format!("duplicate NIC name `{}`", n.name),
                );
            }
        }
        // The policies' checks against the rest of the model.
        let policies: Vec<PolicyConfig> = self.nics.iter().map(|n| n.policy.clone()).collect();
        crate::model::policy::validate_model(
            |kind| BuildCtx {
                kind,
                nics: &policies,
                kernel: &self.kernel,
                clock_mhz: self.cpu.clock_mhz,
                timeslice: SimTime::from_ns_f64(self.kernel.timeslice_ns),
                cores: self.cpu.cores as usize,
                queues: &[],
            },
            p,
        );
        if let Some(u) = &self.user {
            p.at("user", |p| u.validate(p));
        }
        self.validate_xsk(p);
        if let Some(b) = &self.bus {
            p.at("bus", |p| b.validate(p));
        }
        if let Some(snd) = &self.sender {
            p.at("sender", |p| {
                snd.validate(p);
                if self.nic_index(&snd.nic).is_none() {
                    p.push("nic", format!("no NIC named `{}`", snd.nic));
                }
            });
        }
        let mut seen: Vec<&str> = Vec::new();
        for (i, l) in self.irq_lines.iter().enumerate() {
            p.at("irq_lines", |p| {
                p.at(format!("[{i}]"), |p| {
                    l.validate(p);
                    for (j, n) in l.chain.iter().enumerate() {
                        if self.nic_index(n).is_none() {
                            p.push(&format!("chain[{j}]"), format!("no NIC named `{n}`"));
                        } else if self.nics.iter().any(|m| m.name == *n && m.queues > 1) {
                            p.push(
                                &format!("chain[{j}]"),
                                format!(
                                    "NIC `{n}` has several queues, each with an MSI-X \
                                     vector of its own: it cannot share a line"
                                ),
                            );
                        } else if seen.contains(&n.as_str()) {
                            p.push(
                                &format!("chain[{j}]"),
                                format!("NIC `{n}` is already on a line"),
                            );
                        } else {
                            seen.push(n);
                        }
                    }
                })
            });
        }
        let names = self.line_names();
        // A queue's name (`<nic>-q<k>`) names its port and its vector: it must not be a
        // NIC's or a shared line's name too.
        for (i, n) in self.nics.iter().enumerate() {
            if n.queues > 1 && n.driver.link_watch.is_some() {
                // The queues are expanded into one device each; dc(4)'s link watch
                // (underrun reset, dc_tick) belongs to the port, whose reset would stop
                // every queue: one watch per queue would reset one ring alone.
                p.push(
                    &format!("nics[{i}].driver.link_watch"),
                    format!(
                        "`{}` has {} queues: a link watch (dc(4)'s chip reset and link \
                         check) is modelled for a NIC with one queue only",
                        n.name, n.queues
                    ),
                );
            }
            for k in (0..n.queues).filter(|_| n.queues > 1) {
                let q = crate::model::nic::queue_name(&n.name, k);
                if self.nics.iter().any(|m| m.name == q)
                    || self.irq_lines.iter().any(|l| l.name == q)
                {
                    p.push(
                        &format!("nics[{i}].queues"),
                        format!(
                            "queue {k} of `{}` is named `{q}`, which is already a NIC's or \
                             a line's name",
                            n.name
                        ),
                    );
                }
            }
            let entries = n
                .rss
                .indirection_entries
                .unwrap_or(crate::model::nic::rss::DEFAULT_ENTRIES);
            if n.queues > 1 && entries < n.queues as usize {
                p.push(
                    &format!("nics[{i}].rss.indirection_entries"),
                    format!(
                        "{entries} entries for {} queues: the queues from {entries} on \
                         would never receive",
                        n.queues
                    ),
                );
            }
        }
        for line in self.cpu.irq_affinity.keys() {
            if !names.contains(line) {
                p.push(
                    &format!("cpu.irq_affinity.{line}"),
                    format!(
                        "no interrupt line named `{line}` (the lines are {})",
                        names.join(", ")
                    ),
                );
            }
        }
        if self.cpu.cores > 1 {
            for (i, n) in self.nics.iter().enumerate() {
                if !n.policy.capabilities().many_cores {
                    p.push(
                        &format!("nics[{i}].policy"),
                        format!(
                            "a host with {} cores models the {} policies only (the others \
                             are modelled on one core)",
                            self.cpu.cores,
                            crate::model::policy::in_words(&PolicyConfig::kinds_that(|c| {
                                c.many_cores
                            }))
                        ),
                    );
                }
            }
        }
    }

    /// The interrupt lines' names in line order: the shared lines, then the line of its
    /// own of each NIC not on one, named after the NIC, or the vector of each queue of a
    /// multi-queue NIC, named after the queue (`<nic>-q<k>`).
    pub fn line_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.irq_lines.iter().map(|l| l.name.clone()).collect();
        for n in &self.nics {
            if n.queues > 1 {
                names.extend((0..n.queues).map(|k| crate::model::nic::queue_name(&n.name, k)));
            } else if !self.irq_lines.iter().any(|l| l.chain.contains(&n.name)) {
                names.push(n.name.clone());
            }
        }
        names
    }

    /// The core each interrupt line is bound to, in line order ([`Self::line_names`]):
    /// `cpu.irq_affinity`'s, or round robin.
    pub fn line_cores(&self) -> Vec<usize> {
        self.line_names()
            .iter()
            .enumerate()
            .map(|(i, name)| match self.cpu.irq_affinity.get(name) {
                Some(&c) => c as usize,
                None => i % self.cpu.cores.max(1) as usize,
            })
            .collect()
    }

    /// The driver costs each NIC's role needs, given the flows of a run: a NIC that
    /// receives frames needs `rx_per_packet`; one whose interrupt handler runs needs
    /// `isr_entry` and `isr_exit`. The handler runs on a receiving NIC with an
    /// interrupt-driven policy, and on a transmitting one (a flow's output, or the
    /// sender's NIC) with transmit-completion interrupts or, with a bus and a policy
    /// whose handler services the chip's underruns (`interrupt`), transmit underruns; and on an interrupt-driven NIC that
    /// moves frames with a statistics-overflow interrupt. Every missing cost is
    /// reported, not only the first.
    pub fn check_roles(&self, flows: &[FlowConfig], p: &mut Problems) {
        for (i, n) in self.nics.iter().enumerate() {
            let from = flows.iter().find(|f| f.from == n.name);
            let to = flows.iter().find(|f| f.to == n.name);
            let sends = to.is_some() || self.sender.as_ref().is_some_and(|s| s.nic == n.name);
            let moves = from.is_some() || sends;
            let why_rx = from.map(|f| format!("it receives flow `{}`", f.display_name()));
            let why_irq = if let Some(w) = why_rx.as_ref().filter(|_| n.policy.interrupt_driven()) {
                Some(format!("{w} with an interrupt-driven policy"))
            } else if sends && n.tx_completion.is_some() {
                Some("its transmit completions interrupt".to_string())
            } else if sends && self.bus.is_some() && n.policy.capabilities().handles_chip_errors {
                Some("a transmit underrun on the bus interrupts".to_string())
            } else if moves
                && n.policy.interrupt_driven()
                && n.stats_counters
                    .as_ref()
                    .is_some_and(|c| c.overflow_interrupt)
            {
                Some("its statistics counters interrupt on overflow".to_string())
            } else {
                None
            };
            let d = &n.driver;
            let mut need = |field: &str, given: bool, why: &Option<String>| {
                if let (false, Some(why)) = (given, why) {
                    p.push(
                        &format!("nics[{i}].driver.{field}"),
                        format!("required: {} uses it ({why})", n.name),
                    );
                }
            };
            need("isr_entry", d.isr_entry.is_some(), &why_irq);
            need("rx_per_packet", d.rx_per_packet.is_some(), &why_rx);
            need("isr_exit", d.isr_exit.is_some(), &why_irq);
        }
    }

    /// Index of the NIC called `name`.
    pub fn nic_index(&self, name: &str) -> Option<usize> {
        self.nics.iter().position(|n| n.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cost::CostParam;

    /// The shipped modern model (idle states, no clock interrupt cost) validates; with a
    /// hardclock cost as well it is refused at `kernel.clock.hardclock`, since the idle
    /// states' governor models the tick (stopped on idle cores) and a clock interrupt
    /// every tick would wake them.
    #[test]
    fn a_clock_interrupt_cost_with_idle_states_is_refused() {
        let mut m = shipped_mlx5();
        let mut p = Problems::new();
        m.validate(&mut p);
        assert!(p.is_empty(), "{:?}", p.list);
        m.kernel.clock.hardclock = CostParam::ns(100.0);
        let mut p = Problems::new();
        m.validate(&mut p);
        assert_eq!(p.list.len(), 1, "{:?}", p.list);
        assert!(
            format!("{:?}", p.list[0]).contains("kernel.clock.hardclock"),
            "{:?}",
            p.list
        );
    }

    /// An XDP program redirecting into an AF_XDP socket needs the socket's
    /// application (a user process of kind `xdpsock`) and the application needs the
    /// program: either alone is refused, naming the field; both together validate.
    #[test]
    fn an_af_xdp_socket_needs_both_its_program_and_its_application() {
        let problems = |xsk: bool, app: bool| {
            let mut m = shipped_mlx5();
            if xsk {
                m.nics[0].policy = serde_json::from_value(serde_json::json!({
                    "kind": "napi",
                    "xdp": { "action": "xsk", "rx": 38, "program": 5 }
                }))
                .expect("policy");
            }
            if app {
                m.user = Some(
                    serde_json::from_value(
                        serde_json::json!({ "kind": "xdpsock", "per_packet": 3 }),
                    )
                    .expect("user"),
                );
            }
            let mut p = Problems::new();
            m.validate(&mut p);
            p.list.into_iter().map(|x| x.path).collect::<Vec<_>>()
        };
        assert!(problems(true, true).is_empty());
        assert!(problems(false, false).is_empty());
        assert_eq!(problems(true, false), ["nics[0].policy.xdp.action"]);
        assert_eq!(problems(false, true), ["user.kind"]);
    }

    /// The shipped modern model as a value, to change in tests.
    fn shipped_mlx5() -> ModelConfig {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/models/xeon-e5-1650v4-mlx5-linux.json"
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// A cache refill needs a state that flushes the caches (else it could never be
    /// paid), is at most 1 ms, and cannot be combined with shared interrupt lines; a
    /// polling state cannot flush the caches (it never leaves C0).
    #[test]
    fn cache_refill_is_refused_where_it_could_not_be_paid_or_counted() {
        let refused = |m: &ModelConfig, field: &str| {
            let mut p = Problems::new();
            m.validate(&mut p);
            assert_eq!(p.list.len(), 1, "{:?}", p.list);
            assert!(format!("{:?}", p.list[0]).contains(field), "{:?}", p.list);
        };
        let mut m = shipped_mlx5();
        for s in &mut m.cpu.idle.as_mut().unwrap().states {
            s.flushes_caches = false;
        }
        refused(&m, "cache_refill_ns");
        let mut m = shipped_mlx5();
        m.cpu.idle.as_mut().unwrap().cache_refill_ns = 1_000_001;
        refused(&m, "cache_refill_ns");
        let mut m = shipped_mlx5();
        m.cpu.idle.as_mut().unwrap().states[0].flushes_caches = true;
        refused(&m, "states[0].flushes_caches");
        let mut m = shipped_mlx5();
        m.irq_lines = serde_json::from_value(serde_json::json!([
            { "name": "irq11", "chain": ["eth0", "eth1"] }
        ]))
        .unwrap();
        let mut p = Problems::new();
        m.validate(&mut p);
        assert!(
            p.list
                .iter()
                .any(|e| format!("{e:?}").contains("cpu.idle.cache_refill_ns")),
            "{:?}",
            p.list
        );
    }

    /// A next timer within one tick (1,000 us at the model's HZ 1000) is refused; one
    /// just beyond it is accepted.
    #[test]
    fn a_next_timer_within_the_tick_is_refused() {
        let mut m = shipped_mlx5();
        m.cpu.idle.as_mut().unwrap().next_timer_us = 1_000;
        let mut p = Problems::new();
        m.validate(&mut p);
        assert_eq!(p.list.len(), 1, "{:?}", p.list);
        assert_eq!(p.list[0].path, "cpu.idle.next_timer_us");
        m.cpu.idle.as_mut().unwrap().next_timer_us = 1_001;
        let mut p = Problems::new();
        m.validate(&mut p);
        assert!(p.is_empty(), "{:?}", p.list);
    }
}
