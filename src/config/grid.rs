//! Grids: a scenario field that sweeps model parameters over a cartesian product.
//!
//! ```json
//! "grid": {
//!   "parameters": [
//!     { "path": "nics.dc0.rx_ring_slots", "values": [16, 32, 64, 128] },
//!     { "path": "kernel.ipintrq_maxlen", "values": [25, 50, 100] }
//!   ],
//!   "latency_at": 30
//! }
//! ```
//!
//! Each combination of values (a *cell*) becomes a variant of the experiment, named by
//! its values, `rx_ring_slots=16,ipintrq_maxlen=25`, whose overrides set those values in
//! the model after the scenario's `overrides` (and after the variant's own, see below).
//! Cells are in row-major order: the first parameter varies slowest.
//!
//! **Paths** address a number in the model with the syntax of the loader's error
//! messages: keys separated by `.`, array elements as `[i]` (`nics[0].rx_ring_slots`)
//! or, in arrays of named objects, by name as in `overrides` (`nics.dc0.rx_ring_slots`).
//! A path must lead to a number of the model as read (after the scenario's overrides,
//! defaults filled in); a cost given as an object is addressed inside it
//! (`kernel.netisr_per_packet.ns`). A parameter's **name** in variant names and tables
//! is its path's last key (`rx_ring_slots`), or as many trailing keys as it takes to
//! tell it from the other parameters' (`dc0.rx_ring_slots` beside
//! `dc1.rx_ring_slots`), or the `name` given.
//!
//! **The workload**: a path starting `workload.` addresses a number of the scenario's
//! workload as the variant patches it, defaults filled in (`workload.flows.*.frame_bytes`,
//! `workload.flows[0].rate_pps`); its values patch the workload, not the model. A `*`
//! step addresses every element of an array of named objects ([`ALL_ELEMENTS`]).
//!
//! **With `variants`** the grid multiplies them: every variant is run at every cell,
//! the variant's name first (`napi,rx_ring_slots=16,ipintrq_maxlen=25`), its overrides
//! applied before the grid's.
//!
//! **Limits**: at most [`MAX_CELLS`] variants in all (cells x variants); each
//! parameter at least one value, no value twice, no two parameters on the same model
//! value; a value for an integer field of the model must be a whole number.
//!
//! The summary of each cell (MLFRR, peak, output at the highest load, p99 latency at
//! `latency_at`) is computed by [`crate::results::summary`] and written to `results.json`.

use crate::sim::problems::Problems;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most variants a grid may give (cells times the scenario's variants): the one bound
/// on variants however they are asked for ([`crate::sim::limits::MAX_VARIANTS`]).
pub const MAX_CELLS: usize = crate::sim::limits::MAX_VARIANTS;

/// The scenario's `grid` field, as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GridConfig {
    /// The parameters swept, at least one; the first varies slowest.
    pub parameters: Vec<GridParameter>,
    /// Load point whose 99th-percentile latency each cell's summary reports, in the
    /// unit of `load.unit`; one of the sweep's points (default: the lowest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_at: Option<f64>,
}

/// One swept parameter, as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GridParameter {
    /// Path of a number in the model: `kernel.ipintrq_maxlen`, `nics.dc0.rx_ring_slots`
    /// or `nics[0].rx_ring_slots`; or in the workload: `workload.flows.*.frame_bytes`
    /// (every flow), `workload.flows[0].frame_bytes`.
    pub path: String,
    /// Name in variant names, tables and plots (default: the path's last key, or as
    /// many trailing keys as tell it from the other parameters): letters, digits, `-`,
    /// `_`, `.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The values, in the unit of the model field; at least one, each once.
    pub values: Vec<f64>,
}

/// The key of a merge patch, and the step of a grid path, that addresses every element
/// of an array of named objects (when none is named `*`):
/// `"workload": {"flows": {"*": {"frame_bytes": 128}}}`, `workload.flows.*.frame_bytes`.
pub const ALL_ELEMENTS: &str = "*";

