//! A user process competing with the network for the CPU.
//!
//! Two kinds, as in Mogul & Ramakrishnan's experiments:
//!
//! - `cpu-bound`: always runnable (a compute job). It runs in slices of the kernel's
//!   `timeslice_ns`, round robin with other normal-priority tasks (ksoftirqd), so that
//!   each gets an equal share of what the higher levels leave; its progress is its CPU
//!   time divided by `work_unit` (e.g. loop iterations), reported as work units/s.
//! - `screend`: a user-level packet consumer (Mogul's screend firewall daemon). Every
//!   forwarded packet first goes to its queue (`queue_len`, drops counted as
//!   `user_queue`); the process takes each, spends `per_packet` on it, and hands it to
//!   if_output. It sleeps when its queue is empty -- unless it busy-polls: with
//!   `busy_read_us` > 0 (the socket's SO_BUSY_POLL, net.core.busy_read), a recv() that
//!   finds the queue empty first spins in napi_busy_loop on the NAPI instance its last
//!   packet came from (sk_napi_id), polling that device itself, until a packet is
//!   queued or `busy_read_us` has passed (the `napi` policy does the polling:
//!   [`crate::model::policy::napi`]). With `busy_poll_us` > 0 (net.core.busy_poll) the process
//!   waits for its socket in epoll_wait() instead, whose ep_busy_loop runs the same
//!   napi_busy_loop on the socket's NAPI instance for `busy_poll_us` before it sleeps.
//!   With `epoll` and `prefer_busy_poll` (per-epoll settings, EPIOCSPARAMS) the loop
//!   runs even with `busy_poll_us` 0: one poll (Linux 6.13's ep_busy_loop_on), whose
//!   end suspends or resumes the device's interrupt under `irq_suspend_timeout_ns`.
//!
//!   With `nonblocking` the process reads with a non-blocking recvfrom() in a loop that
//!   never sleeps: a call on an empty socket is one round of the busy loop, then the
//!   next call.
//! - `xdpsock`: the application of an AF_XDP socket, Linux's samples/bpf/xdpsock in its
//!   rxdrop benchmark (5.11): its queue is the socket's RX ring (`rx_ring`, 2,048),
//!   which an XDP program with the `xsk` action fills from the driver's poll; it takes
//!   the ring's descriptors in batches of `batch_size` (`per_batch` + `per_packet`
//!   each), frees each frame, and on an empty ring spins (`empty_peek`), or with
//!   `busy_poll` (`-B`) calls recvfrom(), `per_call` plus one round of the busy loop
//!   with SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET `batch_size`. Counters
//!   `xsk.rx_ring_full` (frames the full ring refused, XDP_STATISTICS' name) and
//!   `xsk.empty_peeks`.
//!
//! Both run at user priority: every interrupt, softirq and kernel thread preempts them,
//! which is why they starve under receive livelock. Among normal-priority tasks they
//! share the core by the kernel's scheduler: round robin by `timeslice_ns` (cpu-bound
//! yields between slices; screend runs until its queue is empty), or Linux's CFS
//! ([`crate::model::cpu::cfs`]), under which either yields at its next step once
//! need_resched is set (a busy loop in progress runs to its end first).
//!
//! Parameters ([`UserConfig`], tagged by `kind`): cpu-bound `work_unit` (default
//! 1,000 ns); screend `per_packet` (required),
//! `queue_len` (default 32), `busy_read_us` and `busy_poll_us` (default 0: off),
//! `prefer_busy_poll` (SO_PREFER_BUSY_POLL, default false) and `busy_poll_budget`
//! (SO_BUSY_POLL_BUDGET, default 8 frames), both Linux 5.11, and `epoll` (default
//! false).
//!
//! Reported per point: `user.cpu_share`, `user.work_per_s`; counters `user.packets`.

