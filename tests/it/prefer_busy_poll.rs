//! Preferred busy polling (Linux 5.11, SO_PREFER_BUSY_POLL) against Björn Töpel's cover
//! letter "Introduce preferred busy-polling" (netdev and bpf, 2020-11-12, section
//! "Performance simple UDP ping-pong": ice, busy_read 20, a generator blasting UDP
//! requests at one queue, a recvfrom/sendto program answering them), on the shipped
//! scenario `scenarios/prefer-busy-poll-udp-pingpong.json` (its notes give every
//! assumption; docs/model.md "Preferred busy polling: Töpel's UDP ping-pong"). The
//! application and ksoftirqd share one core under CFS (`kernel.scheduler`, the v5.10
//! rules with the tunables x4 for the letter's host of at least 21 CPUs).
//!
//! | the letter's case | measured [replies/s] | simulated | what it is here |
//! |---|---|---|---|
//! | 1. Blocking, 2 cores | 490 k | 489.9 k | the calibration of the application's cost (2,041 ns) |
//! | 2. Blocking, 1 core | 155 k | 205.8 k | a prediction, +33 %: a miss (CFS's fair share; below) |
//! | 3. Non-blocking, 2 cores | 475 k | 489.9 k | a prediction, +3 % |
//! | 4. Non-blocking, 1 core | 3 k (33 ms RTT) | 3.59 k (25.7 ms) | a prediction, +20 %: the collapse |
//! | 5. Non-blocking, prefer busy-poll, 1 core | 420 k | 378.1 k | a prediction, -10 %: the recovery |
//!
//! The letter's CPU is not stated (only its NIC, ice), so the host is the modelled XDP
//! testbed; 25 % is the tolerance for a rate where the hardware is stated
//! enough.

use irqsim::results::{PointResult, Results};

/// The shipped scenario's sweep, simulated once for the test binary (shared with the
/// scoreboard, `tests/it/scoreboard.rs`).
fn results() -> &'static Results {
    &crate::scoreboard::table_run("prefer-busy-poll").results
}

fn point<'a>(r: &'a Results, variant: &str) -> &'a PointResult {
    r.points
        .iter()
        .find(|p| p.variant == variant)
        .unwrap_or_else(|| panic!("variant {variant}"))
}

