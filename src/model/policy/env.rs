//! What a receive policy sees of the rest of the host.
//!
//! A receive policy (the polling thread, NAPI's poll loop, a taskqueue, the busy-poll
//! loop...) owns its own state and decides what to do next; everything else it touches
//! (the NICs' receive rings, the driver's per-frame costs, the kernel's forwarding path,
//! the interrupt mask, the CPU scheduler) it reaches through [`RxEnv`], the sum of four
//! role traits: [`RingEnv`] (the NIC's rings and transmit completions), [`CostEnv`]
//! (the driver's costs), [`StackEnv`] (the protocol path, its queues, the software
//! interrupts) and [`SchedEnv`] (time, the interrupt mask, wake-ups, timers, cores). The host
//! implements the trait over its components when it routes a task step to a policy;
//! unit tests implement it with `mock::Script`, a host of plain queues and constant
//! costs that records every signal the policy sends.
//!
//! The trait is generic (static dispatch): the host's implementation is inlined into
//! each policy's step.

use crate::model::cost::Cost;
use crate::model::cpu::task::Task;
use crate::model::packet::Packet;
use crate::sim::time::SimTime;

/// The NIC as its driver's receive code sees it: the receive ring, the transmit
/// completions, the start routine and the queue after the receive path.
pub trait RingEnv {
    /// Take the frame at the head of `nic`'s RX ring (the driver's rxeof).
    fn rx_pop(&mut self, nic: usize) -> Option<Packet>;
    /// Whether `nic`'s RX ring is empty.
    fn rx_empty(&self, nic: usize) -> bool;
    /// Transmit descriptors `nic` has completed and not yet reclaimed (txeof's work), if any.
    fn take_tx_completions(&mut self, nic: usize) -> Option<u32>;
    /// Reclaim up to `max` of `nic`'s completed transmit descriptors, whether or not
    /// one asked for an interrupt (a NAPI poll's clean of the TX ring), clearing the
    /// transmit cause when none is left. Returns those reclaimed and those left.
    fn reclaim_tx(&mut self, nic: usize, max: u32) -> (u32, u32);
    /// Whether `nic` interrupts on transmit completions (and so needs its start routine
    /// run by the driver when descriptors are reclaimed).
    fn tx_completion_interrupts(&self, nic: usize) -> bool;
    /// The driver's start routine: frames waiting in `nic`'s if_snd go to free descriptors.
    fn if_start(&mut self, nic: usize);
    /// Whether the queue after the receive path is full (`half`: more than half full)
    /// for the frame at the head of `nic`'s RX ring: the output interface's if_snd, or
    /// the user process's socket queue when a screend-like process consumes frames.
    fn downstream_full(&self, nic: usize, half: bool) -> bool;
}

/// The driver's CPU costs, sampled from its random stream.
pub trait CostEnv {
    /// CPU time of the driver's receive work for one frame of `bytes` on `nic`.
    fn rx_cost(&mut self, nic: usize, bytes: u32) -> SimTime;
    /// CPU time of calling `nic`'s poll routine (NAPI's dev->poll, kern_poll's handler).
    fn poll_call_cost(&mut self, nic: usize) -> SimTime;
    /// CPU time of reading `nic`'s status register in a poll call (POLL_AND_CHECK_STATUS).
    fn status_check_cost(&mut self, nic: usize) -> SimTime;
    /// CPU time of reclaiming `n` transmit descriptors on `nic`.
    fn txeof_cost(&mut self, nic: usize, n: u32) -> SimTime;
}

