//! The patch stage: a model with the scenario's, a variant's and a grid cell's
//! overrides (JSON merge patches, RFC 7386, with named array elements), read into a
//! [`ModelConfig`] with each problem located where its value was set.

use super::*;

/// RFC 7386 merge patch, plus patching arrays of named objects by name or index.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (Value::Array(items), Value::Object(p)) => {
            for (k, v) in p {
                for i in patched_elements(items, k) {
                    merge_patch(&mut items[i], v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// The elements of an array of named objects that the key `k` of a patch addresses:
/// the one named `k`, else the one numbered `k`, else, for `*` (when no element is
/// named `*`), every element.
pub(super) fn patched_elements(items: &[Value], k: &str) -> std::ops::Range<usize> {
    let named = items
        .iter()
        .position(|it| it.get("name").and_then(Value::as_str) == Some(k))
        .or_else(|| k.parse::<usize>().ok().filter(|i| *i < items.len()));
    match named {
        Some(i) => i..i + 1,
        None if k == ALL_ELEMENTS => 0..items.len(),
        None => 0..0,
    }
}

/// Names in an array-patch object that match no element (reported as errors).
pub(super) fn unmatched_patch_keys(
    target: &Value,
    patch: &Value,
    path: &str,
    out: &mut Vec<Problem>,
) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if let Some(tv) = t.get(k) {
                    unmatched_patch_keys(tv, v, &join(path, k), out);
                }
            }
        }
        (Value::Array(items), Value::Object(p)) => {
            for (k, v) in p {
                let hit = patched_elements(items, k);
                if hit.is_empty() && !(k == ALL_ELEMENTS && items.is_empty()) {
                    out.push(Problem {
                        path: join(path, k),
                        reason: format!("no element named or numbered `{k}` to override"),
                    });
                }
                for i in hit {
                    unmatched_patch_keys(&items[i], v, &join(path, k), out);
                }
            }
        }
        _ => {}
    }
}

pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// If the value at `path` (as `a.b[2].c`) was set by `overrides`, the path of that
/// value inside the patch, as the user wrote it (`nics.dc0.rx_ring_slots`).
pub(super) fn overridden(overrides: &Value, model: &Value, path: &str) -> Option<String> {
    let segs: Vec<String> = path
        .replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let (mut o, mut m) = (overrides, Some(model));
    let mut out = String::new();
    for seg in &segs {
        let next_m = match m {
            Some(Value::Array(a)) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            Some(Value::Object(map)) => map.get(seg),
            _ => None,
        };
        let Value::Object(map) = o else {
            // A leaf of the patch replaced this whole subtree.
            return Some(out);
        };
        // Arrays of named objects are patched by name (or by index as a string).
        let name = next_m.and_then(|v| v.get("name")).and_then(Value::as_str);
        let (key, next_o) = match map.get(seg) {
            Some(v) => (seg.as_str(), v),
            None => match name.and_then(|n| map.get(n).map(|v| (n, v))) {
                Some(hit) => hit,
                // (An element patched with every other by `*`.)
                None if matches!(m, Some(Value::Array(_))) => {
                    map.get(ALL_ELEMENTS).map(|v| (ALL_ELEMENTS, v))?
                }
                None => return None,
            },
        };
        out = join(&out, key);
        o = next_o;
        m = next_m;
    }
    Some(out)
}

/// Apply `patches` (each with the path prefix it is written under) to the model and
/// read it; problems are located in the file, and at the path, that set the value. A
/// grid's patch (prefix `grid.parameters[i].values[j]`) sets one value, so a problem
/// with it is located at that value itself. A value of the wrong type or an unknown
/// field is also given the line and column of its path in that file (`stext` for the
/// scenario, `mtext` for the model). The model is `None` when it could not be read;
/// every problem found is returned either way.
pub(super) fn build_model(
    (sfile, stext): (&str, &str),
    (mfile, mtext): (&str, &str),
    base: &Value,
    patches: &[(String, &Value)],
) -> (Option<ModelConfig>, Vec<FileProblem>) {
    let mut problems = Vec::new();
    let mut mval = base.clone();
    for (prefix, ov) in patches {
        if !ov.is_object() {
            problems.push(FileProblem {
                file: sfile.into(),
                problem: Problem {
                    path: prefix.clone(),
                    reason: "must be an object (a JSON merge patch of the model)".into(),
                },
            });
            continue;
        }
        let mut un = Vec::new();
        unmatched_patch_keys(&mval, ov, prefix, &mut un);
        problems.extend(un.into_iter().map(|problem| FileProblem {
            file: sfile.into(),
            problem,
        }));
        merge_patch(&mut mval, ov);
    }
    // A model error is reported against the scenario when an override put the value
    // there (the last patch that touched it).
    let locate = |p: Problem| -> FileProblem {
        match patch_site(patches, base, &p.path) {
            Some(path) => FileProblem {
                file: sfile.into(),
                problem: Problem {
                    path,
                    reason: p.reason,
                },
            },
            None => FileProblem {
                file: mfile.into(),
                problem: p,
            },
        }
    };
    let model: ModelConfig = match read_all(mval) {
        Ok(m) => m,
        Err(list) => {
            problems.extend(list.into_iter().map(|p| {
                let mut fp = locate(p);
                let text = if fp.file == sfile { stext } else { mtext };
                fp.problem = located(text, fp.problem);
                fp
            }));
            return (None, problems);
        }
    };
    let mut mp = Problems::new();
    model.validate(&mut mp);
    problems.extend(mp.list.into_iter().map(locate));
    (Some(model), problems)
}

/// A scenario that could not be read (`e`), with the problems of the model it names
/// (after its `overrides`) added, so that both files' problems are reported at once.
/// The scenario's other checks need the scenario read; they come with the next run.
pub(super) fn with_model_problems(
    e: InputError,
    (sfile, stext): (&str, &str),
    dir: &Path,
    files: &dyn FileSource,
) -> InputError {
    let mut problems = match e {
        InputError::Field { file, path, msg } => vec![FileProblem {
            file,
            problem: Problem { path, reason: msg },
        }],
        InputError::Invalid(list) => list,
        other => return other,
    };
    let Ok(sv) = serde_json::from_str::<Value>(stext) else {
        return InputError::Invalid(problems);
    };
    let Some(model) = sv.get("model").and_then(Value::as_str) else {
        return InputError::Invalid(problems);
    };
    let mpath = files.resolve(dir, model);
    let mfile = mpath.display().to_string();
    let Ok(mtext) = files.read(&mpath) else {
        problems.push(FileProblem {
            file: sfile.into(),
            problem: Problem {
                path: "model".into(),
                reason: format!("cannot read model `{mfile}`"),
            },
        });
        return InputError::Invalid(problems);
    };
    let mval = match parse_value(&mfile, &mtext) {
        Ok(v) => v,
        Err(InputError::Syntax { file, msg }) => {
            problems.push(FileProblem {
                file,
                problem: Problem {
                    path: ".".into(),
                    reason: format!("invalid JSON: {msg}"),
                },
            });
            return InputError::Invalid(problems);
        }
        Err(e) => return e,
    };
    let patches: Vec<(String, &Value)> = sv
        .get("overrides")
        .map(|ov| ("overrides".to_string(), ov))
        .into_iter()
        .collect();
    let (_, found) = build_model((sfile, stext), (&mfile, &mtext), &mval, &patches);
    for p in found {
        if !problems.contains(&p) {
            problems.push(p);
        }
    }
    InputError::Invalid(problems)
}
