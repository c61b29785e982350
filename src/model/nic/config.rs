//! A NIC's configuration as a scenario or profile gives it ([`NicConfig`]: ring sizes,
//! line rate, latencies, queues with RSS and XPS, DMA engines, moderation, statistics
//! counters, transmit completions, the driver and its receive policy), and its
//! validation. What the fields model, with their defaults and units, is in each
//! field's doc and in [`crate::model::nic`]'s module doc.

use crate::model::nic::counters::StatsCountersConfig;
use crate::model::nic::dma::NicDmaConfig;
use crate::model::nic::moderation::ModerationConfig;
use crate::model::policy::PolicyConfig;
use crate::model::policy::interrupt::DriverConfig;
use crate::sim::problems::Problems;
use serde::{Deserialize, Serialize};

fn d_queues() -> u16 {
    1
}

fn is_one_queue(q: &u16) -> bool {
    *q == 1
}

fn d_xps() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Receive-side scaling as a driver configures it ([`crate::model::nic::rss`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RssConfig {
    /// Whether UDP ports enter the hash (`ethtool -N <dev> rx-flow-hash udp4 sdfn`);
    /// default false: UDP by its addresses, TCP always by its 4-tuple.
    #[serde(default)]
    pub udp_4tuple: bool,
    /// Indirection table size \[entries\], a power of two (default 128).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indirection_entries: Option<usize>,
}

impl RssConfig {
    fn is_default(&self) -> bool {
        *self == RssConfig::default()
    }
}

/// Line rates a NIC may have [bit/s]: from 1 Mbit/s (1BASE5, IEEE 802.3e, 1987) to
/// 1.6 Tbit/s (IEEE 802.3dj); anything outside is taken for a unit slip.
pub const LINE_RATE_BPS_RANGE: (f64, f64) = (1e6, 1.6e12);

/// The name of queue `k` of NIC `nic` (its port, and its vector's line): `nic-qk`.
pub fn queue_name(nic: &str, k: u16) -> String {
    format!("{nic}-q{k}")
}

/// A Linux network driver whose `ethtool -S` names the Linux-format counter files use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinuxDriver {
    /// Mellanox ConnectX-4/5 (drivers/net/ethernet/mellanox/mlx5/core).
    Mlx5,
    /// Intel 82599/X540/X550 (drivers/net/ethernet/intel/ixgbe).
    Ixgbe,
    /// Intel PRO/1000 8254x (drivers/net/ethernet/intel/e1000): the hardware FreeBSD's
    /// em(4) drives; one queue, a legacy (IO-APIC) interrupt line.
    E1000,
    /// DEC 21x4x "Tulip" (drivers/net/ethernet/dec/tulip): the 21143 FreeBSD's dc(4)
    /// drives; one queue, a legacy line; it has no `ethtool -S` statistics.
    Tulip,
    /// virtio-net, a KVM/QEMU guest's paravirtual NIC (drivers/net/virtio_net.c): an
    /// MSI-X vector per receive virtqueue (`virtio<N>-input.<k>`).
    #[serde(rename = "virtio_net")]
    VirtioNet,
    /// Intel 82599/X540/X550 virtual function, an SR-IOV VF as a virtual machine sees it
    /// (drivers/net/ethernet/intel/ixgbevf): an MSI-X vector per queue pair
    /// (`<nic>-TxRx-<k>`).
    Ixgbevf,
    /// Intel 82575/82576/82580/I350/I210/I211 (drivers/net/ethernet/intel/igb): an
    /// MSI-X vector per queue pair (`<nic>-TxRx-<k>`).
    Igb,
    /// Intel X710/XL710/XXV710 (drivers/net/ethernet/intel/i40e): an MSI-X vector per
    /// queue pair (`i40e-<nic>-TxRx-<k>`).
    I40e,
    /// Intel E810 (drivers/net/ethernet/intel/ice): an MSI-X vector per queue pair
    /// (`ice-<nic>-TxRx-<k>`).
    Ice,
    /// Amazon's Elastic Network Adapter, an EC2 instance's NIC
    /// (drivers/net/ethernet/amazon/ena): an MSI-X vector per queue pair
    /// (`<nic>-Tx-Rx-<k>`).
    Ena,
    /// Google's gVNIC, a Compute Engine instance's NIC (drivers/net/ethernet/google/gve):
    /// an MSI-X vector per notification block (`gve-ntfy-blk<b>@pci:<bus>`).
    Gve,
    /// VMware's paravirtual vmxnet3 (drivers/net/vmxnet3): an MSI-X vector per queue
    /// pair (`<nic>-rxtx-<k>`).
    Vmxnet3,
}

/// NIC parameters as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// Interface name, e.g. `"dc0"`; flows refer to NICs by it.
    pub name: String,
    /// Line rate [bit/s] (default 100e6).
    #[serde(default = "d_line_rate")]
    #[schemars(range(min = LINE_RATE_BPS_RANGE.0, max = LINE_RATE_BPS_RANGE.1))]
    pub line_rate_bps: f64,
    /// Receive descriptors \[slots\] (default 64).
    #[serde(default = "d_rx_slots")]
    #[schemars(range(min = 1))]
    pub rx_ring_slots: u32,
    /// Receive queues (default 1, at most 64): a multi-queue NIC has this many receive
    /// rings of `rx_ring_slots` each, each with an MSI-X vector of its own (never
    /// shared; its line is named `<name>-q<k>`), its own moderation state and its own
    /// instance of the receive policy; each queue is modelled as a device with this
    /// NIC's parameters, so it also has its own statistics counters and, with a bus, DMA
    /// engines and TX FIFO; the RX FIFO (`dma.rx_fifo_bytes`) is the port's, shared by
    /// its queues, and a link check (`driver.link_watch`) is refused. Receive-side scaling (`rss`) picks a frame's
    /// queue from its flow's addresses and ports. The queues are RX/TX queue *pairs*:
    /// each also has its own send queue (`if_snd_maxlen` frames, the `mq` qdisc's child
    /// per queue) and transmit ring of `tx_ring_slots`, and the transmit queues share
    /// the port's one wire, served round robin frame by frame ([`crate::model::nic::tx_arbiter`]).
    /// A forwarded frame's transmit queue is picked by `xps`. Per-queue counters are
    /// named after the queue (`<name>-q<k>.rx_frames`, `<name>-q<k>.tx_frames`).
    #[serde(default = "d_queues", skip_serializing_if = "is_one_queue")]
    #[schemars(range(min = 1, max = 64))]
    pub queues: u16,
    /// Transmit packet steering as the driver sets it up ([`crate::model::nic::xps`]), for a NIC
    /// with several queues: true (default) for ixgbe's map (Linux 4.18), where
    /// transmit queue k serves core k mod the cores and a frame leaves by the queue of
    /// the core that forwarded it. false: no map, so a forwarded frame
    /// leaves by the transmit queue with its receive queue's number (`skb_tx_hash`).
    #[serde(default = "d_xps", skip_serializing_if = "is_true")]
    pub xps: bool,
    /// The Linux driver this NIC stands for, which names its `ethtool -S` counters in
    /// the Linux-format files `irqsim run --linux-counters` writes
    /// ([`crate::results::linux`]): `mlx5` (mlx5_core, ConnectX-4/5), `ixgbe` (Intel
    /// 82599/X540/X550), `e1000` (Intel 8254x, em(4)'s hardware), `tulip` (DEC 21143,
    /// dc(4)'s hardware), `virtio_net` (a KVM guest's virtio-net), `ixgbevf` (an
    /// 82599/X540/X550 virtual function), `igb` (Intel 82576/I350/I210), `i40e` (Intel
    /// X710/XL710), `ice` (Intel E810), `ena` (AWS), `gve` (Google Cloud) or `vmxnet3`
    /// (VMware). Default none: a NIC of a FreeBSD profile, or one whose driver is not
    /// named; a model with no NIC naming one is not a Linux host, and no Linux files are
    /// written for it. Not used by the simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linux_driver: Option<LinuxDriver>,
    /// Set when the host expands a multi-queue NIC: this device is queue `index` of
    /// `of` (not part of a model file).
    #[serde(skip)]
    #[schemars(skip)]
    pub queue_of: Option<(u16, u16)>,
    /// Receive-side scaling of a multi-queue NIC (default: UDP hashed by addresses
    /// only, a 128-entry round-robin indirection table, Microsoft's default key).
    #[serde(default, skip_serializing_if = "RssConfig::is_default")]
    pub rss: RssConfig,
    /// Transmit descriptors \[slots\] (default 256).
    #[serde(default = "d_tx_slots")]
    #[schemars(range(min = 1))]
    pub tx_ring_slots: u32,
    /// From a frame's last bit on the wire to its descriptor being complete and the
    /// interrupt asserted: PHY, receive FIFO and DMA \[ns\] (default 0).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub rx_latency_ns: f64,
    /// From a frame handed to the TX ring to its first bit on the wire: descriptor
    /// fetch, DMA, FIFO threshold \[ns\] (default 0).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub tx_latency_ns: f64,
    /// Period of the transmitter's automatic descriptor poll when idle \[ns\]; 0 means
    /// the driver issues a transmit poll demand for every frame (default 0).
    #[serde(default)]
    #[schemars(extend("anyOf" = [{"const": 0}, {"minimum": 1, "maximum": 1e12}]))]
    pub tx_poll_interval_ns: f64,
    /// Receive policy (default `{"kind": "interrupt"}`).
    #[serde(default)]
    pub policy: PolicyConfig,
    /// Interrupt moderation of the chip (default: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moderation: Option<ModerationConfig>,
    /// Adaptive receive moderation by Linux's DIM (`ethtool -C <dev> adaptive-rx on` on
    /// mlx5; [`crate::model::nic::dim`]): after each NAPI completion the driver samples the queue's
    /// interrupts, frames and bytes, and the profile DIM picks sets the moderation's
    /// frame threshold (`packets`) and its CQ period (`cq_period_ns`, in DIM's `mode`:
    /// restarted by every completion in `cqe` mode, by every event in `eqe` mode).
    /// Needs the `napi` policy (default: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dim: Option<crate::model::nic::dim::DimConfig>,
    /// Statistics counters and their overflow interrupt (default: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats_counters: Option<StatsCountersConfig>,
    /// Driver costs; those of the paths this NIC uses are required (default: none
    /// given).
    #[serde(default)]
    pub driver: DriverConfig,
    /// Depth of this interface's send queue `if_snd` \[frames\] (default: the kernel's
    /// `if_snd_maxlen`; dc(4) sets DC_TX_LIST_CNT - 1 = 255).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub if_snd_maxlen: Option<u32>,
    /// Transmit completions handled by the driver, with their interrupt causes
    /// (default: none, descriptors are reclaimed without CPU cost and raise no
    /// interrupt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_completion: Option<TxCompletionConfig>,
    /// FIFOs and transmit thresholds, used when the model has a `bus` (default: the
    /// defaults of [`NicDmaConfig`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dma: Option<NicDmaConfig>,
}

