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
//! ## Layers (dependencies point downwards only)
//!
//! - [`engine`], [`time`], [`rng`]: the event queue, integer time, seeded streams.
//!   Nothing about networking.
//! - Model components: [`cpu`], [`nic`], [`queue`], [`link`], [`bus`], [`dma`],
//!   [`kernel`], [`traffic`], [`cost`], [`policy`], wired in [`host`], measured by
//!   [`stats`]; [`rss`] picks a multi-queue NIC's receive queue, [`xps`] its transmit
//!   queue, and [`tx_arbiter`] shares its wire between the transmit queues; [`dim`]
//!   is Linux's adaptive interrupt moderation. No files, no JSON.
//! - [`scenario`]: turns scenario and model files into a configuration, with errors that
//!   name file, JSON path and reason; [`grid`] expands a scenario's grid of parameter
//!   values into variants. [`forms`] reads the fields with several forms (a policy's
//!   `kind`, a frame size's number or distribution) with their inner paths and puts
//!   serde's messages in the file's words (the components' readers use it; it uses
//!   nothing of the crate); [`json_pos`] finds a problem's line and column in the file
//!   the user wrote.
//! - [`runner`]: runs every load point x replication in parallel; [`results`] summarises,
//!   [`summary`] reduces a variant's sweep to MLFRR, peak, output at the top, p99;
//!   [`checkpoint`] saves finished runs; [`shard`] splits a sweep over machines and
//!   merges the parts; [`fit`] fits model fields to a measured table by simulation.
//! - Reporting reads results only: [`smartbits`] (CSV in and out), [`report`] (tables),
//!   [`output`] (result files, written atomically).
//! - The `irqsim` binary wires these together.

pub mod bus;
pub mod checkpoint;
pub mod cost;
pub mod counters;
pub mod cpu;
pub mod dim;
pub mod dma;
pub mod engine;
pub mod error;
pub mod fit;
pub mod forms;
pub mod grid;
pub mod host;
pub mod irq;
pub mod json_pos;
pub mod kernel;
pub mod link;
pub mod link_watch;
pub mod nic;
pub mod output;
pub mod packet;
pub mod policy;
pub mod problems;
pub mod queue;
pub mod report;
pub mod results;
pub mod rng;
pub mod rss;
pub mod runner;
pub mod runq;
pub mod scenario;
pub mod sender;
pub mod shard;
pub mod smartbits;
pub mod softirq;
pub mod stats;
pub mod summary;
pub mod task;
pub mod time;
pub mod timeline;
pub mod trace;
pub mod traffic;
pub mod tx_arbiter;
pub mod user;
pub mod xps;
