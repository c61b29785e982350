//! docs/layout.md lists every Rust source file of the repository, and names none that is
//! gone. The page's convention: a `.rs` path is always written in backticks from the
//! repository's root (`src/model/nic/dim.rs`), and a file's own line is a bullet whose
//! first backticked span is its path. Checked: every `*.rs` under `src/`, `benches/`,
//! `examples/`, `tests/it/` and `fuzz/fuzz_targets/` has such a line, and every
//! backticked span ending in `.rs`, anywhere on the page, is a file that exists.
//!
//! And docs/adding-a-policy.md's uncompiled blocks against the code they show: the
//! example policy's hooks against `RxPolicy`, its registration against the registry.

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

/// The text of the fenced `text` block of `page` whose first line is `start`, up to the
/// closing fence.
fn text_block<'a>(page: &'a str, start: &str) -> &'a str {
    let fenced = format!("```text\n{start}");
    let i = page
        .find(&fenced)
        .unwrap_or_else(|| panic!("{fenced:?} on the page"));
    let rest = &page[i + 3..];
    &rest[..rest.find("```").expect("the block's closing fence")]
}

/// Each `fn` (and `const`) of `text` by name, its signature with white space and the
/// leading underscores of unused parameters taken out (up to its body or `;`).
fn signatures(text: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    for (kw, end) in [("fn ", ['{', ';']), ("const ", [';', ';'])] {
        let mut at = 0;
        while let Some(i) = text[at..].find(kw) {
            let start = at + i;
            at = start + kw.len();
            if start > 0 && text.as_bytes()[start - 1].is_ascii_alphanumeric() {
                continue;
            }
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let stop = text[start..].find(end).map_or(text.len(), |j| start + j);
            let sig: String = text[start..stop].split_whitespace().collect();
            let sig = sig
                .replace("(_", "(")
                .replace(",_", ",")
                .replace("&mutself", "&mut self");
            out.insert(name, sig);
        }
    }
    out
}

/// `sig` without lowercase module paths (`interrupt::HandlerMode` -> `HandlerMode`).
fn unpath(sig: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let mut chars = sig.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        let is_path = c == ':' && chars.peek() == Some(&':');
        if is_path && word.chars().next().is_some_and(|w| w.is_lowercase()) {
            chars.next();
        } else {
            out.push_str(&word);
            out.push(c);
        }
        word.clear();
    }
    out + &word
}

/// docs/adding-a-policy.md's `impl RxPolicy for Batches` is a `text` block (it needs a
/// registered variant to compile): every hook it implements must be one of `RxPolicy`'s,
/// with the trait's signature, so that the page cannot drift from the trait unseen; and
/// its registration example lists the real registry's first entries, in order.
#[test]
fn the_policy_guide_implements_rxpolicys_hooks_as_the_trait_declares_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/adding-a-policy.md")).expect("page");
    let src = std::fs::read_to_string(root.join("src/model/policy/mod.rs")).expect("source");
    let trait_start = src.find("pub trait RxPolicy").expect("the trait");
    let trait_text =
        &src[trait_start..trait_start + src[trait_start..].find("\n}\n").expect("end")];
    let declared = signatures(trait_text);
    let guide = signatures(text_block(&page, "impl RxPolicy for Batches"));
    assert!(guide.len() >= 8, "hooks found in the guide: {guide:?}");
    for (name, sig) in &guide {
        let Some(want) = declared.get(name) else {
            panic!("the guide implements `{name}`, which RxPolicy does not declare");
        };
        if sig.starts_with("const") {
            continue; // a constant: its name is the contract (the value is the policy's)
        }
        // The trait's default bodies and the guide's bodies differ; the heads must not
        // (module paths aside: the guide imports what the trait names by path).
        assert_eq!(unpath(sig), unpath(want), "`{name}`: guide against trait");
    }
    // The registration example: its entries but the new one, in the registry's order.
    let entries = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("=>") && l.trim_end().ends_with(','))
            .map(|l| l.trim().to_string())
            .collect()
    };
    let listed = entries(text_block(&page, "macro_rules! with_policies {"));
    let reg_start = src.find("macro_rules! with_policies {").expect("registry");
    let registry =
        entries(&src[reg_start..reg_start + src[reg_start..].find("\n}\n").expect("end")]);
    let (new, shown) = listed.split_last().expect("entries");
    assert!(new.starts_with("Batch("), "{new}");
    let mut it = registry.iter();
    for e in shown {
        assert!(
            it.any(|r| r == e),
            "`{e}` is not in the registry, or out of order: {registry:?}"
        );
    }
    assert_eq!(
        shown.first(),
        registry.first(),
        "the registry's first entry"
    );
}
