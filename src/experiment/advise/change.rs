//! One change `advise` proposes: a knob a user can turn on Linux, where it sits in the
//! model, its value before and after, and the command that turns it on a host.
//!
//! This is the one type that ties advise to the knobs: a catalog of knobs (their ranges,
//! steps and command syntax) can later produce these records instead of
//! [`super::proposals`], and nothing else changes.

use serde::Serialize;
use serde_json::{Map, Value};

/// A change to one knob.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The knob as Linux names it (`net.core.netdev_max_backlog`, `ethtool -C eth0
    /// rx-usecs`, `/proc/irq/45/smp_affinity_list`).
    pub knob: String,
    /// Where it is in the model file: a JSON pointer (RFC 6901) into it
    /// (`/kernel/napi/netdev_max_backlog`, `/nics/0/moderation/min_interval_ns`,
    /// `/cpu/irq_affinity/eth0-q3`).
    pub pointer: String,
    /// Its value in the model as given (`null` when the model leaves it to its
    /// default).
    pub old: Value,
    /// The value proposed.
    pub new: Value,
    /// The Linux command that sets it on the host (as root).
    pub command: String,
}

impl Change {
    /// The change as a merge patch of the model (the form of a scenario variant's
    /// `overrides`): the pointer's tokens as nested keys, an array's element by its
    /// index (which a variant's overrides accept, as they accept a name).
    pub fn patch(&self) -> Value {
        let tokens: Vec<String> = self
            .pointer
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let mut v = self.new.clone();
        for t in tokens.iter().rev() {
            let mut m = Map::new();
            m.insert(t.clone(), v);
            v = Value::Object(m);
        }
        v
    }
}

/// Merge the patches of `changes` into one (later ones win where they overlap).
pub fn patch_of(changes: &[Change]) -> Value {
    let mut out = Value::Object(Map::new());
    for c in changes {
        crate::config::scenario::merge_patch(&mut out, &c.patch());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pointer_becomes_a_merge_patch() {
        let c = Change {
            knob: "net.core.netdev_budget".into(),
            pointer: "/kernel/napi/netdev_budget".into(),
            old: json!(300),
            new: json!(600),
            command: "sysctl -w net.core.netdev_budget=600".into(),
        };
        assert_eq!(
            c.patch(),
            json!({"kernel": {"napi": {"netdev_budget": 600}}})
        );
        let d = Change {
            pointer: "/nics/1/rx_ring_slots".into(),
            new: json!(4096),
            ..c.clone()
        };
        assert_eq!(
            patch_of(&[c, d]),
            json!({"kernel": {"napi": {"netdev_budget": 600}}, "nics": {"1": {"rx_ring_slots": 4096}}})
        );
    }
}
