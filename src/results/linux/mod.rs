//! Linux-format counters of a load point: the files a Linux user reads after a test,
//! `/proc/net/softnet_stat`, `/proc/interrupts`, `/proc/net/dev` and `ethtool -S <nic>`,
//! each in the exact layout the kernel or the tool prints, filled from the point's
//! counters and drops in `results.json`.
//!
//! `irqsim run SCENARIO --linux-counters` writes them under the output directory as
//! `linux/<variant>/<point>/softnet_stat`, `interrupts`, `net-dev` and
//! `ethtool-S-<nic>` ([`LinuxHost::files`]; the writing is
//! [`crate::results::output::write_linux`]).
//!
//! # Which hosts
//!
//! A model is a Linux host when at least one of its NICs names its Linux driver
//! (`nics[].linux_driver`: `mlx5`, `ixgbe`, `e1000`, `tulip` -- the Linux driver of the
//! 21143 that FreeBSD's dc(4) drives --, `virtio_net`, `ixgbevf`, `igb`, `i40e`, `ice`, `ena`,
//! `gve` or `vmxnet3`); the FreeBSD profiles (dc, xl, de, ed, bge, em)
//! name none, and no Linux files are written for them: they model FreeBSD kernels
//! (netisr, ipintrq, spl), whose counters are netstat's and vmstat's, not these. A
//! model of a Linux host with an 8254x or a 21143 names `e1000` or `tulip`. Refused (an [`LinuxHostError`], exit 2 before
//! anything is simulated): a model that is not a Linux host, a model with a sending
//! application (its frames' sizes are not in the results), request/response scenarios,
//! and a NIC receiving or sending flows of different or random frame sizes (the byte
//! counts are frames x size, which needs one size per NIC and direction).
//!
//! # The values
//!
//! Every value is a counter of the whole run of that point: from the first frame of the
//! load to the end of the drain (`duration_s + drain_s`), as a counter read before and
//! after a test and subtracted. With several replications it is the mean over them, as
//! `results.json` holds it, rounded to the nearest whole number. A value the kernel
//! prints as a 32-bit unsigned (`%08x`, `%10u`) is written modulo 2^32, as the
//! kernel's wraps. What is not modelled is written as 0, as a host where it never
//! happened would print it; each file's module says which.
//!
//! # The files
//!
//! One module each, with its layout and its fields: `softnet_stat`, `interrupts`,
//! `net_dev` and `ethtool`.

use crate::config::model::ModelConfig;
use crate::config::scenario::LoadUnit;
use crate::model::nic::LinuxDriver;
use crate::model::policy::PolicyConfig;
use crate::model::traffic::{FlowConfig, FrameSize};
use crate::results::{FlowResult, PointResult};
use std::collections::BTreeMap;
use std::fmt::Write;

mod ethtool;
mod interrupts;
mod net_dev;
mod softnet_stat;

/// Whether `model` is a Linux host: at least one of its NICs names its Linux driver
/// (`nics[].linux_driver`; see "Which hosts").
pub fn is_linux_host(model: &ModelConfig) -> bool {
    model.nics.iter().any(|n| n.linux_driver.is_some())
}

/// Why the Linux files cannot be written for a model and its flows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinuxHostError {
    /// No NIC names its Linux driver.
    #[error(
        "the model is not a Linux host: no NIC names its Linux driver (`nics[].linux_driver`, \
         mlx5, ixgbe, e1000, tulip, virtio_net, ixgbevf, igb, i40e, ice, ena, gve or vmxnet3), \
         so it \
         has no Linux counters to write"
    )]
    NotLinux,
    /// A sending application's frames are not in the flows' sizes.
    #[error(
        "the model has a sending application (`sender`), whose frames' bytes the results \
         do not hold: the Linux counters are not written for it"
    )]
    Sender,
    /// A request/response sweep: its responses are the peer's, not the flows'.
    #[error(
        "a request/response scenario (`load.unit` `outstanding`): the Linux counters are \
         written for flows of frames, not transactions"
    )]
    RequestResponse,
    /// Frames of several or random sizes through one NIC in one direction.
    #[error(
        "NIC `{nic}` {dir} frames of more than one size (flow `{flow}`): /proc/net/dev's \
         bytes are frames x size, which needs one fixed frame size per NIC and direction"
    )]
    FrameSizes {
        /// The NIC.
        nic: String,
        /// `receives` or `sends`.
        dir: &'static str,
        /// The flow that breaks the rule.
        flow: String,
    },
}

