use super::*;
use crate::results::PointFigures;

/// A two-core host with an ixgbe port of two queues (eth0) and an mlx5 one (eth1),
/// one 64-byte flow from eth0 to eth1.
fn host() -> LinuxHost {
    linux_host(
        serde_json::json!([
            { "name": "eth0", "queues": 2, "linux_driver": "ixgbe",
              "policy": { "kind": "napi" } },
            { "name": "eth1", "queues": 2, "linux_driver": "mlx5",
              "policy": { "kind": "napi" } }
        ]),
        Some(("eth0", "eth1")),
    )
}

/// A two-core host (1 GHz, 100 ns of netisr a frame) with the NICs `nics` (JSON) and,
/// given `(from, to)`, one 64-byte flow `f0` between them.
fn linux_host(nics: serde_json::Value, flow: Option<(&str, &str)>) -> LinuxHost {
    let model: ModelConfig = serde_json::from_value(serde_json::json!({
        "cpu": { "clock_mhz": 1000, "cores": 2 },
        "kernel": { "netisr_per_packet": { "ns": 100 } },
        "nics": nics
    }))
    .expect("model");
    let flows: Vec<FlowConfig> = flow.map_or_else(Vec::new, |(from, to)| {
        serde_json::from_value(serde_json::json!([
            { "name": "f0", "from": from, "to": to, "frame_bytes": 64 }
        ]))
        .expect("flows")
    });
    LinuxHost::new(&model, &flows).expect("a Linux host")
}

fn point(counters: &[(&str, f64)]) -> PointResult {
    let mut f0 = FlowResult {
        name: "f0".into(),
        ..FlowResult::default()
    };
    f0.drops.rx_ring = 7.0;
    f0.drops.rx_fifo = 2.0;
    f0.drops.ipintrq = 3.0;
    PointResult {
        variant: "default".into(),
        load_pct: 10.0,
        offered_pps: 1000.0,
        outstanding: None,
        replications: 1,
        figures: PointFigures {
            flows: vec![f0],
            counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..PointFigures::default()
        },
        ci95: None,
    }
}

#[test]
fn softnet_stat_is_fifteen_hex_fields_per_cpu() {
    // Expected: softnet_seq_show's "%08x" x 15 (net/core/net-procfs.c at 0e0939c0):
    // processed, dropped, time_squeeze, six zeros, received_rps, flow_limit_count,
    // backlog_len, the CPU, input_qlen, process_qlen.
    let p = point(&[
        ("cpu0.softnet.processed", 4660.0),
        ("cpu0.softnet.dropped", 1.0),
        ("cpu0.softnet.time_squeeze", 2.0),
        ("cpu0.softnet.received_rps", 3.0),
        ("cpu1.softnet.processed", 4294967296.0 + 17.0),
    ]);
    let s = host().softnet_stat(&p).expect("softnet counters");
    assert_eq!(
        s,
        "00001234 00000001 00000002 00000000 00000000 00000000 00000000 00000000 \
         00000000 00000003 00000000 00000000 00000000 00000000 00000000\n\
         00000011 00000000 00000000 00000000 00000000 00000000 00000000 00000000 \
         00000000 00000000 00000000 00000000 00000001 00000000 00000000\n"
    );
    assert!(host().softnet_stat(&point(&[])).is_none());
}

#[test]
fn interrupts_has_the_kernels_columns() {
    // Expected: show_interrupts (kernel/irq/proc.c): prec 3, so 11 spaces and
    // "CPU%-8d" per CPU; a row "%*d: ", "%10u " per CPU, " %8s" chip, " %*lu"
    // hwirq, "-%-8s" "edge", "  %s" action. Round robin puts line i on core i % 2.
    let p = point(&[("eth0-q0.interrupts", 5.0), ("eth1-q1.interrupts", 9.0)]);
    let s = host().interrupts(&p);
    let want = "           CPU0       CPU1       \n\
                \x20 0:          5          0   PCI-MSI   0-edge      eth0-TxRx-0\n\
                \x20 1:          0          0   PCI-MSI   1-edge      eth0-TxRx-1\n\
                \x20 2:          0          0   PCI-MSI   0-edge      mlx5_comp0@pci:eth1\n\
                \x20 3:          0          9   PCI-MSI   1-edge      mlx5_comp1@pci:eth1\n";
    assert_eq!(s, want);
}

