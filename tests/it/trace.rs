//! Traces (`irqsim run --trace`): the trace of a window agrees with the run's own
//! counters over that window, and the pcap captures read back to the frames and
//! latencies the run recorded.
//!
//! The scenario is the reference 64-byte table's (dc21143-64b-1flow.json) at 28 %, the
//! first livelocked point (interrupts starve the netisr, ipintrq overflows), shortened
//! to 0.3 s of sending.

use irqsim::config::scenario::{self, DiskFiles, Experiment};
use irqsim::experiment::runner;
use irqsim::host::{RunStats, simulate};
use irqsim::sim::time::SimTime;
use irqsim::trace::{TraceOutput, TraceSpec, pcap};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const SCENARIO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/dc21143-64b-1flow.json"
);

fn experiment(duration_s: f64) -> Experiment {
    let mut exp =
        scenario::load(Path::new(SCENARIO), &DiskFiles::default()).expect("scenario loads");
    exp.duration_s = duration_s;
    exp.drain_s = 0.05;
    exp
}

fn point(exp: &Experiment, load_pct: f64) -> usize {
    exp.variants[0]
        .points
        .iter()
        .position(|p| (p.load_pct - load_pct).abs() < 1e-9)
        .expect("load point")
}

fn ms(v: u64) -> SimTime {
    SimTime(v * 1_000_000_000)
}

fn traced(exp: &Experiment, p: usize, spec: TraceSpec) -> (RunStats, TraceOutput) {
    runner::trace(exp, 0, p, spec).expect("the traced run")
}

/// Run (0, `p`) of `exp` with sending cut at `duration`: its load-period counters are
/// those at `duration` of the full run (nothing before that instant depends on when
/// sending stops).
fn stats_at(exp: &Experiment, p: usize, duration: SimTime) -> RunStats {
    let mut spec = runner::run_spec(exp, 0, p, 0);
    spec.duration = duration;
    simulate(&exp.variants[0].model, &spec).expect("the run")
}

fn events(t: &TraceOutput) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&t.json).expect("trace.json is JSON");
    v["traceEvents"].as_array().expect("traceEvents").clone()
}

/// Whether an event is on a CPU level's track (slices of all tracks share one category).
fn on_cpu(e: &Value) -> bool {
    e["tid"]
        .as_u64()
        .is_some_and(irqsim::trace::chrome::is_cpu_tid)
}

fn f(e: &Value, k: &str) -> f64 {
    e[k].as_f64().unwrap_or_else(|| panic!("{k} in {e}"))
}

