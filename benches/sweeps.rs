//! Sweep benchmarks: simulated packets and events per wall-clock second.
//!
//! ```text
//! cargo bench --bench sweeps              # full measurement (about a minute)
//! cargo bench --bench sweeps -- --test    # each benchmark once (what .ci/run does)
//! cargo bench --bench sweeps -- livelock  # only the benchmarks whose id contains `livelock`
//! ```
//!
//! Each benchmark runs a whole scenario through `irqsim::experiment::runner::run`, exactly as
//! `irqsim run` does minus the output files, and **asserts the work it did**: the frames
//! sent (`points[].figures.total.sent`) and the events processed (`figures.events`),
//! summed over the sweep, must equal the numbers pinned in [`CASES`]. A run that got
//! faster by simulating less fails instead of reporting a better number.
//!
//! The packet counts follow from the scenarios alone. The event counts follow from the
//! engine and the model too: a change to the hot path that removes events on purpose
//! (fewer events per packet), or a model that simulates more (e.g. the PCI bus's DMA
//! bursts as events), must update the pinned number; the failure message gives the new
//! count. Events/s is only comparable between builds with the same events per packet;
//! packets/s is comparable as long as the model is the same.
//!
//! Criterion's own `thrpt` line is in simulated packets per second (`elem/s`); after each
//! benchmark a `work:` line gives the median time per sweep with packets/s and events/s.
//!
//! Cases: (a) the 64-byte dc21143 sweep (`scenarios/dc21143-64b-1flow.json`, interrupt
//! policy, 14 points, 4.8 M frames) on one thread, on two threads, and its three livelock
//! points (28-32 %) alone on one thread; (b) a 1 Gbit/s 64-byte NAPI sweep
//! (`scenarios/napi-1g-64b.json`); (c) the xl(4) statistics-overflow scenario
//! (`scenarios/xl-stats-overflow.json`, four variants, with a latency timeline); (d) the
//! multi-NIC sweep `scenarios/dc21143-600b-4flows.json` (four-port router, four 600-byte
//! flows with random tester clocks, shared IRQ line, PCI bus; 10 points of 10 s) with
//! one replication instead of the scenario's four (4.4 M frames instead of 17.7 M, so
//! a sample takes about 1 s rather than 4.5 s) on one thread. The random clocks are drawn
//! from the scenario's seed, so the work is the same on every run. (e) the many-core
//! engine (`scenarios/many-cores-bench.json`): 32 flows without loss on one core with
//! one queue, and on eight cores with eight queues, the same traffic.

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use irqsim::config::scenario::{self, DiskFiles, Experiment};
use irqsim::experiment::runner;
use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

/// What one sweep must do.
struct Case {
    /// Benchmark id: `group/name`.
    group: &'static str,
    name: &'static str,
    /// Scenario under `scenarios/`.
    scenario: &'static str,
    /// Keep only the points whose load (%) is in this range (inclusive).
    loads: Option<(f64, f64)>,
    /// Keep only this variant of the scenario.
    variant: Option<&'static str>,
    /// Replications per point instead of the scenario's (the first ones: replication
    /// `r` draws the same random numbers whatever the count).
    replications: Option<u32>,
    /// Worker threads.
    threads: usize,
    /// Frames sent over the sweep (sum of `figures.total.sent` x replications).
    packets: u64,
    /// Events processed over the sweep (sum of `figures.events` x replications).
    events: u64,
}

