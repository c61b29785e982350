//! A host as sender: a ttcp-like application writing to a TCP socket as fast as it can.
//!
//! Models the transmit side of a BSD stack (4.4BSD, FreeBSD 4.x, NetBSD 1.6) in process
//! context: `write(2)` -> `sosend` -> `copyin` into mbuf clusters -> `sbappend` on the
//! socket buffer -> `tcp_output` -> `ip_output` -> `ether_output` -> `if_snd` -> the
//! driver's start routine (`bge_start`/`bge_encap`) -> TX ring -> wire. Every packet costs
//! the process, in one burst:
//!
//! ```text
//!  sosend                                  per packet (syscall share, uio, sbspace)
//!  + copyin_ns_per_byte x payload          payload = frame_bytes - 18 (Ethernet) - 40 (IP+TCP)
//!  + mbuf_per_cluster x ceil(payload / cluster_bytes)   MGET + MCLGET per 2 KB cluster
//!  + sbappend_per_mbuf x sbappend_walk_mbufs            the O(n) socket-buffer chain walk
//!  + tcp_output                            tcp_output + ip_output + ether_output
//!  + driver_encap                          the driver's start routine for one frame
//! ```
//!
//! then hands the frame to `if_output` on NIC `nic` (if_snd, TX ring, wire at line rate;
//! transmit completions and their interrupts as the NIC is configured). The process runs at
//! user priority, so every interrupt and software interrupt preempts it; its CPU time is
//! kernel work done on its behalf (vmstat and top call it *system* time), reported as the
//! process's share.
//!
//! **Blocking.** Before building a packet the process checks the output NIC's if_snd;
//! when it is full it sleeps, and it is woken when the driver frees room (after a
//! transmission ends, or after the interrupt handler's txeof and start routine). This
//! stands in for the real flow control, in which `sosend` sleeps in `sbwait` until the
//! socket buffer has room and `tcp_output` stops when `ip_output` returns ENOBUFS: with a
//! window of the bandwidth-delay product the sender's pace is set by the interface. TCP
//! acknowledgements are not generated as frames; their receive cost must be folded into
//! the driver's per-frame costs (see the model's notes).
//!
//! **In results.** The packets form a flow named `name` (default `"sender"`), placed after
//! the scenario's flows: `sent` counts packets handed to if_output (including any dropped
//! because if_snd filled while the packet was being built), `received` frames put on the
//! wire, latency the time from if_output to the first bit on the wire. The sender stops
//! building packets at the end of the sending period.
//!
//! Parameters ([`SenderConfig`]) with defaults: `nic` (required), `name` "sender",
//! `frame_bytes` 1518 (MTU 1500), `cluster_bytes` 2048 (MCLBYTES), `sbappend_walk_mbufs`
//! 0 (a tail pointer, NetBSD's sb_mbtail), every cost 0.
//!
//! Reported per point: `sender.pps`, `sender.mbit_s` (TCP payload, as ttcp reports it),
//! `sender.cpu_share`; counters `sender.packets`, `sender.blocks` (times it slept on a
//! full if_snd).

use crate::model::cost::{Cost, CostParam};
use crate::model::cpu::task::Step;
use crate::model::packet::Packet;
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Ethernet header (14) and FCS (4) \[bytes\].
const ETHER_BYTES: u32 = 18;
/// IPv4 (20) and TCP (20) headers without options \[bytes\].
const IP_TCP_BYTES: u32 = 40;

/// The sending application as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SenderConfig {
    /// Name of the NIC the packets go out of (required).
    pub nic: String,
    /// Flow name in results (default `"sender"`).
    #[serde(default = "d_name")]
    pub name: String,
    /// Frame size on the wire, Ethernet header and FCS included: MTU + 18 \[bytes\]
    /// (default 1518).
    #[serde(default = "d_frame")]
    #[schemars(range(min = 59, max = 65_553))]
    pub frame_bytes: u32,
    /// Size of an mbuf cluster \[bytes\] (default 2048, MCLBYTES).
    #[serde(default = "d_cluster")]
    #[schemars(range(min = 1))]
    pub cluster_bytes: u32,
    /// Per packet: the system call's share, sosend's loop, uio and sbspace checks \[cost\]
    /// (default 0).
    #[serde(default)]
    pub sosend: CostParam,
    /// copyin of the payload from user space [ns per byte of TCP payload] (default 0).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub copyin_ns_per_byte: f64,
    /// Allocating one mbuf with its cluster (MGET + MCLGET) \[cost\] (default 0).
    #[serde(default)]
    pub mbuf_per_cluster: CostParam,
    /// Mbufs visited per packet by the linear walk of the socket buffer's chain
    /// (sbappend without a tail pointer, m_copym skipping unacknowledged data)
    /// \[mbufs\] (default 0).
    #[serde(default)]
    #[schemars(range(max = 1_000_000))]
    pub sbappend_walk_mbufs: u32,
    /// Visiting one mbuf of that walk \[cost\] (default 0).
    #[serde(default)]
    pub sbappend_per_mbuf: CostParam,
    /// Per packet: tcp_output, ip_output, ether_output \[cost\] (default 0).
    #[serde(default)]
    pub tcp_output: CostParam,
    /// Per packet: the driver's start routine putting the frame on descriptors
    /// (bge_encap) \[cost\] (default 0).
    #[serde(default)]
    pub driver_encap: CostParam,
}

