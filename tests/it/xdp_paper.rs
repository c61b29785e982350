//! The XDP paper's testbed (`models/xeon-e5-1650v4-mlx5-linux.json`: Xeon E5-1650 v4,
//! six cores, two ConnectX-5 Ex ports with six channels each, NAPI) against its tables
//! on 1-6 cores (tohojo/xdp-paper at 672dc5a: bench04_fwd.org `fwd_data`, Linux with a
//! single route and with the full table, XDP forwarding with the full table and RX
//! rings of 256; bench01_baseline.org `linux_iptables_drop`, the raw drop; 64-byte
//! frames; docs/xdp-paper-data.md section 2), with one parameter set.
//!
//! Calibration points, and only these (each says so where it is checked): the one-core
//! single-route rate (the per-frame costs sum to its 575 ns), the one-core full-table
//! rate (the full table's route lookup, `kernel.route_lookup`, 153.2 ns, the two
//! one-core rates' per-frame times apart), the six-core single-route rate (the shared
//! section's mean hold, 72 ns), the one-core raw-drop rate (the drop path's cost), the
//! one-core XDP_DROP rate (the driver's receive without an skb, 38.6 ns) and the one-core
//! XDP forwarding rate (the forwarding program's cost, 240.7 ns). The first four are the
//! issue's allowance (the one-core rates of the single-route and raw-drop columns) plus
//! the section's one parameter and the lookup the issue derives itself; the two XDP ones
//! go beyond it, since no published figure splits XDP's per-frame time, and are said to.
//! XDP_DROP is therefore a calibration check only, never a prediction. Every other point
//! is a prediction: single route on 2-5 cores within 2 %, full table on 2-6 within 3 %,
//! raw drop on 2-6 within 2 % (six cores missed: +2.9 %, the scoreboard's known miss), XDP forwarding on 2-6
//! within 5 % (issue 36's tolerances). XDP_DROP on 1-6 queues with the NIC's PCI Express
//! link (added by `scenarios/xdp-paper-xdp-drop.json`, nothing fitted): 1-3 within 5 %,
//! 4-6, where the link binds, +2.8 to +3.8 %.
//!
//! And the mechanism's own claims: with a constant hold of the same mean among constant
//! costs the cores fall into step and scale linearly, and variance anywhere in the
//! frame's work breaks the step (so the variance of the per-frame path, not only the
//! hold's mean, is what the tables test); without the section the model is 12.4 % above
//! the six-core rate.

use crate::models::rss_balanced_flows;
use crate::scoreboard;
use irqsim::config::model::ModelConfig;
use irqsim::host::{self, RunSpec, RunStats};
use irqsim::sim::rng::RunKey;
use irqsim::sim::time::SimTime;
use irqsim::validate::xdp_paper as tables;
use serde_json::{Value, json};

const MODEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/models/xeon-e5-1650v4-mlx5-linux.json"
);

/// The measured column of the table `t` \[frames/s\], from the measured-rates file its
/// scenario names (the one copy of the paper's figures, [`irqsim::validate::xdp_paper`]).
fn measured(t: &irqsim::validate::Table) -> Vec<f64> {
    tables::measured(t)
}

/// Linux forwarding, single route, 1-6 cores \[frames/s\] (B04 `fwd_data` L55-63).
pub(crate) fn single_route() -> Vec<f64> {
    measured(&tables::SINGLE_ROUTE)
}

/// The shipped table `name` (`scenarios/xdp-paper-*.json`, its sweep simulated once for
/// the test binary, `crate::scoreboard`): model / measured at each core count, printed.
fn ratios(name: &str) -> Vec<f64> {
    scoreboard::rows(name)
        .iter()
        .map(|r| {
            eprintln!(
                "{name}, {}: model {:.0}, measured {:.0}, {}",
                r.case,
                r.simulated,
                r.measured,
                r.error_shown()
            );
            r.simulated / r.measured
        })
        .collect()
}

/// The full table's route lookup beyond a single route's [ns]: the two one-core
/// figures' per-frame times apart (a calibration from those two points).
fn full_table_lookup_ns() -> f64 {
    1e9 / measured(&tables::FULL_TABLE)[0] - 1e9 / single_route()[0]
}

/// Frames offered per core [frames/s] to the Linux path: above what a core can forward
/// (1.74 M), so that every core is saturated, as the paper's generator kept them.
const OFFERED_PER_CORE: f64 = 2_500_000.0;

