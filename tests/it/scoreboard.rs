//! `irqsim validate`'s scoreboard ([`irqsim::validate`]): every measured table the
//! project ships, each simulated at most once in this test binary. [`table_run`] keeps
//! each table's sweep in a `OnceLock`, and the tests of the tables (`livelock_table`,
//! `xdp_paper`, `em_rr`, `tx_sender`) read their figures and verdicts from it, so the
//! scoreboard adds no simulation to the suite.
//!
//! Checked here: no row is `FAIL` (a row outside its tolerance must be declared a known
//! miss, with its mechanism, in `src/validate/misses.rs`); every declared miss names a
//! row that exists; the book's page `book/src/validation-scoreboard.md` is exactly the
//! `scoreboard.md` the command writes; the rows do not depend on the thread count.

use irqsim::validate::{self, Row, Scoreboard, TABLES, TableRun, Verdict};
use std::sync::OnceLock;

/// The number of tables.
const N: usize = TABLES.len();

/// Each table's sweep, run once for the whole test binary.
static RUNS: [OnceLock<TableRun>; N] = [const { OnceLock::new() }; N];

/// The sweep of the table `name`, simulated on the first call.
pub(crate) fn table_run(name: &str) -> &'static TableRun {
    let i = TABLES
        .iter()
        .position(|t| t.name == name)
        .unwrap_or_else(|| panic!("no table {name}"));
    RUNS[i].get_or_init(|| validate::simulate(&TABLES[i], 0).expect("the table runs"))
}

/// The judged rows of the table `name`.
pub(crate) fn rows(name: &str) -> Vec<Row> {
    validate::judge(validate::table(name).expect("a table"), table_run(name))
}

/// The row of `table` for `case` and `quantity`.
pub(crate) fn row(table: &str, case: &str, quantity: &str) -> Row {
    rows(table)
        .into_iter()
        .find(|r| r.case == case && r.quantity == quantity)
        .unwrap_or_else(|| panic!("{table}: no row {case} / {quantity}"))
}

/// A row that must be a known miss with the tolerance `limit` (as the table declares
/// it): asserted, and returned for the caller's own checks of the figures.
pub(crate) fn known_miss(table: &str, case: &str, quantity: &str, limit: f64) -> Row {
    let r = row(table, case, quantity);
    eprintln!(
        "{table}, {case}, {quantity}: measured {}, simulated {}, {} (tolerance {}): {}",
        r.measured,
        r.simulated,
        r.error_shown(),
        r.tolerance.shown(&r.unit),
        r.verdict.as_str()
    );
    assert_eq!(r.tolerance.limit, limit, "{table} {case}: the tolerance");
    assert_eq!(r.verdict, Verdict::KnownMiss, "{table} {case}: {r:?}");
    assert!(r.mechanism.is_some());
    r
}

/// The whole scoreboard, from the cached sweeps.
fn scoreboard() -> &'static Scoreboard {
    static CELL: OnceLock<Scoreboard> = OnceLock::new();
    CELL.get_or_init(|| Scoreboard::new(TABLES.iter().flat_map(|t| rows(t.name)).collect()))
}

#[test]
fn no_row_of_the_scoreboard_fails() {
    let s = scoreboard();
    eprint!("{}", s.text());
    let failed: Vec<String> = s
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .map(|r| {
            format!(
                "{} {} {}: measured {}, simulated {}, {} (tolerance {})",
                r.table,
                r.case,
                r.quantity,
                r.measured,
                r.simulated,
                r.error_shown(),
                r.tolerance.shown(&r.unit)
            )
        })
        .collect();
    assert!(
        failed.is_empty(),
        "rows outside their tolerance and not declared in src/validate/misses.rs:\n{}",
        failed.join("\n")
    );
    // Every table gave rows, and the summary counts them.
    for t in TABLES {
        assert!(s.rows.iter().any(|r| r.table == t.name), "{}", t.name);
    }
    let sum = s.summary;
    assert_eq!(sum.rows, sum.pass + sum.known_miss + sum.fail);
    assert_eq!(sum.rows, s.rows.len());
}

#[test]
fn every_declared_miss_names_rows_that_exist() {
    let s = scoreboard();
    for m in validate::misses::KNOWN_MISSES {
        for case in m.cases {
            assert!(
                s.row(m.table, case, m.quantity).is_some(),
                "src/validate/misses.rs declares {} {case} {}, which no table has",
                m.table,
                m.quantity
            );
        }
    }
}

#[test]
fn the_books_scoreboard_page_is_the_commands_scoreboard_md() {
    let page =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/validation-scoreboard.md");
    let got = std::fs::read_to_string(&page).unwrap_or_default();
    let want = scoreboard().markdown();
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map_or(got.lines().count().min(want.lines().count()), |i| i);
        panic!(
            "book/src/validation-scoreboard.md differs from the scoreboard.md `irqsim \
             validate` writes (first at line {}); regenerate it: cargo run --release -- \
             validate --out /tmp/sb && cp /tmp/sb/scoreboard.md \
             book/src/validation-scoreboard.md",
            line + 1
        );
    }
}

#[test]
fn the_rows_do_not_depend_on_the_thread_count() {
    // The shortest tables, run again on one thread: the same rows as the cached sweeps
    // (which ran on one thread per core).
    for name in ["em-rr-freebsd62", "tx-sender-freebsd48"] {
        let t = validate::table(name).unwrap();
        let one = validate::judge(t, &validate::simulate(t, 1).unwrap());
        assert_eq!(one, rows(name), "{name}");
    }
}

/// `irqsim validate` at `out` with `args` (the shortest table, the ttcp sender, unless
/// the arguments name another).
fn validate_cmd(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_irqsim"))
        .arg("validate")
        .args(args)
        .output()
        .expect("irqsim runs")
}

#[test]
fn the_command_writes_its_files_refuses_bad_arguments_and_what_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v");
    let o = out.to_str().unwrap();
    // A table that is not one: exit 2, the names listed, nothing created.
    let r = validate_cmd(&["--only", "nope", "--out", o]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("no table `nope`") && err.contains("em-rr-freebsd62"),
        "{err}"
    );
    assert!(!out.exists());
    // --seed would change the tables: refused.
    let r = validate_cmd(&["--seed", "3", "--out", o]);
    assert_eq!(r.status.code(), Some(2));
    assert!(!out.exists());
    // One table: exit 0, its rows printed with the summary, both files written, the
    // JSON the same rows as the library's.
    let r = validate_cmd(&[
        "--only",
        "tx-sender-freebsd48",
        "--out",
        o,
        "--threads",
        "1",
    ]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("6 rows: 6 pass, 0 known miss, 0 FAIL"),
        "{text}"
    );
    let json: Scoreboard =
        serde_json::from_str(&std::fs::read_to_string(out.join("scoreboard.json")).unwrap())
            .unwrap();
    assert_eq!(json.rows, rows("tx-sender-freebsd48"));
    let md = std::fs::read_to_string(out.join("scoreboard.md")).unwrap();
    assert_eq!(md, json.markdown());
    // A file of the user's at one of the names: exit 2, left as it was.
    std::fs::write(out.join("scoreboard.md"), "# my notes\n").unwrap();
    let r = validate_cmd(&["--only", "tx-sender-freebsd48", "--out", o, "--quiet"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("not irqsim's own file"));
    assert_eq!(
        std::fs::read_to_string(out.join("scoreboard.md")).unwrap(),
        "# my notes\n"
    );
}
