//! NAPI's parameters as written in a model: per NIC ([`NapiParams`]: weight, threaded,
//! deferral, IRQ suspension, RPS, XDP) and per kernel ([`NapiConfig`], `kernel.napi`:
//! the softirq's budgets, the backlog), with their defaults and range checks.

use super::*;

/// A NAPI NIC's own parameters (`nics[i].policy` with `"kind": "napi"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NapiParams {
    /// Packets one poll of this device may take (default 64).
    #[serde(default = "d_weight")]
    #[schemars(range(min = 1))]
    pub weight: u32,
    /// Poll in the device's own kernel thread, `napi/<dev>`, instead of the NET_RX
    /// softirq (`/sys/class/net/<dev>/threaded`; default false).
    #[serde(default)]
    pub threaded: bool,
    /// napi_defer_hard_irqs: empty polls after which the interrupt is re-enabled, while
    /// the hrtimer of `gro_flush_timeout_ns` polls instead \[polls\] (default 0: off).
    #[serde(default)]
    pub defer_hard_irqs: u32,
    /// gro_flush_timeout: the delay of that hrtimer \[ns\] (default 0: off; with it 0,
    /// `defer_hard_irqs` has no effect, as in the kernel).
    #[serde(default)]
    pub gro_flush_timeout_ns: f64,
    /// irq_suspend_timeout (Linux 6.13, per NAPI instance through netdev-genl's
    /// napi-set; Damato and Karsten, "Suspend IRQs during application busy periods"):
    /// when a process busy-polling in epoll_wait() with SO_PREFER_BUSY_POLL
    /// (`user.busy_poll_us`, `user.prefer_busy_poll`) gets events, napi_suspend_irqs
    /// arms the device's hrtimer for this long, so its interrupt stays masked while the
    /// application keeps finding work; when its busy loop times out without events,
    /// napi_resume_irqs schedules the device, and the `defer_hard_irqs` /
    /// `gro_flush_timeout_ns` behaviour takes over again \[ns\] (default 0: off).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub irq_suspend_timeout_ns: f64,
    /// CPU time of the interrupt in which the device's hrtimer expires and
    /// napi_watchdog schedules its poll (the local APIC timer's entry and exit,
    /// hrtimer_interrupt, napi_watchdog's napi_schedule and the softirq's start),
    /// charged to the poll it schedules \[ns\] (default 0: not modelled). What the
    /// device's own interrupt costs (`driver.isr_entry` + `driver.isr_exit`) is the
    /// natural estimate: the same entry, a handler that only schedules the poll, the
    /// same exit.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub watchdog_irq_ns: f64,
    /// RPS: the cores the device's received frames are steered to by flow hash
    /// (rps_cpus of its receive queues; default empty: RPS off).
    #[serde(default)]
    pub rps_cpus: Vec<u16>,
    /// An XDP program attached to the device, run in its poll on every frame before an
    /// skb exists (`ip link set dev <dev> xdp obj ...`; default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xdp: Option<XdpParams>,
    /// Transmit completions one poll reclaims at most, before its receive work, when
    /// the NIC's transmit completions interrupt (`tx_completion`): more left means the
    /// poll is not done (mlx5's MLX5E_TX_CQ_POLL_BUDGET, 128, the default; ixgbe's
    /// tx_work_limit is 256) \[completions\].
    #[serde(default = "d_tx_work_limit", skip_serializing_if = "is_d_tx_work_limit")]
    #[schemars(range(min = 1))]
    pub tx_work_limit: u32,
}

pub(super) fn d_weight() -> u32 {
    64
}

pub(super) fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

pub(super) fn d_tx_work_limit() -> u32 {
    128
}

pub(super) fn is_d_tx_work_limit(v: &u32) -> bool {
    *v == d_tx_work_limit()
}

impl Default for NapiParams {
    fn default() -> Self {
        NapiParams {
            weight: d_weight(),
            threaded: false,
            defer_hard_irqs: 0,
            gro_flush_timeout_ns: 0.0,
            irq_suspend_timeout_ns: 0.0,
            watchdog_irq_ns: 0.0,
            rps_cpus: Vec::new(),
            xdp: None,
            tx_work_limit: d_tx_work_limit(),
        }
    }
}

impl NapiParams {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("weight", self.weight as u64, 1, "packet");
        p.at_least("tx_work_limit", self.tx_work_limit as u64, 1, "completion");
        for (name, v) in [
            ("gro_flush_timeout_ns", self.gro_flush_timeout_ns),
            ("irq_suspend_timeout_ns", self.irq_suspend_timeout_ns),
            ("watchdog_irq_ns", self.watchdog_irq_ns),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                p.push(name, format!("must be a duration of 0 ns or more, got {v}"));
            }
        }
        let mut seen = self.rps_cpus.clone();
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            p.push("rps_cpus", "lists a core twice (it is a set of cores)".to_string());
        }
        if let Some(x) = &self.xdp {
            p.at("xdp", |p| x.validate(p));
        }
    }
}