#[test]
fn net_dev_has_the_kernels_header_and_widths() {
    // Expected: dev_seq_show's header and dev_seq_printf_stats's widths; rx bytes
    // 60 a frame (64 less the FCS); the drop column: ixgbe's rx_dropped (3 backlog
    // drops) + rx_missed_errors (2 FIFO drops), not its 7 ring drops.
    let s = host().net_dev(&frames_point(&[]));
    let want = format!(
        "{NET_DEV_HEADER}\
         \x20 eth0:    1800      30    0    5    0     0          0         0        0       0    0    0    0     0       0          0\n\
         \x20 eth1:       0       0    0    0    0     0          0         0     1500      25    0    0    0     0       0          0\n"
    );
    assert_eq!(s, want);
}

#[test]
fn ethtool_names_are_the_drivers() {
    // Expected: ethtool's "NIC statistics:" and "     %s: %llu"; ixgbe's names
    // (ixgbe_gstrings_stats, then tx queues before rx queues); mlx5's (en_stats.c).
    let p = frames_point(&[("eth1-q1.interrupts", 4.0)]);
    let h = host();
    assert_eq!(
        h.ethtool_s("eth0", &p).expect("ixgbe"),
        "NIC statistics:\n     rx_packets: 30\n     tx_packets: 0\n     rx_bytes: 1800\n     \
         tx_bytes: 0\n     rx_dropped: 3\n     rx_missed_errors: 2\n     \
         rx_no_dma_resources: 7\n     tx_queue_0_packets: 0\n     tx_queue_0_bytes: 0\n     \
         tx_queue_1_packets: 0\n     tx_queue_1_bytes: 0\n     rx_queue_0_packets: 10\n     \
         rx_queue_0_bytes: 600\n     rx_queue_1_packets: 20\n     rx_queue_1_bytes: 1200\n"
    );
    let m = h.ethtool_s("eth1", &p).expect("mlx5");
    assert!(m.starts_with("NIC statistics:\n     rx_packets: 0\n     rx_bytes: 0\n     tx_packets: 25\n     tx_bytes: 1500\n"));
    assert!(m.contains("\n     rx_out_of_buffer: 0\n     rx_discards_phy: 0\n     ch0_events: 0\n     ch1_events: 4\n"));
    assert!(m.ends_with("     tx1_packets: 13\n     tx1_bytes: 780\n"));
    assert!(h.ethtool_s("eth9", &p).is_none());
}

#[test]
fn point_directories_sort_and_say_the_load() {
    assert_eq!(point_dir(0, 9, 124000.0, LoadUnit::Pps), "0-124000pps");
    assert_eq!(point_dir(3, 12, 27.5, LoadUnit::Percent), "03-27.5pct");
    assert_eq!(
        point_dir(7, 101, 8.0, LoadUnit::Outstanding),
        "007-8outstanding"
    );
}

#[test]
fn a_port_dpdk_owns_is_not_the_kernels() {
    let h = linux_host(
        serde_json::json!([
            { "name": "eth0", "queues": 2, "linux_driver": "mlx5",
              "policy": { "kind": "dpdk", "action": "rxonly",
                          "poll": { "ns": 20 }, "rx": { "ns": 22 } } },
            { "name": "eth1", "queues": 2, "linux_driver": "mlx5",
              "policy": { "kind": "napi" } }
        ]),
        None,
    );
    let p = point(&[("eth0-q0.rx_frames", 10.0)]);
    let names: Vec<String> = h.files(&p).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["interrupts", "net-dev", "ethtool-S-eth1"]);
    assert!(!h.net_dev(&p).contains("eth0"));
    assert_eq!(h.interrupts(&p).lines().count(), 3);
}

/// A two-core host with an e1000 port (em0) and a tulip one (dc0), each a single
/// queue on a legacy line, one 64-byte flow from `from` to `to`.
fn legacy_host(from: &str, to: &str) -> LinuxHost {
    linux_host(
        serde_json::json!([
            { "name": "em0", "linux_driver": "e1000", "policy": { "kind": "interrupt" } },
            { "name": "dc0", "linux_driver": "tulip", "policy": { "kind": "interrupt" } }
        ]),
        Some((from, to)),
    )
}

