use super::*;

/// A queue whose wire is its own (a port of one queue, [`Wire::Free`]): the calls
/// its port makes ([`super::port::TxPort`]), for testing the queue alone.
impl Nic {
    fn output(&mut self, now: SimTime, pkt: Packet) -> Result<Option<TxStart>, Packet> {
        self.output_on(now, pkt, Wire::Free)
    }
    fn tx_done(&mut self, now: SimTime) -> Option<TxStart> {
        self.tx_done_on(now, Wire::Free)
    }
    fn start(&mut self, now: SimTime) -> Option<TxStart> {
        self.start_on(now, Wire::Free)
    }
    fn tx_restart(&mut self, now: SimTime) -> Option<TxStart> {
        self.tx_restart_on(now, Wire::Free)
    }
}

/// A 100 Mbit/s NIC with the default rings and no latencies.
fn nic() -> Nic {
    let cfg: NicConfig =
        serde_json::from_value(serde_json::json!({ "name": "dc1" })).expect("config");
    Nic::new(&cfg, 50, 1000.0)
}

fn pkt(seq: u64) -> Packet {
    Packet {
        flow: 0,
        bytes: 1500,
        seq,
        t_in: SimTime::ZERO,
    }
}

/// 1,500 bytes plus 20 of preamble and gap at 100 Mbit/s: 121.6 us.
const WIRE: SimTime = SimTime(121_600_000);

#[test]
fn only_a_taken_interrupt_is_taken_back() {
    let mut n = nic();
    // Unmasked, not asserted, none counted: nothing to take back.
    assert!(!n.untake_interrupt());
    assert!(!n.take_interrupt(), "not asserted: nothing taken");
    n.assert_irq();
    assert!(n.take_interrupt());
    assert_eq!(
        (n.irq_asserted(), n.irq_enabled, n.interrupts),
        (false, false, 1)
    );
    assert!(n.untake_interrupt());
    assert_eq!(
        (n.irq_asserted(), n.irq_enabled, n.interrupts),
        (true, true, 0)
    );
    // Taken back once already: a second undo is refused and changes nothing.
    assert!(!n.untake_interrupt());
    assert_eq!(n.interrupts, 0);
    // Taken, then unmasked by another core's napi_complete (busy polling) before
    // the folded handler began: the undo stands, and only once.
    assert!(n.take_interrupt());
    n.unmask_irq();
    assert!(n.untake_interrupt());
    assert_eq!(
        (n.irq_asserted(), n.irq_enabled, n.interrupts),
        (true, true, 0)
    );
    assert!(!n.untake_interrupt());
}

#[test]
fn a_reset_keeps_the_frame_on_the_wire_and_nothing_starts_before_its_end() {
    let mut n = nic();
    let first = n.output(SimTime::ZERO, pkt(0)).unwrap().expect("starts");
    assert_eq!(first.done, WIRE);
    n.output(SimTime(1), pkt(1)).unwrap();
    // dc_init with frame 0 on the wire: frame 1 is freed, frame 0 stays on the wire.
    let freed = n.reset(true);
    assert_eq!(freed.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1]);
    // dc_tick brings the link up and dc_start runs with a new frame: it must wait
    // for the end of frame 0.
    n.link_up = true;
    assert!(
        n.output(SimTime(2), pkt(2)).unwrap().is_none(),
        "second frame on a busy wire"
    );
    assert!(n.start(SimTime(3)).is_none(), "second frame on a busy wire");
    // Frame 0's end frees the wire: frame 2 starts then.
    let next = n.tx_done(WIRE).expect("frame 2 starts");
    assert_eq!((next.pkt.seq, next.start), (2, WIRE));
}

#[test]
fn a_second_reset_before_the_frame_ends_still_keeps_the_wire_busy() {
    let mut n = nic();
    n.output(SimTime::ZERO, pkt(0)).unwrap().expect("starts");
    assert!(n.reset(true).is_empty());
    n.link_up = true;
    n.output(SimTime(1), pkt(1)).unwrap();
    // A second reset while frame 0 is still on the wire: frame 1 (waiting in the
    // ring, never started) is freed, and the wire stays busy.
    let freed = n.reset(true);
    assert_eq!(freed.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1]);
    n.link_up = true;
    assert!(
        n.output(SimTime(2), pkt(2)).unwrap().is_none(),
        "second frame on a busy wire"
    );
    assert!(n.start(SimTime(3)).is_none(), "second frame on a busy wire");
    let next = n.tx_done(WIRE).expect("frame 2 starts");
    assert_eq!(next.pkt.seq, 2);
    // Exactly one completion was skipped: frame 2's end is an ordinary one.
    assert!(n.tx_done(next.done).is_none());
    assert_eq!(n.held(), 0);
}

