//! A host as sender (issue 8 item 5): scenarios/tx-sender-mbuf.json against the
//! freebsd-performance thread of April 2003 (`../shared/reference/seeds/004_*`).

use irqsim::config::scenario::{DiskFiles, load};
use irqsim::experiment::runner;
use std::path::Path;

#[test]
fn tx_sender_mbuf_matches_the_thread() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/tx-sender-mbuf.json");
    let exp = load(&path, &DiskFiles).expect("scenario loads");
    let r = runner::run(&exp, 0, &|| {}).expect("the sweep runs");
    let point = |v: &str| {
        r.points
            .iter()
            .find(|p| p.variant == v)
            .unwrap_or_else(|| panic!("variant {v}"))
    };
    // Expected packets/s, from the thread's table "PPS (MTU=4470)": before the patch
    // 20,000, after 27,500, NetBSD 28,000 (the last is the gigabit wire limit at MTU
    // 4470: 1e9 / (4,508 x 8) = 27,728 frames/s).
    for (v, want) in [
        ("freebsd48-slow-mbuf", 20_000.0),
        ("freebsd48-patched", 27_500.0),
        ("netbsd", 28_000.0),
    ] {
        let snd = point(v).figures.sender.clone().expect("sender figures");
        assert!(
            (snd.pps - want).abs() <= 0.1 * want,
            "{v}: {} pps, want {want} +- 10 %",
            snd.pps
        );
        // The flow in the table agrees with the sender's own figure.
        assert_eq!(point(v).figures.total.forwarded_pps, snd.pps);
    }
    // NetBSD's CPU: top showed 6.5 % system + 5.5 % interrupt = 12 % (88.1 % idle).
    let nb = point("netbsd");
    let busy = 100.0 * (1.0 - nb.figures.cpu.idle);
    assert!((busy - 12.0).abs() <= 4.0, "netbsd CPU {busy:.1} %");
    // FreeBSD ran out of CPU in both cases (vmstat: 100 % system, 0 idle).
    for v in ["freebsd48-slow-mbuf", "freebsd48-patched"] {
        assert!(point(v).figures.cpu.idle < 0.01, "{v} should be CPU-bound");
    }
    // The NetBSD sender is limited by the wire: it slept on a full if_snd.
    assert!(nb.figures.counters["sender.blocks"] > 0.0);
}