#[test]
fn preferred_busy_polling_recovers_the_core_the_softirq_took_from_the_application() {
    let r = results();
    let rate = |v: &str| point(r, v).figures.total.forwarded_pps;
    let (two, one, nb_two, nb_one, prefer) = (
        rate("blocking-2-cores"),
        rate("blocking-1-core"),
        rate("nonblocking-2-cores"),
        rate("nonblocking-1-core"),
        rate("prefer-busy-poll-1-core"),
    );
    eprintln!(
        "blocking: 2 cores {two}, 1 core {one}; non-blocking: 2 cores {nb_two}, 1 core \
         {nb_one}, 1 core with prefer_busy_poll {prefer}"
    );
    // Case 1, the calibration point: the application alone on its core answers one
    // request per 2,041 ns (its socket is never empty, so it never busy-polls).
    assert!((two / 490_000.0 - 1.0).abs() < 0.01, "2 cores: {two}");
    // Case 3 (475 k/s), a prediction within 25 %: alone on its core the application
    // never finds its socket empty either, so blocking or not it runs the same loop
    // (+3 %: the letter's non-blocking run was 3 % slower than its blocking one).
    assert!(
        (nb_two / 475_000.0 - 1.0).abs() < 0.25,
        "non-blocking 2 cores: {nb_two}"
    );
    // Case 4 (3 k/s), a prediction within 25 %: a non-blocking application never
    // sleeps, so it is never woken and never preempts ksoftirqd; the two take turns of
    // a CFS slice (24 ms / 2 = 12 ms, ended by the 1 ms tick's check). In its turn the
    // application answers what its socket holds (92 requests) and then spins on
    // EAGAIN; ksoftirqd's turn fills the socket again. 92 per two turns of ~12.8 ms:
    // 3.59 k/s, +20 %.
    assert!(
        (nb_one / 3_000.0 - 1.0).abs() < 0.25,
        "non-blocking 1 core: {nb_one}"
    );
    let p4 = point(r, "nonblocking-1-core");
    let turns = p4.figures.counters["sched.tick_preemptions"];
    let packets = p4.figures.counters["user.packets"];
    // One socketful per application turn (two tick preemptions a cycle), within 5 %.
    assert!(
        (packets / (turns / 2.0) / 92.0 - 1.0).abs() < 0.05,
        "{packets} requests in {turns} turns"
    );
    // Its latency is two turns' order: the requests wait in the ring through the
    // application's turn and in the socket through ksoftirqd's. The letter's RTT is
    // 33.1 ms on average (29.0 to 37.3); the model's host latency, 25.7 ms, is 22 %
    // under it (the letter's HZ is not stated: with HZ 250 each turn ends up to 4 ms
    // later).
    let lat = p4.figures.total.latency_us.avg;
    assert!(
        lat > 20_000.0 && lat < 33_128.0,
        "non-blocking 1 core latency {lat} us"
    );
    // Case 5, the recovery (420 k/s): a prediction within 25 %. Each non-blocking
    // recvfrom() on an empty socket is one busy-poll round that takes the device (the
    // softirq let it go: napi.prefer_busy_poll_yields) and polls it twice
    // (napi_busy_loop's poll and busy_poll_stop's, 8 frames each); the per-request
    // cost is the application's 2,041 ns, the driver's and the receive path's, and the
    // rounds': 378.1 k/s, 10 % under the letter.
    assert!((prefer / 420_000.0 - 1.0).abs() < 0.25, "prefer: {prefer}");
    // The shape: on one core the softirq takes the core and the application collapses
    // (deeply when it never sleeps); with preferred busy polling it gets close to two
    // cores' rate again (the letter: 155 k and 3 k -> 420 k of 490 k).
    assert!(
        one < 0.5 * two && nb_one < 0.01 * nb_two,
        "1 core: {one}, {nb_one}"
    );
    assert!(prefer > 1.5 * one && prefer > 0.7 * two, "prefer: {prefer}");
    // Case 2, blocking on one core, is a miss: 205.8 k against the letter's 155 k,
    // +33 %. What holds is CFS's fair share. The application sleeps when its socket is
    // empty; the first request ksoftirqd puts there wakes it, and it preempts ksoftirqd
    // when ksoftirqd's vruntime is more than the wake-up granularity (4 ms) ahead
    // (sched.wakeup_preemptions), else waits for the tick's slice check; the two
    // alternate so that each gets half the core over a cycle. The application's half
    // is its requests (2,041 ns each: usr) and its 20 us busy_read spin after each
    // batch (sys); so its rate is its usr time over 2,041 ns.
    let p2 = point(r, "blocking-1-core");
    let m2 = p2.figures.mpstat.as_ref().expect("mpstat").all.clone();
    let app_share = (m2.usr + m2.sys) / 100.0;
    assert!((app_share - 0.5).abs() < 0.03, "{m2:?}");
    assert!(
        (one / (m2.usr / 100.0 / 2.041e-6) - 1.0).abs() < 0.01,
        "1 core {one}, {m2:?}"
    );
    assert!(p2.figures.counters["sched.wakeup_preemptions"] > 1000.0);
    // The letter's 155 k/s would be the application's requests taking 32 % of the
    // core. Mechanisms tried: round robin by 3 ms slices (the model before CFS):
    // 28.5 k/s, -82 %; CFS with wake-up preemption and sleeper placement: 205.8 k/s,
    // +33 %. What the model lacks is what sharing the core costs the application
    // (cache lines ksoftirqd's 64-frame polls evict between its batches, the context
    // switches): its 2,041 ns is measured alone on a core.
    assert!(one > 155_000.0, "1 core: {one}");
    // The mechanisms at work with the option: the softirq let the device go for the
    // busy loop (napi.prefer_busy_poll_yields) and then barely ran: the busy loop took
    // what the application answered, its interrupt stayed masked (one event in the
    // run) and its time is the application's %sys.
    let p = point(r, "prefer-busy-poll-1-core");
    let c = &p.figures.counters;
    assert!(c["napi.prefer_busy_poll_yields"] >= 1.0);
    assert!(
        c["napi.busy_poll_packets"] >= 0.99 * c["user.packets"],
        "{c:?}"
    );
    assert!(c["eth0.ch0_events"] <= 2.0, "{c:?}");
    let m = p.figures.mpstat.as_ref().expect("mpstat").all.clone();
    assert!(m.soft < 2.0 && m.sys > 15.0, "{m:?}");
    // Without it ksoftirqd has half the core (blocking) or every other slice
    // (non-blocking): %soft about 50.
    let m4 = p4.figures.mpstat.as_ref().expect("mpstat").all.clone();
    assert!(m2.soft > 45.0 && m4.soft > 45.0, "{m2:?} {m4:?}");
}

