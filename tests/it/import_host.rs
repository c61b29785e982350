//! `irqsim import-host DIR`: a model from a directory of a host's own dumps
//! (src/config/import/), run by the binary on dumps this test writes in the tools' own
//! layouts: an 8-core ixgbe router (two 10 Gbit/s ports, eight queues each, util-linux
//! 2.34's flat `lscpu`, ethtool 5.x) and a 12-thread mlx5 host (two ConnectX-5 ports,
//! util-linux 2.37's sectioned `lscpu`, `CQE mode RX` of ethtool 5.15). The models
//! written are loaded by irqsim and run; the refusals exit 2 before writing anything.

use irqsim::config::model::ModelConfig;
use irqsim::config::scenario;
use irqsim::model::nic::dim::CqPeriodMode;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_irqsim");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write a dump");
}

fn irqsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run irqsim")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `/proc/interrupts` of `cpus` CPUs: a row per (irq, name, cpu taking it), the timer
/// first and the architecture's rows last, in `show_interrupts`' layout.
fn proc_interrupts(cpus: usize, rows: &[(u32, String, usize)]) -> String {
    let mut s = String::from("           ");
    for c in 0..cpus {
        s.push_str(&format!("CPU{c:<8}"));
    }
    s.push('\n');
    let counts = |on: usize| -> String {
        (0..cpus)
            .map(|c| format!(" {:>10}", if c == on { 1_234_567 } else { 0 }))
            .collect()
    };
    s.push_str(&format!(
        "{:>4}:{}  IR-IO-APIC    2-edge      timer\n",
        0,
        counts(0)
    ));
    for (irq, name, cpu) in rows {
        s.push_str(&format!(
            "{irq:>4}:{}  IR-PCI-MSI {}-edge      {name}\n",
            counts(*cpu),
            524_288 + irq
        ));
    }
    s.push_str(&format!(
        " NMI:{}   Non-maskable interrupts\n LOC:{}   Local timer interrupts\n ERR:          0\n",
        counts(usize::MAX),
        counts(0)
    ));
    s
}

fn ethtool_i(driver: &str, bus: &str) -> String {
    format!(
        "driver: {driver}\nversion: 5.15.0-91-generic\nfirmware-version: 0x800003e1\n\
         expansion-rom-version: \nbus-info: {bus}\nsupports-statistics: yes\nsupports-test: yes\n\
         supports-eeprom-access: yes\nsupports-register-dump: yes\nsupports-priv-flags: yes\n"
    )
}

fn ethtool_g(iface: &str, max: u32, cur: u32) -> String {
    format!(
        "Ring parameters for {iface}:\nPre-set maximums:\nRX:\t\t{max}\nRX Mini:\tn/a\n\
         RX Jumbo:\tn/a\nTX:\t\t{max}\nCurrent hardware settings:\nRX:\t\t{cur}\nRX Mini:\tn/a\n\
         RX Jumbo:\tn/a\nTX:\t\t{cur}\n"
    )
}

fn ethtool_l(iface: &str, max: u32, cur: u32) -> String {
    format!(
        "Channel parameters for {iface}:\nPre-set maximums:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t1\n\
         Combined:\t{max}\nCurrent hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t1\n\
         Combined:\t{cur}\n"
    )
}

/// `ethtool -c` with `Adaptive RX`, rx-usecs, rx-frames and, if given, `CQE mode RX`.
fn ethtool_c(iface: &str, adaptive: &str, usecs: &str, frames: &str, cqe: Option<&str>) -> String {
    let mut s = format!(
        "Coalesce parameters for {iface}:\nAdaptive RX: {adaptive}  TX: {adaptive}\n\
         stats-block-usecs: n/a\nsample-interval: n/a\npkt-rate-low: n/a\npkt-rate-high: n/a\n\n\
         rx-usecs: {usecs}\nrx-frames: {frames}\nrx-usecs-irq: n/a\nrx-frames-irq: n/a\n\n\
         tx-usecs: {usecs}\ntx-frames: n/a\ntx-usecs-irq: n/a\ntx-frames-irq: 256\n\n\
         rx-usecs-low: n/a\nrx-frame-low: n/a\ntx-usecs-low: n/a\ntx-frame-low: n/a\n\n\
         rx-usecs-high: n/a\nrx-frame-high: n/a\ntx-usecs-high: n/a\ntx-frame-high: n/a\n\n"
    );
    if let Some(c) = cqe {
        s.push_str(&format!("CQE mode RX: {c}  TX: off\n\n"));
    }
    s
}

