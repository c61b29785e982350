//! `irqsim tune`: the search (src/experiment/tune) against the exhaustive grid of the
//! same space, determinism across thread counts, the commands it prints against the
//! real tools' syntax, and its refusals.
//!
//! The host is the XDP paper's testbed on one core (models/xeon-e5-1650v4-mlx5-linux.json
//! with one core and one queue per port, as scenarios/partial-load-forwarding.json has
//! it), forwarding Poisson 64-byte frames at 600,000 frames/s (a third of its one-core
//! rate): below saturation, where rx-usecs trades CPU time (fewer interrupts, each
//! taking more frames) against latency (a frame waits for the moderation's period).
//! Trials are 5 ms long to keep the tests fast; every setting sees the same arrivals.

use irqsim::config::scenario::{self, DiskFiles, Experiment};
use irqsim::experiment::tune::knobs::KnobId;
use irqsim::experiment::tune::report::TuneReport;
use irqsim::experiment::tune::search::Method;
use irqsim::experiment::tune::{self, Constraints, Goal, TuneOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A scenario file for the one-core testbed in `dir`: one Poisson flow of 64-byte
/// frames, one load point of 600,000 frames/s, 5 ms trials.
fn scenario_file(dir: &Path) -> PathBuf {
    let model = root().join("models/xeon-e5-1650v4-mlx5-linux.json");
    let s = serde_json::json!({
        "description": "tune test: the XDP testbed on one core, 600 kpps of 64-byte frames",
        "model": model.to_str().expect("utf-8 path"),
        "overrides": {"cpu": {"cores": 1}, "nics": {"eth0": {"queues": 1}, "eth1": {"queues": 1}}},
        "workload": {"flows": [{"name": "f00", "from": "eth0", "to": "eth1",
                                "frame_bytes": 64, "arrivals": "poisson"}]},
        "load": {"unit": "pps", "points": [600000]},
        "duration_s": 0.005,
        "drain_s": 0.002,
        "seed": 1
    });
    let p = dir.join("tune-test.json");
    std::fs::write(&p, serde_json::to_string_pretty(&s).expect("json")).expect("write");
    p
}

fn experiment(dir: &Path) -> Experiment {
    scenario::load(&scenario_file(dir), &DiskFiles::default()).expect("scenario")
}

/// Minimise the CPU time at 600 kpps with p99 at most 30 us, no loss.
fn cpu_goal(knobs: Vec<KnobId>, budget: usize) -> TuneOptions {
    TuneOptions {
        goal: Goal::MinimizeCpu,
        at_pps: Some(600_000.0),
        constraints: Constraints {
            max_p99_us: Some(30.0),
            ..Constraints::default()
        },
        knobs,
        budget,
        threads: 2,
        ..TuneOptions::default()
    }
}

fn best(r: &TuneReport) -> (&serde_json::Map<String, serde_json::Value>, f64) {
    let b = r.best.expect("a feasible setting");
    (
        &r.candidates[b].setting,
        r.candidates[b].objective.expect("objective"),
    )
}

/// On a small space (rx-usecs x rx-frames: 12 x 9 = 108 settings), the descent with a
/// budget of 40 finds the setting the exhaustive grid finds best. Also the trade-off
/// the search rests on: over the grid's feasible settings, the one with the least CPU
/// time has a longer p99 than the one with the shortest p99 (moderation buys CPU time
/// with latency), and the host as given (DIM on) misses the p99 constraint.
#[test]
fn descent_finds_the_grids_best_on_a_small_space() {
    let dir = tempfile::tempdir().expect("temp dir");
    let exp = experiment(dir.path());
    let knobs = vec![KnobId::RxUsecs, KnobId::RxFrames];
    let grid = tune::tune(&exp, &cpu_goal(knobs.clone(), 108), &|_| {}).expect("grid");
    assert_eq!(grid.method, Method::Grid);
    assert_eq!(grid.candidates.len(), 108);
    let desc = tune::tune(&exp, &cpu_goal(knobs, 40), &|_| {}).expect("descent");
    assert_eq!(desc.method, Method::CoordinateDescent);
    assert!(desc.candidates.len() <= 40);
    let (gs, go) = best(&grid);
    let (ds, dobj) = best(&desc);
    println!("grid best {gs:?} {go:.4} cores; descent best {ds:?} {dobj:.4} cores");
    assert_eq!(gs, ds);
    let feas: Vec<_> = grid
        .candidates
        .iter()
        .filter(|c| c.feasible)
        .filter_map(|c| c.figures.as_ref())
        .collect();
    let least_cpu = feas
        .iter()
        .min_by(|a, b| a.cpu_cores.total_cmp(&b.cpu_cores))
        .expect("feasible");
    let least_p99 = feas
        .iter()
        .min_by(|a, b| a.p99_us.unwrap().total_cmp(&b.p99_us.unwrap()))
        .expect("feasible");
    println!(
        "least CPU {:.4} cores at p99 {:.2} us; least p99 {:.2} us at {:.4} cores",
        least_cpu.cpu_cores,
        least_cpu.p99_us.unwrap(),
        least_p99.p99_us.unwrap(),
        least_p99.cpu_cores
    );
    assert!(least_cpu.p99_us.unwrap() > least_p99.p99_us.unwrap());
    assert!(least_cpu.cpu_cores < least_p99.cpu_cores);
    // The host as given has DIM on, whose profile at this rate moderates longer than
    // the constraint allows: it spends less CPU time (p99 276 us at 0.356 cores in this
    // run) but misses the constraint, so there is no gain to measure, only a setting
    // that meets it.
    assert!(!grid.host.feasible);
    let hp = grid
        .host
        .figures
        .as_ref()
        .and_then(|f| f.p99_us)
        .expect("host p99");
    assert!(hp > 30.0, "{hp}");
    let gain = grid.gain.as_ref().expect("gain");
    assert_eq!(gain.better_pct, None, "{gain:?}");
}

/// On a larger space (rx-usecs x rx-frames x rx-ring: 12 x 9 x 6 = 648 settings) the
/// descent with a budget of 64, a tenth, ends within 5 % of the CPU time of the best
/// setting of the whole grid (ten times its budget).
#[test]
fn descent_is_near_a_ten_times_larger_grid() {
    let dir = tempfile::tempdir().expect("temp dir");
    let exp = experiment(dir.path());
    let knobs = vec![KnobId::RxUsecs, KnobId::RxFrames, KnobId::RxRing];
    let grid = tune::tune(&exp, &cpu_goal(knobs.clone(), 648), &|_| {}).expect("grid");
    assert_eq!(grid.method, Method::Grid);
    let desc = tune::tune(&exp, &cpu_goal(knobs, 64), &|_| {}).expect("descent");
    assert_eq!(desc.method, Method::CoordinateDescent);
    let (_, go) = best(&grid);
    let (ds, dobj) = best(&desc);
    println!(
        "grid of {} best {go:.4} cores; descent ({} settings, {} starts) {ds:?} {dobj:.4} cores",
        grid.candidates.len(),
        desc.candidates.len(),
        desc.starts
    );
    assert!(dobj >= go - 1e-12);
    assert!((dobj - go) / go <= 0.05, "{dobj} against {go}");
}

fn run_cli(scenario: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("tune")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .args(["--quiet", "--no-plots"])
        .args(extra)
        .output()
        .expect("irqsim runs")
}

/// The same seed gives the same tune.json, tune.txt and commands.sh, byte for byte,
/// with 1 thread and with 3; and the commands use only what the real tools accept:
/// ethtool 6.1's parameters of -C, -L and -G (its `--help`), and net.core sysctls of
/// Linux's table (net/core/sysctl_net_core.c, 5.11: netdev_budget L512,
/// netdev_budget_usecs L535, dev_weight L346, netdev_max_backlog L367).
#[test]
fn same_files_whatever_the_threads_and_commands_in_the_tools_syntax() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sc = scenario_file(dir.path());
    let args = [
        "--minimize",
        "cpu",
        "--at",
        "600kpps",
        "--max-p99-us",
        "30",
        "--knobs",
        "rx-usecs,rx-frames,netdev_budget",
        "--budget",
        "20",
        "--seed",
        "7",
    ];
    let mut files = Vec::new();
    for t in ["1", "3"] {
        let out = dir.path().join(format!("out-{t}"));
        let o = run_cli(&sc, &out, &[&args[..], &["--threads", t]].concat());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        files.push(
            ["tune.json", "tune.txt", "commands.sh"]
                .map(|f| std::fs::read(out.join(f)).expect("file")),
        );
    }
    assert_eq!(files[0], files[1]);
    let sh = String::from_utf8(files[0][2].clone()).expect("utf-8");
    println!("{sh}");
    let ethtool: [(&str, &[&str]); 3] = [
        (
            "-C",
            &[
                "adaptive-rx",
                "adaptive-tx",
                "rx-usecs",
                "rx-frames",
                "rx-usecs-irq",
                "rx-frames-irq",
                "tx-usecs",
                "tx-frames",
                "sample-interval",
                "cqe-mode-rx",
            ],
        ),
        ("-L", &["rx", "tx", "other", "combined"]),
        ("-G", &["rx", "rx-mini", "rx-jumbo", "tx"]),
    ];
    let sysctls = [
        "net.core.netdev_budget",
        "net.core.netdev_budget_usecs",
        "net.core.dev_weight",
        "net.core.netdev_max_backlog",
    ];
    let mut seen = 0;
    for line in sh.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first() {
            Some(&"ethtool") => {
                let params = ethtool
                    .iter()
                    .find(|(o, _)| *o == w[1])
                    .unwrap_or_else(|| panic!("ethtool option {}", w[1]))
                    .1;
                assert!(w[2].starts_with("\"$IF_"), "{line}");
                for pair in w[3..].chunks(2) {
                    assert!(params.contains(&pair[0]), "{line}");
                    assert!(
                        pair[1] == "on" || pair[1] == "off" || pair[1].parse::<u32>().is_ok(),
                        "{line}"
                    );
                }
                seen += 1;
            }
            Some(&"sysctl") => {
                let (k, v) = w[2].split_once('=').expect("name=value");
                assert_eq!(w[1], "-w");
                assert!(sysctls.contains(&k), "{line}");
                v.parse::<u32>().expect("integer");
                seen += 1;
            }
            _ => {}
        }
    }
    assert!(seen >= 2, "{sh}");
}