use crate::model::cost::{Cost, CostParam};
use crate::model::cpu::task::Step;
use crate::model::packet::Packet;
use crate::model::policy::SocketBusyPoll;
use crate::model::queue::BoundedQueue;
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A user process as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
// A configuration read once per run: the size of its largest kind does not matter.
#[allow(clippy::large_enum_variant)]
pub enum UserConfig {
    /// A compute job that is always runnable.
    CpuBound {
        /// CPU time of one unit of work \[cost\] (default 1,000 ns); a distribution is
        /// allowed, but only its mean counts (work done = CPU time / mean unit).
        #[serde(default = "d_unit")]
        work_unit: CostParam,
    },
    /// A user-level packet consumer between the kernel's input and output.
    Screend {
        /// CPU time per packet (required) \[cost\].
        per_packet: CostParam,
        /// Queue between kernel and process \[packets\] (default 32).
        #[serde(default = "d_qlen")]
        #[schemars(range(min = 1))]
        queue_len: u32,
        /// Socket busy polling (SO_BUSY_POLL / net.core.busy_read): how long a recv()
        /// that finds the queue empty polls the device of its last packet before it
        /// sleeps \[us\] (default 0: off; Linux recommends 50). Needs the `napi` policy
        /// on the receiving NICs.
        #[serde(default, skip_serializing_if = "is_zero")]
        #[schemars(range(min = 0.0))]
        busy_read_us: f64,
        /// Busy polling in epoll_wait() (net.core.busy_poll): the process waits for its
        /// socket in epoll_wait(), whose ep_busy_loop polls the socket's NAPI instance
        /// (the same napi_busy_loop as recv()'s) for this long before it sleeps \[us\]
        /// (default 0: off; Linux recommends 50). When set, it is the process's busy
        /// window, in place of `busy_read_us`. Needs the `napi` policy on the
        /// receiving NICs.
        #[serde(default, skip_serializing_if = "is_zero")]
        #[schemars(range(min = 0.0))]
        busy_poll_us: f64,
        /// SO_PREFER_BUSY_POLL (Linux 5.11, commit 7fd3253a7de6 "net: Introduce
        /// preferred busy-polling"): the process's busy loop marks a device the
        /// softirq has scheduled NAPI_STATE_PREFER_BUSY_POLL, so that the softirq's
        /// next full-weight poll completes it and returns instead of polling it again
        /// (the busy loop then takes it); and busy_poll_stop, when the device has both
        /// `defer_hard_irqs` and `gro_flush_timeout_ns`, arms the hrtimer and leaves the
        /// interrupt masked instead of handing the device back (default false). Needs
        /// `busy_read_us` or `busy_poll_us`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        prefer_busy_poll: bool,
        /// SO_BUSY_POLL_BUDGET (Linux 5.11): frames one poll of the busy loop may take
        /// \[frames\] (default 8, BUSY_POLL_BUDGET in include/net/busy_poll.h; the socket
        /// option takes at most 65,535, U16_MAX; setting it needs CAP_NET_ADMIN).
        #[serde(default = "d_budget", skip_serializing_if = "is_d_budget")]
        #[schemars(range(min = 1, max = 65535))]
        busy_poll_budget: u32,
        /// The process waits for its socket in epoll_wait() (default false; a
        /// `busy_poll_us` above 0 implies it), with its busy-poll settings given per
        /// epoll instance as EPIOCSPARAMS (Linux 6.9) sets them. With
        /// `prefer_busy_poll`, epoll_wait() busy-polls even with `busy_poll_us` 0:
        /// ep_busy_loop_on (fs/eventpoll.c, Linux 6.13) is true when the epoll
        /// instance prefers busy polling, and napi_busy_loop then polls the device
        /// once before its zero timeout ends the loop -- the one-poll loop whose end
        /// suspends or resumes the interrupt under `irq_suspend_timeout_ns`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        epoll: bool,
        /// The process reads its socket with a non-blocking recvfrom() (MSG_DONTWAIT or
        /// O_NONBLOCK) in a loop that never sleeps (default false): a recvfrom() that
        /// finds the socket empty runs one round of napi_busy_loop (sk_busy_loop with
        /// `nonblock`: no loop_end, so one poll attempt, and busy_poll_stop's poll if it
        /// took the device) and returns EAGAIN, and the process calls it again at once.
        /// It leaves the CPU only when the scheduler preempts it. Needs `busy_read_us`
        /// (any value above 0: only whether busy polling is on counts); a process that
        /// has not yet received a packet has no NAPI instance to poll and waits for its
        /// first packet asleep (an approximation: the real loop spins on EAGAIN).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        nonblocking: bool,
    },
    /// The AF_XDP socket's application of Linux's `samples/bpf/xdpsock_user.c` in its
    /// `rxdrop` benchmark (`-r`, Linux 5.11), on an AF_XDP socket in zero-copy mode fed
    /// by an XDP program with `xdp.action` `xsk`. Its queue is the socket's RX ring.
    /// `rx_drop_all` calls `rx_drop` in a loop that never sleeps (L1243-1267):
    /// `xsk_ring_cons__peek` takes up to `batch_size` descriptors (L1206); each costs
    /// `per_packet` (the descriptor's address and length read, the address written to
    /// the fill ring, L1226-1235) and the batch `per_batch` (the fill ring's reserve and
    /// submit and the RX ring's release, L1215, L1238-1239). A peek that finds the ring
    /// empty costs `empty_peek`; with `busy_poll` (`-B`) it is followed by
    /// `recvfrom(MSG_DONTWAIT)` (L1208-1211): `per_call` (the system call into
    /// `xsk_recvmsg`), then one round of napi_busy_loop (`sk_busy_loop(sk, 1)`,
    /// net/xdp/xsk.c L583-584) with SO_PREFER_BUSY_POLL 1, SO_BUSY_POLL 20 us and
    /// SO_BUSY_POLL_BUDGET `batch_size` (`apply_setsockopt`, L1491-1512). Without
    /// `busy_poll` the loop calls recvfrom() only when the driver asks for a wake-up
    /// (XDP_USE_NEED_WAKEUP, ice sets it when its ring is empty or its refill failed,
    /// ice_xsk.c L647-651): under a flood it never does, and the model spins. Each frame
    /// ends in the application (freed: drop site `application`).
    Xdpsock {
        /// CPU time per frame: the descriptor read and the fill-ring write \[cost\]
        /// (required).
        per_packet: CostParam,
        /// CPU time per batch: the peek, the fill ring's reserve and submit, the RX
        /// ring's release \[cost\] (default 0).
        #[serde(default)]
        per_batch: CostParam,
        /// CPU time of a peek that finds the RX ring empty \[cost\] (default 20 ns, an
        /// estimate: two loads of the ring's producer index and a compare; more than 0:
        /// it paces the loop).
        #[serde(default = "d_empty_peek")]
        empty_peek: CostParam,
        /// CPU time of the recvfrom() system call besides the busy loop it runs: entry
        /// and exit, `xsk_recvmsg`'s checks \[cost\] (default 0; used with `busy_poll`).
        #[serde(default)]
        per_call: CostParam,
        /// Descriptors a peek takes at most, and with `busy_poll` the socket's
        /// SO_BUSY_POLL_BUDGET \[frames\] (xdpsock's `-b`, default 64: `opt_batch_size`,
        /// L79).
        #[serde(default = "d_batch")]
        #[schemars(range(min = 1, max = 65535))]
        batch_size: u32,
        /// The socket's RX ring \[descriptors\] (default 2,048: `cfg.rx_size =
        /// XSK_RING_CONS__DEFAULT_NUM_DESCS`, xdpsock_user.c L867, tools/lib/bpf/xsk.h
        /// L192).
        #[serde(default = "d_xsk_ring")]
        #[schemars(range(min = 1))]
        rx_ring: u32,
        /// xdpsock's `-B`: preferred busy polling from recvfrom() on an empty ring
        /// (default false). Needs the `napi` policy on the receiving NIC.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        busy_poll: bool,
    },
}

