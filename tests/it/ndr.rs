//! `irqsim ndr`: the NDR/PDR search (src/experiment/ndr.rs) against a fine fixed sweep
//! of the same model, trial length and random streams, and the command's files and
//! refusals.
//!
//! The 21143 router (models/p3-448-dc21143-freebsd4.json, 64-byte frames, one flow) is
//! the hard case: its model's loss is not monotone in load (from 26.25 % of the line,
//! up to 91 % at 32.5 %, then nothing at 34-38 %; the measured router: 32-87 % at 28-32 %
//! and nothing at 34-36 %). The search must answer the conservative bound, below the
//! first loss, not the loss-free range above it.

use irqsim::config::scenario::{self, DiskFiles};
use irqsim::experiment::ndr::{self, NdrOptions};
use irqsim::host::{self, RunSpec};
use irqsim::model::traffic::FrameSize;
use irqsim::sim::rng::RunKey;
use irqsim::sim::time::SimTime;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The search's NDR on the 21143 router (2 s trials at the end: the scenario's 10 s
/// shortened for the test, the same for the sweep) lies on the fine sweep's first loss:
/// every sweep point below the NDR is loss-free, the sweep's first lossy point is above
/// the NDR and at most one sweep step (0.25 % of line rate) above the NDR's upper bound,
/// and the sweep has loss-free points far above (34-36 %) that the search, rightly,
/// does not report. The PDR (0.5 %) lies at or above the NDR and below the sweep's first
/// point with more than 0.5 % loss.
#[test]
fn the_search_finds_the_first_loss_of_a_non_monotone_router() {
    let mut exp = scenario::load(
        &root().join("scenarios/dc21143-64b-1flow.json"),
        &DiskFiles::default(),
    )
    .expect("scenario");
    exp.duration_s = 2.0;
    let opts = NdrOptions {
        frame_bytes: vec![64],
        ..NdrOptions::default()
    };
    let rep = ndr::search(&exp, &opts).expect("search");
    let r = &rep.results[0];
    let max = r.max_pps;
    // 100 Mbit/s, 64-byte frames: 148,809.5 frames/s.
    assert!((max - 148_809.52).abs() < 0.1, "{max}");
    let ndr_up = r.ndr_upper_pps.expect("an upper bound");
    assert!((ndr_up - r.ndr_pps) / ndr_up <= 0.005 + 1e-12);
    // The fine sweep: 20 % to 40 % in steps of 0.25 %, the search's trial exactly.
    let mut flows = exp.variants[0].flows.clone();
    for f in &mut flows {
        f.frame_bytes = FrameSize::Fixed(64);
    }
    let loss = |pct: f64| {
        let spec = RunSpec {
            flows: flows.clone(),
            rates_pps: vec![pct / 100.0 * max],
            duration: SimTime::from_secs_f64(2.0),
            drain: SimTime::from_secs_f64(exp.drain_s),
            timeline: None,
            latency_from: exp.latency_from,
            key: RunKey {
                seed: exp.seed,
                variant: 0,
                point: 64,
                replication: 0,
            },
        };
        let st = host::simulate(&exp.variants[0].model, &spec).expect("run");
        (st.total.sent - st.total.received) as f64 / st.total.sent as f64
    };
    let sweep: Vec<(f64, f64)> = (0..=80)
        .map(|k| 20.0 + 0.25 * k as f64)
        .map(|p| (p, loss(p)))
        .collect();
    let first_loss = sweep
        .iter()
        .find(|(_, l)| *l > 0.0)
        .expect("a lossy point")
        .0;
    let ndr_pct = r.ndr_pct;
    eprintln!(
        "NDR {:.3} % (upper {:.3} %), PDR {:.3} %; the sweep's first loss at {first_loss} %",
        ndr_pct,
        ndr_up / max * 100.0,
        r.pdr_pct
    );
    for (p, l) in &sweep {
        if *p < ndr_pct {
            assert_eq!(*l, 0.0, "loss {l} at {p} %, below the NDR {ndr_pct} %");
        }
    }
    assert!(first_loss > ndr_pct);
    assert!(
        first_loss <= ndr_up / max * 100.0 + 0.25 + 1e-9,
        "{first_loss}"
    );
    // Loss-free again far above: the search did not report it.
    assert!(sweep.iter().any(|(p, l)| *p >= 34.0 && *l == 0.0));
    assert!(ndr_pct < 30.0);
    let first_above_goal = sweep
        .iter()
        .find(|(_, l)| *l > 0.005)
        .expect("a point above 0.5 %")
        .0;
    assert!(
        r.pdr_pct >= ndr_pct && r.pdr_pct < first_above_goal,
        "{}",
        r.pdr_pct
    );
    // Every trial met or missed the goal as its loss says, and the last phase's trials
    // are full length.
    let last = rep.phase_durations_s.len() - 1;
    assert_eq!(rep.phase_durations_s[last], 2.0);
    assert!(
        r.trials
            .iter()
            .any(|t| t.phase == last && t.offered_pps == r.ndr_pps && t.loss_pct == 0.0)
    );
    // Deterministic whatever the threads.
    let one = ndr::search(
        &exp,
        &NdrOptions {
            threads: 1,
            ..opts.clone()
        },
    )
    .expect("search");
    assert_eq!(one, rep);
}