/// The model on `cores` cores (one channel per core on both ports), patched by `patch`.
fn model(cores: u16, patch: impl FnOnce(&mut Value)) -> ModelConfig {
    let mut m: Value =
        serde_json::from_str(&std::fs::read_to_string(MODEL).expect("model")).expect("json");
    m["cpu"]["cores"] = json!(cores);
    m["nics"][0]["queues"] = json!(cores);
    m["nics"][1]["queues"] = json!(cores);
    patch(&mut m);
    serde_json::from_value(m).expect("model")
}

fn run(cfg: &ModelConfig, secs: f64) -> RunStats {
    run_at(cfg, secs, OFFERED_PER_CORE)
}

/// A run of `secs` with `per_core` frames/s offered for each core.
fn run_at(cfg: &ModelConfig, secs: f64, per_core: f64) -> RunStats {
    let flows = rss_balanced_flows(cfg, 4, "10.70.2.2");
    let total = per_core * cfg.cpu.cores as f64;
    let n = flows.len() as f64;
    let spec = RunSpec {
        rates_pps: vec![total / n; flows.len()],
        flows,
        duration: SimTime::from_secs_f64(secs),
        drain: SimTime::from_secs_f64(0.001),
        key: RunKey::single(36),
        timeline: None,
        latency_from: Default::default(),
    };
    host::simulate(cfg, &spec).expect("run")
}

/// The steady forwarding rate: frames delivered by a 0.05 s run minus those of a
/// 0.01 s run, over the 0.04 s between (the rings fill in well under 0.01 s). Its
/// sampling error: about 0.1 % (an exponential hold per frame, 300,000 frames and more).
fn steady(cfg: &ModelConfig) -> f64 {
    steady_by(cfg, OFFERED_PER_CORE, |r| r.total.received as f64)
}

/// The same for the count `what` of a run, with `per_core` frames/s offered per core.
fn steady_by(cfg: &ModelConfig, per_core: f64, what: impl Fn(&RunStats) -> f64) -> f64 {
    let long = run_at(cfg, 0.05, per_core);
    let short = run_at(cfg, 0.01, per_core);
    (what(&long) - what(&short)) / 0.04
}

#[test]
fn single_route_forwarding_on_1_to_6_cores_within_2_percent() {
    let r = ratios("xdp-single-route");
    // Calibration checks: one core (the costs' sum) and six cores (the section's hold),
    // to the sampling error and the 72 ns's rounding (0.5 %).
    assert!((r[0] - 1.0).abs() < 0.005, "1 core (calibration): {}", r[0]);
    assert!(
        (r[5] - 1.0).abs() < 0.005,
        "6 cores (calibration): {}",
        r[5]
    );
    // Predictions.
    for (i, x) in r.iter().enumerate().take(5).skip(1) {
        assert!(
            (x - 1.0).abs() < 0.02,
            "{} cores: model / measured {x}",
            i + 1
        );
    }
}

#[test]
fn full_table_forwarding_on_2_to_6_cores_within_3_percent_without_refitting() {
    let lookup = full_table_lookup_ns();
    assert!((lookup - 153.2).abs() < 0.1, "{lookup} ns");
    let r = ratios("xdp-full-table");
    // Calibration check: the one-core point gave the lookup's cost.
    assert!((r[0] - 1.0).abs() < 0.005, "1 core (calibration): {}", r[0]);
    // Predictions: the section's hold as the single route set it.
    for (i, x) in r.iter().enumerate().skip(1) {
        assert!(
            (x - 1.0).abs() < 0.03,
            "{} cores: model / measured {x}",
            i + 1
        );
    }
}

