//! Plots written by the real binary: every figure after `irqsim run`, each PNG decodes at
//! the documented size and is not blank, each SVG holds its axis labels and legend
//! entries as text, `irqsim plot` reproduces the files, `--no-plots` writes none, the
//! timeline is drawn when `timeline.csv` is present, and `irqsim compare` overlays sets
//! and prints them side by side. Figures are read as a reader would: axis ranges from
//! the tick labels, legend entries and captions, marker and bar colours.
//!
//! The scenario is the reference one, copied into a temporary directory with its model
//! and measured table (same layout, so relative paths resolve), cut to four load points
//! of 0.05 s: 10 % and 26 % (loss-free), 30 % (livelock), 34 % (recovery).

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Documented size of every plot (README, "Plots and notebooks").
const WIDTH: u32 = 1024;
const HEIGHT: u32 = 640;

/// The figures of every run; `timeline` only with a timeline.
const FIGURES: [&str; 5] = ["loss", "forwarded", "latency", "cpu", "interrupts"];

/// Minimum variance of pixel luminance (0-255 scale) for a PNG not to count as blank.
///
/// A blank canvas (one colour) has variance 0, and a canvas with little on it stays
/// near 0: dark pixels covering a fraction f of a white canvas give about
/// f (1 - f) 255^2, e.g. ~130 for 0.2 % (a title line alone). Measured with this
/// renderer: an empty figure -- header, axes, tick labels, legend, no data (results
/// with no points) -- gives 256 to 373; the figures of this test's sweep give 460
/// (interrupts) to ~5,300 (CPU, filled areas), the timeline's heat map ~9,100. 200 is
/// well above blank or near-blank output and below anything with its frame drawn;
/// whether the data themselves were drawn is checked separately by the series colours
/// (`pngs_show_the_data`).
const MIN_VARIANCE: f64 = 200.0;

/// Colour of the first simulated series (style::PALETTE[0]) and of the interrupt level.
const SERIES_BLUE: [u8; 3] = [0x1f, 0x77, 0xb4];
const INTERRUPT_RED: [u8; 3] = [0xd6, 0x27, 0x28];

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("runs irqsim")
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A temporary copy of the reference scenario, shortened.
struct Case {
    /// Removed when the case is dropped (None for the shared case, see [`shared`]).
    _tmp: Option<tempfile::TempDir>,
    root: PathBuf,
}

impl Case {
    fn new() -> Case {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().to_path_buf();
        Case::at(root, Some(tmp))
    }

    fn at(root: PathBuf, tmp: Option<tempfile::TempDir>) -> Case {
        let d = root.as_path();
        std::fs::create_dir_all(d.join("scenarios/measured")).unwrap();
        std::fs::create_dir_all(d.join("models")).unwrap();
        let mut sc: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{ROOT}/scenarios/dc21143-64b-1flow.json")).unwrap(),
        )
        .unwrap();
        sc["duration_s"] = json!(0.05);
        sc["drain_s"] = json!(0.05);
        sc["load"] = json!({"unit": "percent", "points": [10, 26, 30, 34]});
        std::fs::write(
            d.join("scenarios/dc21143-64b-1flow.json"),
            serde_json::to_string_pretty(&sc).unwrap(),
        )
        .unwrap();
        std::fs::copy(
            format!("{ROOT}/models/p3-448-dc21143-freebsd4.json"),
            d.join("models/p3-448-dc21143-freebsd4.json"),
        )
        .unwrap();
        std::fs::copy(
            format!("{ROOT}/scenarios/measured/test_25Mx64x1.csv"),
            d.join("scenarios/measured/test_25Mx64x1.csv"),
        )
        .unwrap();
        Case { _tmp: tmp, root }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p)
    }

    fn run(&self, args: &[&str]) -> Output {
        run(args, &self.root)
    }
}

/// One run with plots, shared by the tests that read it (each writes only into its own
/// subdirectory). It lives under Cargo's target tmp directory, emptied first, because a
/// static is never dropped and a temp dir there would be left behind.
fn shared() -> &'static Case {
    static CELL: OnceLock<Case> = OnceLock::new();
    CELL.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plots");
        if root.exists() {
            std::fs::remove_dir_all(&root).expect("emptying the shared plot directory");
        }
        std::fs::create_dir_all(&root).unwrap();
        let c = Case::at(root, None);
        ok(&c.run(&[
            "run",
            "scenarios/dc21143-64b-1flow.json",
            "--out",
            "out",
            "--quiet",
        ]));
        c
    })
}

struct Png {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

fn read_png(path: &Path) -> Png {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap_or_else(|e| panic!("{} does not decode: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader
        .next_frame(&mut buf)
        .unwrap_or_else(|e| panic!("{} does not decode: {e}", path.display()));
    assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "{}", path.display());
    buf.truncate(info.buffer_size());
    Png {
        width: info.width,
        height: info.height,
        rgb: buf,
    }
}

/// Variance of luminance (Rec. 601 weights) over all pixels.
fn variance(p: &Png) -> f64 {
    let lum: Vec<f64> = p
        .rgb
        .chunks_exact(3)
        .map(|c| 0.299 * c[0] as f64 + 0.587 * c[1] as f64 + 0.114 * c[2] as f64)
        .collect();
    let n = lum.len() as f64;
    let mean = lum.iter().sum::<f64>() / n;
    lum.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / n
}

fn count_colour(p: &Png, c: [u8; 3]) -> usize {
    p.rgb.chunks_exact(3).filter(|px| *px == c).count()
}

fn check_png(path: &Path) -> Png {
    let p = read_png(path);
    assert_eq!(
        (p.width, p.height),
        (WIDTH, HEIGHT),
        "{} has the documented size",
        path.display()
    );
    let v = variance(&p);
    assert!(
        v > MIN_VARIANCE,
        "{} looks blank: luminance variance {v:.0} <= {MIN_VARIANCE}",
        path.display()
    );
    p
}

fn svg_text(path: &Path) -> String {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(s.starts_with("<svg"), "{} is an SVG", path.display());
    assert!(
        s.contains(&format!(r#"width="{WIDTH}" height="{HEIGHT}""#)),
        "{} has the documented size",
        path.display()
    );
    s
}

/// The `<text>` contents of an SVG (plotters writes each text element on its own line).
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let start = t.find('>')? + 1;
            let end = t.find("</text>")?;
            Some(
                t[start..end]
                    .trim()
                    .replace("&amp;", "&")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">"),
            )
        })
        .collect()
}

fn assert_texts(path: &Path, want: &[&str]) {
    let t = texts(&svg_text(path));
    for w in want {
        assert!(
            t.iter().any(|x| x == w),
            "{} has no text element {w:?}; it has {t:?}",
            path.display()
        );
    }
}

