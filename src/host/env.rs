//! The host as a component's environment: a receive policy's (`RxEnv`'s role traits),
//! an interrupt handler's ([`IsrEnv`]), a line's, the software-interrupt dispatcher's and
//! the sender's ([`SendEnv`]); each query and signal routed to the component that
//! answers it.

use crate::host::attach::Shape;
use crate::host::{Event, Host};
use crate::model::cost::Cost;
use crate::model::cpu::task::Step;
use crate::model::cpu::task::Task;
use crate::model::irq::LineEnv;
use crate::model::kernel::{Netisr, SwiEnv};
use crate::model::packet::Packet;
use crate::model::policy::env::{CostEnv, RingEnv, SchedEnv, StackEnv};
use crate::model::policy::interrupt::{DriverCosts, IsrEnv};
use crate::model::sender::SendEnv;
use crate::model::stats::DropSite;
use crate::sim::engine::Scheduler;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;

/// The host at one instant, lent to a policy for one step. The policy's own state is
/// taken out of the host for the step (so that both can be borrowed); nothing the
/// policy calls reaches back into that state.
pub(crate) struct HostEnv<'a, M: Shape> {
    pub h: &'a mut Host<M>,
    pub now: SimTime,
    pub s: &'a mut Scheduler<Event>,
}

impl<M: Shape> RingEnv for HostEnv<'_, M> {
    #[inline(always)]
    fn rx_pop(&mut self, nic: usize) -> Option<Packet> {
        self.h.ports.at(nic).rx_pop()
    }
    #[inline(always)]
    fn rx_empty(&self, nic: usize) -> bool {
        self.h.ports[nic].nic().rx_ring.is_empty()
    }
    #[inline(always)]
    fn take_tx_completions(&mut self, nic: usize) -> Option<u32> {
        self.h.ports.at(nic).take_tx_completions()
    }
    #[inline(always)]
    fn reclaim_tx(&mut self, nic: usize, max: u32) -> (u32, u32) {
        self.h.ports.at(nic).reclaim_tx(max)
    }
    #[inline(always)]
    fn tx_completion_interrupts(&self, nic: usize) -> bool {
        self.h.ports[nic].nic().tx_completion_interrupts()
    }
    #[inline(always)]
    fn if_start(&mut self, nic: usize) {
        self.h.if_start(nic, self.now, self.s)
    }
    #[inline(always)]
    fn downstream_full(&self, nic: usize, half: bool) -> bool {
        self.h.downstream_full(nic, half)
    }
}

impl<M: Shape> SendEnv for HostEnv<'_, M> {
    #[inline]
    fn send(&mut self, p: Packet) {
        self.h.acct.sent(p.flow as usize);
        self.h.if_output(p, self.now, self.s);
    }
    #[inline]
    fn if_snd_full(&self, nic: usize) -> bool {
        self.h.ports[nic].nic().if_snd.is_full()
    }
    #[inline]
    fn contended(&self) -> bool {
        self.h.user_level_contended()
    }
}

impl<M: Shape> CostEnv for HostEnv<'_, M> {
    #[inline(always)]
    fn rx_cost(&mut self, nic: usize, bytes: u32) -> SimTime {
        self.h.ports.at(nic).driver().rx(bytes)
    }
    #[inline(always)]
    fn poll_call_cost(&mut self, nic: usize) -> SimTime {
        self.h.ports.at(nic).driver().poll_call()
    }
    #[inline(always)]
    fn status_check_cost(&mut self, nic: usize) -> SimTime {
        self.h.ports.at(nic).driver().poll_status_check()
    }
    #[inline(always)]
    fn txeof_cost(&mut self, nic: usize, n: u32) -> SimTime {
        self.h.ports.at(nic).driver().txeof(n)
    }
}

