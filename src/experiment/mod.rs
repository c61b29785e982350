//! Experiments: many runs of the host, in parallel, saved, resumed, split and fitted.
//!
//! Uses every folder below it; nothing below uses it.
//!
//! - [`runner`]: every load point x replication, in parallel (rayon), deterministic
//!   whatever the thread count;
//! - [`identity`]: what a sweep's results depend on (experiment, scenario hash, build),
//!   as the checkpoint, shards and run files identify it;
//! - [`checkpoint`]: finished runs saved, so that an interrupted sweep resumes;
//! - [`run_file`]: one finished run in a file of its own, checked on reading;
//! - [`shard`]: a sweep split over machines and the parts merged;
//! - [`load`]: a scenario loaded and checked against its variants' hosts (a measured
//!   table's counter names);
//! - [`memory`]: the memory a sweep will need, estimated before it starts and checked
//!   against the machine's;
//! - [`out_lock`]: one run at a time in an output directory;
//! - [`fit`]: model fields fitted to a measured table by simulation;
//! - [`advise`]: a live host's counters diagnosed, and changes proposed and run in its
//!   model.
//! - [`tune`]: the knobs of a Linux host searched for a goal under constraints.

pub mod advise;
pub mod checkpoint;
pub mod fit;
pub mod identity;
pub mod load;
pub mod memory;
pub mod ndr;
pub mod out_lock;
pub mod run_file;
pub mod runner;
pub mod shard;
pub mod tune;
