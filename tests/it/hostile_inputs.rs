//! Hostile inputs (issue 33): files and arguments a careless or hostile user could give,
//! each refused by the real binary at once, before anything is simulated or written --
//! exit 2, a message naming the file, the field and the reason, nothing under `--out`
//! -- or, for the few that are lowered rather than refused, bounded and said.
//!
//! One table, [`CASES`]: a new attack is one more row (what to edit in the reference
//! scenario and model, the command's arguments, the exit code and the phrases its
//! stderr must hold). Every run is killed after [`TIMEOUT`], failing the test, so an
//! input that makes irqsim hang (a FIFO) or simulate for hours cannot hang CI.
//! The "before" of each row is what issue 33 measured on the binary before the fixes.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Longest a refusal may take: the loader reads a few MB at most.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The address space each command may have [bytes]: 1.5 GiB, ten times what the largest
/// refusal here needs (a 256 MiB capture read once), so that an input that makes
/// irqsim allocate without bound fails its row at once (an abort, exit 134) instead of
/// taking the machine's memory (issue 53: 4 GiB for a CPU list, 1.9 GB for a dump).
/// irqsim takes it as the memory it may use when that is less than the kernel's figure,
/// so a row can ask for more memory than that with sparse files.
const ADDRESS_SPACE: u64 = 3 << 29;

/// The reference scenario and model written into a temp dir (with the layout its
/// relative paths need), edited by a row.
struct Case {
    dir: tempfile::TempDir,
    scenario: Value,
    model: Value,
    /// Applied to the scenario's JSON text before it is written (what a `Value` cannot
    /// hold: a key given twice).
    tweak: Option<fn(String) -> String>,
}

impl Case {
    fn new() -> Case {
        let read = |p: &str| -> Value {
            serde_json::from_str(&std::fs::read_to_string(format!("{ROOT}/{p}")).unwrap()).unwrap()
        };
        let mut scenario = read("scenarios/dc21143-64b-1flow.json");
        // Short points: an input wrongly accepted fails fast, not after 140 s.
        scenario["duration_s"] = json!(0.01);
        scenario["drain_s"] = json!(0.01);
        let dir = tempfile::tempdir().unwrap();
        // (Rows write their own files beside the scenario before it is written.)
        std::fs::create_dir_all(dir.path().join("scenarios/measured")).unwrap();
        Case {
            dir,
            scenario,
            model: read("models/p3-448-dc21143-freebsd4.json"),
            tweak: None,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Write the files; the scenario's path.
    fn write(&self) -> PathBuf {
        let w = |rel: &str, text: String| {
            let p = self.path(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        };
        let text = serde_json::to_string(&self.scenario).unwrap();
        w(
            "scenarios/case.json",
            self.tweak.map_or(text.clone(), |t| t(text)),
        );
        w(
            "models/p3-448-dc21143-freebsd4.json",
            serde_json::to_string(&self.model).unwrap(),
        );
        std::fs::create_dir_all(self.path("scenarios/measured")).unwrap();
        std::fs::copy(
            format!("{ROOT}/scenarios/measured/test_25Mx64x1.csv"),
            self.path("scenarios/measured/test_25Mx64x1.csv"),
        )
        .unwrap();
        self.path("scenarios/case.json")
    }
}

/// Where a row's input goes: `SCENARIO` and `OUT` in its arguments are replaced by the
/// scenario's path and the output directory.
struct Row {
    /// The attack, as a test failure names it.
    name: &'static str,
    /// What it changes in the reference scenario and model.
    edit: fn(&mut Case),
    /// The command's arguments.
    args: &'static [&'static str],
    /// Exit code expected.
    code: i32,
    /// Phrases stderr must hold (file, field, reason).
    says: &'static [&'static str],
    /// Whether the command may write `--out` (only the rows that are bounded, not
    /// refused).
    writes: bool,
    /// Phrases stderr must not hold (what a fixed message no longer says, what must
    /// never be printed).
    lacks: &'static [&'static str],
}

const RUN: &[&str] = &["run", "SCENARIO", "--out", "OUT", "--no-plots"];

fn no_edit(_: &mut Case) {}

/// A constant 64-byte flow of the reference scenario named `name`.
fn flow(name: String) -> Value {
    json!({"name": name, "from": "dc0", "to": "dc1", "frame_bytes": 64, "arrivals": "constant"})
}

