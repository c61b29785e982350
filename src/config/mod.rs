//! Files in: scenario and model files, grids and measured tables turned into an
//! [`scenario::Experiment`], with errors that name file, JSON path and reason (exit 2)
//! before any work.
//!
//! Uses [`crate::sim`] and [`crate::model`] (whose configuration types it reads).
//!
//! - [`read_limit`]: every file read from outside, a regular file of bounded size;
//! - [`error`]: the loader's error type (`InputError`, exit code 2);
//! - [`json_pos`]: a problem's line and column in the file the user wrote, found from its
//!   JSON path;
//! - [`model`]: a hardware/OS profile ([`model::ModelConfig`]) and its validation;
//! - [`names`]: the names of variants and flows, which become file names;
//! - [`smartbits`]: SmartBits CSV tables, measured ones read, simulated ones written;
//! - [`grid`]: a scenario's grid of parameter values expanded into variants;
//! - [`import`]: a model skeleton from a directory of a host's dumps (`irqsim import-host`);
//! - [`scenario`]: scenario and model files turned into an `Experiment`;
//! - [`field_reference`]: the field reference of scenario and model files, generated from
//!   their JSON Schemas.

pub mod capture;
pub mod error;
pub mod field_reference;
pub mod grid;
pub mod hairpin;
pub mod import;
pub mod json_pos;
pub mod measured_rates;
pub mod model;
pub mod names;
pub mod read_limit;
pub mod scenario;
pub mod smartbits;