/// A NIC as the Linux files show it.
#[derive(Clone, Debug)]
struct Nic {
    name: String,
    queues: u16,
    driver: Option<LinuxDriver>,
    /// Bytes Linux counts per received frame (frame size less the FCS), if it receives.
    rx_bytes: u64,
    /// Bytes per sent frame, if it sends.
    tx_bytes: u64,
    /// The received frame's size with its FCS, as a NIC's octet counters count it.
    rx_wire: u64,
    /// The sent frame's size with its FCS.
    tx_wire: u64,
}

impl Nic {
    /// The counter prefix of queue `k`: `<nic>-q<k>`, or `<nic>` for a single queue.
    fn queue(&self, k: u16) -> String {
        if self.queues > 1 {
            crate::model::nic::queue_name(&self.name, k)
        } else {
            self.name.clone()
        }
    }
}

/// An interrupt vector: a row of /proc/interrupts.
#[derive(Clone, Debug)]
struct Vector {
    /// The counter of its interrupts.
    counter: String,
    /// The core it is bound to.
    core: usize,
    /// Its index among its NIC's vectors (0 for a line).
    hwirq: usize,
    /// A legacy PCI INTx line through the IO-APIC, not an MSI-X vector.
    legacy: bool,
    /// The names its handlers were requested by.
    actions: Vec<String>,
}

/// The Linux hosts of an experiment's variants, in variant order, or the first reason
/// one has no Linux files, with its variant's name.
pub fn hosts(
    exp: &crate::config::scenario::Experiment,
) -> Result<Vec<LinuxHost>, (String, LinuxHostError)> {
    exp.variants
        .iter()
        .map(|v| {
            if exp.load_unit == LoadUnit::Outstanding {
                return Err((v.name.clone(), LinuxHostError::RequestResponse));
            }
            LinuxHost::new(&v.model, &v.flows).map_err(|e| (v.name.clone(), e))
        })
        .collect()
}

/// Every Linux file of a sweep's results, as (path under `linux/`, bytes):
/// `<variant>/<point>/<file>` for each variant of `exp` (with its host from [`hosts`])
/// and each of its points in `results`, in sweep order.
pub fn sweep_files(
    exp: &crate::config::scenario::Experiment,
    hosts: &[LinuxHost],
    results: &crate::results::Results,
) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (v, host) in exp.variants.iter().zip(hosts) {
        let points = results.points.iter().filter(|p| p.variant == v.name);
        for (i, (lp, p)) in v.points.iter().zip(points).enumerate() {
            let dir = point_dir(i, v.points.len(), lp.load, exp.load_unit);
            for (name, text) in host.files(p) {
                out.push((format!("{}/{dir}/{name}", v.name), text.into_bytes()));
            }
        }
    }
    out
}

/// What the Linux files of a variant need from its model and flows: the cores, the
/// NICs with their drivers and frame sizes, the vectors and where the flows enter.
#[derive(Clone, Debug)]
pub struct LinuxHost {
    cpus: usize,
    nics: Vec<Nic>,
    vectors: Vec<Vector>,
    /// The index in `nics` of each flow's input NIC, in flow order.
    flow_from: Vec<Option<usize>>,
}

/// The Linux FCS the drivers strip: bytes counted per frame are its size less 4.
const FCS_BYTES: u64 = 4;

