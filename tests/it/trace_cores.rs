//! Traces of hosts with several cores (issue 37, part 5): a process per core with its
//! level tracks, counters per queue and per core, and flow arrows that follow a frame
//! across cores (RPS) to the transmit queue XPS picked; the window's figures agree with
//! the run's counters, and the traced run is the untraced one.
//!
//! The scenario is the modern Linux router (scenarios/modern-10g-24flows.json: six
//! cores, eth0 and eth1 of six queues each, 24 UDP flows of 64-byte frames), its
//! variants `napi-rps` (RPS over the six cores on every receive queue) and
//! `napi-threaded` (a NAPI thread per receive queue), at the lowest load point, with
//! 2 ms of sending.

use irqsim::config::scenario::{self, DiskFiles, Experiment};
use irqsim::experiment::runner;
use irqsim::host::{RunStats, simulate};
use irqsim::sim::time::SimTime;
use irqsim::trace::chrome::{core_of_tid, is_cpu_tid};
use irqsim::trace::{TraceOutput, TraceSpec};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SCENARIO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/modern-10g-24flows.json"
);

/// The scenario with `duration` of sending and 0.2 ms of drain; the index of `variant`.
fn experiment(variant: &str, duration: SimTime) -> (Experiment, usize) {
    let mut exp =
        scenario::load(Path::new(SCENARIO), &DiskFiles::default()).expect("scenario loads");
    exp.duration_s = duration.as_secs_f64();
    exp.drain_s = 0.0002;
    let v = exp
        .variants
        .iter()
        .position(|x| x.name == variant)
        .expect("variant");
    (exp, v)
}

fn ms(v: u64) -> SimTime {
    SimTime(v * 1_000_000_000)
}

/// Time in picoseconds from the file's microseconds (six decimals: exact).
fn ps(e: &Value, k: &str) -> u64 {
    let us = e[k].as_f64().unwrap_or_else(|| panic!("{k} in {e}"));
    (us * 1e6).round() as u64
}

/// The traced run of (`v`, lowest load point) over `window`, and the untraced run.
fn traced(exp: &Experiment, v: usize, window: (SimTime, SimTime)) -> (RunStats, TraceOutput) {
    traced_at(exp, v, 0, window)
}

/// The traced run of (`v`, point `p`) over `window`, checked equal to the untraced run.
fn traced_at(
    exp: &Experiment,
    v: usize,
    p: usize,
    window: (SimTime, SimTime),
) -> (RunStats, TraceOutput) {
    let spec = TraceSpec::window(window.0, window.1);
    let (stats, out) = runner::trace(exp, v, p, spec).expect("the traced run");
    let plain = simulate(&exp.variants[v].model, &runner::run_spec(exp, v, p, 0))
        .expect("the untraced run");
    // The traced run is the untraced one: every figure it measured is equal.
    assert_eq!(format!("{stats:?}"), format!("{plain:?}"));
    (stats, out)
}

fn events(t: &TraceOutput) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&t.json).expect("trace.json is JSON");
    v["traceEvents"].as_array().expect("traceEvents").clone()
}