fn d_empty_peek() -> CostParam {
    CostParam::ns(20.0)
}

fn d_batch() -> u32 {
    64
}

fn d_xsk_ring() -> u32 {
    2048
}

fn d_budget() -> u32 {
    8
}

fn is_d_budget(v: &u32) -> bool {
    *v == d_budget()
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn d_unit() -> CostParam {
    CostParam::ns(1000.0)
}
fn d_qlen() -> u32 {
    32
}

impl UserConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        match self {
            UserConfig::CpuBound { work_unit } => match work_unit.check() {
                Err(e) => p.push("work_unit", e),
                Ok(()) if work_unit.mean_ns(1.0) <= 0.0 => {
                    p.push("work_unit", "must be greater than 0")
                }
                Ok(()) => {}
            },
            UserConfig::Xdpsock {
                per_packet,
                per_batch,
                empty_peek,
                per_call,
                batch_size,
                rx_ring,
                busy_poll: _,
            } => {
                for (name, c) in [
                    ("per_packet", per_packet),
                    ("per_batch", per_batch),
                    ("empty_peek", empty_peek),
                    ("per_call", per_call),
                ] {
                    if let Err(e) = c.check() {
                        p.push(name, e);
                    }
                }
                if empty_peek.check().is_ok() && empty_peek.mean_ns(1.0) <= 0.0 {
                    p.push(
                        "empty_peek",
                        "must be more than 0: the loop spins on it, and a spin that takes \
                         no time would never let time advance",
                    );
                }
                if !(1..=65_535).contains(batch_size) {
                    p.push(
                        "batch_size",
                        format!(
                            "must be 1 to 65535 frames (it is also SO_BUSY_POLL_BUDGET, at \
                             most U16_MAX), got {batch_size}"
                        ),
                    );
                }
                p.at_least("rx_ring", *rx_ring as u64, 1, "descriptor");
            }
            UserConfig::Screend {
                per_packet,
                queue_len,
                busy_read_us,
                busy_poll_us,
                prefer_busy_poll,
                busy_poll_budget,
                epoll,
                nonblocking,
            } => {
                if *nonblocking && *busy_read_us == 0.0 {
                    p.push(
                        "nonblocking",
                        "a non-blocking recvfrom() loop is modelled with busy polling only: \
                         set busy_read_us (the letter's and the model's one poll per call)",
                    );
                }
                if *nonblocking && (*busy_poll_us > 0.0 || *epoll) {
                    p.push(
                        "nonblocking",
                        "a non-blocking recvfrom() loop does not wait in epoll_wait(): unset \
                         busy_poll_us and epoll",
                    );
                }
                if let Err(e) = per_packet.check() {
                    p.push("per_packet", e);
                }
                if !(1..=65_535).contains(busy_poll_budget) {
                    p.push(
                        "busy_poll_budget",
                        format!(
                            "must be 1 to 65535 frames (SO_BUSY_POLL_BUDGET takes at most \
                             U16_MAX), got {busy_poll_budget}"
                        ),
                    );
                }
                if *prefer_busy_poll && *busy_read_us == 0.0 && *busy_poll_us == 0.0 && !*epoll {
                    p.push(
                        "prefer_busy_poll",
                        "has no effect without busy polling: set busy_read_us, busy_poll_us \
                         or epoll",
                    );
                }
                p.at_least("queue_len", *queue_len as u64, 1, "packet");
                for (name, v) in [
                    ("busy_read_us", busy_read_us),
                    ("busy_poll_us", busy_poll_us),
                ] {
                    if !(v.is_finite() && *v >= 0.0) {
                        p.push(name, format!("must be a duration of 0 us or more, got {v}"));
                    }
                }
            }
        }
    }
}

