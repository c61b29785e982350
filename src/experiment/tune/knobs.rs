//! The knobs a user can turn on a Linux host, as the model has them: for each, what it
//! is in Linux, where it sits in a model file, its real range and step (with the driver
//! or kernel source that sets them), the values a search tries, and how it is applied to
//! a model. [`super::commands`] renders the Linux command that sets each one.
//!
//! A knob is a whole number in its own unit (microseconds, frames, a count of channels
//! or cores, 0/1 for a switch); a per-interface knob is set to the same value on every
//! interface of the model that names its Linux driver (`nics[].linux_driver`), as a
//! host-wide tuning does. Sources are Linux 5.11 (the tree read: net/core,
//! drivers/net/ethernet/{mellanox/mlx5,intel/ixgbe}) unless a line says otherwise.
//!
//! | knob | Linux | model field |
//! |---|---|---|
//! | `rx-usecs` | `ethtool -C IF rx-usecs N` | mlx5: `nics[].moderation.cq_period_ns` (N x 1,000); ixgbe: `nics[].moderation.min_interval_ns` (N x 1,000) |
//! | `rx-frames` | `ethtool -C IF rx-frames N` | mlx5: `nics[].moderation.packets` |
//! | `adaptive-rx` | `ethtool -C IF adaptive-rx on/off` | mlx5: `nics[].dim` present or absent |
//! | `combined` | `ethtool -L IF combined N` | `nics[].queues` |
//! | `rx-ring` | `ethtool -G IF rx N` | `nics[].rx_ring_slots` |
//! | `netdev_budget` | `sysctl net.core.netdev_budget` | `kernel.napi.netdev_budget` |
//! | `netdev_budget_usecs` | `sysctl net.core.netdev_budget_usecs` | `kernel.napi.netdev_budget_usecs` |
//! | `dev_weight` | `sysctl net.core.dev_weight` | `kernel.napi.dev_weight` |
//! | `netdev_max_backlog` | `sysctl net.core.netdev_max_backlog` | `kernel.napi.netdev_max_backlog` and `kernel.ipintrq_maxlen` |
//! | `napi_defer_hard_irqs` | `/sys/class/net/IF/napi_defer_hard_irqs` | `nics[].policy.defer_hard_irqs` |
//! | `gro_flush_timeout` | `/sys/class/net/IF/gro_flush_timeout` \[ns\] | `nics[].policy.gro_flush_timeout_ns` |
//! | `threaded` | `/sys/class/net/IF/threaded` | `nics[].policy.threaded` |
//! | `rps` | `/sys/class/net/IF/queues/rx-K/rps_cpus` | `nics[].policy.rps_cpus` (the first N cores) |
//! | `irq-affinity` | `/proc/irq/N/smp_affinity_list` | `cpu.irq_affinity` (queue k of every interface on core k mod N) |
//!
//! Left out, and why: `ethtool -X` indirection weights (the model's RSS table is always
//! the default round robin over the queues, `nics[].rss` has no weights: `combined` is
//! the equal spread over N queues that `ethtool -X IF equal N` would give with N
//! channels); `busy_poll`, `busy_read`, `prefer_busy_poll` and `irq_suspend_timeout`
//! (they act through an application's socket or epoll instance, which only the
//! request/response models have, and the last two have no shell command: setsockopt,
//! EPIOCSPARAMS and netdev-genl's napi-set); `tx-usecs` and `tx-frames` (transmit
//! moderation is modelled, but the questions asked are about receive); Intel's
//! `rx-usecs 1` (ixgbe's dynamic ITR, not modelled for ixgbe).

use crate::config::model::ModelConfig;
use crate::model::nic::LinuxDriver;
use crate::model::nic::moderation::Adaptive;
use crate::model::policy::PolicyConfig;
use serde::{Deserialize, Serialize};