/// Track names by (pid, tid).
fn thread_names(ev: &[Value]) -> BTreeMap<(u64, u64), String> {
    ev.iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            (key, e["args"]["name"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The level key (as `trace-window.json` names it) a core track's slices count for.
fn level_of(name: &str) -> &'static str {
    let rest = name.split_once(' ').map_or("", |(_, r)| r);
    match rest {
        "clock" => "clock",
        "hardirq" => "hardirq",
        "softirq" => "softirq",
        "softclock" => "softclock",
        "kernel threads" => "kernel",
        "user" | "ksoftirqd" | "NAPI threads" => "user",
        "idle loop" => "idle_loop",
        other => panic!("a core track named {other:?}"),
    }
}

/// Checks every many-core trace must pass; returns, per core, the CPU time of its
/// slices per level and of its kernel-thread tracks [ps].
fn check_trace(
    out: &TraceOutput,
    cores: usize,
    window: (SimTime, SimTime),
) -> Vec<(BTreeMap<&'static str, u64>, u64)> {
    let ev = events(out);
    let names = thread_names(&ev);
    // One process per core, after the host's.
    let procs: Vec<(u64, &str)> = ev
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    let want: Vec<(u64, String)> = std::iter::once((1, "irqsim host".to_string()))
        .chain((0..cores).map(|c| (2 + c as u64, format!("cpu{c}"))))
        .collect();
    assert_eq!(
        procs
            .iter()
            .map(|(p, n)| (*p, n.to_string()))
            .collect::<Vec<_>>(),
        want
    );
    // CPU slices sit on their core's process and tracks, inside the window, apart.
    let mut by_core: Vec<Vec<(u64, u64, String)>> = vec![Vec::new(); cores];
    for e in ev.iter().filter(|e| e["ph"] == "X") {
        let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        if !is_cpu_tid(tid) {
            assert_eq!(pid, 1, "a host track's slice in another process: {e}");
            continue;
        }
        let core = core_of_tid(tid).expect("a core's track");
        assert_eq!(pid, 2 + core as u64, "{e}");
        let (s, d) = (ps(e, "ts"), ps(e, "dur"));
        assert!(d > 0, "{e}");
        assert!(
            s >= window.0.0 && s + d <= window.1.0,
            "outside the window: {e}"
        );
        by_core[core].push((s, s + d, names[&(pid, tid)].clone()));
    }
    let mut per_core = Vec::new();
    for (c, slices) in by_core.iter_mut().enumerate() {
        slices.sort();
        for w in slices.windows(2) {
            assert!(w[0].1 <= w[1].0, "core {c}: {w:?} overlap");
        }
        let mut levels: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut kthreads = 0;
        for (s, e, name) in slices.iter() {
            assert!(name.starts_with(&format!("cpu{c} ")), "{name} on core {c}");
            *levels.entry(level_of(name)).or_default() += e - s;
            if name.ends_with("ksoftirqd") || name.ends_with("NAPI threads") {
                kthreads += e - s;
            }
        }
        per_core.push((levels, kthreads));
    }
    // Every arrow's points sit at the start of a slice on their track.
    let starts: BTreeSet<(u64, u64, u64)> = ev
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            (pid, tid, ps(e, "ts"))
        })
        .collect();
    let points: Vec<&Value> = ev
        .iter()
        .filter(|e| ["s", "t", "f"].contains(&e["ph"].as_str().unwrap_or("")))
        .collect();
    for p in &points {
        let key = (
            p["pid"].as_u64().unwrap(),
            p["tid"].as_u64().unwrap(),
            ps(p, "ts"),
        );
        assert!(starts.contains(&key), "an unbound arrow point {p}");
        assert_eq!(p["cat"], "host");
    }
    // An arrow's points go forward in time, each after the one before (Chrome
    // DevTools keys an arrow's points by time: of two at one time it would draw one;
    // and a frame cannot be taken before it arrived), so none repeats a slice either.
    let mut last: BTreeMap<u64, u64> = BTreeMap::new();
    for p in &points {
        let id = p["id"].as_u64().unwrap();
        let t = ps(p, "ts");
        if let Some(&before) = last.get(&id) {
            assert!(t > before, "a point at or before the one before it: {p}");
        }
        last.insert(id, t);
    }
    per_core
}

/// The arrows of a trace: per id, its points' (pid, tid), in order.
fn arrows(ev: &[Value]) -> BTreeMap<u64, Vec<(u64, u64)>> {
    let mut a: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
    for e in ev
        .iter()
        .filter(|e| ["s", "t", "f"].contains(&e["ph"].as_str().unwrap_or("")))
    {
        a.entry(e["id"].as_u64().unwrap())
            .or_default()
            .push((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()));
    }
    a
}

