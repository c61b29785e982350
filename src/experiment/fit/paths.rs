//! Model fields addressed by path: looking them up in the model, patching candidate values into the scenario's overrides, and the file overlay that serves the patched model.

use super::*;

/// A parameter resolved against the model.
#[derive(Clone, Debug)]
pub(super) struct Param {
    pub(super) spec: ParamSpec,
    /// Path segments.
    pub(super) segs: Vec<String>,
    pub(super) integer: bool,
    pub(super) start: f64,
    /// The model's own value (after the scenario's overrides).
    pub(super) model: f64,
}

/// A file source that serves one file's text from memory and the rest from `base`.
pub(super) struct Overlay<'a> {
    pub(super) base: &'a dyn FileSource,
    pub(super) path: PathBuf,
    pub(super) text: String,
}

impl FileSource for Overlay<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        if path == self.path {
            Ok(self.text.clone())
        } else {
            self.base.read(path)
        }
    }

    fn read_bytes(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.base.read_bytes(path)
    }

    fn identity(&self, path: &Path) -> Option<(u64, u64)> {
        self.base.identity(path)
    }

    fn reserve_capture(&self, path: &Path) -> std::io::Result<Option<u64>> {
        self.base.reserve_capture(path)
    }
}

/// The value at `segs` in a model: object keys, and elements of arrays by `name` or by
/// index.
pub(super) fn lookup<'v>(v: &'v Value, segs: &[String]) -> Option<&'v Value> {
    let mut cur = v;
    for s in segs {
        cur = match cur {
            Value::Object(m) => m.get(s)?,
            Value::Array(a) => a
                .iter()
                .find(|it| it.get("name").and_then(Value::as_str) == Some(s.as_str()))
                .or_else(|| s.parse::<usize>().ok().and_then(|i| a.get(i)))?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Where the last segment of `segs` is missing but its parent is an object (a cost
/// written in `cycles` fitted through `ns`, or the reverse): the numeric fields the
/// parent has, as a hint; empty otherwise.
pub(super) fn sibling_hint(model: &Value, segs: &[String]) -> String {
    let Some((_, parent)) = segs.split_last() else {
        return String::new();
    };
    let m = match lookup(model, parent) {
        Some(Value::Object(m)) => m,
        Some(v) if v.is_number() && !parent.is_empty() => {
            return format!(
                "; `{}` is a plain number: fit `{}` itself",
                parent.join("."),
                parent.join(".")
            );
        }
        _ => return String::new(),
    };
    let numeric: Vec<String> = m
        .iter()
        .filter(|(_, v)| v.is_number())
        .map(|(k, _)| format!("`{}.{k}`", parent.join(".")))
        .collect();
    if numeric.is_empty() {
        return String::new();
    }
    format!(
        "; `{}` is written with {}: fit {}",
        parent.join("."),
        m.keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", "),
        numeric.join(" or ")
    )
}

/// [`lookup`], mutably.
pub(super) fn lookup_mut<'v>(v: &'v mut Value, segs: &[String]) -> Option<&'v mut Value> {
    let mut cur = v;
    for s in segs {
        cur = match cur {
            Value::Object(m) => m.get_mut(s)?,
            Value::Array(a) => {
                let i = a
                    .iter()
                    .position(|it| it.get("name").and_then(Value::as_str) == Some(s.as_str()))
                    .or_else(|| s.parse::<usize>().ok().filter(|i| *i < a.len()))?;
                &mut a[i]
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// A merge patch setting `segs` to `v`.
pub(super) fn patch_for(segs: &[String], v: Value) -> Value {
    segs.iter().rev().fold(v, |acc, s| {
        let mut m = serde_json::Map::new();
        m.insert(s.clone(), acc);
        Value::Object(m)
    })
}

pub(super) fn number(v: f64, integer: bool) -> Value {
    if integer {
        Value::from(v.round() as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}
