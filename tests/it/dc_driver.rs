//! dc(4)'s own work on the 21143, each mechanism alone on a small model: the
//! transmitter's automatic descriptor poll (no transmit poll demand, DC_TX_POLL), and
//! dc_tick's splimp body with its mii_tick condition (DC_REDUCED_MII_POLL). Expected
//! values are derived in each test from the model's costs.

use irqsim::config::model::ModelConfig;
use irqsim::host::{RunSpec, RunStats, simulate};
use irqsim::model::traffic::FlowConfig;
use irqsim::sim::rng::RunKey;
use irqsim::sim::time::SimTime;
use serde_json::{Value, json};

/// NICs `a` and `b` on private lines: 5 us entry, 2 us per frame, 1 us exit, 5 us
/// forwarding, no bus.
fn model() -> Value {
    json!({
        "cpu": { "clock_mhz": 1000 },
        "kernel": { "netisr_per_packet": 5000 },
        "nics": [
            { "name": "a", "driver": { "isr_entry": 5000, "rx_per_packet": 2000, "isr_exit": 1000 } },
            { "name": "b", "driver": { "isr_entry": 5000, "rx_per_packet": 2000, "isr_exit": 1000 } }
        ]
    })
}

fn run(model: Value, rate_pps: f64, secs: f64) -> RunStats {
    let cfg: ModelConfig = serde_json::from_value(model).expect("model config");
    let flow: FlowConfig =
        serde_json::from_value(json!({ "from": "a", "to": "b", "frame_bytes": 64 })).expect("flow");
    let spec = RunSpec {
        flows: vec![flow],
        rates_pps: vec![rate_pps],
        duration: SimTime::from_secs_f64(secs),
        drain: SimTime::from_secs_f64(0.05),
        key: RunKey::single(5),
        timeline: None,
        latency_from: Default::default(),
    };
    simulate(&cfg, &spec).expect("valid")
}

/// (min, avg, max) latency [us].
fn latency(r: &RunStats) -> (f64, f64, f64) {
    let s = r.total.latency.summary();
    (s.min, s.avg, s.max)
}

#[test]
fn an_idle_transmitter_waits_for_its_next_automatic_poll() {
    // Frames 1,037 us apart, poll every 100 us: gcd(37, 100) = 1, so over each 100
    // frames the frame reaches the TX ring at every whole-us phase of the poll once,
    // and waits (100 - phase) mod 100 us: 0 to 99 us, 49.5 us on average, on top of
    // the pipeline without the poll (every frame alone: a constant latency).
    let rate = 1e6 / 1037.0;
    let plain = run(model(), rate, 1.037);
    let (p_min, p_avg, p_max) = latency(&plain);
    assert!((p_max - p_min).abs() < 1e-6, "no poll: constant latency");
    let mut m = model();
    m["nics"][1]["tx_poll_interval_ns"] = json!(100_000);
    let polled = run(m, rate, 1.037);
    let (min, avg, max) = latency(&polled);
    eprintln!("no poll {p_avg:.3} us; poll 100 us: min {min:.3} avg {avg:.3} max {max:.3}");
    assert!(min >= p_min - 1e-6 && min < p_min + 1.0, "min {min}");
    assert!(max <= p_min + 100.0 && max > p_min + 98.0, "max {max}");
    assert!(
        (avg - p_avg - 49.5).abs() < 1.0,
        "mean wait {}",
        avg - p_avg
    );
}

#[test]
fn a_frame_behind_a_busy_transmitter_needs_no_poll() {
    // Two flows into `a` land together every 1,037 us; the second frame reaches the TX
    // ring while the first is on the wire (6.72 us for 64 bytes at 100 Mbit/s), and the
    // transmitter, still running, takes it at the first one's end: its latency exceeds
    // the first's by less than the forwarding of one frame plus a wire time, never by
    // a poll interval.
    let mut m = model();
    m["nics"][1]["tx_poll_interval_ns"] = json!(100_000);
    let cfg: ModelConfig = serde_json::from_value(m).expect("model config");
    let flows: Vec<FlowConfig> = (0..2)
        .map(|_| {
            serde_json::from_value(json!({ "from": "a", "to": "b", "frame_bytes": 64 }))
                .expect("flow")
        })
        .collect();
    let spec = RunSpec {
        flows,
        rates_pps: vec![1e6 / 1037.0; 2],
        duration: SimTime::from_secs_f64(1.037),
        drain: SimTime::from_secs_f64(0.05),
        key: RunKey::single(5),
        timeline: None,
        latency_from: Default::default(),
    };
    let r = simulate(&cfg, &spec).expect("valid");
    let first = r.flows[0].1.latency.summary();
    let second = r.flows[1].1.latency.summary();
    eprintln!(
        "first avg {:.2} us, second avg {:.2} us",
        first.avg, second.avg
    );
    let gap = second.avg - first.avg;
    assert!(gap.abs() < 2.0 + 5.0 + 6.72, "gap {gap} us");
}

