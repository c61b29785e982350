//! A packet inside the simulated host: what an mbuf chain carries that the model needs.

use crate::sim::time::SimTime;

/// A frame being received, queued or forwarded. 24 bytes, copied by value: no allocation
/// per packet anywhere in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Index of the flow it belongs to.
    pub flow: u32,
    /// Frame size \[bytes\].
    pub bytes: u32,
    /// Per-flow sequence number.
    pub seq: u64,
    /// When its last bit reached the input port (the start of its latency).
    pub t_in: SimTime,
}