/// The command writes ndr.json (the fields the issue names), ndr.txt (CSIT's four
/// lines per result) and the plot, and refuses bad options and a request/response
/// scenario with exit 2, naming the option, before writing anything.
#[test]
fn the_ndr_command_writes_its_files_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ndr");
    let run = |args: &[&str]| {
        std::process::Command::new(BIN)
            .args(args)
            .current_dir(root())
            .output()
            .unwrap()
    };
    let o = run(&[
        "ndr",
        "scenarios/dc21143-600b-4flows.json",
        "--frame-bytes",
        "64,1518",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ndr.json")).unwrap()).unwrap();
    let res = j["results"].as_array().unwrap();
    assert_eq!(res.len(), 2);
    for (r, bytes) in res.iter().zip([64, 1518]) {
        assert_eq!(r["frame_bytes"], bytes);
        let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k}"));
        assert!(f("ndr_pps") > 0.0 && f("ndr_pps") <= f("max_pps"));
        assert!(f("pdr_pps") >= f("ndr_pps"));
        assert!((f("ndr_pct") - f("ndr_pps") / f("max_pps") * 100.0).abs() < 1e-9);
        assert!((f("pdr_pct") - f("pdr_pps") / f("max_pps") * 100.0).abs() < 1e-9);
        assert!(!r["trials"].as_array().unwrap().is_empty());
    }
    let txt = std::fs::read_to_string(out.join("ndr.txt")).unwrap();
    for k in ["NDR_LOWER: ", "NDR_UPPER: ", "PDR_LOWER: ", "PDR_UPPER: "] {
        assert_eq!(txt.matches(k).count(), 2, "{k}");
    }
    assert!(out.join("plots/ndr.svg").is_file());
    for (args, field) in [
        (vec!["--frame-bytes", "63"], "--frame-bytes"),
        (vec!["--pdr-loss", "0"], "--pdr-loss"),
        (vec!["--resolution", "60"], "--resolution"),
        (vec!["--frame-bytes", "64,64"], "--frame-bytes"),
    ] {
        let bad = dir.path().join("bad");
        let mut a = vec![
            "ndr",
            "scenarios/dc21143-64b-1flow.json",
            "--out",
            bad.to_str().unwrap(),
        ];
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains(field));
        assert!(!bad.exists(), "{field}: the output directory was created");
    }
    let bad = dir.path().join("rr");
    let o = run(&[
        "ndr",
        "scenarios/em-rr-freebsd62.json",
        "--out",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("load.unit"));
    assert!(!bad.exists());
    // A grid over the frame size: the search sets the size itself, so the cells'
    // names would contradict the sizes searched.
    let bad = dir.path().join("grid");
    let o = run(&[
        "ndr",
        "scenarios/frame-size-x-policy.json",
        "--out",
        bad.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("grid.parameters") && err.contains("frame size"),
        "{err}"
    );
    assert!(!bad.exists());
}
