//! `irqsim import-host`: the command around [`irqsim::config::import`]: options, the
//! model file written to `--out` or stdout, the report on stderr, exit codes.

use crate::shown;
use irqsim::config::import::{self, ImportError};
use irqsim::results::output::write_atomic;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `irqsim import-host`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// The directory of the host's dumps (`lscpu`, `sysctl-net.core`,
    /// `ethtool-{i,g,l,c}-<if>`, `ethtool-<if>`, optionally `proc-cpuinfo`,
    /// `proc-interrupts`, `irq-affinity`, `ip-link`, `uname-r`): `OUT/host` of
    /// `examples/gather-host.sh OUT`; the book's chapter "Host from its own dumps".
    dir: PathBuf,
    /// A model file whose costs (kernel and driver) the imported host takes, each with
    /// a note naming it [default: none; costs are left to `irqsim fit`].
    #[arg(long, value_name = "MODEL")]
    profile: Option<PathBuf>,
    /// The CPU clock [MHz], taken before the dumps' (lscpu's brand string, `CPU max
    /// MHz`, `CPU MHz`, then /proc/cpuinfo's `cpu MHz`): for a host whose dumps give none
    /// (arm64) or give the wrong one [default: from the dumps; none there is refused].
    #[arg(long, value_name = "MHZ", value_parser = import::parse_clock_mhz)]
    clock_mhz: Option<f64>,
    /// The line rate of interface IF (or of every interface, without `IF=`), in bit/s
    /// with an SI prefix (`10G`, `eth0=25G`), taken before ethtool's `Speed:`; needed
    /// where ethtool says `Speed: Unknown!` (virtio_net and other virtual NICs) or the
    /// `ethtool-<if>` file is missing. Repeat it for several interfaces [default: from
    /// the dumps; none there is refused].
    #[arg(long, value_name = "[IF=]RATE")]
    line_rate: Vec<import::LineRate>,
    /// Also write a starting scenario for the imported host to FILE: its ports, a flow
    /// of 64-byte frames per receive queue (RSS sends flow k to queue k), a load sweep
    /// to the line rate, and starting costs when the model has none (the book's chapter
    /// "Host from its own dumps"). Needs --out (the scenario names the model file); the
    /// scenario is loaded once written, so it runs as written.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// The model file to write [default: stdout]; only a file an earlier import-host
    /// wrote is written over.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    // The global options that do nothing for import-host, hidden from its help
    // (accepted, as before, and ignored): an argument of the same id shadows the
    // global one (clap's `_propagate_global_args` skips an id the subcommand has).
    #[arg(long = "seed", id = "seed", hide = true)]
    _seed: Option<u64>,
    #[arg(long = "threads", id = "threads", hide = true)]
    _threads: Option<usize>,
    #[arg(long = "resume", id = "resume", hide = true)]
    _resume: bool,
    #[arg(long = "no-plots", id = "no_plots", hide = true)]
    _no_plots: bool,
}