#[test]
fn a_reset_that_cuts_the_frame_frees_it_too() {
    // keep_head false: the frame was still being fetched (cut-through) and the
    // reset cuts it; it is freed with the others and the wire is free at once.
    let mut n = nic();
    n.output(SimTime::ZERO, pkt(0)).unwrap().expect("starts");
    n.output(SimTime(1), pkt(1)).unwrap();
    let freed = n.reset(false);
    assert_eq!(freed.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0, 1]);
    n.link_up = true;
    let next = n.output(SimTime(2), pkt(2)).unwrap();
    assert_eq!(
        next.map(|t| t.start),
        Some(SimTime(2)),
        "the wire is free at once"
    );
    assert_eq!(n.held(), 0);
}

/// A NIC from the defaults plus the JSON fields in `extra`, with a kernel
/// if_snd_maxlen of 50.
fn nic_with(extra: serde_json::Value) -> Nic {
    let mut v = serde_json::json!({ "name": "dc1" });
    for (k, x) in extra.as_object().expect("object") {
        v[k] = x.clone();
    }
    let cfg: NicConfig = serde_json::from_value(v).expect("config");
    Nic::new(&cfg, 50, 1000.0)
}

/// A 64-byte frame.
fn small(seq: u64) -> Packet {
    Packet {
        bytes: 64,
        ..pkt(seq)
    }
}

/// 64 bytes plus 20 of preamble and gap at 100 Mbit/s: 84 x 80 ns = 6.72 us.
const WIRE64: SimTime = SimTime(6_720_000);

fn us(x: f64) -> SimTime {
    SimTime::from_ns_f64(x * 1e3)
}

fn seqs<'a>(q: impl Iterator<Item = &'a Packet>) -> Vec<u64> {
    q.map(|p| p.seq).collect()
}

#[test]
fn a_full_rx_ring_drops_and_the_ring_stays_fifo() {
    let mut n = nic_with(serde_json::json!({ "rx_ring_slots": 4 }));
    // Six frames into four descriptors: the last two are missed frames.
    let placed: Vec<bool> = (0..6).map(|k| n.rx_dma(small(k))).collect();
    assert_eq!(placed, [true, true, true, true, false, false]);
    assert_eq!(
        (n.rx_frames, n.rx_ring.drops, n.rx_ring.high_water),
        (4, 2, 4)
    );
    assert_eq!(n.held(), 4);
    // The driver takes the oldest; the freed descriptor takes the next frame.
    assert_eq!(n.rx_ring.pop().map(|p| p.seq), Some(0));
    assert!(n.rx_dma(small(6)));
    assert_eq!(seqs(n.rx_ring.iter()), [1, 2, 3, 6]);
    assert_eq!((n.rx_frames, n.rx_ring.drops), (5, 2));
}

#[test]
fn the_line_is_raised_only_for_a_pending_cause_when_unmasked_and_not_yet_asserted() {
    let mut n = nic();
    assert!(!n.wants_interrupt(), "nothing pending");
    n.rx_dma(small(0));
    assert!(n.wants_interrupt(), "a frame in the ring");
    n.irq_asserted = true;
    assert!(!n.wants_interrupt(), "already asserted");
    n.irq_asserted = false;
    n.irq_enabled = false;
    assert!(!n.wants_interrupt(), "masked (IMR = 0)");
    n.irq_enabled = true;
    n.rx_ring.pop();
    assert!(!n.wants_interrupt(), "ring empty again");
    // Each other cause alone raises it.
    for cause in 0..3 {
        n.tx_cause = cause == 0;
        n.underrun_cause = cause == 1;
        n.rx_error_cause = cause == 2;
        assert!(n.wants_interrupt(), "cause {cause}");
    }
    n.rx_error_cause = false;
    assert!(!n.wants_interrupt());
    // The NIC does not count interrupts itself (the host does when it takes one).
    assert_eq!(n.interrupts, 0);
}

