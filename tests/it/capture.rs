//! Traffic from a capture (issue 37, part 6): `"arrivals": {"pcap": FILE}`.
//!
//! - Round trip: irqsim's own `--pcap` capture of a run's input, replayed as captured,
//!   gives the same input frames (the capture files are byte-identical) and the same
//!   run; replayed at twice the rate, the same frames at half the gaps.
//! - A capture of several 5-tuples is replayed as one flow per 5-tuple, sharing the
//!   load by their frame counts, with the captured sizes and tuples; its pcapng form
//!   replays exactly as its pcap form.
//! - Refusals name the field: a file that cannot be read, a frame that cannot be
//!   steered, what the capture gives written beside it.

use irqsim::config::scenario::{self, DiskFiles, Experiment};
use irqsim::experiment::runner;
use irqsim::host::RunStats;
use irqsim::model::traffic::{FrameSize, TupleProtocol};
use irqsim::sim::time::SimTime;
use irqsim::trace::{TraceOutput, TraceSpec};
use serde_json::{Value, json};
use std::path::Path;

const MODEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/models/p3-448-dc21143-freebsd4.json"
);

/// The 21143 router (one core, 100 Mbit/s ports) with one flow `dc0 -> dc1` whose
/// arrivals are `arrivals`, at `points` of `unit`.
fn scenario(arrivals: Value, unit: &str, points: &[f64], duration_s: f64) -> Value {
    json!({
        "model": MODEL,
        "workload": { "flows": [
            { "name": "c", "from": "dc0", "to": "dc1", "arrivals": arrivals }
        ] },
        "load": { "unit": unit, "points": points },
        "duration_s": duration_s,
        "drain_s": 0.05,
        "seed": 11
    })
}

fn write(dir: &Path, name: &str, sc: &Value) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(sc).unwrap()).unwrap();
    p
}

fn load(dir: &Path, sc: &Value) -> Experiment {
    scenario::load(&write(dir, "case.json", sc), &DiskFiles::default()).expect("the scenario loads")
}

fn problems(dir: &Path, sc: &Value) -> String {
    match scenario::load(&write(dir, "bad.json", sc), &DiskFiles::default()) {
        Ok(_) => panic!("accepted: {sc}"),
        Err(e) => e.to_string(),
    }
}

/// Point 0 of `exp`, traced over its whole run with pcap captures.
fn traced(exp: &Experiment) -> (RunStats, TraceOutput) {
    let end = SimTime::from_secs_f64(exp.duration_s + exp.drain_s);
    let mut spec = TraceSpec::window(SimTime::ZERO, end);
    spec.pcap = true;
    runner::trace(exp, 0, 0, spec).expect("the traced run")
}

fn pcap<'a>(t: &'a TraceOutput, name: &str) -> &'a [u8] {
    &t.pcaps.iter().find(|(n, _)| n == name).expect(name).1
}

/// (time stamp [ns], length) of every record of a pcap.
fn records(bytes: &[u8]) -> Vec<(u64, usize)> {
    let mut r = pcap_file::pcap::PcapReader::new(bytes).expect("a pcap file");
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.expect("a record");
        out.push((p.timestamp.as_nanos() as u64, p.data.len()));
    }
    out
}

#[test]
fn irqsims_own_capture_replayed_as_captured_gives_the_same_input_frames() {
    let dir = tempfile::tempdir().unwrap();
    // 10,000 frames/s of 64 bytes for 10 ms: exactly 100 frames, a frame every 100 us
    // (the constant source's floor(rate x duration)). The capture's loop is its span x
    // N / (N - 1) = 99 x 100 us x 100 / 99 = 10 ms, the run: nothing is looped.
    let orig = load(
        dir.path(),
        &scenario(json!("constant"), "pps", &[10_000.0], 0.01),
    );
    let (s0, t0) = traced(&orig);
    assert_eq!(s0.total.sent, 100);
    let captured = pcap(&t0, "dc0-in.pcap");
    std::fs::write(dir.path().join("in.pcap"), captured).unwrap();

    let arrivals = json!({ "pcap": "in.pcap", "timing": "as-captured" });
    // (The load is the capture's own rate; the point only names the run.)
    let replay = load(dir.path(), &scenario(arrivals, "pps", &[1.0], 0.01));
    let flows = &replay.variants[0].flows;
    assert_eq!(flows.len(), 1, "one 5-tuple, one flow");
    assert_eq!(flows[0].display_name(), "c");
    assert_eq!(flows[0].frame_bytes, FrameSize::Fixed(64));
    // Its own rate: 100 frames over the 10 ms loop.
    let rate = replay.variants[0].points[0].rates_pps[0];
    assert!((rate - 10_000.0).abs() < 1e-6, "{rate}");
    let (s1, t1) = traced(&replay);
    assert_eq!(
        pcap(&t1, "dc0-in.pcap"),
        captured,
        "the replay's input capture"
    );
    // The frames start when the originals did, so the whole run is the same.
    assert_eq!(pcap(&t1, "dc1-out.pcap"), pcap(&t0, "dc1-out.pcap"));
    assert_eq!(s1.total.sent, s0.total.sent);
    assert_eq!(s1.total.received, s0.total.received);
    assert_eq!(s1.interrupts, s0.interrupts);
    assert_eq!(
        s1.total.latency.summary().avg,
        s0.total.latency.summary().avg
    );

    // Scaled to 20,000 frames/s for 12.5 ms: the same frames at half the gaps, looped
    // after 5 ms: 250 frames.
    let arrivals = json!({ "pcap": "in.pcap" });
    let fast = load(dir.path(), &scenario(arrivals, "pps", &[20_000.0], 0.0125));
    let (s2, t2) = traced(&fast);
    assert_eq!(s2.total.sent, 250);
    let a = records(captured);
    let b = records(pcap(&t2, "dc0-in.pcap"));
    assert_eq!(b.len(), 250);
    // Stamps are last bits: a frame's start is its stamp less its 6,720 ns on the wire.
    let start = |r: &(u64, usize)| r.0 as i64 - 6_720;
    for k in 0..250 {
        let lap = (k / 100) as i64 * 5_000_000;
        let want = lap + (start(&a[k % 100]) - start(&a[0])) / 2;
        assert!(
            (start(&b[k]) - start(&b[0]) - want).abs() <= 1,
            "frame {k}: {} ns, expected {want} ns",
            start(&b[k]) - start(&b[0])
        );
        assert_eq!(b[k].1, a[k % 100].1);
    }
}

