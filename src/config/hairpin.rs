//! A flow that leaves by the port it arrived on (`from` == `to`): accepted, and said,
//! on a host with one NIC and on a host with several.
//!
//! What it models: the host forwards every frame back out of its one port, a one-armed
//! router (`ip route` sending the traffic back where it came from, or a MAC-swapping
//! reflector such as DPDK testpmd's `macswap`): every frame costs a receive and a
//! transmit, and the port's transmit direction carries what its receive does (full
//! duplex: the directions do not share the wire). A user importing a one-NIC host (a
//! virtual machine) who writes `eth0 -> eth0` may instead mean a host that receives and
//! consumes the frames; the model has no socket that consumes a forwarded flow, so the
//! warning points at the scenarios that drop the frames on receive, and at the
//! request/response flows a server answers. On a host with several NICs, `eth0 -> eth0`
//! is more likely a slip for another port (a two-port router's flows cross), so the
//! warning names the other ports. Not warned: request/response scenarios (`load.unit`
//! `outstanding`), where the response leaves by the request's port, and, on a host with
//! several NICs, a variant whose model has a user-level process the frames pass through
//! (`user.kind` `screend`: an application that receives each request and answers it out
//! of the port it came in by, as in scenarios/prefer-busy-poll-udp-pingpong.json).

use crate::config::scenario::{Experiment, LoadUnit};
use crate::model::user::UserConfig;

/// The warnings of `exp`: one per (variant, flow) with `from` == `to` on a model with
/// one NIC, or with several and no application answering, in variant then flow order.
pub fn warnings(exp: &Experiment) -> Vec<String> {
    if exp.load_unit == LoadUnit::Outstanding {
        return Vec::new();
    }
    let mut out = Vec::new();
    for v in &exp.variants {
        if v.model.nics.len() != 1 {
            if matches!(v.model.user, Some(UserConfig::Screend { .. })) {
                continue;
            }
            for f in v.flows.iter().filter(|f| f.from == f.to) {
                let others: Vec<&str> = v
                    .model
                    .nics
                    .iter()
                    .map(|n| n.name.as_str())
                    .filter(|n| *n != f.from)
                    .collect();
                out.push(format!(
                    "{}: variant `{}`, flow `{}` ({} -> {}): the flow leaves by the port it \
                     arrived on, although the host has {} NICs; its frames are forwarded \
                     back out of {} (a one-armed router). If the flow should cross the \
                     host, set its `to` to another port ({})",
                    exp.path,
                    v.name,
                    f.display_name(),
                    f.from,
                    f.to,
                    v.model.nics.len(),
                    f.from,
                    others.join(", ")
                ));
            }
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