#[test]
fn frames_leave_in_order_back_to_back_at_line_rate() {
    let mut n = nic();
    let t0 = n.output(us(0.0), small(0)).unwrap().expect("idle: starts");
    assert_eq!((t0.start, t0.done), (us(0.0), WIRE64));
    assert!(n.output(us(1.0), small(1)).unwrap().is_none());
    assert!(n.output(us(2.0), small(2)).unwrap().is_none());
    assert!(n.tx_backlog());
    assert_eq!((n.tx_ring_len(), n.held()), (3, 2));
    // Each end starts the next at once: 6.72, 13.44, 20.16 us.
    let t1 = n.tx_done(t0.done).expect("frame 1");
    assert_eq!(
        (t1.pkt.seq, t1.start, t1.done),
        (1, WIRE64, SimTime(2 * WIRE64.0))
    );
    let t2 = n.tx_done(t1.done).expect("frame 2");
    assert_eq!((t2.pkt.seq, t2.done), (2, SimTime(3 * WIRE64.0)));
    assert!(!n.tx_backlog());
    assert!(n.tx_done(t2.done).is_none());
    assert_eq!(n.tx_frames, 3);
    assert!(n.tx_idle());
    assert_eq!((n.tx_ring_len(), n.held()), (0, 0));
    // A 1,500-byte frame at 10 Mbit/s: 1,520 x 800 ns = 1,216 us.
    let mut slow = nic_with(serde_json::json!({ "line_rate_bps": 10e6 }));
    let t = slow.output(us(5.0), pkt(0)).unwrap().expect("starts");
    assert_eq!(t.done, us(5.0 + 1_216.0));
}

#[test]
fn tx_latency_delays_an_idle_transmitter_only() {
    let mut n = nic_with(serde_json::json!({ "tx_latency_ns": 2000.0 }));
    // Idle transmitter: first bit 2 us after the hand-over, last 2 + 6.72 us.
    let t0 = n.output(us(0.0), small(0)).unwrap().expect("starts");
    assert_eq!((t0.start, t0.done), (us(2.0), us(8.72)));
    // Handed over at 1 us, eligible at 3 us, long before frame 0 ends: it follows
    // back to back at 8.72 us.
    assert!(n.output(us(1.0), small(1)).unwrap().is_none());
    let t1 = n.tx_done(t0.done).expect("frame 1");
    assert_eq!(t1.start, us(8.72));
    assert!(n.tx_done(t1.done).is_none());
    // Idle again: a frame handed over at 20 us starts at 22 us.
    let t2 = n.output(us(20.0), small(2)).unwrap().expect("starts");
    assert_eq!(t2.start, us(22.0));
    // Frame 2 ends at 28.72 us; frame 3, handed over at 28 us, is only eligible at
    // 30 us: the wire idles until then.
    n.output(us(28.0), small(3)).unwrap();
    assert_eq!(n.tx_done(t2.done).map(|t| t.start), Some(us(30.0)));
}

#[test]
fn an_idle_transmitter_with_an_automatic_poll_waits_for_the_next_poll() {
    // The chip polls its descriptors every 10 us (multiples of 10 us from 0).
    let mut n = nic_with(serde_json::json!({ "tx_poll_interval_ns": 10000.0 }));
    // Handed over at 3 us: noticed at the 10 us poll.
    let t0 = n.output(us(3.0), small(0)).unwrap().expect("starts");
    assert_eq!((t0.start, t0.done), (us(10.0), us(16.72)));
    // A frame queued meanwhile follows back to back without waiting for a poll.
    n.output(us(4.0), small(1)).unwrap();
    let t1 = n.tx_done(t0.done).expect("frame 1");
    assert_eq!(t1.start, us(16.72));
    assert!(n.tx_done(t1.done).is_none());
    // Handed over exactly at a poll (30 us): starts then; just after one (40.001
    // us): at the next (50 us).
    let t2 = n.output(us(30.0), small(2)).unwrap().expect("starts");
    assert_eq!(t2.start, us(30.0));
    n.tx_done(t2.done);
    let t3 = n.output(us(40.001), small(3)).unwrap().expect("starts");
    assert_eq!(t3.start, us(50.0));
}