/// One step of a parameter path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// An object key, or the name (or index, written as a number) of an element of an
    /// array of named objects.
    Key(String),
    /// An array element by index, `[i]`.
    Index(usize),
}

/// Parse `a.b[2].c` into segments.
pub fn parse_path(path: &str) -> Result<Vec<Segment>, String> {
    let mut segs = Vec::new();
    if path.is_empty() {
        return Err("empty path".into());
    }
    for token in path.split('.') {
        let (key, mut rest) = match token.find('[') {
            Some(i) => token.split_at(i),
            None => (token, ""),
        };
        if key.is_empty() {
            return Err(format!(
                "empty key in `{path}` (write `a.b[2].c`: keys separated by `.`, indices in brackets after a key)"
            ));
        }
        if key.contains(']') {
            return Err(format!("unmatched `]` in `{path}`"));
        }
        segs.push(Segment::Key(key.to_string()));
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("unclosed `[` in `{path}`"))?;
            let idx = rest[1..close]
                .parse::<usize>()
                .map_err(|_| format!("`{}` is not an array index in `{path}`", &rest[..=close]))?;
            segs.push(Segment::Index(idx));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("unexpected `{rest}` after an index in `{path}`"));
            }
        }
    }
    Ok(segs)
}

/// Segments as a path again (`a.b[2].c`).
pub fn render(segs: &[Segment]) -> String {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Segment::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Segment::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Where a path leads in a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The path with every array element by index (`nics[0].rx_ring_slots`): two
    /// parameters with the same one set the same value.
    pub canonical: String,
    /// The model field holds a whole number (a count), so values must be whole.
    pub integer: bool,
}

/// What a JSON value is, for error messages (`a string`, `an object`...).
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Up to twelve of `names`, comma-separated.
fn some(names: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = names.collect();
    let mut s = all.iter().take(12).cloned().collect::<Vec<_>>().join(", ");
    if all.len() > 12 {
        s.push_str(", ...");
    }
    s
}

fn element_names(a: &[Value]) -> String {
    some(a.iter().enumerate().map(|(i, e)| {
        e.get("name")
            .and_then(Value::as_str)
            .map_or(format!("[{i}]"), String::from)
    }))
}

/// Follow `segs` through `model` (a model as JSON) to a number. Array elements are
/// found by name first, then by index, as the scenario's merge patches find them.
///
/// A step `*` in an array of named objects (none of them named `*`) addresses every
/// element: the rest of the path must lead to a number in each (`workload.flows.*.frame_bytes`).
pub fn resolve(model: &Value, segs: &[Segment]) -> Result<Target, String> {
    resolve_from(model, segs, Vec::new())
}