#[test]
fn the_trace_agrees_with_the_runs_counters_over_the_window() {
    let exp = experiment(0.3);
    let p = point(&exp, 28.0);
    // 28 % is 41,666.67 frames/s, a frame every 24 us. A run sending for D sends
    // floor(rate x D) frames (the tester's rule); with D a multiple of 24 us those are
    // all the frames that start before D, so the run is the full run up to D, and its
    // load-period counters are the full run's at D.
    let period = SimTime(24_000_000);
    let (from, to) = (SimTime(8_333 * period.0), SimTime(8_541 * period.0));
    let (stats, t) = traced(&exp, p, TraceSpec::window(from, to));
    let ev = events(&t);
    let (from_us, to_us) = (from.as_us_f64(), to.as_us_f64());

    // The traced run is the run: the same figures as without a trace.
    let plain = simulate(&exp.variants[0].model, &runner::run_spec(&exp, 0, p, 0)).unwrap();
    assert_eq!(format!("{:?}", stats.flows), format!("{:?}", plain.flows));
    assert_eq!(stats.events, plain.events);
    assert_eq!(stats.counters, plain.counters);

    // The counters over the window, from two runs whose sending stops at its ends.
    let (a, b) = (stats_at(&exp, p, from), stats_at(&exp, p, to));
    let tracks: BTreeMap<u64, String> = ev
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let slices: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "X" && on_cpu(e)).collect();
    assert!(slices.len() > 300, "{} slices", slices.len());
    for (level, l) in irqsim::model::cpu::Level::ALL.iter().enumerate() {
        let name = irqsim::trace::level_track(*l);
        let tid = tracks
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(k, _)| *k)
            .unwrap();
        let busy_us: f64 = slices
            .iter()
            .filter(|e| e["tid"].as_u64() == Some(tid))
            .map(|e| f(e, "dur"))
            .sum();
        let want_us = SimTime(b.cpu_ps[level] - a.cpu_ps[level]).as_us_f64();
        // Each slice is written to the picosecond (1e-6 us); the sum of a few hundred
        // differs from the counter's by their rounding in f64 only.
        assert!(
            (busy_us - want_us).abs() < 1e-6,
            "{name}: trace {busy_us} us, CPU accounting {want_us} us"
        );
        assert_eq!(
            t.window.cpu_ps[irqsim::trace::level_key(*l)],
            b.cpu_ps[level] - a.cpu_ps[level]
        );
    }
    // The two levels that run here: interrupts most of the time, the netisr starved.
    let hard = t.window.cpu_ps["hardirq"] as f64 / (to.0 - from.0) as f64;
    assert!(hard > 0.75, "hardirq share {hard}");

    // One slice beginning an interrupt pass per interrupt taken.
    let begun = slices
        .iter()
        .filter(|e| e["args"]["pass"].is_u64() && e["args"]["begins"] == true)
        .count() as u64;
    assert_eq!(begun, b.interrupts - a.interrupts);
    assert_eq!(t.window.interrupts, b.interrupts - a.interrupts);
    assert!(begun > 150, "{begun} interrupts in 5 ms");
    assert!(b.interrupts > a.interrupts + 150);

    // Drops in the trace are the drop counters' increase, site by site.
    let mut dropped: BTreeMap<String, u64> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["ph"] == "i" && e["cat"] == "drop") {
        let site = e["name"]
            .as_str()
            .unwrap()
            .trim_start_matches("drop: ")
            .to_string();
        *dropped.entry(site).or_default() += e["args"]["frames"].as_u64().unwrap();
        let ts = f(e, "ts");
        assert!((from_us..to_us).contains(&ts), "drop at {ts}");
    }
    for (site, n) in &t.window.drops {
        assert_eq!(
            dropped.get(site).copied().unwrap_or(0),
            *n,
            "drops at {site}"
        );
    }
    assert!(t.window.drops["ipintrq"] > 30, "{:?}", t.window.drops);

    inside_and_apart(&ev, from_us, to_us);

    // Counter samples lie inside the window.
    for e in ev.iter().filter(|e| e["ph"] == "C") {
        assert!((from_us..to_us).contains(&f(e, "ts")));
    }
}

/// Every slice lies inside the window; slices on one track never overlap.
fn inside_and_apart(ev: &[Value], from_us: f64, to_us: f64) {
    let mut by_track: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["ph"] == "X") {
        let (ts, dur) = (f(e, "ts"), f(e, "dur"));
        assert!(dur >= 0.0);
        assert!(
            ts >= from_us && ts + dur <= to_us + 1e-9,
            "slice {e} outside the window"
        );
        by_track
            .entry(e["tid"].as_u64().unwrap())
            .or_default()
            .push((ts, ts + dur));
    }
    for (tid, mut v) in by_track {
        v.sort_by(|x, y| x.0.total_cmp(&y.0));
        for w in v.windows(2) {
            assert!(
                w[0].1 <= w[1].0 + 1e-9,
                "track {tid}: {:?} overlaps {:?}",
                w[0],
                w[1]
            );
        }
    }
}

#[test]
fn several_flows_into_one_nic_and_a_cut_window_keep_slices_apart_and_inside() {
    // Four flows of 600-byte frames into the dc(4) router (independent arrivals on
    // shared input wires), and a window cut short by the size limit while frames
    // are committed to output wires ahead of time.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/dc21143-600b-4flows.json"
    );
    let mut exp = scenario::load(Path::new(path), &DiskFiles::default()).expect("scenario loads");
    // The third flow moved onto dc0 beside the first: two independent arrival streams
    // on one input wire.
    exp.variants[0].flows[2].from = "dc0".to_string();
    exp.variants[0].flows[2].to = "dc1".to_string();
    exp.duration_s = 0.2;
    exp.drain_s = 0.05;
    let p = exp.variants[0].points.len() - 1;
    let (_, t) = runner::trace(&exp, 0, p, TraceSpec::window(ms(100), ms(120))).unwrap();
    inside_and_apart(&events(&t), 100_000.0, 120_000.0);
    let mut spec = TraceSpec::window(ms(100), ms(150));
    spec.limit_bytes = 60_000;
    let (_, t) = runner::trace(&exp, 0, p, spec).unwrap();
    let end = t.truncated_at.expect("cut").as_us_f64();
    inside_and_apart(&events(&t), 100_000.0, end);
}