impl LinuxHost {
    /// The host of `model` carrying `flows`, or why it has no Linux files.
    pub fn new(model: &ModelConfig, flows: &[FlowConfig]) -> Result<LinuxHost, LinuxHostError> {
        if !is_linux_host(model) {
            return Err(LinuxHostError::NotLinux);
        }
        if model.sender.is_some() {
            return Err(LinuxHostError::Sender);
        }
        let size = |nic: &str, dir: &'static str, pick: fn(&FlowConfig) -> &str| {
            let mut one: Option<u32> = None;
            for f in flows.iter().filter(|f| pick(f) == nic) {
                match (&f.frame_bytes, one) {
                    (FrameSize::Fixed(b), None) => one = Some(*b),
                    (FrameSize::Fixed(b), Some(o)) if *b == o => {}
                    _ => {
                        return Err(LinuxHostError::FrameSizes {
                            nic: nic.to_string(),
                            dir,
                            flow: f.display_name(),
                        });
                    }
                }
            }
            Ok(one.map_or(0, u64::from))
        };
        let mut nics = Vec::new();
        // A port a DPDK application owns is bound to vfio-pci, not a kernel netdev: it
        // has no row, file or vector here.
        for n in model
            .nics
            .iter()
            .filter(|n| !matches!(n.policy, PolicyConfig::Dpdk(_)))
        {
            let rx_wire = size(&n.name, "receives", |f| &f.from)?;
            let tx_wire = size(&n.name, "sends", |f| &f.to)?;
            nics.push(Nic {
                name: n.name.clone(),
                queues: n.queues.max(1),
                driver: n.linux_driver,
                rx_bytes: rx_wire.saturating_sub(FCS_BYTES),
                tx_bytes: tx_wire.saturating_sub(FCS_BYTES),
                rx_wire,
                tx_wire,
            });
        }
        let cores = model.line_cores();
        let mut vectors = Vec::new();
        for (i, name) in model.line_names().iter().enumerate() {
            let core = cores.get(i).copied().unwrap_or(0);
            if let Some(l) = model.irq_lines.iter().find(|l| &l.name == name) {
                vectors.push(Vector {
                    counter: format!("{name}.passes"),
                    core,
                    hwirq: 0,
                    legacy: true,
                    actions: l.chain.clone(),
                });
                continue;
            }
            // A NIC's own line, or one of its queues' vectors.
            let Some((nic, k)) = nics
                .iter()
                .find_map(|n| (0..n.queues).find(|&k| n.queue(k) == *name).map(|k| (n, k)))
            else {
                continue;
            };
            let action = match nic.driver {
                Some(LinuxDriver::Ixgbe) => format!("{}-TxRx-{k}", nic.name),
                Some(LinuxDriver::Mlx5) => format!("mlx5_comp{k}@pci:{}", nic.name),
                Some(LinuxDriver::E1000 | LinuxDriver::Tulip) => nic.name.clone(),
                // virtio_pci's vp_find_vqs_msix names a virtqueue's vector `%s-%s`, the
                // device's name (`virtio<N>`, N its index on the virtio bus) and the
                // queue's (`input.%u`, virtnet_find_vqs): N is the NIC's index among the
                // model's NICs (the model has no virtio bus).
                Some(LinuxDriver::VirtioNet) => {
                    let n = nics.iter().position(|x| x.name == nic.name).unwrap_or(0);
                    format!("virtio{n}-input.{k}")
                }
                // ixgbevf_request_msix_irqs: `%s-TxRx-%u`, as ixgbe.
                Some(LinuxDriver::Ixgbevf) => format!("{}-TxRx-{k}", nic.name),
                // igb_request_msix: `%s-TxRx-%u`, the netdev's name and the queue.
                Some(LinuxDriver::Igb) => format!("{}-TxRx-{k}", nic.name),
                // i40e_vsi_request_irq_msix and ice_vsi_req_irq_msix: `%s-%s-%d` of
                // the basename `<driver>-<netdev>` (i40e_vsi_open's and
                // ice_vsi_open's `%s-%s` of dev_driver_string and the netdev's name),
                // `TxRx` and the queue.
                Some(LinuxDriver::I40e) => format!("i40e-{}-TxRx-{k}", nic.name),
                Some(LinuxDriver::Ice) => format!("ice-{}-TxRx-{k}", nic.name),
                // ena_setup_io_intr: `%s-Tx-Rx-%d`, the netdev's name and the queue.
                Some(LinuxDriver::Ena) => format!("{}-Tx-Rx-{k}", nic.name),
                // gve_alloc_notify_blocks: `gve-ntfy-blk%d@pci:%s`, the block and the
                // PCI address (the NIC's name here, as for mlx5). The first half of
                // the blocks serve the transmit queues (gve_rx_idx_to_ntfy: blocks /
                // 2 + k): the model has as many transmit queues as receive queues, so
                // receive queue k's block is queues + k.
                Some(LinuxDriver::Gve) => {
                    format!("gve-ntfy-blk{}@pci:{}", nic.queues + k, nic.name)
                }
                // vmxnet3_request_irqs: with as many receive as transmit queues
                // (VMXNET3_INTR_BUDDYSHARE) a pair shares vector k, `%s-rxtx-%d`.
                Some(LinuxDriver::Vmxnet3) => format!("{}-rxtx-{k}", nic.name),
                None => name.clone(),
            };
            vectors.push(Vector {
                counter: format!("{name}.interrupts"),
                core,
                hwirq: usize::from(k),
                legacy: nic.queues == 1
                    && matches!(nic.driver, Some(LinuxDriver::E1000 | LinuxDriver::Tulip)),
                actions: vec![action],
            });
        }
        let flow_from = flows
            .iter()
            .map(|f| nics.iter().position(|n| n.name == f.from))
            .collect();
        Ok(LinuxHost {
            cpus: model.cpu.cores.max(1) as usize,
            nics,
            vectors,
            flow_from,
        })
    }

    /// The files of point `p`, by name, in the order written: `softnet_stat` (when the
    /// run has per-core softnet counters), `interrupts`, `net-dev`, and
    /// `ethtool-S-<nic>` per NIC that names a driver with statistics (not tulip).
    pub fn files(&self, p: &PointResult) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(s) = self.softnet_stat(p) {
            out.push(("softnet_stat".to_string(), s));
        }
        out.push(("interrupts".to_string(), self.interrupts(p)));
        out.push(("net-dev".to_string(), self.net_dev(p)));
        for n in self.nics.iter().filter(|n| n.driver.is_some()) {
            if let Some(s) = self.ethtool_s(&n.name, p) {
                out.push((format!("ethtool-S-{}", n.name), s));
            }
        }
        out
    }

    /// NIC `i`'s packets and drops at point `p`.
    fn nic_stats(&self, i: usize, p: &PointResult) -> NicStats {
        let n = &self.nics[i];
        let c = &p.figures.counters;
        let rx_packets = (0..n.queues)
            .map(|k| {
                let q = n.queue(k);
                match n.driver {
                    Some(LinuxDriver::Mlx5) => mlx5_rx_packets(c, &q),
                    _ => count(c, &format!("{q}.rx_frames")),
                }
            })
            .sum();
        let tx_packets = (0..n.queues)
            .map(|k| count(c, &format!("{}.tx_frames", n.queue(k))))
            .sum();
        let flows: Vec<&FlowResult> = p
            .figures
            .flows
            .iter()
            .zip(&self.flow_from)
            .filter(|(_, from)| **from == Some(i))
            .map(|(f, _)| f)
            .collect();
        let drops = |site: fn(&FlowResult) -> f64| whole(flows.iter().map(|f| site(f)).sum());
        NicStats {
            rx_packets,
            tx_packets,
            ring_drops: drops(|f| f.drops.rx_ring),
            fifo_drops: drops(|f| f.drops.rx_fifo),
            backlog_drops: drops(|f| f.drops.ipintrq),
        }
    }
}

