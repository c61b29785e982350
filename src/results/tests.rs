use super::*;

#[test]
fn ci_uses_student_t() {
    // Values 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.3027, half = 4.3027 / sqrt(3).
    let reps: Vec<PointFigures> = [1.0, 2.0, 3.0]
        .iter()
        .map(|x| PointFigures {
            interrupts_per_s: *x,
            ..Default::default()
        })
        .collect();
    let (m, h) = PointFigures::aggregate(&reps);
    assert!((m.interrupts_per_s - 2.0).abs() < 1e-12);
    assert!((h.unwrap().interrupts_per_s - 4.302_652_7 / 3f64.sqrt()).abs() < 1e-6);
}

#[test]
fn a_counter_absent_from_a_replication_counts_as_zero_there() {
    // `napi.busy_polls` is published only once a busy loop has run
    // (src/model/policy/napi/), so a replication that ran none has no such key: it
    // counted 0 there. Replication 0 lacks it and the high-water mark `x.high_water`,
    // which the later ones have. By hand: busy_polls 0, 4, 8: mean 4, s = 4, half-width
    // t(0.975, 2) 4 / sqrt(3) = 4.3026527 x 2.3094011 = 9.936551; polls 10, 20, 30:
    // mean 20, half-width 4.3026527 x 10 / sqrt(3) = 24.841377; the high-water mark the
    // highest reached, 5, with interval 0. Tolerance 1e-6 (t to 8 digits).
    let rep = |c: &[(&str, f64)]| PointFigures {
        counters: c.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
        ..Default::default()
    };
    let reps = [
        rep(&[("napi.polls", 10.0)]),
        rep(&[
            ("napi.polls", 20.0),
            ("napi.busy_polls", 4.0),
            ("x.high_water", 5.0),
        ]),
        rep(&[
            ("napi.polls", 30.0),
            ("napi.busy_polls", 8.0),
            ("x.high_water", 3.0),
        ]),
    ];
    let (m, h) = PointFigures::aggregate(&reps);
    let h = h.expect("three replications");
    let keys: Vec<&str> = m.counters.keys().map(|k| k.as_str()).collect();
    assert_eq!(keys, ["napi.busy_polls", "napi.polls", "x.high_water"]);
    assert_eq!(h.counters.len(), 3);
    assert!((m.counters["napi.busy_polls"] - 4.0).abs() < 1e-12);
    assert!((h.counters["napi.busy_polls"] - 9.936_551).abs() < 1e-6);
    assert!((m.counters["napi.polls"] - 20.0).abs() < 1e-12);
    assert!((h.counters["napi.polls"] - 24.841_377).abs() < 1e-6);
    assert_eq!(
        (m.counters["x.high_water"], h.counters["x.high_water"]),
        (5.0, 0.0)
    );
}

#[test]
fn replications_report_true_extremes() {
    // Three replications whose latency ranges are [10, 50], [12, 90], [8, 40] us:
    // min and max are the extremes seen (8 and 90), not means (10 and 60); the
    // average and the percentiles stay means (over the three that delivered) with
    // their intervals.
    let rep = |min: f64, max: f64, p99: f64, hw: f64| {
        let mut f = PointFigures::default();
        f.total.latency_us = LatencySummary {
            min,
            avg: (min + max) / 2.0,
            max,
            p99,
            ..Default::default()
        };
        f.flows = vec![f.total.clone()];
        f.counters.insert("dc0.rx_ring.high_water".into(), hw);
        f
    };
    let mut reps = vec![
        rep(10.0, 50.0, 45.0, 3.0),
        rep(12.0, 90.0, 80.0, 7.0),
        rep(8.0, 40.0, 35.0, 5.0),
    ];
    for r in &mut reps {
        r.total.received = 1.0;
        r.flows[0].received = 1.0;
    }
    // A fourth replication that delivered nothing reports a zero latency summary:
    // it does not make the minimum 0, nor pull the means down.
    reps.push(rep(0.0, 0.0, 0.0, 1.0));
    let (m, h) = PointFigures::aggregate(&reps);
    let h = h.expect("ci");
    for (l, c) in [
        (&m.total.latency_us, &h.total.latency_us),
        (&m.flows[0].latency_us, &h.flows[0].latency_us),
    ] {
        assert_eq!((l.min, l.max), (8.0, 90.0));
        assert_eq!((c.min, c.max), (0.0, 0.0));
        assert!((l.p99 - 160.0 / 3.0).abs() < 1e-9);
        assert!((l.avg - (30.0 + 51.0 + 24.0) / 3.0).abs() < 1e-9);
        assert!(c.p99 > 0.0);
    }
    assert_eq!(m.counters["dc0.rx_ring.high_water"], 7.0);
}
