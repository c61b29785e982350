//! A scenario loaded for an experiment: [`crate::config::scenario::load`], then the
//! checks that need each variant's host as assembled, which the configuration layer
//! cannot build (it comes before [`crate::host`]): a measured table's counters
//! (`counters.<name>_per_s` in `measured_rates`) against the counters a run of the
//! variant publishes. The names of per-NIC, per-queue, per-core and per-policy counters
//! depend on the model and the flows, so each variant's host is assembled (no event is
//! simulated) and asked ([`crate::host::counter_names`]); a name it does not have is
//! refused before any work, where it used to run and print "no such counter" after the
//! sweep.

use crate::config::error::InputError;
use crate::config::scenario::{self, Experiment, FileSource};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Load the scenario at `path`, refusing captures whose reading would not fit the
/// machine's memory before any is read ([`captures_fit`]), and check what needs its
/// hosts ([`check_counters`]).
pub fn load(path: &Path, files: &dyn FileSource) -> Result<Experiment, InputError> {
    let avail = crate::experiment::memory::available();
    let exp = scenario::load_checked(path, files, &mut |caps| captures_fit(caps, avail))?;
    check_counters(&exp)?;
    Ok(exp)
}

/// Refuse, before any capture is read, captures whose reading could take more than the
/// memory `avail` ([`crate::experiment::memory::available`]; no check without it): the
/// process and each capture's most ([`crate::config::capture::reading_bytes_at_most`],
/// from its size on disk), all of them together, as the loader holds each capture read
/// until the last. The capture that takes the sum past `avail` is named, with the
/// figures (a capture was read before the memory was checked).
pub fn captures_fit(
    caps: &[scenario::NamedCapture],
    avail: Option<(u64, &'static str)>,
) -> Result<(), InputError> {
    use crate::experiment::memory::{PROCESS_BYTES, bytes};
    let Some((avail, source)) = avail else {
        return Ok(());
    };
    let mut sum = PROCESS_BYTES;
    for c in caps {
        let most = crate::config::capture::reading_bytes_at_most(c.bytes);
        sum = sum.saturating_add(most);
        if sum > avail {
            return Err(InputError::Invalid(vec![
                crate::config::error::FileProblem {
                    file: c.file.clone(),
                    problem: crate::sim::problems::Problem {
                        path: c.field.clone(),
                        reason: format!(
                            "capture `{}` ({} on disk) may take up to {} while it is read \
                         (its bytes, and {} bytes held for each of up to {} records of \
                         {} bytes, the shortest), {} with the process and the captures \
                         before it: more than the {} of memory available ({source}); no \
                         capture was read, nothing simulated or written",
                            c.path.display(),
                            bytes(c.bytes),
                            bytes(most),
                            crate::config::capture::READ_RECORD_BYTES,
                            c.bytes / crate::config::capture::MIN_RECORD_BYTES,
                            crate::config::capture::MIN_RECORD_BYTES,
                            bytes(sum),
                            bytes(avail)
                        ),
                    },
                },
            ]));
        }
    }
    Ok(())
}

/// Refuse a measured-rates row whose counter no run of its variant publishes
/// ([`crate::config::measured_rates::check_counters`]); the hosts of the variants the
/// table names a counter of are assembled once each.
pub fn check_counters(exp: &Experiment) -> Result<(), InputError> {
    use crate::config::measured_rates::Figure;
    let Some((file, rows)) = &exp.measured_rates else {
        return Ok(());
    };
    let mut names: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for r in rows {
        if !matches!(Figure::parse(&r.figure), Ok(Figure::CounterPerS(_)))
            || names.contains_key(r.variant.as_str())
        {
            continue;
        }
        let v = exp
            .variants
            .iter()
            .position(|v| v.name == r.variant)
            .expect("the loader checked the table's variants");
        let spec = crate::experiment::runner::run_spec(exp, v, 0, 0);
        // (The loader validated the model and its flows: a host that cannot be
        // assembled is a problem of its own, reported as the run reports it.)
        let known = crate::host::counter_names(&exp.variants[v].model, &spec).map_err(|e| {
            InputError::Csv {
                file: file.clone(),
                line: r.line,
                msg: format!(
                    "column `figure`: the counters of variant `{}` cannot be listed: {e}",
                    r.variant
                ),
            }
        })?;
        names.insert(&r.variant, known);
    }
    let empty = BTreeSet::new();
    crate::config::measured_rates::check_counters(file, rows, |v| names.get(v).unwrap_or(&empty))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference scenario with a measured-rates table of `figure`.
    fn with_rates(figure: &str) -> Result<Experiment, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let mut sc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("scenarios/dc21143-64b-1flow.json")).unwrap(),
        )
        .unwrap();
        sc["model"] = root
            .join("models/p3-448-dc21143-freebsd4.json")
            .display()
            .to_string()
            .into();
        sc.as_object_mut().unwrap().remove("measured");
        sc["measured_rates"] = "rates.csv".into();
        sc["drain_s"] = 0.into();
        sc["load"] = serde_json::json!({"unit": "percent", "points": [10]});
        std::fs::write(dir.path().join("s.json"), sc.to_string()).unwrap();
        std::fs::write(
            dir.path().join("rates.csv"),
            format!("variant,figure,measured\ndefault,forwarded_pps,1\ndefault,{figure},5\n"),
        )
        .unwrap();
        load(&dir.path().join("s.json"), &scenario::DiskFiles::default()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_counter_of_the_model_is_accepted_and_a_typo_refused_with_the_nearest() {
        assert!(with_rates("counters.dc0.interrupts_per_s").is_ok());
        assert!(with_rates("counters.ipintrq.high_water_per_s").is_ok());
        let e = with_rates("counters.dc0.interupts_per_s").unwrap_err();
        assert!(e.contains("rates.csv: line 3: column `figure`"), "{e}");
        assert!(
            e.contains("no counter `dc0.interupts` in the model of variant `default`"),
            "{e}"
        );
        assert!(e.contains("the nearest: `dc0.interrupts`"), "{e}");
        let e = with_rates("counters.no_such_counter_per_s").unwrap_err();
        assert!(e.contains("no counter `no_such_counter`"), "{e}");
        // A name with a control character is printed escaped.
        let e = with_rates("counters.dc0.x\u{1b}[31m_per_s").unwrap_err();
        assert!(
            e.contains("dc0.x\\u{1b}[31m") && !e.contains('\u{1b}'),
            "{e}"
        );
    }

    /// Every counter a run publishes is among the names listed before it, on hosts of
    /// one and several cores, NAPI with busy polling (whose busy-poll counters appear
    /// only once a busy loop has run), DIM, RPS and threaded NAPI.
    #[test]
    fn every_counter_a_run_publishes_is_a_listed_name() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut busy = 0;
        for sc in [
            "scenarios/dc21143-64b-1flow.json",
            "scenarios/modern-10g-busy-read.json",
            "scenarios/modern-10g-24flows.json",
        ] {
            let mut exp = scenario::load(&root.join(sc), &scenario::DiskFiles::default()).unwrap();
            exp.duration_s = 0.002;
            exp.drain_s = 0.0;
            for v in 0..exp.variants.len() {
                let spec = crate::experiment::runner::run_spec(&exp, v, exp.npoints() - 1, 0);
                let model = &exp.variants[v].model;
                let known = crate::host::counter_names(model, &spec).unwrap();
                let run = crate::host::simulate(model, &spec).unwrap();
                for k in run.counters.keys() {
                    assert!(known.contains(k), "{sc} variant {v}: `{k}` not listed");
                }
                busy += usize::from(run.counters.contains_key("napi.busy_polls"));
            }
        }
        // The busy-poll variants published their once-counted counters.
        assert_eq!(busy, 2);
    }
}
