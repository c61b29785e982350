//! `irqsim import-host` on a virtual machine: the dumps of tests/data/kvm-virtio-guest,
//! recorded with examples/gather-host.sh on a KVM guest (2 vCPUs of an AMD EPYC, Linux
//! 6.18, eth0 driven by virtio_net; tests/data/README.md says how), whose `lscpu` has no
//! clock and whose `ethtool eth0` says `Speed: Unknown!`. The import takes the clock from
//! /proc/cpuinfo, refuses to guess the line rate until `--line-rate` gives it, binds
//! eth0's vector by its virtio name, names `linux_driver`, and writes a starting
//! scenario that runs with `--linux-counters`. Also: `--scenario` on the ixgbe router
//! (a flow per queue, RSS sending flow k to queue k) and the options' refusals.

use crate::import_host::ixgbe_host;
use irqsim::config::model::ModelConfig;
use irqsim::config::scenario::{self, DiskFiles};
use irqsim::model::nic::LinuxDriver;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");

fn guest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kvm-virtio-guest/host")
}

fn irqsim(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run irqsim")
}

/// `irqsim run <scenario> --linux-counters --no-plots --out run` in `dir`.
fn run_with_counters(scenario: &str, dir: &Path) -> Output {
    irqsim(
        &[
            "run",
            scenario,
            "--linux-counters",
            "--no-plots",
            "--out",
            "run",
        ],
        dir,
    )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `irqsim import-host <args> --out <out>` in `dir`, which must succeed with every dump
/// line understood; the model it wrote (`what` names the case in a failure).
fn import_cleanly(dir: &Path, args: &[&str], out: &str, what: &str) -> ModelConfig {
    let mut all = vec!["import-host"];
    all.extend(args);
    all.extend(["--out", out]);
    let o = irqsim(&all, dir);
    let err = stderr(&o);
    assert!(o.status.success(), "{what}: {err}");
    assert!(err.contains("lines not understood: none"), "{what}: {err}");
    load_model(&dir.join(out))
}

fn load_model(path: &Path) -> ModelConfig {
    let text = std::fs::read_to_string(path).expect("the model file");
    scenario::parse_json_all(&path.display().to_string(), &text).expect("irqsim loads the model")
}

/// Without `--line-rate` the guest is refused (exit 2, nothing written), naming the
/// file, the line and the field: its ethtool says `Speed: Unknown!` (line 11), which
/// earlier versions silently turned into the 100 Mbit/s default. With `--line-rate
/// eth0=10G`: 2 cores at 2,445.412 MHz (proc-cpuinfo line 8, lscpu having no clock),
/// rings of 256 (ethtool -g), eth0's vector `virtio2-input.0` (IRQ 38, proc-interrupts
/// line 15) on core 1 (effective_affinity_list 1, irq-affinity line 33),
/// `linux_driver` virtio_net, no moderation (rx-usecs 0, rx-frames 1). The scenario
/// written beside it runs with `--linux-counters`, warns of the one-NIC hairpin, and
/// its /proc/interrupts shows the vector as virtio_pci names it.
#[test]
fn a_recorded_kvm_guest_imports_and_its_scenario_runs_with_linux_counters() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let g = guest();
    let g = g.to_str().unwrap();
    let o = irqsim(&["import-host", g, "--out", "vm.json"], dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("ethtool-eth0:11: `Speed: Unknown!`: the NIC reports no line rate"),
        "{err}"
    );
    assert!(err.contains("--line-rate eth0=RATE"), "{err}");
    assert!(!dir.join("vm.json").exists());

    let import = [
        g,
        "--line-rate",
        "eth0=10G",
        "--scenario",
        "vm-scenario.json",
    ];
    let m = import_cleanly(dir, &import, "vm.json", "the guest");
    assert_eq!((m.cpu.cores, m.cpu.clock_mhz), (2, 2445.412));
    let n = &m.nics[0];
    assert_eq!(
        (n.name.as_str(), n.queues, n.rx_ring_slots, n.tx_ring_slots),
        ("eth0", 1, 256, 256)
    );
    assert_eq!(n.line_rate_bps, 10e9);
    assert_eq!(n.linux_driver, Some(LinuxDriver::VirtioNet));
    assert!(n.moderation.is_none() && n.dim.is_none());
    assert_eq!(m.cpu.irq_affinity["eth0"], 1);
    let notes = &m.notes;
    assert!(
        notes["cpu.clock_mhz"].contains("proc-cpuinfo line 8"),
        "{}",
        notes["cpu.clock_mhz"]
    );
    assert!(notes["nics.eth0.line_rate_bps"].contains("--line-rate eth0=10G"));
    assert!(notes["nics.eth0.line_rate_bps"].contains("ethtool-eth0 line 11"));
    assert!(notes["cpu.irq_affinity.eth0"].contains("vector 38 `virtio2-input.0`"));
    assert!(notes["cpu.irq_affinity.eth0"].contains("irq-affinity line 33"));
    assert!(notes["nics.eth0.moderation"].starts_with("none: rx-usecs 0"));

    let exp = irqsim::experiment::load::load(&dir.join("vm-scenario.json"), &DiskFiles::default())
        .expect("the scenario loads");
    assert_eq!(exp.flows.len(), 1);
    assert_eq!(
        (exp.flows[0].from.as_str(), exp.flows[0].to.as_str()),
        ("eth0", "eth0")
    );
    let o = run_with_counters("vm-scenario.json", dir);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: vm-scenario.json: variant `as-imported`, flow `eth0` (eth0 -> eth0): the host has one NIC"),
        "{err}"
    );
    assert!(err.contains("kernel.prerouting_drop"), "{err}");
    let point = dir.join("run/linux/as-imported/0-10pct");
    let ints = std::fs::read_to_string(point.join("interrupts")).unwrap();
    assert!(
        ints.lines().nth(1).unwrap().ends_with("virtio0-input.0"),
        "{ints}"
    );
    let eth = std::fs::read_to_string(point.join("ethtool-S-eth0")).unwrap();
    // The layout of the recorded guest's ethtool -S (counters/0/ethtool-S-eth0).
    let names = |s: &str| -> Vec<String> {
        s.lines()
            .skip(1)
            .map(|l| l.split(':').next().unwrap().trim().to_string())
            .collect()
    };
    let recorded =
        std::fs::read_to_string(guest().parent().unwrap().join("counters/0/ethtool-S-eth0"))
            .unwrap();
    assert_eq!(names(&eth), names(&recorded));
    assert!(
        std::fs::read_to_string(point.join("net-dev"))
            .unwrap()
            .contains("  eth0: ")
    );
}