/// The kernel above the driver: the protocol path, its queues and the software
/// interrupts.
pub trait StackEnv {
    /// CPU time of the protocol path for one frame (ip_input, ip_forward, if_output).
    fn forward_cost(&mut self) -> SimTime;
    /// Sample another kernel cost (from the kernel's random stream).
    fn kernel_cost(&mut self, c: &Cost) -> SimTime;
    /// The end of the protocol work for `p`: if_output on its output interface (or the
    /// user process's queue).
    fn forward(&mut self, p: Packet);
    /// IF_ENQUEUE on ipintrq and schednetisr(NETISR_IP) (dropped when full).
    fn ipintrq_enqueue(&mut self, p: Packet);
    /// Mark software-interrupt bits pending (schednetisr, raise_softirq).
    fn raise_softirq(&mut self, bits: u32);
    /// Mark software-interrupt bits pending on core `core` (raise_softirq there; from
    /// another core, what an IPI does).
    fn raise_softirq_on(&mut self, core: usize, bits: u32);
    /// The flow hash of `p` (skb->hash: the NIC's RSS hash of its flow's tuple).
    fn flow_hash(&self, p: &Packet) -> u32;
    /// A queue after the driver (an RPS backlog) was full: `p` is dropped there
    /// (counted as a drop at ipintrq, the protocol input queue).
    fn backlog_drop(&mut self, p: Packet);
    /// An XDP program in the driver's poll dropped `p` (XDP_DROP).
    fn xdp_drop(&mut self, p: Packet);
    /// An XDP program redirected `p` to its flow's output port (XDP_REDIRECT): the
    /// output driver's transmit, without the protocol path.
    fn xdp_redirect(&mut self, p: Packet);
    /// An XDP program sent `p` back out of the port it came in on (XDP_TX), on the
    /// receiving queue's own transmit queue.
    fn xdp_tx(&mut self, p: Packet);
    /// An XDP program redirected `p` into an XSKMAP (XDP_REDIRECT to an AF_XDP socket):
    /// `p` goes into the socket's RX ring, the `xdpsock` process's queue, or is refused
    /// there when the ring is full (`rx_ring_full`).
    fn xsk_rcv(&mut self, p: Packet);
    /// A user-space application that owns the NIC (a DPDK poll-mode driver's rxonly
    /// engine) received `p` and freed it: the frame ends there (drops site
    /// `application`).
    fn app_free(&mut self, p: Packet);
    /// A user-space application that owns the NIC sent `p` out of its flow's output
    /// port (DPDK's `rte_eth_tx_burst`), without the kernel.
    fn app_tx(&mut self, p: Packet);
}

/// The clock, the interrupt controller and the CPU scheduler.
pub trait SchedEnv {
    /// The current simulated time.
    fn now(&self) -> SimTime;
    /// The driver re-enables `nic`'s interrupt; frames already in its ring interrupt at once.
    fn irq_unmask(&mut self, nic: usize);
    /// A NAPI poll of `nic` completed and its interrupt is about to be re-enabled: the
    /// driver's adaptive moderation (DIM) samples the queue here, if it has one.
    fn poll_completed(&mut self, nic: usize);
    /// Make `task` ready at its level.
    fn wake(&mut self, task: Task);
    /// Whether the user process's socket queue holds a packet (sk_busy_loop_end).
    fn socket_ready(&self) -> bool;
    /// Make `task` ready at its level on core `core`.
    fn wake_on(&mut self, core: usize, task: Task);
    /// The core whose task is running (0 on a host with one core).
    fn core(&self) -> usize;
    /// Arm a one-shot timer of policy `kind` (its registry index) on the current core:
    /// after `after`, [`crate::model::policy::RxPolicy::alarm`] gets `arg` there.
    fn set_alarm(&mut self, after: SimTime, kind: u8, arg: u16);
    /// Whether another normal-priority task waits for the CPU (the user level).
    fn user_level_contended(&self) -> bool;
}

/// Everything a receive policy may use: the four roles. A policy's hooks
/// ([`crate::model::policy::RxPolicy`]) are declared with the whole environment, and a
/// policy's implementation of a hook asks for the roles it uses; its own functions
/// name the roles they touch (`env: &mut (impl RingEnv + CostEnv)`), so a signature
/// shows what a piece of a policy reaches.
pub trait RxEnv: RingEnv + CostEnv + StackEnv + SchedEnv {}

impl<T: RingEnv + CostEnv + StackEnv + SchedEnv> RxEnv for T {}

