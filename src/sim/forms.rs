//! The forms a value of an input file may take, and serde's messages in the user's words.
//!
//! A few fields accept more than one form: a receive policy is an object tagged by
//! `kind` (`{"kind": "napi"}`), a frame size is a number of bytes or a distribution
//! tagged by `dist`, a phase or clock error is a number or `"random"`. serde's derived
//! readers of such enums buffer the value before they know its form, so their errors
//! lose the path inside it (a typo in `policy.wieght` was reported at `policy`) and
//! speak of Rust ("data did not match any variant of untagged enum FrameSize",
//! "expected internally tagged enum PolicyConfig"). The readers here take the value
//! whole ([`tagged`]), pick the form by its tag or its JSON type, read the fields with
//! their own paths ([`fields`]) and carry the inner path out in the error message
//! ([`nested`]), which the loader splits off again ([`split_nested`]) and appends to the
//! path. [`plain`] rewrites serde's remaining messages ("invalid type: map, expected
//! f64") as what the field accepts and what it got ("must be a number, got an object").

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Marks the inner path carried in an error message (a character no message has).
const MARK: char = '\u{1}';

/// An error at `path` inside the value being read (empty: at the value itself), as an
/// error of the outer reader: the path travels in the message (see [`split_nested`]).
pub fn nested<E: serde::de::Error>(path: &str, msg: &str) -> E {
    if path.is_empty() || path == "." {
        E::custom(msg)
    } else {
        E::custom(format!("{MARK}{path}{MARK}{msg}"))
    }
}

/// The inner path a message carries (from [`nested`]), if any, and the message without it.
pub fn split_nested(msg: &str) -> (Option<&str>, &str) {
    if let Some(rest) = msg.strip_prefix(MARK)
        && let Some((path, m)) = rest.split_once(MARK)
    {
        return (Some(path), m);
    }
    (None, msg)
}

/// A message read outside [`fields`] (which takes the inner path out), made readable:
/// the inner path a message carries put in words, `at <path>: <message>`.
pub fn readable(msg: &str) -> String {
    match split_nested(msg) {
        (Some(path), m) => format!("at {path}: {m}"),
        (None, m) => m.to_string(),
    }
}

/// `outer` and `inner` joined as serde_path_to_error prints paths (`a.b`, `a[0]`).
pub fn join_path(outer: &str, inner: &str) -> String {
    if outer.is_empty() || outer == "." {
        inner.to_string()
    } else if inner.starts_with('[') {
        format!("{outer}{inner}")
    } else {
        format!("{outer}.{inner}")
    }
}

/// Read `v` into `T` with path tracking: on error, the path inside `v` (with the inner
/// path of a nested error appended) and the message.
pub fn fields<T: DeserializeOwned>(v: Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().to_string();
        let (inner, m) = split_nested(&msg);
        let path = match inner {
            Some(i) => join_path(&path, i),
            None if path == "." => String::new(),
            None => path,
        };
        (path, m.to_string())
    })
}

/// Read an object tagged by `tag` (e.g. `kind`): `what` names the thing in messages (`a
/// receive policy`), `kinds` lists the tag's values, `example` is one accepted form, and
/// `read(kind, rest)` reads the object without its tag for one kind (`None`: not a known
/// kind). Errors come out at their path inside the object.
pub fn tagged<T>(
    v: Value,
    tag: &str,
    what: &str,
    kinds: &[String],
    example: &str,
    read: impl FnOnce(&str, Value) -> Option<Result<T, (String, String)>>,
) -> Result<T, (String, String)> {
    let listed = kinds
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let Value::Object(mut map) = v else {
        return Err((
            String::new(),
            format!(
                "must be {what}: an object with `{tag}` one of {listed} (e.g. `{example}`), got {}",
                describe(&v)
            ),
        ));
    };
    let kind = match map.shift_remove(tag) {
        Some(Value::String(k)) => k,
        Some(other) => {
            return Err((
                tag.to_string(),
                format!("must be one of {listed}, got {}", describe(&other)),
            ));
        }
        None => {
            return Err((
                String::new(),
                format!("{what} needs `{tag}`: one of {listed} (e.g. `{example}`)"),
            ));
        }
    };
    match read(&kind, Value::Object(map)) {
        Some(r) => r,
        None => Err((
            tag.to_string(),
            format!("unknown {tag} `{kind}`: {what} is one of {listed}"),
        )),
    }
}

/// A JSON value as messages name it: `an object`, `a list`, `the string "napi"`,
/// `the number 64`, `true`, `null`.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Object(_) => "an object".into(),
        Value::Array(_) => "a list".into(),
        Value::String(s) => format!("the string {:?}", s),
        Value::Number(n) => format!("the number {n}"),
        Value::Bool(b) => format!("`{b}`"),
        Value::Null => "`null`".into(),
    }
}

/// The error of a `serde` reader from `(path, msg)` of [`tagged`] or [`fields`].
pub fn to_error<E: serde::de::Error>((path, msg): (String, String)) -> E {
    nested(&path, &msg)
}

/// Read a value whole, for [`tagged`] (a `Deserialize` impl's first step).
pub fn value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    <Value as serde::Deserialize>::deserialize(d)
}

/// serde's message rewritten in the words of the file: what the field accepts and what
/// it got. Messages that already are (unknown fields, missing fields, ours) pass through.
pub fn plain(msg: &str) -> String {
    for (head, verb) in [("invalid type: ", "got"), ("invalid value: ", "got")] {
        if let Some(rest) = msg.strip_prefix(head)
            && let Some((got, want)) = rest.split_once(", expected ")
        {
            return format!("must be {}, {verb} {}", expected(want), unexpected(got));
        }
    }
    if let Some(field) = msg.strip_suffix(", there are no fields") {
        return format!("{field}: this object takes no fields");
    }
    if let Some(name) = msg.strip_prefix("data did not match any variant of untagged enum ") {
        return format!("must be {}", expected(name));
    }
    msg.to_string()
}

