//! Multi-queue NICs: each receive queue becomes a device of its own when the host is
//! assembled, and receive-side scaling sends each flow to one of them.
//!
//! A NIC with `queues` > 1 has that many receive rings, each with its MSI-X vector (a
//! line of its own, never shared), its moderation state and its instance of the
//! receive policy: in the host each queue is a port, named `<nic>-q<k>`, with the NIC's
//! parameters. Its flows are routed by RSS ([`crate::model::nic::rss`]): the Toeplitz hash of the
//! flow's tuple under Microsoft's default key, through a round-robin indirection table
//! (`ethtool_rxfh_indir_default`), picks the queue. Every frame of a flow carries the
//! same tuple, so a flow lands on one queue, as on real NICs.
//!
//! The queues are RX/TX pairs: each queue's device also has its send queue and
//! transmit ring. A flow's frames are addressed to queue 0 of a multi-queue output
//! NIC, and the host picks the transmit queue of each frame when it is sent
//! ([`crate::model::nic::xps`]); the transmit queues share one wire ([`crate::model::nic::tx_arbiter`]), so
//! the port's capacity is one line rate, not one per queue. One NIC's queues do not
//! share a receive wire's occupancy (the tester's flows decide when frames arrive).

use crate::config::model::ModelConfig;
use crate::host::RunSpec;
use crate::model::nic::rss::{DEFAULT_ENTRIES, DEFAULT_KEY, Indirection};
use crate::model::traffic::{FlowConfig, TupleConfig};

use crate::model::nic::queue_name;

/// The receive queue RSS picks for `tuple` on a NIC configured with `nic`.
pub fn rss_queue(nic: &crate::model::nic::NicConfig, tuple: &TupleConfig) -> u16 {
    let entries = nic.rss.indirection_entries.unwrap_or(DEFAULT_ENTRIES);
    let table = Indirection::round_robin(entries, nic.queues);
    let hash = tuple
        .flow_tuple()
        .rss_hash(&DEFAULT_KEY, nic.rss.udp_4tuple);
    table.queue(hash)
}

/// The tuple of flow `i` of a run: its own, or the default for its number.
pub fn tuple_of(flows: &[FlowConfig], i: usize) -> TupleConfig {
    flows[i]
        .tuple
        .clone()
        .unwrap_or_else(|| TupleConfig::default_for(i))
}

/// The model and run with every multi-queue NIC replaced by one NIC per queue, and
/// each flow sent to its queue (and addressed to queue 0 of a multi-queue output NIC,
/// whose transmit queues the host then picks from); `None`
/// when no NIC has more than one queue. Flow names are kept. The model must have been
/// validated.
pub fn expand(cfg: &ModelConfig, spec: &RunSpec) -> Option<(ModelConfig, RunSpec)> {
    if cfg.nics.iter().all(|n| n.queues <= 1) {
        return None;
    }
    let mut out = cfg.clone();
    out.nics = cfg
        .nics
        .iter()
        .flat_map(|n| -> Vec<crate::model::nic::NicConfig> {
            if n.queues <= 1 {
                return vec![n.clone()];
            }
            (0..n.queues)
                .map(|k| {
                    let mut q = n.clone();
                    q.name = queue_name(&n.name, k);
                    q.queues = 1;
                    q.queue_of = Some((k, n.queues));
                    q
                })
                .collect()
        })
        .collect();
    let by_name = |name: &str| cfg.nics.iter().find(|n| n.name == name);
    let tx_queue = |name: &str| match by_name(name) {
        Some(n) if n.queues > 1 => queue_name(name, 0),
        _ => name.to_string(),
    };
    let mut run = spec.clone();
    for (i, f) in run.flows.iter_mut().enumerate() {
        f.name = Some(f.display_name());
        if let Some(n) = by_name(&f.from).filter(|n| n.queues > 1) {
            let q = rss_queue(n, &tuple_of(&spec.flows, i));
            f.from = queue_name(&n.name, q);
        }
        f.to = tx_queue(&f.to);
    }
    if let Some(snd) = &mut out.sender {
        snd.nic = tx_queue(&snd.nic);
    }
    Some((out, run))
}