fn ethtool_link(iface: &str, mbps: u32) -> String {
    format!(
        "Settings for {iface}:\n\tSupported ports: [ FIBRE ]\n\tSupported link modes:   \
         10000baseT/Full\n\tSupported pause frame use: Symmetric\n\tSupports auto-negotiation: \
         No\n\tSpeed: {mbps}Mb/s\n\tDuplex: Full\n\tAuto-negotiation: off\n\tPort: FIBRE\n\t\
         Link detected: yes\n"
    )
}

/// The 8-core ixgbe router: eth0's queue k's vector on CPU (k + `shift`) mod 8, eth1's
/// on CPU 7 - k (smp_affinity_list only, as before Linux 4.15).
pub(crate) fn ixgbe_host(dir: &Path, shift: usize) {
    std::fs::create_dir_all(dir).unwrap();
    write(
        dir,
        "lscpu",
        "Architecture:        x86_64\nCPU op-mode(s):      32-bit, 64-bit\n\
         Byte Order:          Little Endian\nAddress sizes:       46 bits physical, 48 bits virtual\n\
         CPU(s):              8\nOn-line CPU(s) list: 0-7\nThread(s) per core:  1\n\
         Core(s) per socket:  8\nSocket(s):           1\nNUMA node(s):        1\n\
         Vendor ID:           GenuineIntel\nCPU family:          6\nModel:               79\n\
         Model name:          Intel(R) Xeon(R) CPU E5-2620 v4 @ 2.10GHz\nStepping:            1\n\
         CPU MHz:             1199.960\nCPU max MHz:         3000.0000\nCPU min MHz:         1200.0000\n\
         BogoMIPS:            4199.92\nVirtualization:      VT-x\nL1d cache:           256 KiB\n\
         L2 cache:            2 MiB\nL3 cache:            20 MiB\nNUMA node0 CPU(s):   0-7\n\
         Flags:               fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov\n",
    );
    write(
        dir,
        "sysctl-net.core",
        "net.core.bpf_jit_enable = 1\nnet.core.busy_poll = 0\nnet.core.busy_read = 0\n\
         net.core.default_qdisc = fq_codel\nnet.core.dev_weight = 64\nnet.core.netdev_budget = 600\n\
         net.core.netdev_budget_usecs = 4000\nnet.core.netdev_max_backlog = 2000\n\
         net.core.rmem_default = 212992\nnet.core.somaxconn = 4096\n",
    );
    let mut rows = Vec::new();
    let mut aff = String::new();
    for (p, iface) in ["eth0", "eth1"].iter().enumerate() {
        write(
            dir,
            &format!("ethtool-i-{iface}"),
            &ethtool_i("ixgbe", &format!("0000:01:00.{p}")),
        );
        write(
            dir,
            &format!("ethtool-g-{iface}"),
            &ethtool_g(iface, 4096, 512),
        );
        write(dir, &format!("ethtool-l-{iface}"), &ethtool_l(iface, 63, 8));
        write(
            dir,
            &format!("ethtool-c-{iface}"),
            &ethtool_c(iface, "n/a", "50", "n/a", None),
        );
        write(
            dir,
            &format!("ethtool-{iface}"),
            &ethtool_link(iface, 10_000),
        );
        for k in 0..8usize {
            let irq = 60 + 10 * p as u32 + k as u32;
            let cpu = if p == 0 { (k + shift) % 8 } else { 7 - k };
            rows.push((irq, format!("{iface}-TxRx-{k}"), cpu));
            aff.push_str(&format!("/proc/irq/{irq}/smp_affinity_list:{cpu}\n"));
        }
        rows.push((68 + 10 * p as u32, iface.to_string(), 0));
    }
    write(dir, "proc-interrupts", &proc_interrupts(8, &rows));
    write(dir, "irq-affinity", &aff);
    write(dir, "uname-r", "5.4.0-150-generic\n");
    write(
        dir,
        "ip-link",
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\n    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n\
         2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT group default qlen 1000\n    link/ether a0:36:9f:00:00:01 brd ff:ff:ff:ff:ff:ff\n\
         3: eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT group default qlen 2000\n    link/ether a0:36:9f:00:00:02 brd ff:ff:ff:ff:ff:ff\n",
    );
}