/// Which transmit completions interrupt, when the driver reclaims descriptors itself
/// (`txeof`, cost `driver.tx_per_packet` per frame, run by the `interrupt` handler's
/// loop when a transmit cause is pending).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TxCompletionConfig {
    /// Every Nth frame asks for an interrupt on completion (TX_OK; de(4)'s
    /// TxWANTINTR on every frame is 1); 0 for none (default 0). At most the TX ring's
    /// length unless `interrupt_on_idle` is set, or the ring would fill with
    /// unreclaimed descriptors first \[frames\].
    #[serde(default)]
    pub interrupt_every: u32,
    /// The transmitter raises "transmit buffer unavailable" (TX_NOBUF, in dc(4)'s
    /// DC_INTRS) each time it finds no more frames to send (default false).
    #[serde(default)]
    pub interrupt_on_idle: bool,
}

fn d_line_rate() -> f64 {
    100e6
}
fn d_rx_slots() -> u32 {
    64
}
fn d_tx_slots() -> u32 {
    256
}

impl NicConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        if self.name.trim().is_empty() {
            p.push("name", "must not be empty");
        }
        let (lo, hi) = LINE_RATE_BPS_RANGE;
        if !(self.line_rate_bps.is_finite() && (lo..=hi).contains(&self.line_rate_bps)) {
            p.push(
                "line_rate_bps",
                format!(
                    "must be {lo:e} to {hi:e} bit/s, the rates Ethernet has had (1BASE5's \
                     1 Mbit/s to 802.3dj's 1.6 Tbit/s): a value outside is a unit slip \
                     (100 Mbit/s is 100e6), got {}",
                    self.line_rate_bps
                ),
            );
        }
        p.at_least("rx_ring_slots", self.rx_ring_slots as u64, 1, "slot");
        p.at_least("tx_ring_slots", self.tx_ring_slots as u64, 1, "slot");
        if !(1..=64).contains(&self.queues) {
            p.push(
                "queues",
                format!("must be between 1 and 64, got {}", self.queues),
            );
        }
        if let Some(e) = self.rss.indirection_entries
            && !(e.is_power_of_two() && (1..=65_536).contains(&e))
        {
            p.push(
                "rss.indirection_entries",
                format!("must be a power of two from 1 to 65536, got {e}"),
            );
        }
        p.time_ns("rx_latency_ns", self.rx_latency_ns);
        p.time_ns("tx_latency_ns", self.tx_latency_ns);
        if self.tx_poll_interval_ns != 0.0 {
            p.period_ns("tx_poll_interval_ns", self.tx_poll_interval_ns);
        }
        p.at("driver", |p| self.driver.validate(p));
        p.at("policy", |p| self.policy.validate(p));
        if let Some(c) = &self.stats_counters {
            p.at("stats_counters", |p| c.validate(p));
        }
        if let Some(d) = &self.dma {
            p.at("dma", |p| d.validate(p));
        }
        if let Some(q) = self.if_snd_maxlen {
            p.at_least("if_snd_maxlen", q as u64, 1, "frame");
        }
        if let Some(t) = &self.tx_completion {
            if t.interrupt_every > self.tx_ring_slots && !t.interrupt_on_idle {
                p.push(
                    "tx_completion.interrupt_every",
                    format!(
                        "{} is more than the {} TX descriptors: the ring would fill before the interrupt (add `interrupt_on_idle` or lower it)",
                        t.interrupt_every, self.tx_ring_slots
                    ),
                );
            }
            if t.interrupt_every == 0 && !t.interrupt_on_idle {
                p.push(
                    "tx_completion",
                    "needs `interrupt_every` > 0 or `interrupt_on_idle`: otherwise descriptors are never reclaimed",
                );
            }
            if !self.policy.reclaims_tx() {
                p.push(
                    "tx_completion",
                    format!(
                        "driver-reclaimed transmit descriptors are modelled for the policies \
                         that reclaim them ({}) only",
                        PolicyConfig::reclaiming_tx().join(", ")
                    ),
                );
            }
        }
        if let Some(m) = &self.moderation {
            p.at("moderation", |p| m.validate(p));
            if !self.policy.interrupt_driven() {
                p.push("moderation", "moderation needs an interrupt-driven policy; this NIC polls with interrupts off");
            }
        }
        if let Some(d) = &self.dim {
            p.at("dim", |p| d.validate(p));
            if !self.policy.capabilities().drives_dim {
                p.push(
                    "dim",
                    format!(
                        "DIM needs a policy that samples it where the driver calls net_dim \
                         (after each NAPI completion, mlx5e_napi_poll): {}",
                        crate::model::policy::in_words(&PolicyConfig::kinds_that(|c| {
                            c.drives_dim
                        }))
                    ),
                );
            }
            if let Some(m) = &self.moderation
                && m.cq_period_ns > 0.0
                && m.cq_period_mode.is_some_and(|mode| mode != d.mode)
            {
                p.push(
                    "dim.mode",
                    "a CQ has one period mode: DIM's `mode` must be the moderation's `cq_period_mode` (mlx5e_alloc_rq takes DIM's mode from the CQ's)",
                );
            }
            if self
                .moderation
                .as_ref()
                .is_some_and(|m| m.adaptive.is_some())
            {
                p.push(
                    "dim",
                    "DIM and `moderation.adaptive` both adapt the interrupt rate: choose one",
                );
            }
        }
    }
}