/// [`resolve`] from `cur`, found at `here` in the model.
fn resolve_from(cur: &Value, segs: &[Segment], here: Vec<Segment>) -> Result<Target, String> {
    let mut here = here;
    let mut cur = cur;
    let at = |h: &[Segment]| {
        if h.is_empty() {
            "the model".to_string()
        } else {
            format!("`{}`", render(h))
        }
    };
    for (n, seg) in segs.iter().enumerate() {
        if let (Segment::Key(k), Value::Array(a)) = (seg, cur)
            && k == ALL_ELEMENTS
            && !a
                .iter()
                .any(|e| e.get("name").and_then(Value::as_str) == Some(ALL_ELEMENTS))
        {
            if a.is_empty() {
                return Err(format!("{} has no elements for `*` to set", at(&here)));
            }
            let mut integer = false;
            for (i, e) in a.iter().enumerate() {
                let mut h = here.clone();
                h.push(Segment::Index(i));
                integer |= resolve_from(e, &segs[n + 1..], h)?.integer;
            }
            let mut all = here.clone();
            all.push(Segment::Key(ALL_ELEMENTS.into()));
            all.extend(segs[n + 1..].iter().cloned());
            return Ok(Target {
                canonical: render(&all),
                integer,
            });
        }
        let next = match (seg, cur) {
            (Segment::Key(k), Value::Object(o)) => match o.get(k) {
                Some(v) => {
                    here.push(Segment::Key(k.clone()));
                    v
                }
                None => {
                    return Err(format!(
                        "no field `{k}` in {} (its fields: {})",
                        at(&here),
                        some(o.keys().cloned())
                    ));
                }
            },
            (Segment::Key(k), Value::Array(a)) => {
                let i = a
                    .iter()
                    .position(|e| e.get("name").and_then(Value::as_str) == Some(k.as_str()))
                    .or_else(|| k.parse::<usize>().ok().filter(|i| *i < a.len()));
                match i {
                    Some(i) => {
                        here.push(Segment::Index(i));
                        &a[i]
                    }
                    None => {
                        return Err(format!(
                            "no element named or numbered `{k}` in {} (its elements: {})",
                            at(&here),
                            element_names(a)
                        ));
                    }
                }
            }
            (Segment::Index(i), Value::Array(a)) => match a.get(*i) {
                Some(v) => {
                    here.push(Segment::Index(*i));
                    v
                }
                None => {
                    return Err(format!(
                        "{} has {} elements, no [{i}] (its elements: {})",
                        at(&here),
                        a.len(),
                        element_names(a)
                    ));
                }
            },
            (seg, v) => {
                let what = match seg {
                    Segment::Key(k) => format!("no field `{k}`"),
                    Segment::Index(i) => format!("no element [{i}]"),
                };
                return Err(format!("{} is {}: it has {what}", at(&here), kind(v)));
            }
        };
        cur = next;
    }
    match cur {
        Value::Number(n) => Ok(Target {
            canonical: render(&here),
            integer: n.is_u64() || n.is_i64(),
        }),
        Value::Object(o) => Err(format!(
            "{} is an object, not a number: address a number inside it (its fields: {})",
            at(&here),
            some(o.keys().cloned())
        )),
        other => Err(format!(
            "{} is {}, not a number: a grid sets numbers only",
            at(&here),
            kind(other)
        )),
    }
}

/// Whether two canonical paths can set the same value: equal, step by step, where a
/// `*` step stands for any element (`flows.*.frame_bytes` and `flows[2].frame_bytes`).
fn same_value(a: &str, b: &str) -> bool {
    let steps = |s: &str| -> Vec<String> {
        s.replace('[', ".")
            .replace(']', "")
            .split('.')
            .map(String::from)
            .collect()
    };
    let (a, b) = (steps(a), steps(b));
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x == y || x == ALL_ELEMENTS || y == ALL_ELEMENTS)
}

/// A whole number as an integer JSON value (so integer fields accept it), anything else
/// as a float.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

/// A value as written in a variant name: `16`, `0.5`, `-3`.
pub fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The merge patch that sets the value at `segs` to `v` (an index becomes the element's
/// number as a key, as in `overrides`).
pub fn patch(segs: &[Segment], v: f64) -> Value {
    let mut out = number(v);
    for seg in segs.iter().rev() {
        let key = match seg {
            Segment::Key(k) => k.clone(),
            Segment::Index(i) => i.to_string(),
        };
        let mut m = serde_json::Map::new();
        m.insert(key, out);
        out = Value::Object(m);
    }
    out
}

/// Names of the parameters: for each, the shortest run of trailing segments (starting
/// at a key) that no other path ends with, or the whole path.
pub fn short_names(paths: &[Vec<Segment>]) -> Vec<String> {
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            for k in 1..=p.len() {
                let tail = &p[p.len() - k..];
                if matches!(tail[0], Segment::Index(_)) {
                    continue;
                }
                let clash = paths
                    .iter()
                    .enumerate()
                    .any(|(j, q)| j != i && q.len() >= k && q[q.len() - k..] == *tail);
                if !clash {
                    return render(tail);
                }
            }
            render(p)
        })
        .collect()
}

/// A parameter of a validated grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Name in variant names, tables and plots.
    pub name: String,
    /// Path as written.
    pub path: String,
    /// The values, as written.
    pub values: Vec<f64>,
    /// The parsed path.
    pub segments: Vec<Segment>,
}

