//! Preferred busy polling (Linux 5.11, SO_PREFER_BUSY_POLL) against Björn Töpel's cover
//! letter "Introduce preferred busy-polling" (netdev and bpf, 2020-11-12, section
//! "Performance simple UDP ping-pong": ice, busy_read 20, a generator blasting UDP
//! requests at one queue, a recvfrom/sendto program answering them), on the shipped
//! scenario `scenarios/prefer-busy-poll-udp-pingpong.json` (its notes give every
//! assumption; docs/model.md "Preferred busy polling: Töpel's UDP ping-pong").
//!
//! | the letter's case | measured [replies/s] | simulated | what it is here |
//! |---|---|---|---|
//! | 1. Blocking, 2 cores | 490 k | 489.9 k | the calibration of the application's cost (2,041 ns) |
//! | 2. Blocking, 1 core | 155 k | 28.5 k | a prediction: the collapse, deeper than measured (a miss, explained below) |
//! | 5. Non-blocking, prefer busy-poll, 1 core | 420 k | 381.7 k | a prediction, -9 %: the recovery |
//!
//! The letter's CPU is not stated (only its NIC, ice), so the host is the modelled XDP
//! testbed; 25 % is the tolerance for a rate where the hardware is stated
//! enough. Cases 3 and 4 (a non-blocking recvfrom that never sleeps; case 4's 3 k/s) are
//! not modelled.

use irqsim::config::scenario::{self, DiskFiles};
use irqsim::experiment::runner;
use irqsim::results::{PointResult, Results};
use std::path::Path;

fn results() -> Results {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/prefer-busy-poll-udp-pingpong.json");
    let exp = scenario::load(&path, &DiskFiles::default()).expect("the scenario loads");
    runner::run(&exp, 0, &|| {}).expect("the sweep runs")
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
    let rate = |v: &str| point(&r, v).figures.total.forwarded_pps;
    let (two, one, prefer) = (
        rate("blocking-2-cores"),
        rate("blocking-1-core"),
        rate("prefer-busy-poll-1-core"),
    );
    eprintln!("2 cores {two}, 1 core {one}, 1 core with prefer_busy_poll {prefer}");
    // The calibration point: the application alone on its core answers one request per
    // 2,041 ns (its socket is never empty, so it never busy-polls for long).
    assert!((two / 490_000.0 - 1.0).abs() < 0.01, "2 cores: {two}");
    // The recovery (the letter's case 5, 420 k/s): a prediction within 25 %. The
    // per-request cost is the application's 2,041 ns, the driver's 66 and the receive
    // path's 426 ns, and the busy loop's rounds (kernel.napi.busy_poll_loop and the
    // poll call, over the frames a round takes: 87 ns a request): 2.62 us, 381.7 k/s,
    // 9 % under the letter.
    assert!((prefer / 420_000.0 - 1.0).abs() < 0.25, "prefer: {prefer}");
    // The shape: on one core the softirq takes the core and the application collapses;
    // with preferred busy polling it gets close to two cores' rate again (the letter:
    // 155 k -> 420 k of 490 k).
    assert!(one < 0.5 * two, "1 core: {one}");
    assert!(prefer > 5.0 * one && prefer > 0.7 * two, "prefer: {prefer}");
    // The collapse's depth is a miss: 28.5 k against the letter's 155 k. The model's
    // ksoftirqd and the application share the core round robin by 3 ms time slices
    // (kernel.timeslice_ns): in each of the application's turns it answers the 92
    // requests its socket holds (queue_len, rmem_default over an skb's truesize), then
    // finds it empty, spins its 20 us without the device (ksoftirqd has it) and
    // sleeps; ksoftirqd then runs a whole slice. So one socketful per 3 ms + 92 x
    // 2.041 us + 20 us: 28.7 k/s, within 2 %. CFS's wakeup preemption, which lets the
    // woken application in far sooner than a slice, is not modelled: that is the miss.
    let turn_s = 3e-3 + 92.0 * 2.041e-6 + 20e-6;
    assert!((one * turn_s / 92.0 - 1.0).abs() < 0.02, "1 core: {one}");
    // The mechanisms at work: with the option, the softirq let the device go for the
    // busy loop (napi.prefer_busy_poll_yields) and then barely ran: the busy loop took
    // what the application answered, its interrupt stayed masked (one event in the
    // run) and its time is the application's %sys.
    let p = point(&r, "prefer-busy-poll-1-core");
    let c = &p.figures.counters;
    assert!(c["napi.prefer_busy_poll_yields"] >= 1.0);
    assert!(
        c["napi.busy_poll_packets"] >= 0.99 * c["user.packets"],
        "{c:?}"
    );
    assert!(c["eth0.ch0_events"] <= 2.0, "{c:?}");
    let m = p.figures.mpstat.as_ref().expect("mpstat").all.clone();
    assert!(m.soft < 2.0 && m.sys > 15.0, "{m:?}");
    // Without it the softirq (ksoftirqd) has the core: %soft above 90.
    let m1 = point(&r, "blocking-1-core")
        .figures
        .mpstat
        .as_ref()
        .expect("mpstat")
        .all
        .clone();
    assert!(m1.soft > 90.0, "{m1:?}");
}
