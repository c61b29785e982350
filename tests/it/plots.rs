//! Plots written by the real binary: every figure after `irqsim run`, each PNG decodes at
//! the documented size and is not blank, each SVG holds its axis labels and legend
//! entries as text, `irqsim plot` reproduces the files, `--no-plots` writes none, the
//! timeline is drawn when `timeline.csv` is present, and `irqsim compare` overlays sets.
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
            "offered rate (frames/s)",
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
        "cpu" => vec![
            X_LOAD,
            "CPU time (% of sending time)",
            "interrupt",
            "softirq (netisr)",
            "kernel thread",
            "user",
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

#[test]
fn timeline_is_drawn_when_present_and_removed_when_gone() {
    let c = shared();
    let d = c.path("tl");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(c.path("out/results.json"), d.join("results.json")).unwrap();
    std::fs::write(d.join("timeline.csv"), TIMELINE).unwrap();
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
    std::fs::write(
        c.path("o/timeline.csv"),
        "variant,load_pct,t_ms,packets,avg_latency_us,max_latency_us\ndefault,10,zero,1,2,3\n",
    )
    .unwrap();
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
