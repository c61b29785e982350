//! A flow that leaves by the port it arrived on (`from` == `to`) on a host with one NIC:
//! accepted, and said.
//!
//! What it models: the host forwards every frame back out of its one port, a one-armed
//! router (`ip route` sending the traffic back where it came from, or a MAC-swapping
//! reflector such as DPDK testpmd's `macswap`): every frame costs a receive and a
//! transmit, and the port's transmit direction carries what its receive does (full
//! duplex: the directions do not share the wire). A user importing a one-NIC host (a
//! virtual machine) who writes `eth0 -> eth0` may instead mean a host that receives and
//! consumes the frames; the model has no socket that consumes a forwarded flow, so the
//! warning points at the scenarios that drop the frames on receive, and at the
//! request/response flows a server answers. Not warned: request/response scenarios
//! (`load.unit` `outstanding`), where the response leaves by the request's port.

use crate::config::scenario::{Experiment, LoadUnit};

/// The warnings of `exp`: one per (variant, flow) with `from` == `to` on a model with
/// one NIC, in variant then flow order.
pub fn warnings(exp: &Experiment) -> Vec<String> {
    if exp.load_unit == LoadUnit::Outstanding {
        return Vec::new();
    }
    let mut out = Vec::new();
    for v in &exp.variants {
        if v.model.nics.len() != 1 {
            continue;
        }
        for f in v.flows.iter().filter(|f| f.from == f.to) {
            out.push(format!(
                "{}: variant `{}`, flow `{}` ({} -> {}): the host has one NIC, so the flow's \
                 frames are forwarded back out of the port they arrived on (a one-armed \
                 router: each frame is received and transmitted, and {} transmits what it \
                 receives). That is what runs. To have the host receive and consume the \
                 frames instead, drop them on receive: `kernel.prerouting_drop` (iptables' \
                 raw table, scenarios/partial-load-raw-drop.json) or an XDP drop policy \
                 (scenarios/partial-load-xdp-drop.json); for a server answering requests, a \
                 request/response flow (`load.unit` `outstanding`, \
                 scenarios/prefer-busy-poll-udp-pingpong.json)",
                exp.path,
                v.name,
                f.display_name(),
                f.from,
                f.to,
                f.from
            ));
        }
    }
    out
}