/// The user process during a run.
#[derive(Clone, Debug)]
pub struct UserProcess {
    quantum: SimTime,
    unit_ns: f64,
    per_packet: Option<Cost>,
    queue: Option<BoundedQueue<Packet>>,
    current: Option<Packet>,
    rng: StreamRng,
    /// Socket busy polling: the longest busy loop, in recv() (`busy_read_us`) or in
    /// epoll_wait() (`busy_poll_us`) (0: off, unless `busy_loop_on`).
    busy_window: SimTime,
    /// Whether a socket found empty starts a busy loop: a `busy_window` above 0, or
    /// epoll_wait() with SO_PREFER_BUSY_POLL (one poll with a zero window).
    busy_loop_on: bool,
    /// The NIC (NAPI instance) of the last packet it took (sk_napi_id).
    napi_nic: Option<usize>,
    /// The deadline of the busy loop in progress, if one is.
    busy_until: Option<SimTime>,
    /// The socket's SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET.
    busy_opts: SocketBusyPoll,
    /// recvfrom() is non-blocking, in a loop that never sleeps: each call on an empty
    /// socket is one busy-poll round.
    nonblocking: bool,
    /// The xdpsock rxdrop loop's own state, for that kind.
    xsk: Option<XskApp>,
    /// Packets handled (screend) -- counter.
    pub packets: u64,
}

/// The xdpsock rxdrop loop's batches and costs ([`UserConfig::Xdpsock`]).
#[derive(Clone, Debug)]
struct XskApp {
    batch_size: u32,
    per_batch: Cost,
    empty_peek: Cost,
    per_call: Cost,
    /// Descriptors left of the batch the last peek took.
    batch_left: u32,
    /// Peeks that found the RX ring empty -- counter (xdpsock's `rx_empty_polls` counts
    /// those followed by a recvfrom()).
    empty_peeks: u64,
}