/// The same letter's AF_XDP rxdrop table (section "Performance XDP sockets": xdpsock
/// `-r` on ice, zero-copy), on the shipped scenario `scenarios/prefer-busy-poll-af-xdp.json`
/// (docs/model.md, "Preferred busy polling: Töpel's AF_XDP rxdrop"): the application
/// on the core of the queue's softirq collapses to the RX ring's 2,048 descriptors per
/// CFS cycle; with SO_PREFER_BUSY_POLL its recvfrom() calls do the driver's work, and the
/// budget amortises each call's fixed cost. Budget 8 calibrates that cost
/// (`user.per_call`, within 1 %); the other rows are predictions within the 25 %.
#[test]
fn af_xdp_rxdrop_collapses_on_the_softirqs_core_and_recovers_with_preferred_busy_polling() {
    use irqsim::validate::modern::{AF_XDP_RATES, af_xdp_rate};
    let run = crate::scoreboard::table_run("prefer-busy-poll-af-xdp");
    let (e, r) = (&run.experiment, &run.results);
    let rate = |v: &str| af_xdp_rate(e, r, v);
    for &(case, v, measured, tol) in &AF_XDP_RATES {
        eprintln!(
            "{case}: measured {measured}, simulated {:.0} ({:+.1} %), tolerance {tol:?}",
            rate(v),
            100.0 * (rate(v) / measured - 1.0)
        );
    }
    for &(case, v, measured, tol) in &AF_XDP_RATES {
        let limit = match tol {
            t if t == irqsim::validate::scoreboard::Tolerance::relative(1.0) => 0.01,
            _ => 0.25,
        };
        assert!(
            (rate(v) / measured - 1.0).abs() < limit,
            "{case}: {} against {measured}",
            rate(v)
        );
    }
    let point = |v: &str| irqsim::validate::seeds::variant(r, v);
    // The collapse (74.9 k): the application never sleeps, so it and ksoftirqd take
    // turns of a CFS slice; each of its turns drains the RX ring's 2,048 descriptors.
    // Frames per cycle (two tick preemptions) within 5 % of 2,048 (the run's last
    // cycle is cut short: 2,000 here); the driver refuses the rest at the full ring.
    let c = &point("rxdrop-1-core").figures.counters;
    let cycles = c["sched.tick_preemptions"] / 2.0;
    assert!(cycles >= 5.0, "{c:?}");
    assert!(
        (c["user.packets"] / cycles / 2048.0 - 1.0).abs() < 0.05,
        "{} frames in {cycles} cycles",
        c["user.packets"]
    );
    assert!(c["xsk.rx_ring_full"] > 100.0 * c["user.packets"], "{c:?}");
    // The recovery: the softirq let the device go once, its interrupt stayed masked
    // (one event in the run), every frame came through the application's busy loop,
    // whose time is %sys; the rate climbs with the budget.
    let mut last = 0.0;
    for b in [8, 64, 256, 512] {
        let v = format!("busy-poll-budget-{b}");
        let p = point(&v);
        let c = &p.figures.counters;
        assert!(c["napi.prefer_busy_poll_yields"] >= 1.0, "{v}: {c:?}");
        assert!(c["eth0.ch0_events"] <= 2.0, "{v}: {c:?}");
        assert!(
            c["napi.busy_poll_packets"] >= 0.99 * c["user.packets"],
            "{v}: {c:?}"
        );
        assert_eq!(c["xsk.rx_ring_full"], 0.0, "{v}");
        let m = p.figures.mpstat.as_ref().expect("mpstat").all.clone();
        assert!(m.sys > 90.0 && m.soft < 1.0, "{v}: {m:?}");
        assert!(rate(&v) > last, "{v}: {} after {last}", rate(&v));
        last = rate(&v);
    }
    // Without busy polling on its own core the application is never the bottleneck:
    // the softirq's core runs the driver's 43.6 ns a frame (22.95 M, +11 %); the
    // letter's two cores are slower than its one (21.7 M), which the model, with no
    // cost for the rings' cache lines moving between cores, does not reproduce.
    let two = rate("rxdrop-2-cores");
    assert!((two * 43.568e-9 - 1.0).abs() < 0.01, "two cores: {two}");
}
