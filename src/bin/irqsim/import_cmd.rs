//! `irqsim import-host`: the command around [`irqsim::config::import`]: options, the
//! model file written to `--out` or stdout, the report on stderr, exit codes.

use irqsim::config::import::{self, ImportError};
use irqsim::experiment::out_lock::{LockError, OutLock};
use irqsim::results::output::write_atomic;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `irqsim import-host`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// The directory of the host's dumps (`lscpu`, `sysctl-net.core`,
    /// `ethtool-{i,g,l,c}-<if>`, optionally `ethtool-<if>`, `proc-interrupts`,
    /// `irq-affinity`, `ip-link`, `uname-r`; the README's "Host from its own dumps").
    dir: PathBuf,
    /// A model file whose costs (kernel and driver) the imported host takes, each with
    /// a note naming it [default: none; costs are left to `irqsim fit`].
    #[arg(long, value_name = "MODEL")]
    profile: Option<PathBuf>,
}

/// Import the host and write its model: to `out` (a file, written atomically) or to
/// stdout. The report goes to stderr unless `quiet`. Bad input: exit 2, nothing written.
pub fn import_host(args: &ImportArgs, out: &Option<PathBuf>, quiet: bool) -> ExitCode {
    // --out is checked before the dumps are read, and locked as `run --out` is.
    let mut _lock = None;
    if let Some(path) = out {
        if let Err(e) = check_out(path, &args.dir) {
            eprintln!("error: --out {}: {e}", escape(&path.display().to_string()));
            return ExitCode::from(2);
        }
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        match OutLock::acquire(parent) {
            Ok(l) => _lock = Some(l),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(match e {
                    LockError::Held { .. } => 2,
                    LockError::Io { .. } => 1,
                });
            }
        }
        // Checked again under the lock: another command may have written there since.
        if let Err(e) = check_out(path, &args.dir) {
            eprintln!("error: --out {}: {e}", escape(&path.display().to_string()));
            return ExitCode::from(2);
        }
    }
    // The one budget of what this command reads: the dumps and the profile.
    let budget = irqsim::config::read_limit::ReadBudget::new(import::dump::MAX_DUMPS_TOTAL_BYTES);
    let imported = match import::import(&args.dir, args.profile.as_deref(), &budget) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            if let ImportError::Profile(_) = e {
                eprintln!("  (the profile {})", show(args.profile.as_deref()));
            }
            return ExitCode::from(2);
        }
    };
    if let Some(path) = out {
        if let Err(e) = write_atomic(path, imported.text.as_bytes()) {
            eprintln!("error: writing {}: {e}", path.display());
            return ExitCode::from(1);
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
            Some(p) => eprintln!("wrote {}", p.display()),
            None => eprintln!("wrote the model to stdout"),
        }
    }
    ExitCode::SUCCESS
}

/// Whether import-host may write its model at `path`: nothing there, or a model file an
/// earlier `import-host` wrote (a regular file, not a link, whose `description` starts
/// `Host imported from `); never a directory, a link, a device or a FIFO, a user's
/// other file, nor a path inside the dump directory `dir` (the dumps it reads).
fn check_out(path: &Path, dir: &Path) -> Result<(), String> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if let (Ok(p), Ok(d)) = (parent.canonicalize(), dir.canonicalize())
        && p.starts_with(&d)
    {
        return Err(format!(
            "inside the dump directory {}: the model is never written among the dumps it is \
             read from",
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
        return Err("a directory; import-host writes one model file".into());
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
    let ours =
        irqsim::config::read_limit::read_text(path, irqsim::config::read_limit::MAX_INPUT_BYTES)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| {
                v.get("description")
                    .and_then(|d| d.as_str())
                    .is_some_and(|d| d.starts_with("Host imported from "))
                    && v.get("notes").is_some_and(|n| n.is_object())
            });
    if !ours {
        return Err(
            "a file import-host did not write (not a model whose description starts `Host \
             imported from`): irqsim never writes over a file it did not write; remove it or \
             give another --out"
                .into(),
        );
    }
    Ok(())
}

fn escape(s: &str) -> String {
    irqsim::config::import::dump::escape(s)
}

fn show(p: Option<&Path>) -> String {
    p.map_or_else(String::new, |p| p.display().to_string())
}
