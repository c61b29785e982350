//! The reference report's 64-byte, one-flow SmartBits sweep (test_25Mx64x1.csv),
//! reproduced by the FreeBSD 4.0 / 21143 profile. Expected values come from the
//! measured table in `scenarios/measured/` (a byte-identical copy of
//! `shared/reference/test_25Mx64x1.csv`, checked by `.ci/run`).

use irqsim::results::Results;
use irqsim::scenario::{self, DiskFiles};
use irqsim::smartbits::MeasuredPoint;
use std::path::Path;
use std::sync::OnceLock;

const SCENARIO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/dc21143-64b-1flow.json"
);

/// The sweep, run once and shared by the tests of this file.
fn sweep() -> &'static (Results, Vec<MeasuredPoint>) {
    static CELL: OnceLock<(Results, Vec<MeasuredPoint>)> = OnceLock::new();
    CELL.get_or_init(|| {
        let exp = scenario::load(Path::new(SCENARIO), &DiskFiles).expect("scenario loads");
        let measured = exp
            .measured
            .clone()
            .expect("scenario names the measured table")
            .1;
        (
            irqsim::runner::run(&exp, 0, &|| {}).expect("the sweep runs"),
            measured,
        )
    })
}

fn point(
    load: f64,
) -> (
    &'static irqsim::results::PointResult,
    &'static MeasuredPoint,
) {
    let (r, m) = sweep();
    let p = r
        .points
        .iter()
        .find(|p| (p.load_pct - load).abs() < 1e-9)
        .expect("simulated point");
    let mp = m
        .iter()
        .find(|p| (p.load_pct - load).abs() < 1e-9)
        .expect("measured point");
    (p, mp)
}

#[test]
fn sweep_covers_the_measured_loads_with_the_same_sent_counts() {
    let (r, m) = sweep();
    assert_eq!(r.points.len(), 14);
    for mp in m {
        let (p, _) = point(mp.load_pct);
        // Sent = floor(load/100 * 148,809.5 fps * 10 s), exactly as SmartBits counts.
        assert_eq!(
            p.figures.total.sent, mp.total.sent,
            "sent at {} %",
            mp.load_pct
        );
    }
}

#[test]
fn loss_free_below_the_knee_and_again_at_34_and_36_percent() {
    // Measured: at most 16 frames lost of 149k-536k (< 0.01 %); the issue asks < 0.1 %.
    for load in [
        10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 34.0, 36.0,
    ] {
        let (p, m) = point(load);
        eprintln!(
            "{load:>4} %: loss sim {:.4} %, measured {:.4} %",
            p.figures.total.loss_pct,
            m.total.loss_pct()
        );
        assert!(
            p.figures.total.loss_pct < 0.1,
            "loss {} % at {load} %",
            p.figures.total.loss_pct
        );
    }
}

#[test]
fn livelock_loss_matches_within_5_points() {
    // Measured loss 32.8 / 62.0 / 85.8 % at 28 / 30 / 32 %; tolerance 5 percentage points.
    for load in [28.0, 30.0, 32.0] {
        let (p, m) = point(load);
        let (sim, meas) = (p.figures.total.loss_pct, m.total.loss_pct());
        eprintln!("{load} %: loss sim {sim:.2} %, measured {meas:.2} %");
        assert!(
            (sim - meas).abs() < 5.0,
            "{load} %: sim {sim} vs measured {meas}"
        );
        // The loss is at ipintrq (the netisr starves), not at the ring.
        let d = &p.figures.total.drops;
        assert!(d.ipintrq > 0.99 * p.figures.total.lost, "drops {d:?}");
    }
}

#[test]
fn livelock_latency_matches_within_15_percent() {
    // Measured average latency 1,846 / 3,013 / 7,458 us; tolerance 15 %.
    for load in [28.0, 30.0, 32.0] {
        let (p, m) = point(load);
        let (sim, meas) = (p.figures.total.latency_us.avg, m.total.avg_us);
        eprintln!("{load} %: avg latency sim {sim:.0} us, measured {meas:.0} us");
        assert!(
            (sim / meas - 1.0).abs() < 0.15,
            "{load} %: sim {sim} vs measured {meas}"
        );
        // And it is a full ipintrq: 50 packets / forwarded rate (reference README), 3 %.
        let q = 50.0 / p.figures.total.forwarded_pps * 1e6;
        assert!(
            (sim / q - 1.0).abs() < 0.03,
            "{load} %: {sim} us vs 50/rate = {q} us"
        );
    }
}

#[test]
fn minimum_latency_matches_the_unloaded_router() {
    // Measured minimum at 10 %: 29.1 us; the pipeline latency is derived from it (0.2 us).
    let (p, m) = point(10.0);
    assert!((p.figures.total.latency_us.min - m.total.min_us).abs() < 0.2);
}

#[test]
fn recovery_at_34_percent_comes_from_the_handler_loop() {
    // Frames 19.76 us apart arrive before the handler's last ring check (19.83 us after
    // the interrupt), so two frames share each interrupt: interrupts/s = rate / 2.
    let (p, _) = point(34.0);
    assert!((p.figures.packets_per_interrupt - 2.0).abs() < 0.01);
    assert!((p.figures.interrupts_per_s / p.offered_pps - 0.5).abs() < 0.01);
    // Below the knee, one frame per interrupt.
    let (p, _) = point(20.0);
    assert!((p.figures.packets_per_interrupt - 1.0).abs() < 0.01);
}

#[test]
fn cpu_fractions_sum_to_one() {
    for p in &sweep().0.points {
        let c = &p.figures.cpu;
        let sum = c.interrupt + c.softirq + c.kernel + c.user + c.idle;
        assert!((sum - 1.0).abs() < 1e-9, "{sum}");
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let exp = scenario::load(Path::new(SCENARIO), &DiskFiles).unwrap();
    let mut short = exp.clone();
    short.duration_s = 0.2;
    short.replications = 2;
    let one = irqsim::runner::run(&short, 1, &|| {})
        .expect("the sweep runs")
        .to_json();
    let two = irqsim::runner::run(&short, 2, &|| {})
        .expect("the sweep runs")
        .to_json();
    assert_eq!(one, two);
}
