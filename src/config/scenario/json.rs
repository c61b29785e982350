//! Parsing: JSON text into the config types, with every problem located (file, JSON
//! path, line and column), duplicate keys refused, and all problems of a file found at
//! once; and the JSON Schemas of the scenario and model files.

use super::*;

/// The JSON Schema of scenario files, generated from the Rust types (schemars).
pub fn scenario_schema() -> String {
    schema_text(schemars::schema_for!(ScenarioFile))
}

/// The JSON Schema of model files, generated from the Rust types (schemars).
pub fn model_schema() -> String {
    schema_text(schemars::schema_for!(ModelConfig))
}

/// A generated schema as shipped: its descriptions in the file's words, without the
/// rustdoc links of the fields' doc comments (a link such as ``[`crate::model::nic::xps`]``
/// becomes `` `xps` ``: the name of the mechanism, not a path into the source, which a
/// reader of a model file cannot follow and a move of the code would change).
pub(super) fn schema_text(schema: schemars::Schema) -> String {
    fn unlink(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match x {
                        Value::String(s) if k == "description" => *s = unlink_text(s),
                        _ => unlink(x),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(unlink),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(&schema).expect("schema");
    unlink(&mut v);
    serde_json::to_string_pretty(&v).expect("schema") + "\n"
}

/// `text` with every ``[`crate::a::b`]`` written `` `b` ``, and a unit escaped for
/// rustdoc (`\[ns\]`) written as a user reads it (`[ns]`).
pub(super) fn unlink_text(text: &str) -> String {
    let plain = text.replace("\\[", "[").replace("\\]", "]");
    let text = plain.as_str();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("[`crate::") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 9..];
        match after.find("`]") {
            Some(j) => {
                let path = &after[..j];
                out.push('`');
                out.push_str(path.rsplit("::").next().unwrap_or(path));
                out.push('`');
                rest = &after[j + 2..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Parse JSON text into `T`, reporting syntax errors (with serde_json's line and
/// column) and the first wrong-type or unknown-field problem, with its path and its
/// position in `text`.
pub fn parse_json<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, InputError> {
    let v = parse_value(file, text)?;
    read_all(v).map_err(|mut list| {
        let p = located(text, list.swap_remove(0));
        InputError::Field {
            file: file.into(),
            path: p.path,
            msg: p.reason,
        }
    })
}

/// JSON text as a [`Value`], or its syntax error. Anything after the document (a
/// second value, stray bytes) is an error, not silently ignored; so is a key given
/// twice in one object ([`NoDuplicateKeys`]: JSON parsers keep the last or the first,
/// RFC 8259 section 4 leaves it open, and the last one used to win quietly).
pub(super) fn parse_value(file: &str, text: &str) -> Result<Value, InputError> {
    let syntax = |e: serde_json::Error| InputError::Syntax {
        file: file.into(),
        msg: e.to_string(),
    };
    let v = serde_json::from_str::<Value>(text).map_err(syntax)?;
    serde_json::from_str::<NoDuplicateKeys>(text).map_err(syntax)?;
    Ok(v)
}

/// A JSON document walked only to find a key given twice in one object (an error
/// with the key, at its line and column).
pub(super) struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeysVisitor)
    }
}

pub(super) struct NoDuplicateKeysVisitor;

impl<'de> serde::de::Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = NoDuplicateKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<NoDuplicateKeys, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<NoDuplicateKeys, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !keys.insert(k.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{k}` is given twice in one object (irqsim refuses rather than \
                     keep one of the two)"
                )));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

/// `p` with the line and column of its path in `text` appended, where the text has it.
pub(super) fn located(text: &str, mut p: Problem) -> Problem {
    if let Some((line, col)) = crate::config::json_pos::position(text, &p.path) {
        p.reason = format!("{} at line {line} column {col}", p.reason);
    }
    p
}

/// Read `text` into `T`, reporting every wrong-type or unknown-field problem, not only
/// the first ([`read_all`]), each with its position in `text`.
pub fn parse_json_all<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, InputError> {
    let v = parse_value(file, text)?;
    read_all(v).map_err(|mut list| {
        if list.len() == 1 {
            let p = located(text, list.pop().expect("one"));
            return InputError::Field {
                file: file.into(),
                path: p.path,
                msg: p.reason,
            };
        }
        InputError::Invalid(
            list.into_iter()
                .map(|p| FileProblem {
                    file: file.into(),
                    problem: located(text, p),
                })
                .collect(),
        )
    })
}