#[test]
fn a_trace_of_six_cores_agrees_with_the_runs_counters_core_by_core() {
    // A window over the whole sending period: its figures are the run's load-period
    // counters, core by core.
    let d = ms(2);
    let (exp, v) = experiment("napi-rps", d);
    let (stats, out) = traced(&exp, v, (SimTime::ZERO, d));
    let cores = stats.core_cpu_ps.len();
    assert_eq!(cores, 6);
    let per_core = check_trace(&out, cores, (SimTime::ZERO, d));
    let w = &out.window;
    assert_eq!(w.cores.len(), cores);
    let level_keys = [
        "clock",
        "hardirq",
        "softirq",
        "softclock",
        "kernel",
        "user",
        "idle_loop",
    ];
    for (c, (levels, kthreads)) in per_core.iter().enumerate() {
        let wc = &w.cores[c];
        eprintln!(
            "cpu{c}: trace {levels:?} kthreads {kthreads} ps, {} slices; window {:?}",
            wc.slices, wc.cpu_ps
        );
        for (i, k) in level_keys.iter().enumerate() {
            // The window's figure is the run's counter.
            assert_eq!(wc.cpu_ps[*k], stats.core_cpu_ps[c][i], "cpu{c} {k}");
            // The trace's slices add up to it (each slice exact to the picosecond).
            let traced = levels.get(k).copied().unwrap_or(0);
            assert!(
                traced.abs_diff(wc.cpu_ps[*k]) <= wc.slices,
                "cpu{c} {k}: slices {traced} ps, counter {} ps",
                wc.cpu_ps[*k]
            );
        }
        assert_eq!(wc.cpu_ps["idle"], stats.core_cpu_ps[c][7]);
        assert_eq!(wc.kthread_ps, stats.core_ksoftirqd_ps[c]);
        assert!(kthreads.abs_diff(wc.kthread_ps) <= wc.slices);
    }
    // The sums over the cores are the host's figures.
    for (i, k) in level_keys.iter().enumerate() {
        let sum: u64 = w.cores.iter().map(|c| c.cpu_ps[*k]).sum();
        assert_eq!(sum, w.cpu_ps[*k]);
        assert_eq!(w.cpu_ps[*k], stats.cpu_ps[i]);
    }
    assert_eq!(w.interrupts, stats.interrupts);
    assert_eq!(w.slices, w.cores.iter().map(|c| c.slices).sum::<u64>());
    eprintln!(
        "window: {} slices, {} interrupts, {} events",
        w.slices, w.interrupts, w.events
    );
}

#[test]
fn arrows_follow_a_frame_steered_by_rps_to_another_core_and_out_of_its_transmit_queue() {
    let d = ms(3);
    let window = (ms(1), ms(2));
    let (mut exp, v) = experiment("napi-rps", d);
    // The arrows' shape, without idle states: with them, the frames a waking core's
    // steps take during the exit latency bind to the slice that starts after it, and
    // two such takes on one slice make one point (a limit of the trace, stated in
    // docs/model.md).
    exp.variants[v].model.cpu.idle = None;
    let (stats, out) = traced(&exp, v, window);
    let cores = stats.core_cpu_ps.len();
    check_trace(&out, cores, window);
    let ev = events(&out);
    let names = thread_names(&ev);
    let a = arrows(&ev);
    let core = |(_, tid): (u64, u64)| core_of_tid(tid);
    let mut whole = 0;
    let mut across = 0;
    let mut out_queues = BTreeSet::new();
    for pts in a.values() {
        let first = &names[&pts[0]];
        let last = &names[pts.last().unwrap()];
        if !(first.ends_with("wire in") && last.ends_with("wire out")) {
            continue;
        }
        whole += 1;
        out_queues.insert(last.clone());
        let on: Vec<usize> = pts.iter().filter_map(|&p| core(p)).collect();
        // From the ring by the receiving queue's core, from the backlog by RPS's
        // (the same core's track twice when RPS picked the polling core: the slice is
        // cut where the backlog poll took the frame).
        assert_eq!(on.len(), 2, "{pts:?}");
        if on[0] != on[1] {
            across += 1;
        }
        // XPS (the model's default, as ixgbe sets it): transmit queue k serves core k,
        // so the frame leaves by the queue of the core that forwarded it.
        let q: usize = last
            .strip_prefix("eth1-q")
            .and_then(|r| r.strip_suffix(" wire out"))
            .and_then(|k| k.parse().ok())
            .unwrap_or_else(|| panic!("{last}"));
        assert_eq!(q, on[1], "{pts:?}: out by {last}");
    }
    eprintln!(
        "{} arrows, {whole} from wire to wire, {across} across two cores; out by {out_queues:?}",
        a.len()
    );
    assert!(whole > 20, "{whole}");
    // RPS over six cores sends most frames to a core other than the polling one.
    assert!(across * 2 > whole, "{across} of {whole}");
    // Transmit queues: each frame leaves by the queue picked for it (XPS for the core
    // that forwarded it, or without XPS skb_tx_hash), so several of eth1's queues'
    // wires carry arrows' last points.
    assert!(out_queues.len() > 1, "{out_queues:?}");
    assert!(out_queues.iter().all(|n| n.starts_with("eth1-q")));
    // Counters: per receive and transmit ring of each queue, a backlog per core.
    let counters: BTreeSet<&str> = ev
        .iter()
        .filter(|e| e["ph"] == "C")
        .filter_map(|e| e["name"].as_str())
        .collect();
    eprintln!("counter tracks: {counters:?}");
    assert!(counters.iter().filter(|n| n.ends_with(" rx ring")).count() >= 6);
    assert_eq!(
        counters.iter().filter(|n| n.ends_with(" backlog")).count(),
        6,
        "a backlog per core"
    );
}