/// Import the host and write its model: to `out` (a file, written atomically) or to
/// stdout. The report goes to stderr unless `quiet`. Bad input: exit 2, nothing written.
pub fn import_host(args: &ImportArgs, out: &Option<PathBuf>, quiet: bool) -> ExitCode {
    let out = if args.out.is_some() { &args.out } else { out };
    // --out and --scenario are checked before the dumps are read, and locked as `run
    // --out` is.
    if let (Some(sc), None) = (&args.scenario, out) {
        eprintln!(
            "error: --scenario {}: needs --out MODEL: the scenario names the model file, so \
             the model is written to a file, not to stdout",
            escape(&sc.display().to_string())
        );
        return ExitCode::from(2);
    }
    if let (Some(sc), Some(model)) = (&args.scenario, out) {
        if same_file(sc, model) {
            eprintln!(
                "error: --scenario {}: the same file as --out: give the scenario and the model \
                 files different names",
                escape(&sc.display().to_string())
            );
            return ExitCode::from(2);
        }
        if let Err(e) = check_file(sc, &args.dir, Kind::Scenario) {
            eprintln!(
                "error: --scenario {}: {e}",
                escape(&sc.display().to_string())
            );
            return ExitCode::from(2);
        }
    }
    if let Some(profile) = &args.profile {
        for (flag, target) in [
            ("--out", out.as_ref()),
            ("--scenario", args.scenario.as_ref()),
        ] {
            if let Some(t) = target
                && same_file(profile, t)
            {
                eprintln!(
                    "error: --profile {}: the same file as {flag}: import-host never writes \
                     over its own input; give {flag} another name",
                    shown(profile)
                );
                return ExitCode::from(2);
            }
        }
    }
    let mut _lock = None;
    let mut _scenario_lock = None;
    if let Some(path) = out {
        if let Err(e) = check_out(path, &args.dir) {
            eprintln!("error: --out {}: {e}", escape(&path.display().to_string()));
            return ExitCode::from(2);
        }
        match crate::lock_dir(parent_of(path)) {
            Ok(l) => _lock = Some(l),
            Err(code) => return code,
        }
        // The scenario's directory is locked too when it is another.
        if let Some(sc) = &args.scenario {
            let dir_of = |p: &Path| parent_of(p).canonicalize().ok();
            if dir_of(sc) != dir_of(path) {
                match crate::lock_dir(parent_of(sc)) {
                    Ok(l) => _scenario_lock = Some(l),
                    Err(code) => return code,
                }
            }
        }
        // Checked again under the locks: another command may have written there since.
        if let Err(e) = check_out(path, &args.dir) {
            eprintln!("error: --out {}: {e}", escape(&path.display().to_string()));
            return ExitCode::from(2);
        }
        if let Some(sc) = &args.scenario
            && let Err(e) = check_file(sc, &args.dir, Kind::Scenario)
        {
            eprintln!("error: --scenario {}: {e}", shown(sc));
            return ExitCode::from(2);
        }
    }
    let opts = import::Options {
        profile: args.profile.clone(),
        clock_mhz: args.clock_mhz,
        line_rates: args.line_rate.clone(),
    };
    // The one budget of what this command reads: the dumps and the profile.
    let budget = irqsim::config::read_limit::ReadBudget::new(import::dump::MAX_DUMPS_TOTAL_BYTES);
    let imported = match import::import(&args.dir, &opts, &budget) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {}", escape_lines(&e.to_string()));
            if let ImportError::Profile(_) = e {
                eprintln!("  (the profile {})", show(args.profile.as_deref()));
            }
            return ExitCode::from(2);
        }
    };
    if let Some(path) = out {
        if let Err(e) = write_atomic(path, imported.text.as_bytes()) {
            eprintln!("error: writing {}: {e}", shown(path));
            return ExitCode::from(1);
        }
        if let Some(sc) = &args.scenario
            && let Err(code) = write_scenario(sc, path, &imported, &args.dir, quiet)
        {
            return code;
        }
    } else {
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout
            .write_all(imported.text.as_bytes())
            .and_then(|_| stdout.flush())
        {
            eprintln!("error: writing the model to stdout: {e}");
            return ExitCode::from(1);
        }
    }
    if !quiet {
        eprint!("{}", imported.report.text(&imported.model));
        match out {
            Some(p) => eprintln!("wrote {}", shown(p)),
            None => eprintln!("wrote the model to stdout"),
        }
        if let Some(sc) = &args.scenario {
            eprintln!("wrote {} (run it: irqsim run {})", shown(sc), shown(sc));
        }
    }
    ExitCode::SUCCESS
}

/// Write the starting scenario of `imported` (whose model was written at `model`) to
/// `path`, and load it back: a scenario that does not load is irqsim's fault (exit 1).
fn write_scenario(
    path: &Path,
    model: &Path,
    imported: &import::Imported,
    dir: &Path,
    quiet: bool,
) -> Result<(), ExitCode> {
    let model_ref = model_ref(path, model);
    let sc = import::scenario::starting_scenario(
        &imported.model,
        &model_ref,
        &dir.display().to_string(),
    );
    let text = serde_json::to_string_pretty(&sc).expect("a JSON value serialises") + "\n";
    if let Err(e) = write_atomic(path, text.as_bytes()) {
        eprintln!("error: writing {}: {e}", shown(path));
        return Err(ExitCode::from(1));
    }
    match irqsim::experiment::load::load(path, &irqsim::config::scenario::DiskFiles::default()) {
        Ok(exp) => {
            if !quiet {
                for w in irqsim::config::hairpin::warnings(&exp) {
                    eprintln!("warning: {}", escape_lines(&w.to_string()));
                }
            }
            Ok(())
        }
        Err(e) => {
            eprintln!(
                "error: the scenario written to {} does not load (irqsim's fault; please \
                 report it): {}",
                shown(path),
                escape_lines(&e.to_string())
            );
            Err(ExitCode::from(1))
        }
    }
}

/// How the scenario at `scenario` names the model at `model`: its file name when both
/// are in one directory, else the model's absolute path.
fn model_ref(scenario: &Path, model: &Path) -> String {
    let dir_of = |p: &Path| {
        let d = parent_of(p);
        d.canonicalize().unwrap_or_else(|_| d.to_path_buf())
    };
    let name = model
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if dir_of(scenario) == dir_of(model) {
        name
    } else {
        dir_of(model).join(name).display().to_string()
    }
}