const CASES: &[Row] = &[
    // Before: accepted with an estimate of 34,735 min, then `memory allocation of
    // 103079215080 bytes failed` (exit 134), `.checkpoint/experiment.id` left behind.
    Row {
        name: "replications 4294967295",
        edit: |c| c.scenario["replications"] = json!(4294967295u64),
        args: RUN,
        code: 2,
        says: &["case.json", "`replications`", "at most 10000 replications"],
        writes: false,
        lacks: &[],
    },
    // Runs = variants x points x replications, bounded as a product: 200 points x
    // 10,000 replications (each within its own limit) is 2,000,000 runs.
    Row {
        name: "2e6 runs",
        edit: |c| {
            c.scenario["replications"] = json!(10000);
            c.scenario["load"] = json!({"unit": "percent", "from": 0.1, "to": 20, "step": 0.1});
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`replications`",
            "= 2000000 runs",
            "at most 1000000",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: a list of 1e6 points was accepted while a range of 100,001 was refused.
    Row {
        name: "points list of 100001",
        edit: |c| {
            let pts: Vec<f64> = (0..100_001).map(|i| 10.0 + i as f64 * 1e-4).collect();
            c.scenario["load"] = json!({"unit": "percent", "points": pts});
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`load.points`",
            "100001 points; at most 100000",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "points range of 100001",
        edit: |c| c.scenario["load"] = json!({"unit": "pps", "from": 1, "to": 100001, "step": 1}),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`load`",
            "range gives 100001 points; at most 100000",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: 1,001 plain variants passed while a grid stopped at 1,000.
    Row {
        name: "1001 plain variants",
        edit: |c| {
            let v: Vec<Value> = (0..1001)
                .map(|i| json!({"name": format!("v{i}")}))
                .collect();
            c.scenario["variants"] = json!(v);
        },
        args: RUN,
        code: 2,
        says: &["case.json", "`variants`", "1001 variants; at most 1000"],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "10001 flows",
        edit: |c| {
            let f: Vec<Value> = (0..10_001).map(|i| flow(format!("f{i}"))).collect();
            c.scenario["workload"]["flows"] = json!(f);
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`workload.flows`",
            "10001 flows; at most 10000",
        ],
        writes: false,
        lacks: &[],
    },
    // 10,000 flows (the limit) x 100 points x 10,000 replications (1e6 runs, the
    // limit): every count within its own bound, but the runs' figures alone would be
    // 50 TB. Before: no estimate of memory at all (10,000 flows took 5 GB).
    Row {
        name: "sweep larger than the machine's memory",
        edit: |c| {
            let f: Vec<Value> = (0..10_000).map(|i| flow(format!("f{i}"))).collect();
            c.scenario["workload"]["flows"] = json!(f);
            let pts: Vec<f64> = (0..100).map(|i| 1.0 + i as f64 * 0.1).collect();
            c.scenario["load"] = json!({"unit": "pps", "points": pts});
            c.scenario["duration_s"] = json!(1);
            c.scenario["replications"] = json!(10000);
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "the sweep would need at least",
            "for the results of 1000000 run(s)",
            // (MemAvailable in /proc/meminfo, or the rows' address-space limit when less.)
            "of memory available (",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: 2,321 cycles at 1e-6 MHz were 2.3e12 ns and accepted; at 1e-12 MHz a
    // cost silently became about zero.
    Row {
        name: "clock_mhz 1e-6",
        edit: |c| c.model["cpu"]["clock_mhz"] = json!(1e-6),
        args: RUN,
        code: 2,
        says: &[
            "p3-448-dc21143-freebsd4.json",
            "`cpu.clock_mhz`",
            "must be 1 to 10000 MHz",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "clock_mhz 1e-12",
        edit: |c| c.model["cpu"]["clock_mhz"] = json!(1e-12),
        args: RUN,
        code: 2,
        says: &[
            "p3-448-dc21143-freebsd4.json",
            "`cpu.clock_mhz`",
            "must be 1 to 10000 MHz",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "cost of 2e9 cycles",
        edit: |c| c.model["nics"][0]["driver"]["rx_per_packet"] = json!({"cycles": 2e9}),
        args: RUN,
        code: 2,
        says: &[
            "p3-448-dc21143-freebsd4.json",
            "nics[0].driver.rx_per_packet",
            "`cycles` must be at most 1e9",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: ran as 1 transaction and printed load 0.00.
    Row {
        name: "outstanding 0.5",
        edit: |c| c.scenario["load"] = json!({"unit": "outstanding", "points": [0.5]}),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`load.points[0]`",
            "must be a whole number of outstanding transactions, got 0.5",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: refused, but as "ends at 18446744.07 s" (a saturated value).
    Row {
        name: "trace window ending at 1e9 s",
        edit: no_edit,
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--trace",
            "0s..1e9s",
            "--trace-point",
            "10",
        ],
        code: 2,
        says: &[
            "--trace",
            "`1e9s`: beyond the 18446744 s simulated time can hold",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: exit 134 (stack overflow) in 2.5 s.
    Row {
        name: "fit --profile-points 1000",
        edit: no_edit,
        args: &[
            "fit",
            "SCENARIO",
            "--param",
            "kernel.netisr_per_packet.ns=100..5000",
            "--profile-points",
            "1000",
            "--out",
            "OUT",
        ],
        code: 2,
        says: &["--profile-points 1000: at most 200 points per profile"],
        writes: false,
        lacks: &[],
    },
    // A box of a million sweeps around the optimum and at every profile point.
    Row {
        name: "fit --scan-points 1000000",
        edit: no_edit,
        args: &[
            "fit",
            "SCENARIO",
            "--param",
            "kernel.netisr_per_packet.ns=100..5000",
            "--scan-points",
            "1000000",
            "--out",
            "OUT",
        ],
        code: 2,
        says: &["--scan-points 1000000: at most 100000 lattice points per box"],
        writes: false,
        lacks: &[],
    },
    // Before: 212 s for a job of 0.03 s (10,000 threads); 100,000 spun until killed.
    // Lowered, said, and the sweep runs.
    Row {
        name: "--threads 100000",
        edit: no_edit,
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--no-plots",
            "--threads",
            "100000",
        ],
        code: 0,
        says: &["--threads 100000 is more than 4 per available core"],
        writes: true,
        lacks: &[],
    },
    // Before: memory grew at 0.6-0.9 GB/s until the machine ran out; a FIFO blocked
    // for ever. (The read_limit primitive; these rows pin it.)
    Row {
        name: "model /dev/zero",
        edit: |c| c.scenario["model"] = json!("/dev/zero"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`model`",
            "/dev/zero",
            "a character device, not a regular file",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "model /dev/urandom",
        edit: |c| c.scenario["model"] = json!("/dev/urandom"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`model`",
            "/dev/urandom",
            "a character device, not a regular file",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "measured /dev/zero",
        edit: |c| c.scenario["measured"] = json!("/dev/zero"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`measured`",
            "/dev/zero",
            "a character device, not a regular file",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "measured_rates /dev/zero",
        edit: |c| c.scenario["measured_rates"] = json!("/dev/zero"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`measured_rates`",
            "/dev/zero",
            "a character device, not a regular file",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "measured_rates is a FIFO",
        edit: |c| {
            mkfifo(&c.path("scenarios/measured/rates-fifo.csv"));
            c.scenario["measured_rates"] = json!("measured/rates-fifo.csv");
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`measured_rates`",
            "rates-fifo.csv",
            "a FIFO (named pipe), not a regular file",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "model is a FIFO",
        edit: |c| {
            mkfifo(&c.path("scenarios/fifo.json"));
            c.scenario["model"] = json!("fifo.json");
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`model`",
            "fifo.json",
            "a FIFO (named pipe), not a regular file",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "measured is a FIFO",
        edit: |c| {
            mkfifo(&c.path("scenarios/measured/fifo.csv"));
            c.scenario["measured"] = json!("measured/fifo.csv");
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`measured`",
            "fifo.csv",
            "a FIFO (named pipe), not a regular file",
        ],
        writes: false,
        lacks: &[],
    },
    // --- Issue 53: the new inputs. Each "before" is what the issue measured. ---
    // 1. Before: "memory allocation of 4294967296 bytes failed" (exit 134): each range
    //    was expanded before duplicates were removed.
    Row {
        name: "53.1 import-host: On-line CPU(s) list 0-65535 x 100000",
        edit: |c| {
            let d = host(c);
            let l = std::fs::read_to_string(d.join("lscpu")).unwrap();
            let l = l.replace(
                "On-line CPU(s) list: 0-7",
                &format!("On-line CPU(s) list: {}", long_cpu_list()),
            );
            std::fs::write(d.join("lscpu"), l).unwrap();
        },
        args: &["import-host", "CASE/dumps"],
        code: 2,
        says: &["lscpu: 65536 online CPUs: the model has at most 64 cores"],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.1 import-host: an irq-affinity line of 0-65535 x 100000",
        edit: |c| {
            let d = host(c);
            let mut a = std::fs::read_to_string(d.join("irq-affinity")).unwrap();
            a.push_str(&format!(
                "/proc/irq/999/smp_affinity_list:{}\n",
                long_cpu_list()
            ));
            std::fs::write(d.join("irq-affinity"), a).unwrap();
        },
        args: &["import-host", "CASE/dumps"],
        code: 0,
        says: &["wrote the model to stdout"],
        writes: false,
        lacks: &[],
    },
    // 2. Before: one 16 MiB dump of junk took 1.9 GB and 16 s (every line kept with
    //    its text); five such dumps aborted.
    Row {
        name: "53.2 import-host: a 16 MiB dump of junk lines",
        edit: |c| junk(&host(c).join("ip-link")),
        args: &["import-host", "CASE/dumps"],
        code: 0,
        says: &[
            "lines not understood (1677721; not used, check them)",
            "ip-link: ... and 1677701 more line(s) not understood",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.2 import-host: five 16 MiB dumps",
        edit: |c| {
            let d = host(c);
            for f in [
                "ethtool-eth0",
                "ethtool-eth1",
                "irq-affinity",
                "ip-link",
                "uname-r",
            ] {
                junk(&d.join(f));
            }
        },
        args: &["import-host", "CASE/dumps"],
        code: 2,
        says: &["ip-link: cannot read: would take what this command reads past 67108864 bytes"],
        writes: false,
        lacks: &[],
    },
    // 4. Before: each capture, and each spelling of one, was read and held on its own:
    //    40 links to one 256 MiB capture ran 141 s and aborted.
    // Before: the captures had a budget of their own (256 MiB), JSON, CSV and results
    //    none; each file's size was checked only as it came to be read.
    Row {
        name: "53.4 five captures of 250 MiB: past the command's budget, none read",
        edit: |c| {
            let flows: Vec<Value> = (0..5)
                .map(|i| {
                    let l = format!("cap/c{i}.pcap");
                    sparse(&c.path(&format!("scenarios/{l}")), 250 << 20);
                    json!({"name": format!("f{i}"), "from": "dc0", "to": "dc1",
                           "arrivals": {"pcap": l}})
                })
                .collect();
            replay(c, "cap/c0.pcap");
            c.scenario["workload"]["flows"] = json!(flows);
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "workload.flows[4].arrivals.pcap",
            // (Already read: the four captures before it, 1048576000 bytes, and the
            // scenario, model and table.)
            "c4.pcap`: would take what this command reads past 1073741824 bytes (262144000 \
             bytes, with 10485",
            "no capture was read",
        ],
        writes: false,
        // (Each capture is zeros: one read would be refused as no pcap.)
        lacks: &["not a readable pcap"],
    },
    // Before: `compare` read a.json whole (and refused it as no JSON) before it looked
    //    at b.json; two results within their own limit (1 GiB each) were read whatever
    //    they added up to.
    Row {
        name: "53.4 compare two results.json of 600 MiB: past the command's budget, none read",
        edit: |c| {
            sparse(&c.path("a.json"), 600 << 20);
            sparse(&c.path("b.json"), 600 << 20);
        },
        args: &["compare", "CASE/a.json", "CASE/b.json", "--out", "OUT"],
        code: 2,
        says: &[
            "b.json: cannot read file: would take what this command reads past 1073741824 \
             bytes (629145600 bytes, with 629145600 bytes read already",
        ],
        writes: false,
        lacks: &["invalid JSON"],
    },
    // Before: a capture was read (bounded by the captures' 256 MiB budget) before the
    //    memory was checked. Now each capture's most while read is estimated from its
    //    size on disk (its bytes, and 152 bytes for each of up to size/54 records) and
    //    checked, all together, against the memory the process may have (here the
    //    1.5 GiB address-space limit every row runs under) before any capture is read.
    Row {
        name: "53.4 two captures of 250 MiB: more memory than the process may have, none read",
        edit: |c| {
            sparse(&c.path("scenarios/cap/a.pcap"), 250 << 20);
            sparse(&c.path("scenarios/cap/b.pcap"), 250 << 20);
            replay(c, "cap/a.pcap");
            c.scenario["workload"]["flows"] = json!([
                {"name": "c", "from": "dc0", "to": "dc1", "arrivals": {"pcap": "cap/a.pcap"}},
                {"name": "d", "from": "dc0", "to": "dc1", "arrivals": {"pcap": "cap/b.pcap"}}
            ]);
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "workload.flows[1].arrivals.pcap",
            "b.pcap` (262.1 MB on disk) may take up to 1.0 GB while it is read (its bytes, \
             and 152 bytes held for each of up to 4854518 records of 54 bytes, the shortest), \
             2.0 GB with the process and the captures before it: more than the 1.6 GB of \
             memory available (the process's address-space limit, RLIMIT_AS (ulimit -v)); \
             no capture was read",
        ],
        writes: false,
        lacks: &["not a readable pcap"],
    },
    Row {
        name: "53.4 40 flows naming 40 links to one 200 MiB capture: read once",
        edit: |c| {
            sparse(&c.path("scenarios/cap/big.pcap"), 200 << 20);
            replay(c, "cap/big.pcap");
            let flows: Vec<Value> = (0..40)
                .map(|i| {
                    let l = format!("cap/l{i}.pcap");
                    std::os::unix::fs::symlink("big.pcap", c.path(&format!("scenarios/{l}")))
                        .unwrap();
                    json!({"name": format!("f{i}"), "from": "dc0", "to": "dc1",
                           "arrivals": {"pcap": l}})
                })
                .collect();
            c.scenario["workload"]["flows"] = json!(flows);
        },
        args: RUN,
        code: 2,
        says: &[
            "workload.flows[39].arrivals.pcap",
            "not a readable pcap or pcapng file",
        ],
        writes: false,
        lacks: &["past 268435456 bytes"],
    },
    // 5. Before: records were read raw; each of these ran with exit 0.
    Row {
        name: "53.5 pcap: time stamp fraction 0xffffffff us",
        edit: |c| pcap_with(c, "frac.pcap", REC2_FRAC_AT, u32::MAX),
        args: RUN,
        code: 2,
        says: &[
            "frac.pcap",
            "record 2 (from 1): its time stamp's fraction of a second is 4294967295 us, not below 1000000 us",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.5 pcap: caplen > orig_len",
        edit: |c| pcap_with(c, "cap.pcap", REC2_ORIG_AT, 100),
        args: RUN,
        code: 2,
        says: &[
            "record 2 (from 1): its captured length (124 bytes) is more than its original length (100 bytes)",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.5 pcap: orig_len 0",
        edit: |c| pcap_with(c, "zero.pcap", REC2_ORIG_AT, 0),
        args: RUN,
        code: 2,
        says: &["record 2 (from 1): its original length is 0 bytes"],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.5 pcap: caplen > snaplen",
        edit: |c| pcap_with(c, "snap.pcap", SNAPLEN_AT, 50),
        args: RUN,
        code: 2,
        says: &[
            "record 1 (from 1): its captured length (60 bytes) is more than the file's snapshot length (50 bytes)",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.5 pcap: snaplen 0",
        edit: |c| pcap_with(c, "snap0.pcap", SNAPLEN_AT, 0),
        args: RUN,
        code: 2,
        says: &["snap0.pcap", "the file header's snapshot length is 0"],
        writes: false,
        lacks: &[],
    },
    // Before: refused, "InterfaceDescriptionOption: IfTzone length != 1".
    Row {
        name: "53.5 pcapng: a valid 4-byte if_tzone option is accepted",
        edit: |c| {
            let b = pcapng(&[(9, &[6]), (10, &[0, 0, 0, 0])]);
            std::fs::write(c.path("scenarios/tz.pcapng"), b).unwrap();
            replay(c, "tz.pcapng");
        },
        args: RUN,
        code: 0,
        // 4. The capture's 150 replayed frames (16 bytes each, as held) are in the
        //    memory estimate, and so is the peak of reading it; before, no capture was.
        says: &[
            "estimated memory: about",
            ", 2.4 KB for captures and tables; ",
            " while the captures are read, before the sweep)",
        ],
        writes: true,
        lacks: &["IfTzone"],
    },
    // Before: "record 1 (from 1): ..." for an interface's block.
    Row {
        name: "53.5 pcapng: an error in a block that is not a packet names the block",
        edit: |c| {
            let b = pcapng(&[(9, &[6, 0])]);
            std::fs::write(c.path("scenarios/idb.pcapng"), b).unwrap();
            replay(c, "idb.pcapng");
        },
        args: RUN,
        code: 2,
        says: &[
            "block 2 (an Interface Description Block): option if_tsresol (9) of 2 bytes; it has 1",
        ],
        writes: false,
        lacks: &["record 1"],
    },
    // 6. Before: 10^6 values (7.9 MB) did not finish in 120 s.
    Row {
        name: "53.6 a grid parameter of 10^6 values",
        edit: |c| {
            let v: Vec<u64> = (1..=1_000_000).collect();
            c.scenario["grid"] = json!({"parameters": [
                {"path": "nics.dc0.rx_ring_slots", "values": v}
            ]});
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`grid.parameters[0].values`",
            "1000000 values; at most 1000",
        ],
        writes: false,
        lacks: &[],
    },
    // 7. Before: these failed after the sweep, with exit 1, leaving results.json.
    Row {
        name: "53.7 --linux-counters, NIC name `a/b`",
        edit: |c| {
            c.model["nics"][0]["name"] = json!("a/b");
            c.scenario["workload"]["flows"][0]["from"] = json!("a/b");
        },
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--no-plots",
            "--linux-counters",
        ],
        code: 2,
        says: &[
            "p3-448-dc21143-freebsd4.json",
            "nics[0].name",
            "`a/b` must be non-empty letters, digits",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.7 --linux-counters, NIC name with a newline and an escape",
        edit: |c| {
            c.model["nics"][0]["name"] = json!("x\n\u{1b}[31my");
            c.scenario["workload"]["flows"][0]["from"] = json!("x\n\u{1b}[31my");
        },
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--no-plots",
            "--linux-counters",
        ],
        code: 2,
        says: &[
            "nics[0].name",
            "`x\\n\\u{1b}[31my` must be non-empty letters",
        ],
        writes: false,
        lacks: &["\u{1b}"],
    },
    Row {
        name: "53.7 --linux-counters, NIC name of 300 characters",
        edit: |c| {
            let n = "n".repeat(300);
            c.model["nics"][0]["name"] = json!(n);
            c.scenario["workload"]["flows"][0]["from"] = json!(n);
        },
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--no-plots",
            "--linux-counters",
        ],
        code: 2,
        says: &["nics[0].name", "is 300 bytes; at most 200"],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.7 a variant name of 250 characters",
        edit: |c| c.scenario["variants"] = json!([{"name": "v".repeat(250)}]),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`variants[0].name`",
            "is 250 bytes; at most 200",
        ],
        writes: false,
        lacks: &[],
    },
    // 8. Before: accepted; NDR 0 pps after 4 trials.
    Row {
        name: "53.8 ndr --resolution 1e-15",
        edit: no_edit,
        args: &["ndr", "SCENARIO", "--resolution", "1e-15", "--out", "OUT"],
        code: 2,
        says: &["--resolution", "a relative width of at least 0.000001 %"],
        writes: false,
        lacks: &[],
    },
    // 9. Before: accepted; 400,000 rows took 754 MB.
    Row {
        name: "53.9 measured_rates: an unclosed quote in the last field",
        edit: |c| {
            std::fs::write(
                c.path("scenarios/measured/rates.csv"),
                "variant,figure,measured,source\ndefault,forwarded_pps,100,\"B04 L56\n",
            )
            .unwrap();
            c.scenario["measured_rates"] = json!("measured/rates.csv");
            c.scenario["load"] = json!({"unit": "percent", "points": [20]});
        },
        args: RUN,
        code: 2,
        says: &[
            "rates.csv",
            "line 2",
            "a quote `\"` opened on this line is never closed",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.9 measured_rates: 400,000 rows",
        edit: |c| {
            let mut t = String::from("variant,figure,measured\n");
            for i in 0..400_000 {
                t.push_str(&format!("default,counters.c{i}_per_s,1\n"));
            }
            std::fs::write(c.path("scenarios/measured/rates.csv"), t).unwrap();
            c.scenario["measured_rates"] = json!("measured/rates.csv");
            c.scenario["load"] = json!({"unit": "percent", "points": [20]});
        },
        args: RUN,
        code: 2,
        says: &["rates.csv", "more than 10000 rows"],
        writes: false,
        lacks: &[],
    },
    // Before: ran with exit 0 and printed "no such counter" after the sweep.
    Row {
        name: "53.9 measured_rates: a counter name that no model counter has",
        edit: |c| {
            std::fs::write(
                c.path("scenarios/measured/rates.csv"),
                "variant,figure,measured\ndefault,forwarded_pps,100\n\
                 default,counters.no_such_counter_per_s,5\n\
                 default,counters.dc0.interupts_per_s,5\n",
            )
            .unwrap();
            c.scenario["measured_rates"] = json!("measured/rates.csv");
            c.scenario["load"] = json!({"unit": "percent", "points": [20]});
            c.scenario["drain_s"] = json!(0);
        },
        args: RUN,
        code: 2,
        says: &[
            "rates.csv: line 3: column `figure`",
            "`counters.no_such_counter_per_s`: no counter `no_such_counter` in the model of \
             variant `default`",
            "the nearest: ",
        ],
        writes: false,
        lacks: &["no such counter"],
    },
    // 10. Before: 1e12 MB accepted.
    Row {
        name: "53.10 --trace-limit-mb 1e12",
        edit: no_edit,
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--trace",
            "0s..0.001s",
            "--trace-point",
            "10",
            "--trace-limit-mb",
            "1e12",
        ],
        code: 2,
        says: &[
            "--trace-limit-mb",
            "1e12 MB: must be more than 0 and at most 1000 MB",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: the trace, held in memory until written, was not in the estimate.
    Row {
        name: "53.10 the trace is in the memory estimate",
        edit: no_edit,
        args: &[
            "run",
            "SCENARIO",
            "--out",
            "OUT",
            "--no-plots",
            "--trace",
            "0s..0.001s",
            "--trace-point",
            "10",
            "--trace-limit-mb",
            // (500, not 1000: twice 1000 MB is more than the rows' 1.5 GiB address
            // space, which irqsim takes as the memory it may use.)
            "500",
        ],
        code: 0,
        says: &["estimated memory: about", ", 1.0 GB for the trace)"],
        writes: true,
        lacks: &[],
    },
    // 11. Quiet acceptances. Before: each ran with exit 0.
    Row {
        name: "53.11 a key given twice in one object",
        edit: |c| c.tweak = Some(|t| t.replacen('{', "{\"drain_s\":5,", 1)),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "the key `drain_s` is given twice in one object",
            "line 1",
        ],
        writes: false,
        lacks: &[],
    },
    Row {
        name: "53.11 two flows of one name",
        edit: |c| {
            c.scenario["workload"]["flows"] = json!([flow("a".into()), flow("a".into())]);
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "workload.flows[1].name",
            "`a` is also the name of `flows[0]`",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: both ran with exit 0, the escape sequence raw in smartbits.csv and on the
    // terminal, the 100,000-byte name in every table.
    Row {
        name: "53 a flow name with an escape sequence",
        edit: |c| c.scenario["workload"]["flows"][0]["name"] = json!("a\u{1b}[2Jb"),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`workload.flows[0].name`",
            "`a\\u{1b}[2Jb` must be non-empty letters, digits, `-`, `_` or `.` \
             (results.json, smartbits.csv and the terminal show it)",
        ],
        writes: false,
        lacks: &["\u{1b}"],
    },
    Row {
        name: "53 a flow name of 100,000 bytes",
        edit: |c| c.scenario["workload"]["flows"][0]["name"] = json!("f".repeat(100_000)),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`workload.flows[0].name`",
            "is 100000 bytes; at most 200",
        ],
        writes: false,
        lacks: &[
            "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        ],
    },
    // Before: the key went raw into the message on the terminal.
    Row {
        name: "53 a variant's patch of a flow named with an escape sequence",
        edit: |c| {
            c.scenario["variants"] =
                json!([{"name": "v", "workload": {"flows": {"x\u{1b}[2J": {"frame_bytes": 128}}}}]);
        },
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "no element named or numbered `x\\u{1b}[2J` to override",
        ],
        writes: false,
        lacks: &["\u{1b}"],
    },
    Row {
        name: "53.11 a load point given twice",
        edit: |c| c.scenario["load"] = json!({"unit": "percent", "points": [10, 20, 10]}),
        args: RUN,
        code: 2,
        says: &[
            "case.json",
            "`load.points[2]`",
            "10 is given twice (also `load.points[0]`)",
        ],
        writes: false,
        lacks: &[],
    },
    // Before: "100000 flows once each capture's 5-tuples are flows of their own" with
    // no capture.
    Row {
        name: "53.11 a variant's patch of 10^5 flows",
        edit: |c| {
            let f: Vec<Value> = (0..100_000).map(|i| flow(format!("f{i}"))).collect();
            c.scenario["variants"] = json!([{"name": "v", "workload": {"flows": f}}]);
        },
        args: RUN,
        code: 2,
        says: &["case.json", "100000 flows; at most 10000"],
        writes: false,
        lacks: &["capture's 5-tuples"],
    },
];

/// An 8-core ixgbe router's dumps (tests/it/import_host.rs) in `dumps/` of the case.
fn host(c: &Case) -> PathBuf {
    let d = c.path("dumps");
    crate::import_host::ixgbe_host(&d, 0);
    d
}

/// `"junk-line\n"` repeated to 16 MiB less 6 bytes, the largest dump read
/// (1,677,721 lines), written without a line held per line.
fn junk(p: &Path) {
    std::fs::write(p, "junk-line\n".repeat(1_677_721)).unwrap();
}

/// A CPU list of `0-65535` repeated 100,000 times (0.8 MB).
fn long_cpu_list() -> String {
    vec!["0-65535"; 100_000].join(",")
}

/// The case's flow replaying `scenarios/<rel>`, at one load point, without the
/// measured table (whose 64-byte frames a capture does not have).
fn replay(c: &mut Case, rel: &str) {
    c.scenario["workload"]["flows"] = json!([
        {"name": "c", "from": "dc0", "to": "dc1", "arrivals": {"pcap": rel}}
    ]);
    c.scenario["load"] = json!({"unit": "percent", "points": [20]});
    c.scenario.as_object_mut().unwrap().remove("measured");
}

/// The two-5-tuple capture of tests/it/capture.rs (big-endian pcap, microsecond
/// stamps; record 1 is 60 bytes, so record 2's header is at byte 100), with the
/// 32-bit field at byte `at` set to `v`, written to `scenarios/<name>`.
fn pcap_with(c: &mut Case, name: &str, at: usize, v: u32) {
    let mut b = crate::capture::as_pcap(&crate::capture::two_tuples());
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
    std::fs::write(c.path(&format!("scenarios/{name}")), b).unwrap();
    replay(c, name);
}

/// Byte offsets in [`pcap_with`]'s file: the header's snapshot length, and record 2's
/// time stamp fraction and original length.
const SNAPLEN_AT: usize = 16;
const REC2_FRAC_AT: usize = 100 + 4;
const REC2_ORIG_AT: usize = 100 + 12;

/// A big-endian pcapng block: type, total length, body (padded to 4), total length.
fn ng_block(t: u32, body: &[u8]) -> Vec<u8> {
    let mut body = body.to_vec();
    body.resize(body.len().div_ceil(4) * 4, 0);
    let len = (body.len() + 12) as u32;
    let mut b = t.to_be_bytes().to_vec();
    b.extend(len.to_be_bytes());
    b.extend(&body);
    b.extend(len.to_be_bytes());
    b
}

/// A pcapng file (big-endian): a section header, one Ethernet interface with the
/// options `opts` ((code, value) each), and the two-5-tuple capture's frames as
/// Enhanced Packet Blocks in microseconds.
fn pcapng(opts: &[(u16, &[u8])]) -> Vec<u8> {
    let mut shb = 0x1A2B_3C4Du32.to_be_bytes().to_vec();
    shb.extend([0, 1, 0, 0]);
    shb.extend(u64::MAX.to_be_bytes());
    let mut out = ng_block(0x0A0D_0D0A, &shb);
    let mut idb = vec![0, 1, 0, 0];
    idb.extend(65_535u32.to_be_bytes());
    for (code, v) in opts {
        idb.extend(code.to_be_bytes());
        idb.extend((v.len() as u16).to_be_bytes());
        idb.extend(*v);
        idb.resize(idb.len().div_ceil(4) * 4, 0);
    }
    idb.extend([0, 0, 0, 0]);
    out.extend(ng_block(1, &idb));
    for (t, d) in crate::capture::two_tuples() {
        let us = t / 1000;
        let mut epb = 0u32.to_be_bytes().to_vec();
        epb.extend(((us >> 32) as u32).to_be_bytes());
        epb.extend((us as u32).to_be_bytes());
        epb.extend((d.len() as u32).to_be_bytes());
        epb.extend((d.len() as u32).to_be_bytes());
        epb.extend(&d);
        out.extend(ng_block(6, &epb));
    }
    out
}

/// A sparse file of `bytes` (no block written: made at once whatever its size).
fn sparse(p: &Path, bytes: u64) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::File::create(p).unwrap().set_len(bytes).unwrap();
}

/// A named pipe at `p`: nobody ever writes to it, so a reader that blocks never returns.
fn mkfifo(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {p:?}"
    );
}

/// Run the binary with `args`, killed after [`TIMEOUT`]: (exit code, stderr).
fn run(args: &[String]) -> Result<(Option<i32>, String), String> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(BIN);
    // SAFETY: setrlimit only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stderr is read on a thread so that a chatty child cannot block on a full pipe.
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Ok((status.code(), reader.join().unwrap()));
        }
        if t0.elapsed() > TIMEOUT {
            child.kill().ok();
            child.wait().ok();
            return Err(format!("still running after {TIMEOUT:?}: killed"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_hostile_input_is_refused_or_bounded_at_once() {
    let mut failures = Vec::new();
    for row in CASES {
        let mut case = Case::new();
        (row.edit)(&mut case);
        let scenario = case.write();
        let out = case.path("out");
        let args: Vec<String> = row
            .args
            .iter()
            .map(|a| match *a {
                "SCENARIO" => scenario.display().to_string(),
                "OUT" => out.display().to_string(),
                a => match a.strip_prefix("CASE/") {
                    Some(rel) => case.path(rel).display().to_string(),
                    None => a.to_string(),
                },
            })
            .collect();
        let (code, stderr) = match run(&args) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{}: {e}", row.name));
                continue;
            }
        };
        if code != Some(row.code) {
            failures.push(format!(
                "{}: exit {code:?}, want {}; stderr:\n{}",
                row.name,
                row.code,
                stderr.chars().take(2000).collect::<String>()
            ));
            continue;
        }
        for phrase in row.says {
            if !stderr.contains(phrase) {
                failures.push(format!(
                    "{}: stderr lacks {phrase:?}:\n{}",
                    row.name,
                    stderr.chars().take(2000).collect::<String>()
                ));
            }
        }
        for phrase in row.lacks {
            if stderr.contains(phrase) {
                failures.push(format!(
                    "{}: stderr holds {phrase:?}:\n{}",
                    row.name,
                    stderr.chars().take(2000).collect::<String>()
                ));
            }
        }
        if !row.writes && out.exists() {
            failures.push(format!("{}: {} was written", row.name, out.display()));
        }
        if row.writes && !out.join("results.json").exists() {
            failures.push(format!("{}: no results.json", row.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// 53.11 a flow whose `from` is its `to`: a stated rule (README, "Refused rather than
/// accepted quietly"), not a refusal. The host forwards the frames back out of the NIC
/// they came in on (a route back through the receiving interface; XDP_TX does the same
/// in the driver): every frame delivered left by `dc0`, none by `dc1`.
#[test]
fn a_flow_from_a_nic_to_itself_is_forwarded_back_out_of_it() {
    let mut case = Case::new();
    case.scenario["workload"]["flows"] =
        json!([{"name": "back", "from": "dc0", "to": "dc0", "frame_bytes": 64}]);
    case.scenario["load"] = json!({"unit": "percent", "points": [20]});
    case.scenario.as_object_mut().unwrap().remove("measured");
    let scenario = case.write();
    let out = case.path("out");
    let args: Vec<String> = RUN
        .iter()
        .map(|a| match *a {
            "SCENARIO" => scenario.display().to_string(),
            "OUT" => out.display().to_string(),
            a => a.to_string(),
        })
        .collect();
    let (code, stderr) = run(&args).unwrap();
    assert_eq!(code, Some(0), "{stderr}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let p = &r["points"][0];
    let c = &p["counters"];
    let sent = p["flows"][0]["sent"].as_f64().unwrap();
    let delivered = p["flows"][0]["received"].as_f64().unwrap();
    // 20 % of 100 Mbit/s in 64-byte frames for 10 ms: 297 frames, all forwarded.
    assert!(sent > 250.0, "{sent}");
    assert_eq!(delivered, sent);
    assert_eq!(c["dc0.rx_frames"].as_f64(), Some(sent));
    assert_eq!(c["dc0.tx_frames"].as_f64(), Some(delivered));
    assert_eq!(c["dc1.tx_frames"].as_f64(), Some(0.0));
}