/// What the section does, and that its shape matters: a constant hold of the same mean
/// lets the six identical cores fall into step, and they forward at the linear rate,
/// 6 / 575 ns = 10,434,783 frames/s (0.5 %), 12.4 % above the measured host; the
/// exponential hold costs the six cores about 11 % of that, and one core nothing; and
/// the section's counters say how often a frame found it held.
#[test]
fn a_constant_hold_lets_the_cores_fall_into_step_and_scale_linearly() {
    let constant = model(6, |m| {
        m["kernel"]["shared_section"] = json!({ "hold": { "ns": 72 } });
    });
    let linear = 6.0 * 1e9 / 575.0;
    let got = steady(&constant);
    assert!((got / linear - 1.0).abs() < 0.005, "constant hold: {got}");
    assert!(got / single_route()[5] > 1.12, "{got}");
    // It is the variance that breaks the step, wherever it is: the same constant hold
    // with the rest of the protocol work exponential (mean 426 ns) contends again.
    let varied = model(6, |m| {
        m["kernel"]["shared_section"] = json!({ "hold": { "ns": 72 } });
        m["kernel"]["netisr_per_packet"] = json!({ "dist": "exponential", "mean_ns": 426 });
    });
    let got = steady(&varied);
    eprintln!("constant hold, exponential protocol work, six cores: {got:.0}");
    assert!(got / linear < 0.96 && got / linear > 0.90, "{got}");
    // The shipped (exponential) hold on six cores: frames that found it held, and the
    // spinning they cost, from the counters.
    let r = run(&model(6, |_| {}), 0.02);
    let c = &r.counters;
    let entries = c["kernel.section.entries"];
    let contended = c["kernel.section.contended"] / entries;
    let spin_per_frame = c["kernel.section.spin_ns"] / entries;
    eprintln!("six cores: {contended:.3} of entries contended, {spin_per_frame:.1} ns spin");
    assert!(entries > 100_000.0, "{entries}");
    // Six cores keep the section busy about 9.3 M x 72 ns = 67 % of the time: most
    // entries find it held, and each waits for a hold or so.
    assert!((0.4..0.8).contains(&contended), "{contended}");
    assert!((40.0..120.0).contains(&spin_per_frame), "{spin_per_frame}");
    // One core never waits for itself.
    let one = run(&model(1, |_| {}), 0.01);
    assert_eq!(one.counters["kernel.section.contended"], 0.0);
    assert!(one.counters["kernel.section.entries"] > 10_000.0);
}

/// The driver's receive of a frame before an skb exists, with a program that drops it
/// [ns]: XDP_DROP on one core, 25,928,270 frames/s (B01; the model's notes).
const XDP_RX_NS: f64 = 1e9 / 25_928_270.0;

/// The model with every NIC's NAPI running the XDP program `xdp`.
fn with_xdp(m: &mut Value, xdp: Value) {
    for n in m["nics"].as_array_mut().expect("nics") {
        n["policy"]["xdp"] = xdp.clone();
    }
}

/// XDP_DROP on one core: every frame dropped in the driver's poll at the rate of the
/// reading its receive cost was taken from (a calibration check, 0.5 %), counted as
/// mlx5 counts it (`rx_xdp_drop`) and as a drop at the `xdp` site; against the
/// paper's plotted one-core point (23,863,471) the model is 8.7 % above: the one-core
/// readings in the repository run from 22,653,821 to 25,928,270 (docs/xdp-paper-data.md
/// section 7), and the model takes the highest.
#[test]
fn xdp_drop_drops_every_frame_in_the_poll_at_its_one_core_rate() {
    let cfg = model(1, |m| {
        with_xdp(
            m,
            json!({ "action": "drop", "rx": { "ns": XDP_RX_NS }, "program": 0 }),
        )
    });
    let rate = steady_by(&cfg, 32e6, |r| r.counters["eth0.rx_xdp_drop"]);
    eprintln!("XDP_DROP, 1 core: model {rate:.0}");
    assert!((rate / 25_928_270.0 - 1.0).abs() < 0.005, "{rate}");
    assert!((rate / 23_863_471.0 - 1.0 - 0.087).abs() < 0.005, "{rate}");
    let r = run_at(&cfg, 0.01, 32e6);
    assert_eq!(r.total.received, 0);
    assert!(r.total.drops.xdp > 200_000, "{:?}", r.total.drops);
    assert_eq!(r.counters["eth0.rx_xdp_drop"], r.total.drops.xdp as f64);
    // Nothing went up the stack: no shared section entered.
    assert_eq!(r.counters["kernel.section.entries"], 0.0);
}

/// What the generator offered in the testbed's six-queue XDP_DROP run [frames/s]: B02
/// "Possible PCIe limit?" L380-424, `rx_packets_phy` 98,233,252 per second.
const XDP_DROP_OFFERED: f64 = 98_233_252.0;