/// Read `v` into `T`, collecting every wrong-type or unknown-field problem, not only the
/// first (serde stops at the first): after each one the offending value is removed and
/// the reading retried. Each problem has its full path in `v` (inside tagged and
/// untagged forms too, see [`crate::sim::forms`]) and its reason in the file's words
/// ([`crate::sim::forms::plain`]), without a position. A required field left missing by a
/// removal is not reported twice.
pub fn read_all<T: DeserializeOwned>(mut v: Value) -> Result<T, Vec<Problem>> {
    let mut problems: Vec<Problem> = Vec::new();
    for _ in 0..100 {
        let (path, reason) = match crate::sim::forms::fields::<T>(v.clone()) {
            Ok(t) if problems.is_empty() => return Ok(t),
            Ok(_) => break,
            Err(e) => e,
        };
        let path = if path.is_empty() { ".".into() } else { path };
        let path = unknown_field_path(&v, path, &reason);
        let missing = reason.starts_with("missing field");
        // A field we removed is now missing: already reported.
        if missing && !problems.is_empty() {
            let name = reason.split('`').nth(1).unwrap_or("");
            let full = if path == "." {
                name.to_string()
            } else {
                join(&path, name)
            };
            if problems.iter().any(|p| p.path == full) {
                // Put a stand-in of another type there, so that reading goes on to the
                // problems after it; none is reported, as the problem already was.
                if stand_in::<T>(&mut v, &path, name, &full) {
                    continue;
                }
                break;
            }
        }
        let removed = !missing && remove_at(&mut v, &path);
        problems.push(Problem {
            reason: crate::sim::forms::plain_at(&path, &reason),
            path,
        });
        if !removed {
            break;
        }
    }
    Err(problems)
}

/// The path of an unknown field that serde reported at the object holding it (a
/// reader that buffers the object, such as a derived internally tagged enum, loses the
/// last step): the field's own path when that object has the field.
pub(super) fn unknown_field_path(v: &Value, path: String, reason: &str) -> String {
    let Some(name) = reason
        .strip_prefix("unknown field `")
        .and_then(|r| r.split('`').next())
    else {
        return path;
    };
    if path.rsplit(['.', '[']).next() == Some(name) {
        return path;
    }
    let mut cur = v;
    for s in path.replace('[', ".[").split('.').filter(|s| !s.is_empty()) {
        let next = match (s.strip_prefix('[').and_then(|x| x.strip_suffix(']')), cur) {
            (Some(i), Value::Array(a)) => i.parse::<usize>().ok().and_then(|i| a.get(i)),
            (None, Value::Object(o)) => o.get(s),
            _ => None,
        };
        match next {
            Some(x) => cur = x,
            None => return path,
        }
    }
    match cur {
        Value::Object(o) if o.contains_key(name) => {
            if path == "." {
                name.to_string()
            } else {
                join(&path, name)
            }
        }
        _ => path,
    }
}

/// Remove the value at `path` (`a.b[2].c`, as serde_path_to_error prints it) from an
/// object; false if the path does not end in an object key.
/// Set field `name` of the object at `path` to the first stand-in value (a number, a
/// string, a boolean, an object, an array) with which reading `T` no longer stops at
/// `full` (the field's path); `false` (and the field left out) when none does.
pub(super) fn stand_in<T: DeserializeOwned>(
    v: &mut Value,
    path: &str,
    name: &str,
    full: &str,
) -> bool {
    let stands = [
        Value::from(1),
        Value::from(""),
        Value::from(false),
        Value::Object(Default::default()),
        Value::Array(Vec::new()),
    ];
    for x in stands {
        let Some(Value::Object(o)) = value_at_mut(v, path) else {
            return false;
        };
        o.insert(name.to_string(), x);
        match crate::sim::forms::fields::<T>(v.clone()) {
            Ok(_) => return true,
            Err((p, reason)) => {
                let p = if p.is_empty() { ".".to_string() } else { p };
                let stuck = (p == full
                    || p.starts_with(&format!("{full}."))
                    || p.starts_with(&format!("{full}[")))
                    || (p == path && reason.contains(&format!("`{name}`")));
                if !stuck {
                    return true;
                }
            }
        }
    }
    if let Some(Value::Object(o)) = value_at_mut(v, path) {
        o.remove(name);
    }
    false
}

/// The value at `path` (`a.b[2].c`; `.` or empty for the root).
pub(super) fn value_at_mut<'v>(v: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    let mut cur = v;
    for s in path.replace('[', ".[").split('.').filter(|s| !s.is_empty()) {
        cur = match (s.strip_prefix('[').and_then(|x| x.strip_suffix(']')), cur) {
            (Some(i), Value::Array(a)) => a.get_mut(i.parse::<usize>().ok()?)?,
            (None, Value::Object(o)) => o.get_mut(s)?,
            _ => return None,
        };
    }
    Some(cur)
}

pub(super) fn remove_at(v: &mut Value, path: &str) -> bool {
    let segs: Vec<String> = path
        .replace('[', ".[")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let Some((last, parents)) = segs.split_last() else {
        return false;
    };
    let mut cur = v;
    for s in parents {
        cur = match (s.strip_prefix('[').and_then(|x| x.strip_suffix(']')), cur) {
            (Some(i), Value::Array(a)) => {
                match i.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                    Some(x) => x,
                    None => return false,
                }
            }
            (None, Value::Object(o)) => match o.get_mut(s) {
                Some(x) => x,
                None => return false,
            },
            _ => return false,
        };
    }
    match cur {
        Value::Object(o) if !last.starts_with('[') => o.remove(last).is_some(),
        _ => false,
    }
}
