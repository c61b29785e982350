//! Receive-processing policies: how a NIC's arrivals reach the protocol stack.
//!
//! Each policy is a file of its own; a policy is chosen per NIC in the model file
//! (`nics[i].policy`, tagged by `kind`). System-wide parameters of a policy (FreeBSD's
//! `kern.polling.*`, Linux's `netdev_budget`...) live under `kernel.<policy>`.
//! Interrupt moderation is a NIC feature (`nics[i].moderation`, [`moderation`]) that
//! combines with every interrupt-driven policy.
//!
//! | kind                 | file                 | mechanism                                                    |
//! |----------------------|----------------------|--------------------------------------------------------------|
//! | `interrupt`          | `interrupt.rs`       | classic BSD: the handler drains the ring into ipintrq        |
//! | `freebsd-polling`    | `freebsd_polling.rs` | interrupts off; poll at every clock tick, burst adapted      |
//! | `napi`               | `napi.rs`            | IRQ masks the NIC and schedules a softirq poll (Linux)       |
//! | `mogul-ramakrishnan` | `mogul.rs`           | IRQ wakes a polling thread; quota, feedback, cycle limit     |
//! | `deferred`           | `deferred.rs`        | fast filter + taskqueue task (FreeBSD em, EM_FAST_INTR)      |
//! | `busy-poll`          | `busy_poll.rs`       | a loop owns the CPU and polls the rings                      |

pub mod busy_poll;
pub mod deferred;
pub mod env;
pub mod freebsd_polling;
pub mod interrupt;
pub mod moderation;
pub mod mogul;
pub mod napi;

use crate::cost::CostParam;
use crate::problems::Problems;
use serde::{Deserialize, Serialize};

/// Which receive policy a NIC uses, with its per-NIC parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PolicyConfig {
    /// Classic interrupt-driven receive (4.4BSD, FreeBSD 2.x-4.x): see [`interrupt`].
    #[default]
    Interrupt,
    /// FreeBSD DEVICE_POLLING (parameters in `kernel.polling`): see [`freebsd_polling`].
    FreebsdPolling,
    /// Linux NAPI (budget in `kernel.napi`): see [`napi`].
    Napi {
        /// Packets one poll of this device may take (default 64).
        #[serde(default = "d_weight")]
        weight: u32,
    },
    /// Mogul & Ramakrishnan's polling thread (cycle limit in `kernel.mogul`): see [`mogul`].
    MogulRamakrishnan {
        /// Packets taken from this interface per round-robin turn (default 5).
        #[serde(default = "d_quota")]
        quota: u32,
    },
    /// Fast interrupt filter plus taskqueue task: see [`deferred`].
    Deferred {
        /// Packets one task run may take before re-enqueueing itself (default 100,
        /// em_rx_process_limit).
        #[serde(default = "d_limit")]
        process_limit: u32,
        /// Cost of one task run: taskqueue dispatch and thread switch (default 0) [cost].
        #[serde(default)]
        task_overhead: CostParam,
        /// Whether the task runs the protocol code inline (net.isr.direct = 1) instead
        /// of queueing to ipintrq (default false).
        #[serde(default)]
        direct: bool,
    },
    /// A loop that owns the CPU and polls the rings: see [`busy_poll`].
    BusyPoll {
        /// Cost of one pass over the rings that finds nothing (default 100 ns); the same
        /// for every busy-poll NIC (one loop polls them all).
        #[serde(default = "d_empty_poll")]
        empty_poll: CostParam,
    },
}

fn d_weight() -> u32 {
    64
}
fn d_quota() -> u32 {
    5
}
fn d_limit() -> u32 {
    100
}
fn d_empty_poll() -> CostParam {
    CostParam::ns(100.0)
}

impl PolicyConfig {
    /// Whether the NIC's receive interrupt is used (moderation applies).
    pub fn interrupt_driven(&self) -> bool {
        !matches!(
            self,
            PolicyConfig::FreebsdPolling | PolicyConfig::BusyPoll { .. }
        )
    }

    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        match self {
            PolicyConfig::Interrupt | PolicyConfig::FreebsdPolling => {}
            PolicyConfig::Napi { weight } => p.at_least("weight", *weight as u64, 1, "packet"),
            PolicyConfig::MogulRamakrishnan { quota } => {
                p.at_least("quota", *quota as u64, 1, "packet")
            }
            PolicyConfig::Deferred {
                process_limit,
                task_overhead,
                ..
            } => {
                p.at_least("process_limit", *process_limit as u64, 1, "packet");
                if let Err(e) = task_overhead.check() {
                    p.push("task_overhead", e);
                }
            }
            // (Its lower bound depends on the CPU clock: `ModelConfig::validate`.)
            PolicyConfig::BusyPoll { empty_poll } => {
                if let Err(e) = empty_poll.check() {
                    p.push("empty_poll", e);
                }
            }
        }
    }
}
