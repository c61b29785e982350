use super::*;

#[test]
fn param_specs_parse_and_refuse_clearly() {
    let p: ParamSpec = "kernel.netisr_per_packet.ns=2000..9000@7000"
        .parse()
        .unwrap();
    assert_eq!(p.path, "kernel.netisr_per_packet.ns");
    assert_eq!((p.lo, p.hi, p.start), (2000.0, 9000.0, Some(7000.0)));
    let q: ParamSpec = "a.b=1..2".parse().unwrap();
    assert_eq!(q.start, None);
    for bad in [
        "a.b",
        "a.b=1",
        "a.b=2..1",
        "a.b=1..x",
        "a.b=1..2@3",
        "=1..2",
    ] {
        assert!(bad.parse::<ParamSpec>().is_err(), "{bad}");
    }
}

#[test]
fn paths_reach_named_array_elements() {
    let m: Value = serde_json::json!({
        "nics": [ {"name": "dc0", "driver": {"isr_entry": {"ns": 1000}}},
                  {"name": "dc1", "rx_ring_slots": 64} ]
    });
    let segs = |s: &str| s.split('.').map(String::from).collect::<Vec<_>>();
    assert_eq!(
        lookup(&m, &segs("nics.dc0.driver.isr_entry.ns")),
        Some(&Value::from(1000))
    );
    assert_eq!(
        lookup(&m, &segs("nics.1.rx_ring_slots")),
        Some(&Value::from(64))
    );
    assert_eq!(lookup(&m, &segs("nics.dc9.rx_ring_slots")), None);
    // The patch for a path is the merge patch a user would write.
    let mut m2 = m.clone();
    scenario::merge_patch(
        &mut m2,
        &patch_for(&segs("nics.dc1.rx_ring_slots"), 128.into()),
    );
    assert_eq!(
        lookup(&m2, &segs("nics.dc1.rx_ring_slots")),
        Some(&Value::from(128))
    );
    *lookup_mut(&mut m2, &segs("nics.dc0.driver.isr_entry.ns")).unwrap() = 7.into();
    assert_eq!(m2["nics"][0]["driver"]["isr_entry"]["ns"], 7);
}

#[test]
fn small_inverse_and_singular_matrices() {
    // [[4, 2], [2, 3]]^-1 = [[3, -2], [-2, 4]] / 8.
    let inv = invert(&[vec![4.0, 2.0], vec![2.0, 3.0]]).unwrap();
    let want = [[0.375, -0.25], [-0.25, 0.5]];
    for a in 0..2 {
        for b in 0..2 {
            assert!((inv[a][b] - want[a][b]).abs() < 1e-12);
        }
    }
    assert!(invert(&[vec![1.0, 2.0], vec![2.0, 4.0]]).is_none());
    assert!(invert(&[vec![0.0]]).is_none());
}