/// [`plain`], with the unit a field's name gives (`_ns`, `cycles`, `_s`...) said after
/// "a number", so that a cost's `{"ns": {...}}` reads "must be a number of nanoseconds".
pub fn plain_at(path: &str, msg: &str) -> String {
    let text = plain(msg);
    let key = path.rsplit(['.', '[']).next().unwrap_or(path);
    let unit = [
        ("cycles", " of CPU cycles (e.g. `{\"cycles\": 2321}`)"),
        ("ns", " of nanoseconds (e.g. `{\"ns\": 5200}`)"),
        ("_ns", " of nanoseconds"),
        ("_us", " of microseconds"),
        ("_ms", " of milliseconds"),
        ("_s", " of seconds"),
        ("_bps", " of bit/s"),
        ("_mhz", " of MHz"),
        ("_ppm", " of ppm"),
    ]
    .into_iter()
    .find(|(suffix, _)| key == *suffix || (suffix.starts_with('_') && key.ends_with(suffix)));
    match (unit, text.strip_prefix("must be a number,")) {
        (Some((_, unit)), Some(rest)) => format!("must be a number{unit},{rest}"),
        _ => text,
    }
}

/// What serde says a reader expected, as the file's forms.
fn expected(want: &str) -> String {
    let whole = |max: &str| format!("a whole number from 0 to {max}");
    match want.trim() {
        "f64" | "f32" => "a number".into(),
        "u8" => whole("255"),
        "u16" => whole("65535"),
        "u32" => whole("4294967295"),
        "u64" => whole("18446744073709551615"),
        "usize" => whole("18446744073709551615"),
        "i64" | "i32" => "a whole number".into(),
        "a boolean" => "`true` or `false`".into(),
        "a string" => "a string".into(),
        "a sequence" => "a list `[...]`".into(),
        w if w.starts_with("struct ") || w.starts_with("a map") => "an object `{...}`".into(),
        w if w.starts_with("internally tagged enum ") || w.starts_with("untagged enum ") => {
            let name = w.rsplit(' ').next().unwrap_or(w);
            forms_of(name)
        }
        w if w.starts_with("enum ") => forms_of(w.trim_start_matches("enum ")),
        w => w.to_string(),
    }
}

/// The accepted forms of the types whose readers are serde's own.
fn forms_of(name: &str) -> String {
    match name {
        "UserConfig" => "a user process: `{\"kind\": \"cpu-bound\"}` or `{\"kind\": \"screend\", \
                         \"per_packet\": 5000}`"
            .into(),
        "FrameDist" => "a frame-size distribution: `{\"dist\": \"uniform\", \"min\": 64, \"max\": \
                        1518}` or `{\"dist\": \"mix\", \"sizes\": [64, 1518], \"weights\": [7, 1]}`"
            .into(),
        other => format!("one of the forms of `{other}` (see `irqsim schema`)"),
    }
}

/// What serde says a reader got, as the file shows it.
fn unexpected(got: &str) -> String {
    let got = got.trim();
    let quoted = |s: &str| s.trim_start_matches('`').trim_end_matches('`').to_string();
    if got == "map" {
        "an object".into()
    } else if got == "sequence" {
        "a list".into()
    } else if got == "null" || got == "unit value" {
        "`null`".into()
    } else if let Some(s) = got.strip_prefix("string ") {
        format!("the string {s}")
    } else if let Some(b) = got.strip_prefix("boolean ") {
        quoted(b)
    } else if let Some(n) = got
        .strip_prefix("integer ")
        .or_else(|| got.strip_prefix("floating point "))
    {
        format!("the number {}", quoted(n))
    } else {
        got.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_words_become_the_files_forms() {
        assert_eq!(
            plain("invalid type: map, expected f64"),
            "must be a number, got an object"
        );
        assert_eq!(
            plain("invalid type: string \"64\", expected u32"),
            "must be a whole number from 0 to 4294967295, got the string \"64\""
        );
        assert_eq!(
            plain("invalid value: integer `-1`, expected u32"),
            "must be a whole number from 0 to 4294967295, got the number -1"
        );
        assert_eq!(plain("missing field `from`"), "missing field `from`");
        assert_eq!(
            plain_at(
                "kernel.netisr_per_packet.ns",
                "invalid type: map, expected f64"
            ),
            "must be a number of nanoseconds (e.g. `{\"ns\": 5200}`), got an object"
        );
        assert_eq!(
            plain_at("duration_s", "invalid type: string \"ten\", expected f64"),
            "must be a number of seconds, got the string \"ten\""
        );
    }

    #[test]
    fn a_message_read_elsewhere_has_its_path_in_words() {
        let e: serde_json::Error = nested("policy.wieght", "unknown field `wieght`");
        let m = readable(&e.to_string());
        assert!(
            m.starts_with("at policy.wieght: unknown field `wieght`"),
            "{m}"
        );
        assert!(!m.contains(MARK), "{m:?}");
    }

    #[test]
    fn nested_paths_travel_in_the_message() {
        let e: serde_json::Error = nested("wieght", "unknown field `wieght`");
        let msg = e.to_string();
        assert_eq!(
            split_nested(&msg),
            (Some("wieght"), "unknown field `wieght`")
        );
        assert_eq!(
            join_path("nics[0].policy", "wieght"),
            "nics[0].policy.wieght"
        );
        assert_eq!(join_path("sizes", "[1]"), "sizes[1]");
    }
}