impl<M: Shape> StackEnv for HostEnv<'_, M> {
    #[inline(always)]
    fn forward_cost(&mut self) -> SimTime {
        self.h.cores.forward_cost(self.now)
    }
    #[inline(always)]
    fn kernel_cost(&mut self, c: &Cost) -> SimTime {
        self.h.cores.hand_mut().kernel_cost(c)
    }
    #[inline(always)]
    fn forward(&mut self, p: Packet) {
        self.h.forward(p, self.now, self.s)
    }
    #[inline(always)]
    fn ipintrq_enqueue(&mut self, p: Packet) {
        if let Err(p) = self.h.cores.ipintrq_enqueue(p) {
            self.h.acct.dropped(p.flow, DropSite::Ipintrq);
        }
    }
    #[inline(always)]
    fn raise_softirq(&mut self, bits: u32) {
        let c = self.h.cores.on();
        self.h.cores.raise_softirq(c, bits)
    }
    #[inline(always)]
    fn raise_softirq_on(&mut self, core: usize, bits: u32) {
        self.h.cores.raise_softirq(core, bits)
    }
    #[inline(always)]
    fn flow_hash(&self, p: &Packet) -> u32 {
        self.h.acct.flow(p.flow as usize).hash
    }
    #[inline(always)]
    fn backlog_drop(&mut self, p: Packet) {
        self.h.acct.dropped(p.flow, DropSite::Ipintrq);
    }
    #[inline(always)]
    fn xdp_drop(&mut self, p: Packet) {
        self.h.acct.dropped(p.flow, DropSite::Xdp);
    }
    #[inline(always)]
    fn xdp_redirect(&mut self, p: Packet) {
        self.h.if_output(p, self.now, self.s)
    }
    #[inline(always)]
    fn xdp_tx(&mut self, p: Packet) {
        let back = self.h.acct.flow(p.flow as usize).in_nic;
        self.h.output_on(back, p, self.now, self.s)
    }
    #[inline(always)]
    fn xsk_rcv(&mut self, p: Packet) {
        self.h.user_enqueue(p)
    }
    #[inline(always)]
    fn app_free(&mut self, p: Packet) {
        self.h.acct.dropped(p.flow, DropSite::Application);
    }
    #[inline(always)]
    fn app_tx(&mut self, p: Packet) {
        self.h.if_output(p, self.now, self.s)
    }
}

impl<M: Shape> SchedEnv for HostEnv<'_, M> {
    #[inline(always)]
    fn now(&self) -> SimTime {
        self.now
    }
    #[inline(always)]
    fn irq_unmask(&mut self, nic: usize) {
        self.h.irq_unmask(nic, self.now, self.s)
    }
    #[inline(always)]
    fn poll_completed(&mut self, nic: usize) {
        self.h.ports.at(nic).dim_sample(self.now)
    }
    #[inline(always)]
    fn wake(&mut self, task: Task) {
        self.h.cores.wake(task)
    }
    #[inline(always)]
    fn wake_on(&mut self, core: usize, task: Task) {
        self.h.cores.wake_on(core, task)
    }
    #[inline(always)]
    fn core(&self) -> usize {
        self.h.cores.on()
    }
    #[inline(always)]
    fn socket_ready(&self) -> bool {
        self.h.user.as_ref().is_some_and(|u| u.has_packet())
    }
    #[inline(always)]
    fn set_alarm(&mut self, after: SimTime, kind: u8, arg: u16) {
        let core = self.h.cores.on() as u8;
        self.s
            .at(self.now + after, Event::PolicyAlarm(kind, core, arg));
    }
    #[inline(always)]
    fn user_level_contended(&self) -> bool {
        self.h.user_level_contended()
    }
}

impl<M: Shape> IsrEnv for HostEnv<'_, M> {
    #[inline(always)]
    fn costs(&mut self, nic: usize) -> &mut DriverCosts {
        self.h.ports.at(nic).driver()
    }
    #[inline(always)]
    fn take_interrupt(&mut self, nic: usize) -> bool {
        self.h.ports.at(nic).take_interrupt()
    }
    #[inline(always)]
    fn stats_overflow(&mut self, nic: usize) -> Option<SimTime> {
        let c = self.h.ports.at(nic).harvest(true)?;
        Some(self.h.cores.hand_mut().kernel_cost(&c))
    }
    #[inline(always)]
    fn rx_error(&mut self, nic: usize) -> Option<SimTime> {
        if !self.h.ports[nic].nic().rx_error_pending() {
            return None;
        }
        Some(self.h.handle_rx_error(nic, self.now, self.s))
    }
    #[inline(always)]
    fn underrun(&mut self, nic: usize) -> Option<SimTime> {
        if !self.h.ports[nic].nic().underrun_pending() {
            return None;
        }
        Some(self.h.handle_underrun(nic, self.now, self.s))
    }
    #[inline(always)]
    fn schedule_poll(&mut self, nic: usize) {
        self.h.schedule_poll(nic, self.now, self.s)
    }
    #[inline(always)]
    fn quiet_until(&self, nic: usize, t: SimTime) -> bool {
        self.h.quiet_until(nic, t) && self.h.no_tick_within(self.now, t)
    }
    #[inline(always)]
    fn nothing_arrives(&self, nic: usize, t: SimTime) -> bool {
        self.h.nothing_arrives(nic, t) && self.h.no_tick_within(self.now, t)
    }
    #[inline(always)]
    fn lone_frame(&self, nic: usize) -> Option<u32> {
        let n = self.h.ports[nic].nic();
        if !self.h.ports[nic].lookahead() || n.rx_ring.len() != 1 {
            return None;
        }
        n.rx_ring.front().map(|p| p.bytes)
    }
    #[inline(always)]
    fn stop(&self) -> SimTime {
        self.h.acct.stop()
    }
}

