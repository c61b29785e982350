//! The one rule for every name irqsim turns into a file or directory name.
//!
//! Scenario variant names become `smartbits-<variant>.csv` and heat-map files
//! `plots/grid-<metric>-<variant>.svg`; the scenario's name (its file's stem) becomes
//! the default output directory `irqsim-out/<scenario>/`, and is carried in
//! `shard.json` to `irqsim merge`, which writes there too. A name with a `/`, or one
//! that is `.` or `..`, would put those files outside the output directory (for example
//! a variant `../x` read back from results.json, a shard.json scenario `../../../X`, a
//! scenario file `...json` whose stem is `..`). So every such name, whether written in a
//! scenario or read back from a file irqsim wrote earlier, passes [`check`]: non-empty
//! ASCII letters, digits, `-`, `_` and `.`, and not made of dots only. A grid cell's
//! variant name joins checked names with `,` and `=` (`napi,rx_ring_slots=16`):
//! [`check_variant`] checks each part.
//!
//! A flow's name names no file, but results.json, smartbits.csv, the report
//! and the terminal show it (a name with an escape sequence went raw to the terminal,
//! one of 100,000 characters was accepted): [`check_flow`] holds it to the same rule,
//! one rule for every name a user gives.

/// Longest name \[bytes\]: 200, so that the longest file name irqsim makes of it
/// (`smartbits-<name>.csv`, `grid-mlfrr-<name>.svg`, `ethtool-S-<name>`; at most 16
/// bytes more) is within `NAME_MAX` (255).
pub const MAX_NAME_BYTES: usize = 200;

/// Why a name cannot name a file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Empty, or with a character outside letters, digits, `-`, `_`, `.`.
    #[error(
        "`{}` must be non-empty letters, digits, `-`, `_` or `.` (it names files)",
        crate::config::import::dump::escape(.0)
    )]
    Characters(String),
    /// Longer than [`MAX_NAME_BYTES`].
    #[error(
        "`{0}...` is {1} bytes; at most 200 (it names files, and a file name is at most 255 \
         bytes with what irqsim adds to it)"
    )]
    TooLong(String, usize),
    /// Only dots: `.` and `..` name the directory itself or its parent.
    #[error("`{0}` is only dots, which names a directory itself or its parent (it names files)")]
    Dots(String),
}

/// Longest file name \[bytes\]: Linux's `NAME_MAX`.
pub const NAME_MAX_BYTES: usize = 255;

/// Check a whole file name irqsim made of a checked name and its own prefix or suffix
/// (`ethtool-S-<nic>`, `smartbits-<variant>.csv`): the characters of [`check`], at
/// most [`NAME_MAX_BYTES`] (a name of [`MAX_NAME_BYTES`] leaves room for the
/// additions).
pub fn check_file_name(name: &str) -> Result<(), NameError> {
    match check(name) {
        Err(NameError::TooLong(..)) if name.len() <= NAME_MAX_BYTES => Ok(()),
        r => r,
    }
}

/// Check a name that irqsim turns into (part of) a file or directory name.
pub fn check(name: &str) -> Result<(), NameError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(NameError::Characters(name.to_string()));
    }
    if name.chars().all(|c| c == '.') {
        return Err(NameError::Dots(name.to_string()));
    }
    too_long(name)
}

/// [`NameError::TooLong`] for a name longer than [`MAX_NAME_BYTES`] (its first 40
/// characters shown: it is ASCII when this is called on a checked name).
fn too_long(name: &str) -> Result<(), NameError> {
    if name.len() > MAX_NAME_BYTES {
        let head: String = name.chars().take(40).collect();
        return Err(NameError::TooLong(head, name.len()));
    }
    Ok(())
}

/// Check a variant name as results hold it: a scenario variant's name, or a grid
/// cell's `[<variant>,]<parameter>=<value>,...`, each part of which passes [`check`].
pub fn check_variant(name: &str) -> Result<(), NameError> {
    for part in name.split(',') {
        let mut sides = part.splitn(2, '=');
        for side in sides.by_ref() {
            check(side).map_err(|e| match e {
                NameError::Characters(_) => NameError::Characters(name.to_string()),
                NameError::Dots(_) => NameError::Dots(name.to_string()),
                e @ NameError::TooLong(..) => e,
            })?;
        }
    }
    too_long(name)
}