fn d_name() -> String {
    "sender".into()
}
fn d_frame() -> u32 {
    1518
}
fn d_cluster() -> u32 {
    2048
}

impl SenderConfig {
    /// Range checks (the NIC's existence is checked by the model).
    pub fn validate(&self, p: &mut Problems) {
        if self.name.trim().is_empty() {
            p.push("name", "must not be empty");
        }
        p.at_least(
            "frame_bytes",
            self.frame_bytes as u64,
            (ETHER_BYTES + IP_TCP_BYTES + 1) as u64,
            "byte (Ethernet 18 + IP/TCP 40 + at least 1 byte of payload)",
        );
        if self.frame_bytes > 65_535 + ETHER_BYTES {
            p.push(
                "frame_bytes",
                "must be at most 65553 bytes (IP's 65535 + 18)",
            );
        }
        p.at_least("cluster_bytes", self.cluster_bytes as u64, 1, "byte");
        p.non_negative("copyin_ns_per_byte", self.copyin_ns_per_byte, "ns/byte");
        if self.copyin_ns_per_byte > 1e6 {
            p.push("copyin_ns_per_byte", "must be at most 1e6 ns/byte");
        }
        if self.sbappend_walk_mbufs > 1_000_000 {
            p.push("sbappend_walk_mbufs", "must be at most 1000000 mbufs");
        }
        for (name, c) in [
            ("sosend", &self.sosend),
            ("mbuf_per_cluster", &self.mbuf_per_cluster),
            ("sbappend_per_mbuf", &self.sbappend_per_mbuf),
            ("tcp_output", &self.tcp_output),
            ("driver_encap", &self.driver_encap),
        ] {
            if let Err(e) = c.check() {
                p.push(name, e);
            }
        }
    }

    /// TCP payload of one packet \[bytes\].
    pub fn payload_bytes(&self) -> u32 {
        self.frame_bytes.saturating_sub(ETHER_BYTES + IP_TCP_BYTES)
    }

    /// Mbuf clusters one packet's payload spans.
    pub fn clusters(&self) -> u32 {
        self.payload_bytes().div_ceil(self.cluster_bytes.max(1))
    }
}

/// What the sending process needs of the host during one of its steps.
pub trait SendEnv {
    /// if_output of a packet it built: if_snd, TX ring, wire (the packet counts as sent
    /// on its flow).
    fn send(&mut self, p: Packet);
    /// Whether NIC `nic`'s if_snd is full.
    fn if_snd_full(&self, nic: usize) -> bool;
    /// Whether another normal-priority task waits for the CPU.
    fn contended(&self) -> bool;
}

/// The sending process during a run.
#[derive(Clone, Debug)]
pub struct Sender {
    /// Index of its flow in the host's flows.
    pub flow: usize,
    /// Output NIC.
    pub nic: usize,
    frame_bytes: u32,
    /// TCP payload per packet \[bytes\].
    pub payload_bytes: u32,
    clusters: u32,
    walk: u32,
    copyin_ps: u64,
    sosend: Cost,
    mbuf: Cost,
    per_mbuf: Cost,
    tcp_output: Cost,
    encap: Cost,
    quantum: SimTime,
    /// When sending stops.
    stop: SimTime,
    rng: StreamRng,
    /// The packet being built (handed to if_output at the end of the burst).
    building: bool,
    /// Sleeping on a full if_snd.
    blocked: bool,
    /// CPU time since it last got the CPU \[ps\].
    slice_used: SimTime,
    /// Packets handed to if_output -- counter.
    pub packets: u64,
    /// Times it slept on a full if_snd -- counter.
    pub blocks: u64,
}

