//! docs/layout.md lists every Rust source file of the repository, and names none that is
//! gone. The page's convention: a `.rs` path is always written in backticks from the
//! repository's root (`src/model/nic/dim.rs`), and a file's own line is a bullet whose
//! first backticked span is its path. Checked: every `*.rs` under `src/`, `benches/`,
//! `examples/`, `tests/it/` and `fuzz/fuzz_targets/` has such a line, and every
//! backticked span ending in `.rs`, anywhere on the page, is a file that exists.

use std::collections::BTreeSet;
use std::path::Path;

/// The folders whose Rust files the page must list (searched to any depth).
const LISTED: [&str; 5] = [
    "src",
    "benches",
    "examples",
    "tests/it",
    "fuzz/fuzz_targets",
];

/// Every `*.rs` file under `dir`, as a path from `root` with `/` separators.
fn rust_files(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.expect("directory entry").path();
        if p.is_dir() {
            rust_files(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).expect("under the root");
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.insert(parts.join("/"));
        }
    }
}

/// The backticked spans of a line, in order.
fn spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// What the page says: the paths that have a line of their own (a bullet whose first
/// backticked span is the path) and every `.rs` span it names.
fn read_page(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut listed = BTreeSet::new();
    let mut named = BTreeSet::new();
    for line in text.lines() {
        for s in spans(line) {
            if s.ends_with(".rs") {
                named.insert(s.to_string());
            }
        }
        if let Some(rest) = line.trim_start().strip_prefix("- ")
            && rest.starts_with('`')
            && let Some(first) = spans(rest).first()
            && first.ends_with(".rs")
        {
            listed.insert(first.to_string());
        }
    }
    (listed, named)
}

#[test]
fn the_reader_takes_a_bullet_lead_as_listed_and_every_rs_span_as_named() {
    let (listed, named) = read_page(
        "## `src/sim/`\n\n- `src/sim/time.rs`: time, see `src/sim/rng.rs`.\n  \
         - `src/x/mod.rs`, `src/x/y.rs`: two\nprose on `a.rs` and `Cargo.toml`\n",
    );
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(listed, set(&["src/sim/time.rs", "src/x/mod.rs"]));
    assert_eq!(
        named,
        set(&[
            "src/sim/time.rs",
            "src/sim/rng.rs",
            "src/x/mod.rs",
            "src/x/y.rs",
            "a.rs"
        ])
    );
}

#[test]
fn layout_md_lists_every_source_file_and_names_none_that_is_gone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/layout.md")).expect("docs/layout.md");
    let (listed, named) = read_page(&text);
    let mut files = BTreeSet::new();
    for dir in LISTED {
        rust_files(root, &root.join(dir), &mut files);
    }
    // The check can fail: there are files to list, and the page is read as meant.
    assert!(files.contains("src/lib.rs") && files.contains("tests/it/layout_doc.rs"));
    assert!(
        listed.contains("src/lib.rs"),
        "the page's bullets were not read"
    );

    let unlisted: Vec<&String> = files.difference(&listed).collect();
    let gone: Vec<&String> = named.iter().filter(|p| !root.join(p).is_file()).collect();
    assert!(
        unlisted.is_empty() && gone.is_empty(),
        "docs/layout.md is out of date.\n\
         Files without a line of their own (a bullet starting with the path from the \
         repository root, in backticks): {unlisted:#?}\n\
         Paths the page names that are not files (write `.rs` paths from the root): {gone:#?}"
    );
}
