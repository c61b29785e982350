//! `irqsim validate`: every measured table the project ships, run as shipped and judged
//! row by row ([`irqsim::validate`]); prints the scoreboard and writes
//! DIR/scoreboard.json and DIR/scoreboard.md.

use crate::shown;
use irqsim::validate::{self, files};
use std::path::PathBuf;
use std::process::ExitCode;

/// Run every measured table the project ships (or one, --only) and print the
/// scoreboard: per row the measured value, the simulated one, the error, the tolerance
/// and the verdict (`pass`, `known miss` with its mechanism, `FAIL`).
///
/// Writes DIR/scoreboard.json and DIR/scoreboard.md [default DIR: irqsim-out/validate]
/// (the book's page "Validation scoreboard" is that scoreboard.md), never over files
/// irqsim did not write. The tables' scenarios are read from the source tree irqsim was
/// built from; the rows do not depend on --threads. Exit codes: 0 no FAIL, 1 a FAIL (or
/// a machine fault), 2 bad arguments (nothing run, nothing written).
#[derive(clap::Args)]
pub struct ValidateArgs {
    /// Run only this table (`irqsim validate --only x` lists the names).
    #[arg(long, value_name = "TABLE")]
    only: Option<String>,
}

/// The default output directory.
const DEFAULT_OUT: &str = "irqsim-out/validate";

/// Run the tables, print and write the scoreboard. `as_shipped` is false when the
/// command line has an option that would change the tables' runs (--seed, --resume).
pub fn validate(
    args: &ValidateArgs,
    out: &Option<PathBuf>,
    threads: Option<usize>,
    quiet: bool,
    as_shipped: bool,
) -> ExitCode {
    if !as_shipped {
        eprintln!(
            "error: --seed and --resume do not apply to `irqsim validate`: every table runs \
             its scenario as shipped"
        );
        return ExitCode::from(2);
    }
    let tables = match validate::selected(args.only.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    let out = out.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_OUT));
    let _lock = match crate::lock_out(&out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(e) = files::check_own(&out) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let progress = |t: &validate::Table| {
        if !quiet {
            eprintln!("validate: {} ({})", t.name, t.scenario);
        }
    };
    let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
    let only = (names.len() == 1).then(|| names[0]);
    let board = match validate::run(only, threads.unwrap_or(0), &progress) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    if !quiet {
        print!("{}", board.text());
    }
    match files::write(&out, &board) {
        Ok(written) => {
            if !quiet {
                println!("wrote {} in {}", written.join(", "), shown(&out));
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(e.exit_code());
        }
    }
    if board.summary.fail > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
