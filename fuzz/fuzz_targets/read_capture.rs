//! The capture reader (`irqsim::config::capture::parse`, pcap and pcapng) on arbitrary
//! bytes. Every input must give a capture or a `CaptureError`; a panic, an abort or an
//! out-of-memory is a finding. A capture read must keep what a replay relies on: at
//! least two frames, stamps from 0 in increasing order within `MAX_SPAN_NS` and not
//! all equal, each frame's size within the frame sizes irqsim models, each 5-tuple
//! index within the tuples, at most `MAX_FLOWS` tuples.

#![no_main]

use irqsim::config::capture::{self, MAX_SPAN_NS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(c) = capture::parse(data) else {
        return;
    };
    assert!(c.records.len() >= 2);
    assert_eq!(c.records[0].stamp_ns, 0);
    assert!(c.records.windows(2).all(|w| w[0].stamp_ns <= w[1].stamp_ns));
    let last = c.records[c.records.len() - 1].stamp_ns;
    assert!(last > 0 && last <= MAX_SPAN_NS);
    let (lo, hi) = irqsim::model::traffic::FRAME_BYTES_RANGE;
    for r in &c.records {
        assert!(r.bytes as u64 >= lo as u64 && r.bytes as u64 <= hi as u64, "{r:?}");
        assert!(r.tuple < c.tuples.len());
    }
    assert!(!c.tuples.is_empty() && c.tuples.len() <= irqsim::sim::limits::MAX_FLOWS);
});