/// One variant of a grid: a scenario variant (or the model alone) at one combination
/// of values.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Variant name: `[<scenario variant>,]<name>=<value>,...`.
    pub variant: String,
    /// Index of the scenario's variant it builds on (0 when the scenario has none).
    pub base: usize,
    /// Index into each axis's values.
    pub index: Vec<usize>,
}

impl Cell {
    /// The value of each parameter at this cell.
    pub fn values(&self, axes: &[Axis]) -> Vec<f64> {
        axes.iter()
            .zip(&self.index)
            .map(|(a, &i)| a.values[i])
            .collect()
    }
}

/// A validated, expanded grid, as the experiment holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// The parameters, in the order written.
    pub axes: Vec<Axis>,
    /// Names of the scenario's variants the grid multiplies (empty when it has none).
    pub bases: Vec<String>,
    /// The cells, in variant order: scenario variant slowest, then the first
    /// parameter, ..., the last parameter fastest.
    pub cells: Vec<Cell>,
    /// Load point whose p99 latency the summary reports, in the unit of `load.unit`.
    pub latency_at: f64,
    /// Its index in the sweep (set by the loader, kept in step by
    /// `Experiment::retain_points`; `None` when that point was left out).
    pub latency_point: Option<usize>,
}

/// Check a grid against the models it applies to -- one per scenario variant, named
/// (empty name when the scenario has none), each the model as JSON after the
/// scenario's and the variant's overrides -- and expand it. Problems are pushed at
/// `grid.*` paths; `None` when there are any.
pub fn expand(cfg: &GridConfig, bases: &[(String, Value)], p: &mut Problems) -> Option<Grid> {
    let before = p.list.len();
    if cfg.parameters.is_empty() {
        p.push(
            "grid.parameters",
            "give at least one parameter, or leave `grid` out",
        );
    }
    let mut axes: Vec<Axis> = Vec::new();
    let mut canon: Vec<Option<String>> = Vec::new();
    for (i, par) in cfg.parameters.iter().enumerate() {
        let at = format!("grid.parameters[{i}]");
        let segs = match parse_path(&par.path) {
            Ok(s) => s,
            Err(e) => {
                p.push(&format!("{at}.path"), e);
                canon.push(None);
                continue;
            }
        };
        // The path must lead to a number in every variant's model.
        let mut target: Option<Target> = None;
        let mut failed: Vec<(&str, String)> = Vec::new();
        for (name, model) in bases {
            match resolve(model, &segs) {
                Ok(t) => {
                    if let Some(prev) = &mut target {
                        prev.integer |= t.integer;
                    } else {
                        target = Some(t);
                    }
                }
                Err(e) => failed.push((name, e)),
            }
        }
        if let Some((_, e)) = failed.first() {
            let mut reason = e.clone();
            if failed.len() < bases.len() {
                let names: Vec<String> = failed.iter().map(|(n, _)| format!("`{n}`")).collect();
                reason += &format!(" (in variant {})", names.join(", "));
            }
            p.push(&format!("{at}.path"), reason);
        }
        canon.push(target.as_ref().map(|t| t.canonical.clone()));
        if let Some(t) = &target
            && let Some(j) = canon[..i]
                .iter()
                .position(|c| c.as_ref().is_some_and(|c| same_value(c, &t.canonical)))
        {
            p.push(
                &format!("{at}.path"),
                format!(
                    "sets the same value (`{}`) as `grid.parameters[{j}].path`",
                    t.canonical
                ),
            );
        }
        if par.values.is_empty() {
            p.push(&format!("{at}.values"), "give at least one value");
        }
        // More values than variants may be are refused before they are looked at one by
        // one (10^6 values went through a quadratic check for minutes).
        if par.values.len() > MAX_CELLS {
            p.push(
                &format!("{at}.values"),
                format!(
                    "{} values; at most {MAX_CELLS} (the limit on variants)",
                    par.values.len()
                ),
            );
            continue;
        }
        // Duplicates found by sorting (value, index): each value after the first of
        // its group is reported with the group's first index.
        let mut order: Vec<(f64, usize)> = par.values.iter().copied().zip(0..).collect();
        order.sort_by(|a, b| {
            a.0.partial_cmp(&b.0)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.1.cmp(&b.1))
        });
        let mut twice: Vec<(usize, usize)> = Vec::new();
        let mut g = 0;
        while g < order.len() {
            let mut e = g + 1;
            while e < order.len() && order[e].0 == order[g].0 {
                twice.push((order[e].1, order[g].1));
                e += 1;
            }
            g = e;
        }
        twice.sort_unstable();
        let mut twice = twice.into_iter().peekable();
        for (j, v) in par.values.iter().enumerate() {
            if let Some((_, k)) = twice.next_if(|t| t.0 == j) {
                p.push(
                    &format!("{at}.values[{j}]"),
                    format!("{} is given twice (also `values[{k}]`)", fmt_value(*v)),
                );
            }
            if target.as_ref().is_some_and(|t| t.integer) && v.fract() != 0.0 {
                p.push(
                    &format!("{at}.values[{j}]"),
                    format!("`{}` holds a whole number in the model, got {v}", par.path),
                );
            }
        }
        axes.push(Axis {
            name: par.name.clone().unwrap_or_default(),
            path: par.path.clone(),
            values: par.values.clone(),
            segments: segs,
        });
    }
    if p.list.len() > before {
        return None;
    }
    let auto = short_names(&axes.iter().map(|a| a.segments.clone()).collect::<Vec<_>>());
    for (i, (a, auto)) in axes.iter_mut().zip(auto).enumerate() {
        let given = cfg.parameters[i].name.is_some();
        if !given {
            a.name = auto;
        }
        if let Err(e) = crate::config::names::check(&a.name) {
            let field = if given { "name" } else { "path" };
            p.push(
                &format!("grid.parameters[{i}].{field}"),
                format!("the name {e}{}", if given { "" } else { ": give a `name`" }),
            );
        }
    }
    for i in 0..axes.len() {
        if let Some(j) = (0..i).find(|&j| axes[j].name == axes[i].name) {
            p.push(
                &format!("grid.parameters[{i}].name"),
                format!(
                    "`{}` is also the name of `grid.parameters[{j}]`",
                    axes[i].name
                ),
            );
        }
    }
    let ncells = axes
        .iter()
        .map(|a| a.values.len())
        .fold(bases.len().max(1), |n, k| n.saturating_mul(k));
    if ncells > MAX_CELLS {
        let counts: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
        let mut what = counts.join(" x ");
        if bases.len() > 1 {
            what += &format!(" x {} variants", bases.len());
        }
        p.push(
            "grid.parameters",
            format!("{what} = {ncells} variants to run; at most {MAX_CELLS}"),
        );
    }
    if p.list.len() > before {
        return None;
    }
    let named = !(bases.len() == 1 && bases[0].0.is_empty());
    let mut cells = Vec::with_capacity(ncells);
    for (b, (bname, _)) in bases.iter().enumerate() {
        let mut index = vec![0usize; axes.len()];
        loop {
            let mut parts: Vec<String> = Vec::new();
            if named {
                parts.push(bname.clone());
            }
            parts.extend(
                axes.iter()
                    .zip(&index)
                    .map(|(a, &i)| format!("{}={}", a.name, fmt_value(a.values[i]))),
            );
            cells.push(Cell {
                variant: parts.join(","),
                base: b,
                index: index.clone(),
            });
            // Odometer: the last parameter fastest.
            let mut k = axes.len();
            loop {
                if k == 0 {
                    break;
                }
                k -= 1;
                index[k] += 1;
                if index[k] < axes[k].values.len() {
                    break;
                }
                index[k] = 0;
            }
            if index.iter().all(|&i| i == 0) {
                break;
            }
        }
    }
    // A cell's name names its files (`smartbits-<cell>.csv`, `linux/<cell>/`): the
    // longest is checked here, not when the sweep's files are written.
    if let Some(c) = cells.iter().max_by_key(|c| c.variant.len())
        && let Err(e) = crate::config::names::check_variant(&c.variant)
    {
        p.push(
            "grid.parameters",
            format!("the name of a cell {e}: give the parameters shorter `name`s"),
        );
        return None;
    }
    Some(Grid {
        axes,
        bases: if named {
            bases.iter().map(|(n, _)| n.clone()).collect()
        } else {
            Vec::new()
        },
        cells,
        latency_at: f64::NAN,
        latency_point: None,
    })
}

