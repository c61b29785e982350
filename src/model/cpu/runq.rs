//! The run queues of the CPU's priority levels: which task holds each level and which
//! wait, in FIFO order.
//!
//! A level runs one task at a time (interrupt handlers at one IPL do not nest; one
//! softirq dispatcher; one kernel thread runs while the others wait). A woken task
//! waits at the tail of its level's queue; a task that yields goes back to the tail
//! (round robin among normal-priority processes); a task woken while it runs is kept
//! ready for when its current step sequence ends. (A task woken during its first step
//! that then takes the CPU needs no second turn: it is running; one woken during a
//! first step that yields is queued once, at the tail.) The
//! [`crate::model::cpu::Cpu`] decides which level runs and accounts the time; this decides
//! which task of a level runs (at the User level under Linux's CFS, [`crate::model::cpu::cfs`]
//! chooses among the waiting tasks instead of the first). Parameters: none. Counters:
//! none.

use crate::model::cpu::task::{Step, Task};
use crate::model::cpu::{LEVELS, Level};
use std::collections::VecDeque;

/// The tasks of one level: the one holding the CPU at that level and those waiting.
#[derive(Clone, Debug, Default)]
struct LevelQueue {
    current: Option<Task>,
    ready: VecDeque<Task>,
    /// The current task was woken again while running: it goes back to `ready` when
    /// its step sequence ends instead of sleeping.
    again: bool,
}

/// The run queues of every level.
#[derive(Clone, Debug, Default)]
pub struct RunQueues {
    levels: [LevelQueue; LEVELS],
}

impl RunQueues {
    /// Make `task` ready at its level (no effect if it is already waiting; kept for
    /// later if it is running). Returns whether its level now wants the CPU for a task
    /// to begin (no task holds it).
    #[inline(always)]
    pub fn wake(&mut self, task: Task) -> bool {
        let q = &mut self.levels[task.level() as usize];
        if q.current == Some(task) {
            q.again = true;
            return false;
        }
        if q.ready.contains(&task) {
            return false;
        }
        q.ready.push_back(task);
        q.current.is_none()
    }

    /// Whether `task` holds its level or waits for it (it has not slept).
    #[inline]
    pub fn holds(&self, task: Task) -> bool {
        let q = &self.levels[task.level() as usize];
        q.current == Some(task) || q.ready.contains(&task)
    }

    /// Whether `task` waits for level `l`.
    #[inline]
    pub fn is_ready(&self, l: Level, task: Task) -> bool {
        self.levels[l as usize].ready.contains(&task)
    }

