//! Side by side in one run: irqsim against three event loops written for just one model
//! (a reference, a lean and a hand-specialised one), simulated packets per wall-clock
//! second.
//!
//! ```text
//! cargo bench --bench baseline              # full measurement (about 40 s)
//! cargo bench --bench baseline -- --test    # each once, on 0.2 s per point (.ci/run)
//! ```
//!
//! The model is the issue's simple one (`reference::Params::SIMPLE`: one NIC in, one out,
//! each on its own interrupt line, no bus; handler entry 15 us, 5.2 us per frame, exit
//! 0; netisr 5.6 us; RX ring 64, ipintrq 50; 64-byte frames at 100 Mbit/s) over the
//! project's 64-byte sweep (10-36 % by 2 %, 10 s per point, 1 s of drain: 14 points,
//! 4.8 M frames), on one thread:
//!
//! - `reference-loop`: the loop of `benches/reference/`, one point after the other
//!   (a first draft: wide heap keys, floating-point arrival times, stale events; kept
//!   as the independent reference that irqsim matches bit for bit);
//! - `lean-loop`: the loop of `benches/lean/`, the same model written carefully (integer
//!   time, packed `(time, seq)` keys, no stale events): the yardstick;
//! - `hand-loop`: the loop of `benches/hand/`, specialised to this one model (no heap:
//!   three pending times), the practical limit;
//! - `irqsim`: the same model as irqsim input (`benches/reference/irqsim_input.rs`), run by
//!   `irqsim::experiment::runner::run` on one thread, exactly as `irqsim run` does minus the output
//!   files (irqsim also fills a latency histogram and CPU-time accounts the reference loop
//!   does not keep).
//!
//! Before anything is timed, all of them run the sweep once and must agree exactly at
//! every point (the comparison of `tests/it/baseline.rs`), and every timed sweep must have
//! sent the frames pinned below: a run that got faster by simulating less fails
//! instead of reporting a better number. With `--test` the points are 0.2 s long, so
//! CI checks the agreement in well under a second.
//!
//! Criterion's `thrpt` line is in simulated packets (frames offered by the tester) per
//! second; after each benchmark a `work:` line gives the median time per sweep with
//! packets/s and events/s, and a last `side by side:` line both packets/s figures.

