//! What uses the CPU: the tasks of the model and the steps they take.
//!
//! A [`Task`] is anything that competes for the CPU at a priority [`Level`]: an interrupt
//! handler, the software-interrupt dispatcher, a kernel thread, a user process. When it
//! holds the CPU it runs in bursts; at the end of each burst it says what it does next
//! ([`Step`]).

use crate::model::cpu::Level;
use crate::sim::time::SimTime;

/// Something that uses the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Task {
    /// hardclock (Clock).
    Hardclock,
    /// Interrupt line `0`: the handlers of its chain (HardIrq).
    Isr(u16),
    /// Periodic statistics harvest of NIC `0` run at splimp (HardIrq).
    HarvestImp(u16),
    /// Periodic statistics harvest of NIC `0` run from softclock (SoftClock).
    HarvestSoft(u16),
    /// Software-interrupt dispatcher: BSD netisrs, Linux NET_RX softirq (SoftIrq).
    Swi,
    /// A task of a receive policy (its thread, loop or kernel daemon): see
    /// [`PolicyTask`].
    Policy(PolicyTask),
    /// The user process (User).
    UserProc,
    /// The sending application (User).
    Sender,
    /// Link check of NIC `0`, dc_tick (SoftClock).
    LinkTick(u16),
    /// The body of NIC `0`'s dc_tick at splimp (HardIrq).
    LinkTickImp(u16),
}

impl Task {
    /// The level the task runs at.
    pub fn level(self) -> Level {
        match self {
            Task::Hardclock => Level::Clock,
            Task::Isr(_) | Task::HarvestImp(_) | Task::LinkTickImp(_) => Level::HardIrq,
            Task::HarvestSoft(_) | Task::LinkTick(_) => Level::SoftClock,
            Task::Swi => Level::SoftIrq,
            Task::Policy(t) => t.level,
            Task::UserProc | Task::Sender => Level::User,
        }
    }
}

/// A task of a receive policy: Mogul-Ramakrishnan's polling thread, a NIC's taskqueue
/// task, the busy-poll loop, Linux's ksoftirqd, FreeBSD's poll_in_idle_loop... The
/// policy builds it from the registry index it was given (`kind`), the NIC it serves
/// (0 when it serves them all) and the level it runs at. A policy task at
/// [`Level::User`] is a normal-priority kernel thread (accounted as ksoftirqd's time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyTask {
    /// The policy's index in the host's registry.
    pub kind: u8,
    /// The NIC it serves (0 for a task that serves several).
    pub nic: u16,
    /// The level it runs at.
    pub level: Level,
}

impl Task {
    /// The task of policy `kind` for `nic` at `level`.
    pub fn policy(kind: u8, nic: usize, level: Level) -> Task {
        Task::Policy(PolicyTask {
            kind,
            nic: nic as u16,
            level,
        })
    }
}

/// What a task does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Run for this long, then step again.
    Run(SimTime),
    /// Let the next ready task of the same level run; step again later.
    Yield,
    /// Nothing more to do until woken.
    Done,
}