const X_LOAD: &str = "offered load (% of line rate)";
const MEASURED: &str = "measured: test_25Mx64x1.csv";

/// Axis labels and legend entries each figure must hold as text.
fn expected_texts(figure: &str) -> Vec<&'static str> {
    match figure {
        "loss" => vec![X_LOAD, "loss (% of frames sent)", "simulated", MEASURED],
        "forwarded" => vec![
            // The other figures' load axis (issue 54).
            X_LOAD,
            "forwarded rate (frames/s)",
            "simulated",
            MEASURED,
            "ideal: forwarded = offered",
            "MLFRR: every point up to",
            // 26 % of 148,809.5 frames/s: the last loss-free point before 30 %.
            "MLFRR 38,690 frames/s",
        ],
        "latency" => vec![
            X_LOAD,
            "latency (µs, log scale)",
            "simulated",
            "avg",
            "p99",
            "max",
            MEASURED,
        ],
        // This host has no kernel thread and no user process: no legend entry for them
        // (`cpu_legend_omits_levels_without_time`).
        "cpu" => vec![
            X_LOAD,
            "CPU time (% of sending time)",
            "interrupt",
            "softirq (netisr)",
            "idle",
        ],
        "interrupts" => vec![
            X_LOAD,
            "interrupts per second",
            "simulated",
            "one interrupt per",
        ],
        "timeline" => vec![
            "time (ms)",
            // One row per load point, named as on the load axis of the other figures.
            X_LOAD,
            "10",
            "30",
            // The colour bar.
            "max latency (µs)",
            "log scale",
        ],
        other => panic!("unknown figure {other}"),
    }
}

fn plot_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // The record of what irqsim wrote (`.irqsim-written`) is not a figure.
        .filter(|n| !n.starts_with('.'))
        .collect();
    v.sort();
    v
}

fn names(figs: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = figs
        .iter()
        .flat_map(|f| [format!("{f}.png"), format!("{f}.svg")])
        .collect();
    v.sort();
    v
}

#[test]
fn run_writes_every_figure_as_svg_and_png() {
    let c = shared();
    assert_eq!(plot_files(&c.path("out/plots")), names(&FIGURES));
    for f in FIGURES {
        check_png(&c.path(&format!("out/plots/{f}.png")));
        assert_texts(&c.path(&format!("out/plots/{f}.svg")), &expected_texts(f));
    }
}

#[test]
fn titles_say_what_was_simulated() {
    let c = shared();
    let t = texts(&svg_text(&c.path("out/plots/loss.svg")));
    assert!(
        t.iter()
            .any(|x| x == "Packet loss vs offered load — dc21143-64b-1flow"),
        "{t:?}"
    );
    assert!(
        t.iter()
            .any(|x| x.starts_with("Reference report, 64-byte frames")),
        "description in the subtitle: {t:?}"
    );
    assert!(
        t.iter().any(|x| x.contains("0.05 s per point")),
        "run parameters in the subtitle: {t:?}"
    );
}

#[test]
fn pngs_show_the_data() {
    // The simulated line (first palette colour) is drawn, not only axes and text; the
    // CPU figure shows the interrupt level.
    let c = shared();
    for f in ["loss", "forwarded", "latency", "interrupts"] {
        let p = read_png(&c.path(&format!("out/plots/{f}.png")));
        let n = count_colour(&p, SERIES_BLUE);
        assert!(n > 300, "{f}.png: only {n} pixels of the series colour");
    }
    let p = read_png(&c.path("out/plots/cpu.png"));
    assert!(count_colour(&p, INTERRUPT_RED) > 20_000);
}

#[test]
fn plot_reproduces_the_files_of_run() {
    let c = shared();
    ok(&c.run(&["plot", "out/results.json", "--out", "replot", "--quiet"]));
    assert_eq!(plot_files(&c.path("replot/plots")), names(&FIGURES));
    for f in FIGURES {
        let a = std::fs::read(c.path(&format!("out/plots/{f}.svg"))).unwrap();
        let b = std::fs::read(c.path(&format!("replot/plots/{f}.svg"))).unwrap();
        assert!(a == b, "{f}.svg differs after `irqsim plot`");
        let a = read_png(&c.path(&format!("out/plots/{f}.png")));
        let b = read_png(&c.path(&format!("replot/plots/{f}.png")));
        assert!(a.rgb == b.rgb, "{f}.png pixels differ after `irqsim plot`");
    }
}

#[test]
fn plot_writes_beside_the_results_by_default() {
    let c = Case::new();
    ok(&c.run(&[
        "run",
        "scenarios/dc21143-64b-1flow.json",
        "--out",
        "o",
        "--quiet",
        "--no-plots",
    ]));
    assert!(c.path("o/results.json").exists());
    assert!(!c.path("o/plots").exists(), "--no-plots writes no plots");
    let o = c.run(&["plot", "o/results.json"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("loss.svg"));
    assert_eq!(plot_files(&c.path("o/plots")), names(&FIGURES));
}

const TIMELINE: &str = "variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us
default,10,0,15,29.1,29.1
default,10,1,15,29.1,29.2
default,10,2,14,29.1,29.1
default,10,3,15,29.1,29.4
default,30,0,17,31.0,40.0
default,30,1,17,600.0,1200.0
default,30,2,0,0,0
default,30,3,16,2954.5,2959.7
";

/// Make `results` the results `timeline` was written with, as `irqsim run` records
/// it (`timeline_csv_fnv1a`), so that `plot` draws that timeline.csv.
fn own_timeline(results: &std::path::Path, timeline: &str) {
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results).unwrap()).unwrap();
    r["timeline_csv_fnv1a"] =
        irqsim::results::output::timeline_checksum(timeline.as_bytes()).into();
    std::fs::write(results, r.to_string()).unwrap();
}

#[test]
fn timeline_is_drawn_when_present_and_removed_when_gone() {
    let c = shared();
    let d = c.path("tl");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(c.path("out/results.json"), d.join("results.json")).unwrap();
    std::fs::write(d.join("timeline.csv"), TIMELINE).unwrap();
    own_timeline(&d.join("results.json"), TIMELINE);
    ok(&c.run(&["plot", "tl/results.json", "--quiet"]));
    let mut all = FIGURES.to_vec();
    all.push("timeline");
    assert_eq!(plot_files(&d.join("plots")), names(&all));
    check_png(&d.join("plots/timeline.png"));
    assert_texts(&d.join("plots/timeline.svg"), &expected_texts("timeline"));
    // Without a timeline the old figure goes, so plots/ never shows a stale one.
    std::fs::remove_file(d.join("timeline.csv")).unwrap();
    ok(&c.run(&["plot", "tl/results.json", "--quiet"]));
    assert_eq!(plot_files(&d.join("plots")), names(&FIGURES));
}