/// XDP_DROP on 1-6 queues with the NIC's PCI Express link (PCIe 3.0 x16, its
/// device-to-host direction; docs/model.md "The NIC's PCI Express link"): receiving a
/// 64-byte frame writes it and its 64-byte CQE, two TLPs of 24 bytes' overhead each,
/// 11.17 ns of the link, so no number of cores drops more than 89.5 M frames/s. The
/// link's values come from the PCIe 3.0 specification and mlx5's structures, none from
/// this table. Predictions, all within issue 36's 5 % for XDP: 1-3 queues +3.2 to
/// +4.6 % (the receive cost is from another one-core reading, 25,928,270, 4.5 % above
/// this column's), 4-6 queues, where the link binds, +2.8 to +3.8 % (the link's
/// device-to-host traffic the model leaves out, the DLLPs and the receive WQEs' read
/// requests, would lower it; the FCS it writes and mlx5 strips would raise it). The
/// frames the link cannot carry are dropped in the port buffer (`rx_fifo`, mlx5's
/// `rx_discards_phy`): what is offered and not dropped by the program, within 0.5 %
/// (8.3 M/s; the testbed's B02 run shows 12.0 M/s at 86.1 M dropped). Without the link
/// the model would drop all 98.2 M offered on 4-6 queues, 13 % above the plateau.
#[test]
fn xdp_drop_on_1_to_6_queues_stops_at_the_pcie_links_89_m_frames_per_second() {
    let r = ratios("xdp-drop");
    for (k, x) in r.iter().enumerate() {
        assert!((x - 1.0).abs() < 0.05, "{} queues: {x}", k + 1);
    }
    // Six queues (the shipped sweep's point, over its sending period): the link's rate
    // and the port buffer's drops.
    let run = scoreboard::table_run("xdp-drop");
    let six = run
        .results
        .points
        .iter()
        .find(|p| p.variant == "xdp-drop-6-cores")
        .expect("six queues");
    let secs = run.experiment.duration_s;
    let plateau = six.figures.total.drops.xdp / secs;
    // 2 x (64 + 24) bytes at 16 bytes per 1.015625 ns: 11.17 ns, 89.5 M frames/s.
    assert!((plateau / 89.5e6 - 1.0).abs() < 0.002, "{plateau}");
    let discards = six.figures.total.drops.rx_fifo / secs;
    assert!(
        ((discards + plateau) / XDP_DROP_OFFERED - 1.0).abs() < 0.005,
        "{discards}"
    );
    // Without the link: every frame offered is dropped by the program.
    let xdp = json!({ "action": "drop", "rx": { "ns": XDP_RX_NS }, "program": 0 });
    let without = steady_by(
        &model(6, |m| {
            with_xdp(m, xdp.clone());
            m["nics"][0]["rx_ring_slots"] = json!(512);
        }),
        XDP_DROP_OFFERED / 6.0,
        |r| r.total.drops.xdp as f64,
    );
    assert!(without / measured(&tables::XDP_DROP)[5] > 1.12, "{without}");
}

/// The egress port's channel, one core forwarding with a single route, as `ethtool -S`
/// on the testbed's egress port showed it (B01 L852-872, per second): `ch0_poll` =
/// `ch0_events` = `ch0_arm` = 27,183 and `tx0_cqes` 1,739,714, 64.0 completions per
/// poll. Nothing in the model is set from these: each forwarded frame's completion is
/// a CQE that asks for an event (`tx_completion.interrupt_every` 1, mlx5's
/// MLX5_WQE_CTRL_CQ_UPDATE on every doorbell WQE without xmit_more), the event waits
/// for TX moderation (16 us from the first CQE, mlx5's static default), and the
/// egress channel's NAPI poll, scheduled on the same core, runs only between two polls
/// of the ingress channel in net_rx_action: so one event per ingress poll of 64 frames,
/// whatever the timer, as long as it expires within an ingress poll (64 x 575 ns =
/// 36.8 us). Tolerances: rates within 2 % (the forwarding rate's own tolerance),
/// completions per poll within 0.5 %; with DIM's initial TX profile (8 us, EQE) the
/// same 64 (0.5 %), while a timer longer than an ingress poll (50 us) gives fewer,
/// larger batches, as it would on the host.
#[test]
fn the_egress_port_reclaims_64_completions_per_poll_as_ethtool_shows() {
    let per_s = |cfg: &ModelConfig, k: &'static str| {
        steady_by(cfg, OFFERED_PER_CORE, move |r| r.counters[k])
    };
    let shipped = model(1, |_| {});
    let poll = per_s(&shipped, "eth1.ch0_poll");
    let events = per_s(&shipped, "eth1.ch0_events");
    let arm = per_s(&shipped, "eth1.ch0_arm");
    let cqes = per_s(&shipped, "eth1.tx0_cqes");
    eprintln!(
        "egress, 1 core: ch0_poll {poll:.0}, ch0_events {events:.0}, ch0_arm {arm:.0}, \
         tx0_cqes {cqes:.0} ({:.2} per poll); measured 27,183 and 1,739,714",
        cqes / poll
    );
    for (name, got) in [("ch0_poll", poll), ("ch0_events", events), ("ch0_arm", arm)] {
        assert!((got / 27_183.0 - 1.0).abs() < 0.02, "{name}: {got}");
    }
    assert!((cqes / 1_739_714.0 - 1.0).abs() < 0.02, "tx0_cqes: {cqes}");
    assert!((cqes / poll / 64.0 - 1.0).abs() < 0.005, "{}", cqes / poll);
    // Every poll found the channel done and re-armed it; every event scheduled one.
    assert!((arm / poll - 1.0).abs() < 0.005 && (events / poll - 1.0).abs() < 0.005);
    // One completion per forwarded frame.
    let forwarded = steady(&shipped);
    assert!(
        (cqes / forwarded - 1.0).abs() < 0.001,
        "{cqes} vs {forwarded}"
    );
    let timer = |ns: f64| {
        model(1, move |m| {
            for n in m["nics"].as_array_mut().expect("nics") {
                n["moderation"]["tx_absolute_timer_ns"] = json!(ns);
            }
        })
    };
    let dim = timer(8_000.0);
    let per_poll = per_s(&dim, "eth1.tx0_cqes") / per_s(&dim, "eth1.ch0_poll");
    assert!((per_poll / 64.0 - 1.0).abs() < 0.005, "8 us: {per_poll}");
    let long = timer(50_000.0);
    let per_poll = per_s(&long, "eth1.tx0_cqes") / per_s(&long, "eth1.ch0_poll");
    eprintln!("egress, 1 core, a 50 us TX timer: {per_poll:.1} completions per poll");
    assert!(per_poll > 80.0, "50 us: {per_poll}");
}