impl UserProcess {
    /// The process from its configuration.
    pub fn new(
        cfg: &UserConfig,
        timeslice: SimTime,
        clock_mhz: f64,
        rng: StreamRng,
    ) -> UserProcess {
        match cfg {
            UserConfig::CpuBound { work_unit } => UserProcess {
                quantum: timeslice,
                unit_ns: work_unit.mean_ns(clock_mhz),
                per_packet: None,
                queue: None,
                current: None,
                rng,
                busy_window: SimTime::ZERO,
                busy_loop_on: false,
                napi_nic: None,
                busy_until: None,
                busy_opts: SocketBusyPoll::default(),
                nonblocking: false,
                xsk: None,
                packets: 0,
            },
            UserConfig::Xdpsock {
                per_packet,
                per_batch,
                empty_peek,
                per_call,
                batch_size,
                rx_ring,
                busy_poll,
            } => UserProcess {
                quantum: SimTime::ZERO,
                unit_ns: 0.0,
                per_packet: Some(per_packet.build(clock_mhz)),
                queue: Some(BoundedQueue::new(*rx_ring as usize)),
                current: None,
                rng,
                // recvfrom(MSG_DONTWAIT): one round of the busy loop.
                busy_window: SimTime::ZERO,
                busy_loop_on: *busy_poll,
                napi_nic: None,
                busy_until: None,
                busy_opts: SocketBusyPoll {
                    prefer_busy_poll: *busy_poll,
                    budget: *batch_size,
                    epoll: false,
                },
                nonblocking: true,
                xsk: Some(XskApp {
                    batch_size: *batch_size,
                    per_batch: per_batch.build(clock_mhz),
                    empty_peek: empty_peek.build(clock_mhz),
                    per_call: per_call.build(clock_mhz),
                    batch_left: 0,
                    empty_peeks: 0,
                }),
                packets: 0,
            },
            UserConfig::Screend {
                per_packet,
                queue_len,
                busy_read_us,
                busy_poll_us,
                prefer_busy_poll,
                busy_poll_budget,
                epoll,
                nonblocking,
            } => UserProcess {
                quantum: SimTime::ZERO,
                unit_ns: 0.0,
                per_packet: Some(per_packet.build(clock_mhz)),
                queue: Some(BoundedQueue::new(*queue_len as usize)),
                current: None,
                rng,
                // A non-blocking call busy-polls once: a zero window.
                busy_window: SimTime::from_ns_f64(
                    if *nonblocking {
                        0.0
                    } else if *busy_poll_us > 0.0 {
                        *busy_poll_us
                    } else {
                        *busy_read_us
                    } * 1e3,
                ),
                busy_loop_on: *busy_read_us > 0.0
                    || *busy_poll_us > 0.0
                    || (*epoll && *prefer_busy_poll),
                napi_nic: None,
                busy_until: None,
                busy_opts: SocketBusyPoll {
                    prefer_busy_poll: *prefer_busy_poll,
                    budget: *busy_poll_budget,
                    epoll: *epoll || *busy_poll_us > 0.0,
                },
                nonblocking: *nonblocking,
                xsk: None,
                packets: 0,
            },
        }
    }

    /// Whether the frames it takes end in it (the xdpsock rxdrop application frees
    /// them) rather than going on to if_output (screend).
    pub fn releases(&self) -> bool {
        self.xsk.is_some()
    }

    /// The CPU time of the system call that starts a busy loop (xdpsock's recvfrom():
    /// `per_call`; zero for screend, whose call is in its per-packet cost).
    pub fn call_cost(&mut self) -> SimTime {
        match &self.xsk {
            Some(x) => x.per_call.sample(&mut self.rng),
            None => SimTime::ZERO,
        }
    }

    /// The socket's busy-polling options (SO_PREFER_BUSY_POLL, SO_BUSY_POLL_BUDGET).
    pub fn busy_opts(&self) -> SocketBusyPoll {
        self.busy_opts
    }

    /// Whether recvfrom() is non-blocking in a loop that never sleeps.
    pub fn nonblocking(&self) -> bool {
        self.nonblocking
    }

    /// The packet in hand came from NIC `nic`: the socket's NAPI instance
    /// (sk_napi_id), which its busy loops poll.
    pub fn took_from(&mut self, nic: usize) {
        self.napi_nic = Some(nic);
    }

    /// The busy loop in progress, if one is: its deadline and the NIC it polls.
    pub fn busy_loop(&self) -> Option<(SimTime, usize)> {
        Some((self.busy_until?, self.napi_nic?))
    }

    /// recv() found the socket empty: a busy loop (sk_busy_loop) begins at `now`, if
    /// busy polling is on and the socket has a NAPI instance. Its deadline and NIC.
    pub fn begin_busy_loop(&mut self, now: SimTime) -> Option<(SimTime, usize)> {
        if !self.busy_loop_on {
            return None;
        }
        let nic = self.napi_nic?;
        let deadline = now + self.busy_window;
        self.busy_until = Some(deadline);
        Some((deadline, nic))
    }

    /// The busy loop is over (its deadline passed or it found nothing).
    pub fn end_busy_loop(&mut self) {
        self.busy_until = None;
    }

