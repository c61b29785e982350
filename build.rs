//! Build script: gives the library its build identity, `IRQSIM_BUILD_ID`.
//!
//! The identity is a 64-bit FNV-1a hash, in hex, of what decides the numbers a sweep
//! gives: the sources (`src/**`, `build.rs`), `Cargo.toml` and `Cargo.lock` (the
//! dependencies' exact versions), the compiler (`rustc -vV`), the target and the
//! profile. The same checkout built on two machines with the same toolchain has the
//! same identity; any edit, committed or not, changes it. `irqsim merge` refuses shards
//! whose identities differ (see `src/experiment/shard.rs`). It needs neither git nor a
//! particular executable file, so a release tarball or a binary copied to every node
//! works alike.

use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits, continued from `h`.
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Every file under `dir`, recursively.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut inputs = vec![
        root.join("build.rs"),
        root.join("Cargo.toml"),
        root.join("Cargo.lock"),
    ];
    files(&root.join("src"), &mut inputs);
    // Sorted by path relative to the checkout, so the hash does not depend on the
    // directory it lives in or on the order the file system lists entries.
    let mut rel: Vec<(String, PathBuf)> = inputs
        .into_iter()
        .map(|p| {
            let r = p.strip_prefix(&root).unwrap_or(&p).to_string_lossy();
            (r.replace('\\', "/"), p)
        })
        .collect();
    rel.sort();
    let mut h = 0xcbf2_9ce4_8422_2325;
    for (name, path) in &rel {
        h = fnv1a(h, name.as_bytes());
        h = fnv1a(h, &[0]);
        // A file that cannot be read (no Cargo.lock in a library checkout) counts as
        // empty.
        h = fnv1a(h, &std::fs::read(path).unwrap_or_default());
        h = fnv1a(h, &[0]);
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    h = fnv1a(h, &version);
    for var in ["TARGET", "PROFILE"] {
        h = fnv1a(h, std::env::var(var).unwrap_or_default().as_bytes());
        h = fnv1a(h, &[0]);
    }
    println!("cargo:rustc-env=IRQSIM_BUILD_ID={h:016x}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=src");
}