#[test]
fn e1000_and_tulip_have_legacy_lines_and_their_own_drops() {
    // Expected: show_interrupts' row for an IO-APIC line: " %8s" "IO-APIC", the
    // pin (the IRQ on x86) as hwirq, "-%-8s" "fasteoi", the netdev's name as the
    // action (request_irq(..., netdev->name, ...)).
    let p = point(&[
        ("em0.interrupts", 5.0),
        ("dc0.interrupts", 9.0),
        ("em0.rx_frames", 30.0),
        ("dc0.tx_frames", 25.0),
    ]);
    let h = legacy_host("em0", "dc0");
    assert_eq!(
        h.interrupts(&p),
        "           CPU0       CPU1       \n\
         \x20 0:          5          0   IO-APIC   0-fasteoi   em0\n\
         \x20 1:          0          9   IO-APIC   1-fasteoi   dc0\n"
    );
    // e1000's drop column: the backlog's 3 + MPC, which counts the ring's 7 and the
    // FIFO's 2 (a frame with no descriptor waits in the FIFO until it overflows).
    let want = format!(
        "{NET_DEV_HEADER}\
         \x20  em0:    1800      30    0   12    0     0          0         0        0       0    0    0    0     0       0          0\n\
         \x20  dc0:       0       0    0    0    0     0          0         0     1500      25    0    0    0     0       0          0\n"
    );
    assert_eq!(h.net_dev(&p), want);
    // e1000's octet counters (GORC, GOTC) include the FCS: 64 bytes a frame.
    assert_eq!(
        h.ethtool_s("em0", &p).expect("e1000"),
        "NIC statistics:\n     rx_packets: 30\n     tx_packets: 0\n     rx_bytes: 1920\n     \
         tx_bytes: 0\n     rx_missed_errors: 9\n     rx_long_byte_count: 1920\n"
    );
    // tulip has no ethtool statistics: no file.
    assert!(h.ethtool_s("dc0", &p).is_none());
    let names: Vec<String> = h.files(&p).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["interrupts", "net-dev", "ethtool-S-em0"]);
    // Into the tulip: its drop column is the backlog's 3 + CSR8's missed frames (the
    // ring's 7); the FIFO's 2 are in CSR8's overflow count, which tulip never reads.
    let p = point(&[("dc0.rx_frames", 30.0), ("em0.tx_frames", 25.0)]);
    let h = legacy_host("dc0", "em0");
    let dev = h.net_dev(&p);
    assert!(
        dev.contains("\n   dc0:    1800      30    0   10    0     0 "),
        "{dev}"
    );
    let e = h.ethtool_s("em0", &p).expect("e1000");
    assert!(e.contains("\n     tx_packets: 25\n     rx_bytes: 0\n     tx_bytes: 1600\n     rx_missed_errors: 0\n"), "{e}");
}

/// A two-core host with two ports of `driver` (eth0 and eth1) of `queues` queues
/// each, one 64-byte flow from eth0 to eth1.
fn host_of(driver: &str, queues: u16) -> LinuxHost {
    linux_host(
        serde_json::json!([
            { "name": "eth0", "queues": queues, "linux_driver": driver,
              "policy": { "kind": "napi" } },
            { "name": "eth1", "queues": queues, "linux_driver": driver,
              "policy": { "kind": "napi" } }
        ]),
        Some(("eth0", "eth1")),
    )
}

/// Two queues each way: eth0 received 10 and 20 frames and its queue 1 refused 7
/// (the flow's 7 ring drops; [`point`] adds 2 FIFO and 3 backlog drops), eth1 sent
/// 12 and 13.
fn two_queue_point() -> PointResult {
    frames_point(&[("eth0-q1.rx_ring.drops", 7.0)])
}

/// Two queues each way: eth0 received 10 and 20 frames, eth1 sent 12 and 13; with the
/// counters `more`.
fn frames_point(more: &[(&str, f64)]) -> PointResult {
    let mut c = vec![
        ("eth0-q0.rx_frames", 10.0),
        ("eth0-q1.rx_frames", 20.0),
        ("eth1-q0.tx_frames", 12.0),
        ("eth1-q1.tx_frames", 13.0),
    ];
    c.extend_from_slice(more);
    point(&c)
}

