//! One processor (core) of the host: what the CPU scheduler knows of it and its kernel
//! queues, the state a host has once per core (Linux's per-CPU `softnet_data`,
//! FreeBSD's per-CPU netisr queues): `cpu.cores` of them, one by default. The core in
//! hand is `Host::core`, the others wait in `Host::parked` (see `Host::switch_to`). The
//! scheduling policy itself is in [`crate::model::cpu`] (levels, preemption, time accounting)
//! and [`crate::model::cpu::runq`] (who runs within a level); the host's loop drives them
//! (`Host::reschedule`).

use crate::model::cpu::runq::RunQueues;
use crate::model::cpu::{Cpu, Level};
use crate::model::kernel::Netisr;

/// One CPU's state during a run.
pub(crate) struct Core {
    /// Levels, the burst running at each, preemption, CPU time per level.
    pub cpu: Cpu,
    /// Which task of each level runs and which wait.
    pub runq: RunQueues,
    /// Level and generation of the CPU burst whose completion is in the host's CPU
    /// slot.
    pub due: (Level, u32),
    /// Its software interrupts and protocol input queue (ipintrq / backlog).
    pub netisr: Netisr,
    /// The NIC whose interrupt handler is stepping on it, if one is (see
    /// `Host::line_asserted`).
    pub isr_running: Option<usize>,
}