/// The egress port's completion interrupt, per forwarded frame [ns]: its `isr_entry`
/// and `isr_exit` in the model (500 + 200 ns, estimates), once per ingress poll of
/// NAPI's weight, 64 frames (what `ch0_events` / `tx0_cqes` on the egress port show,
/// and what `the_egress_port_reclaims_64_completions_per_poll_as_ethtool_shows`
/// checks).
const EGRESS_IRQ_NS: f64 = (500.0 + 200.0) / 64.0;

/// XDP forwarding, full table, RX ring 256, on 1-6 cores within 5 % (issue 36). The
/// program's cost (its bpf_fib_lookup over the full table, the devmap redirect and
/// the output driver's transmit: 290.2 - 38.6 - 10.9 = 240.6 ns, the last term the
/// egress port's completion interrupt) is taken
/// from the one-core point, a calibration the rule does not allow for (no
/// published figure splits it), so the one-core point is a calibration check and 2-6
/// are predictions. The redirected frames skip the skb path and its shared section,
/// so the model's cores scale linearly; the measured ones scale 2-4.5 % better than
/// linearly (DDIO: with a 256-frame ring each core's frames stay in the cache), which
/// the model does not have: it stays below the measured rates, within 5 %.
#[test]
fn xdp_forwarding_on_1_to_6_cores_within_5_percent() {
    let program = 1e9 / measured(&tables::XDP_FULL_TABLE)[0] - XDP_RX_NS - EGRESS_IRQ_NS;
    assert!((program - 240.66).abs() < 0.01, "{program}");
    let r = ratios("xdp-forwarding");
    assert!((r[0] - 1.0).abs() < 0.005, "1 core (calibration): {}", r[0]);
    for (i, x) in r.iter().enumerate().skip(1) {
        assert!(
            (x - 1.0).abs() < 0.05,
            "{} cores: model / measured {x}",
            i + 1
        );
        assert!(
            *x < 1.0,
            "{} cores: the measured host scales better than linearly",
            i + 1
        );
    }
}

