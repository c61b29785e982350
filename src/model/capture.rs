//! Traffic from a capture: a flow whose frames are a user's own capture replayed
//! (`"arrivals": {"pcap": "FILE"}`), its time stamps, sizes and 5-tuples, the way a
//! tester replays a pcap (TRex's `push`, tcpreplay).
//!
//! **Timing.** The capture's frames keep their order and their relative spacing. With
//! `timing` `"scaled"` (the default) every gap is multiplied by one factor so that the
//! capture offers the load point's rate (a load in % of line rate is taken at the
//! capture's mean frame size); with `"as-captured"` it is replayed at its own rate at
//! every load point, like a flow with `rate_pps`. A capture shorter than the run is
//! looped: its frames again, one mean gap after its last, for as long as the run
//! sends. Its own rate is its frame count over that loop period (the span from its
//! first frame to its last, times `N / (N - 1)` for `N` frames).
//!
//! **Time stamps** are taken to be the instants a tester's latency uses, as irqsim's
//! own `--pcap` captures write them: a frame's last bit at the capturing port (or its
//! first bit when the scenario's `latency_from` is `"first-bit"`). The frame's start is
//! its stamp less its time on the input link (none for first-bit stamps), so a capture
//! of irqsim's own input, replayed at its own rate, starts every frame when the
//! original did. A frame whose start falls while the previous frame of its 5-tuple is
//! still on the wire waits for it (the tester's port sends one frame at a time).
//!
//! **5-tuples.** A multi-queue NIC steers by the 5-tuple, and the model's unit of
//! steering is a flow, so a capture with several 5-tuples is replayed as one flow per
//! 5-tuple (in order of first appearance), each named `<flow>/<src>:<port>-<dst>:<port>/<udp|tcp>`,
//! sharing the flow's rate by its frame count. A capture with one 5-tuple keeps the
//! flow's name.
//!
//! **Sizes.** A captured frame carries no FCS: its size on the wire is its original
//! length plus 4, and at least 64 bytes (a shorter frame, captured on a sending host
//! before padding, is padded on the wire).
//!
//! Reading the files is [`crate::config::capture`]'s; this module holds what a run
//! replays ([`Replay`]) and how it is written in a scenario ([`CaptureArrivals`]).
//! Counters: none of its own (the flow's `sent`).

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How a capture's time stamps become arrival times.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureTiming {
    /// Every gap scaled by one factor so that the capture offers the load point's rate
    /// (default).
    #[default]
    Scaled,
    /// At the capture's own rate at every load point.
    AsCaptured,
}

/// `"arrivals": {"pcap": FILE, "timing": ...}` as written, with the capture once the
/// loader has read it.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureArrivals {
    /// The capture (pcap, with micro- or nanosecond time stamps, or pcapng), relative to
    /// the scenario file; Ethernet, IPv4, UDP or TCP frames.
    pub pcap: String,
    /// `"scaled"` to the load point (default) or `"as-captured"`.
    #[serde(default, skip_serializing_if = "is_scaled")]
    pub timing: CaptureTiming,
    /// FNV-1a (64 bits, hex) of the file's bytes, set by the loader: what the results
    /// depend on, so that checkpoints and shards of two different files never mix.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub fnv1a: Option<String>,
    /// What a run replays, set by the loader.
    #[serde(skip)]
    #[schemars(skip)]
    pub replay: Option<Replay>,
}

fn is_scaled(t: &CaptureTiming) -> bool {
    *t == CaptureTiming::Scaled
}

impl PartialEq for CaptureArrivals {
    /// Equal when the same file (by content, once read) is replayed the same way.
    fn eq(&self, o: &Self) -> bool {
        self.pcap == o.pcap
            && self.timing == o.timing
            && self.fnv1a == o.fnv1a
            && self.replay.as_ref().map(|r| (&r.frames, r.loop_ps))
                == o.replay.as_ref().map(|r| (&r.frames, r.loop_ps))
    }
}

/// One frame of a replayed flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayFrame {
    /// Its start (first bit) after the capture's first frame's \[ps\].
    pub start_ps: u64,
    /// Its size on the wire, FCS included \[bytes\].
    pub bytes: u32,
}

/// The frames one flow replays (one 5-tuple of a capture), and the capture's loop.
#[derive(Clone, Debug)]
pub struct Replay {
    /// Its frames, in order.
    pub frames: Arc<[ReplayFrame]>,
    /// The capture's loop period \[ps\]: its span times `N / (N - 1)`.
    pub loop_ps: u64,
    /// Frames in the whole capture (all its 5-tuples).
    pub capture_frames: u64,
    /// The capture file's size \[bytes\] (for the memory estimate of reading it).
    pub file_bytes: u64,
}

impl Replay {
    /// The capture's own rate of this flow's frames [frames/s].
    pub fn own_pps(&self) -> f64 {
        self.frames.len() as f64 / (self.loop_ps as f64 * 1e-12)
    }

    /// The factor on the captured times that makes this flow send `rate_pps`.
    pub fn scale_for(&self, rate_pps: f64) -> f64 {
        self.own_pps() / rate_pps
    }

    /// Where frame number `k` (from 0, over the loops) starts with its captured times
    /// multiplied by `scale` ([`Replay::scale_for`]), before the link's pacing \[ps\].
    #[inline]
    pub fn start_ps(&self, k: u64, scale: f64) -> f64 {
        let n = self.frames.len() as u64;
        let (lap, i) = (k / n, (k % n) as usize);
        (lap as f64 * self.loop_ps as f64 + self.frames[i].start_ps as f64) * scale
    }

    /// The size of frame number `k` \[bytes\].
    #[inline]
    pub fn bytes(&self, k: u64) -> u32 {
        self.frames[(k % self.frames.len() as u64) as usize].bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(starts: &[u64], loop_ps: u64) -> Replay {
        Replay {
            frames: starts
                .iter()
                .map(|&s| ReplayFrame {
                    start_ps: s,
                    bytes: 64,
                })
                .collect(),
            loop_ps,
            capture_frames: starts.len() as u64,
            file_bytes: 0,
        }
    }

    #[test]
    fn a_capture_loops_one_mean_gap_after_its_last_frame_and_scales_to_the_rate() {
        // Three frames at 0, 10 and 20 us: span 20 us, loop 30 us, own rate 100,000/s.
        let r = replay(&[0, 10_000_000, 20_000_000], 30_000_000);
        assert!((r.own_pps() - 100_000.0).abs() < 1e-6);
        let at = |k, rate| r.start_ps(k, r.scale_for(rate));
        assert_eq!(at(2, 100_000.0), 20_000_000.0);
        assert_eq!(at(3, 100_000.0), 30_000_000.0);
        assert_eq!(at(5, 100_000.0), 50_000_000.0);
        // At twice the rate every gap is halved.
        assert_eq!(at(4, 200_000.0), 20_000_000.0);
    }
}
