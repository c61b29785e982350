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
mod tests {
    use super::*;
    use crate::results::PointFigures;

    /// A two-core host with an ixgbe port of two queues (eth0) and an mlx5 one (eth1),
    /// one 64-byte flow from eth0 to eth1.
    fn host() -> LinuxHost {
        let model: ModelConfig = serde_json::from_value(serde_json::json!({
            "cpu": { "clock_mhz": 1000, "cores": 2 },
            "kernel": { "netisr_per_packet": { "ns": 100 } },
            "nics": [
                { "name": "eth0", "queues": 2, "linux_driver": "ixgbe",
                  "policy": { "kind": "napi" } },
                { "name": "eth1", "queues": 2, "linux_driver": "mlx5",
                  "policy": { "kind": "napi" } }
            ]
        }))
        .expect("model");
        let flows: Vec<FlowConfig> = serde_json::from_value(serde_json::json!([
            { "name": "f0", "from": "eth0", "to": "eth1", "frame_bytes": 64 }
        ]))
        .expect("flows");
        LinuxHost::new(&model, &flows).expect("a Linux host")
    }

    fn point(counters: &[(&str, f64)]) -> PointResult {
        let mut f0 = FlowResult {
            name: "f0".into(),
            ..FlowResult::default()
        };
        f0.drops.rx_ring = 7.0;
        f0.drops.rx_fifo = 2.0;
        f0.drops.ipintrq = 3.0;
        PointResult {
            variant: "default".into(),
            load_pct: 10.0,
            offered_pps: 1000.0,
            outstanding: None,
            replications: 1,
            figures: PointFigures {
                flows: vec![f0],
                counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
                ..PointFigures::default()
            },
            ci95: None,
        }
    }

    #[test]
    fn softnet_stat_is_fifteen_hex_fields_per_cpu() {
        // Expected: softnet_seq_show's "%08x" x 15 (net/core/net-procfs.c at 0e0939c0):
        // processed, dropped, time_squeeze, six zeros, received_rps, flow_limit_count,
        // backlog_len, the CPU, input_qlen, process_qlen.
        let p = point(&[
            ("cpu0.softnet.processed", 4660.0),
            ("cpu0.softnet.dropped", 1.0),
            ("cpu0.softnet.time_squeeze", 2.0),
            ("cpu0.softnet.received_rps", 3.0),
            ("cpu1.softnet.processed", 4294967296.0 + 17.0),
        ]);
        let s = host().softnet_stat(&p).expect("softnet counters");
        assert_eq!(
            s,
            "00001234 00000001 00000002 00000000 00000000 00000000 00000000 00000000 \
             00000000 00000003 00000000 00000000 00000000 00000000 00000000\n\
             00000011 00000000 00000000 00000000 00000000 00000000 00000000 00000000 \
             00000000 00000000 00000000 00000000 00000001 00000000 00000000\n"
        );
        assert!(host().softnet_stat(&point(&[])).is_none());
    }

    #[test]
    fn interrupts_has_the_kernels_columns() {
        // Expected: show_interrupts (kernel/irq/proc.c): prec 3, so 11 spaces and
        // "CPU%-8d" per CPU; a row "%*d: ", "%10u " per CPU, " %8s" chip, " %*lu"
        // hwirq, "-%-8s" "edge", "  %s" action. Round robin puts line i on core i % 2.
        let p = point(&[("eth0-q0.interrupts", 5.0), ("eth1-q1.interrupts", 9.0)]);
        let s = host().interrupts(&p);
        let want = "           CPU0       CPU1       \n\
                    \x20 0:          5          0   PCI-MSI   0-edge      eth0-TxRx-0\n\
                    \x20 1:          0          0   PCI-MSI   1-edge      eth0-TxRx-1\n\
                    \x20 2:          0          0   PCI-MSI   0-edge      mlx5_comp0@pci:eth1\n\
                    \x20 3:          0          9   PCI-MSI   1-edge      mlx5_comp1@pci:eth1\n";
        assert_eq!(s, want);
    }