/// Which file import-host writes.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Model,
    Scenario,
}

/// Whether import-host may write its model at `path` ([`check_file`]).
fn check_out(path: &Path, dir: &Path) -> Result<(), String> {
    check_file(path, dir, Kind::Model)
}

/// Whether import-host may write its model or scenario at `path`: nothing there, or a
/// file of that kind an earlier `import-host` wrote (a regular file, not a link, whose
/// `description` starts `Host imported from ` with `notes` and an intact
/// [`import::seal`], or the scenario's
/// [`import::scenario::DESCRIPTION_PREFIX`]); never a directory, a link, a device or a
/// FIFO, a user's other file, nor a path inside the dump directory `dir` (the dumps it
/// reads).
fn check_file(path: &Path, dir: &Path, kind: Kind) -> Result<(), String> {
    let parent = parent_of(path);
    if let (Ok(p), Ok(d)) = (parent.canonicalize(), dir.canonicalize())
        && p.starts_with(&d)
    {
        return Err(format!(
            "inside the dump directory {}: import-host never writes among the dumps it \
             reads",
            escape(&dir.display().to_string())
        ));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.to_string()),
        Ok(m) => m,
    };
    let t = meta.file_type();
    if t.is_dir() {
        return Err("a directory; import-host writes a file here".into());
    }
    if t.is_symlink() {
        return Err(
            "a symbolic link: import-host writes its model file itself, never through a link \
             (remove the link or give another --out)"
                .into(),
        );
    }
    if !t.is_file() {
        return Err("not a regular file (a device, a FIFO or a socket): refused".into());
    }
    // Streamed: only the description and the notes' keys are kept, whatever the file.
    #[derive(serde::Deserialize)]
    struct Written {
        description: Option<String>,
        notes: Option<std::collections::BTreeMap<String, serde::de::IgnoredAny>>,
    }
    let ours =
        irqsim::config::read_limit::open_stream(path, irqsim::config::read_limit::MAX_INPUT_BYTES)
            .ok()
            .and_then(|r| serde_json::from_reader::<_, Written>(r).ok())
            .is_some_and(|v| {
                let desc = v.description.as_deref();
                match kind {
                    Kind::Model => {
                        desc.is_some_and(|d| d.starts_with("Host imported from "))
                            && v.notes.is_some()
                    }
                    Kind::Scenario => {
                        desc.is_some_and(|d| d.starts_with(import::scenario::DESCRIPTION_PREFIX))
                    }
                }
            });
    // A model it wrote and someone edited since is theirs now (its seal no longer holds).
    if ours
        && kind == Kind::Model
        && !irqsim::config::read_limit::read_text(path, irqsim::config::read_limit::MAX_INPUT_BYTES)
            .is_ok_and(|t| import::seal::unedited(&t))
    {
        return Err(format!(
            "a model import-host wrote that has been edited since (or an older irqsim's \
             import): its notes.{} does not match its text, so it is someone's work now and \
             irqsim never writes over it; remove it or give another --out",
            import::seal::NOTE
        ));
    }
    if !ours {
        return Err(match kind {
            Kind::Model => "a file import-host did not write (not a model whose description \
                            starts `Host imported from`): irqsim never writes over a file it \
                            did not write; remove it or give another --out"
                .into(),
            Kind::Scenario => format!(
                "a file import-host did not write (not a scenario whose description starts \
                 `{}`): irqsim never writes over a file it did not write; remove it or give \
                 another --scenario",
                import::scenario::DESCRIPTION_PREFIX.trim_end()
            ),
        });
    }
    Ok(())
}

/// The directory a file is written in: its parent, or `.` for a bare name.
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn escape(s: &str) -> String {
    irqsim::config::import::dump::escape(s)
}

/// A message of several lines as printed: each line's control characters escaped.
fn escape_lines(s: &str) -> String {
    s.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

fn show(p: Option<&Path>) -> String {
    p.map_or_else(String::new, shown)
}

/// Whether `a` and `b` name one file: the same directory (links resolved) and name, or,
/// when both exist, the same device and inode (a hard link, `./x` and `x`).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let place = |p: &Path| -> Option<PathBuf> {
        Some(parent_of(p).canonicalize().ok()?.join(p.file_name()?))
    };
    if let (Some(x), Some(y)) = (place(a), place(b))
        && x == y
    {
        return true;
    }
    matches!(
        (std::fs::metadata(a), std::fs::metadata(b)),
        (Ok(x), Ok(y)) if x.dev() == y.dev() && x.ino() == y.ino()
    )
}
