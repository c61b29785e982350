//! # irqsim: a discrete-event simulator of how a host receives and forwards packets
//!
//! irqsim models the receive path of a computer as the hardware and the kernel run it
//! -- NIC descriptor rings, DMA, interrupts and their cost, kernel queues, software
//! interrupts -- to reproduce and explain what real routers do under load: receive
//! livelock (output falling as input rises), latency spikes, and the loss-free rate.
//!
//! ```text
//!              tester (SmartBits-like flows: constant rate or Poisson)
//!                 |                                          ^
//!                 v  wire (line rate, 20 B preamble + IFG)   |  latency: last bit in
//!  +--------------+---------------------------------+        |  -> first bit out
//!  | NIC in: rx_latency -> RX ring (K slots) -> IRQ  |        |
//!  |                 drop if full      |             |        |
//!  | CPU  HardIrq:  ISR = entry + per-packet loop + exit      |
//!  |                 |  IF_ENQUEUE                            |
//!  |      SoftIrq:  ipintrq (50) -> netisr: ip_forward        |
//!  |                 |  if_output                             |
//!  | NIC out: if_snd (50) -> TX ring -> tx_latency -> wire ---+
//!  +--------------------------------------------------+
//! ```
//!
//! ## Layers: the folders of `src/`, from the ground up
//!
//! A module uses only its own folder and the folders listed before it (checked by
//! `tests/it/architecture.rs`); each folder's `mod.rs` says what lives there.
//!
//! - [`sim`]: the foundations, nothing about networking: the event scheduler, integer
//!   time, seeded random streams, typed configuration problems, the readers of fields
//!   written in several forms, the one set of limits.
//! - [`model`]: the components of a host, each owning its state, its counters and its
//!   next deadline, built and tested alone: [`model::cpu`] (a core's priority levels,
//!   run queues, tasks), [`model::nic`] (a port's rings, queues, DMA, wire, RSS, XPS,
//!   DIM, statistics counters), [`model::kernel`] (ipintrq, softirqs, ip_forward),
//!   [`model::policy`] (the interrupt handler and the receive policies), and the
//!   tester's traffic, the PCI bus, interrupt lines, applications, per-flow statistics.
//! - [`trace`]: the recorder of a window of one run and its formats (Chrome trace
//!   events, pcap).
//! - [`config`]: files in, with errors that name file, JSON path and reason: scenario and
//!   model files, grids, measured SmartBits tables, bounded reads.
//! - [`host`]: assembles the components for one run, routes the signals between them and
//!   runs the event loop, on one core or several.
//! - [`results`]: what `results.json` holds, the summary of a sweep, the printed report,
//!   the result files written atomically.
//! - [`experiment`]: a sweep run in parallel, checkpointed, sharded over machines and
//!   merged, fitted to a measured table, with the memory it needs checked first.
//! - [`validate`]: every measured table the project ships, run and judged row by row
//!   against its tolerance and its declared known misses (`irqsim validate`'s
//!   scoreboard).
//! - The `irqsim` binary (`src/bin/irqsim/`, not in this library) wires these together:
//!   its commands, `fit_cmd` (`irqsim fit`), `trace_cmd` (`irqsim run --trace`) and
//!   `plot/` (the SVG and PNG figures).

pub mod config;
pub mod experiment;
pub mod host;
pub mod model;
pub mod results;
pub mod sim;
pub mod trace;
pub mod validate;

/// `docs/adding-a-policy.md`: `cargo test --doc` compiles its `rust` blocks against this
/// library's public API (the module exists only while rustdoc collects doctests).
#[cfg(doctest)]
#[doc = include_str!("../docs/adding-a-policy.md")]
mod adding_a_policy {}