/// An Ethernet/IPv4 frame of `len` bytes (without FCS) from `src:sport` to
/// `10.1.0.1:9`, UDP or TCP.
pub(crate) fn frame(src: [u8; 4], sport: u16, tcp: bool, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 1, 0]);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[16..18].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    f[22] = 64;
    f[23] = if tcp { 6 } else { 17 };
    f[26..30].copy_from_slice(&src);
    f[30..34].copy_from_slice(&[10, 1, 0, 1]);
    f[34..36].copy_from_slice(&sport.to_be_bytes());
    f[36..38].copy_from_slice(&9u16.to_be_bytes());
    f
}

/// Two 5-tuples over 3.96 ms: UDP 10.0.0.1:1024, 64-byte frames every 40 us from 0;
/// TCP 10.0.0.2:80, 128-byte frames every 80 us from 20 us (time stamps [ns], frames).
pub(crate) fn two_tuples() -> Vec<(u64, Vec<u8>)> {
    let mut v = Vec::new();
    for k in 0..100u64 {
        v.push((
            1_700_000_000_000_000_000 + k * 40_000,
            frame([10, 0, 0, 1], 1024, false, 60),
        ));
        if k % 2 == 0 {
            v.push((
                1_700_000_000_000_000_000 + 20_000 + k * 40_000,
                frame([10, 0, 0, 2], 80, true, 124),
            ));
        }
    }
    v
}

pub(crate) fn as_pcap(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    // Microsecond stamps, libpcap's default.
    let mut w = PcapWriter::with_header(Vec::new(), PcapHeader::default()).unwrap();
    for (t, d) in frames {
        let ts = std::time::Duration::from_nanos(*t);
        w.write_packet(&PcapPacket::new(ts, d.len() as u32, d))
            .unwrap();
    }
    w.into_writer()
}

fn as_pcapng(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::{
        InterfaceDescriptionBlock, InterfaceDescriptionOption,
    };
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    // Nanosecond units (if_tsresol 9), as Wireshark writes them from a nanosecond pcap.
    let mut idb = InterfaceDescriptionBlock::new(pcap_file::DataLink::ETHERNET, 65_535);
    idb.options.push(InterfaceDescriptionOption::IfTsResol(9));
    w.write_pcapng_block(idb).unwrap();
    for (t, d) in frames {
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            // (The crate writes the count of units it is given.)
            timestamp: std::time::Duration::from_nanos(*t),
            original_len: d.len() as u32,
            data: std::borrow::Cow::Borrowed(d),
            options: vec![],
        })
        .unwrap();
    }
    w.into_inner()
}

