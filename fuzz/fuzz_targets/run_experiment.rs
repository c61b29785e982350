//! Whole experiments on arbitrary bytes: the scenario loader, then a few milliseconds of
//! simulation through `irqsim::experiment::runner::run`, then `Results::to_json`. The input is a
//! scenario, written (as in `load_scenario`) to a temporary `scenarios/case.json` beside
//! copies of the shipped models and measured tables.
//!
//! So that one input runs in well under a second, an input that starts with a JSON object
//! has the cost of its run clamped before it is written (see [`clamp`], [`clamped`]), and
//! an experiment that is still not cheap (see [`cheap`]: more than [`MAX_FRAMES`] frames
//! offered in all, say) is loaded but not run.
//!
//! A finding is a panic anywhere (loader, simulator, runner, `to_json`), a run that ends
//! with `SimError::Invariant`, or results that break what a user relies on (see
//! [`check`]). An input rejected with an input error is fine.

#![no_main]

use irqsim::host::SimError;
use irqsim::results::{FlowResult, Results};
use irqsim::experiment::runner::{self, RunError};
use irqsim::config::scenario::{self, DiskFiles, Experiment, FileSource};
use libfuzzer_sys::fuzz_target;
use retry::retry;

mod retry;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Sending time and drain time of a point, at most [s].
const MAX_DURATION_S: f64 = 0.005;
/// Replications, at most.
const MAX_REPLICATIONS: u64 = 2;
/// Load points, at most.
const MAX_POINTS: usize = 3;
/// Variants, at most.
const MAX_VARIANTS: usize = 3;
/// Timeline bucket width, at least [ms].
const MIN_BUCKET_MS: f64 = 0.1;
/// Frames offered over the whole experiment (every variant, point and replication)
/// above which it is not run.
const MAX_FRAMES: f64 = 2_000_000.0;

struct Sandbox {
    /// Kept so the directory lives as long as the process.
    _dir: tempfile::TempDir,
    root: PathBuf,
    scenario: PathBuf,
}

/// `DiskFiles` confined to the sandbox (as in `load_scenario`): a scenario may name any
/// path as its model or measured table, and the fuzzer must not read /dev/zero or
/// /dev/stdin forever.
struct Confined<'a>(&'a Path);

impl FileSource for Confined<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        let real = std::fs::canonicalize(path)?;
        if !real.starts_with(self.0) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "outside the fuzzing sandbox",
            ));
        }
        DiskFiles::default().read(path)
    }
}

fn sandbox() -> &'static Sandbox {
    static CELL: OnceLock<Sandbox> = OnceLock::new();
    CELL.get_or_init(|| {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = retry(tempfile::tempdir).expect("temp dir");
        for sub in ["models", "scenarios/measured"] {
            retry(|| std::fs::create_dir_all(dir.path().join(sub))).expect("mkdir");
            for e in retry(|| std::fs::read_dir(repo.join(sub))).expect("shipped files") {
                let p = e.expect("entry").path();
                if p.is_file() {
                    let to = dir.path().join(sub).join(p.file_name().expect("name"));
                    retry(|| std::fs::copy(&p, &to)).expect("copy");
                }
            }
        }
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let scenario = dir.path().join("scenarios").join("case.json");
        Sandbox {
            _dir: dir,
            root,
            scenario,
        }
    })
}