/// A two-queue `driver` host ([`host_of`]) at [`two_queue_point`]: eth0's `ethtool -S`
/// lines ([`stats`]), once its /proc/net/dev row is checked to start with `dev_row`
/// (received bytes, packets, errs, drop, fifo, frame).
fn eth0_of(driver: &str, dev_row: &str) -> Vec<String> {
    let (h, p) = (host_of(driver, 2), two_queue_point());
    let dev = h.net_dev(&p);
    assert!(
        dev.contains(&format!("\n  eth0:{dev_row}")),
        "{driver}: {dev}"
    );
    stats(&h.ethtool_s("eth0", &p).expect(driver))
}

/// [`eth0_of`]'s eth1 (the sending port), its /proc/net/dev row not checked.
fn eth1_of(driver: &str) -> Vec<String> {
    let (h, p) = (host_of(driver, 2), two_queue_point());
    stats(&h.ethtool_s("eth1", &p).expect(driver))
}

/// eth0's transmit queues in `ethtool -S` under the names igb and ixgbevf share (eth0
/// sends nothing at [`two_queue_point`]).
const ETH0_TX_QUEUES: [&str; 4] = [
    "tx_queue_0_packets: 0",
    "tx_queue_0_bytes: 0",
    "tx_queue_1_packets: 0",
    "tx_queue_1_bytes: 0",
];

/// `ethtool -S`'s lines after the header, as `name: value`.
fn stats(s: &str) -> Vec<String> {
    let body = s.strip_prefix("NIC statistics:\n").expect("the header");
    body.lines()
        .map(|l| l.strip_prefix("     ").expect("five spaces").to_string())
        .collect()
}

#[test]
fn igb_counts_its_drops_by_drop_enable() {
    // Expected: igb_gstrings_stats' order (GPRC, GPTC, GORC, GOTC with the FCS:
    // 64 bytes a frame), then igb_gstrings_net_stats' rx_fifo_errors, then the tx
    // queues and the rx queues (igb_get_strings, 4.18). Two queues: DROP_EN, so MPC
    // is the FIFO's 2 and queue 1's RQDPC its 7 ring drops; rx_fifo_errors 7 + 2.
    // /proc/net/dev: drop = the backlog's 3 + MPC 2, fifo = RQDPC 7 + MPC 2.
    assert_eq!(
        eth0_of("igb", "    1800      30    0    5    9     0 "),
        [
            &[
                "rx_packets: 30",
                "tx_packets: 0",
                "rx_bytes: 1920",
                "tx_bytes: 0",
                "rx_missed_errors: 2",
                "rx_long_byte_count: 1920",
                "rx_fifo_errors: 9",
            ][..],
            &ETH0_TX_QUEUES,
            &[
                "rx_queue_0_packets: 10",
                "rx_queue_0_bytes: 600",
                "rx_queue_0_drops: 0",
                "rx_queue_1_packets: 20",
                "rx_queue_1_bytes: 1200",
                "rx_queue_1_drops: 7",
            ],
        ]
        .concat()
    );
    let tx = eth1_of("igb");
    assert!(tx.contains(&"tx_bytes: 1600".to_string()), "{tx:?}");
    assert!(tx.contains(&"tx_queue_1_bytes: 780".to_string()), "{tx:?}");
    // One queue: no DROP_EN, so MPC counts the ring's 7 and the FIFO's 2.
    let p = point(&[("eth0.rx_frames", 30.0), ("eth0.rx_ring.drops", 7.0)]);
    let h = host_of("igb", 1);
    let s = stats(&h.ethtool_s("eth0", &p).expect("igb"));
    assert_eq!(s[4], "rx_missed_errors: 9");
    assert_eq!(s[6], "rx_fifo_errors: 9");
    assert_eq!(s.last().unwrap(), "rx_queue_0_drops: 0");
    let dev = h.net_dev(&p);
    assert!(
        dev.contains("\n  eth0:    1800      30    0   12    9     0 "),
        "{dev}"
    );
}