#[test]
fn flow_arrows_go_from_the_wire_through_the_cpu_to_the_wire() {
    let exp = experiment(0.3);
    let p = point(&exp, 26.0);
    let (_, t) = traced(&exp, p, TraceSpec::window(ms(200), ms(210)));
    let ev = events(&t);
    let mut arrows: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
    for e in ev
        .iter()
        .filter(|e| ["s", "t", "f"].contains(&e["ph"].as_str().unwrap_or("")))
    {
        arrows.entry(e["id"].as_u64().unwrap()).or_default().push(e);
    }
    // At 26 % (38,690 frames/s) 10 ms carries about 387 frames; every 16th is followed.
    assert!(arrows.len() >= 20, "{} arrows", arrows.len());
    let slices: Vec<(u64, f64, f64)> = ev
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                f(e, "ts"),
                f(e, "ts") + f(e, "dur"),
            )
        })
        .collect();
    let position = |e: &Value| ev.iter().position(|x| std::ptr::eq(x, e)).unwrap();
    let mut complete = 0;
    for pts in arrows.values() {
        assert_eq!(pts[0]["ph"], "s");
        assert_eq!(pts[pts.len() - 1]["ph"], "f");
        for w in pts.windows(2) {
            assert!(f(w[0], "ts") <= f(w[1], "ts"));
        }
        // Each point lies inside a slice of its track (Perfetto binds it to the slice
        // open there, the enclosing one for the last point's "bp": "e").
        for e in pts {
            let (tid, ts) = (e["tid"].as_u64().unwrap(), f(e, "ts"));
            assert!(
                slices
                    .iter()
                    .any(|&(k, a, b)| k == tid && a <= ts && ts <= b),
                "arrow point {e} binds to no slice"
            );
        }
        // Chrome DevTools' trace engine (FlowsHandler.js) groups an arrow's points by
        // cat, name and id, and binds each to the event with the same cat, pid, tid and
        // ts: one category and name per arrow, and a slice starting exactly at each
        // point, written before it (a stable sort by time then opens it first).
        for e in pts {
            assert_eq!(e["cat"], pts[0]["cat"]);
            assert_eq!(e["name"], pts[0]["name"]);
            let at = position(e);
            let bound = ev.iter().position(|x| {
                x["ph"] == "X"
                    && x["cat"] == e["cat"]
                    && x["pid"] == e["pid"]
                    && x["tid"] == e["tid"]
                    && x["ts"] == e["ts"]
            });
            assert!(
                bound.is_some_and(|b| b < at),
                "arrow point {e}: no slice with its cat, pid, tid and ts before it"
            );
        }
        // Below the knee: wire in, the interrupt, the netisr, wire out.
        if pts.len() == 4 {
            complete += 1;
        }
    }
    assert!(
        complete * 10 >= arrows.len() * 9,
        "{complete} of {}",
        arrows.len()
    );
}

/// Records of a pcap file: time stamp [ns], signature.
fn read_pcap(bytes: &[u8]) -> Vec<(u64, (u16, u64, u64), usize)> {
    let mut r = pcap_file::pcap::PcapReader::new(bytes).expect("a pcap file");
    assert_eq!(
        r.header().ts_resolution,
        pcap_file::TsResolution::NanoSecond
    );
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.expect("a record");
        let sig = pcap::signature(&p.data).expect("a signature");
        out.push((p.timestamp.as_nanos() as u64, sig, p.data.len()));
    }
    out
}

fn file<'a>(t: &'a TraceOutput, name: &str) -> &'a [u8] {
    &t.pcaps.iter().find(|(n, _)| n == name).expect(name).1
}

#[test]
fn pcap_files_read_back_to_the_windows_frames_and_latencies() {
    let exp = experiment(0.3);
    let p = point(&exp, 30.0);
    let mut spec = TraceSpec::window(ms(200), ms(230));
    spec.pcap = true;
    let (_, t) = traced(&exp, p, spec);
    let inp = read_pcap(file(&t, "dc0-in.pcap"));
    let out = read_pcap(file(&t, "dc1-out.pcap"));
    let w = &t.window.flows[0];
    assert_eq!(inp.len() as u64, w.frames_in);
    assert_eq!(out.len() as u64, w.frames_out);
    // The tester sends 30 % of 148,809 frames/s at constant rate: 1,339 or 1,340 in
    // 30 ms.
    let expected = 148_809.52 * 0.30 * 0.030;
    assert!(
        (inp.len() as f64 - expected).abs() <= 1.0,
        "{} in",
        inp.len()
    );
    assert!(inp.iter().all(|r| r.2 == 60), "64-byte frames without FCS");
    // Latency from the captures: output stamp minus the tester's stamp in the frame.
    let lat: Vec<f64> = out.iter().map(|(ts, sig, _)| (ts - sig.2) as f64).collect();
    let mean = lat.iter().sum::<f64>() / lat.len() as f64;
    let (min, max) = (
        lat.iter().copied().fold(f64::MAX, f64::min),
        lat.iter().copied().fold(0.0, f64::max),
    );
    // Stamps are whole nanoseconds, the run's latencies picoseconds: within 1 ns.
    assert!(
        (mean - w.latency.avg * 1e3).abs() < 1.0,
        "{mean} ns vs {} us",
        w.latency.avg
    );
    assert!((min - w.latency.min * 1e3).abs() < 1.0);
    assert!((max - w.latency.max * 1e3).abs() < 1.0);
    // A frame seen both ways carries the stamp it entered with.
    let stamps: BTreeMap<u64, u64> = inp.iter().map(|(ts, sig, _)| (sig.1, *ts)).collect();
    let both = out
        .iter()
        .filter(|(_, sig, _)| stamps.get(&sig.1) == Some(&sig.2))
        .count();
    assert!(both > out.len() / 2, "{both} of {}", out.len());
}

