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
//! ## Layers (a module uses only its own layer and the layers listed before it)
//!
//! - Foundations, nothing about networking:
//!   - [`engine`]: the clock, the heap of timed events, the slots and arrival queue for
//!     events kept outside it;
//!   - [`time`]: integer picoseconds (`SimTime`);
//!   - [`rng`]: seeded random streams, one per source of randomness;
//!   - [`problems`]: typed configuration problems collected with their JSON path;
//!   - [`forms`]: readers of the fields written in several forms (a policy's `kind`, a
//!     frame size's number or distribution) that keep the path inside the value and
//!     put serde's messages in the file's words (the components' readers use it).
//! - Model components, each owning its state and counters, tested alone; configuration
//!   types, but no files:
//!   - [`cpu`]: one core's priority levels, preemption and CPU-time accounting;
//!   - [`runq`]: which task holds each level and which wait (FIFO, round robin);
//!   - [`task`]: what uses the CPU (`Task`) and the steps it takes (`Step`);
//!   - [`nic`]: RX ring, send queue, TX ring, output wire, interrupt causes and mask;
//!   - [`queue`]: the bounded FIFO of ipintrq, if_snd and the rings;
//!   - [`link`]: an Ethernet link's line rate and serialisation time;
//!   - [`dma`]: a NIC's receive and transmit DMA engines and FIFOs (dc(4)'s 21143);
//!   - [`bus`]: the PCI bus the DMA engines share;
//!   - [`irq`]: interrupt lines, private or shared by a chain of handlers;
//!   - [`counters`]: a NIC's statistics counters and their overflow interrupt (xl(4));
//!   - [`link_watch`]: dc(4)'s reset on transmit underrun and its once-a-second link check;
//!   - [`rss`]: receive-side scaling, the receive queue of a multi-queue NIC's frame;
//!   - [`xps`]: transmit-queue selection (`__netdev_pick_tx`, XPS as ixgbe sets it up);
//!   - [`tx_arbiter`]: round robin of a multi-queue NIC's transmit queues on one wire;
//!   - [`dim`]: Linux's dynamic interrupt moderation (`net_dim`);
//!   - [`kernel`]: ipintrq, the software-interrupt dispatcher, ip_forward and if_output;
//!   - [`softirq`]: the software-interrupt bits (netisr numbers, NET_RX);
//!   - [`policy`]: the interrupt handler, interrupt moderation and the receive policies
//!     (NAPI, FreeBSD polling, Mogul-Ramakrishnan, deferred, busy poll);
//!   - [`packet`]: a packet inside the host;
//!   - [`cost`]: CPU costs, constant or drawn from a distribution;
//!   - [`traffic`]: the tester's flows (constant, Poisson, closed loop);
//!   - [`user`]: a user process competing for the CPU (a CPU-bound job, or screend);
//!   - [`sender`]: a ttcp-like sending application;
//!   - [`stats`]: per-flow counters and latency histograms;
//!   - [`timeline`]: latency per time bucket;
//!   - [`trace`]: the recorder of a window of one run (Chrome trace events, pcap).
//! - [`host`]: assembles the components for one run, routes the signals between them and
//!   runs the event loop, on one core or several; only [`runner`], [`scenario`] and
//!   [`results`] import it.
//! - Files in, with errors that name file, JSON path and reason:
//!   - [`read_limit`]: every file read from outside, a regular file of bounded size;
//!   - [`limits`]: the one set of limits on points, variants, replications, runs,
//!     flows, clock, threads, whatever way a scenario or the command asks for them;
//!   - [`error`]: the loader's error type (`InputError`, exit code 2);
//!   - [`json_pos`]: a problem's line and column in the file the user wrote, found from
//!     its JSON path;
//!   - [`smartbits`]: SmartBits CSV tables, measured ones read, simulated ones written;
//!   - [`grid`]: a scenario's grid of parameter values expanded into variants;
//!   - [`scenario`]: scenario and model files turned into an `Experiment`.
//! - Experiments:
//!   - [`results`]: what `results.json` holds, replications averaged;
//!   - [`summary`]: a variant's sweep in a few numbers (MLFRR, peak, output at the top,
//!     p99);
//!   - [`identity`]: what a sweep's results depend on (experiment, scenario hash,
//!     build), as the checkpoint, shards and run files identify it;
//!   - [`output`]: the result files, written atomically;
//!   - [`checkpoint`]: finished runs saved, so that an interrupted sweep resumes;
//!   - [`runner`]: every load point x replication, in parallel (rayon);
//!   - [`memory`]: the memory a sweep will need, estimated before it starts and checked
//!     against the machine's;
//!   - [`shard`]: a sweep split over machines and the parts merged;
//!   - [`fit`]: model fields fitted to a measured table by simulation.
//! - Reporting, from results only: [`report`], the table printed after a run.
//! - The `irqsim` binary (`src/main.rs`, not in this library) wires these together: its
//!   commands, `fit_cmd` (`irqsim fit`), `trace_cmd` (`irqsim run --trace`) and `plot/`
//!   (the SVG and PNG figures).

pub mod books;
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
pub mod identity;
pub mod irq;
pub mod json_pos;
pub mod kernel;
pub mod limits;
pub mod link;
pub mod link_watch;
pub mod memory;
pub mod names;
pub mod nic;
pub mod out_lock;
pub mod output;
pub mod packet;
pub mod policy;
pub mod problems;
pub mod queue;
pub mod read_limit;
pub mod report;
pub mod results;
pub mod rng;
pub mod rss;
pub mod run_file;
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