#[test]
fn ixgbevf_has_its_rings_counts_and_no_drops() {
    // Expected: ixgbevf_gstrings_stats' netdev stats, then the tx queues and the
    // rx queues (ixgbevf_get_strings, 4.18); bytes 60 a frame; no drop counter in
    // either file: the drop column has the backlog's 3 only.
    assert_eq!(
        eth0_of("ixgbevf", "    1800      30    0    3    0     0 "),
        [
            &[
                "rx_packets: 30",
                "tx_packets: 0",
                "rx_bytes: 1800",
                "tx_bytes: 0"
            ][..],
            &ETH0_TX_QUEUES,
            &[
                "rx_queue_0_packets: 10",
                "rx_queue_0_bytes: 600",
                "rx_queue_1_packets: 20",
                "rx_queue_1_bytes: 1200",
            ],
        ]
        .concat()
    );
}

#[test]
fn i40e_and_ice_name_their_queues_and_port() {
    // Expected: i40e_get_stat_strings (4.18): the VSI's net stats, its queues
    // (tx then rx of each pair), then the port's; ice_get_strings (4.18): the VSI's
    // rx_discards, the tx queues, the rx queues, the port's `port.%s`. The VSI's
    // discards are the ring's 7, the port's the FIFO's 2; bytes 60 a frame.
    // /proc/net/dev's drop column: the backlog's 3 + the VSI's 7.
    assert_eq!(
        eth0_of("i40e", "    1800      30    0   10    0     0 "),
        [
            "rx_packets: 30",
            "tx_packets: 0",
            "rx_bytes: 1800",
            "tx_bytes: 0",
            "rx_dropped: 7",
            "tx-0.tx_packets: 0",
            "tx-0.tx_bytes: 0",
            "rx-0.rx_packets: 10",
            "rx-0.rx_bytes: 600",
            "tx-1.tx_packets: 0",
            "tx-1.tx_bytes: 0",
            "rx-1.rx_packets: 20",
            "rx-1.rx_bytes: 1200",
            "port.rx_dropped: 2",
        ]
    );
    assert_eq!(
        eth0_of("ice", "    1800      30    0   10    0     0 "),
        [
            "rx_discards: 7",
            "tx-queue-0.tx_packets: 0",
            "tx-queue-0.tx_bytes: 0",
            "tx-queue-1.tx_packets: 0",
            "tx-queue-1.tx_bytes: 0",
            "rx-queue-0.rx_packets: 10",
            "rx-queue-0.rx_bytes: 600",
            "rx-queue-1.rx_packets: 20",
            "rx-queue-1.rx_bytes: 1200",
            "port.rx_dropped: 2",
        ]
    );
    let tx = eth1_of("ice");
    assert_eq!(
        tx[1..5],
        [
            "tx-queue-0.tx_packets: 12",
            "tx-queue-0.tx_bytes: 720",
            "tx-queue-1.tx_packets: 13",
            "tx-queue-1.tx_bytes: 780"
        ]
    );
}

#[test]
fn the_cloud_nics_write_their_queues() {
    // Expected: ena_queue_strings (4.18): per pair the tx then the rx counters;
    // gve_get_strings: the main stats, the rx queues', the tx queues';
    // vmxnet3_get_strings (4.18): per tx queue then per rx queue, its index and the
    // device's counts, names with their leading spaces. Bytes 60 a frame; the drop
    // column has the backlog's 3 only.
    assert_eq!(
        eth0_of("ena", "    1800      30    0    3    0     0 "),
        [
            "queue_0_tx_cnt: 0",
            "queue_0_tx_bytes: 0",
            "queue_0_rx_cnt: 10",
            "queue_0_rx_bytes: 600",
            "queue_1_tx_cnt: 0",
            "queue_1_tx_bytes: 0",
            "queue_1_rx_cnt: 20",
            "queue_1_rx_bytes: 1200",
        ]
    );
    assert_eq!(
        eth1_of("gve"),
        [
            "rx_packets: 0",
            "tx_packets: 25",
            "rx_bytes: 0",
            "tx_bytes: 1500",
            "rx_bytes[0]: 0",
            "rx_bytes[1]: 0",
            "tx_bytes[0]: 720",
            "tx_bytes[1]: 780",
        ]
    );
    let (h, p) = (host_of("vmxnet3", 2), two_queue_point());
    assert_eq!(
        h.ethtool_s("eth0", &p).expect("vmxnet3"),
        "NIC statistics:\n     Tx Queue#: 0\n       ucast pkts tx: 0\n       \
         ucast bytes tx: 0\n     Tx Queue#: 1\n       ucast pkts tx: 0\n       \
         ucast bytes tx: 0\n     Rx Queue#: 0\n       ucast pkts rx: 10\n       \
         ucast bytes rx: 600\n       pkts rx OOB: 0\n     Rx Queue#: 1\n       \
         ucast pkts rx: 20\n       ucast bytes rx: 1200\n       pkts rx OOB: 7\n"
    );
    assert!(
        h.net_dev(&p)
            .contains("\n  eth0:    1800      30    0    3    0     0 ")
    );
}