/// Clamp the cost of a scenario object: `duration_s` and `drain_s` to at most
/// [`MAX_DURATION_S`] (`drain_s` is set when absent: its default is 1 s), `replications`
/// to at most [`MAX_REPLICATIONS`], `load.points` to its first [`MAX_POINTS`], a
/// `from`/`to`/`step` range to at most [`MAX_POINTS`] points (by lowering `to`),
/// `timeline.bucket_ms` to at least [`MIN_BUCKET_MS`], and `variants` to its first
/// [`MAX_VARIANTS`]. Values of the wrong type, and values the loader rejects anyway
/// (a negative duration), are left for the loader to report.
fn clamp(sc: &mut Map<String, Value>) {
    let at_most = |v: &mut Value, max: f64| {
        if let Some(x) = v.as_f64()
            && x > max
        {
            *v = Value::from(max);
        }
    };
    if let Some(v) = sc.get_mut("duration_s") {
        at_most(v, MAX_DURATION_S);
    }
    match sc.get_mut("drain_s") {
        Some(v) => at_most(v, MAX_DURATION_S),
        None => {
            sc.insert("drain_s".into(), Value::from(MAX_DURATION_S));
        }
    }
    if let Some(v) = sc.get_mut("replications")
        && v.as_u64().is_some_and(|n| n > MAX_REPLICATIONS)
    {
        *v = Value::from(MAX_REPLICATIONS);
    }
    if let Some(Value::Object(load)) = sc.get_mut("load") {
        if let Some(Value::Array(pts)) = load.get_mut("points") {
            pts.truncate(MAX_POINTS);
        }
        let num = |k: &str| load.get(k).and_then(Value::as_f64);
        if let (Some(from), Some(to), Some(step)) = (num("from"), num("to"), num("step")) {
            // The number of points as `scenario::load_values` counts them.
            let count = |to: f64| ((to - from) / step + 1e-9).floor() + 1.0;
            if step > 0.0 && from <= to && !(count(to) <= MAX_POINTS as f64) {
                let mut new_to = from + (MAX_POINTS - 1) as f64 * step;
                if !(count(new_to) <= MAX_POINTS as f64) {
                    new_to = from;
                }
                load.insert("to".into(), Value::from(new_to));
            }
        }
    }
    if let Some(Value::Object(tl)) = sc.get_mut("timeline")
        && let Some(b) = tl.get_mut("bucket_ms")
        && b.as_f64().is_some_and(|x| !(x >= MIN_BUCKET_MS))
    {
        *b = Value::from(MIN_BUCKET_MS);
    }
    if let Some(Value::Array(vs)) = sc.get_mut("variants") {
        vs.truncate(MAX_VARIANTS);
    }
}

/// Frames offered over the whole experiment.
fn offered_frames(exp: &Experiment) -> f64 {
    let per_rep: f64 = exp
        .variants
        .iter()
        .flat_map(|v| &v.points)
        .map(|p| p.rates_pps.iter().sum::<f64>())
        .sum();
    per_rep * exp.duration_s * exp.replications as f64
}