/// A guest whose dumps give no clock (no proc-cpuinfo, lscpu without one) is refused,
/// naming `--clock-mhz`; with `--clock-mhz 2000` the clock is 2,000 MHz, noted as given.
/// Bad option values exit 2 before any dump is read: a rate without a unit that makes
/// sense (5 bit/s), a clock of 0, an interface the dumps do not have, `--scenario`
/// without `--out`.
#[test]
fn the_clock_and_the_line_rate_are_given_or_refused() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("dumps");
    std::fs::create_dir_all(&d).unwrap();
    for e in std::fs::read_dir(guest()).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "proc-cpuinfo" {
            std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
        }
    }
    let d = d.to_str().unwrap();
    let o = irqsim(&["import-host", d, "--line-rate", "10G"], t.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("lscpu: no clock"), "{err}");
    assert!(err.contains("--clock-mhz MHZ"), "{err}");
    let o = irqsim(
        &[
            "import-host",
            d,
            "--line-rate",
            "10G",
            "--clock-mhz",
            "2000",
            "--out",
            "m.json",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let m = load_model(&t.path().join("m.json"));
    assert_eq!(m.cpu.clock_mhz, 2000.0);
    assert!(m.notes["cpu.clock_mhz"].contains("--clock-mhz"));
    assert!(m.notes["cpu.clock_mhz"].contains("the dumps give none"));
    for (args, want) in [
        (
            vec!["--line-rate", "eth0=5", "--clock-mhz", "2000"],
            "outside the line rates",
        ),
        (
            vec!["--line-rate", "10Q", "--clock-mhz", "2000"],
            "not a rate in bit/s",
        ),
        (
            vec!["--line-rate", "10G", "--clock-mhz", "0"],
            "outside 1 to 10000 MHz",
        ),
        (
            vec!["--line-rate", "eth9=10G", "--clock-mhz", "2000"],
            "names interface `eth9`",
        ),
        (
            vec![
                "--line-rate",
                "10G",
                "--clock-mhz",
                "2000",
                "--scenario",
                "s.json",
            ],
            "needs --out",
        ),
    ] {
        let mut a = vec!["import-host", d];
        a.extend(args);
        let o = irqsim(&a, t.path());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(want), "{a:?}: {err}");
        assert!(!t.path().join("s.json").exists());
    }
}

