//! The sweep scripts of `examples/` say what they need before they do anything: GNU
//! parallel (not moreutils' program of the same name) and an irqsim binary.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/sweep-gnu-parallel.sh"
);

/// Runs the GNU parallel script with `bin` as the whole `PATH`; returns its exit code
/// and stderr, and whether it created its output directory.
fn run_with_path(bin: &Path) -> (Option<i32>, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = Command::new("/bin/bash")
        .arg(SCRIPT)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/dc21143-64b-1flow.json"
        ))
        .arg(&out)
        .arg("2")
        .env("PATH", bin)
        .env("IRQSIM", env!("CARGO_BIN_EXE_irqsim"))
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        out.exists(),
    )
}

fn bin_dir_with_grep() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let grep = ["/usr/bin/grep", "/bin/grep"]
        .iter()
        .map(Path::new)
        .find(|p| p.exists())
        .expect("grep on the machine");
    symlink(grep, bin.path().join("grep")).unwrap();
    bin
}

#[test]
fn the_gnu_parallel_script_says_how_to_install_parallel_when_it_is_missing() {
    let bin = bin_dir_with_grep();
    let (code, err, wrote) = run_with_path(bin.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("GNU parallel is not installed"), "{err}");
    assert!(err.contains("apt-get install parallel"), "{err}");
    assert!(!wrote, "nothing is written before the check");
}

#[test]
fn the_gnu_parallel_script_refuses_moreutils_parallel() {
    let bin = bin_dir_with_grep();
    // moreutils' parallel answers --version with an error and no "GNU parallel".
    let fake = bin.path().join("parallel");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'parallel: invalid option -- -' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, err, wrote) = run_with_path(bin.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is not GNU parallel"), "{err}");
    assert!(!wrote);
}
