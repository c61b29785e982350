//! The reference report's 64-byte, one-flow SmartBits sweep (test_25Mx64x1.csv),
//! reproduced by the FreeBSD 4.0 / 21143 profile. Expected values come from the
//! measured table in `scenarios/measured/` (a byte-identical copy of
//! `shared/reference/test_25Mx64x1.csv`, checked by `.ci/run`).

use irqsim::config::scenario::{self, DiskFiles};
use irqsim::config::smartbits::MeasuredPoint;
use irqsim::results::Results;
use irqsim::validate::reference_router::{self, LOSS_FREE};

/// The sweep and its measured table: the scoreboard's run of the table
/// (`crate::scoreboard`, simulated once for the test binary).
fn sweep() -> (&'static Results, &'static Vec<MeasuredPoint>) {
    let run = crate::scoreboard::table_run("reference-router-64b");
    let measured = &run
        .experiment
        .measured
        .as_ref()
        .expect("scenario names the measured table")
        .1;
    (&run.results, measured)
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
    for load in LOSS_FREE {
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
        // And it is a full ipintrq: 50 packets / forwarded rate (reference README), plus
        // the unloaded pipeline (28.7 us) and the transmitter's wait for its automatic
        // poll (0 to 81.9 us, the profile's tx_poll_interval_ns); 3 % for the forwarded
        // rate's variation over the run.
        let q = 50.0 / p.figures.total.forwarded_pps * 1e6;
        let (low, high) = (q + 28.7, (q + 28.7 + 81.9) * 1.03);
        assert!(
            (low..=high).contains(&sim),
            "{load} %: {sim} us outside 50/rate + pipeline + poll wait = [{low}, {high}] us"
        );
    }
}

#[test]
fn minimum_latency_matches_the_unloaded_router() {
    // The smallest measured minimum over the loss-free points is 28.7 us (12-16 %); the
    // simulated one below the knee (10-26 %) is the pipeline with no wait for the
    // transmit poll: rx side 1.6 + c_i 20.23 + netisr 5.18 + tx side 1.66 = 28.7 us.
    // Tolerance 0.5 us. (A calibration check: the rx and tx latencies were derived from
    // the measured minimum.) Not asserted: at 34-36 % the simulated minima are 20-21 us
    // against 32 us measured (the second frame of a pair skips the dispatch).
    let smallest =
        |f: &dyn Fn(f64) -> f64| LOSS_FREE.iter().map(|&l| f(l)).fold(f64::MAX, f64::min);
    let sim = smallest(&|l| {
        if l < 30.0 {
            point(l).0.figures.total.latency_us.min
        } else {
            f64::MAX
        }
    });
    let meas = smallest(&|l| point(l).1.total.min_us);
    eprintln!("smallest minimum latency: sim {sim:.2} us, measured {meas:.2} us");
    assert!((sim - meas).abs() < 0.5, "sim {sim} vs measured {meas}");
}

#[test]
fn average_latency_below_the_knee_matches_within_15_percent() {
    // Measured averages 63.2-69.6 us at every loss-free point, against a 28.7-32 us
    // minimum: the frame waits for the 21143's automatic transmit poll (dc(4) issues no
    // poll demand; TAP = 001 = 81.9 us at 100 Mbit/s, a secondary source's value, not
    // fitted to these points) and meets the TX_NOBUF passes. Tolerance 15 % (the
    // issue's). The netisr cost was re-derived from the lossy points (profile `method`);
    // no value was estimated from these eleven points.
    for load in LOSS_FREE {
        let (p, m) = point(load);
        let (sim, meas) = (p.figures.total.latency_us.avg, m.total.avg_us);
        eprintln!("{load:>4} %: avg latency sim {sim:.1} us, measured {meas:.1} us");
        assert!(
            (sim / meas - 1.0).abs() < 0.15,
            "{load} %: sim {sim} vs measured {meas}"
        );
    }
}

#[test]
fn maximum_latency_within_1_5x_where_the_transmit_poll_explains_it() {
    // Measured maxima 118-127 us at 10-14 % and 139-140 us at 34-36 %; simulated: the
    // pipeline plus the longest poll wait (about 74 us at 10-14 %), more where a
    // TX_NOBUF pass or a second frame delays it. Tolerance: within a factor 1.5 either way (the issue's). At 16-26 % the
    // measured maxima are 198-274 us, which no modelled mechanism reaches (the closing
    // note of the fidelity issue lists what was tried): the scoreboard's known misses,
    // asserted as such below.
    for load in [10.0, 12.0, 14.0, 34.0, 36.0] {
        let (p, m) = point(load);
        let (sim, meas) = (p.figures.total.latency_us.max, m.total.max_us);
        eprintln!("{load:>4} %: max latency sim {sim:.1} us, measured {meas:.1} us");
        let ratio = sim / meas;
        assert!(
            (1.0 / 1.5..=1.5).contains(&ratio),
            "{load} %: sim {sim} vs measured {meas}"
        );
    }
    for load in [16.0, 18.0, 20.0, 22.0, 24.0, 26.0] {
        let r = crate::scoreboard::known_miss(
            "reference-router-64b",
            &reference_router::case(load),
            "max latency",
            1.5,
        );
        assert!(r.error < 1.0, "{load} %: below the measured maximum, {r:?}");
    }
}

#[test]
fn recovery_at_34_percent_comes_from_the_handler_loop() {
    // Frames 19.76 us apart arrive before dc0's handler's last ring check (19.83 us
    // after the interrupt), so two frames share a receive pass: dc0's handler runs with
    // work for about every second frame. (Passes started by dc1's TX_NOBUF sometimes
    // take a single frame, hence up to 0.6 rather than exactly 0.5.)
    let share = |load: f64| {
        let (p, _) = point(load);
        p.figures.counters["dc0.interrupts"] / p.figures.total.received
    };
    let at34 = share(34.0);
    assert!(
        (0.5..=0.6).contains(&at34),
        "34 %: {at34} receive passes per frame"
    );
    // Below the knee, one frame per receive pass.
    let at20 = share(20.0);
    assert!((at20 - 1.0).abs() < 0.01, "20 %: {at20}");
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
    let path = irqsim::validate::scenario_path(&reference_router::TABLE_64B);
    let exp = scenario::load(&path, &DiskFiles::default()).unwrap();
    let mut short = exp.clone();
    short.duration_s = 0.2;
    short.replications = 2;
    let one = irqsim::experiment::runner::run(&short, 1, &|| {})
        .expect("the sweep runs")
        .to_json();
    let two = irqsim::experiment::runner::run(&short, 2, &|| {})
        .expect("the sweep runs")
        .to_json();
    assert_eq!(one, two);
}