#[test]
fn a_full_tx_ring_leaves_frames_in_if_snd_and_a_full_if_snd_drops() {
    // Two TX descriptors, if_snd of 2 (the NIC's own value overrides the kernel's).
    let mut n = nic_with(serde_json::json!({ "tx_ring_slots": 2, "if_snd_maxlen": 2 }));
    let t0 = n.output(us(0.0), small(0)).unwrap().expect("starts");
    for k in 1..4 {
        assert!(n.output(us(0.0), small(k)).unwrap().is_none());
    }
    // Frame 0 on the wire and 1 on the ring; 2 and 3 in if_snd; 4 is dropped.
    assert_eq!(n.output(us(0.0), small(4)).unwrap_err().seq, 4);
    assert_eq!((n.if_snd.drops, n.if_snd.high_water), (1, 2));
    assert_eq!(n.tx_ring_len(), 2);
    assert_eq!(seqs(n.if_snd.iter()), [2, 3]);
    // Held: if_snd 2 + the ring's frame not yet started 1.
    assert_eq!(n.held(), 3);
    // Frame 0 ends: its descriptor frees, frame 2 takes it, frame 1 starts.
    let t1 = n.tx_done(t0.done).expect("frame 1");
    assert_eq!((t1.pkt.seq, t1.start), (1, WIRE64));
    assert_eq!(seqs(n.if_snd.iter()), [3]);
    assert_eq!(n.tx_ring_len(), 2);
    let sent: Vec<u64> = std::iter::successors(Some(t1), |t| n.tx_done(t.done))
        .map(|t| t.pkt.seq)
        .collect();
    assert_eq!(sent, [1, 2, 3]);
    assert_eq!((n.tx_frames, n.held()), (4, 0));
}

#[test]
fn while_the_link_is_down_frames_wait_in_if_snd() {
    let mut n = nic();
    n.link_up = false;
    assert!(n.output(us(0.0), small(0)).unwrap().is_none());
    assert!(n.output(us(1.0), small(1)).unwrap().is_none());
    assert_eq!((n.if_snd.len(), n.tx_ring_len()), (2, 0));
    assert!(n.start(us(2.0)).is_none(), "link still down");
    // The link comes up; the start routine hands both over and frame 0 starts.
    n.link_up = true;
    let t = n.start(us(5.0)).expect("starts");
    assert_eq!((t.pkt.seq, t.start), (0, us(5.0)));
    assert_eq!((n.if_snd.len(), n.tx_ring_len()), (0, 2));
    // With if_snd empty the start routine does nothing.
    assert!(n.start(us(6.0)).is_none());
}

#[test]
fn tx_completions_interrupt_every_nth_frame_and_hold_descriptors_until_reclaimed() {
    let mut n = nic_with(serde_json::json!({
        "tx_ring_slots": 2,
        "tx_completion": { "interrupt_every": 2 }
    }));
    assert!(n.tx_completion_interrupts());
    let t0 = n.output(us(0.0), small(0)).unwrap().expect("starts");
    for k in 1..4 {
        n.output(us(0.0), small(k)).unwrap();
    }
    // Frame 0 sent: its descriptor is not reclaimed, no cause yet (1 of 2).
    let t1 = n.tx_done(t0.done).expect("frame 1 was on the ring");
    assert!(!n.tx_cause && !n.wants_interrupt());
    assert_eq!(n.take_tx_completions(), None);
    // ...and frame 2 did not take its place: if_snd still holds 2 and 3.
    assert_eq!(seqs(n.if_snd.iter()), [2, 3]);
    // Frame 1 sent: the 2nd completion raises TX_OK; both descriptors are held.
    assert!(n.tx_done(t1.done).is_none());
    assert!(n.tx_cause && n.wants_interrupt());
    assert!(!n.tx_idle());
    assert!(n.start(t1.done).is_none(), "no free descriptor");
    // txeof reclaims both; the start routine can then send frame 2.
    assert_eq!(n.take_tx_completions(), Some(2));
    assert!(!n.tx_cause && n.tx_idle());
    assert_eq!(n.take_tx_completions(), None);
    let t2 = n.start(t1.done).expect("frame 2 starts");
    assert_eq!((t2.pkt.seq, t2.start), (2, SimTime(2 * WIRE64.0)));
}