#[test]
fn bad_timeline_is_bad_input() {
    let c = Case::new();
    ok(&c.run(&[
        "run",
        "scenarios/dc21143-64b-1flow.json",
        "--out",
        "o",
        "--quiet",
        "--no-plots",
    ]));
    let bad =
        "variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us\ndefault,10,zero,1,2,3\n";
    std::fs::write(c.path("o/timeline.csv"), bad).unwrap();
    own_timeline(&c.path("o/results.json"), bad);
    let o = c.run(&["plot", "o/results.json", "--quiet"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("timeline.csv: line 2:"), "{err}");
    assert!(!c.path("o/plots").exists());
}

#[test]
fn bad_results_are_bad_input() {
    let c = Case::new();
    std::fs::write(c.path("r.json"), r#"{"scenario": "x"}"#).unwrap();
    let o = c.run(&["plot", "r.json", "--quiet"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("r.json: at `.`: missing field"), "{err}");
    let o = c.run(&["plot", "missing.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.json: cannot read file"));
}

#[test]
fn compare_overlays_result_sets_with_distinct_labels() {
    let c = shared();
    // A second set: the same sweep at a higher netisr cost (more livelock).
    let mut r: Value =
        serde_json::from_str(&std::fs::read_to_string(c.path("out/results.json")).unwrap())
            .unwrap();
    r["scenario"] = json!("costly");
    r["description"] = json!("netisr twice as costly");
    for p in r["points"].as_array_mut().unwrap() {
        let l = p["total"]["loss_pct"].as_f64().unwrap();
        p["total"]["loss_pct"] = json!((l * 1.5).min(100.0));
    }
    let d = c.path("costly");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("results.json"), r.to_string()).unwrap();
    ok(&c.run(&[
        "compare",
        "out/results.json",
        "costly/results.json",
        "--out",
        "cmp",
        "--quiet",
    ]));
    assert_eq!(plot_files(&c.path("cmp/plots")), names(&FIGURES));
    for f in FIGURES {
        check_png(&c.path(&format!("cmp/plots/{f}.png")));
    }
    for f in ["loss", "forwarded", "interrupts"] {
        assert_texts(
            &c.path(&format!("cmp/plots/{f}.svg")),
            &["dc21143-64b-1flow", "costly"],
        );
    }
    // The measured table of each set is the same one: drawn once.
    let t = texts(&svg_text(&c.path("cmp/plots/loss.svg")));
    assert_eq!(t.iter().filter(|x| *x == MEASURED).count(), 1, "{t:?}");
    // CPU: one panel per set, captioned by its label.
    assert_texts(
        &c.path("cmp/plots/cpu.svg"),
        &["dc21143-64b-1flow", "costly"],
    );
    // Compare needs at least two sets.
    let o = c.run(&["compare", "out/results.json"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn policies_scenario_draws_one_line_per_variant() {
    // The receive-policy comparison, cut to three points of 0.02 s.
    let c = Case::new();
    let mut sc: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/scenarios/policies-64b.json")).unwrap(),
    )
    .unwrap();
    sc["duration_s"] = json!(0.02);
    sc["drain_s"] = json!(0.02);
    sc["load"] = json!({"unit": "percent", "points": [10, 40, 100]});
    std::fs::write(
        c.path("scenarios/policies-64b.json"),
        serde_json::to_string_pretty(&sc).unwrap(),
    )
    .unwrap();
    ok(&c.run(&[
        "run",
        "scenarios/policies-64b.json",
        "--out",
        "pol",
        "--quiet",
    ]));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(c.path("pol/results.json")).unwrap())
            .unwrap();
    let mut variants: Vec<String> = Vec::new();
    for p in r["points"].as_array().unwrap() {
        let v = p["variant"].as_str().unwrap().to_string();
        if !variants.contains(&v) {
            variants.push(v);
        }
    }
    assert!(variants.len() >= 2, "several variants: {variants:?}");
    assert_eq!(plot_files(&c.path("pol/plots")), names(&FIGURES));
    for f in FIGURES {
        check_png(&c.path(&format!("pol/plots/{f}.png")));
    }
    let v: Vec<&str> = variants.iter().map(String::as_str).collect();
    for f in ["loss", "latency", "cpu", "interrupts"] {
        // Legend entries (loss, latency, interrupts) or panel captions (cpu).
        assert_texts(&c.path(&format!("pol/plots/{f}.svg")), &v);
    }
    // Forwarded: each variant's legend entry, followed by its MLFRR.
    let t = texts(&svg_text(&c.path("pol/plots/forwarded.svg")));
    for name in &v {
        assert!(t.iter().any(|x| x == name), "{name} in {t:?}");
    }
    assert!(t.iter().any(|x| x.starts_with("MLFRR ")), "{t:?}");
    // Policies that keep up forward alike: a line drawn over an earlier one closer than
    // 0.2 % of the axis (5 % above the largest forwarded rate) at every point says so,
    // under its MLFRR. This sweep has such lines (NAPI, deferred and busy polling
    // forward within 150 frames/s of each other at every point).
    let fwd = |v: &str| -> Vec<f64> {
        r["points"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["variant"] == v)
            .map(|p| p["total"]["forwarded_pps"].as_f64().unwrap())
            .collect()
    };
    let top = 1.05
        * r["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["total"]["forwarded_pps"].as_f64().unwrap())
            .fold(0.0, f64::max);
    let mut notes = 0;
    for (k, name) in v.iter().enumerate() {
        let i = t.iter().position(|x| x == name).unwrap();
        let next = v
            .get(k + 1)
            .and_then(|n| t.iter().position(|x| x == n))
            .unwrap_or(t.len());
        for x in &t[i + 1..next] {
            if let Some(other) = x
                .strip_prefix("(coincides with ")
                .and_then(|o| o.strip_suffix(')'))
            {
                notes += 1;
                for (a, b) in fwd(name).iter().zip(fwd(other)) {
                    assert!((a - b).abs() <= 0.002 * top, "{name} {a} vs {other} {b}");
                }
            }
        }
    }
    assert!(notes >= 1, "no coinciding line noted: {t:?}");
    // Latency: one panel per statistic with this many variants.
    assert_texts(
        &c.path("pol/plots/latency.svg"),
        &["average", "99th percentile", "maximum"],
    );
}

#[test]
fn a_run_that_records_a_timeline_draws_it() {
    // The xl(4) scenario records a 1 ms latency timeline; it sweeps in frames/s, so the
    // load axes show the offered rate. Cut to two points of 0.2 s.
    let c = Case::new();
    std::fs::copy(
        format!("{ROOT}/models/p100-3c905b-freebsd41.json"),
        c.path("models/p100-3c905b-freebsd41.json"),
    )
    .unwrap();
    let mut sc: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/scenarios/xl-stats-overflow.json")).unwrap(),
    )
    .unwrap();
    sc["duration_s"] = json!(0.2);
    sc["drain_s"] = json!(0.05);
    sc["load"] = json!({"unit": "pps", "points": [200, 3000]});
    std::fs::write(
        c.path("scenarios/xl-stats-overflow.json"),
        serde_json::to_string_pretty(&sc).unwrap(),
    )
    .unwrap();
    ok(&c.run(&[
        "run",
        "scenarios/xl-stats-overflow.json",
        "--out",
        "xl",
        "--quiet",
    ]));
    assert!(
        c.path("xl/timeline.csv").exists(),
        "the run wrote a timeline"
    );
    let mut all = FIGURES.to_vec();
    all.push("timeline");
    assert_eq!(plot_files(&c.path("xl/plots")), names(&all));
    check_png(&c.path("xl/plots/timeline.png"));
    assert_texts(
        &c.path("xl/plots/timeline.svg"),
        &[
            "time (ms)",
            "offered rate (frames/s)",
            "200",
            "3,000",
            "max latency (µs)",
        ],
    );
    assert_texts(
        &c.path("xl/plots/loss.svg"),
        &["offered rate (frames/s)", "loss (% of frames sent)"],
    );
    // `irqsim plot` finds the timeline beside results.json and redraws it identically.
    ok(&c.run(&["plot", "xl/results.json", "--out", "re", "--quiet"]));
    let a = std::fs::read(c.path("xl/plots/timeline.svg")).unwrap();
    let b = std::fs::read(c.path("re/plots/timeline.svg")).unwrap();
    assert!(a == b, "timeline.svg differs after `irqsim plot`");
}

/// A start tag (`<tag ...>`) of an SVG element, with the text up to the next `<` when it
/// is a text element.
fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    svg.match_indices(&open)
        .map(|(i, _)| {
            let rest = &svg[i..];
            let end = if tag == "text" {
                rest.find("</text>").unwrap_or(rest.len())
            } else {
                rest.find('>').unwrap_or(rest.len())
            };
            &rest[..end]
        })
        .collect()
}

/// An attribute of an element.
fn attr(el: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = el.find(&key)? + key.len();
    Some(el[i..i + el[i..].find('"')?].to_string())
}

fn attr_f(el: &str, name: &str) -> f64 {
    attr(el, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// A text element: position, anchor, vertical shift and content.
struct TextEl {
    x: f64,
    y: f64,
    anchor: String,
    dy: String,
    text: String,
}

fn text_elements(svg: &str) -> Vec<TextEl> {
    elements(svg, "text")
        .into_iter()
        .map(|e| TextEl {
            x: attr_f(e, "x"),
            y: attr_f(e, "y"),
            anchor: attr(e, "text-anchor").unwrap_or_default(),
            dy: attr(e, "dy").unwrap_or_default(),
            text: e[e.find('>').map_or(e.len(), |i| i + 1)..]
                .trim()
                .to_string(),
        })
        .collect()
}

/// A tick label's number (thousands separators removed).
fn tick_value(t: &str) -> Option<f64> {
    t.replace(',', "").parse().ok()
}

/// A tick label: its value, its pixel along its axis, its text.
type Tick = (f64, f64, String);

/// Tick labels of the y axes (right-aligned left of the axis) and of the x axes
/// (centred under it).
fn ticks(svg: &str) -> (Vec<Tick>, Vec<Tick>) {
    let mut y = Vec::new();
    let mut x = Vec::new();
    for t in text_elements(svg) {
        let Some(v) = tick_value(&t.text) else {
            continue;
        };
        if t.anchor == "end" && t.dy == "0.5ex" {
            y.push((v, t.y, t.text));
        } else if t.anchor == "middle" && t.dy == "0.76em" {
            x.push((v, t.x, t.text));
        }
    }
    (y, x)
}

/// The axis lines (plotters draws them in the axis style, #555555): the longest
/// vertical one's top pixel and the longest horizontal one's right pixel.
fn axis_ends(svg: &str) -> (f64, f64) {
    let (mut top, mut right, mut vlen, mut hlen) = (0.0, 0.0, 0.0, 0.0);
    for e in elements(svg, "polyline") {
        if attr(e, "stroke").as_deref() != Some("#555555") {
            continue;
        }
        let pts: Vec<(f64, f64)> = attr(e, "points")
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| {
                let (a, b) = p.split_once(',')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
            .collect();
        if let [a, b] = pts[..] {
            if a.0 == b.0 && (a.1 - b.1).abs() > vlen {
                vlen = (a.1 - b.1).abs();
                top = a.1.min(b.1);
            }
            if a.1 == b.1 && (a.0 - b.0).abs() > hlen {
                hlen = (a.0 - b.0).abs();
                right = a.0.max(b.0);
            }
        }
    }
    (top, right)
}

/// The value at a pixel, on the line through the first and last ticks.
fn at_pixel(ticks: &[Tick], px: f64) -> f64 {
    let (v0, p0, _) = &ticks[0];
    let (v1, p1, _) = &ticks[ticks.len() - 1];
    v0 + (px - p0) * (v1 - v0) / (p1 - p0)
}

/// The values at the right end of the x axis and the top of the y axis of a figure with
/// one pair of axes.
fn axis_maxima(svg: &str) -> (f64, f64) {
    let (y, x) = ticks(svg);
    let (top, right) = axis_ends(svg);
    assert!(x.len() >= 2 && y.len() >= 2, "ticks: {x:?} {y:?}");
    (at_pixel(&x, right), at_pixel(&y, top))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The x axis description of a figure: the text centred under the x tick labels that is
/// not a tick label.
fn x_desc(svg: &str) -> String {
    let els = text_elements(svg);
    let tick_y = els
        .iter()
        .filter(|e| e.anchor == "middle" && e.dy == "0.76em" && tick_value(&e.text).is_some())
        .map(|e| e.y)
        .fold(0.0, f64::max);
    els.iter()
        .filter(|e| e.y > tick_y && tick_value(&e.text).is_none())
        .min_by(|a, b| a.y.total_cmp(&b.y))
        .map(|e| e.text.clone())
        .unwrap_or_default()
}

#[test]
fn forwarded_axes_fit_the_data() {
    // Issue 54: the x axis is the other figures' load axis (% of line rate here), with
    // their description and range, so the five figures read side by side; the y axis
    // ends 5 % above the largest forwarded rate (simulated or measured); the ideal line
    // forwarded = offered runs at the sweep's frames/s per % of line rate.
    let c = shared();
    let r = read_json(&c.path("out/results.json"));
    let pts = r["points"].as_array().unwrap();
    // frames/s per % of line rate: how the plot places the measured table's points.
    let ratio = f(&pts[0]["offered_pps"]) / f(&pts[0]["load_pct"]);
    let mut ymax = pts
        .iter()
        .map(|p| f(&p["total"]["forwarded_pps"]))
        .fold(0.0, f64::max);
    for m in r["measured"]["points"].as_array().unwrap() {
        let off = f(&m["load_pct"]) * ratio;
        let t = &m["total"];
        ymax = ymax.max(off * f(&t["received"]) / f(&t["sent"]));
    }
    let fwd = svg_text(&c.path("out/plots/forwarded.svg"));
    let (xtop, ytop) = axis_maxima(&fwd);
    // Read from pixel positions: within 1 % of the 5 % margin.
    assert!(
        (ytop / ymax - 1.05).abs() < 0.01,
        "y axis ends at {ytop:.0}, data at {ymax:.0}"
    );
    for other in ["loss", "latency", "cpu", "interrupts"] {
        let svg = svg_text(&c.path(&format!("out/plots/{other}.svg")));
        assert_eq!(x_desc(&fwd), x_desc(&svg), "x axis of forwarded vs {other}");
        assert_eq!(x_desc(&fwd), X_LOAD);
        let (_, x) = ticks(&svg);
        let (_, right) = axis_ends(&svg);
        let end = at_pixel(&x, right);
        assert!(
            (xtop - end).abs() < 0.01 * end,
            "forwarded x axis ends at {xtop}, {other}'s at {end}"
        );
    }
    // The ideal line (dashed, the reference grey): its ends read on the axes give
    // forwarded = offered, i.e. the ratio in frames/s per % of line rate.
    let (y, x) = ticks(&fwd);
    let dashes: Vec<(f64, f64)> = elements(&fwd, "polyline")
        .into_iter()
        .filter(|e| attr(e, "stroke").as_deref() == Some("#808080"))
        .flat_map(|e| {
            attr(e, "points")
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| {
                    let (a, b) = p.split_once(',')?;
                    Some((a.parse::<f64>().ok()?, b.parse::<f64>().ok()?))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // (The legend's sample, right of the axes, is not the line.)
    let (_, right) = axis_ends(&fwd);
    let dashes: Vec<(f64, f64)> = dashes.into_iter().filter(|p| p.0 <= right).collect();
    assert!(dashes.len() > 10, "{dashes:?}");
    for (px, py) in [dashes[0], dashes[dashes.len() - 1]] {
        let (xv, yv) = (at_pixel(&x, px), at_pixel(&y, py));
        assert!(
            (yv / (xv * ratio) - 1.0).abs() < 0.02,
            "ideal line at ({xv:.2} %, {yv:.0} frames/s), {ratio:.1} frames/s per %"
        );
    }
    assert_texts(
        &c.path("out/plots/forwarded.svg"),
        &["(1 % = 1,488 frames/s)"],
    );
}

#[test]
fn latency_axis_fits_the_data() {
    // Issue 54: the log axis runs from the 1-2-5 step at or below the smallest latency
    // (simulated avg, p99, max; measured avg, max) to the one at or above the largest,
    // every such step a tick: no empty decade below the data.
    let c = shared();
    let r = read_json(&c.path("out/results.json"));
    let mut vals: Vec<f64> = Vec::new();
    for p in r["points"].as_array().unwrap() {
        for k in ["avg", "p99", "max"] {
            vals.push(f(&p["total"]["latency_us"][k]));
        }
    }
    for m in r["measured"]["points"].as_array().unwrap() {
        if f(&m["total"]["received"]) > 0.0 {
            vals.push(f(&m["total"]["avg_us"]));
            vals.push(f(&m["total"]["max_us"]));
        }
    }
    vals.retain(|v| *v > 0.0);
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(0.0, f64::max);
    let svg = svg_text(&c.path("out/plots/latency.svg"));
    let (y, _) = ticks(&svg);
    let low = y.iter().map(|t| t.0).fold(f64::INFINITY, f64::min);
    let top = y.iter().map(|t| t.0).fold(0.0, f64::max);
    // One 1-2-5 step is at most a factor of 2.5.
    assert!(
        low <= lo && lo < 2.5 * low,
        "lowest tick {low}, data from {lo}"
    );
    assert!(
        top >= hi && hi > top / 2.5,
        "highest tick {top}, data to {hi}"
    );
    // The axis ends on those ticks: the lowest at the bottom of the axis line.
    let (axis_top, _) = axis_ends(&svg);
    let top_px = y.iter().find(|t| t.0 == top).unwrap().1;
    assert!((top_px - axis_top).abs() <= 1.0, "{top_px} vs {axis_top}");
    // 1-2-5 steps only.
    for (v, _, l) in &y {
        let m = v / 10f64.powf(v.log10().floor());
        assert!(
            [1.0, 2.0, 5.0].iter().any(|s| (m - s).abs() < 1e-9),
            "tick {l}"
        );
    }
}

#[test]
fn tick_labels_are_readable() {
    // Issue 54: tick labels were a 11.3 px font (digits 9 px high in the PNG). Measured
    // in the PNG: the dark rows (luminance < 140) of the x tick labels without a comma,
    // in a box around each label's SVG position: 11 or 12 px from the digits' top to the
    // baseline (12 px of glyph at 0.73 em of a 16.1 px font, rows split by anti-aliasing).
    let c = shared();
    let svg = svg_text(&c.path("out/plots/loss.svg"));
    let png = read_png(&c.path("out/plots/loss.png"));
    let els = text_elements(&svg);
    let mut n = 0;
    for e in els
        .iter()
        .filter(|e| e.anchor == "middle" && e.dy == "0.76em")
        .filter(|e| e.text.chars().all(|c| c.is_ascii_digit()))
    {
        let (x0, y0) = (e.x as i64 - 20, e.y as i64 - 2);
        let mut rows = Vec::new();
        for yy in y0..y0 + 22 {
            let dark = (x0..x0 + 40).any(|xx| {
                let i = 3 * (yy as usize * png.width as usize + xx as usize);
                let p = &png.rgb[i..i + 3];
                0.299 * p[0] as f64 + 0.587 * p[1] as f64 + 0.114 * (p[2] as f64) < 140.0
            });
            if dark {
                rows.push(yy);
            }
        }
        let h = rows.last().unwrap() - rows.first().unwrap() + 1;
        assert!(h >= 11, "tick label {:?} is {h} px high", e.text);
        n += 1;
    }
    assert!(n >= 3, "{n} x tick labels measured");
}

#[test]
fn interrupts_figure_says_why_it_rises_above_one_per_frame() {
    // Issue 54: at 10-16 % the reference router takes more interrupts than it is offered
    // frames: the output port dc1's transmit completions (TX_NOBUF), 12,210/s, each
    // a pass over the shared line when no receive shares it. The figure says so.
    let c = shared();
    let r = read_json(&c.path("out/results.json"));
    let p = &r["points"][0];
    assert_eq!(f(&p["load_pct"]), 10.0);
    assert!(f(&p["interrupts_per_s"]) > 1.2 * f(&p["offered_pps"]));
    assert_eq!(f(&p["counters"]["dc1.rx_frames"]), 0.0);
    let dc1 = f(&p["counters"]["dc1.interrupts"]) / f(&r["duration_s"]);
    let t = texts(&svg_text(&c.path("out/plots/interrupts.svg"))).join(" ");
    assert!(
        t.contains("Above the dashed line: interrupts that receive"),
        "{t}"
    );
    assert!(t.contains("transmit completions"), "{t}");
    let rate = format!("dc1 {}/s at 10 %", fmt_int(dc1));
    assert!(t.contains(&rate), "{rate} in {t}");
}

/// A whole number with thousands separators.
fn fmt_int(v: f64) -> String {
    let s = format!("{:.0}", v);
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[test]
fn cpu_legend_omits_levels_without_time() {
    // The reference host runs no kernel thread and no user process: neither has a
    // legend entry; the levels that ran have theirs.
    let c = shared();
    let r = read_json(&c.path("out/results.json"));
    for p in r["points"].as_array().unwrap() {
        assert_eq!(f(&p["cpu"]["kernel"]), 0.0);
        assert_eq!(f(&p["cpu"]["user"]), 0.0);
    }
    let t = texts(&svg_text(&c.path("out/plots/cpu.svg")));
    for absent in ["kernel thread", "user"] {
        assert!(!t.iter().any(|x| x == absent), "{absent} in {t:?}");
    }
    for present in ["interrupt", "softirq (netisr)", "idle"] {
        assert!(t.iter().any(|x| x == present), "{present} not in {t:?}");
    }
}

#[test]
fn latency_maximum_shows_over_the_p99() {
    // The maximum's points are filled triangles in its colour (style::LATENCY_STATS[2]),
    // one per point that delivered frames and one in the legend, drawn after the whole
    // p99 line (LATENCY_STATS[1]) so that none hides under it.
    let c = shared();
    let svg = svg_text(&c.path("out/plots/latency.svg"));
    let r = read_json(&c.path("out/results.json"));
    let n = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| f(&p["total"]["latency_us"]["max"]) > 0.0)
        .count();
    assert_eq!(n, 4);
    let max_marks: Vec<usize> = svg
        .match_indices("<polygon ")
        .filter(|(i, _)| svg[*i..].starts_with(r##"<polygon opacity="1" fill="#D62728""##))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(max_marks.len(), n + 1, "max markers");
    let last_p99 = svg.rfind(r##"stroke="#FF7F0E""##).expect("p99 line");
    assert!(
        max_marks[1..].iter().all(|i| *i > last_p99),
        "max points drawn before the end of the p99 line"
    );
}

/// The many-core scenario (two flows, dc0 -> dc2 and dc1 -> dc3, each port on an
/// interrupt line of its own; one core, two cores, two cores with every vector on core
/// 0), cut to three load points of 0.03 s, run once with its table printed and a trace
/// of the one-core variant at 50 % per flow (where the two flows lose 7.6 % and 90 %).
fn many_cores() -> &'static (Case, String) {
    static CELL: OnceLock<(Case, String)> = OnceLock::new();
    CELL.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plots-many-cores");
        if root.exists() {
            std::fs::remove_dir_all(&root).expect("emptying the many-cores directory");
        }
        std::fs::create_dir_all(&root).unwrap();
        let c = Case::at(root, None);
        let mut sc: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{ROOT}/scenarios/many-cores-64b.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(sc["model"], "../models/p3-448-dc21143-freebsd4.json");
        sc["duration_s"] = json!(0.03);
        sc["drain_s"] = json!(0.02);
        sc["load"] = json!({"unit": "percent", "points": [20, 50, 90]});
        std::fs::write(
            c.path("scenarios/many-cores-64b.json"),
            serde_json::to_string_pretty(&sc).unwrap(),
        )
        .unwrap();
        let o = c.run(&[
            "run",
            "scenarios/many-cores-64b.json",
            "--out",
            "mc",
            "--trace",
            "10ms..11ms",
            "--trace-point",
            "50",
            "--trace-variant",
            "1-core",
        ]);
        ok(&o);
        let stdout = String::from_utf8(o.stdout).unwrap();
        (c, stdout)
    })
}

/// The points of `variant` in a results.json.
fn points_of<'a>(r: &'a Value, variant: &str) -> Vec<&'a Value> {
    r["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["variant"] == variant)
        .collect()
}

#[test]
fn coinciding_lines_say_so() {
    let (c, _) = many_cores();
    let r = read_json(&c.path("mc/results.json"));
    // Loss: every vector on core 0 of two cores loses what one core loses, at every
    // point (the second core has nothing to do); its line, drawn over the one-core
    // line, says so.
    let one = points_of(&r, "1-core");
    let all0 = points_of(&r, "2-cores-all-on-core0");
    for (a, b) in one.iter().zip(&all0) {
        assert_eq!(a["total"]["loss_pct"], b["total"]["loss_pct"]);
    }
    let t = texts(&svg_text(&c.path("mc/plots/loss.svg")));
    let i = t
        .iter()
        .position(|x| x == "2-cores-all-on-core0")
        .expect("legend entry");
    assert_eq!(t[i + 1], "(coincides with 1-core)", "{t:?}");
    // The spread two-core variant loses less: no note on it.
    let j = t.iter().position(|x| x == "2-cores").expect("legend entry");
    assert!(!t[j + 1].starts_with("(coincides"), "{t:?}");
    // Cores: with the vectors spread both cores are as busy as each other at every point
    // (within 0.2 % of the 105 % axis: 29.3/29.3, 70.0/70.1, 100/100); with every vector
    // on core 0 they are not. The panel where they coincide says so in its caption.
    for p in points_of(&r, "2-cores") {
        let k = p["cores"].as_array().unwrap();
        let d = 100.0 * (f(&k[0]["idle"]) - f(&k[1]["idle"])).abs();
        assert!(d <= 0.002 * 105.0, "cores differ by {d} points");
    }
    let t = texts(&svg_text(&c.path("mc/plots/cores.svg")));
    assert!(t.iter().any(|x| x == "2-cores (core 1 = core 0)"), "{t:?}");
    assert!(t.iter().any(|x| x == "2-cores-all-on-core0"), "{t:?}");
    assert!(t.iter().any(|x| x == "core 1"), "{t:?}");
}

#[test]
fn load_axes_and_table_say_per_flow_or_all_flows() {
    // Two flows at 50 % of line rate each offer 148,810 frames/s together: the load
    // point is each flow's, the offered and forwarded rates are both flows'.
    let (c, stdout) = many_cores();
    assert_texts(
        &c.path("mc/plots/loss.svg"),
        &["offered load per flow (% of line rate)"],
    );
    assert_texts(
        &c.path("mc/plots/forwarded.svg"),
        &[
            "offered load per flow (% of line rate)",
            "forwarded rate, all flows (frames/s)",
        ],
    );
    let r = read_json(&c.path("mc/results.json"));
    let p = points_of(&r, "1-core")[1];
    assert_eq!(f(&p["load_pct"]), 50.0);
    // 2 x 50 % of 148,809.5 frames/s (64-byte frames at 100 Mbit/s).
    assert!((f(&p["offered_pps"]) - 148_809.5).abs() < 1.0);
    let header = stdout
        .lines()
        .find(|l| l.contains("fwd pps"))
        .expect("table header");
    assert!(header.trim_start().starts_with("flow%"), "{header}");
    assert!(
        stdout.contains(
            "flow%: each flow's load (% of its input link's line rate, as `load.unit` counts it); offered, fwd pps: all 2 flows together"
        ),
        "{stdout}"
    );
    // One flow: the plain headings (`run_writes_every_figure_as_svg_and_png`).
}

#[test]
fn run_table_shows_flows_that_differ() {
    // One core at 50 % per flow: dc0 -> dc2 loses 7.6 %, dc1 -> dc3 90 %; the totals
    // (48.8 %) hide it. Under the variant's table each flow of that point has a row with
    // its loss and latency; the two-core variant's flows lose alike (0, 0, 33.2 % and
    // 33.4 %) and get none.
    let (c, stdout) = many_cores();
    let r = read_json(&c.path("mc/results.json"));
    let block = |v: &str| -> String {
        let start = stdout
            .find(&format!("variant: {v}\n"))
            .unwrap_or_else(|| panic!("no table of {v} in {stdout}"));
        let rest = &stdout[start + 1..];
        rest[..rest.find("\nvariant: ").unwrap_or(rest.len())].to_string()
    };
    let one = block("1-core");
    assert!(one.contains("flows that differ"), "{one}");
    let p = points_of(&r, "1-core")[1];
    for fl in p["flows"].as_array().unwrap() {
        let name = fl["name"].as_str().unwrap();
        let row: Vec<&str> = one
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no row of {name} in {one}"))
            .split_whitespace()
            .collect();
        // flow%, flow, offered, fwd pps, loss%, avg us, max us
        assert_eq!(row[0], "50.00");
        let num = |k: usize| row[k].parse::<f64>().unwrap();
        assert!((num(3) - f(&fl["forwarded_pps"])).abs() <= 0.5, "{row:?}");
        assert!((num(4) - f(&fl["loss_pct"])).abs() <= 0.005, "{row:?}");
        assert!(
            (num(5) - f(&fl["latency_us"]["avg"])).abs() <= 0.05,
            "{row:?}"
        );
    }
    let losses: Vec<f64> = p["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|fl| f(&fl["loss_pct"]))
        .collect();
    assert!(losses[1] - losses[0] > 80.0, "{losses:?}");
    // The other points of the variant (0 and 0; 99.4 and 99.4) have no rows.
    assert_eq!(one.lines().filter(|l| l.contains("dc0-dc2")).count(), 1);
    assert!(!block("2-cores").contains("flows that differ"));
}

#[test]
fn trace_plot_reads_like_the_other_figures() {
    let (c, _) = many_cores();
    let svg = svg_text(&c.path("mc/plots/trace.svg"));
    let trace = read_json(&c.path("mc/trace.json"));
    let events = trace["traceEvents"].as_array().unwrap();
    // Each port's interrupt line in a colour of its own: the bars of a line, and its
    // legend swatch, share one colour no other line has.
    let mut slices: std::collections::BTreeMap<String, usize> = Default::default();
    for e in events.iter().filter(|e| {
        // CPU slices: on a CPU level's track (slices share the category `host`).
        e["ph"] == "X"
            && e["tid"]
                .as_u64()
                .is_some_and(irqsim::trace::chrome::is_cpu_tid)
    }) {
        *slices
            .entry(e["name"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let irq: Vec<(&String, &usize)> = slices
        .iter()
        .filter(|(n, _)| n.starts_with("interrupt"))
        .collect();
    assert_eq!(irq.len(), 4, "{slices:?}");
    let mut fills: std::collections::BTreeMap<String, usize> = Default::default();
    for e in elements(&svg, "rect") {
        let fill = attr(e, "fill").unwrap_or_default();
        if fill != "none" && fill != "#FFFFFF" {
            *fills.entry(fill).or_default() += 1;
        }
    }
    // netisr: the CPU figure's softirq orange; the drops' bars the text colour (at most
    // one per bin of the window, issue 54: a mark per drop merged into a solid bar over
    // the ticks); the other colours are the lines'.
    let netisr = fills.remove("#FF9F40").expect("netisr bars");
    let drop_bars = fills.remove("#202020").expect("drop bars");
    assert!(drop_bars <= 100 + 1, "{drop_bars} drop bars");
    assert_eq!(netisr, slices["netisr"] + 1);
    let mut want: Vec<usize> = irq.iter().map(|(_, n)| **n + 1).collect();
    let mut got: Vec<usize> = fills.values().copied().collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "bars per colour {fills:?}, slices {slices:?}");

    // Legends right of the data, every name whole.
    let (_, right) = axis_ends(&svg);
    let els = text_elements(&svg);
    let mut names: Vec<String> = slices.keys().cloned().collect();
    names.extend(["bus requests", "dc0 rx ring", "ipintrq"].map(String::from));
    for n in &names {
        let e = els
            .iter()
            .find(|e| &e.text == n)
            .unwrap_or_else(|| panic!("no legend entry {n}"));
        assert!(
            e.x > right,
            "{n} at x = {} inside the data (to {right})",
            e.x
        );
    }

    // Frames are counted in whole numbers from 0.
    let (y, _) = ticks(&svg);
    assert!(y.len() >= 3, "{y:?}");
    for (v, _, label) in &y {
        assert!(*v >= 0.0 && !label.contains('.'), "tick {label:?}");
    }
    let drops = events
        .iter()
        .filter(|e| e["ph"] == "i" && e["cat"] == "drop")
        .count();
    assert!(drops > 10, "{drops} drops");
    // The drops: a row of their own, named, with a legend entry giving the bin; no mark
    // on the time axis (no cross: two 10 px strokes in the text colour).
    assert!(t_has(&svg, "drops"));
    assert!(
        texts(&svg)
            .iter()
            .any(|x| x.starts_with("drops: frames lost per 10 µs")),
        "{:?}",
        texts(&svg)
    );
    let crosses = elements(&svg, "polyline")
        .into_iter()
        .filter(|e| attr(e, "stroke").as_deref() == Some("#202020"))
        .count();
    assert_eq!(crosses, 0);

    // The units and dashes of the other figures.
    let t = texts(&svg);
    assert!(t.iter().any(|x| x == "time since 0.010000 s (µs)"), "{t:?}");
    assert!(
        t.iter().any(|x| x == "many-cores-64b — 1-core at 50.00 %"),
        "{t:?}"
    );
    assert!(
        !t.iter().any(|x| x.contains("[us]") || x.contains(" -- ")),
        "{t:?}"
    );
}

fn t_has(svg: &str, text: &str) -> bool {
    texts(svg).iter().any(|x| x == text)
}

#[test]
fn six_core_trace_legend_fits_the_figure() {
    // Issue 54: the six-core router's trace (.ci/run's scenario: RPS over six cores,
    // twelve flows) has more legend entries than one column holds; every entry is drawn
    // inside the figure, right of the data.
    let c = Case::new();
    std::fs::copy(
        format!("{ROOT}/models/xeon-e5-1650v4-10g-linux.json"),
        c.path("models/xeon-e5-1650v4-10g-linux.json"),
    )
    .unwrap();
    let flows: Vec<Value> = (1..=12)
        .map(|i| json!({"name": format!("f{i}"), "from": "eth0", "to": "eth1", "frame_bytes": 64}))
        .collect();
    let sc = json!({
        "description": "six-core Linux router, NAPI with RPS over all cores, 12 flows",
        "model": "../models/xeon-e5-1650v4-10g-linux.json",
        "overrides": { "nics": { "eth0": { "policy": { "rps_cpus": [0, 1, 2, 3, 4, 5] } } } },
        "workload": { "flows": flows },
        "load": { "unit": "pps", "points": [31000] },
        "duration_s": 0.003, "drain_s": 0.001, "seed": 1, "replications": 1
    });
    std::fs::write(c.path("scenarios/cores.json"), sc.to_string()).unwrap();
    ok(&c.run(&[
        "run",
        "scenarios/cores.json",
        "--out",
        "six",
        "--quiet",
        "--trace",
        "1ms..2ms",
    ]));
    let svg = svg_text(&c.path("six/plots/trace.svg"));
    let (_, right) = axis_ends(&svg);
    let els = text_elements(&svg);
    let legend: Vec<&TextEl> = els.iter().filter(|e| e.x > right).collect();
    assert!(legend.len() >= 12, "{} legend texts", legend.len());
    for e in &legend {
        // 14 px legend type (an 11.3 px font): a line's centre at least 8 px inside,
        // and its width (at most 0.62 em a character) inside the right edge.
        let w = e.text.chars().count() as f64 * 0.62 * 11.3;
        assert!(
            e.y >= 8.0 && e.y <= HEIGHT as f64 - 8.0,
            "{:?} at y = {}",
            e.text,
            e.y
        );
        assert!(
            e.x + w <= WIDTH as f64,
            "{:?} from x = {} runs past the edge",
            e.text,
            e.x
        );
    }
    // Every queue and task is named.
    let t = texts(&svg);
    for n in ["NET_RX softirq", "frames queued", "CPU slices"] {
        assert!(t.iter().any(|x| x == n), "{n} in {t:?}");
    }
}

#[test]
fn compare_prints_the_points_side_by_side() {
    // The reference sweep beside itself with 1.5 x the loss: one row per load point,
    // each set's forwarded rate, loss and average latency as in its results.json.
    let c = shared();
    let a = read_json(&c.path("out/results.json"));
    let mut b = a.clone();
    b["scenario"] = json!("costlier");
    for p in b["points"].as_array_mut().unwrap() {
        let l = f(&p["total"]["loss_pct"]);
        p["total"]["loss_pct"] = json!((l * 1.5).min(100.0));
    }
    let d = c.path("costlier");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("results.json"), b.to_string()).unwrap();
    let o = c.run(&[
        "compare",
        "out/results.json",
        "costlier/results.json",
        "--out",
        "cmp-table",
    ]);
    ok(&o);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("series 1: dc21143-64b-1flow\n"), "{out}");
    assert!(out.contains("series 2: costlier\n"), "{out}");
    let header = out.lines().find(|l| l.contains("fwd pps")).expect("header");
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        [
            "load%", "offered", "|", "1", "fwd", "pps", "1", "loss%", "1", "avg", "us", "|", "2",
            "fwd", "pps", "2", "loss%", "2", "avg", "us"
        ]
    );
    let pts = a["points"].as_array().unwrap();
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip_while(|l| !l.contains("fwd pps"))
        .skip(1)
        .take_while(|l| l.contains('|'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), pts.len(), "{out}");
    for (row, (pa, pb)) in rows
        .iter()
        .zip(pts.iter().zip(b["points"].as_array().unwrap()))
    {
        let num = |k: usize| row[k].parse::<f64>().unwrap();
        assert!((num(0) - f(&pa["load_pct"])).abs() < 0.005, "{row:?}");
        assert!((num(1) - f(&pa["offered_pps"])).abs() <= 0.5, "{row:?}");
        for (k, p) in [(3, pa), (7, pb)] {
            let t = &p["total"];
            assert!((num(k) - f(&t["forwarded_pps"])).abs() <= 0.5, "{row:?}");
            assert!((num(k + 1) - f(&t["loss_pct"])).abs() <= 0.005, "{row:?}");
            assert!(
                (num(k + 2) - f(&t["latency_us"]["avg"])).abs() <= 0.05,
                "{row:?}"
            );
        }
    }
    // The 30 % point: 59.45 % lost, 89.18 % in the costlier set (the 1.5 x).
    let r30 = rows.iter().find(|r| r[0] == "30.00").expect("30 % row");
    assert!((r30[8].parse::<f64>().unwrap() / r30[4].parse::<f64>().unwrap() - 1.5).abs() < 1e-3);
}