#[test]
fn a_capture_of_two_5_tuples_is_two_flows_sharing_the_load_by_frame_count() {
    let dir = tempfile::tempdir().unwrap();
    let frames = two_tuples();
    std::fs::write(dir.path().join("two.pcap"), as_pcap(&frames)).unwrap();
    std::fs::write(dir.path().join("two.pcapng"), as_pcapng(&frames)).unwrap();
    let run = |file: &str| {
        let exp = load(
            dir.path(),
            &scenario(json!({ "pcap": file }), "percent", &[20.0], 0.05),
        );
        let results = runner::run(&exp, 1, &|| {}).expect("runs");
        (exp, results)
    };
    let (exp, results) = run("two.pcap");
    let flows = &exp.variants[0].flows;
    let names: Vec<String> = flows.iter().map(|f| f.display_name()).collect();
    assert_eq!(
        names,
        [
            "c/10.0.0.1:1024-10.1.0.1:9/udp",
            "c/10.0.0.2:80-10.1.0.1:9/tcp"
        ]
    );
    assert_eq!(flows[0].frame_bytes, FrameSize::Fixed(64));
    assert_eq!(flows[1].frame_bytes, FrameSize::Fixed(128));
    let t = flows[1].tuple.as_ref().expect("the captured tuple");
    assert_eq!(
        (t.src_port, t.dst_port, t.protocol),
        (80, 9, TupleProtocol::Tcp)
    );
    // 20 % of 100 Mbit/s at the capture's mean size, (100 x 64 + 50 x 128) / 150 =
    // 85.33 bytes: 0.2 x 1e8 / ((85.33 + 20) x 8) = 23,734.2 frames/s, shared 2 : 1.
    let rates = &exp.variants[0].points[0].rates_pps;
    let total = 0.2 * 1e8 / ((12_800.0 / 150.0 + 20.0) * 8.0);
    assert!((rates[0] - total * 2.0 / 3.0).abs() < 1e-6, "{rates:?}");
    assert!((rates[1] - total / 3.0).abs() < 1e-6, "{rates:?}");
    // Sent over 50 ms: each flow sends its frames of every loop (100 and 50 a loop),
    // so rate x duration within a frame of a loop's end.
    let p = &results.points[0];
    let sent: Vec<f64> = p.figures.flows.iter().map(|f| f.sent).collect();
    for (s, r) in sent.iter().zip(rates) {
        assert!((s - r * 0.05).abs() <= 2.0, "sent {sent:?} at {rates:?}");
    }
    // The pcapng form of the same capture replays the same run.
    let (exp_ng, results_ng) = run("two.pcapng");
    assert_eq!(exp_ng.variants[0].points[0].rates_pps, *rates);
    let sent_ng: Vec<f64> = results_ng.points[0]
        .figures
        .flows
        .iter()
        .map(|f| f.sent)
        .collect();
    assert_eq!(sent_ng, sent);
    assert_eq!(
        serde_json::to_string(&results_ng.points[0].figures.total).unwrap(),
        serde_json::to_string(&p.figures.total).unwrap()
    );
}

#[test]
fn captures_that_cannot_be_replayed_are_refused_at_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut frames = two_tuples();
    std::fs::write(d.join("two.pcap"), as_pcap(&frames)).unwrap();
    let at = |arrivals: Value| scenario(arrivals, "percent", &[20.0], 0.05);

    let e = problems(d, &at(json!({ "pcap": "missing.pcap" })));
    assert!(
        e.contains("workload.flows[0].arrivals.pcap") && e.contains("cannot read capture"),
        "{e}"
    );
    // An IPv6 frame (record 3) cannot be steered by the model.
    frames[2].1[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
    std::fs::write(d.join("v6.pcap"), as_pcap(&frames)).unwrap();
    let e = problems(d, &at(json!({ "pcap": "v6.pcap" })));
    assert!(
        e.contains("workload.flows[0].arrivals.pcap")
            && e.contains("record 3 (from 1): EtherType 0x86dd"),
        "{e}"
    );
    std::fs::write(d.join("text.pcap"), "not a capture").unwrap();
    let e = problems(d, &at(json!({ "pcap": "text.pcap" })));
    assert!(e.contains("not a readable pcap or pcapng file"), "{e}");
    // What the capture gives may not be written beside it.
    let mut sc = at(json!({ "pcap": "two.pcap" }));
    sc["workload"]["flows"][0]["frame_bytes"] = json!(128);
    let e = problems(d, &sc);
    assert!(
        e.contains("workload.flows[0].frame_bytes") && e.contains("captured ones"),
        "{e}"
    );
    let mut sc = at(json!({ "pcap": "two.pcap", "timing": "as-captured" }));
    sc["workload"]["flows"][0]["rate_pps"] = json!(1000);
    let e = problems(d, &sc);
    assert!(
        e.contains("workload.flows[0].rate_pps") && e.contains("its own rate"),
        "{e}"
    );
    let e = problems(d, &at(json!({ "pcap": "two.pcap", "timng": "scaled" })));
    assert!(
        e.contains("workload.flows[0].arrivals") && e.contains("timng"),
        "{e}"
    );
    let e = problems(d, &at(json!({ "file": "two.pcap" })));
    assert!(e.contains("without `pcap`"), "{e}");

    // From the command line: exit 2, naming the file and the field, nothing written.
    let bad = write(d, "cli.json", &at(json!({ "pcap": "v6.pcap" })));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irqsim"))
        .args(["run", bad.to_str().unwrap(), "--out"])
        .arg(d.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cli.json") && err.contains("workload.flows[0].arrivals.pcap"),
        "{err}"
    );
    assert!(!d.join("out").exists());
}