    /// Whether forwarded packets go through this process.
    pub fn consumes_packets(&self) -> bool {
        self.queue.is_some()
    }

    /// Whether its queue holds a packet (the socket is readable).
    pub fn has_packet(&self) -> bool {
        self.queue.as_ref().is_some_and(|q| !q.is_empty())
    }

    /// The packet in hand (screend).
    pub fn current(&self) -> Option<&Packet> {
        self.current.as_ref()
    }

    /// Whether its queue is full.
    pub fn queue_full(&self) -> bool {
        self.queue.as_ref().is_some_and(|q| q.is_full())
    }

    /// Whether its queue is more than half full.
    pub fn queue_above_half(&self) -> bool {
        self.queue
            .as_ref()
            .is_some_and(|q| q.len() * 2 > q.capacity())
    }

    /// Packets held in its queue or in hand.
    pub fn held(&self) -> usize {
        self.queue.as_ref().map_or(0, |q| q.len()) + self.current.is_some() as usize
    }

    /// Unit cost of the cpu-bound job \[ns\] (0 for screend).
    pub fn unit_ns(&self) -> f64 {
        self.unit_ns
    }

    /// A forwarded packet for screend's queue: `Err` (with the packet) when the queue
    /// is full or the process does not consume packets.
    pub fn enqueue(&mut self, p: Packet) -> Result<(), Packet> {
        match self.queue.as_mut() {
            Some(q) => q.push(p),
            None => Err(p),
        }
    }

    /// The first half of a step: the packet screend finished with, for if_output
    /// (before it looks at its queue again).
    pub fn finished(&mut self) -> Option<Packet> {
        let p = self.current.take()?;
        self.packets += 1;
        Some(p)
    }

    /// The second half of a step (`first`: the process has just been given the CPU;
    /// `contended`: another normal-priority task should have the CPU -- one waits under
    /// round robin, need_resched under CFS; `resched`: need_resched under CFS, always
    /// false under round robin). cpu-bound: a slice, or yield between slices when
    /// contended; screend: yield when rescheduled (a return to user mode with
    /// need_resched set), else the next packet of its queue, or sleep.
    pub fn next(&mut self, first: bool, contended: bool, resched: bool) -> Step {
        let Some(q) = self.queue.as_mut() else {
            if !first && contended {
                return Step::Yield;
            }
            return Step::Run(self.quantum);
        };
        if resched && !first {
            return Step::Yield;
        }
        if let Some(x) = self.xsk.as_mut() {
            // xdpsock's rx_drop: a peek takes up to a batch; an empty one spins (or,
            // with busy polling, ends the step: the host runs recvfrom()'s busy loop).
            let Some(p) = q.pop() else {
                x.batch_left = 0;
                x.empty_peeks += 1;
                if self.busy_loop_on && self.napi_nic.is_some() {
                    return Step::Done;
                }
                if !first && contended {
                    return Step::Yield;
                }
                return Step::Run(x.empty_peek.sample(&mut self.rng));
            };
            let mut t = SimTime::ZERO;
            if x.batch_left == 0 {
                x.batch_left = x.batch_size.min(q.len() as u32 + 1);
                t += x.per_batch.sample(&mut self.rng);
            }
            x.batch_left -= 1;
            self.current = Some(p);
            let c = self.per_packet.as_ref().expect("xdpsock cost");
            return Step::Run(t + c.sample(&mut self.rng));
        }
        match q.pop() {
            Some(p) => {
                self.current = Some(p);
                let c = self.per_packet.as_ref().expect("screend cost");
                Step::Run(c.sample(&mut self.rng))
            }
            None => Step::Done,
        }
    }