#[test]
fn each_drivers_vectors_have_its_names() {
    // Expected: igb_request_msix `%s-TxRx-%u`; i40e_vsi_request_irq_msix and
    // ice_vsi_req_irq_msix `<driver>-<netdev>-TxRx-%d`; ena_setup_io_intr
    // `%s-Tx-Rx-%d`; gve_alloc_notify_blocks `gve-ntfy-blk%d@pci:%s`, receive queue
    // k on block queues + k; vmxnet3_request_irqs `%s-rxtx-%d`. MSI-X rows.
    let p = point(&[]);
    for (driver, want) in [
        (
            "ixgbevf",
            ["eth0-TxRx-0", "eth0-TxRx-1", "eth1-TxRx-0", "eth1-TxRx-1"],
        ),
        (
            "igb",
            ["eth0-TxRx-0", "eth0-TxRx-1", "eth1-TxRx-0", "eth1-TxRx-1"],
        ),
        (
            "i40e",
            [
                "i40e-eth0-TxRx-0",
                "i40e-eth0-TxRx-1",
                "i40e-eth1-TxRx-0",
                "i40e-eth1-TxRx-1",
            ],
        ),
        (
            "ice",
            [
                "ice-eth0-TxRx-0",
                "ice-eth0-TxRx-1",
                "ice-eth1-TxRx-0",
                "ice-eth1-TxRx-1",
            ],
        ),
        (
            "ena",
            [
                "eth0-Tx-Rx-0",
                "eth0-Tx-Rx-1",
                "eth1-Tx-Rx-0",
                "eth1-Tx-Rx-1",
            ],
        ),
        (
            "gve",
            [
                "gve-ntfy-blk2@pci:eth0",
                "gve-ntfy-blk3@pci:eth0",
                "gve-ntfy-blk2@pci:eth1",
                "gve-ntfy-blk3@pci:eth1",
            ],
        ),
        (
            "vmxnet3",
            ["eth0-rxtx-0", "eth0-rxtx-1", "eth1-rxtx-0", "eth1-rxtx-1"],
        ),
    ] {
        let s = host_of(driver, 2).interrupts(&p);
        let rows: Vec<&str> = s.lines().skip(1).collect();
        assert_eq!(rows.len(), 4, "{driver}: {s}");
        for (row, name) in rows.iter().zip(want) {
            assert!(row.contains("PCI-MSI"), "{driver}: {row}");
            assert!(row.ends_with(&format!("  {name}")), "{driver}: {row}");
        }
    }
    // A single queue is still an MSI-X vector (igb: its queue's).
    let s = host_of("igb", 1).interrupts(&p);
    assert!(
        s.lines()
            .nth(1)
            .unwrap()
            .ends_with("-edge      eth0-TxRx-0"),
        "{s}"
    );
}

#[test]
fn a_freebsd_model_has_no_linux_files() {
    let model: ModelConfig = serde_json::from_value(serde_json::json!({
        "cpu": { "clock_mhz": 1000 },
        "kernel": { "netisr_per_packet": { "ns": 100 } },
        "nics": [ { "name": "dc0" } ]
    }))
    .expect("model");
    assert_eq!(
        LinuxHost::new(&model, &[]).unwrap_err(),
        LinuxHostError::NotLinux
    );
}