/// XDP_TX, RX ring 256: each frame sent back out of the port and channel it came in
/// on. The program's cost with the transmit (59.2 - 38.6 = 20.6 ns) is taken from the
/// one-core point, a calibration like XDP forwarding's, so one core is a calibration
/// check (0.5 %) and 2-6 are predictions. The frames' completions are reclaimed by the
/// receiving channel's own poll, which a saturated core never leaves: no transmit
/// interrupt. On 2-4 cores the model, linear, is within 5 % below the measured rates
/// (issue 36's XDP tolerance), which scale better than linearly, as XDP forwarding's
/// do; on 5 and 6 the measured host stops at about 70 M frames/s, a limit of the NIC or
/// of PCIe that the paper's notes suspect ("Possible PCIe limit?", B02) and nothing in
/// the model stands for: the model goes on linearly, more than 15 % above (missed: the
/// scoreboard's known miss).
#[test]
fn xdp_tx_scales_linearly_to_four_cores_within_5_percent_and_misses_the_nics_limit() {
    let program = 1e9 / measured(&tables::XDP_TX)[0] - XDP_RX_NS;
    assert!((program - 20.60).abs() < 0.01, "{program}");
    let xdp = json!({ "action": "tx", "rx": { "ns": XDP_RX_NS }, "program": { "ns": program } });
    let r = ratios("xdp-tx");
    assert!((r[0] - 1.0).abs() < 0.005, "1 core (calibration): {}", r[0]);
    for (i, x) in r.iter().enumerate().take(4).skip(1) {
        assert!(
            *x < 1.0 && *x > 0.95,
            "{} cores: model / measured {x}",
            i + 1
        );
    }
    // 5 and 6 cores: the NIC's limit is not modelled, so the model is above the
    // measured rates, outside XDP's 5 %: the scoreboard's known miss.
    for (i, x) in r.iter().enumerate().skip(4) {
        scoreboard::known_miss("xdp-tx", &format!("{} cores", i + 1), "forwarded rate", 5.0);
        assert!(*x > 1.0, "{} cores: {x}", i + 1);
    }
    // Every frame went back out of the receiving port, none to the other.
    let one = run_at(
        &model(1, |m| {
            with_xdp(m, xdp.clone());
            for n in m["nics"].as_array_mut().expect("nics") {
                n["rx_ring_slots"] = json!(256);
            }
        }),
        0.01,
        20e6,
    );
    assert_eq!(one.counters["eth1.tx_frames"], 0.0);
    assert!(one.counters["eth0.tx_frames"] > 100_000.0);
    assert!(one.total.received as f64 >= one.counters["eth0.tx_frames"] - 1.0);
    assert_eq!(one.counters["kernel.section.entries"], 0.0);
}

/// XDP_PASS costs its 13.3 ns per frame and changes nothing else: on one core with the
/// single route, 1 / (575 + 13.3 ns) = 1,699,700 frames/s forwarded (0.5 %), every frame
/// counted as passed.
#[test]
fn xdp_pass_adds_its_program_to_the_stack_path() {
    let cfg = model(1, |m| {
        with_xdp(m, json!({ "action": "pass", "program": { "ns": 13.3 } }))
    });
    let got = steady(&cfg);
    assert!((got * (575.0 + 13.3) / 1e9 - 1.0).abs() < 0.005, "{got}");
    let r = run(&cfg, 0.01);
    assert!(r.counters["eth0.xdp_pass"] >= r.total.received as f64);
    assert_eq!(r.counters["eth0.rx_xdp_drop"], 0.0);
}

/// The raw drop's second run on the testbed (B01 `linux_iptables_drop_toke`, L921-929,
/// column "raw (2nd run)") [frames/s], 1-6 cores.
const RAW_DROP_2ND: [f64; 6] = [
    4_837_269.0,
    9_661_542.0,
    14_483_976.0,
    19_250_649.0,
    24_070_686.0,
    28_817_001.0,
];

/// The iptables raw drop (`kernel.prerouting_drop`): every frame is dropped at the
/// PREROUTING hook after ip_rcv, before routing. Its cost up to the drop, 131.95 ns,
/// is the one-core rate's 197.95 ns minus the driver's 66 (a calibration point the
/// issue allows); 2-6 cores are predictions. The dropped frames never reach the shared
/// section, so the model's cores scale linearly: -1.2 to +1.1 % on 2-5 cores, and
/// +2.9 % at six, where the measured host loses 2.9 % to something the model does not
/// have (the tolerance there is the 2 %: missed, the scoreboard's known miss).
#[test]
fn the_raw_drop_scales_linearly_within_2_percent_to_five_cores_and_misses_at_six() {
    let raw = measured(&tables::RAW_DROP);
    let cost = 1e9 / raw[0] - 66.0;
    let r = ratios("xdp-raw-drop");
    assert!((r[0] - 1.0).abs() < 0.005, "1 core (calibration): {}", r[0]);
    for (i, x) in r.iter().enumerate().take(5).skip(1) {
        assert!(
            (x - 1.0).abs() < 0.02,
            "{} cores: model / measured {x}",
            i + 1
        );
    }
    // Six cores: the linear rate, 2.9 % above the measured one, outside the issue's
    // 2 %: the scoreboard's known miss.
    assert!((r[5] - 6.0 * raw[0] / raw[5]).abs() < 0.005, "{}", r[5]);
    scoreboard::known_miss("xdp-raw-drop", "6 cores", "dropped rate", 2.0);
    assert!(r[5] > 1.0, "{}", r[5]);
    // The testbed's own repeatability: a second run of the same rule on the same host
    // (B01 `linux_iptables_drop_toke`, column "raw (2nd run)", L921-929) is 4.2 % lower
    // on one core and 2.1 % lower on six than the table above, and scales 5.957 times
    // from one core to six, where the first run scales 5.828 times. Against the second
    // run's own scaling (its points over its one-core point) the model is within 0.8 %
    // on 2-6 cores: the six-core miss above is within what the testbed's two runs of one
    // configuration disagree by, not a shape the model lacks. (The model is not
    // re-calibrated on the second run: its one-core point stays the first table's.)
    for (i, x) in r.iter().enumerate().skip(1) {
        let second = RAW_DROP_2ND[i] / RAW_DROP_2ND[0];
        let model = x * raw[i] / raw[0];
        assert!(
            (model / second - 1.0).abs() < 0.008,
            "{} cores: model scaling {model:.4}, second run's {second:.4}",
            i + 1
        );
    }
    // Nothing was forwarded, nothing entered the section.
    let run = run_at(
        &model(2, |m| {
            m["kernel"]["prerouting_drop"] = json!({ "cost": { "ns": cost } });
        }),
        0.01,
        8e6,
    );
    assert_eq!(run.total.received, 0);
    assert_eq!(run.counters["kernel.section.entries"], 0.0);
}