/// Refused with exit 2, before anything is run or written: an unknown knob, a knob the
/// model does not have (rx-frames on the ixgbe model; any knob on a FreeBSD router), a
/// rate above the line rate (100 Gbit/s of 64-byte frames: 148,809,524 frames/s), a
/// --minimize without --at, no goal, --at with --maximize ndr, a budget of 0, --max-cores above
/// the model's cores.
#[test]
fn bad_input_exits_2_before_any_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sc = scenario_file(dir.path());
    let ixgbe = root().join("scenarios/modern-10g-24flows.json");
    let freebsd = root().join("scenarios/dc21143-64b-1flow.json");
    let cases: Vec<(&Path, Vec<&str>, &str)> = vec![
        (
            &sc,
            vec!["--minimize", "cpu", "--at", "1Mpps", "--knobs", "rx-usecz"],
            "no such knob",
        ),
        (
            &ixgbe,
            vec!["--minimize", "cpu", "--at", "1Mpps", "--knobs", "rx-frames"],
            "rx-frames",
        ),
        (
            &freebsd,
            vec!["--minimize", "cpu", "--at", "10kpps", "--knobs", "rx-usecs"],
            "Linux",
        ),
        (
            &sc,
            vec!["--minimize", "cpu", "--at", "150Mpps"],
            "line rate",
        ),
        (&sc, vec!["--minimize", "p99"], "--at"),
        (&sc, vec!["--at", "1Mpps"], "no goal"),
        (&sc, vec!["--maximize", "ndr", "--at", "1Mpps"], "--at"),
        (
            &sc,
            vec!["--minimize", "cpu", "--at", "1Mpps", "--budget", "0"],
            "--budget",
        ),
        (
            &sc,
            vec!["--minimize", "cpu", "--at", "1Mpps", "--max-cores", "2"],
            "--max-cores",
        ),
    ];
    for (i, (s, args, says)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("refused-{i}"));
        let o = run_cli(s, &out, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
}