    #[test]
    fn net_dev_has_the_kernels_header_and_widths() {
        // Expected: dev_seq_show's header and dev_seq_printf_stats's widths; rx bytes
        // 60 a frame (64 less the FCS); the drop column: ixgbe's rx_dropped (3 backlog
        // drops) + rx_missed_errors (2 FIFO drops), not its 7 ring drops.
        let p = point(&[
            ("eth0-q0.rx_frames", 10.0),
            ("eth0-q1.rx_frames", 20.0),
            ("eth1-q0.tx_frames", 12.0),
            ("eth1-q1.tx_frames", 13.0),
        ]);
        let s = host().net_dev(&p);
        let want = format!(
            "{NET_DEV_HEADER}\
             \x20 eth0:    1800      30    0    5    0     0          0         0        0       0    0    0    0     0       0          0\n\
             \x20 eth1:       0       0    0    0    0     0          0         0     1500      25    0    0    0     0       0          0\n"
        );
        assert_eq!(s, want);
    }

    #[test]
    fn ethtool_names_are_the_drivers() {
        // Expected: ethtool's "NIC statistics:" and "     %s: %llu"; ixgbe's names
        // (ixgbe_gstrings_stats, then tx queues before rx queues); mlx5's (en_stats.c).
        let p = point(&[
            ("eth0-q0.rx_frames", 10.0),
            ("eth0-q1.rx_frames", 20.0),
            ("eth1-q0.tx_frames", 12.0),
            ("eth1-q1.tx_frames", 13.0),
            ("eth1-q1.interrupts", 4.0),
        ]);
        let h = host();
        assert_eq!(
            h.ethtool_s("eth0", &p).expect("ixgbe"),
            "NIC statistics:\n     rx_packets: 30\n     tx_packets: 0\n     rx_bytes: 1800\n     \
             tx_bytes: 0\n     rx_dropped: 3\n     rx_missed_errors: 2\n     \
             rx_no_dma_resources: 7\n     tx_queue_0_packets: 0\n     tx_queue_0_bytes: 0\n     \
             tx_queue_1_packets: 0\n     tx_queue_1_bytes: 0\n     rx_queue_0_packets: 10\n     \
             rx_queue_0_bytes: 600\n     rx_queue_1_packets: 20\n     rx_queue_1_bytes: 1200\n"
        );
        let m = h.ethtool_s("eth1", &p).expect("mlx5");
        assert!(m.starts_with("NIC statistics:\n     rx_packets: 0\n     rx_bytes: 0\n     tx_packets: 25\n     tx_bytes: 1500\n"));
        assert!(m.contains("\n     rx_out_of_buffer: 0\n     rx_discards_phy: 0\n     ch0_events: 0\n     ch1_events: 4\n"));
        assert!(m.ends_with("     tx1_packets: 13\n     tx1_bytes: 780\n"));
        assert!(h.ethtool_s("eth9", &p).is_none());
    }

    #[test]
    fn point_directories_sort_and_say_the_load() {
        assert_eq!(point_dir(0, 9, 124000.0, LoadUnit::Pps), "0-124000pps");
        assert_eq!(point_dir(3, 12, 27.5, LoadUnit::Percent), "03-27.5pct");
        assert_eq!(
            point_dir(7, 101, 8.0, LoadUnit::Outstanding),
            "007-8outstanding"
        );
    }