impl Sender {
    /// The process from its configuration; `flow` and `nic` are its indices in the host.
    pub fn new(
        cfg: &SenderConfig,
        flow: usize,
        nic: usize,
        clock_mhz: f64,
        timeslice: SimTime,
        stop: SimTime,
        rng: StreamRng,
    ) -> Sender {
        Sender {
            flow,
            nic,
            frame_bytes: cfg.frame_bytes,
            payload_bytes: cfg.payload_bytes(),
            clusters: cfg.clusters(),
            walk: cfg.sbappend_walk_mbufs,
            copyin_ps: (cfg.copyin_ns_per_byte * 1e3 * cfg.payload_bytes() as f64).round() as u64,
            sosend: cfg.sosend.build(clock_mhz),
            mbuf: cfg.mbuf_per_cluster.build(clock_mhz),
            per_mbuf: cfg.sbappend_per_mbuf.build(clock_mhz),
            tcp_output: cfg.tcp_output.build(clock_mhz),
            encap: cfg.driver_encap.build(clock_mhz),
            quantum: timeslice,
            stop,
            rng,
            building: false,
            blocked: false,
            slice_used: SimTime::ZERO,
            packets: 0,
            blocks: 0,
        }
    }

    /// One step at `now` (`first`: it has just been given the CPU): hand the packet
    /// built in the burst that just ended to if_output, then build the next one, or
    /// sleep on a full if_snd, or yield at the end of a time slice ([`Sender::next`]).
    pub fn step(&mut self, first: bool, now: SimTime, env: &mut impl SendEnv) -> Step {
        if let Some(p) = self.built(first, now) {
            env.send(p);
        }
        let (contended, full) = (env.contended(), env.if_snd_full(self.nic));
        self.next(now, contended, full)
    }

    /// The first half of a step (`first`: it has just been given the CPU): the packet
    /// built in the burst that just ended, for if_output, stamped `now`.
    pub fn built(&mut self, first: bool, now: SimTime) -> Option<Packet> {
        if first {
            self.slice_used = SimTime::ZERO;
        }
        if !std::mem::take(&mut self.building) {
            return None;
        }
        self.packets += 1;
        Some(Packet {
            flow: self.flow as u32,
            bytes: self.frame_bytes,
            seq: self.packets - 1,
            t_in: now,
        })
    }

    /// The second half: stop at the end of sending; yield at the end of a time slice
    /// when another normal-priority task waits (`contended`); sleep on a full if_snd
    /// (`if_snd_full`); else build the next packet.
    pub fn next(&mut self, now: SimTime, contended: bool, if_snd_full: bool) -> Step {
        if now >= self.stop {
            return Step::Done;
        }
        if self.slice_used >= self.quantum && contended {
            return Step::Yield;
        }
        if if_snd_full {
            self.blocked = true;
            self.blocks += 1;
            return Step::Done;
        }
        let d = self.packet_cost();
        self.building = true;
        self.slice_used += d;
        Step::Run(d)
    }

    /// The driver freed room in its NIC's if_snd (`if_snd_full` after it): returns
    /// whether the sender, asleep on it, wakes.
    pub fn room(&mut self, if_snd_full: bool) -> bool {
        if self.blocked && !if_snd_full {
            self.blocked = false;
            return true;
        }
        false
    }

    /// CPU time to build one packet.
    fn packet_cost(&mut self) -> SimTime {
        let r = &mut self.rng;
        let mut t = self.sosend.sample(r) + SimTime(self.copyin_ps);
        for _ in 0..self.clusters {
            t += self.mbuf.sample(r);
        }
        if self.per_mbuf.is_constant() {
            t += SimTime(self.per_mbuf.sample(r).0 * self.walk as u64);
        } else {
            for _ in 0..self.walk {
                t += self.per_mbuf.sample(r);
            }
        }
        t + self.tcp_output.sample(r) + self.encap.sample(r)
    }

    /// Publish the counters.
    pub fn counters(&self, c: &mut BTreeMap<String, f64>) {
        c.insert("sender.packets".into(), self.packets as f64);
        c.insert("sender.blocks".into(), self.blocks as f64);
    }
}

#[cfg(test)]
mod alone {
    use super::*;
    use crate::sim::rng::RunKey;

    /// The host as the sender sees it: what it was handed, and an if_snd of `room`
    /// packets that nothing drains.
    struct Mock {
        sent: Vec<Packet>,
        room: usize,
        contended: bool,
    }

    impl SendEnv for Mock {
        fn send(&mut self, p: Packet) {
            self.sent.push(p);
            self.room = self.room.saturating_sub(1);
        }
        fn if_snd_full(&self, nic: usize) -> bool {
            assert_eq!(nic, 3, "the sender's own NIC");
            self.room == 0
        }
        fn contended(&self) -> bool {
            self.contended
        }
    }

