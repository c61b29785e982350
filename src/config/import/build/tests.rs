use super::super::dump::Dump;
use super::super::ethtool;
use super::*;

/// An interface's dumps: `ethtool -c` with `Adaptive RX: <adaptive>`, `rx-usecs`,
/// `rx-frames` and an optional `CQE mode RX` line, and `Combined: <combined>`.
fn nic(driver: &str, adaptive: &str, usecs: &str, cqe: Option<&str>, combined: &str) -> NicDumps {
    let mut f = Findings::default();
    let mut c = format!(
        "Coalesce parameters for eth0:\nAdaptive RX: {adaptive}  TX: off\nrx-usecs: {usecs}\nrx-frames: 64\ntx-usecs: 8\n"
    );
    if let Some(m) = cqe {
        c.push_str(&format!("CQE mode RX: {m}  TX: off\n"));
    }
    let l = format!(
        "Channel parameters for eth0:\nPre-set maximums:\nCombined:\t128\nCurrent hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\t1\nCombined:\t{combined}\n"
    );
    let n = NicDumps {
        name: "eth0".into(),
        info: ethtool::driver_info(
            &Dump::from_text("ethtool-i-eth0", &format!("driver: {driver}\n")),
            &mut f,
        ),
        rings: ethtool::Rings::default(),
        channels: ethtool::channels(&Dump::from_text("ethtool-l-eth0", &l), "eth0", &mut f),
        coalesce: ethtool::coalesce(&Dump::from_text("ethtool-c-eth0", &c), "eth0", &mut f),
        speed: None,
    };
    assert!(f.faults.is_empty() && f.unparsed.is_empty(), "{f:?}");
    n
}

fn moder(n: &NicDumps) -> (Option<Value>, Option<Value>, Notes) {
    let mut notes = Notes::default();
    let (m, d) = moderation(n, n.driver(), &mut notes);
    (m, d, notes)
}

#[test]
fn mlx5_adaptive_rx_is_dim_in_cqe_mode_by_default() {
    let (m, d, notes) = moder(&nic("mlx5_core", "on", "8", None, "6"));
    assert_eq!((m, d), (None, Some(json!({"mode": "cqe"}))));
    assert!(notes.map["nics.eth0.dim"].contains("ethtool-c-eth0 line 2"));
    assert!(notes.map["nics.eth0.dim"].contains("mlx5's default"));
    let (_, d, _) = moder(&nic("mlx5_core", "on", "8", Some("off"), "6"));
    assert_eq!(d, Some(json!({"mode": "eqe"})));
}

#[test]
fn mlx5_static_moderation_is_a_period_and_a_count() {
    let (m, d, notes) = moder(&nic("mlx5_core", "off", "8", Some("on"), "6"));
    assert_eq!(d, None);
    assert_eq!(
        m,
        Some(json!({"cq_period_ns": 8000.0, "cq_period_mode": "cqe", "packets": 64}))
    );
    assert!(notes.map["nics.eth0.moderation.packets"].contains("line 4"));
    let (m, _, _) = moder(&nic("mlx5_core", "off", "8", Some("off"), "6"));
    assert_eq!(
        m,
        Some(json!({"cq_period_ns": 8000.0, "cq_period_mode": "eqe", "packets": 64}))
    );
    let (m, _, notes) = moder(&nic("mlx5_core", "off", "0", None, "6"));
    assert_eq!(m, None);
    assert!(notes.map["nics.eth0.moderation"].starts_with("none"));
    assert!(notes.not_filled.is_empty());
}

#[test]
fn intel_itr_is_an_interval_and_dynamic_modes_are_not_guessed() {
    let (m, _, _) = moder(&nic("ixgbe", "n/a", "100", None, "8"));
    assert_eq!(m, Some(json!({"min_interval_ns": 100000.0})));
    // ixgbe's 1 (or adaptive-rx on) selects its dynamic ITR, which is modelled
    // (moderation.adaptive "ixgbe"); igb's 3 and i40e's adaptive flag select their own,
    // which are not.
    for (adaptive, usecs) in [("n/a", "1"), ("on", "1")] {
        let (m, d, notes) = moder(&nic("ixgbe", adaptive, usecs, None, "4"));
        assert_eq!((m, d), (Some(json!({"adaptive": "ixgbe"})), None));
        assert!(notes.not_filled.is_empty(), "{:?}", notes.not_filled);
        assert!(notes.map["nics.eth0.moderation.adaptive"].contains("ixgbe_set_itr"));
    }
    for (driver, adaptive, usecs) in [("igb", "n/a", "3"), ("i40e", "on", "50")] {
        let (m, d, notes) = moder(&nic(driver, adaptive, usecs, None, "4"));
        assert_eq!((m, d), (None, None), "{driver}");
        assert_eq!(notes.not_filled.len(), 1, "{driver}");
        assert!(
            notes.not_filled[0].contains("not model"),
            "{driver}: {:?}",
            notes.not_filled
        );
    }
    let (m, _, notes) = moder(&nic("igb", "n/a", "4", None, "4"));
    assert_eq!(m, Some(json!({"min_interval_ns": 4000.0})));
    assert!(notes.not_filled.is_empty());
    let (m, _, notes) = moder(&nic("ixgbe", "n/a", "0", None, "4"));
    assert_eq!(m, None);
    assert!(notes.map["nics.eth0.moderation"].contains("turns ixgbe's ITR off"));
}

#[test]
fn an_unknown_drivers_coalescing_is_not_guessed() {
    let (m, d, notes) = moder(&nic("e1000e", "off", "3", None, "1"));
    assert_eq!((m, d), (None, None));
    assert!(notes.not_filled[0].contains("rx-usecs 3"));
    assert!(notes.not_filled[0].contains("e1000e"));
}

#[test]
fn queues_are_the_receive_channels_within_the_models_range() {
    let mut notes = Notes::default();
    let mut f = Findings::default();
    assert_eq!(
        queues(&nic("ixgbe", "n/a", "0", None, "12"), &mut f, &mut notes),
        Some(12)
    );
    assert!(notes.map["nics.eth0.queues"].contains("Combined 12 (ethtool-l-eth0 line 8"));
    for bad in ["0", "65"] {
        let mut f = Findings::default();
        assert_eq!(
            queues(&nic("ixgbe", "n/a", "0", None, bad), &mut f, &mut notes),
            None
        );
        assert_eq!(f.faults.len(), 1, "{bad}");
        assert_eq!(f.faults[0].file, "ethtool-l-eth0");
    }
}