/// Every knob of the catalog, in the order a setting is applied and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KnobId {
    /// `ethtool -C IF rx-usecs N`.
    RxUsecs,
    /// `ethtool -C IF rx-frames N`.
    RxFrames,
    /// `ethtool -C IF adaptive-rx on|off`.
    AdaptiveRx,
    /// `ethtool -L IF combined N`.
    Combined,
    /// `ethtool -G IF rx N`.
    RxRing,
    /// `net.core.netdev_budget`.
    NetdevBudget,
    /// `net.core.netdev_budget_usecs`.
    NetdevBudgetUsecs,
    /// `net.core.dev_weight`.
    DevWeight,
    /// `net.core.netdev_max_backlog`.
    NetdevMaxBacklog,
    /// `/sys/class/net/IF/napi_defer_hard_irqs`.
    NapiDeferHardIrqs,
    /// `/sys/class/net/IF/gro_flush_timeout`.
    GroFlushTimeout,
    /// `/sys/class/net/IF/threaded`.
    Threaded,
    /// `/sys/class/net/IF/queues/rx-K/rps_cpus`.
    Rps,
    /// `/proc/irq/N/smp_affinity_list`.
    IrqAffinity,
}

/// Where a knob is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// On every interface of the model that names its Linux driver.
    Interface,
    /// Once for the host (a sysctl, the interrupt affinities).
    Host,
}

/// One knob: its documentation as data ([`catalog`]).
#[derive(Clone, Debug, Serialize)]
pub struct Knob {
    /// Which knob.
    pub id: KnobId,
    /// Its name on the command line (`--knobs`) and in `tune.json`.
    pub name: &'static str,
    /// What it is in Linux.
    pub linux: &'static str,
    /// Where it sits in a model file.
    pub model_field: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Its real range and step, with the source that sets them.
    pub range: &'static str,
    /// Where it is set.
    pub scope: Scope,
}

/// The catalog, in [`KnobId`] order.
pub fn catalog() -> &'static [Knob] {
    &CATALOG
}

/// The knob called `name` (as [`Knob::name`]).
pub fn by_name(name: &str) -> Option<&'static Knob> {
    CATALOG.iter().find(|k| k.name == name)
}

/// The knob `id`.
pub fn knob(id: KnobId) -> &'static Knob {
    CATALOG
        .iter()
        .find(|k| k.id == id)
        .expect("every KnobId is in the catalog")
}