/// The directory of load point `i` of a variant's `n`: its index, zero-padded to the
/// width of `n - 1`, and its load in the scenario's unit, as the scenario gives it:
/// `00-124000pps`, `03-27.5pct`, `2-8outstanding`. Letters, digits, `-` and `.` only.
pub fn point_dir(i: usize, n: usize, load: f64, unit: LoadUnit) -> String {
    let width = n.saturating_sub(1).to_string().len();
    let unit = match unit {
        LoadUnit::Percent => "pct",
        LoadUnit::Pps => "pps",
        LoadUnit::Outstanding => "outstanding",
    };
    format!("{i:0width$}-{load}{unit}")
}

/// A NIC's figures the files share.
struct NicStats {
    /// Received, as the driver counts them.
    rx_packets: u64,
    /// Transmissions started.
    tx_packets: u64,
    /// Refused for want of a descriptor (`drops.rx_ring` of the flows entering it).
    ring_drops: u64,
    /// Lost to the receive FIFO's overflow (`drops.rx_fifo`).
    fifo_drops: u64,
    /// Refused by a full backlog (`drops.ipintrq`).
    backlog_drops: u64,
}

/// igb's (MPC, RQDPC summed over the queues) of NIC `n`: igb sets SRRCTL.DROP_EN only
/// with several queues (igb_setup_srrctl), so with one a frame with no descriptor waits
/// in the FIFO and is counted by MPC when it overflows (as e1000's), and with several
/// it is dropped at once and counted in its queue's RQDPC.
fn igb_drops(n: &Nic, st: &NicStats) -> (u64, u64) {
    if n.queues > 1 {
        (st.fifo_drops, st.ring_drops)
    } else {
        (st.ring_drops + st.fifo_drops, 0)
    }
}

/// The XDP verdict counters mlx5 keeps per queue, in en_stats.c's order.
const XDP_VERDICTS: [&str; 3] = ["rx_xdp_drop", "rx_xdp_redirect", "rx_xdp_tx_xmit"];

/// /proc/net/dev's two header lines (dev_seq_show).
pub const NET_DEV_HEADER: &str = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n";

/// Queue `q`'s received frames as mlx5 counts them: placed in the ring, less those an
/// XDP program consumed (they never become an skb).
fn mlx5_rx_packets(c: &BTreeMap<String, f64>, q: &str) -> u64 {
    let consumed: u64 = XDP_VERDICTS
        .iter()
        .map(|x| count(c, &format!("{q}.{x}")))
        .sum();
    count(c, &format!("{q}.rx_frames")).saturating_sub(consumed)
}

/// A counter as a whole number (0 when absent).
fn count(c: &BTreeMap<String, f64>, key: &str) -> u64 {
    c.get(key).copied().map_or(0, whole)
}

/// A mean over replications rounded to the nearest whole number (never negative).
fn whole(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x.round() as u64
    } else {
        0
    }
}

/// A value as the kernel's 32-bit unsigned counters print it.
fn wrap32(x: u64) -> u64 {
    x & 0xffff_ffff
}

#[cfg(test)]
mod tests;
