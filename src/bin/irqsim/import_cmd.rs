//! `irqsim import-host`: the command around [`irqsim::config::import`]: options, the
//! model file written to `--out` or stdout, the report on stderr, exit codes.

use irqsim::config::import::{self, ImportError};
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
    let imported = match import::import(&args.dir, args.profile.as_deref()) {
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
        if path.is_dir() {
            eprintln!(
                "error: --out {}: a directory; import-host writes one model file",
                path.display()
            );
            return ExitCode::from(2);
        }
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

fn show(p: Option<&Path>) -> String {
    p.map_or_else(String::new, |p| p.display().to_string())
}