    #[test]
    fn a_port_dpdk_owns_is_not_the_kernels() {
        let model: ModelConfig = serde_json::from_value(serde_json::json!({
            "cpu": { "clock_mhz": 1000, "cores": 2 },
            "kernel": { "netisr_per_packet": { "ns": 100 } },
            "nics": [
                { "name": "eth0", "queues": 2, "linux_driver": "mlx5",
                  "policy": { "kind": "dpdk", "action": "rxonly",
                              "poll": { "ns": 20 }, "rx": { "ns": 22 } } },
                { "name": "eth1", "queues": 2, "linux_driver": "mlx5",
                  "policy": { "kind": "napi" } }
            ]
        }))
        .expect("model");
        let h = LinuxHost::new(&model, &[]).expect("a Linux host");
        let p = point(&[("eth0-q0.rx_frames", 10.0)]);
        let names: Vec<String> = h.files(&p).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["interrupts", "net-dev", "ethtool-S-eth1"]);
        assert!(!h.net_dev(&p).contains("eth0"));
        assert_eq!(h.interrupts(&p).lines().count(), 3);
    }

    /// A two-core host with an e1000 port (em0) and a tulip one (dc0), each a single
    /// queue on a legacy line, one 64-byte flow from `from` to `to`.
    fn legacy_host(from: &str, to: &str) -> LinuxHost {
        let model: ModelConfig = serde_json::from_value(serde_json::json!({
            "cpu": { "clock_mhz": 1000, "cores": 2 },
            "kernel": { "netisr_per_packet": { "ns": 100 } },
            "nics": [
                { "name": "em0", "linux_driver": "e1000", "policy": { "kind": "interrupt" } },
                { "name": "dc0", "linux_driver": "tulip", "policy": { "kind": "interrupt" } }
            ]
        }))
        .expect("model");
        let flows: Vec<FlowConfig> = serde_json::from_value(serde_json::json!([
            { "name": "f0", "from": from, "to": to, "frame_bytes": 64 }
        ]))
        .expect("flows");
        LinuxHost::new(&model, &flows).expect("a Linux host")
    }

    #[test]
    fn e1000_and_tulip_have_legacy_lines_and_their_own_drops() {
        // Expected: show_interrupts' row for an IO-APIC line: " %8s" "IO-APIC", the
        // pin (the IRQ on x86) as hwirq, "-%-8s" "fasteoi", the netdev's name as the
        // action (request_irq(..., netdev->name, ...)).
        let p = point(&[
            ("em0.interrupts", 5.0),
            ("dc0.interrupts", 9.0),
            ("em0.rx_frames", 30.0),
            ("dc0.tx_frames", 25.0),
        ]);
        let h = legacy_host("em0", "dc0");
        assert_eq!(
            h.interrupts(&p),
            "           CPU0       CPU1       \n\
             \x20 0:          5          0   IO-APIC   0-fasteoi   em0\n\
             \x20 1:          0          9   IO-APIC   1-fasteoi   dc0\n"
        );
        // e1000's drop column: the backlog's 3 + MPC, which counts the ring's 7 and the
        // FIFO's 2 (a frame with no descriptor waits in the FIFO until it overflows).
        let want = format!(
            "{NET_DEV_HEADER}\
             \x20  em0:    1800      30    0   12    0     0          0         0        0       0    0    0    0     0       0          0\n\
             \x20  dc0:       0       0    0    0    0     0          0         0     1500      25    0    0    0     0       0          0\n"
        );
        assert_eq!(h.net_dev(&p), want);
        // e1000's octet counters (GORC, GOTC) include the FCS: 64 bytes a frame.
        assert_eq!(
            h.ethtool_s("em0", &p).expect("e1000"),
            "NIC statistics:\n     rx_packets: 30\n     tx_packets: 0\n     rx_bytes: 1920\n     \
             tx_bytes: 0\n     rx_missed_errors: 9\n     rx_long_byte_count: 1920\n"
        );
        // tulip has no ethtool statistics: no file.
        assert!(h.ethtool_s("dc0", &p).is_none());
        let names: Vec<String> = h.files(&p).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["interrupts", "net-dev", "ethtool-S-em0"]);
        // Into the tulip: its drop column is the backlog's 3 + CSR8's missed frames (the
        // ring's 7); the FIFO's 2 are in CSR8's overflow count, which tulip never reads.
        let p = point(&[("dc0.rx_frames", 30.0), ("em0.tx_frames", 25.0)]);
        let h = legacy_host("dc0", "em0");
        let dev = h.net_dev(&p);
        assert!(
            dev.contains("\n   dc0:    1800      30    0   10    0     0 "),
            "{dev}"
        );
        let e = h.ethtool_s("em0", &p).expect("e1000");
        assert!(e.contains("\n     tx_packets: 25\n     rx_bytes: 0\n     tx_bytes: 1600\n     rx_missed_errors: 0\n"), "{e}");
    }

    /// A two-core host with two ports of `driver` (eth0 and eth1) of `queues` queues
    /// each, one 64-byte flow from eth0 to eth1.
    fn host_of(driver: &str, queues: u16) -> LinuxHost {
        let model: ModelConfig = serde_json::from_value(serde_json::json!({
            "cpu": { "clock_mhz": 1000, "cores": 2 },
            "kernel": { "netisr_per_packet": { "ns": 100 } },
            "nics": [
                { "name": "eth0", "queues": queues, "linux_driver": driver,
                  "policy": { "kind": "napi" } },
                { "name": "eth1", "queues": queues, "linux_driver": driver,
                  "policy": { "kind": "napi" } }
            ]
        }))
        .expect("model");
        let flows: Vec<FlowConfig> = serde_json::from_value(serde_json::json!([
            { "name": "f0", "from": "eth0", "to": "eth1", "frame_bytes": 64 }
        ]))
        .expect("flows");
        LinuxHost::new(&model, &flows).expect("a Linux host")
    }

    /// Two queues each way: eth0 received 10 and 20 frames and its queue 1 refused 7
    /// (the flow's 7 ring drops; [`point`] adds 2 FIFO and 3 backlog drops), eth1 sent
    /// 12 and 13.
    fn two_queue_point() -> PointResult {
        point(&[
            ("eth0-q0.rx_frames", 10.0),
            ("eth0-q1.rx_frames", 20.0),
            ("eth0-q1.rx_ring.drops", 7.0),
            ("eth1-q0.tx_frames", 12.0),
            ("eth1-q1.tx_frames", 13.0),
        ])
    }

    /// `ethtool -S`'s lines after the header, as `name: value`.
    fn stats(s: &str) -> Vec<String> {
        let body = s.strip_prefix("NIC statistics:\n").expect("the header");
        body.lines()
            .map(|l| l.strip_prefix("     ").expect("five spaces").to_string())
            .collect()
    }

    #[test]
    fn igb_counts_its_drops_by_drop_enable() {
        // Expected: igb_gstrings_stats' order (GPRC, GPTC, GORC, GOTC with the FCS:
        // 64 bytes a frame), then igb_gstrings_net_stats' rx_fifo_errors, then the tx
        // queues and the rx queues (igb_get_strings, 4.18). Two queues: DROP_EN, so MPC
        // is the FIFO's 2 and queue 1's RQDPC its 7 ring drops; rx_fifo_errors 7 + 2.
        let p = two_queue_point();
        let h = host_of("igb", 2);
        assert_eq!(
            stats(&h.ethtool_s("eth0", &p).expect("igb")),
            [
                "rx_packets: 30",
                "tx_packets: 0",
                "rx_bytes: 1920",
                "tx_bytes: 0",
                "rx_missed_errors: 2",
                "rx_long_byte_count: 1920",
                "rx_fifo_errors: 9",
                "tx_queue_0_packets: 0",
                "tx_queue_0_bytes: 0",
                "tx_queue_1_packets: 0",
                "tx_queue_1_bytes: 0",
                "rx_queue_0_packets: 10",
                "rx_queue_0_bytes: 600",
                "rx_queue_0_drops: 0",
                "rx_queue_1_packets: 20",
                "rx_queue_1_bytes: 1200",
                "rx_queue_1_drops: 7",
            ]
        );
        let tx = stats(&h.ethtool_s("eth1", &p).expect("igb"));
        assert!(tx.contains(&"tx_bytes: 1600".to_string()), "{tx:?}");
        assert!(tx.contains(&"tx_queue_1_bytes: 780".to_string()), "{tx:?}");
        // /proc/net/dev: drop = the backlog's 3 + MPC 2, fifo = RQDPC 7 + MPC 2.
        let dev = h.net_dev(&p);
        assert!(
            dev.contains("\n  eth0:    1800      30    0    5    9     0 "),
            "{dev}"
        );
        // One queue: no DROP_EN, so MPC counts the ring's 7 and the FIFO's 2.
        let p = point(&[("eth0.rx_frames", 30.0), ("eth0.rx_ring.drops", 7.0)]);
        let h = host_of("igb", 1);
        let s = stats(&h.ethtool_s("eth0", &p).expect("igb"));
        assert_eq!(s[4], "rx_missed_errors: 9");
        assert_eq!(s[6], "rx_fifo_errors: 9");
        assert_eq!(s.last().unwrap(), "rx_queue_0_drops: 0");
        let dev = h.net_dev(&p);
        assert!(
            dev.contains("\n  eth0:    1800      30    0   12    9     0 "),
            "{dev}"
        );
    }

    #[test]
    fn ixgbevf_has_its_rings_counts_and_no_drops() {
        // Expected: ixgbevf_gstrings_stats' netdev stats, then the tx queues and the
        // rx queues (ixgbevf_get_strings, 4.18); bytes 60 a frame; no drop counter in
        // either file: the drop column has the backlog's 3 only.
        let p = two_queue_point();
        let h = host_of("ixgbevf", 2);
        assert_eq!(
            stats(&h.ethtool_s("eth0", &p).expect("ixgbevf")),
            [
                "rx_packets: 30",
                "tx_packets: 0",
                "rx_bytes: 1800",
                "tx_bytes: 0",
                "tx_queue_0_packets: 0",
                "tx_queue_0_bytes: 0",
                "tx_queue_1_packets: 0",
                "tx_queue_1_bytes: 0",
                "rx_queue_0_packets: 10",
                "rx_queue_0_bytes: 600",
                "rx_queue_1_packets: 20",
                "rx_queue_1_bytes: 1200",
            ]
        );
        assert!(
            h.net_dev(&p)
                .contains("\n  eth0:    1800      30    0    3    0     0 ")
        );
    }

    #[test]
    fn i40e_and_ice_name_their_queues_and_port() {
        // Expected: i40e_get_stat_strings (4.18): the VSI's net stats, its queues
        // (tx then rx of each pair), then the port's; ice_get_strings (4.18): the VSI's
        // rx_discards, the tx queues, the rx queues, the port's `port.%s`. The VSI's
        // discards are the ring's 7, the port's the FIFO's 2; bytes 60 a frame.
        let p = two_queue_point();
        let h = host_of("i40e", 2);
        assert_eq!(
            stats(&h.ethtool_s("eth0", &p).expect("i40e")),
            [
                "rx_packets: 30",
                "tx_packets: 0",
                "rx_bytes: 1800",
                "tx_bytes: 0",
                "rx_dropped: 7",
                "tx-0.tx_packets: 0",
                "tx-0.tx_bytes: 0",
                "rx-0.rx_packets: 10",
                "rx-0.rx_bytes: 600",
                "tx-1.tx_packets: 0",
                "tx-1.tx_bytes: 0",
                "rx-1.rx_packets: 20",
                "rx-1.rx_bytes: 1200",
                "port.rx_dropped: 2",
            ]
        );
        // /proc/net/dev: the backlog's 3 + the VSI's 7.
        assert!(
            h.net_dev(&p)
                .contains("\n  eth0:    1800      30    0   10    0     0 ")
        );
        let h = host_of("ice", 2);
        assert_eq!(
            stats(&h.ethtool_s("eth0", &p).expect("ice")),
            [
                "rx_discards: 7",
                "tx-queue-0.tx_packets: 0",
                "tx-queue-0.tx_bytes: 0",
                "tx-queue-1.tx_packets: 0",
                "tx-queue-1.tx_bytes: 0",
                "rx-queue-0.rx_packets: 10",
                "rx-queue-0.rx_bytes: 600",
                "rx-queue-1.rx_packets: 20",
                "rx-queue-1.rx_bytes: 1200",
                "port.rx_dropped: 2",
            ]
        );
        let tx = stats(&h.ethtool_s("eth1", &p).expect("ice"));
        assert_eq!(
            tx[1..5],
            [
                "tx-queue-0.tx_packets: 12",
                "tx-queue-0.tx_bytes: 720",
                "tx-queue-1.tx_packets: 13",
                "tx-queue-1.tx_bytes: 780"
            ]
        );
        assert!(
            h.net_dev(&p)
                .contains("\n  eth0:    1800      30    0   10    0     0 ")
        );
    }

    #[test]
    fn the_cloud_nics_write_their_queues() {
        // Expected: ena_queue_strings (4.18): per pair the tx then the rx counters;
        // gve_get_strings: the main stats, the rx queues', the tx queues';
        // vmxnet3_get_strings (4.18): per tx queue then per rx queue, its index and the
        // device's counts, names with their leading spaces. Bytes 60 a frame; the drop
        // column has the backlog's 3 only.
        let p = two_queue_point();
        let h = host_of("ena", 2);
        assert_eq!(
            stats(&h.ethtool_s("eth0", &p).expect("ena")),
            [
                "queue_0_tx_cnt: 0",
                "queue_0_tx_bytes: 0",
                "queue_0_rx_cnt: 10",
                "queue_0_rx_bytes: 600",
                "queue_1_tx_cnt: 0",
                "queue_1_tx_bytes: 0",
                "queue_1_rx_cnt: 20",
                "queue_1_rx_bytes: 1200",
            ]
        );
        assert!(
            h.net_dev(&p)
                .contains("\n  eth0:    1800      30    0    3    0     0 ")
        );
        let h = host_of("gve", 2);
        assert_eq!(
            stats(&h.ethtool_s("eth1", &p).expect("gve")),
            [
                "rx_packets: 0",
                "tx_packets: 25",
                "rx_bytes: 0",
                "tx_bytes: 1500",
                "rx_bytes[0]: 0",
                "rx_bytes[1]: 0",
                "tx_bytes[0]: 720",
                "tx_bytes[1]: 780",
            ]
        );
        let h = host_of("vmxnet3", 2);
        assert_eq!(
            h.ethtool_s("eth0", &p).expect("vmxnet3"),
            "NIC statistics:\n     Tx Queue#: 0\n       ucast pkts tx: 0\n       \
             ucast bytes tx: 0\n     Tx Queue#: 1\n       ucast pkts tx: 0\n       \
             ucast bytes tx: 0\n     Rx Queue#: 0\n       ucast pkts rx: 10\n       \
             ucast bytes rx: 600\n       pkts rx OOB: 0\n     Rx Queue#: 1\n       \
             ucast pkts rx: 20\n       ucast bytes rx: 1200\n       pkts rx OOB: 7\n"
        );
        assert!(
            h.net_dev(&p)
                .contains("\n  eth0:    1800      30    0    3    0     0 ")
        );
    }

    #[test]
    fn each_drivers_vectors_have_its_names() {
        // Expected: igb_request_msix `%s-TxRx-%u`; i40e_vsi_request_irq_msix and
        // ice_vsi_req_irq_msix `<driver>-<netdev>-TxRx-%d`; ena_setup_io_intr
        // `%s-Tx-Rx-%d`; gve_alloc_notify_blocks `gve-ntfy-blk%d@pci:%s`, receive queue
        // k on block queues + k; vmxnet3_request_irqs `%s-rxtx-%d`. MSI-X rows.
        let p = point(&[]);
        for (driver, want) in [
            (
                "ixgbevf",
                ["eth0-TxRx-0", "eth0-TxRx-1", "eth1-TxRx-0", "eth1-TxRx-1"],
            ),
            (
                "igb",
                ["eth0-TxRx-0", "eth0-TxRx-1", "eth1-TxRx-0", "eth1-TxRx-1"],
            ),
            (
                "i40e",
                [
                    "i40e-eth0-TxRx-0",
                    "i40e-eth0-TxRx-1",
                    "i40e-eth1-TxRx-0",
                    "i40e-eth1-TxRx-1",
                ],
            ),
            (
                "ice",
                [
                    "ice-eth0-TxRx-0",
                    "ice-eth0-TxRx-1",
                    "ice-eth1-TxRx-0",
                    "ice-eth1-TxRx-1",
                ],
            ),
            (
                "ena",
                [
                    "eth0-Tx-Rx-0",
                    "eth0-Tx-Rx-1",
                    "eth1-Tx-Rx-0",
                    "eth1-Tx-Rx-1",
                ],
            ),
            (
                "gve",
                [
                    "gve-ntfy-blk2@pci:eth0",
                    "gve-ntfy-blk3@pci:eth0",
                    "gve-ntfy-blk2@pci:eth1",
                    "gve-ntfy-blk3@pci:eth1",
                ],
            ),
            (
                "vmxnet3",
                ["eth0-rxtx-0", "eth0-rxtx-1", "eth1-rxtx-0", "eth1-rxtx-1"],
            ),
        ] {
            let s = host_of(driver, 2).interrupts(&p);
            let rows: Vec<&str> = s.lines().skip(1).collect();
            assert_eq!(rows.len(), 4, "{driver}: {s}");
            for (row, name) in rows.iter().zip(want) {
                assert!(row.contains("PCI-MSI"), "{driver}: {row}");
                assert!(row.ends_with(&format!("  {name}")), "{driver}: {row}");
            }
        }
        // A single queue is still an MSI-X vector (igb: its queue's).
        let s = host_of("igb", 1).interrupts(&p);
        assert!(
            s.lines()
                .nth(1)
                .unwrap()
                .ends_with("-edge      eth0-TxRx-0"),
            "{s}"
        );
    }

    #[test]
    fn a_freebsd_model_has_no_linux_files() {
        let model: ModelConfig = serde_json::from_value(serde_json::json!({
            "cpu": { "clock_mhz": 1000 },
            "kernel": { "netisr_per_packet": { "ns": 100 } },
            "nics": [ { "name": "dc0" } ]
        }))
        .expect("model");
        assert_eq!(
            LinuxHost::new(&model, &[]).unwrap_err(),
            LinuxHostError::NotLinux
        );
    }
}
