//! XDP: a program the driver runs on each received frame in its NAPI poll, straight
//! from the RX ring, before an skb exists (Linux 4.8 on; mlx5e_handle_rx_cqe ->
//! mlx5e_xdp_handle), and what its verdict does. It is a part of the `napi` policy
//! (`nics[i].policy.xdp`), which calls it from its poll (`src/model/policy/napi/`),
//! not a policy of its own: in the kernel, too, XDP runs inside the driver's NAPI poll.

use crate::model::cost::{Cost, CostParam};
use crate::sim::problems::Problems;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An XDP program in the driver's poll (`nics[i].policy.xdp`): the driver runs it on each
/// received frame straight from the RX ring, before building an skb (mlx5e_handle_rx_cqe
/// -> mlx5e_xdp_handle), and acts on its verdict.
///
/// - `drop` (XDP_DROP): the frame's page goes back to the ring; nothing else runs.
/// - `redirect` (XDP_REDIRECT through a devmap, as the paper's `xdp_fwd` with
///   bpf_fib_lookup): the frame is sent out of its flow's output port without an skb or
///   the protocol path. As modelled it goes through that port's if_output like a
///   forwarded frame (if_snd, ring, the queue XPS gives the polling core), where the
///   kernel's XDP send queue is per CPU, has no qdisc and drops when its ring is full:
///   the same unless the output port is the bottleneck.
/// - `tx` (XDP_TX): the frame is sent back out of the port it came in on, on the
///   receiving channel's own transmit queue (mlx5's per-channel XDP SQ), without an skb
///   or the protocol path; its completions are reclaimed by that channel's own poll.
///   As modelled it goes through that queue's if_snd and ring (the kernel's XDP SQ has
///   no qdisc and drops when its ring is full).
/// - `pass` (XDP_PASS): the frame goes on as without XDP (an skb, the protocol path),
///   having paid the program.
/// - `xsk` (XDP_REDIRECT into an XSKMAP, as xdpsock's program does): the frame goes to
///   the AF_XDP socket bound to its queue, in zero-copy mode (Linux 5.11
///   net/xdp/xsk.c `__xsk_map_redirect` -> `xsk_rcv` -> `__xsk_rcv_zc`, L152-166:
///   the frame's umem buffer is written as a descriptor into the socket's RX ring); a
///   full RX ring refuses it (`xs->rx_queue_full++`, XDP_STATISTICS' `rx_ring_full`)
///   and the driver frees the buffer (ice_xsk.c `ice_clean_rx_irq_zc` L597-602). The
///   socket's application is the user process of kind `xdpsock`
///   ([`crate::model::user`]), whose queue is that RX ring.
///
/// Costs: `rx`, the driver's receive of a frame up to the program without an skb
/// (drop, redirect and tx; a passed frame pays the driver's `rx_per_packet`, skb
/// included), and `program`, the program's run with what its verdict costs in the
/// driver (for redirect: the route lookup, the devmap enqueue and the output driver's
/// transmit; for tx: the transmit). Counters, per NIC (per queue device `<nic>-q<k>` on
/// a multi-queue NIC) as mlx5's ethtool -S names them: `<nic>.rx_xdp_drop`,
/// `<nic>.rx_xdp_redirect`, with `tx` `<nic>.rx_xdp_tx_xmit`, and `<nic>.xdp_pass`
/// (frames passed, which mlx5 does not count).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct XdpParams {
    /// The program's verdict on every frame.
    pub action: XdpAction,
    /// The driver's receive of one frame before an skb exists \[cost\] (required for
    /// `drop`, `redirect` and `tx`, refused for `pass`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx: Option<CostParam>,
    /// The program's run and its verdict's work in the driver, per frame \[cost\].
    pub program: CostParam,
}

/// What an XDP program returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum XdpAction {
    /// XDP_DROP.
    Drop,
    /// XDP_REDIRECT to the flow's output port.
    Redirect,
    /// XDP_TX: back out of the port it came in on.
    Tx,
    /// XDP_PASS.
    Pass,
    /// XDP_REDIRECT into an XSKMAP: to the AF_XDP socket of the frame's queue (the
    /// `xdpsock` user process).
    Xsk,
}

impl XdpParams {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        if let Err(e) = self.program.check() {
            p.push("program", e);
        }
        match (&self.rx, self.action) {
            (None, XdpAction::Drop | XdpAction::Redirect | XdpAction::Tx | XdpAction::Xsk) => p
                .push(
                    "rx",
                    "is required for `drop`, `redirect`, `tx` and `xsk`: the driver's receive \
                 of a frame before an skb exists"
                        .to_string(),
                ),
            (Some(_), XdpAction::Pass) => p.push(
                "rx",
                "is not taken with `pass`: a passed frame pays the driver's \
                 `rx_per_packet` (its skb included)"
                    .to_string(),
            ),
            (Some(c), _) => {
                if let Err(e) = c.check() {
                    p.push("rx", e);
                }
            }
            (None, XdpAction::Pass) => {}
        }
    }
}

/// A device's XDP program during a run, with its counters.
#[derive(Clone, Debug)]
pub(crate) struct Xdp {
    pub(crate) action: XdpAction,
    /// The driver's receive without an skb (zero for `pass`).
    pub(crate) rx: Cost,
    pub(crate) program: Cost,
    /// Frames dropped, redirected, sent back and passed.
    pub(crate) drop: u64,
    pub(crate) redirect: u64,
    pub(crate) tx: u64,
    pub(crate) pass: u64,
}

impl Xdp {
    /// The program of `p` at a CPU clock of `clock_mhz`, nothing counted yet.
    pub(crate) fn new(p: &XdpParams, clock_mhz: f64) -> Xdp {
        Xdp {
            action: p.action,
            rx: p
                .rx
                .as_ref()
                .map_or(Cost::Constant(SimTime::ZERO), |c| c.build(clock_mhz)),
            program: p.program.build(clock_mhz),
            drop: 0,
            redirect: 0,
            tx: 0,
            pass: 0,
        }
    }

    /// Publish its counters under the NIC's name `nic`.
    pub(crate) fn counters(&self, nic: &str, c: &mut BTreeMap<String, f64>) {
        c.insert(format!("{nic}.rx_xdp_drop"), self.drop as f64);
        c.insert(format!("{nic}.rx_xdp_redirect"), self.redirect as f64);
        if self.action == XdpAction::Tx {
            c.insert(format!("{nic}.rx_xdp_tx_xmit"), self.tx as f64);
        }
        c.insert(format!("{nic}.xdp_pass"), self.pass as f64);
    }
}