static CATALOG: [Knob; 14] = [
    Knob {
        id: KnobId::RxUsecs,
        name: "rx-usecs",
        linux: "ethtool -C IF rx-usecs N: the receive interrupt's delay. mlx5: the CQ \
                moderation period (cq_period, restarted by each completion in CQE mode); \
                ixgbe: the interval of the queue's EITR (an interrupt-rate limit), 1 its \
                dynamic ITR (ixgbe_set_coalesce). Setting it turns adaptive-rx off, as a \
                user does for the value to hold",
        model_field: "mlx5: nics[].moderation.cq_period_ns = N x 1000 (0: no moderation, \
                      and then no frame threshold either); ixgbe: \
                      nics[].moderation.min_interval_ns = N x 1000, or for 1 \
                      nics[].moderation.adaptive = \"ixgbe\" (ixgbe_itr.rs)",
        unit: "us",
        range: "mlx5: 0-4095 step 1 (MLX5E_MAX_COAL_TIME = MLX5_MAX_CQ_PERIOD, the 12-bit \
                cq_period: en_ethtool.c L524 and L562, include/linux/mlx5/cq.h L132); \
                ixgbe: 0-1022 step 1 (IXGBE_MAX_EITR 0xFF8 >> 2, ixgbe_ethtool.c \
                L2444-2451; 1 selects the dynamic ITR, ixgbe_update_itr)",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::RxFrames,
        name: "rx-frames",
        linux: "ethtool -C IF rx-frames N: completions that raise the event at once \
                (mlx5's cq_max_count)",
        model_field: "nics[].moderation.packets",
        unit: "frames",
        range: "mlx5: 1-65535 step 1 (MLX5E_MAX_COAL_FRAMES = MLX5_MAX_CQ_COUNT, the \
                16-bit cq_max_count: en_ethtool.c L525 and L569, include/linux/mlx5/cq.h \
                L133); not on ixgbe",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::AdaptiveRx,
        name: "adaptive-rx",
        linux: "ethtool -C IF adaptive-rx on|off: DIM (net_dim) picks the moderation \
                profile from the traffic; on, it replaces rx-usecs and rx-frames",
        model_field: "nics[].dim (present: on)",
        unit: "0 off, 1 on",
        range: "mlx5: off or on (mlx5e_set_coalesce, use_adaptive_rx_coalesce)",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::Combined,
        name: "combined",
        linux: "ethtool -L IF combined N: receive/transmit queue pairs (channels), each \
                with its interrupt vector; RSS spreads flows over them equally",
        model_field: "nics[].queues",
        unit: "channels",
        range: "1 to the cores, step 1: mlx5's max_combined is priv->max_nch, the \
                completion vectors (one per CPU; en_ethtool.c L401), 0 refused (L430); \
                ixgbe at most 63 (IXGBE_MAX_RSS_INDICES_X550, ixgbe.h L371; 16 on \
                82599); the model takes at most 64",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::RxRing,
        name: "rx-ring",
        linux: "ethtool -G IF rx N: receive descriptors per queue",
        model_field: "nics[].rx_ring_slots",
        unit: "descriptors",
        range: "mlx5: a power of two (order_base_2 of the request, en_ethtool.c L358) up \
                to 8192 (MLX5E_PARAMS_MAXIMUM_LOG_RQ_SIZE 0xd, en.h L121); ixgbe: 64-4096 \
                in steps of 8 (IXGBE_MIN_RXD, IXGBE_MAX_RXD, ixgbe.h L50-51; \
                IXGBE_REQ_RX_DESCRIPTOR_MULTIPLE, ixgbe_type.h L2515)",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::NetdevBudget,
        name: "netdev_budget",
        linux: "sysctl net.core.netdev_budget: frames one NET_RX softirq run may take",
        model_field: "kernel.napi.netdev_budget",
        unit: "frames",
        range: "any int, step 1 (proc_dointvec, net/core/sysctl_net_core.c L512-517); \
                the model needs at least 1",
        scope: Scope::Host,
    },
    Knob {
        id: KnobId::NetdevBudgetUsecs,
        name: "netdev_budget_usecs",
        linux: "sysctl net.core.netdev_budget_usecs: time one NET_RX softirq run may take \
                (in jiffies: usecs_to_jiffies)",
        model_field: "kernel.napi.netdev_budget_usecs",
        unit: "us",
        range: "0 and up, step 1 (proc_dointvec_minmax, extra1 SYSCTL_ZERO, \
                sysctl_net_core.c L535-541)",
        scope: Scope::Host,
    },
    Knob {
        id: KnobId::DevWeight,
        name: "dev_weight",
        linux: "sysctl net.core.dev_weight: frames one poll of a CPU's backlog may take \
                (the RPS and netif_rx backlog)",
        model_field: "kernel.napi.dev_weight",
        unit: "frames",
        range: "any int, step 1 (proc_do_dev_weight, sysctl_net_core.c L346-351); the \
                model needs at least 1",
        scope: Scope::Host,
    },
    Knob {
        id: KnobId::NetdevMaxBacklog,
        name: "netdev_max_backlog",
        linux: "sysctl net.core.netdev_max_backlog: the length of each CPU's backlog",
        model_field: "kernel.napi.netdev_max_backlog and kernel.ipintrq_maxlen",
        unit: "frames",
        range: "any int, step 1 (proc_dointvec, sysctl_net_core.c L367-372); the model \
                needs at least 1",
        scope: Scope::Host,
    },
    Knob {
        id: KnobId::NapiDeferHardIrqs,
        name: "napi_defer_hard_irqs",
        linux: "/sys/class/net/IF/napi_defer_hard_irqs (Linux 5.7): empty polls before \
                the interrupt is re-armed, the gro_flush_timeout timer polling meanwhile",
        model_field: "nics[].policy.defer_hard_irqs",
        unit: "polls",
        range: "0 and up, step 1 (net-sysfs.c L386-401, an int)",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::GroFlushTimeout,
        name: "gro_flush_timeout",
        linux: "/sys/class/net/IF/gro_flush_timeout: the timer that polls while \
                napi_defer_hard_irqs keeps the interrupt off",
        model_field: "nics[].policy.gro_flush_timeout_ns",
        unit: "ns",
        range: "0 and up, step 1 ns (net-sysfs.c L369-384, an unsigned long)",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::Threaded,
        name: "threaded",
        linux: "/sys/class/net/IF/threaded (Linux 5.12): NAPI polls in a kernel thread per \
                queue instead of the NET_RX softirq",
        model_field: "nics[].policy.threaded",
        unit: "0 off, 1 on",
        range: "0 or 1 (net-sysfs.c threaded_store, Linux 5.12)",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::Rps,
        name: "rps",
        linux: "/sys/class/net/IF/queues/rx-K/rps_cpus: receive packet steering, each \
                queue's frames steered by flow hash to the CPUs of the mask",
        model_field: "nics[].policy.rps_cpus (the first N cores; 0: RPS off)",
        unit: "cores",
        range: "0 to the cores (a CPU mask, Documentation/networking/scaling.rst); the \
                search tries the first N cores",
        scope: Scope::Interface,
    },
    Knob {
        id: KnobId::IrqAffinity,
        name: "irq-affinity",
        linux: "/proc/irq/N/smp_affinity_list of each queue's vector \
                (Documentation/core-api/irq/irq-affinity.rst)",
        model_field: "cpu.irq_affinity (queue k of every interface on core k mod N)",
        unit: "cores",
        range: "1 to the cores; the search tries queue k on core k mod N",
        scope: Scope::Host,
    },
];