    /// The tasks waiting for level `l`, in the order they became ready.
    pub fn ready(&self, l: Level) -> impl Iterator<Item = Task> + '_ {
        self.levels[l as usize].ready.iter().copied()
    }

    /// Level `l` got the CPU with no task holding it, and its scheduler chose `task`,
    /// one of those waiting ([`RunQueues::begin_next`] takes the first).
    pub fn begin_task(&mut self, l: Level, task: Task) {
        let q = &mut self.levels[l as usize];
        if let Some(i) = q.ready.iter().position(|&t| t == task) {
            q.ready.remove(i);
            q.current = Some(task);
            q.again = false;
        }
    }

    /// Whether tasks wait at level `l` besides the one holding it.
    #[inline]
    pub fn contended(&self, l: Level) -> bool {
        !self.levels[l as usize].ready.is_empty()
    }

    /// Tasks waiting at `l`.
    #[inline]
    pub fn waiting(&self, l: Level) -> usize {
        self.levels[l as usize].ready.len()
    }

    /// The task holding level `l`, if any.
    #[inline]
    pub fn current(&self, l: Level) -> Option<Task> {
        self.levels[l as usize].current
    }

    /// Level `l` got the CPU with no task holding it: the first waiting task is about
    /// to take its first step (it holds the level while it does).
    #[inline]
    pub fn begin_next(&mut self, l: Level) -> Option<Task> {
        let q = &mut self.levels[l as usize];
        let task = q.ready.pop_front()?;
        q.current = Some(task);
        q.again = false;
        Some(task)
    }

    /// `task`'s first step was `step`: it keeps the level if it runs; it goes back to
    /// the tail if it yields, or if it has nothing to do but was woken during the step.
    #[inline]
    pub fn begun(&mut self, l: Level, task: Task, step: Step) {
        let q = &mut self.levels[l as usize];
        q.current = None;
        if std::mem::take(&mut q.again) && step == Step::Done {
            q.ready.push_back(task);
        }
        match step {
            Step::Run(_) => q.current = Some(task),
            Step::Yield => q.ready.push_back(task),
            Step::Done => {}
        }
    }

    /// The task holding `l` ended its step sequence with `step` (`Yield` or `Done`): it
    /// releases the level, back to the tail if it yields or was woken meanwhile.
    /// Returns whether tasks wait at `l`.
    #[inline]
    pub fn ended(&mut self, l: Level, task: Task, step: Step) -> bool {
        let q = &mut self.levels[l as usize];
        let again = std::mem::take(&mut q.again);
        q.current = None;
        if step == Step::Yield || again {
            q.ready.push_back(task);
        }
        !q.ready.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::SimTime;

    fn taskq(nic: usize) -> Task {
        Task::policy(3, nic, Level::Kernel)
    }

    fn ksoftirqd() -> Task {
        Task::policy(1, 0, Level::User)
    }

    const RUN: Step = Step::Run(SimTime(1));

    #[test]
    fn tasks_of_a_level_wait_in_fifo_order_and_a_double_wake_counts_once() {
        let mut q = RunQueues::default();
        assert!(q.wake(taskq(0)));
        assert!(q.wake(taskq(1)));
        assert!(!q.wake(taskq(0)));
        assert_eq!(q.waiting(Level::Kernel), 2);
        assert_eq!(q.begin_next(Level::Kernel), Some(taskq(0)));
        q.begun(Level::Kernel, taskq(0), RUN);
        assert_eq!(q.current(Level::Kernel), Some(taskq(0)));
        // Another level is untouched.
        assert_eq!(q.current(Level::SoftIrq), None);
        assert!(q.ended(Level::Kernel, taskq(0), Step::Done));
        assert_eq!(q.begin_next(Level::Kernel), Some(taskq(1)));
    }

    #[test]
    fn a_task_woken_while_it_runs_is_not_lost() {
        let mut q = RunQueues::default();
        q.wake(Task::Swi);
        let t = q.begin_next(Level::SoftIrq).expect("ready");
        q.begun(Level::SoftIrq, t, RUN);
        // Woken during its burst: no new want, but it is ready again when it ends.
        assert!(!q.wake(Task::Swi));
        assert!(q.ended(Level::SoftIrq, t, Step::Done));
        assert_eq!(q.begin_next(Level::SoftIrq), Some(Task::Swi));
        // Woken during a first step that then finds nothing to do: ready again too.
        assert!(!q.wake(Task::Swi));
        q.begun(Level::SoftIrq, Task::Swi, Step::Done);
        assert_eq!(q.waiting(Level::SoftIrq), 1);
    }

    #[test]
    fn a_task_that_yields_goes_behind_the_others() {
        let mut q = RunQueues::default();
        q.wake(Task::UserProc);
        q.wake(ksoftirqd());
        let t = q.begin_next(Level::User).expect("ready");
        q.begun(Level::User, t, RUN);
        assert!(q.contended(Level::User));
        assert!(q.ended(Level::User, t, Step::Yield));
        assert_eq!(q.begin_next(Level::User), Some(ksoftirqd()));
        q.begun(Level::User, ksoftirqd(), Step::Yield);
        assert_eq!(q.begin_next(Level::User), Some(Task::UserProc));
    }

    #[test]
    fn a_task_woken_while_another_holds_the_level_waits_without_a_new_want() {
        let mut q = RunQueues::default();
        assert!(q.wake(taskq(0)));
        let t = q.begin_next(Level::Kernel).expect("ready");
        q.begun(Level::Kernel, t, RUN);
        // taskq(1) is woken while taskq(0) holds the level: the level already has the
        // CPU (or a burst), so no want; it waits.
        assert!(!q.wake(taskq(1)));
        assert_eq!(
            (q.waiting(Level::Kernel), q.contended(Level::Kernel)),
            (1, true)
        );
        assert_eq!(q.current(Level::Kernel), Some(taskq(0)));
        // A second wake of the waiting task changes nothing.
        assert!(!q.wake(taskq(1)));
        assert_eq!(q.waiting(Level::Kernel), 1);
        // taskq(0) finishes: the level reports the waiting task, which is next.
        assert!(q.ended(Level::Kernel, t, Step::Done));
        assert_eq!(q.current(Level::Kernel), None);
        assert_eq!(q.begin_next(Level::Kernel), Some(taskq(1)));
        q.begun(Level::Kernel, taskq(1), RUN);
        // Nobody waits behind it now, and taskq(0) (Done, not woken) is gone.
        assert!(!q.ended(Level::Kernel, taskq(1), Step::Done));
        assert_eq!(q.begin_next(Level::Kernel), None);
    }

    #[test]
    fn three_user_tasks_take_turns_round_robin() {
        let mut q = RunQueues::default();
        for t in [Task::UserProc, Task::Sender, ksoftirqd()] {
            q.wake(t);
        }
        // Each runs a step and yields in turn: the order repeats A B C A B C. The first
        // round yields from its first step (begun), the second after a step (ended).
        let mut order = Vec::new();
        for _ in 0..3 {
            let t = q.begin_next(Level::User).expect("ready");
            order.push(t);
            q.begun(Level::User, t, Step::Yield);
        }
        for _ in 0..3 {
            let t = q.begin_next(Level::User).expect("ready");
            order.push(t);
            q.begun(Level::User, t, RUN);
            assert!(q.ended(Level::User, t, Step::Yield));
        }
        let abc = [Task::UserProc, Task::Sender, ksoftirqd()];
        assert_eq!(order, [abc, abc].concat());
        assert_eq!(q.waiting(Level::User), 3);
    }

    #[test]
    fn a_task_woken_during_a_first_step_that_runs_gets_no_second_turn() {
        // Module doc: a task woken during its first step that then takes the CPU needs
        // no second turn.
        let mut q = RunQueues::default();
        assert!(q.wake(Task::Swi));
        let t = q.begin_next(Level::SoftIrq).expect("ready");
        assert!(!q.wake(Task::Swi)); // it holds the level: remembered, no want
        q.begun(Level::SoftIrq, t, RUN);
        // It runs, then ends with nothing to do: nobody waits, it is not re-queued.
        assert!(!q.ended(Level::SoftIrq, t, Step::Done));
        assert_eq!(q.waiting(Level::SoftIrq), 0);
        assert_eq!(q.begin_next(Level::SoftIrq), None);
    }

    #[test]
    fn a_task_woken_while_running_that_then_yields_is_queued_once() {
        let mut q = RunQueues::default();
        q.wake(Task::UserProc);
        let t = q.begin_next(Level::User).expect("ready");
        q.begun(Level::User, t, RUN);
        assert!(!q.wake(Task::UserProc));
        // Woken and yielding: one place at the tail, not two.
        assert!(q.ended(Level::User, t, Step::Yield));
        assert_eq!(q.waiting(Level::User), 1);
        // The same through a first step that yields.
        let t = q.begin_next(Level::User).expect("ready");
        assert!(!q.wake(Task::UserProc));
        q.begun(Level::User, t, Step::Yield);
        assert_eq!(q.waiting(Level::User), 1);
        assert_eq!(q.current(Level::User), None);
    }

    #[test]
    fn levels_are_independent() {
        let mut q = RunQueues::default();
        // Nothing ready anywhere: no task begins.
        for l in Level::ALL {
            assert_eq!(q.begin_next(l), None);
        }
        // The netisr holds the softirq level; an interrupt handler woken meanwhile
        // wants its own (free) level, and waits in its own queue.
        q.wake(Task::Swi);
        let s = q.begin_next(Level::SoftIrq).expect("ready");
        q.begun(Level::SoftIrq, s, RUN);
        assert!(q.wake(Task::Isr(0)));
        assert!(q.wake(Task::Isr(1)));
        assert_eq!(q.waiting(Level::HardIrq), 2);
        assert_eq!(q.waiting(Level::SoftIrq), 0);
        assert!(!q.contended(Level::SoftIrq));
        assert_eq!(q.begin_next(Level::HardIrq), Some(Task::Isr(0)));
        q.begun(Level::HardIrq, Task::Isr(0), Step::Done);
        // A first step with nothing to do releases the level at once.
        assert_eq!(q.current(Level::HardIrq), None);
        assert_eq!(q.current(Level::SoftIrq), Some(Task::Swi));
        assert_eq!(q.begin_next(Level::HardIrq), Some(Task::Isr(1)));
    }
}
