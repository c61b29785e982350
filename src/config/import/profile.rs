//! `--profile MODEL`: the costs of an imported host taken from a named model file.
//!
//! A profile is any model file irqsim loads (read with the input limit, checked like
//! every model: [`ModelConfig::validate`]). Taken from it, as written there (a cost in
//! cycles stays in cycles and is converted at the imported host's clock):
//!
//! - `kernel.netisr_per_packet`, `kernel.shared_section`, `kernel.napi.rps_per_packet`,
//!   `kernel.napi.busy_poll_loop` (each when the profile has it);
//! - per NIC, from the profile's NIC of the same name, else its first NIC: `driver`
//!   (every driver cost) and `tx_completion` (how the profile's costs were split between
//!   the forwarding path and the transmit completion's interrupt: taken with them).
//!
//! Each note says which profile and field, and quotes the profile's own note on it.

use crate::config::error::{FileProblem, InputError};
use crate::config::model::ModelConfig;
use crate::sim::problems::Problems;
use serde_json::Value;
use std::path::Path;

/// A loaded profile.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The path as given.
    pub path: String,
    /// The file as JSON (values are copied from it as written).
    pub json: Value,
    /// The file as a model (checked).
    pub config: ModelConfig,
}

impl Profile {
    /// Read and check the model file `path`.
    pub fn load(
        path: &Path,
        budget: &crate::config::read_limit::ReadBudget,
    ) -> Result<Profile, InputError> {
        let file = path.display().to_string();
        let text = budget
            .read_text(path, crate::config::read_limit::MAX_INPUT_BYTES)
            .map_err(|source| InputError::Read {
                file: file.clone(),
                source,
            })?;
        let config: ModelConfig = crate::config::scenario::parse_json_all(&file, &text)?;
        let mut p = Problems::new();
        config.validate(&mut p);
        if !p.list.is_empty() {
            return Err(InputError::Invalid(
                p.list
                    .into_iter()
                    .map(|problem| FileProblem {
                        file: file.clone(),
                        problem,
                    })
                    .collect(),
            ));
        }
        let json = serde_json::from_str(&text).map_err(|e| InputError::Syntax {
            file: file.clone(),
            msg: e.to_string(),
        })?;
        Ok(Profile {
            path: file,
            json,
            config,
        })
    }

    /// The value at `kernel.<segs...>`.
    pub fn get(&self, segs: &[&str]) -> Option<&Value> {
        segs.iter()
            .try_fold(&self.json["kernel"], |v, s| v.get(s))
            .filter(|v| !v.is_null())
    }

    /// The profile's NIC for the imported NIC `name`: (its name, its JSON).
    pub fn nic(&self, name: &str) -> (String, &Value) {
        let nics = self.json["nics"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let pick = nics
            .iter()
            .find(|n| n["name"] == name)
            .or_else(|| nics.first());
        match pick {
            Some(n) => (n["name"].as_str().unwrap_or("").to_string(), n),
            None => (String::new(), &Value::Null),
        }
    }

    /// The note of a value taken from field `field` of the profile: which profile, and
    /// the profile's own note on `note_key` (or on its nearest parent path).
    pub fn note_for(&self, field: &str, note_key: &str) -> String {
        let notes = &self.json["notes"];
        let mut key = note_key.to_string();
        let own = loop {
            if let Some(n) = notes.get(&key).and_then(Value::as_str) {
                break Some(format!(" The profile's note on {key}: {n}"));
            }
            match key.rsplit_once('.') {
                Some((parent, _)) => key = parent.to_string(),
                None => break None,
            }
        };
        format!(
            "from the profile {} ({field}), not measured on this host.{}",
            self.path,
            own.unwrap_or_default()
        )
    }
}