/// The BSD ipintr path takes the section and the route lookup too
/// (`SwiEnv::shared_section`, `Netisr::forward_cost`): on the simple two-NIC model
/// (`models::simple_model`, one core, 1,000 frames/s, no queueing), a constant 100 ns
/// hold and a 1,000 ns lookup add exactly 1.1 us to every frame's latency, every
/// forwarded frame enters the section once, and one core never waits for it.
#[test]
fn the_bsd_ipintr_path_enters_the_section_and_pays_the_lookup() {
    use crate::models::{flow64, run_json, simple_model, spec_seeded};
    let plain = simple_model(&["a", "b"]);
    let mut with = plain.clone();
    with["kernel"]["shared_section"] = json!({ "hold": 100 });
    with["kernel"]["route_lookup"] = 1000.into();
    let spec = spec_seeded(vec![flow64("a", "b")], 1000.0, 0.05, 1);
    let (p, w) = (run_json(&plain, &spec), run_json(&with, &spec));
    assert_eq!(p.total.received, w.total.received);
    assert!(w.total.received >= 49, "{}", w.total.received);
    let added = w.total.latency.summary().avg - p.total.latency.summary().avg;
    let spread = w.total.latency.summary().max - p.total.latency.summary().max;
    assert!((spread - 1.1).abs() < 1e-6, "{spread} us");
    assert!((added - 1.1).abs() < 1e-6, "{added} us");
    let c = &w.counters;
    assert_eq!(c["kernel.section.entries"], w.total.received as f64);
    assert_eq!(c["kernel.section.contended"], 0.0);
    assert_eq!(c["kernel.section.held_ns"], 100.0 * w.total.received as f64);
    assert!(!p.counters.contains_key("kernel.section.entries"));
}

/// An XDP program belongs to NAPI's poll: on a NIC with another policy the loader
/// refuses it, naming the field.
#[test]
fn xdp_on_a_nic_without_napi_is_refused() {
    let mut m = crate::models::simple_model(&["a", "b"]);
    m["nics"][0]["policy"] =
        json!({ "kind": "interrupt", "xdp": { "action": "pass", "program": 10 } });
    let err = serde_json::from_value::<ModelConfig>(m).expect_err("refused");
    assert!(err.to_string().contains("xdp"), "{err}");
}

/// One `rte_eth_rx_burst` call [ns]: an estimate (a call reads the next completion
/// entry and finds it empty or takes a burst; no figure of its own was found). It sets
/// only how soon an idle lcore sees a frame: at saturation every call takes a full
/// burst of 32 and the frame's share of it is the rest of the measured rate.
const DPDK_POLL_NS: f64 = 20.0;

/// The PMD's receive and rxonly's free of one frame [ns]: the one-core rxonly rate
/// (43,503,636 frames/s, 22.99 ns a frame) less its share of a 32-frame burst's call.
fn dpdk_rx_ns() -> f64 {
    1e9 / measured(&tables::DPDK)[0] - DPDK_POLL_NS / 32.0
}