/// A 12-thread mlx5 host (6 cores x 2 threads): eth0 with adaptive RX (DIM), eth1
/// with static CQ moderation in EQE mode; eth0's completion vectors on CPU k (effective
/// affinity), eth1's allowed on 0-11 and effective on 6 + k, except channel 5's, which
/// has no effective list.
fn mlx5_host(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    write(
        dir,
        "lscpu",
        "Architecture:                    x86_64\n  CPU op-mode(s):                32-bit, 64-bit\n\
         \x20 Address sizes:                 46 bits physical, 48 bits virtual\n\
         \x20 Byte Order:                    Little Endian\nCPU(s):                          12\n\
         \x20 On-line CPU(s) list:           0-11\nVendor ID:                       GenuineIntel\n\
         \x20 Model name:                    Intel(R) Xeon(R) CPU E5-1650 v4 @ 3.60GHz\n\
         \x20   CPU family:                  6\n    Model:                       79\n\
         \x20   Thread(s) per core:          2\n    Core(s) per socket:          6\n\
         \x20   Socket(s):                   1\n    Stepping:                    1\n\
         \x20   CPU max MHz:                 4000.0000\n    CPU min MHz:                 1200.0000\n\
         Caches (sum of all):\n  L1d:                           192 KiB (6 instances)\n\
         Vulnerabilities:\n  Itlb multihit:                 KVM: Mitigation: VMX disabled\n",
    );
    write(
        dir,
        "sysctl-net.core",
        "net.core.busy_poll = 50\nnet.core.busy_read = 50\nnet.core.dev_weight = 64\n\
         net.core.netdev_budget = 300\nnet.core.netdev_budget_usecs = 2000\n\
         net.core.netdev_max_backlog = 1000\n",
    );
    let mut rows = vec![(129, "mlx5_async0@pci:0000:03:00.0".to_string(), 0)];
    let mut aff = String::new();
    for (p, iface) in ["eth0", "eth1"].iter().enumerate() {
        let bus = format!("0000:03:00.{p}");
        write(
            dir,
            &format!("ethtool-i-{iface}"),
            &ethtool_i("mlx5_core", &bus),
        );
        write(
            dir,
            &format!("ethtool-g-{iface}"),
            &ethtool_g(iface, 8192, 1024),
        );
        write(dir, &format!("ethtool-l-{iface}"), &ethtool_l(iface, 63, 6));
        let c = if p == 0 {
            ethtool_c(iface, "on", "8", "128", Some("on"))
        } else {
            ethtool_c(iface, "off", "16", "32", Some("off"))
        };
        write(dir, &format!("ethtool-c-{iface}"), &c);
        write(
            dir,
            &format!("ethtool-{iface}"),
            &ethtool_link(iface, 100_000),
        );
        for k in 0..6usize {
            let irq = 130 + 10 * p as u32 + k as u32;
            let cpu = if p == 0 { k } else { 6 + k };
            rows.push((irq, format!("mlx5_comp{k}@pci:{bus}"), cpu));
            if p == 0 {
                aff.push_str(&format!(
                    "/proc/irq/{irq}/smp_affinity_list:{k}\n/proc/irq/{irq}/effective_affinity_list:{k}\n"
                ));
            } else {
                aff.push_str(&format!("/proc/irq/{irq}/smp_affinity_list:0-11\n"));
                if k < 5 {
                    aff.push_str(&format!("/proc/irq/{irq}/effective_affinity_list:{cpu}\n"));
                }
            }
        }
    }
    write(dir, "proc-interrupts", &proc_interrupts(12, &rows));
    write(dir, "irq-affinity", &aff);
    write(dir, "uname-r", "5.15.0-91-generic\n");
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irqsim-import-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn load_model(path: &Path) -> ModelConfig {
    let text = std::fs::read_to_string(path).expect("the model file");
    scenario::parse_json_all(&path.display().to_string(), &text).expect("irqsim loads the model")
}

/// A scenario on `model`: one flow of 64-byte frames eth0 -> eth1 at `points` % of the
/// line, 20 ms per point; returns its results' points.
fn run(dir: &Path, model: &str, points: &[f64]) -> Vec<serde_json::Value> {
    let sc = dir.join("scenario.json");
    let s = serde_json::json!({
        "description": "an imported host",
        "model": model,
        "workload": {"flows": [{"name": "a", "from": "eth0", "to": "eth1", "frame_bytes": 64,
                                "arrivals": "constant"}]},
        "load": {"unit": "percent", "points": points},
        "duration_s": 0.02, "drain_s": 0.01, "seed": 1, "replications": 1
    });
    std::fs::write(&sc, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    let out = dir.join("out");
    let o = irqsim(&[
        "run",
        sc.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-plots",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    r["points"].as_array().unwrap().clone()
}

/// The busiest core of a point.
fn busiest(p: &serde_json::Value) -> usize {
    let cores = p["cores"].as_array().unwrap();
    (0..cores.len())
        .max_by(|&a, &b| {
            let busy = |i: usize| 1.0 - cores[i]["idle"].as_f64().unwrap();
            busy(a).total_cmp(&busy(b))
        })
        .unwrap()
}

/// The ixgbe router with the XDP paper host's costs (--profile): every knob the dumps
/// give is in the model with a note naming its file and line (8 cores at 2,100 MHz,
/// netdev_budget 600, netdev_budget_usecs 4,000, netdev_max_backlog 2,000, 8 queues of
/// 512 descriptors, ITR 50 us, 10 Gbit/s, qlen 1,000 and 2,000, eth1's vectors on CPU
/// 7 - k, the spliced net_rx_action of 5.4), the profile's costs (isr_entry 500 ns,
/// netisr 509 ns) with notes naming it. The model runs: 1 % of the line (148,810
/// frames/s) is forwarded without loss at 20,000 interrupts/s (the 50 us ITR), and the
/// core that does the work is the one the dumps put the flow's vector on: moving eth0's
/// vectors by 3 CPUs moves it by 3 cores.
#[test]
fn an_ixgbe_router_imports_with_its_knobs_and_runs() {
    let t = tmp("ixgbe");
    let dumps = t.join("dumps");
    ixgbe_host(&dumps, 0);
    let model = t.join("host.json");
    let profile = root().join("models/xeon-e5-1650v4-10g-linux.json");
    let o = irqsim(&[
        "import-host",
        dumps.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("lines not understood: none"), "{err}");
    assert!(err.contains("costs: from the profile"), "{err}");
    let m = load_model(&model);
    assert_eq!((m.cpu.cores, m.cpu.clock_mhz), (8, 2100.0));
    let napi = &m.kernel.napi;
    assert_eq!(
        (
            napi.netdev_budget,
            napi.netdev_budget_usecs,
            napi.dev_weight,
            napi.netdev_max_backlog
        ),
        (600, 4000.0, 64, 2000)
    );
    assert_eq!(m.nics.len(), 2);
    for n in &m.nics {
        assert_eq!((n.queues, n.rx_ring_slots, n.tx_ring_slots), (8, 512, 512));
        assert_eq!(n.line_rate_bps, 10e9);
        assert_eq!(n.moderation.as_ref().unwrap().min_interval_ns, 50_000.0);
        assert!(n.dim.is_none());
    }
    assert_eq!(m.nics[0].if_snd_maxlen, Some(1000));
    assert_eq!(m.nics[1].if_snd_maxlen, Some(2000));
    for k in 0..8u16 {
        assert_eq!(m.cpu.irq_affinity[&format!("eth0-q{k}")], k);
        assert_eq!(m.cpu.irq_affinity[&format!("eth1-q{k}")], 7 - k);
    }
    let n = &m.notes;
    assert!(n["kernel.napi.netdev_budget"].contains("sysctl-net.core line 6"));
    assert!(n["nics.eth0.rx_ring_slots"].contains("ethtool-g-eth0 line 8"));
    assert!(n["nics.eth1.queues"].contains("ethtool-l-eth1 line 11"));
    assert!(n["nics.eth0.moderation.min_interval_ns"].contains("ethtool-c-eth0 line 8"));
    assert!(n["cpu.irq_affinity.eth1-q2"].contains("irq-affinity line 11"));
    assert!(n["kernel.napi.net_rx_action"].contains("uname-r line 1"));
    assert!(n["cpu.clock_mhz"].contains("lscpu line 14"));
    assert!(n["nics.eth0.driver"].contains("from the profile"));
    assert!(n["kernel.netisr_per_packet"].contains("from the profile"));
    // The profile's costs, as written there.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(json["nics"][0]["driver"]["isr_entry"]["ns"], 500);
    assert_eq!(json["kernel"]["netisr_per_packet"]["ns"], 509);
    assert_eq!(json["kernel"]["napi"]["net_rx_action"], "spliced");

    let points = run(&t, "host.json", &[1.0, 5.0]);
    let p = &points[0];
    assert_eq!(p["total"]["lost"], 0, "{p}");
    assert!(p["total"]["sent"].as_u64().unwrap() > 2900);
    let irqs = p["interrupts_per_s"].as_f64().unwrap();
    assert!(irqs <= 20_000.0 + 1.0 && irqs > 15_000.0, "{irqs}");
    let core = busiest(p);

    // The same host with eth0's vectors three CPUs on.
    let t2 = tmp("ixgbe-shifted");
    ixgbe_host(&t2.join("dumps"), 3);
    let o = irqsim(&[
        "import-host",
        t2.join("dumps").to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--out",
        t2.join("host.json").to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty());
    let shifted = run(&t2, "host.json", &[1.0]);
    assert_eq!(busiest(&shifted[0]), (core + 3) % 8);
    let _ = std::fs::remove_dir_all(&t);
    let _ = std::fs::remove_dir_all(&t2);
}

/// The mlx5 host without a profile, written to stdout: 12 cores (each hyperthread a
/// core, said in the notes) at 3,600 MHz, eth0's adaptive RX as DIM in CQE mode, eth1's
/// rx-usecs 16 and rx-frames 32 as a 16 us CQ period restarted by each event (EQE mode) and 32
/// packets, 6 queues of 1,024 descriptors at 100 Gbit/s, eth1's vectors on their
/// effective CPUs 6 + k and channel 5's (allowed 0-11, no effective CPU) left to the
/// round robin and reported. The costs are left out (notes "not measured"); a scenario
/// that gives them runs the model.
#[test]
fn an_mlx5_host_imports_to_stdout_without_costs() {
    let t = tmp("mlx5");
    let dumps = t.join("dumps");
    mlx5_host(&dumps);
    let o = irqsim(&["import-host", dumps.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("costs: not measured"), "{err}");
    assert!(err.contains("eth1-q5 (vector 145 may go to CPUs"), "{err}");
    let model = t.join("host.json");
    std::fs::write(&model, &o.stdout).unwrap();
    let m = load_model(&model);
    assert_eq!((m.cpu.cores, m.cpu.clock_mhz), (12, 3600.0));
    assert!(m.notes["cpu.cores"].contains("2 threads per core"));
    let (e0, e1) = (&m.nics[0], &m.nics[1]);
    assert_eq!(
        (e0.queues, e0.rx_ring_slots, e0.line_rate_bps),
        (6, 1024, 100e9)
    );
    let dim = serde_json::to_value(e0.dim.as_ref().expect("DIM")).unwrap();
    assert_eq!(dim["mode"], "cqe");
    assert!(e0.moderation.is_none());
    let md = e1.moderation.as_ref().expect("eth1's moderation");
    assert_eq!(
        (
            md.cq_period_ns,
            md.cq_period_mode,
            md.packets,
            md.packet_timer_ns
        ),
        (16_000.0, Some(CqPeriodMode::Eqe), 32, 0.0)
    );
    assert!(e1.dim.is_none());
    for k in 0..5u16 {
        assert_eq!(m.cpu.irq_affinity[&format!("eth0-q{k}")], k);
        assert_eq!(m.cpu.irq_affinity[&format!("eth1-q{k}")], 6 + k);
    }
    assert!(!m.cpu.irq_affinity.contains_key("eth1-q5"));
    assert!(m.notes["nics.eth1.vectors"].contains("eth1-q5"));
    assert!(m.notes["nics.eth0.dim"].contains("ethtool-c-eth0 line 2"));
    assert!(m.notes["nics.eth1.moderation.cq_period_ns"].contains("`CQE mode RX`"));
    assert!(m.notes["kernel.net.core.busy_read"].contains("50"));
    assert!(m.notes["nics.eth0.driver"].starts_with("not measured"));
    assert_eq!(m.kernel.napi.netdev_budget, 300);
    // Without costs a receiving NIC is refused; the costs given by the scenario run it.
    let sc = t.join("scenario.json");
    let mut s = serde_json::json!({
        "description": "the imported mlx5 host",
        "model": "host.json",
        "workload": {"flows": [{"name": "a", "from": "eth0", "to": "eth1", "frame_bytes": 64,
                                "arrivals": "constant"}]},
        "load": {"unit": "percent", "points": [0.5]},
        "duration_s": 0.01, "drain_s": 0.01, "seed": 1, "replications": 1
    });
    std::fs::write(&sc, serde_json::to_string(&s).unwrap()).unwrap();
    let out = t.join("out");
    let args = [
        "run",
        sc.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-plots",
        "--quiet",
    ];
    let o = irqsim(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("at `nics[0].driver.rx_per_packet`: required"),
        "{}",
        stderr(&o)
    );
    let driver = serde_json::json!({"isr_entry": {"ns": 500}, "rx_per_packet": {"ns": 66},
                                    "isr_exit": {"ns": 200}});
    s["overrides"] = serde_json::json!({
        "kernel": {"netisr_per_packet": {"ns": 509}},
        "nics": {"eth0": {"driver": driver}, "eth1": {"driver": driver}}
    });
    std::fs::write(&sc, serde_json::to_string(&s).unwrap()).unwrap();
    let o = irqsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let total = &r["points"][0]["total"];
    assert_eq!(total["lost"], 0, "{total}");
    assert!(total["sent"].as_u64().unwrap() > 7000, "{total}");
    let _ = std::fs::remove_dir_all(&t);
}

/// Lines not understood are reported as `file:line: ...: reason` and not used: a stray
/// line in sysctl's dump (line 11) and a row of /proc/interrupts with fewer counts than
/// CPUs (line 5); the import succeeds and the model does not mention them.
#[test]
fn lines_not_understood_are_reported_not_used() {
    let t = tmp("stray");
    let dumps = t.join("dumps");
    ixgbe_host(&dumps, 0);
    let mut s = std::fs::read_to_string(dumps.join("sysctl-net.core")).unwrap();
    s.push_str("sysctl: permission denied on key 'net.core.bpf_jit_harden'\n");
    write(&dumps, "sysctl-net.core", &s);
    let p = std::fs::read_to_string(dumps.join("proc-interrupts")).unwrap();
    let mut lines: Vec<&str> = p.lines().collect();
    lines.insert(
        4,
        " 99:          7   IR-PCI-MSI 524387-edge      eth9-TxRx-0",
    );
    write(&dumps, "proc-interrupts", &(lines.join("\n") + "\n"));
    let model = t.join("host.json");
    let o = irqsim(&[
        "import-host",
        dumps.to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("lines not understood (2;"), "{err}");
    assert!(
        err.contains("sysctl-net.core:11: `sysctl: permission denied on key 'net.core.bpf_jit_harden'`: not `key = value`"),
        "{err}"
    );
    assert!(err.contains("proc-interrupts:5: "), "{err}");
    assert!(err.contains("fewer than 8 counts"), "{err}");
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(!text.contains("eth9") && !text.contains("permission denied"));
    assert_eq!(load_model(&model).kernel.napi.netdev_budget, 600);
    let _ = std::fs::remove_dir_all(&t);
}

/// Bad input exits 2 naming the file, and writes nothing: a missing directory, a
/// missing required dump, a malformed ring size (with its line), a dump of another
/// interface, a dump larger than the 16 MiB read limit, a profile that is not a model.
#[test]
fn bad_dumps_are_refused_before_anything_is_written() {
    let t = tmp("refused");
    let model = t.join("host.json");
    let refuse = |dir: &Path, extra: &[&str], want: &[&str]| {
        let mut args = vec![
            "import-host",
            dir.to_str().unwrap(),
            "--out",
            model.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = irqsim(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        for w in want {
            assert!(err.contains(w), "want {w:?} in:\n{err}");
        }
        assert!(!model.exists(), "{err}");
    };
    refuse(
        &t.join("no-such-dir"),
        &[],
        &["no-such-dir", "cannot read the dump directory"],
    );

    let d = t.join("no-lscpu");
    ixgbe_host(&d, 0);
    std::fs::remove_file(d.join("lscpu")).unwrap();
    refuse(
        &d,
        &[],
        &["lscpu: missing: it is required", "nothing was written"],
    );

    let d = t.join("bad-ring");
    ixgbe_host(&d, 0);
    write(
        &d,
        "ethtool-g-eth1",
        &ethtool_g("eth1", 4096, 512).replace("RX:\t\t512", "RX:\t\tmany"),
    );
    refuse(
        &d,
        &[],
        // (Control characters of a quoted line are printed escaped, tabs too.)
        &["ethtool-g-eth1:8: `RX:\\t\\tmany`: `RX` is not a number or n/a"],
    );

    let d = t.join("mixed-up");
    ixgbe_host(&d, 0);
    write(
        &d,
        "ethtool-c-eth1",
        &ethtool_c("eth0", "n/a", "50", "n/a", None),
    );
    refuse(&d, &[], &["ethtool-c-eth1:1:", "the output for `eth0`"]);

    let d = t.join("huge");
    ixgbe_host(&d, 0);
    let big = vec![b' '; (16 << 20) + 1];
    std::fs::write(d.join("proc-interrupts"), big).unwrap();
    refuse(&d, &[], &["proc-interrupts: cannot read"]);

    let d = t.join("bad-profile");
    ixgbe_host(&d, 0);
    let prof = t.join("not-a-model.json");
    std::fs::write(&prof, "{\"cpu\": 3}").unwrap();
    refuse(
        &d,
        &["--profile", prof.to_str().unwrap()],
        &["--profile", "not-a-model.json"],
    );
    let _ = std::fs::remove_dir_all(&t);
}