/// `--scenario` on the ixgbe router (two 10 Gbit/s ports of 8 queues, costs from a
/// profile): 16 flows, eth0's to eth1 and eth1's to eth0, the model's RSS sending flow
/// k of a port to its queue k, 64-byte frames, the load per flow 1.25 to 12.5 % (the
/// port's line rate over its 8 flows at the last point), no cost overrides (the profile
/// gave them); it loads, with no hairpin warning.
#[test]
fn a_router_gets_a_flow_per_queue() {
    let t = tempfile::tempdir().unwrap();
    ixgbe_host(&t.path().join("dumps"), 0);
    let profile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/xeon-e5-1650v4-10g-linux.json");
    let o = irqsim(
        &[
            "import-host",
            "dumps",
            "--profile",
            profile.to_str().unwrap(),
            "--out",
            "host.json",
            "--scenario",
            "start.json",
        ],
        t.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let exp = irqsim::experiment::load::load(&t.path().join("start.json"), &DiskFiles::default())
        .expect("the scenario loads");
    assert!(irqsim::config::hairpin::warnings(&exp).is_empty());
    let m = &exp.variants[0].model;
    assert_eq!(exp.flows.len(), 16);
    for (i, f) in exp.flows.iter().enumerate() {
        let (port, k) = (i / 8, (i % 8) as u16);
        let (from, to) = if port == 0 {
            ("eth0", "eth1")
        } else {
            ("eth1", "eth0")
        };
        assert_eq!((f.from.as_str(), f.to.as_str()), (from, to));
        assert_eq!(f.display_name(), format!("{from}-q{k}"));
        let nic = m.nics.iter().find(|n| n.name == from).unwrap();
        assert_eq!(
            irqsim::host::queues::rss_queue(nic, f.tuple.as_ref().unwrap()),
            k
        );
    }
    let pts: Vec<f64> = exp.variants[0].points.iter().map(|p| p.load).collect();
    assert_eq!(pts.first(), Some(&1.25));
    assert_eq!(pts.last(), Some(&12.5));
    let sc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("start.json")).unwrap())
            .unwrap();
    assert!(sc["variants"][0].get("overrides").is_none());
    assert_eq!(sc["model"], "host.json");
    // An earlier scenario of import-host is written over; another file is not.
    std::fs::write(t.path().join("mine.json"), "{}").unwrap();
    let o = irqsim(
        &[
            "import-host",
            "dumps",
            "--out",
            "host.json",
            "--scenario",
            "mine.json",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a file import-host did not write"));
}

/// A driver's name of queue k's vector of interface `iface`, port `p`: `(iface, p, k)`.
type VectorName = fn(&str, usize, usize) -> String;

/// The ixgbe router's dumps (`ixgbe_host`) as a host of `driver`: `ethtool -i` names
/// it and each queue's vector has its name in /proc/interrupts (`name(iface, port,
/// k)`); gve's transmit queues' notification blocks (the first half, 0-7) are added,
/// as a real gVNIC has them.
fn host_of(dir: &Path, driver: &str, name: VectorName) {
    ixgbe_host(dir, 0);
    let mut ints = std::fs::read_to_string(dir.join("proc-interrupts")).unwrap();
    for (p, iface) in ["eth0", "eth1"].iter().enumerate() {
        let f = dir.join(format!("ethtool-i-{iface}"));
        let text = std::fs::read_to_string(&f).unwrap();
        std::fs::write(
            &f,
            text.replace("driver: ixgbe", &format!("driver: {driver}")),
        )
        .unwrap();
        for k in 0..8 {
            let old = format!("      {iface}-TxRx-{k}\n");
            assert!(ints.contains(&old));
            ints = ints.replace(&old, &format!("      {}\n", name(iface, p, k)));
        }
        if driver == "gve" {
            let mut tx = String::new();
            for b in 0..8 {
                tx.push_str(&format!(
                    " {:>3}:{}  IR-PCI-MSI {}-edge      gve-ntfy-blk{b}@pci:0000:01:00.{p}\n",
                    100 + 10 * p + b,
                    "          0".repeat(8),
                    600_000 + 10 * p + b
                ));
            }
            ints = ints.replace(" NMI:", &format!("{tx} NMI:"));
        }
    }
    std::fs::write(dir.join("proc-interrupts"), ints).unwrap();
}

/// import-host names `linux_driver` for ixgbevf, igb, i40e, ice, ena, gve and vmxnet3 (the
/// drivers whose `ethtool -S` irqsim writes), binds each queue's vector by the name the
/// driver gives it (eth0's queue k on CPU k), and the scenario it writes runs with
/// `--linux-counters` (one point of 1 % per flow, 2 ms): each port has an
/// `ethtool-S-<if>` in its driver's names, and /proc/interrupts shows the vectors as the
/// driver names them.
#[test]
fn the_imported_nics_of_each_driver_write_their_counters() {
    // (driver, its vectors' names, a counter of its ethtool -S); /proc/interrupts shows
    // eth0's queue 1 by the driver's name, gve's with the netdev for the PCI address.
    let cases: [(&str, VectorName, &str); 7] = [
        (
            "ixgbevf",
            |i, _, k| format!("{i}-TxRx-{k}"),
            "rx_queue_1_packets",
        ),
        ("igb", |i, _, k| format!("{i}-TxRx-{k}"), "rx_missed_errors"),
        (
            "i40e",
            |i, _, k| format!("i40e-{i}-TxRx-{k}"),
            "rx-1.rx_packets",
        ),
        (
            "ice",
            |i, _, k| format!("ice-{i}-TxRx-{k}"),
            "rx-queue-1.rx_packets",
        ),
        ("ena", |i, _, k| format!("{i}-Tx-Rx-{k}"), "queue_1_rx_cnt"),
        (
            "gve",
            |_, p, k| format!("gve-ntfy-blk{}@pci:0000:01:00.{p}", 8 + k),
            "rx_bytes[1]",
        ),
        (
            "vmxnet3",
            |i, _, k| format!("{i}-rxtx-{k}"),
            "  ucast pkts rx",
        ),
    ];
    for (driver, name, counter) in cases {
        let want: LinuxDriver = serde_json::from_value(serde_json::json!(driver)).unwrap();
        let vector = name("eth0", 0, 1).replace("0000:01:00.0", "eth0");
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        host_of(&dir.join("dumps"), driver, name);
        let m = import_cleanly(
            dir,
            &["dumps", "--scenario", "start.json"],
            "host.json",
            driver,
        );
        for n in &m.nics {
            assert_eq!(n.linux_driver, Some(want), "{driver}");
        }
        assert!(
            m.notes["nics.eth0.linux_driver"].contains(&format!("({driver})")),
            "{driver}: {}",
            m.notes["nics.eth0.linux_driver"]
        );
        for k in 0..8u16 {
            assert_eq!(m.cpu.irq_affinity[&format!("eth0-q{k}")], k, "{driver}");
        }
        // One short point, so that the test stays quick.
        let path = dir.join("start.json");
        let mut sc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        sc["load"] = serde_json::json!({ "unit": "percent", "points": [1.0] });
        sc["duration_s"] = serde_json::json!(0.002);
        sc["drain_s"] = serde_json::json!(0.001);
        std::fs::write(&path, sc.to_string()).unwrap();
        let o = run_with_counters("start.json", dir);
        assert!(o.status.success(), "{driver}: {}", stderr(&o));
        let point = dir.join("run/linux/as-imported/0-1pct");
        let eth = std::fs::read_to_string(point.join("ethtool-S-eth0")).unwrap();
        assert!(eth.starts_with("NIC statistics:\n"), "{driver}: {eth}");
        assert!(
            eth.contains(&format!("\n     {counter}: ")),
            "{driver}: {eth}"
        );
        assert!(point.join("ethtool-S-eth1").exists(), "{driver}");
        let ints = std::fs::read_to_string(point.join("interrupts")).unwrap();
        assert!(
            ints.lines().any(|l| l.ends_with(&format!("  {vector}"))),
            "{driver}: {ints}"
        );
    }
}