    /// Publish the counters.
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        c.insert("user.packets".into(), self.packets as f64);
        match (&self.queue, &self.xsk) {
            // The socket's XDP_STATISTICS name (net/xdp/xsk.c L1069) and xdpsock's.
            (Some(q), Some(x)) => {
                c.insert("xsk.rx_ring_full".into(), q.drops as f64);
                c.insert("xsk.empty_peeks".into(), x.empty_peeks as f64);
            }
            (Some(q), None) => {
                c.insert("user.queue_drops".into(), q.drops as f64);
            }
            (None, _) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::RunKey;

    fn pkt(seq: u64) -> Packet {
        Packet {
            flow: 0,
            bytes: 64,
            seq,
            t_in: SimTime::ZERO,
        }
    }

    fn process(json: &str) -> UserProcess {
        let cfg: UserConfig = serde_json::from_str(json).expect("config");
        UserProcess::new(
            &cfg,
            SimTime::from_ns_f64(10_000.0),
            1000.0,
            RunKey::single(1).stream("user"),
        )
    }

    #[test]
    fn a_cpu_bound_job_runs_slices_and_yields_between_them_only_when_contended() {
        let mut u = process(r#"{ "kind": "cpu-bound" }"#);
        let slice = Step::Run(SimTime::from_ns_f64(10_000.0));
        assert_eq!(u.next(true, true, false), slice);
        assert_eq!(u.next(false, false, false), slice);
        assert_eq!(u.next(false, true, false), Step::Yield);
        assert!(!u.consumes_packets());
        assert_eq!(u.enqueue(pkt(1)), Err(pkt(1)));
    }

    #[test]
    fn epoll_with_prefer_busy_poll_busy_polls_with_a_zero_window() {
        // EPIOCSPARAMS busy_poll_usecs 0 with prefer_busy_poll: ep_busy_loop_on holds,
        // so a socket found empty starts a loop whose deadline is now (one poll).
        let mut u = process(
            r#"{ "kind": "screend", "per_packet": 1000, "epoll": true,
                 "prefer_busy_poll": true, "busy_poll_budget": 64 }"#,
        );
        let now = SimTime::from_ns_f64(5_000.0);
        assert_eq!(u.begin_busy_loop(now), None, "no NAPI instance yet");
        u.took_from(0);
        assert_eq!(u.begin_busy_loop(now), Some((now, 0)));
        let o = u.busy_opts();
        assert!(o.epoll && o.prefer_busy_poll && o.budget == 64);
        // Without the preference (or without epoll) a zero window is no loop, and the
        // loader says the preference would have no effect.
        let mut u = process(r#"{ "kind": "screend", "per_packet": 1000, "epoll": true }"#);
        u.took_from(0);
        assert_eq!(u.begin_busy_loop(now), None);
        let cfg: UserConfig = serde_json::from_str(
            r#"{ "kind": "screend", "per_packet": 1000, "prefer_busy_poll": true }"#,
        )
        .expect("config");
        let mut p = Problems::default();
        cfg.validate(&mut p);
        assert!(format!("{p:?}").contains("prefer_busy_poll"), "{p:?}");
    }

    #[test]
    fn a_nonblocking_reader_busy_polls_once_per_call_and_yields_when_rescheduled() {
        // recvfrom(MSG_DONTWAIT) with busy_read: sk_busy_loop with nonblock, one round
        // (a zero window), whatever busy_read_us says.
        let mut u = process(
            r#"{ "kind": "screend", "per_packet": 1000, "busy_read_us": 20,
                 "nonblocking": true }"#,
        );
        assert!(u.nonblocking());
        u.took_from(0);
        let now = SimTime::from_ns_f64(5_000.0);
        assert_eq!(u.begin_busy_loop(now), Some((now, 0)));
        // Under CFS with need_resched set it yields before its next request (not on
        // the step that gives it the CPU).
        assert!(u.enqueue(pkt(1)).is_ok());
        assert_eq!(u.next(false, true, true), Step::Yield);
        assert_eq!(
            u.next(true, true, true),
            Step::Run(SimTime::from_ns_f64(1_000.0))
        );
        // Refused: without busy polling, or waiting in epoll_wait().
        for json in [
            r#"{ "kind": "screend", "per_packet": 1000, "nonblocking": true }"#,
            r#"{ "kind": "screend", "per_packet": 1000, "nonblocking": true,
                 "busy_read_us": 20, "epoll": true }"#,
        ] {
            let cfg: UserConfig = serde_json::from_str(json).expect("config");
            let mut p = Problems::default();
            cfg.validate(&mut p);
            assert!(format!("{p:?}").contains("nonblocking"), "{p:?}");
        }
    }

