//! What uses the CPU: the tasks of the model and the steps they take.
//!
//! A [`Task`] is anything that competes for the CPU at a priority [`Level`]: an interrupt
//! handler, the software-interrupt dispatcher, a kernel thread, a user process. When it
//! holds the CPU it runs in bursts; at the end of each burst it says what it does next
//! ([`Step`]).

use crate::cpu::Level;
use crate::time::SimTime;

/// Something that uses the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// Mogul-Ramakrishnan polling thread (Kernel).
    MogulThread,
    /// Taskqueue thread of NIC `0`, deferred handler (Kernel).
    Taskq(u16),
    /// Busy-polling loop (Kernel).
    BusyPoll,
    /// The user process (User).
    UserProc,
    /// Linux ksoftirqd (User: normal priority).
    Ksoftirqd,
    /// The sending application (User).
    Sender,
    /// FreeBSD poll_in_idle_loop (IdleLoop).
    IdlePoll,
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
            Task::MogulThread | Task::Taskq(_) | Task::BusyPoll => Level::Kernel,
            Task::UserProc | Task::Ksoftirqd | Task::Sender => Level::User,
            Task::IdlePoll => Level::IdleLoop,
        }
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