/// `a == b`, exactly for one replication; for means over several, within 1e-6 relative.
fn same(a: f64, b: f64, reps: u32) -> bool {
    if reps <= 1 {
        a == b
    } else {
        (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
    }
}

/// What a user relies on in one flow's (or the total's) figures.
fn check_flow(f: &FlowResult, reps: u32) -> Result<(), String> {
    let d = &f.drops;
    let drops = d.rx_ring
        + d.ipintrq
        + d.if_snd
        + d.user_queue
        + d.rx_fifo
        + d.tx_underrun
        + d.reset
        + d.xdp
        + d.netfilter
        + d.application;
    if !same(f.sent, f.received + f.lost, reps) {
        return Err(format!(
            "sent ({}) != received ({}) + lost ({})",
            f.sent, f.received, f.lost
        ));
    }
    if !same(f.lost, drops + f.in_flight_at_end, reps) {
        return Err(format!(
            "lost ({}) != drops ({drops}: {d:?}) + in_flight_at_end ({})",
            f.lost, f.in_flight_at_end
        ));
    }
    if !(f.drained >= 0.0 && f.drained <= f.received + 1e-6 * f.received.max(1.0)) {
        return Err(format!(
            "drained ({}) is not within received ({})",
            f.drained, f.received
        ));
    }
    if !(f.forwarded_pps.is_finite() && f.forwarded_pps >= 0.0) {
        return Err(format!("forwarded_pps is {}", f.forwarded_pps));
    }
    if !(f.in_flight_at_end.is_finite() && f.in_flight_at_end < 1e9) {
        return Err(format!(
            "in_flight_at_end is {} (not finite, or >= 1e9)",
            f.in_flight_at_end
        ));
    }
    if f.received > 0.0 {
        let l = &f.latency_us;
        let slack = if reps > 1 {
            1e-6 * l.max.abs().max(1.0)
        } else {
            0.0
        };
        for (name, q) in [("p50", l.p50), ("p99", l.p99), ("p999", l.p999)] {
            if !(q >= l.min - slack && q <= l.max + slack) {
                return Err(format!(
                    "latency {name} ({q} us) outside [min, max] = [{}, {}] us",
                    l.min, l.max
                ));
            }
        }
    }
    Ok(())
}

/// What a user relies on in the results of `exp`.
fn check(exp: &Experiment, r: &Results) -> Result<(), String> {
    let reps = exp.replications;
    let want = exp.variants.len() * exp.npoints();
    if r.points.len() != want {
        return Err(format!(
            "{} points in the results, {want} expected ({} variants x {} load points)",
            r.points.len(),
            exp.variants.len(),
            exp.npoints()
        ));
    }
    for (k, p) in r.points.iter().enumerate() {
        let at = format!("point {k} (variant `{}`, load {} %)", p.variant, p.load_pct);
        let fig = &p.figures;
        for f in std::iter::once(&fig.total).chain(&fig.flows) {
            check_flow(f, reps).map_err(|e| format!("{at}, flow `{}`: {e}", f.name))?;
        }
        let c = &fig.cpu;
        let sum = c.interrupt + c.softirq + c.kernel + c.user + c.idle;
        if !((sum - 1.0).abs() <= 1e-9) {
            return Err(format!("{at}: CPU fractions sum to {sum}, not 1: {c:?}"));
        }
    }
    Ok(())
}

/// The scenario as it is loaded: the input with its leading JSON value clamped if it is
/// an object, or the input as it is. The clamp applies to that first value and the rest
/// is kept, so that the loader still sees (and refuses) bytes after the document.
fn clamped(data: &[u8]) -> Vec<u8> {
    let mut stream = serde_json::Deserializer::from_slice(data).into_iter::<Value>();
    match stream.next() {
        Some(Ok(Value::Object(mut sc))) => {
            let rest = &data[stream.byte_offset()..];
            clamp(&mut sc);
            let mut text = serde_json::to_vec_pretty(&Value::Object(sc)).expect("plain JSON");
            text.extend_from_slice(rest);
            text
        }
        _ => data.to_vec(),
    }
}

/// Whether the loaded experiment is as cheap as [`clamp`] makes it (a safeguard in case
/// the loader reads the file otherwise than the clamp did), and offers at most
/// [`MAX_FRAMES`] frames.
fn cheap(exp: &Experiment) -> bool {
    exp.duration_s <= MAX_DURATION_S
        && exp.drain_s <= MAX_DURATION_S
        && exp.replications as u64 <= MAX_REPLICATIONS
        && exp.npoints() <= MAX_POINTS
        && exp.variants.len() <= MAX_VARIANTS
        && exp.timeline_bucket_ms.is_none_or(|b| b >= MIN_BUCKET_MS)
        && offered_frames(exp) <= MAX_FRAMES
}

fuzz_target!(|data: &[u8]| {
    let sb = sandbox();
    let text = clamped(data);
    retry(|| std::fs::write(&sb.scenario, &text)).expect("write the scenario");
    let exp = match scenario::load(&sb.scenario, &Confined(&sb.root)) {
        Ok(exp) => exp,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    if !cheap(&exp) {
        return;
    }
    let shown = || String::from_utf8_lossy(&text).into_owned();
    match runner::run(&exp, 1, &|| {}) {
        Ok(results) => {
            assert!(!results.to_json().is_empty());
            if let Err(e) = check(&exp, &results) {
                panic!(
                    "broken result invariant: {e}\nscenario (after clamping):\n{}",
                    shown()
                );
            }
        }
        Err(RunError::Run {
            error: SimError::Invariant(broken),
            variant,
            point,
            replication,
            ..
        }) => panic!(
            "SimError::Invariant (variant `{variant}`, point {point}, replication \
             {replication}): {broken}\nscenario (after clamping):\n{}",
            shown()
        ),
        // The loader accepted the experiment, so the run must too: a run refused as
        // invalid is validation that the loader missed (issue: variants validated only
        // against the first).
        Err(e @ RunError::Run { .. }) => panic!(
            "a loaded experiment was refused by the run: {e}\nscenario (after clamping):\n{}",
            shown()
        ),
        Err(e @ RunError::Interrupted { .. }) => panic!("interrupted without a stop flag: {e}"),
        // `runner::run` has no checkpoint, so nothing is saved.
        Err(e @ RunError::Save { .. }) => panic!("a save failed with no checkpoint: {e}"),
    }
});