/// The interfaces a per-interface knob is set on: those that name their Linux driver.
pub fn tuned_nics(m: &ModelConfig) -> Vec<usize> {
    (0..m.nics.len())
        .filter(|&i| m.nics[i].linux_driver.is_some())
        .collect()
}

fn napi_nics(m: &ModelConfig) -> bool {
    let t = tuned_nics(m);
    !t.is_empty()
        && t.iter()
            .all(|&i| matches!(m.nics[i].policy, PolicyConfig::Napi(_)))
}

fn drivers(m: &ModelConfig) -> Vec<LinuxDriver> {
    tuned_nics(m)
        .iter()
        .filter_map(|&i| m.nics[i].linux_driver)
        .collect()
}

fn all_drivers(m: &ModelConfig, ok: &[LinuxDriver]) -> bool {
    let d = drivers(m);
    !d.is_empty() && d.iter().all(|x| ok.contains(x))
}

impl Knob {
    /// Whether the model has this knob: `Err` says why not.
    pub fn present(&self, m: &ModelConfig) -> Result<(), String> {
        use KnobId::*;
        if tuned_nics(m).is_empty() {
            return Err("no interface of the model names its Linux driver \
                        (nics[].linux_driver): the model is not a Linux host"
                .into());
        }
        let need_napi = || {
            if napi_nics(m) {
                Ok(())
            } else {
                Err(
                    "needs the `napi` policy on every interface that names its Linux driver"
                        .to_string(),
                )
            }
        };
        let need = |ok: &[LinuxDriver], what: &str| {
            if all_drivers(m, ok) {
                Ok(())
            } else {
                Err(format!("modelled for {what} only"))
            }
        };
        match self.id {
            RxUsecs => {
                need(&[LinuxDriver::Mlx5, LinuxDriver::Ixgbe], "mlx5 and ixgbe")?;
                for &i in &tuned_nics(m) {
                    let n = &m.nics[i];
                    if n.linux_driver == Some(LinuxDriver::Mlx5)
                        && n.moderation
                            .as_ref()
                            .is_none_or(|md| md.cq_period_mode.is_none())
                    {
                        return Err(format!(
                            "interface `{}` (mlx5) has no CQ moderation \
                             (nics[].moderation.cq_period_mode) to set",
                            n.name
                        ));
                    }
                }
                Ok(())
            }
            RxFrames => need(&[LinuxDriver::Mlx5], "mlx5").and_then(|_| self.present_as(m)),
            AdaptiveRx => need(&[LinuxDriver::Mlx5], "mlx5")
                .and_then(|_| need_napi())
                .and_then(|_| knob(RxUsecs).present(m)),
            Combined | RxRing => need(&[LinuxDriver::Mlx5, LinuxDriver::Ixgbe], "mlx5 and ixgbe"),
            NetdevBudget | NetdevBudgetUsecs | DevWeight | NetdevMaxBacklog | NapiDeferHardIrqs
            | GroFlushTimeout | Threaded => need_napi(),
            Rps => {
                need_napi()?;
                if m.cpu.cores < 2 {
                    return Err("needs more than one core".into());
                }
                Ok(())
            }
            IrqAffinity => {
                if m.cpu.cores < 2 {
                    return Err("needs more than one core".into());
                }
                if !m.irq_lines.is_empty() {
                    return Err("the model has shared interrupt lines (irq_lines)".into());
                }
                Ok(())
            }
        }
    }