impl<M: Shape> LineEnv for HostEnv<'_, M> {
    #[inline(always)]
    fn now(&self) -> SimTime {
        self.now
    }
    #[inline(always)]
    fn stop(&self) -> SimTime {
        self.h.acct.stop()
    }
    #[inline(always)]
    fn asserted(&self, nic: usize) -> bool {
        self.h.ports[nic].nic().irq_asserted()
    }
    #[inline(always)]
    fn idle_handler(&mut self, nic: usize) -> SimTime {
        self.h.ports.at(nic).driver().idle()
    }
    #[inline(always)]
    fn merge_bursts(&self) -> bool {
        self.h.merge_bursts
    }
    #[inline(always)]
    fn start_watched(&self, nic: usize) -> bool {
        self.h.ports[nic].moderated()
    }
    #[inline(always)]
    fn save_start(&self, nic: usize) -> StreamRng {
        self.h.ports[nic].driver_rng()
    }
    #[inline(always)]
    fn undo_start(&mut self, nic: usize, saved: StreamRng) {
        self.h.undo_start(nic, saved, self.now)
    }
    #[inline(always)]
    fn handler_step(&mut self, nic: usize, first: bool) -> Step {
        self.h.isr_step(nic, self.now, first, self.s)
    }
    #[inline(always)]
    fn handler_rest(&mut self, nic: usize, t: SimTime) -> SimTime {
        self.h.whole_handler(nic, t, self.now, self.s)
    }
}

impl<M: Shape> SwiEnv for HostEnv<'_, M> {
    #[inline(always)]
    fn netisr(&mut self) -> &mut Netisr {
        self.h.cores.hand_mut().netisr_mut()
    }
    #[inline(always)]
    fn ip_output(&mut self, p: Packet) {
        self.h.forward(p, self.now, self.s)
    }
    #[inline(always)]
    fn swi_begin(&mut self, bit: u32) -> bool {
        self.h.policy_swi_begin(bit, self.now, self.s)
    }
    #[inline(always)]
    fn swi_step(&mut self, bit: u32) -> Step {
        self.h.policy_swi_step(bit, self.now, self.s)
    }
    #[inline(always)]
    fn shared_section(&mut self) -> SimTime {
        self.h.cores.enter_section(self.now)
    }
}

/// Lend a policy's state to one of its steps: take it out of the host (the state is
/// boxed, so this moves a pointer), call `f` with it and a [`HostEnv`], put it back.
/// `None` when the host has no such state. `should_exist` says whether it ought to
/// (some NIC uses the policy): then the state was re-entered while lent, a bug that
/// debug builds stop on.
#[inline(always)]
pub(crate) fn lend<T, R, M: Shape>(
    h: &mut Host<M>,
    now: SimTime,
    s: &mut Scheduler<Event>,
    mut slot: impl FnMut(&mut Host<M>) -> &mut Option<Box<T>>,
    should_exist: impl FnOnce(&Host<M>) -> bool,
    f: impl FnOnce(&mut T, &mut HostEnv<'_, M>) -> R,
) -> Option<R> {
    let Some(mut state) = slot(h).take() else {
        debug_assert!(!should_exist(h), "a policy re-entered while lent to a step");
        return None;
    };
    let r = f(&mut state, &mut HostEnv { h, now, s });
    *slot(h) = Some(state);
    Some(r)
}