mod hand;
#[path = "reference/irqsim_input.rs"]
mod irqsim_input;
mod lean;
mod reference;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use reference::Params;
use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Frames the tester sends over the sweep at 10 s per point (the same as the
/// `dc21143-64b-interrupt` cases of `benches/sweeps.rs`: same loads, same durations).
const PACKETS_FULL: u64 = 4_791_660;
/// Sending time per point with `--test` [s].
const TEST_DURATION_S: f64 = 0.2;
/// Frames the tester sends over the sweep at 0.2 s per point.
const PACKETS_TEST: u64 = 95_827;

/// Frames sent and events processed by one sweep.
#[derive(Clone, Copy, Debug)]
struct Work {
    packets: u64,
    events: u64,
}

/// What both implementations run: the model, the sweep as irqsim input, and the same
/// points for the reference loop.
struct Sweep {
    params: Params,
    exp: irqsim::config::scenario::Experiment,
    loads_pct: Vec<f64>,
    duration_ps: u64,
    drain_ps: u64,
}

impl Sweep {
    fn new(test_mode: bool) -> Sweep {
        let params = Params::SIMPLE;
        let exp = irqsim_input::experiment(&params, test_mode.then_some(TEST_DURATION_S));
        let loads_pct = exp.variants[0].points.iter().map(|p| p.load_pct).collect();
        let (duration_ps, drain_ps) = irqsim_input::times_ps(&exp);
        Sweep {
            params,
            exp,
            loads_pct,
            duration_ps,
            drain_ps,
        }
    }

    /// One of the loops over every point: `run` gives a point's frames sent and events.
    fn over_points(&self, run: impl Fn(f64) -> (u64, u64)) -> Work {
        let mut w = Work {
            packets: 0,
            events: 0,
        };
        for &load in &self.loads_pct {
            let (sent, events) = black_box(run(load));
            w.packets += sent;
            w.events += events;
        }
        w
    }

    /// The reference loop over every point.
    fn reference(&self) -> Work {
        self.over_points(|load| {
            let n = reference::run(&self.params, load, self.duration_ps, self.drain_ps);
            (n.sent, n.events)
        })
    }

    /// The lean loop over every point.
    fn lean(&self) -> Work {
        self.over_points(|load| {
            let n = lean::run(&self.params, load, self.duration_ps, self.drain_ps);
            (n.sent, n.events)
        })
    }

    /// The hand-specialised loop over every point.
    fn hand(&self) -> Work {
        self.over_points(|load| {
            let n = hand::run(&self.params, load, self.duration_ps, self.drain_ps);
            (n.sent, n.events)
        })
    }

    /// irqsim's runner over every point, on one thread.
    fn irqsim(&self) -> irqsim::results::Results {
        irqsim::experiment::runner::run(&self.exp, 1, &|| {}).expect("irqsim runs the sweep")
    }

    fn irqsim_work(&self) -> Work {
        let r = black_box(self.irqsim());
        let sum = |f: fn(&irqsim::results::PointResult) -> f64| {
            r.points.iter().map(f).sum::<f64>().round() as u64
        };
        Work {
            packets: sum(|p| p.figures.total.sent),
            events: sum(|p| p.figures.events),
        }
    }

    /// Both implementations agree at every point (panics with every difference).
    fn check_agreement(&self) {
        let mut diffs = Vec::new();
        for point in &self.irqsim().points {
            let n = reference::run(
                &self.params,
                point.load_pct,
                self.duration_ps,
                self.drain_ps,
            );
            diffs.extend(irqsim_input::differences(point, &self.params, &n));
        }
        assert!(
            diffs.is_empty(),
            "irqsim and the reference loop differ:\n{}",
            diffs.join("\n")
        );
        for point in &self.irqsim().points {
            let l = lean::run(
                &self.params,
                point.load_pct,
                self.duration_ps,
                self.drain_ps,
            );
            let n = reference::run(
                &self.params,
                point.load_pct,
                self.duration_ps,
                self.drain_ps,
            );
            assert_eq!(
                (
                    l.sent,
                    l.received,
                    l.drops_rx_ring,
                    l.drops_ipintrq,
                    l.drops_if_snd
                ),
                (
                    n.sent,
                    n.received,
                    n.drops_rx_ring,
                    n.drops_ipintrq,
                    n.drops_if_snd
                ),
                "the lean loop differs from the reference loop (and irqsim) at {} %",
                point.load_pct
            );
            assert_eq!(
                l.latency_sum_ps, n.latency.sum_ps,
                "at {} %",
                point.load_pct
            );
            let h = hand::run(
                &self.params,
                point.load_pct,
                self.duration_ps,
                self.drain_ps,
            );
            assert_eq!(
                lean::Outcome { events: 0, ..h },
                lean::Outcome { events: 0, ..l },
                "the hand loop differs from the lean loop at {} %",
                point.load_pct
            );
        }
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

fn bench(c: &mut Criterion) {
    // Criterion's own flag: each benchmark once, as a test.
    let test_mode = std::env::args().any(|a| a == "--test");
    let sweep = Sweep::new(test_mode);
    sweep.check_agreement();
    let packets = if test_mode {
        PACKETS_TEST
    } else {
        PACKETS_FULL
    };
    let mut group = c.benchmark_group("baseline-64b-sweep");
    // A sweep takes about a second: ten samples of one sweep each.
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(packets));
    let cases: [(&str, &dyn Fn() -> Work); 4] = [
        ("reference-loop", &|| sweep.reference()),
        ("lean-loop", &|| sweep.lean()),
        ("hand-loop", &|| sweep.hand()),
        ("irqsim", &|| sweep.irqsim_work()),
    ];
    let mut rates = Vec::new();
    for (name, run) in cases {
        let times = RefCell::new(Vec::new());
        let mut last_events = 0;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut done = Vec::with_capacity(iters as usize);
                let t0 = Instant::now();
                for _ in 0..iters {
                    done.push(run());
                }
                let elapsed = t0.elapsed();
                for w in done {
                    assert_eq!(
                        w.packets, packets,
                        "{name}: the sweep sent other frames than pinned in benches/baseline.rs"
                    );
                    last_events = w.events;
                }
                times.borrow_mut().push(elapsed / iters.max(1) as u32);
                elapsed
            })
        });
        let mut t = times.into_inner();
        if !t.is_empty() {
            let m = median(&mut t).as_secs_f64();
            let pps = packets as f64 / m;
            println!(
                "work: baseline-64b-sweep/{name}: {packets} packets, {last_events} events per \
                 sweep; median {m:.3} s/sweep over {} timings = {:.2} M packets/s, {:.2} M \
                 events/s (1 thread)",
                t.len(),
                pps / 1e6,
                last_events as f64 / m / 1e6,
            );
            rates.push((name, pps));
        }
    }
    group.finish();
    if let [
        (_, reference_pps),
        (_, lean_pps),
        (_, hand_pps),
        (_, irqsim_pps),
    ] = rates[..]
    {
        println!(
            "side by side: reference loop {:.2} M packets/s, lean loop {:.2} M \
             packets/s, hand-specialised loop {:.2} M packets/s, irqsim {:.2} M packets/s \
             (irqsim / lean = {:.2}, irqsim / hand = {:.3}, irqsim / reference = {:.2})",
            reference_pps / 1e6,
            lean_pps / 1e6,
            hand_pps / 1e6,
            irqsim_pps / 1e6,
            irqsim_pps / lean_pps,
            irqsim_pps / hand_pps,
            irqsim_pps / reference_pps
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
