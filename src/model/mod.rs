//! The components of a host, each modelling one real mechanism.
//!
//! A component owns its state, its counters and its next deadline, takes its
//! configuration (with defaults and units in its docs) and validates it, and is built and
//! unit-tested alone. Components use [`crate::sim`] and each other's types, never the
//! host, the configuration files or anything above them: the host ([`crate::host`])
//! assembles them and routes the signals between them.
//!
//! - [`cpu`]: one core: priority levels, preemption and CPU-time accounting, run queues,
//!   the tasks that use the CPU;
//! - [`nic`]: a NIC port: RX ring, send queue, TX ring, output wire, interrupt causes and
//!   mask, DMA engines and FIFOs, RSS, XPS, the transmit arbiter, DIM, statistics
//!   counters, the link watch;
//! - [`kernel`]: ipintrq, the software-interrupt dispatcher, ip_forward and if_output;
//! - [`policy`]: the interrupt handler, interrupt moderation and the receive policies
//!   (NAPI, FreeBSD polling, Mogul-Ramakrishnan, deferred, busy poll);
//! - [`bus`]: the PCI bus the DMA engines share;
//! - [`irq`]: interrupt lines, private or shared by a chain of handlers;
//! - [`queue`]: the bounded FIFO of ipintrq, if_snd and the rings;
//! - [`packet`]: a packet inside the host;
//! - [`cost`]: CPU costs, constant or drawn from a distribution;
//! - [`traffic`]: the tester's flows (constant, Poisson, closed loop);
//! - [`user`]: a user process competing for the CPU (a CPU-bound job, or screend);
//! - [`sender`]: a ttcp-like sending application;
//! - [`stats`]: per-flow counters and latency histograms;
//! - [`timeline`]: latency per time bucket.

pub mod bus;
pub mod capture;
pub mod cost;
pub mod cpu;
pub mod irq;
pub mod kernel;
pub mod nic;
pub mod packet;
pub mod policy;
pub mod queue;
pub mod sender;
pub mod stats;
pub mod timeline;
pub mod traffic;
pub mod user;