#[test]
fn a_window_over_the_whole_run_captures_what_results_count() {
    let exp = experiment(0.02);
    let p = point(&exp, 20.0);
    let mut spec = TraceSpec::window(SimTime::ZERO, ms(70));
    spec.pcap = true;
    let (stats, t) = traced(&exp, p, spec);
    let inp = read_pcap(file(&t, "dc0-in.pcap"));
    let out = read_pcap(file(&t, "dc1-out.pcap"));
    assert_eq!(inp.len() as u64, stats.total.sent);
    assert_eq!(out.len() as u64, stats.total.received);
    let s = stats.total.latency.summary();
    let lat: Vec<f64> = out.iter().map(|(ts, sig, _)| (ts - sig.2) as f64).collect();
    let mean = lat.iter().sum::<f64>() / lat.len() as f64;
    assert!(
        (mean - s.avg * 1e3).abs() < 1.0,
        "{mean} ns vs {} us",
        s.avg
    );
    let max = lat.iter().copied().fold(0.0, f64::max);
    assert!((max - s.max * 1e3).abs() < 1.0);
    assert_eq!(
        t.window.flows[0].latency,
        stats.flows[0].1.latency.summary()
    );
}

#[test]
fn a_window_over_the_size_limit_ends_where_the_limit_is_reached() {
    let exp = experiment(0.3);
    let p = point(&exp, 28.0);
    let mut spec = TraceSpec::window(ms(200), ms(250));
    spec.limit_bytes = 100_000;
    let (_, t) = traced(&exp, p, spec);
    let at = t.truncated_at.expect("cut by the limit");
    assert!(at > ms(200) && at < ms(250));
    assert!(t.window.truncated);
    // The limit is checked after each event: one event's records beyond it at most.
    assert!(t.json.len() < 110_000, "{} bytes", t.json.len());
    let end_us = at.as_us_f64();
    for e in events(&t).iter().filter(|e| e["ph"] == "X" && on_cpu(e)) {
        assert!(f(e, "ts") + f(e, "dur") <= end_us + 1e-9);
    }
}

#[test]
fn the_command_writes_the_files_and_refuses_what_does_not_fit() {
    let bin = env!("CARGO_BIN_EXE_irqsim");
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("s.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(SCENARIO).unwrap()).unwrap();
    let model = Path::new(SCENARIO)
        .parent()
        .unwrap()
        .join(v["model"].as_str().unwrap());
    v["model"] = model.canonicalize().unwrap().display().to_string().into();
    v["measured"] = Value::Null;
    v["duration_s"] = 0.05.into();
    v["load"] = serde_json::json!({"unit": "percent", "points": [26, 28]});
    std::fs::write(&sc, v.to_string()).unwrap();
    let out = dir.path().join("out");
    let run = |args: &[&str]| {
        Command::new(bin)
            .arg("run")
            .arg(&sc)
            .arg("--out")
            .arg(&out)
            .arg("--quiet")
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["--trace", "20ms..21ms", "--trace-point", "28", "--pcap"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "trace.json",
        "trace-window.json",
        "pcap/dc0-in.pcap",
        "pcap/dc1-out.pcap",
        "plots/trace.png",
        "plots/trace.svg",
        "results.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let o = run(&["--trace", "20ms..21ms"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--trace-point")
            && err.contains("26 (38690.476 frames/s), 28 (41666.667 frames/s)"),
        "{err}"
    );
    let o = run(&["--trace", "20ms..21ms", "--trace-point", "27"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no load point 27"));
    let o = run(&["--trace", "10s..11s", "--trace-point", "28"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("after the run"));
}