/// How net_rx_action walks its poll list.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RxAction {
    /// Linux 2.6 to 3.19: one live list; a device that used its weight goes to its tail
    /// and may be polled again in the same run; the budget is checked before each poll.
    #[default]
    LiveList,
    /// Linux 4.0 on (commit d75b1ade, "net: less interrupt masking in NAPI"): the run
    /// takes the list as it was when it started and polls each device once; devices
    /// that used their weight and devices scheduled meanwhile wait for the next run;
    /// the budget is checked after each poll.
    Spliced,
}

/// System-wide NAPI and softirq parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NapiConfig {
    /// Frames one NET_RX softirq run may handle \[frames\] (default 300).
    #[serde(default = "d_budget")]
    #[schemars(range(min = 1))]
    pub netdev_budget: u32,
    /// Time one NET_RX softirq run may take \[us\] (default 2000).
    #[serde(default = "d_budget_us")]
    pub netdev_budget_usecs: f64,
    /// Times __do_softirq restarts before waking ksoftirqd \[restarts\] (default 10).
    #[serde(default = "d_restart")]
    pub max_restart: u32,
    /// Time __do_softirq may run before waking ksoftirqd \[ns\] (default 2,000,000).
    #[serde(default = "d_restart_ns")]
    pub max_restart_ns: f64,
    /// Frames one poll of a core's RPS backlog may take (net.core.dev_weight) \[frames\]
    /// (default 64).
    #[serde(default = "d_weight")]
    #[schemars(range(min = 1))]
    pub dev_weight: u32,
    /// Length of each core's RPS backlog (net.core.netdev_max_backlog) \[frames\]
    /// (default 1000).
    #[serde(default = "d_backlog")]
    #[schemars(range(min = 1))]
    pub netdev_max_backlog: u32,
    /// CPU cost of steering one frame to a backlog (get_rps_cpu and enqueue_to_backlog),
    /// on the polling core \[cost\] (default 0).
    #[serde(default)]
    pub rps_per_packet: CostParam,
    /// How net_rx_action walks its poll list: `live-list` (Linux 2.6-3.19) or
    /// `spliced` (Linux 4.0 on) (default `live-list`).
    #[serde(default)]
    pub net_rx_action: RxAction,
    /// CPU cost of one round of napi_busy_loop besides the driver's poll: the bottom-half
    /// disable and enable, the socket check, cpu_relax \[cost\] (default 100 ns, an
    /// estimate; more than 0: it paces a loop that finds nothing).
    #[serde(default = "d_busy_loop")]
    pub busy_poll_loop: CostParam,
}

pub(super) fn d_busy_loop() -> CostParam {
    CostParam::ns(100.0)
}

pub(super) fn d_budget() -> u32 {
    300
}
pub(super) fn d_budget_us() -> f64 {
    2000.0
}
pub(super) fn d_restart() -> u32 {
    10
}
pub(super) fn d_restart_ns() -> f64 {
    2_000_000.0
}
pub(super) fn d_backlog() -> u32 {
    1000
}

impl Default for NapiConfig {
    fn default() -> Self {
        NapiConfig {
            netdev_budget: d_budget(),
            netdev_budget_usecs: d_budget_us(),
            max_restart: d_restart(),
            max_restart_ns: d_restart_ns(),
            dev_weight: d_weight(),
            netdev_max_backlog: d_backlog(),
            rps_per_packet: CostParam::default(),
            net_rx_action: RxAction::LiveList,
            busy_poll_loop: d_busy_loop(),
        }
    }
}

impl NapiConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.at_least("netdev_budget", self.netdev_budget as u64, 1, "frame");
        p.period_ns("netdev_budget_usecs", self.netdev_budget_usecs * 1e3);
        p.period_ns("max_restart_ns", self.max_restart_ns);
        p.at_least("dev_weight", self.dev_weight as u64, 1, "frame");
        p.at_least("netdev_max_backlog", self.netdev_max_backlog as u64, 1, "frame");
        if let Err(e) = self.rps_per_packet.check() {
            p.push("rps_per_packet", e);
        }
        match self.busy_poll_loop.check() {
            Err(e) => p.push("busy_poll_loop", e),
            Ok(()) if self.busy_poll_loop.mean_ns(1.0) <= 0.0 => {
                p.push("busy_poll_loop", "must be more than 0 ns")
            }
            Ok(()) => {}
        }
    }
}