    #[test]
    fn it_builds_hands_over_and_sleeps_on_a_full_if_snd_until_room_is_freed() {
        // 1,518-byte frames, 1 us to build one (sosend), a time slice of 1.5 us, sending
        // until 1 ms, on NIC 3.
        let cfg: SenderConfig = serde_json::from_value(serde_json::json!({
            "nic": "out", "sosend": { "ns": 1000 }
        }))
        .expect("config");
        let mut snd = Sender::new(
            &cfg,
            5,
            3,
            1000.0,
            SimTime::from_ns_f64(1500.0),
            SimTime::from_ns_f64(1e6),
            RunKey::single(1).stream("sender"),
        );
        let mut env = Mock {
            sent: Vec::new(),
            room: 2,
            contended: false,
        };
        let us = |x: f64| SimTime::from_ns_f64(x * 1e3);
        // Given the CPU: nothing built yet, it builds the first packet.
        assert_eq!(snd.step(true, us(0.0), &mut env), Step::Run(us(1.0)));
        // At the end of the burst the packet goes to if_output, stamped then.
        assert_eq!(snd.step(false, us(1.0), &mut env), Step::Run(us(1.0)));
        assert_eq!(env.sent.len(), 1);
        assert_eq!(
            (env.sent[0].flow, env.sent[0].seq, env.sent[0].t_in),
            (5, 0, us(1.0))
        );
        assert_eq!(env.sent[0].bytes, 1518);
        // The second fills if_snd: it sleeps, and counts the block.
        assert_eq!(snd.step(false, us(2.0), &mut env), Step::Done);
        assert_eq!((env.sent.len(), snd.blocks, snd.packets), (2, 1, 2));
        // Room freed: it wakes once, not while if_snd is still full.
        assert!(!snd.room(true));
        assert!(snd.room(false));
        assert!(!snd.room(false));
        // With another task waiting it goes on while its slice lasts, then yields (once
        // its 1.5 us are used up) after handing over the packet it built.
        env.room = 10;
        env.contended = true;
        assert_eq!(snd.step(true, us(3.0), &mut env), Step::Run(us(1.0)));
        assert_eq!(snd.step(false, us(4.0), &mut env), Step::Run(us(1.0)));
        assert_eq!(snd.step(false, us(5.0), &mut env), Step::Yield);
        assert_eq!(env.sent.len(), 4);
        // Given the CPU again at the end of sending, it stops.
        assert_eq!(snd.step(true, us(1_000.0), &mut env), Step::Done);
        assert_eq!(env.sent.len(), 4);
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::rng::RunKey;
    use crate::sim::time::SimTime;
    use serde_json::json;

    #[test]
    fn mtu_4470_spans_three_clusters() {
        let c: super::SenderConfig =
            serde_json::from_value(json!({ "nic": "bge0", "frame_bytes": 4488 })).unwrap();
        assert_eq!(c.payload_bytes(), 4430);
        assert_eq!(c.clusters(), 3);
    }

    /// The component alone: a sender with a 20 us packet cost and a 50 us time slice.
    fn alone() -> super::Sender {
        let cfg: super::SenderConfig =
            serde_json::from_value(json!({ "nic": "out", "sosend": 20000 })).expect("config");
        super::Sender::new(
            &cfg,
            0,
            1,
            1000.0,
            SimTime::from_ns_f64(50_000.0),
            SimTime::from_ns_f64(1e6),
            RunKey::single(1).stream("sender"),
        )
    }

    #[test]
    fn builds_packets_back_to_back_and_hands_each_over_at_the_end_of_its_burst() {
        use crate::model::cpu::task::Step;
        let mut snd = alone();
        let t = SimTime::from_ns_f64;
        assert_eq!(snd.built(true, t(0.0)), None);
        assert_eq!(snd.next(t(0.0), false, false), Step::Run(t(20_000.0)));
        let p = snd.built(false, t(20_000.0)).expect("the packet built");
        assert_eq!((p.seq, p.t_in, p.flow), (0, t(20_000.0), 0));
        // Slices are only given up when another task waits: after 60 us of 50, yield.
        snd.next(t(20_000.0), false, false);
        snd.built(false, t(40_000.0));
        snd.next(t(40_000.0), false, false);
        snd.built(false, t(60_000.0));
        assert_eq!(snd.next(t(60_000.0), true, false), Step::Yield);
        // A full if_snd: sleep until the driver frees room.
        assert_eq!(snd.next(t(60_000.0), false, true), Step::Done);
        assert!(!snd.room(true));
        assert!(snd.room(false));
        assert!(!snd.room(false));
        // At the end of sending: done.
        assert_eq!(snd.next(t(1e6), false, false), Step::Done);
        assert_eq!((snd.packets, snd.blocks), (3, 1));
    }
}