    fn present_as(&self, m: &ModelConfig) -> Result<(), String> {
        knob(KnobId::RxUsecs).present(m)
    }

    /// Whether `v` is in the knob's real range on this model: `Err` says why not.
    pub fn check(&self, m: &ModelConfig, v: i64) -> Result<(), String> {
        use KnobId::*;
        let cores = i64::from(m.cpu.cores);
        let mlx5 = all_drivers(m, &[LinuxDriver::Mlx5]);
        let within = |lo: i64, hi: i64| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{v}: outside {lo}-{hi} ({})", self.range))
            }
        };
        match self.id {
            RxUsecs if mlx5 => within(0, 4095),
            RxUsecs => within(0, 1022),
            RxFrames => within(1, 65_535),
            AdaptiveRx | Threaded => within(0, 1),
            Combined => within(1, cores.min(64)),
            RxRing if mlx5 => {
                within(64, 8192)?;
                if v.count_ones() != 1 {
                    return Err(format!("{v}: mlx5 takes a power of two"));
                }
                Ok(())
            }
            RxRing => {
                within(64, 4096)?;
                if v % 8 != 0 {
                    return Err(format!("{v}: ixgbe takes a multiple of 8"));
                }
                Ok(())
            }
            NetdevBudget | DevWeight | NetdevMaxBacklog => within(1, i64::from(i32::MAX)),
            NetdevBudgetUsecs | NapiDeferHardIrqs => within(0, i64::from(i32::MAX)),
            GroFlushTimeout => within(0, 1_000_000_000),
            Rps => within(0, cores),
            IrqAffinity => within(1, cores),
        }
    }

    /// The values a search tries by default, inside the real range, in increasing order.
    pub fn grid(&self, m: &ModelConfig) -> Vec<i64> {
        use KnobId::*;
        let cores = i64::from(m.cpu.cores);
        let mlx5 = all_drivers(m, &[LinuxDriver::Mlx5]);
        let v: Vec<i64> = match self.id {
            RxUsecs if mlx5 => vec![0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64],
            RxUsecs => vec![0, 1, 2, 4, 8, 12, 20, 30, 50, 100, 200],
            RxFrames => vec![1, 2, 4, 8, 16, 32, 64, 128, 256],
            AdaptiveRx | Threaded => vec![0, 1],
            Combined => (1..=cores.min(64)).collect(),
            RxRing if mlx5 => vec![256, 512, 1024, 2048, 4096, 8192],
            RxRing => vec![128, 256, 512, 1024, 2048, 4096],
            NetdevBudget => vec![50, 100, 200, 300, 600, 1200],
            NetdevBudgetUsecs => vec![500, 1000, 2000, 4000, 8000],
            DevWeight => vec![16, 32, 64, 128, 256],
            NetdevMaxBacklog => vec![300, 1000, 3000, 10_000],
            NapiDeferHardIrqs => vec![0, 1, 2, 5, 10, 20, 100],
            GroFlushTimeout => vec![0, 2_000, 5_000, 10_000, 20_000, 50_000, 200_000],
            Rps => (0..=cores).collect(),
            IrqAffinity => (1..=cores).collect(),
        };
        v.into_iter()
            .filter(|x| self.check(m, *x).is_ok())
            .collect()
    }

    /// The knob's value on the host as given.
    pub fn current(&self, m: &ModelConfig) -> i64 {
        use KnobId::*;
        let first = tuned_nics(m).first().copied().unwrap_or(0);
        let n = &m.nics[first];
        let napi = match &n.policy {
            PolicyConfig::Napi(p) => Some(p),
            _ => None,
        };
        let md = n.moderation.clone().unwrap_or_default();
        match self.id {
            RxUsecs if n.linux_driver == Some(LinuxDriver::Mlx5) => {
                (md.cq_period_ns / 1000.0).round() as i64
            }
            RxUsecs if md.adaptive == Some(Adaptive::Ixgbe) => 1,
            RxUsecs => (md.min_interval_ns / 1000.0).round() as i64,
            RxFrames => i64::from(md.packets),
            AdaptiveRx => i64::from(n.dim.is_some()),
            Combined => i64::from(n.queues),
            RxRing => i64::from(n.rx_ring_slots),
            NetdevBudget => i64::from(m.kernel.napi.netdev_budget),
            NetdevBudgetUsecs => m.kernel.napi.netdev_budget_usecs.round() as i64,
            DevWeight => i64::from(m.kernel.napi.dev_weight),
            NetdevMaxBacklog => i64::from(m.kernel.napi.netdev_max_backlog),
            NapiDeferHardIrqs => napi.map_or(0, |p| i64::from(p.defer_hard_irqs)),
            GroFlushTimeout => napi.map_or(0, |p| p.gro_flush_timeout_ns.round() as i64),
            Threaded => napi.map_or(0, |p| i64::from(p.threaded)),
            Rps => napi.map_or(0, |p| p.rps_cpus.len() as i64),
            IrqAffinity => i64::from(m.cpu.cores),
        }
    }

    /// Set the knob to `v` on the model (after [`Knob::check`]).
    pub fn apply(&self, m: &mut ModelConfig, v: i64) {
        use KnobId::*;
        let cores = m.cpu.cores;
        let u = |v: i64| u32::try_from(v.max(0)).unwrap_or(u32::MAX);
        if self.scope == Scope::Host {
            match self.id {
                NetdevBudget => m.kernel.napi.netdev_budget = u(v),
                NetdevBudgetUsecs => m.kernel.napi.netdev_budget_usecs = v as f64,
                DevWeight => m.kernel.napi.dev_weight = u(v),
                NetdevMaxBacklog => {
                    m.kernel.napi.netdev_max_backlog = u(v);
                    m.kernel.ipintrq_maxlen = u(v);
                }
                IrqAffinity => {
                    let spread = u16::try_from(v.max(1)).unwrap_or(cores);
                    m.cpu.irq_affinity.clear();
                    for &i in &tuned_nics(m) {
                        let n = &m.nics[i];
                        for q in 0..n.queues {
                            let line = if n.queues > 1 {
                                crate::model::nic::queue_name(&n.name, q)
                            } else {
                                n.name.clone()
                            };
                            m.cpu.irq_affinity.insert(line, q % spread);
                        }
                    }
                }
                _ => unreachable!("host knobs are listed above"),
            }
            return;
        }
        for i in tuned_nics(m) {
            let n = &mut m.nics[i];
            let mlx5 = n.linux_driver == Some(LinuxDriver::Mlx5);
            match self.id {
                RxUsecs => {
                    let md = n.moderation.get_or_insert_with(Default::default);
                    if mlx5 {
                        md.cq_period_ns = v as f64 * 1000.0;
                        if v == 0 {
                            // No period: mlx5 moderation off, an event per completion (a
                            // threshold without a timer would strand a lone frame).
                            md.packets = 0;
                        }
                        n.dim = None;
                    } else if v == 1 {
                        // ixgbe: rx-usecs 1 is the dynamic ITR (ixgbe_set_coalesce).
                        md.adaptive = Some(Adaptive::Ixgbe);
                        md.min_interval_ns = 0.0;
                    } else {
                        md.adaptive = None;
                        md.min_interval_ns = v as f64 * 1000.0;
                    }
                }
                RxFrames => {
                    let md = n.moderation.get_or_insert_with(Default::default);
                    if md.cq_period_ns > 0.0 {
                        md.packets = u(v);
                    }
                    n.dim = None;
                }
                AdaptiveRx => {
                    n.dim = (v != 0).then(|| crate::model::nic::dim::DimConfig {
                        mode: n
                            .moderation
                            .as_ref()
                            .and_then(|md| md.cq_period_mode)
                            .unwrap_or(crate::model::nic::dim::CqPeriodMode::Cqe),
                        ..Default::default()
                    });
                }
                Combined => n.queues = u16::try_from(v.max(1)).unwrap_or(64),
                RxRing => n.rx_ring_slots = u(v),
                NapiDeferHardIrqs | GroFlushTimeout | Threaded | Rps => {
                    if let PolicyConfig::Napi(p) = &mut n.policy {
                        match self.id {
                            NapiDeferHardIrqs => p.defer_hard_irqs = u(v),
                            GroFlushTimeout => p.gro_flush_timeout_ns = v as f64,
                            Threaded => p.threaded = v != 0,
                            _ => p.rps_cpus = (0..u16::try_from(v).unwrap_or(cores)).collect(),
                        }
                    }
                }
                _ => unreachable!("interface knobs are listed above"),
            }
        }
        if self.id == Combined {
            // The vectors of queues no longer there have no affinity to keep.
            let lines: Vec<String> = m
                .nics
                .iter()
                .flat_map(|n| {
                    std::iter::once(n.name.clone())
                        .chain((0..n.queues).map(|q| crate::model::nic::queue_name(&n.name, q)))
                })
                .chain(m.irq_lines.iter().map(|l| l.name.clone()))
                .collect();
            m.cpu.irq_affinity.retain(|k, _| lines.contains(k));
        }
    }
}