    #[test]
    fn xdpsock_takes_batches_frees_each_frame_and_spins_or_busy_polls_when_empty() {
        // rxdrop with -b 4: a peek takes up to 4 descriptors; the batch costs 20 ns on
        // its first frame, each frame 10 ns (xdpsock_user.c rx_drop).
        let mut u = process(
            r#"{ "kind": "xdpsock", "per_packet": 10, "per_batch": 20, "empty_peek": 5,
                 "per_call": 700, "batch_size": 4, "rx_ring": 6 }"#,
        );
        assert!(u.releases() && u.nonblocking() && u.consumes_packets());
        // Six frames fit the RX ring of 6; a seventh is refused (rx_ring_full).
        for k in 0..7 {
            let _ = u.enqueue(pkt(k));
        }
        let ns = |x: f64| Step::Run(SimTime::from_ns_f64(x));
        // Batches of 4 and 2: 30, 10, 10, 10, then 30, 10.
        let steps: Vec<Step> = (0..6).map(|k| u.next(k == 0, false, false)).collect();
        assert_eq!(
            steps,
            [ns(30.0), ns(10.0), ns(10.0), ns(10.0), ns(30.0), ns(10.0)]
        );
        assert_eq!(u.finished(), Some(pkt(5)));
        // The ring is empty: without busy polling the loop spins (5 ns a peek), and
        // yields only when the scheduler wants the core (need_resched).
        assert_eq!(u.next(false, false, false), ns(5.0));
        assert_eq!(u.next(false, true, true), Step::Yield);
        let mut c = BTreeMap::new();
        u.counters(&mut c);
        assert_eq!(c["xsk.rx_ring_full"], 1.0);
        assert_eq!(c["xsk.empty_peeks"], 1.0);
        // Without busy polling no system call is made and there is no busy loop.
        u.took_from(0);
        assert_eq!(u.begin_busy_loop(SimTime::ZERO), None);
        // With -B: an empty peek ends the step once the socket has a NAPI instance
        // (the host then runs recvfrom()'s one busy-poll round, `per_call` 700 ns),
        // whose budget is the batch size, with SO_PREFER_BUSY_POLL.
        let mut b = process(
            r#"{ "kind": "xdpsock", "per_packet": 10, "per_call": 700, "batch_size": 8,
                 "busy_poll": true }"#,
        );
        let o = b.busy_opts();
        assert!(o.prefer_busy_poll && !o.epoll && o.budget == 8);
        // Before the first frame (no NAPI id) it spins on the default 20 ns peek.
        assert_eq!(b.next(true, false, false), ns(20.0));
        b.took_from(0);
        assert_eq!(b.next(false, false, false), Step::Done);
        let now = SimTime::from_ns_f64(1_000.0);
        assert_eq!(b.begin_busy_loop(now), Some((now, 0)));
        assert_eq!(b.call_cost(), SimTime::from_ns_f64(700.0));
        // The defaults: batch 64 (opt_batch_size), RX ring 2,048.
        let d: UserConfig =
            serde_json::from_str(r#"{ "kind": "xdpsock", "per_packet": 1 }"#).expect("config");
        let UserConfig::Xdpsock {
            batch_size,
            rx_ring,
            ..
        } = d
        else {
            unreachable!()
        };
        assert_eq!((batch_size, rx_ring), (64, 2048));
        // Refused: a zero spin, a batch above U16_MAX, an empty ring.
        let cfg: UserConfig = serde_json::from_str(
            r#"{ "kind": "xdpsock", "per_packet": 1, "empty_peek": 0,
                 "batch_size": 70000, "rx_ring": 0 }"#,
        )
        .expect("config");
        let mut p = Problems::default();
        cfg.validate(&mut p);
        let paths: Vec<&str> = p.list.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["empty_peek", "batch_size", "rx_ring"], "{p:?}");
        // screend's system call is in its per-packet cost.
        let mut s = process(r#"{ "kind": "screend", "per_packet": 1000 }"#);
        assert_eq!((s.releases(), s.call_cost()), (false, SimTime::ZERO));
    }

    #[test]
    fn screend_takes_each_packet_spends_its_cost_and_hands_it_on() {
        let mut u = process(r#"{ "kind": "screend", "per_packet": 30000, "queue_len": 2 }"#);
        assert_eq!(u.next(true, false, false), Step::Done);
        assert!(u.enqueue(pkt(1)).is_ok() && u.enqueue(pkt(2)).is_ok());
        // Two in a queue of 2: full, and more than half full.
        assert!(u.queue_full() && u.queue_above_half());
        assert_eq!(u.enqueue(pkt(3)), Err(pkt(3)));
        assert_eq!(u.finished(), None);
        assert_eq!(
            u.next(true, false, false),
            Step::Run(SimTime::from_ns_f64(30_000.0))
        );
        assert_eq!(u.held(), 2);
        assert_eq!(u.finished(), Some(pkt(1)));
        assert_eq!(
            u.next(false, false, false),
            Step::Run(SimTime::from_ns_f64(30_000.0))
        );
        assert_eq!(u.finished(), Some(pkt(2)));
        assert_eq!(u.next(false, false, false), Step::Done);
        assert_eq!((u.packets, u.held()), (2, 0));
    }
}