/// The index of the load point `at` among `values` (the sweep's points in the unit of
/// `load.unit`), within a relative 1e-9.
pub fn find_point(values: &[f64], at: f64) -> Option<usize> {
    values
        .iter()
        .position(|v| (v - at).abs() <= 1e-9 * v.abs().max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model() -> Value {
        json!({
            "kernel": {"ipintrq_maxlen": 50, "netisr_per_packet": {"ns": 5180.0}},
            "nics": [
                {"name": "dc0", "rx_ring_slots": 64, "rx_latency_ns": 880.0},
                {"name": "dc1", "rx_ring_slots": 64}
            ]
        })
    }

    fn segs(p: &str) -> Vec<Segment> {
        parse_path(p).unwrap()
    }

    #[test]
    fn paths_parse_and_render() {
        assert_eq!(
            segs("nics[0].rx_ring_slots"),
            vec![
                Segment::Key("nics".into()),
                Segment::Index(0),
                Segment::Key("rx_ring_slots".into())
            ]
        );
        assert_eq!(render(&segs("a.b[2][3].c")), "a.b[2][3].c");
        for bad in ["", "a..b", "[0].a", "a[x]", "a[1", "a[1]b", "a]"] {
            assert!(parse_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_resolve_by_name_or_index() {
        let m = model();
        let t = resolve(&m, &segs("nics.dc1.rx_ring_slots")).unwrap();
        assert_eq!(t.canonical, "nics[1].rx_ring_slots");
        assert!(t.integer);
        assert_eq!(
            resolve(&m, &segs("nics[1].rx_ring_slots")).unwrap(),
            resolve(&m, &segs("nics.1.rx_ring_slots")).unwrap()
        );
        assert!(
            !resolve(&m, &segs("nics.dc0.rx_latency_ns"))
                .unwrap()
                .integer
        );
        let e = resolve(&m, &segs("nics.dc9.rx_ring_slots")).unwrap_err();
        assert!(
            e.contains("no element named or numbered `dc9` in `nics`"),
            "{e}"
        );
        assert!(e.contains("dc0, dc1"), "{e}");
        let e = resolve(&m, &segs("kernel.netisr_per_packet")).unwrap_err();
        assert!(e.contains("is an object, not a number"), "{e}");
        assert!(e.contains("ns"), "{e}");
        let e = resolve(&m, &segs("kernel.ipintrq")).unwrap_err();
        assert!(e.contains("no field `ipintrq` in `kernel`"), "{e}");
        let e = resolve(&m, &segs("kernel.ipintrq_maxlen.x")).unwrap_err();
        assert!(e.contains("is a number"), "{e}");
    }

    #[test]
    fn patches_set_one_value() {
        assert_eq!(
            patch(&segs("nics.dc0.rx_ring_slots"), 16.0),
            json!({"nics": {"dc0": {"rx_ring_slots": 16}}})
        );
        assert_eq!(
            patch(&segs("nics[1].rx_latency_ns"), 0.5),
            json!({"nics": {"1": {"rx_latency_ns": 0.5}}})
        );
    }

    #[test]
    fn names_are_the_shortest_unambiguous_tails() {
        let p = [
            segs("nics.dc0.rx_ring_slots"),
            segs("nics.dc1.rx_ring_slots"),
            segs("kernel.ipintrq_maxlen"),
            segs("nics[2].tx_ring_slots"),
        ];
        assert_eq!(
            short_names(&p),
            vec![
                "dc0.rx_ring_slots",
                "dc1.rx_ring_slots",
                "ipintrq_maxlen",
                "tx_ring_slots"
            ]
        );
        // A tail never starts at an index.
        let p = [segs("nics[0].x"), segs("nics[1].x")];
        assert_eq!(short_names(&p), vec!["nics[0].x", "nics[1].x"]);
    }

    #[test]
    fn a_two_by_three_grid_expands_row_major() {
        let cfg = GridConfig {
            parameters: vec![
                GridParameter {
                    path: "nics.dc0.rx_ring_slots".into(),
                    name: None,
                    values: vec![16.0, 32.0],
                },
                GridParameter {
                    path: "kernel.ipintrq_maxlen".into(),
                    name: None,
                    values: vec![25.0, 50.0, 100.0],
                },
            ],
            latency_at: None,
        };
        let mut p = Problems::new();
        let g = expand(&cfg, &[(String::new(), model())], &mut p).expect("valid");
        assert!(p.is_empty());
        let names: Vec<&str> = g.cells.iter().map(|c| c.variant.as_str()).collect();
        assert_eq!(
            names,
            [
                "rx_ring_slots=16,ipintrq_maxlen=25",
                "rx_ring_slots=16,ipintrq_maxlen=50",
                "rx_ring_slots=16,ipintrq_maxlen=100",
                "rx_ring_slots=32,ipintrq_maxlen=25",
                "rx_ring_slots=32,ipintrq_maxlen=50",
                "rx_ring_slots=32,ipintrq_maxlen=100",
            ]
        );
        assert_eq!(g.cells[4].values(&g.axes), vec![32.0, 50.0]);
        // With scenario variants, each is multiplied, its name first.
        let bases = [("a".to_string(), model()), ("b".to_string(), model())];
        let g = expand(&cfg, &bases, &mut p).expect("valid");
        assert_eq!(g.cells.len(), 12);
        assert_eq!(g.cells[6].variant, "b,rx_ring_slots=16,ipintrq_maxlen=25");
        assert_eq!(g.cells[6].base, 1);
    }

    #[test]
    fn bad_grids_name_the_field() {
        let par = |path: &str, values: Vec<f64>| GridParameter {
            path: path.into(),
            name: None,
            values,
        };
        let cfg = GridConfig {
            parameters: vec![
                par("kernel.ipintrq_maxlen", vec![25.0, 25.0, 2.5]),
                par("nics[0].rx_ring_slot", vec![16.0]),
                par("nics.dc0.rx_latency_ns", vec![]),
                par("kernel.netisr_per_packet", vec![1.0]),
                par("nics.0.rx_latency_ns", vec![1.0]),
            ],
            latency_at: None,
        };
        let mut p = Problems::new();
        assert!(expand(&cfg, &[(String::new(), model())], &mut p).is_none());
        let at: Vec<&str> = p.list.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(
            at,
            [
                "grid.parameters[0].values[1]",
                "grid.parameters[0].values[2]",
                "grid.parameters[1].path",
                "grid.parameters[2].values",
                "grid.parameters[3].path",
                "grid.parameters[4].path",
            ]
        );
        assert!(
            p.list[5]
                .reason
                .contains("same value (`nics[0].rx_latency_ns`)")
        );
        let many = GridConfig {
            parameters: vec![
                par("kernel.ipintrq_maxlen", (1..=40).map(f64::from).collect()),
                par("nics.dc0.rx_ring_slots", (1..=30).map(f64::from).collect()),
            ],
            latency_at: None,
        };
        let mut p = Problems::new();
        assert!(expand(&many, &[(String::new(), model())], &mut p).is_none());
        assert_eq!(p.list[0].path, "grid.parameters");
        assert!(
            p.list[0].reason.contains("40 x 30 = 1200"),
            "{}",
            p.list[0].reason
        );
    }
}
