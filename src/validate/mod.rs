//! Validation as one command: every measured table the project ships, run and judged.
//!
//! Each table is a shipped scenario and the published measurements it reproduces (a
//! SmartBits CSV, a paper's rates, a seed's figures). [`simulate`] runs the scenario as
//! shipped; [`judge`] compares it with the measurements row by row and gives each row a
//! verdict ([`scoreboard`]): `pass` within the tolerance the project holds the row to,
//! `known miss` outside it when the miss and its mechanism are declared
//! ([`misses::KNOWN_MISSES`], the one place they are), `FAIL` otherwise. [`run`] does
//! every table (or one) and returns the [`Scoreboard`]; `irqsim validate` prints it and
//! writes `scoreboard.json` and `scoreboard.md`, and the book's page "Validation
//! scoreboard" is that `scoreboard.md`.
//!
//! The tables, a file per family: [`reference_router`] (the reference report's 64-byte
//! SmartBits sweep), [`xdp_paper`] (the XDP paper's forwarding and drop rates on 1-6
//! cores), [`seeds`] (the mailing-list reports: em(4)'s TCP_RR, the ttcp sender, xl(4)'s
//! spikes),
//! [`modern`] (preferred busy polling, IRQ suspension). The measured values come from
//! the files the scenarios name or from the constants in these files, the one copy the
//! integration tests also use; nothing here is fitted.
//!
//! Parameters: the tables to run (`only`, a [`Table::name`]) and the worker threads
//! of each table's sweep (`threads`, 0: one per core). The rows do not depend on the
//! thread count: each table's sweep is the runner's, whose results do not
//! ([`crate::experiment::runner`]), and the tables are judged in the order of
//! [`TABLES`]. Scenario files are found under the source tree this library was built
//! from ([`root`]).

pub mod files;
pub mod misses;
pub mod modern;
pub mod reference_router;
pub mod scoreboard;
pub mod seeds;
pub mod xdp_paper;

pub use scoreboard::{Check, Row, Scoreboard, Tolerance, Verdict};

use crate::config::error::InputError;
use crate::config::scenario::{self, DiskFiles, Experiment};
use crate::experiment::runner::{self, RunError};
use crate::results::Results;
use std::path::{Path, PathBuf};

/// One measured table: the shipped scenario that reproduces it and how its rows are
/// compared.
pub struct Table {
    /// Its name (`irqsim validate --only NAME`, the `table` column).
    pub name: &'static str,
    /// What it is, in a line.
    pub title: &'static str,
    /// The scenario, relative to the source tree's root.
    pub scenario: &'static str,
    /// Where the measured values come from.
    pub source: &'static str,
    /// The rows to judge, from the loaded scenario and its sweep.
    pub checks: fn(&Table, &Experiment, &Results) -> Vec<Check>,
}

/// Every table, in the scoreboard's order.
pub const TABLES: &[Table] = &[
    reference_router::TABLE_64B,
    xdp_paper::SINGLE_ROUTE,
    xdp_paper::FULL_TABLE,
    xdp_paper::XDP_FULL_TABLE,
    xdp_paper::RAW_DROP,
    xdp_paper::XDP_DROP,
    xdp_paper::XDP_TX,
    xdp_paper::DPDK,
    seeds::EM_RR,
    seeds::TX_SENDER,
    seeds::XL_SPIKES,
    modern::PREFER_BUSY_POLL,
    modern::PREFER_BUSY_POLL_AF_XDP,
    modern::IRQ_SUSPEND,
];

/// Why the scoreboard could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// `--only` named no table: bad input, exit 2.
    #[error("--only: no table `{name}`; the tables are: {known}")]
    UnknownTable {
        /// The name given.
        name: String,
        /// The names there are, comma-separated.
        known: String,
    },
    /// A shipped scenario did not load (a broken source tree): exit 1.
    #[error("table {table}: {source}")]
    Load {
        /// The table.
        table: &'static str,
        /// The loader's error (naming file, field and reason).
        source: InputError,
    },
    /// A sweep gave no results: exit 1.
    #[error("table {table}: {source}")]
    Run {
        /// The table.
        table: &'static str,
        /// The runner's error.
        source: RunError,
    },
}

impl ValidateError {
    /// The exit code: 2 for a bad argument, 1 for the rest.
    pub fn exit_code(&self) -> u8 {
        match self {
            ValidateError::UnknownTable { .. } => 2,
            _ => 1,
        }
    }
}

/// A table's scenario as loaded and its sweep.
pub struct TableRun {
    /// The loaded scenario (its measured tables with it).
    pub experiment: Experiment,
    /// Its sweep.
    pub results: Results,
}

/// The source tree the tables' scenarios are read from: the one this library was built
/// from.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The table named `name`.
pub fn table(name: &str) -> Result<&'static Table, ValidateError> {
    TABLES
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| ValidateError::UnknownTable {
            name: name.to_string(),
            known: TABLES.iter().map(|t| t.name).collect::<Vec<_>>().join(", "),
        })
}

/// The tables `only` selects: every table, or the one it names.
pub fn selected(only: Option<&str>) -> Result<Vec<&'static Table>, ValidateError> {
    match only {
        None => Ok(TABLES.iter().collect()),
        Some(name) => Ok(vec![table(name)?]),
    }
}

/// The path of `t`'s scenario.
pub fn scenario_path(t: &Table) -> PathBuf {
    root().join(t.scenario)
}

/// Load `t`'s scenario as shipped.
pub fn load(t: &Table) -> Result<Experiment, ValidateError> {
    scenario::load(&scenario_path(t), &DiskFiles::default()).map_err(|source| ValidateError::Load {
        table: t.name,
        source,
    })
}

/// Run `t`'s scenario as shipped on `threads` worker threads (0: one per core).
pub fn simulate(t: &Table, threads: usize) -> Result<TableRun, ValidateError> {
    let experiment = load(t)?;
    let results =
        runner::run(&experiment, threads, &|| {}).map_err(|source| ValidateError::Run {
            table: t.name,
            source,
        })?;
    Ok(TableRun {
        experiment,
        results,
    })
}

/// The judged rows of `t` from its sweep.
pub fn judge(t: &Table, run: &TableRun) -> Vec<Row> {
    (t.checks)(t, &run.experiment, &run.results)
        .into_iter()
        .map(|c| {
            let miss = misses::mechanism(t.name, &c.case, &c.quantity);
            Row::judge(t.name, c, miss)
        })
        .collect()
}

/// The scoreboard of the tables `only` selects, each simulated on `threads` worker
/// threads, `progress` called with each table's name before it runs.
pub fn run(
    only: Option<&str>,
    threads: usize,
    progress: &dyn Fn(&Table),
) -> Result<Scoreboard, ValidateError> {
    let mut rows = Vec::new();
    for t in selected(only)? {
        progress(t);
        let r = simulate(t, threads)?;
        rows.extend(judge(t, &r));
    }
    Ok(Scoreboard::new(rows))
}