/// Check a flow's name as a scenario gives it: the rule of [`check`] (so no control
/// character reaches a file or the terminal, and no name is longer than
/// [`MAX_NAME_BYTES`]), with a reason that says where the name goes. The message shows
/// the name with its control characters escaped.
pub fn check_flow(name: &str) -> Result<(), String> {
    const WHERE: &str = "results.json, smartbits.csv and the terminal show it";
    check(name).map_err(|e| match e {
        NameError::Characters(n) => format!(
            "`{}` must be non-empty letters, digits, `-`, `_` or `.` ({WHERE})",
            crate::config::import::dump::escape(&n)
        ),
        NameError::TooLong(head, n) => {
            format!("`{head}...` is {n} bytes; at most {MAX_NAME_BYTES} ({WHERE})")
        }
        NameError::Dots(n) => format!("`{n}` is only dots ({WHERE}; the rule of every name)"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_leave_the_directory_are_refused() {
        for ok in [
            "default",
            "napi",
            "dc21143-64b-1flow",
            "v1.2",
            "a_b",
            "..x",
            "x..",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in ["", "../x", "a/b", "a\\b", "x y", "é", "\0"] {
            assert_eq!(
                check(bad),
                Err(NameError::Characters(bad.into())),
                "{bad:?}"
            );
        }
        let long = "v".repeat(201);
        assert_eq!(check(&long), Err(NameError::TooLong("v".repeat(40), 201)));
        assert_eq!(check(&"v".repeat(200)), Ok(()));
        for dots in [".", "..", "..."] {
            assert_eq!(check(dots), Err(NameError::Dots(dots.into())), "{dots}");
        }
    }

    #[test]
    fn grid_cell_names_are_checked_part_by_part() {
        // As grid::expand writes them: scenario variant, then name=value per parameter.
        for ok in [
            "napi,rx_ring_slots=16,ipintrq_maxlen=25",
            "budget=0.5",
            "x=-3",
        ] {
            assert_eq!(check_variant(ok), Ok(()), "{ok}");
        }
        for bad in ["../x", "napi,../x=1", "a=b/c", "napi,", "=1"] {
            assert!(check_variant(bad).is_err(), "{bad}");
        }
        assert_eq!(check_variant(".."), Err(NameError::Dots("..".into())));
        // Each part within the limit, the whole cell's name not.
        let cell = vec!["p=1"; 60].join(",");
        assert!(matches!(check_variant(&cell), Err(NameError::TooLong(..))));
    }

    #[test]
    fn flow_names_follow_the_same_rule_with_control_characters_escaped() {
        assert_eq!(check_flow("100-101"), Ok(()));
        // An escape sequence that would recolour the terminal, shown escaped.
        let e = check_flow("a\u{1b}[31mred").unwrap_err();
        assert!(e.starts_with("`a\\u{1b}[31mred` must be non-empty"), "{e}");
        assert!(!e.contains('\u{1b}'), "{e}");
        let e = check_flow(&"f".repeat(100_000)).unwrap_err();
        assert!(e.contains("is 100000 bytes; at most 200"), "{e}");
        assert!(e.len() < 200, "{e}");
    }

    /// A NIC name of the longest length, 200 bytes, makes `ethtool-S-<name>` of 210: a
    /// file name within NAME_MAX, so the counters' writer accepts it (it refused it
    /// after the sweep); 256 bytes or a bad character are still refused.
    #[test]
    fn a_file_name_of_a_longest_name_and_its_prefix_is_accepted() {
        let nic = "e".repeat(MAX_NAME_BYTES);
        assert!(check(&nic).is_ok());
        assert!(check_file_name(&format!("ethtool-S-{nic}")).is_ok());
        assert!(check_file_name(&"e".repeat(NAME_MAX_BYTES + 1)).is_err());
        assert!(check_file_name(&format!("ethtool-S-{nic}/")).is_err());
        assert!(check_file_name("..").is_err());
    }
}