/// A scripted host for driving one policy alone in unit tests.
#[cfg(test)]
pub(crate) mod mock {
    use super::*;
    use std::collections::VecDeque;

    /// What the policy did to the host, in order.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Signal {
        /// `forward(p)`: packet sequence number.
        Forward(u64),
        /// `ipintrq_enqueue(p)`: packet sequence number.
        Ipintrq(u64),
        /// `raise_softirq(bits)`, or `raise_softirq_on` the mock's current core.
        Raise(u32),
        /// `raise_softirq_on(core, bits)` on another core.
        RaiseOn(usize, u32),
        /// `backlog_drop(p)`: packet sequence number.
        BacklogDrop(u64),
        /// `xdp_drop(p)`: packet sequence number.
        XdpDrop(u64),
        /// `xdp_redirect(p)`: packet sequence number.
        XdpRedirect(u64),
        /// `xdp_tx(p)`: packet sequence number.
        XdpTx(u64),
        /// `app_free(p)`: packet sequence number.
        AppFree(u64),
        /// `xsk_rcv(p)`: packet sequence number.
        Xsk(u64),
        /// `app_tx(p)`: packet sequence number.
        AppTx(u64),
        /// `set_alarm(after, _, arg)`.
        Alarm(SimTime, u16),
        /// `irq_unmask(nic)`.
        Unmask(usize),
        /// `wake(task)`, or `wake_on` the mock's current core.
        Wake(Task),
        /// `wake_on(core, task)` on another core.
        WakeOn(usize, Task),
        /// `if_start(nic)`.
        IfStart(usize),
    }

    /// Plain queues for rings, constant costs, a log of signals.
    #[derive(Clone, Debug, Default)]
    pub struct Script {
        pub now: SimTime,
        pub rings: Vec<VecDeque<Packet>>,
        pub tx_completions: Vec<u32>,
        pub tx_interrupts: bool,
        /// Per NIC: the queue after the receive path is full / more than half full.
        pub full: Vec<bool>,
        pub above_half: Vec<bool>,
        pub contended: bool,
        /// The current core.
        pub core: usize,
        /// Every frame's flow hash.
        pub hash: u32,
        /// The user process's socket holds a packet.
        pub socket_ready: bool,
        /// Constant costs \[ns\]: rx per frame, poll call, txeof per descriptor, forward.
        pub rx_ns: u64,
        pub poll_ns: u64,
        pub txeof_ns: u64,
        pub forward_ns: u64,
        pub log: Vec<Signal>,
    }

    impl Script {
        /// `nics` NICs with `frames[i]` frames (sequence numbers from `100 * i`) in
        /// NIC `i`'s ring; costs 1 us rx, 0.5 us poll call, 0.2 us txeof, 5 us forward.
        pub fn new(frames: &[u64]) -> Script {
            Script {
                rings: frames
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| (0..n).map(|k| pkt(100 * i as u64 + k)).collect())
                    .collect(),
                tx_completions: vec![0; frames.len()],
                full: vec![false; frames.len()],
                above_half: vec![false; frames.len()],
                rx_ns: 1_000,
                poll_ns: 500,
                txeof_ns: 200,
                forward_ns: 5_000,
                ..Default::default()
            }
        }

        /// The signals sent since the last call.
        pub fn take_log(&mut self) -> Vec<Signal> {
            std::mem::take(&mut self.log)
        }
    }

    /// A 64-byte frame with sequence number `seq`.
    pub fn pkt(seq: u64) -> Packet {
        Packet {
            flow: 0,
            bytes: 64,
            seq,
            t_in: SimTime::ZERO,
        }
    }

    /// `ns` nanoseconds.
    pub fn ns(ns: u64) -> SimTime {
        SimTime::from_ns_f64(ns as f64)
    }

    impl RingEnv for Script {
        fn rx_pop(&mut self, nic: usize) -> Option<Packet> {
            self.rings[nic].pop_front()
        }
        fn rx_empty(&self, nic: usize) -> bool {
            self.rings[nic].is_empty()
        }
        fn take_tx_completions(&mut self, nic: usize) -> Option<u32> {
            let k = std::mem::take(&mut self.tx_completions[nic]);
            (k > 0).then_some(k)
        }
        fn reclaim_tx(&mut self, nic: usize, max: u32) -> (u32, u32) {
            let k = self.tx_completions[nic].min(max);
            self.tx_completions[nic] -= k;
            (k, self.tx_completions[nic])
        }
        fn tx_completion_interrupts(&self, _nic: usize) -> bool {
            self.tx_interrupts
        }
        fn if_start(&mut self, nic: usize) {
            self.log.push(Signal::IfStart(nic));
        }
        fn downstream_full(&self, nic: usize, half: bool) -> bool {
            if half {
                self.above_half[nic]
            } else {
                self.full[nic]
            }
        }
    }

    impl CostEnv for Script {
        fn rx_cost(&mut self, _nic: usize, _bytes: u32) -> SimTime {
            ns(self.rx_ns)
        }
        fn poll_call_cost(&mut self, _nic: usize) -> SimTime {
            ns(self.poll_ns)
        }
        fn status_check_cost(&mut self, _nic: usize) -> SimTime {
            ns(300)
        }
        fn txeof_cost(&mut self, _nic: usize, n: u32) -> SimTime {
            ns(self.txeof_ns * n as u64)
        }
    }

    impl StackEnv for Script {
        fn forward_cost(&mut self) -> SimTime {
            ns(self.forward_ns)
        }
        fn kernel_cost(&mut self, c: &Cost) -> SimTime {
            c.sample(&mut crate::sim::rng::RunKey::single(1).stream("mock"))
        }
        fn forward(&mut self, p: Packet) {
            self.log.push(Signal::Forward(p.seq));
        }
        fn ipintrq_enqueue(&mut self, p: Packet) {
            self.log.push(Signal::Ipintrq(p.seq));
        }
        fn raise_softirq(&mut self, bits: u32) {
            self.log.push(Signal::Raise(bits));
        }
        fn raise_softirq_on(&mut self, core: usize, bits: u32) {
            self.log.push(if core == self.core {
                Signal::Raise(bits)
            } else {
                Signal::RaiseOn(core, bits)
            });
        }
        fn flow_hash(&self, _p: &Packet) -> u32 {
            self.hash
        }
        fn backlog_drop(&mut self, p: Packet) {
            self.log.push(Signal::BacklogDrop(p.seq));
        }
        fn xdp_drop(&mut self, p: Packet) {
            self.log.push(Signal::XdpDrop(p.seq));
        }
        fn xdp_redirect(&mut self, p: Packet) {
            self.log.push(Signal::XdpRedirect(p.seq));
        }
        fn xdp_tx(&mut self, p: Packet) {
            self.log.push(Signal::XdpTx(p.seq));
        }
        fn xsk_rcv(&mut self, p: Packet) {
            self.log.push(Signal::Xsk(p.seq));
        }
        fn app_free(&mut self, p: Packet) {
            self.log.push(Signal::AppFree(p.seq));
        }
        fn app_tx(&mut self, p: Packet) {
            self.log.push(Signal::AppTx(p.seq));
        }
    }

    impl SchedEnv for Script {
        fn now(&self) -> SimTime {
            self.now
        }
        fn irq_unmask(&mut self, nic: usize) {
            self.log.push(Signal::Unmask(nic));
        }
        fn poll_completed(&mut self, _nic: usize) {}
        fn wake(&mut self, task: Task) {
            self.log.push(Signal::Wake(task));
        }
        fn wake_on(&mut self, core: usize, task: Task) {
            self.log.push(if core == self.core {
                Signal::Wake(task)
            } else {
                Signal::WakeOn(core, task)
            });
        }
        fn core(&self) -> usize {
            self.core
        }
        fn socket_ready(&self) -> bool {
            self.socket_ready
        }
        fn set_alarm(&mut self, after: SimTime, _kind: u8, arg: u16) {
            self.log.push(Signal::Alarm(after, arg));
        }
        fn user_level_contended(&self) -> bool {
            self.contended
        }
    }
}