#[test]
fn tx_completion_on_idle_interrupts_when_the_ring_runs_empty() {
    let mut n = nic_with(serde_json::json!({
        "tx_completion": { "interrupt_on_idle": true }
    }));
    let t0 = n.output(us(0.0), small(0)).unwrap().expect("starts");
    n.output(us(0.0), small(1)).unwrap();
    // Frame 1 still waits: no TX_NOBUF yet.
    let t1 = n.tx_done(t0.done).expect("frame 1");
    assert!(!n.tx_cause);
    // The ring runs empty: TX_NOBUF.
    assert!(n.tx_done(t1.done).is_none());
    assert!(n.tx_cause);
    assert_eq!(n.take_tx_completions(), Some(2));
}

#[test]
fn an_underrun_stops_the_transmitter_with_a_cause_and_a_reset_keeps_it() {
    let mut n = nic();
    n.output(us(0.0), small(0)).unwrap().expect("starts");
    n.output(us(0.0), small(1)).unwrap();
    assert_eq!(n.tx_frames, 1);
    // The head frame is aborted: returned (lost), uncounted; the transmitter halts.
    assert_eq!(n.tx_abort().map(|p| p.seq), Some(0));
    assert_eq!(n.tx_frames, 0);
    assert!(n.tx_halted && n.underrun_cause && n.wants_interrupt());
    // Nothing starts while halted, even a new frame.
    assert!(n.output(us(1.0), small(2)).unwrap().is_none());
    assert_eq!(n.tx_ring_len(), 2);
    // A reset frees the rings and drops every cause but the underrun, which the
    // handler has yet to see; the transmitter stays halted and the link down.
    n.rx_dma(small(10));
    n.rx_error_cause = true;
    n.tx_cause = true;
    let freed = n.reset(true);
    assert_eq!(seqs(freed.iter()), [10, 1, 2]);
    assert!(n.underrun_cause && n.tx_halted && !n.link_up);
    assert!(!n.tx_cause && !n.rx_error_cause);
    assert_eq!(n.held(), 0);
}

#[test]
fn a_reset_uncounts_the_frame_it_cuts_but_not_the_one_that_completes() {
    let mut n = nic();
    n.output(us(0.0), small(0)).unwrap().expect("starts");
    // The frame on the wire is whole and completes: still counted.
    n.reset(true);
    assert_eq!(n.tx_frames, 1);
    let mut n = nic();
    n.output(us(0.0), small(0)).unwrap().expect("starts");
    // A frame still being fetched (cut-through) is cut by the reset: uncounted.
    n.reset(false);
    assert_eq!(n.tx_frames, 0);
}

#[test]
fn after_an_underrun_the_ring_resumes_at_the_next_automatic_poll() {
    // 64-byte frames at 100 Mbit/s: 84 bytes x 80 ns = 6.72 us on the wire.
    let mut n = nic_with(serde_json::json!({ "tx_poll_interval_ns": 10000.0 }));
    let first = n.output(us(0.0), small(0)).unwrap().expect("starts");
    assert_eq!(first.start, us(0.0));
    n.output(us(0.0), small(1)).unwrap();
    assert_eq!(n.tx_abort().map(|p| p.seq), Some(0));
    // The handler runs at 12 us with if_snd empty: frame 1, still in the ring,
    // leaves at the chip's next automatic poll, 20 us (polls every 10 us from 0).
    let tx = n.tx_restart(us(12.0)).expect("the poll finds frame 1");
    assert_eq!((tx.pkt.seq, tx.start, tx.done), (1, us(20.0), us(26.72)));
    assert!(!n.tx_halted);
}

#[test]
fn after_an_underrun_without_an_automatic_poll_the_ring_waits_for_a_poll_demand() {
    let mut n = nic();
    n.output(us(0.0), small(0)).unwrap().expect("starts");
    n.output(us(0.0), small(1)).unwrap();
    n.tx_abort();
    // The start routine queues nothing, so writes no poll demand: frame 1 waits...
    assert!(n.tx_restart(us(12.0)).is_none());
    assert_eq!(n.held(), 1);
    // ...until the next frame sent, whose poll demand starts it at once.
    let tx = n.output(us(30.0), small(2)).unwrap().expect("poll demand");
    assert_eq!((tx.pkt.seq, tx.start), (1, us(30.0)));
}