/// The testbed with its first `ports` ports owned by a DPDK application
/// (`nics[].policy` `dpdk`): no interrupts, so no moderation (nor DIM) and no
/// transmit-completion interrupts. An lcore polls every DPDK port's queue on its core in turn, so a port
/// given to DPDK with no traffic costs each lcore an empty call per round.
fn with_dpdk(m: &mut Value, ports: usize, policy: Value) {
    for nic in 0..ports {
        let n = m["nics"][nic].as_object_mut().expect("nic");
        n.insert("policy".into(), policy.clone());
        n.remove("moderation");
        n.remove("dim");
        n.remove("tx_completion");
    }
}

/// rxonly at its one-core rate (a calibration check: the rate the frame's cost was
/// taken from, within 0.5 %), every frame taken freed by the application (drops site
/// `application`) or lost at the full ring (the port's RX-missed), none sent; and on
/// 2 and 3 cores the model's prediction, linear in the cores (within 1 % of 2x and 3x
/// the one-core rate), against the measured 74.4 and 97.2 M: **the model is 17 % and
/// 34 % above them**. What stops testpmd's scaling is outside the cores (the measured
/// rate flattens at 114-115 M on 4-5 cores; XDP_TX stops near 70 M), the NIC's or the
/// PCIe link's own packet rate, which the model does not have: no published figure
/// gives its mechanism, so it is not invented here (docs/model.md).
#[test]
fn dpdk_rxonly_takes_its_one_core_rate_and_scales_linearly_where_the_testbed_does_not() {
    let policy = json!({
        "kind": "dpdk", "action": "rxonly",
        "poll": { "ns": DPDK_POLL_NS }, "rx": { "ns": dpdk_rx_ns() },
    });
    // The shipped table (`scenarios/xdp-paper-dpdk.json`, the same policy): one core is
    // the calibration check.
    let ratio = ratios("xdp-dpdk-rxonly");
    let got: Vec<f64> = scoreboard::rows("xdp-dpdk-rxonly")
        .iter()
        .map(|r| r.simulated)
        .collect();
    let one = got[0];
    assert!((ratio[0] - 1.0).abs() < 0.005, "{one}");

    let cfg = model(1, |m| with_dpdk(m, 1, policy.clone()));
    let r = run_at(&cfg, 0.002, 48e6);
    assert_eq!(r.total.received, 0, "rxonly sends nothing");
    assert_eq!(
        r.total.drops.application as f64,
        r.counters["eth0.dpdk.rx_packets"]
    );
    assert!(
        r.total.drops.rx_ring > 0,
        "the ring overflows at 48 M offered"
    );
    assert_eq!(r.interrupts_all, 0, "no interrupts");
    // A burst call on the saturated ring takes a full burst (the empty calls are those
    // of the drain, after the last frame).
    let c = |k: &str| r.counters[&format!("eth0.dpdk.{k}")];
    let per_call = c("rx_packets") / (c("rx_bursts") - c("empty_polls"));
    assert!(per_call > 31.9, "{per_call}");

    // 2 and 3 cores: linear in the cores, above the measured rates, outside the 5 % the
    // scoreboard holds it to: its known miss.
    for cores in [2usize, 3] {
        let g = got[cores - 1];
        assert!((g / (one * cores as f64) - 1.0).abs() < 0.01, "{g}");
        scoreboard::known_miss(
            "xdp-dpdk-rxonly",
            &format!("{cores} cores"),
            "dropped rate",
            5.0,
        );
        assert!(
            ratio[cores - 1] > 1.0,
            "{cores} cores: {}",
            ratio[cores - 1]
        );
    }
}

/// io-fwd: each frame the lcore takes goes out of its flow's output port, without the
/// kernel; below the lcore's capacity nothing is lost and the ports' counts agree.
#[test]
fn dpdk_io_fwd_sends_every_frame_out_of_its_flows_port() {
    let cfg = model(2, |m| {
        with_dpdk(
            m,
            2,
            json!({
                "kind": "dpdk", "action": "io-fwd",
                "poll": { "ns": DPDK_POLL_NS }, "rx": { "ns": dpdk_rx_ns() },
                "tx": { "ns": 20.0 },
            }),
        )
    });
    let r = run_at(&cfg, 0.002, 5e6);
    let t = &r.total;
    assert!(t.sent > 15_000, "{}", t.sent);
    assert_eq!(t.drops.total(), 0, "{:?}", t.drops);
    assert_eq!(t.sent, t.received + t.in_flight_at_end);
    let taken: f64 = (0..2)
        .map(|q| r.counters[&format!("eth0-q{q}.dpdk.tx_packets")])
        .sum();
    assert!(
        taken >= t.received as f64 && taken <= t.sent as f64,
        "{taken}"
    );
    assert_eq!(r.interrupts_all, 0, "no interrupts");
}