const CASES: &[Case] = &[
    Case {
        group: "dc21143-64b-interrupt",
        name: "all-points-1thread",
        scenario: "dc21143-64b-1flow.json",
        loads: None,
        variant: None,
        replications: None,
        threads: 1,
        packets: 4_791_660,
        events: 36_285_499,
    },
    Case {
        group: "dc21143-64b-interrupt",
        name: "all-points-2threads",
        scenario: "dc21143-64b-1flow.json",
        loads: None,
        variant: None,
        replications: None,
        threads: 2,
        packets: 4_791_660,
        events: 36_285_499,
    },
    Case {
        group: "dc21143-64b-interrupt",
        name: "livelock-28-32pct-1thread",
        scenario: "dc21143-64b-1flow.json",
        loads: Some((28.0, 32.0)),
        variant: None,
        replications: None,
        threads: 1,
        packets: 1_339_284,
        events: 7_285_798,
    },
    Case {
        group: "napi-1g-64b",
        name: "all-points-1thread",
        scenario: "napi-1g-64b.json",
        loads: None,
        variant: None,
        replications: None,
        threads: 1,
        packets: 788_687,
        events: 2_120_992,
    },
    Case {
        group: "xl-stats-overflow",
        name: "4-variants-1thread",
        scenario: "xl-stats-overflow.json",
        loads: None,
        variant: None,
        replications: None,
        threads: 1,
        packets: 480_000,
        events: 2_946_718,
    },
    Case {
        group: "dc21143-600b-4flows",
        name: "all-points-1rep-1thread",
        scenario: "dc21143-600b-4flows.json",
        loads: None,
        variant: None,
        replications: Some(1),
        threads: 1,
        packets: 4_435_464,
        events: 52_746_926,
    },
    Case {
        group: "many-cores",
        name: "1core-32flows",
        scenario: "many-cores-bench.json",
        loads: None,
        variant: Some("1-core"),
        replications: None,
        threads: 1,
        packets: 960_000,
        events: 3_870_001,
    },
    Case {
        group: "many-cores",
        name: "8cores-8queues-32flows",
        scenario: "many-cores-bench.json",
        loads: None,
        variant: Some("8-cores-8-queues"),
        replications: None,
        threads: 1,
        packets: 960_000,
        events: 4_080_001,
    },
];

/// Frames sent and events processed by one sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Work {
    packets: u64,
    events: u64,
}

fn experiment(case: &Case) -> Experiment {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(case.scenario);
    let mut exp = scenario::load(&path, &DiskFiles::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if let Some(r) = case.replications {
        exp.replications = r;
    }
    if let Some(v) = case.variant {
        exp.variants.retain(|x| x.name == v);
        assert!(
            !exp.variants.is_empty(),
            "no variant {v} in {}",
            case.scenario
        );
    }
    if let Some((lo, hi)) = case.loads {
        exp.retain_points(|p| p.load_pct >= lo && p.load_pct <= hi);
        assert!(
            exp.npoints() > 0,
            "no point of {} in {lo}-{hi} %",
            case.scenario
        );
    }
    exp
}

/// Run the whole sweep and count what it did.
fn sweep(exp: &Experiment, threads: usize) -> Work {
    let results = runner::run(exp, threads, &|| {}).expect("the sweep runs");
    let (mut packets, mut events) = (0.0, 0.0);
    for p in &results.points {
        packets += p.figures.total.sent * p.replications as f64;
        events += p.figures.events * p.replications as f64;
    }
    Work {
        packets: packets.round() as u64,
        events: events.round() as u64,
    }
}

fn check(case: &Case, got: Work) {
    let want = Work {
        packets: case.packets,
        events: case.events,
    };
    assert_eq!(
        got, want,
        "{}/{}: the sweep did different work than pinned in benches/sweeps.rs. Packets \
         come from the scenario and must not change; an event count that changed because \
         the engine needs fewer events per packet on purpose, or because the model now \
         simulates more, is updated in CASES.",
        case.group, case.name
    );
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
    let mut groups: Vec<&str> = CASES.iter().map(|c| c.group).collect();
    groups.dedup();
    for g in groups {
        let mut group = c.benchmark_group(g);
        // A sweep takes 20 ms to 2 s: ten samples of one sweep each (criterion warns
        // that the longer ones overrun the 3 s and takes the ten samples anyway).
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        for case in CASES.iter().filter(|c| c.group == g) {
            let exp = experiment(case);
            group.throughput(Throughput::Elements(case.packets));
            let times = RefCell::new(Vec::new());
            group.bench_function(case.name, |b| {
                b.iter_custom(|iters| {
                    let mut done = Vec::with_capacity(iters as usize);
                    let t0 = Instant::now();
                    for _ in 0..iters {
                        done.push(sweep(&exp, case.threads));
                    }
                    let elapsed = t0.elapsed();
                    for w in done {
                        check(case, w);
                    }
                    times.borrow_mut().push(elapsed / iters.max(1) as u32);
                    elapsed
                })
            });
            let mut t = times.into_inner();
            if !t.is_empty() {
                let m = median(&mut t).as_secs_f64();
                println!(
                    "work: {g}/{}: {} packets, {} events per sweep; median {:.3} s/sweep \
                     over {} timings = {:.2} M packets/s, {:.2} M events/s ({} thread(s))",
                    case.name,
                    case.packets,
                    case.events,
                    m,
                    t.len(),
                    case.packets as f64 / m / 1e6,
                    case.events as f64 / m / 1e6,
                    case.threads,
                );
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