#[test]
fn threaded_napi_polls_on_napi_thread_tracks_of_the_queues_cores() {
    let d = ms(2);
    let (exp, v) = experiment("napi-threaded", d);
    let (stats, out) = traced(&exp, v, (SimTime::ZERO, d));
    let cores = stats.core_cpu_ps.len();
    let per_core = check_trace(&out, cores, (SimTime::ZERO, d));
    let ev = events(&out);
    let names = thread_names(&ev);
    let napi: BTreeMap<String, usize> = ev
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter_map(|e| {
            let key = (e["pid"].as_u64()?, e["tid"].as_u64()?);
            let n = &names[&key];
            n.ends_with("NAPI threads").then(|| n.clone())
        })
        .fold(BTreeMap::new(), |mut m, n| {
            *m.entry(n).or_default() += 1;
            m
        });
    eprintln!("NAPI-thread slices per track: {napi:?}");
    assert!(napi.len() > 1, "{napi:?}");
    for (c, (_, kthreads)) in per_core.iter().enumerate() {
        let wc = &out.window.cores[c];
        assert_eq!(wc.kthread_ps, stats.core_ksoftirqd_ps[c]);
        assert!(kthreads.abs_diff(wc.kthread_ps) <= wc.slices);
    }
}

#[test]
fn at_line_rate_softirq_work_moves_to_ksoftirqd_tracks() {
    // 24 x 620,000 frames/s (14.88 M frames/s, line rate): NET_RX runs out of its
    // budget and restarts, and ksoftirqd (a User-level kernel thread) takes the rest.
    let d = ms(2);
    let (exp, v) = experiment("napi-rps", d);
    let top = exp.variants[v].points.len() - 1;
    // A short window late in the run.
    let window = (SimTime(1_600_000_000), d);
    let (stats, out) = traced_at(&exp, v, top, window);
    let cores = stats.core_cpu_ps.len();
    let per_core = check_trace(&out, cores, window);
    let ev = events(&out);
    let names = thread_names(&ev);
    let ksoftirqd = ev
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter(|e| {
            let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            names[&key].ends_with("ksoftirqd")
        })
        .count();
    let kthread_ps: Vec<u64> = out.window.cores.iter().map(|c| c.kthread_ps).collect();
    eprintln!("{ksoftirqd} ksoftirqd slices; kernel-thread time per core {kthread_ps:?} ps");
    assert!(ksoftirqd > 0);
    for (c, (levels, kthreads)) in per_core.iter().enumerate() {
        let wc = &out.window.cores[c];
        assert!(wc.kthread_ps <= stats.core_ksoftirqd_ps[c]);
        assert!(kthreads.abs_diff(wc.kthread_ps) <= wc.slices);
        let user = levels.get("user").copied().unwrap_or(0);
        assert!(user.abs_diff(wc.cpu_ps["user"]) <= wc.slices);
    }
}
