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
    csit_parses(&txt, res);
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

/// FD.io CSIT's result parser's regexes, copied as written in its Python source:
/// repository FDio/csit, file resources/tools/presentation/input_data_parser.py at
/// commit d164bef0373edfd2b6cc7d4aaa27b928065df3e5 (2023-05-24, the parent of feac1add7b
/// "remove(tools): presentation, docs"), class `ExecutionChecker`, lines 60-102.
/// `REGEX_NDRPDR_RATE` and `_GBPS` read the four bounds (`_get_ndrpdr_throughput`,
/// `_get_ndrpdr_throughput_gbps`), `REGEX_NDRPDR_LAT_BASE` the latency at the two
/// lower bounds (`_get_ndrpdr_latency`'s fallback when the test measured no latency at
/// 90/50/10 % of the PDR, which `irqsim ndr` does not), `REGEX_PPS_MSG_INFO` the lower
/// bounds' pps and Gbps (`_get_data_from_pps_test_msg`). Python's `\'` is an escaped
/// quote, which Rust's regex syntax writes as a plain `'`: the only change made.
const CSIT_REGEX_NDRPDR_RATE: &str = r"NDR_LOWER:\s(\d+.\d+).*\n.*\nNDR_UPPER:\s(\d+.\d+).*\nPDR_LOWER:\s(\d+.\d+).*\n.*\nPDR_UPPER:\s(\d+.\d+)";
const CSIT_REGEX_NDRPDR_GBPS: &str = r"NDR_LOWER:.*,\s(\d+.\d+).*\n.*\nNDR_UPPER:.*,\s(\d+.\d+).*\nPDR_LOWER:.*,\s(\d+.\d+).*\n.*\nPDR_UPPER:.*,\s(\d+.\d+)";
const CSIT_REGEX_NDRPDR_LAT_BASE: &str =
    r"LATENCY.*\[\'(.*)\', \'(.*)\'\]\s\n.*\n.*\nLATENCY.*\[\'(.*)\', \'(.*)\'\]";
const CSIT_REGEX_PPS_MSG_INFO: &str = r"NDR_LOWER:\s(\d+.\d+)\s.*\s(\d+.\d+)\s.*\n.*\n.*\nPDR_LOWER:\s(\d+.\d+)\s.*\s(\d+.\d+)\s.*\n.*\n.*";

fn csit(re: &str) -> regex::Regex {
    regex::Regex::new(&re.replace("\\'", "'")).expect("CSIT's regex compiles")
}

/// Every block of ndr.txt (one per result) matches CSIT's four regexes, and what they
/// capture is what ndr.json holds: the bounds in pps (the line rate for an upper bound
/// that does not exist), the L1 bandwidth pps x (frame + 20) x 8 / 1e9, and per lower
/// bound two latency streams `min/avg/max/` in whole us (`process_latency` splits on
/// `/` and reads three floats), -1 for a stream not measured.
fn csit_parses(txt: &str, res: &[serde_json::Value]) {
    let (rate, gbps, lat, pps) = (
        csit(CSIT_REGEX_NDRPDR_RATE),
        csit(CSIT_REGEX_NDRPDR_GBPS),
        csit(CSIT_REGEX_NDRPDR_LAT_BASE),
        csit(CSIT_REGEX_PPS_MSG_INFO),
    );
    let blocks: Vec<&str> = txt.split("\n\n").filter(|b| !b.trim().is_empty()).collect();
    assert_eq!(blocks.len(), res.len(), "{txt}");
    for (b, r) in blocks.iter().zip(res) {
        let f = |k: &str| {
            r[k].as_f64()
                .unwrap_or_else(|| r["max_pps"].as_f64().unwrap())
        };
        let bytes = r["frame_bytes"].as_f64().unwrap();
        let want = [
            f("ndr_pps"),
            f("ndr_upper_pps"),
            f("pdr_pps"),
            f("pdr_upper_pps"),
        ];
        let c = rate
            .captures(b)
            .unwrap_or_else(|| panic!("REGEX_NDRPDR_RATE: {b}"));
        let c2 = gbps
            .captures(b)
            .unwrap_or_else(|| panic!("REGEX_NDRPDR_GBPS: {b}"));
        for (i, w) in want.iter().enumerate() {
            let got: f64 = c[i + 1].parse().unwrap();
            assert_eq!(got, *w, "bound {i}: {b}");
            let g: f64 = c2[i + 1].parse().unwrap();
            assert!(
                (g - w * (bytes + 20.0) * 8.0 / 1e9).abs() <= 1e-9 * g.max(1.0),
                "{b}"
            );
        }
        let c = pps
            .captures(b)
            .unwrap_or_else(|| panic!("REGEX_PPS_MSG_INFO: {b}"));
        assert_eq!(c[1].parse::<f64>().unwrap(), want[0]);
        assert_eq!(c[3].parse::<f64>().unwrap(), want[2]);
        let c = lat
            .captures(b)
            .unwrap_or_else(|| panic!("REGEX_NDRPDR_LAT_BASE: {b}"));
        for i in 1..=4 {
            let v: Vec<f64> = c[i]
                .split('/')
                .take(3)
                .map(|x| x.parse().unwrap())
                .collect();
            assert_eq!(v.len(), 3, "{b}");
            assert!(
                v == [-1.0; 3] || (v[0] >= 0.0 && v[0] <= v[1] && v[1] <= v[2]),
                "{b}"
            );
        }
        // The lower bounds met their goal in a trial: their first stream was measured.
        if want[0] > 0.0 {
            assert_ne!(&c[1], "-1/-1/-1/", "{b}");
        }
    }
}
