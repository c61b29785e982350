//! Errors in input files, each naming the file, the JSON path (or CSV line) and why.
//!
//! The core reports typed problems ([`crate::sim::problems::Problem`]); this is the edge type
//! the scenario loader returns and the CLI prints (exit code 2).

use crate::config::import::dump::escape;
use crate::sim::problems::Problem;
use std::fmt;

/// Something wrong with a scenario, a model or a measured table.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be read.
    #[error("{file}: cannot read file: {source}")]
    Read {
        /// The file.
        file: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not valid JSON at all.
    #[error("{file}: invalid JSON: {msg}")]
    Syntax {
        /// The file.
        file: String,
        /// serde_json's message with line and column.
        msg: String,
    },
    /// Valid JSON, wrong shape: unknown field, wrong type, missing field.
    #[error("{file}: at `{}`: {}", escape(.path), escape(.msg))]
    Field {
        /// The file.
        file: String,
        /// JSON path of the offending value (`.` for the document root).
        path: String,
        /// What is wrong.
        msg: String,
    },
    /// Well-formed but physically or logically invalid values, all of them.
    #[error("{}", ProblemList(.0))]
    Invalid(Vec<FileProblem>),
    /// A measured SmartBits table that cannot be read.
    #[error("{file}: line {line}: {}", escape(.msg))]
    Csv {
        /// The file.
        file: String,
        /// 1-based line number (0 when unknown).
        line: u64,
        /// What is wrong.
        msg: String,
    },
}

/// A validation problem located in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    /// The file.
    pub file: String,
    /// Path and reason.
    pub problem: Problem,
}

struct ProblemList<'a>(&'a [FileProblem]);

impl fmt::Display for ProblemList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            // What a user wrote (a patch's key, a name) is in paths and reasons: shown
            // with its control characters escaped, never raw on the terminal.
            let (path, reason) = (escape(&p.problem.path), escape(&p.problem.reason));
            // Problems in CSV tables are located by line, not by JSON path.
            if p.problem.path.starts_with("line ") {
                write!(f, "{}: {path}: {reason}", p.file)?;
            } else {
                write!(f, "{}: at `{path}`: {reason}", p.file)?;
            }
        }
        Ok(())
    }
}