/// `a`'s link check: every 100 ms, `cost_us` of CPU at `spl`, mii_tick `when`.
fn with_tick(spl: &str, cost_us: f64, when: &str) -> Value {
    let mut m = model();
    m["nics"][0]["driver"]["link_watch"] = json!({
        "tick_period_ns": 1e8,
        "tick": { "ns": 1000 },
        "tick_spl": spl,
        "mii_tick": { "ns": cost_us * 1000.0 - 1000.0 },
        "mii_tick_when": when
    });
    m
}

#[test]
fn dc_tick_at_splimp_holds_the_receive_interrupt_off() {
    // Frames every 100 us, a 300 us tick ten times a second. At splimp the frame that
    // lands in the tick's first 100 us waits for its end: at least 200 us more than the
    // unloaded pipeline. From softclock the tick runs below the netisr and every
    // interrupt preempts it: the latency stays that of the pipeline.
    let base = run(model(), 10_000.0, 1.0);
    let (_, _, base_max) = latency(&base);
    let imp = run(with_tick("splimp", 300.0, "always"), 10_000.0, 1.0);
    let soft = run(with_tick("softclock", 300.0, "always"), 10_000.0, 1.0);
    let (_, _, imp_max) = latency(&imp);
    let (_, _, soft_max) = latency(&soft);
    eprintln!("max latency: none {base_max:.1}, softclock {soft_max:.1}, splimp {imp_max:.1} us");
    assert!(
        imp_max >= base_max + 200.0 && imp_max <= base_max + 300.0,
        "{imp_max}"
    );
    assert!((soft_max - base_max).abs() < 1.0, "{soft_max}");
    // Ticks at 0.1, 0.2, ..., 1.0 s (the run ends at 1.05 s): ten, each with mii_tick.
    assert_eq!(imp.counters["a.mii_ticks"], 10.0);
}

#[test]
fn mii_tick_runs_only_under_the_drivers_condition() {
    // `a` only receives: its receiver always has free descriptors at these rates and
    // it never holds a transmit descriptor, so the `idle` condition (DC_REDUCED_MII_POLL
    // on an MII PHY) holds at all ten ticks. `link-down` (the DC_21143_NWAY branch)
    // never holds: nothing resets the chip.
    let idle = run(with_tick("splimp", 50.0, "idle"), 10_000.0, 1.0);
    assert_eq!(idle.counters["a.mii_ticks"], 10.0);
    let down = run(with_tick("splimp", 50.0, "link-down"), 10_000.0, 1.0);
    assert_eq!(down.counters["a.mii_ticks"], 0.0);
    // Without mii_tick the tick costs its 1 us: the latency is that of the pipeline
    // within that microsecond.
    let (_, _, base_max) = latency(&run(model(), 10_000.0, 1.0));
    let (_, _, max) = latency(&down);
    assert!(max <= base_max + 1.0 + 1e-6, "{max} vs {base_max}");
}

#[test]
fn a_transmitter_holding_a_descriptor_skips_mii_tick() {
    // `b` transmits every frame, 103 us apart (so the ten ticks fall at different
    // phases of the frames). With TX_NOBUF reclaiming (interrupt_on_idle) a descriptor
    // is in use only from the netisr's if_output to the TX_NOBUF handler's txeof, about
    // 15 us of each 103: most ticks find dc_tx_cnt == 0 and run mii_tick. With a
    // completion interrupt every 16th frame only, sent descriptors stay in use between
    // those interrupts, 15 frames in 16: most ticks skip mii_tick.
    let tick_b = |completion: Value| {
        let mut m = model();
        m["nics"][1]["tx_completion"] = completion;
        m["nics"][1]["driver"]["tx_per_packet"] = json!(500);
        m["nics"][1]["driver"]["link_watch"] = json!({
            "tick_period_ns": 1e8, "tick": { "ns": 1000 }, "tick_spl": "splimp",
            "mii_tick": { "ns": 10000 }, "mii_tick_when": "idle"
        });
        run(m, 1e6 / 103.0, 1.0).counters["b.mii_ticks"]
    };
    let nobuf = tick_b(json!({ "interrupt_on_idle": true }));
    let every16 = tick_b(json!({ "interrupt_every": 16 }));
    eprintln!("b's ticks with mii_tick: TX_NOBUF {nobuf}, every 16th {every16}");
    assert!(nobuf >= 7.0, "{nobuf}");
    assert!(every16 <= 3.0, "{every16}");
}
