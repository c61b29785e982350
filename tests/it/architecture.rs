//! The module graph of `src/` has no cycle: components never import the host or each
//! other in a circle (docs/architecture.md). A module is a file (`src/x.rs` or
//! `src/x/mod.rs` is `x`, `src/x/y.rs` is `x::y`); an edge is a `crate::...` path in
//! its code outside comments and its `#[cfg(test)] mod tests`. A module's own
//! submodules and parent do not count (the host's routing files are the host).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
    for e in std::fs::read_dir(dir).expect("src dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            let mut pre = prefix.to_vec();
            pre.push(p.file_name().expect("name").to_string_lossy().into());
            modules(&p, &pre, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let stem = p.file_stem().expect("stem").to_string_lossy().to_string();
            let mut parts = prefix.to_vec();
            if stem != "mod" {
                parts.push(stem);
            }
            let name = parts.join("::");
            if name.is_empty() || name == "lib" || name.starts_with("bin") {
                continue;
            }
            let text = std::fs::read_to_string(&p).expect("source");
            let code = match text.find("#[cfg(test)]\nmod tests") {
                Some(i) => &text[..i],
                None => &text[..],
            };
            let code: String = code
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            out.insert(name, code);
        }
    }
}

/// The module a `crate::` path names: its longest prefix that is a module.
fn target(path: &str, mods: &BTreeMap<String, String>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("::"))
        .find(|m| mods.contains_key(m))
}

fn edges(mods: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for (m, code) in mods {
        let mut to = BTreeSet::new();
        let mut paths: Vec<String> = Vec::new();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + 7..];
            if rest.starts_with('{') {
                // `use crate::{a::b, c::{d, e}}`: the top-level items of the group.
                paths.extend(group_items(rest));
                continue;
            }
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            paths.push(rest[..end].trim_end_matches(':').to_string());
        }
        for p in paths {
            let Some(t) = target(p.split("::{").next().unwrap_or(""), mods) else {
                continue;
            };
            let related =
                t == *m || t.starts_with(&format!("{m}::")) || m.starts_with(&format!("{t}::"));
            if !related {
                to.insert(t);
            }
        }
        g.insert(m.clone(), to);
    }
    g
}

/// The top-level items of a `{...}` group at the start of `text` (nested groups kept
/// whole, so `a::{b, c}` is one item).
fn group_items(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut item = String::new();
    for c in text.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    items.push(std::mem::take(&mut item));
                    break;
                }
            }
            ',' if depth == 1 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    items
        .iter()
        .map(|i| i.trim().to_string())
        .filter(|i| !i.is_empty())
        .collect()
}

#[test]
fn the_parser_sees_every_item_of_a_nested_use_group() {
    assert_eq!(
        group_items("{cpu::{Cpu, Level}, host::Host};"),
        vec!["cpu::{Cpu, Level}", "host::Host"]
    );
}

/// A cycle through `start`, if any (depth-first search).
fn cycle_from(start: &str, g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((m, path)) = stack.pop() {
        for t in &g[&m] {
            if t == start {
                return Some(path);
            }
            if seen.insert(t.clone()) {
                let mut p = path.clone();
                p.push(t.clone());
                stack.push((t.clone(), p));
            }
        }
    }
    None
}

#[test]
fn no_module_of_src_is_part_of_an_import_cycle() {
    let mut mods = BTreeMap::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut mods,
    );
    assert!(mods.len() > 30, "modules found: {:?}", mods.keys());
    let g = edges(&mods);
    // The check can fail: the host imports its components.
    assert!(g["host"].contains("model::nic") && g["host"].contains("model::policy::interrupt"));
    let cycles: Vec<Vec<String>> = mods.keys().filter_map(|m| cycle_from(m, &g)).collect();
    assert!(cycles.is_empty(), "import cycles: {cycles:?}");
}

#[test]
fn components_do_not_import_the_host() {
    let mut mods = BTreeMap::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut mods,
    );
    let g = edges(&mods);
    // Only what runs whole hosts or reads their statistics may: the experiments (the
    // runner) and the results (RunStats).
    let users: Vec<&String> = g
        .iter()
        .filter(|(m, to)| to.contains("host") && *m != "host" && !m.starts_with("host::"))
        .map(|(m, _)| m)
        .collect();
    for m in &users {
        assert!(
            m.starts_with("experiment::") || m.starts_with("results"),
            "{m} imports the host"
        );
    }
}

/// The folders of `src/` from the ground up (src/lib.rs): a module imports only its own
/// folder and the folders before it.
const LAYERS: [&str; 8] = [
    "sim",
    "model",
    "trace",
    "config",
    "host",
    "results",
    "experiment",
    "validate",
];

fn layer(module: &str) -> usize {
    let top = module.split("::").next().unwrap_or(module);
    LAYERS
        .iter()
        .position(|l| *l == top)
        .unwrap_or_else(|| panic!("src/{top} is in no layer of src/lib.rs"))
}

#[test]
fn every_import_points_down_the_layers() {
    let mut mods = BTreeMap::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut mods,
    );
    let g = edges(&mods);
    // The check can fail: the host imports the model, the runner the host.
    assert!(layer("host") > layer("model::nic") && g["host"].contains("model::nic"));
    let up: Vec<String> = g
        .iter()
        .flat_map(|(m, to)| {
            to.iter()
                .filter(|t| layer(t) > layer(m))
                .map(move |t| format!("{m} -> {t}"))
        })
        .collect();
    assert!(up.is_empty(), "imports up the layers: {up:#?}");
}
