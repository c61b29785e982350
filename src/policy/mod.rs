//! Receive-processing policies: how a NIC's arrivals reach the protocol stack.
//!
//! Each policy is a file of its own. A policy is chosen per NIC in the model file
//! (`nics[i].policy`), tagged by `kind`.
//!
//! | kind        | file            | mechanism                                            |
//! |-------------|-----------------|------------------------------------------------------|
//! | `interrupt` | `interrupt.rs`  | classic BSD: the ISR drains the ring into ipintrq    |

pub mod interrupt;

use serde::{Deserialize, Serialize};

/// Which receive policy a NIC uses, with its parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PolicyConfig {
    /// Classic interrupt-driven receive (4.4BSD, FreeBSD 2.x-4.x): see [`interrupt`].
    #[default]
    Interrupt,
}