/// The knobs a search turns when `--knobs` is not given: the moderation and the channels
/// where the model has them (the questions of issue 56: which rx-usecs, how many queues),
/// then the NAPI budget.
pub fn default_set(m: &ModelConfig) -> Vec<KnobId> {
    [
        KnobId::RxUsecs,
        KnobId::RxFrames,
        KnobId::Combined,
        KnobId::NetdevBudget,
    ]
    .into_iter()
    .filter(|k| knob(*k).present(m).is_ok())
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every knob's grid lies inside its own real range, and the names are unique.
    #[test]
    fn names_unique_and_grids_inside_ranges() {
        let text = include_str!("../../../models/xeon-e5-1650v4-mlx5-linux.json");
        let m: ModelConfig = serde_json::from_str(text).expect("model");
        for (i, k) in catalog().iter().enumerate() {
            assert!(
                catalog()[..i].iter().all(|o| o.name != k.name),
                "{}",
                k.name
            );
            if k.present(&m).is_ok() {
                let g = k.grid(&m);
                assert!(!g.is_empty(), "{}", k.name);
                assert!(g.windows(2).all(|w| w[0] < w[1]), "{}", k.name);
                for v in g {
                    k.check(&m, v).expect("grid value in range");
                }
            }
        }
    }

    /// On the XDP testbed's model (mlx5, NAPI, 6 cores): the knobs present and the
    /// values of the host as given, read off the model file (cq_period 3 us, 32 CQEs,
    /// DIM on, 6 channels, rings of 1024, netdev_budget 300).
    #[test]
    fn the_mlx5_model_as_given() {
        let text = include_str!("../../../models/xeon-e5-1650v4-mlx5-linux.json");
        let m: ModelConfig = serde_json::from_str(text).expect("model");
        let cur = |id| knob(id).current(&m);
        assert_eq!(cur(KnobId::RxUsecs), 3);
        assert_eq!(cur(KnobId::RxFrames), 32);
        assert_eq!(cur(KnobId::AdaptiveRx), 1);
        assert_eq!(cur(KnobId::Combined), 6);
        assert_eq!(cur(KnobId::RxRing), 1024);
        assert_eq!(cur(KnobId::NetdevBudget), 300);
        for k in catalog() {
            assert!(k.present(&m).is_ok(), "{}: {:?}", k.name, k.present(&m));
        }
        // 4097 us is past mlx5's 12-bit period; 1000 descriptors is not a power of two.
        assert!(knob(KnobId::RxUsecs).check(&m, 4096).is_err());
        assert!(knob(KnobId::RxRing).check(&m, 1000).is_err());
        assert!(knob(KnobId::Combined).check(&m, 7).is_err());
    }

    /// Applying a setting changes the fields the catalog names, on both interfaces.
    #[test]
    fn apply_sets_the_named_fields() {
        let text = include_str!("../../../models/xeon-e5-1650v4-mlx5-linux.json");
        let mut m: ModelConfig = serde_json::from_str(text).expect("model");
        knob(KnobId::RxUsecs).apply(&mut m, 16);
        knob(KnobId::Combined).apply(&mut m, 2);
        knob(KnobId::IrqAffinity).apply(&mut m, 2);
        for n in &m.nics {
            assert_eq!(
                n.moderation.as_ref().expect("moderation").cq_period_ns,
                16_000.0
            );
            assert!(n.dim.is_none());
            assert_eq!(n.queues, 2);
        }
        assert_eq!(m.cpu.irq_affinity.get("eth1-q1"), Some(&1));
        assert_eq!(m.cpu.irq_affinity.len(), 4);
    }

    /// ixgbe's rx-usecs 1 is its dynamic ITR, as ixgbe_set_coalesce takes it: the
    /// model's `moderation.adaptive: "ixgbe"`; any other value a fixed interval again.
    #[test]
    fn ixgbe_rx_usecs_1_is_the_dynamic_itr() {
        let text = include_str!("../../../models/xeon-e5-1650v4-10g-linux.json");
        let mut m: ModelConfig = serde_json::from_str(text).expect("model");
        let k = knob(KnobId::RxUsecs);
        assert!(k.present(&m).is_ok());
        assert!(k.check(&m, 1).is_ok());
        assert!(k.grid(&m).contains(&1));
        k.apply(&mut m, 1);
        let md = |m: &ModelConfig| m.nics[0].moderation.clone().expect("moderation");
        assert_eq!(md(&m).adaptive, Some(Adaptive::Ixgbe));
        assert_eq!(md(&m).min_interval_ns, 0.0);
        assert_eq!(k.current(&m), 1);
        k.apply(&mut m, 50);
        assert_eq!(md(&m).adaptive, None);
        assert_eq!(md(&m).min_interval_ns, 50_000.0);
        assert_eq!(k.current(&m), 50);
        assert!(k.check(&m, 1023).is_err());
    }

    /// The FreeBSD models have none of them: no interface names a Linux driver.
    #[test]
    fn a_freebsd_model_has_no_knobs() {
        let text = include_str!("../../../models/p3-448-dc21143-freebsd4.json");
        let m: ModelConfig = serde_json::from_str(text).expect("model");
        assert!(catalog().iter().all(|k| k.present(&m).is_err()));
        assert!(default_set(&m).is_empty());
    }
}
