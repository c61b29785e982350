//! Offered traffic: flows of frames from the test equipment into an input port.
//!
//! Models a SmartBits-style generator. A flow sends frames to one input NIC, addressed so
//! that the host forwards them out of one output NIC, numbered with a per-flow sequence
//! number. Arrivals are
//!
//! - `constant`: frame `k` starts at `k / rate` (SmartBits' constant-rate streams), and
//!   exactly `floor(rate * duration)` frames are sent;
//! - `poisson`: the tester draws frame start times from a Poisson process of the given
//!   rate, but its port sends one frame at a time: a start that falls while the previous
//!   frame is still on the wire waits for it (FIFO, nothing is lost). What reaches the
//!   host is therefore the departure process of an M/D/1 queue at the tester's port
//!   (M/G/1 with variable sizes) of utilisation rho = the load as a fraction of line
//!   rate: no two frames closer than a wire time, and at high load long runs of
//!   back-to-back frames. The rate is the nominal one, but the process is not Poisson at
//!   any load: the smoothing grows with rho (at 40 %, the third of the Poisson gaps
//!   that are shorter than a wire time are lengthened, and the frames behind them
//!   delayed), which a livelocking host, whose losses come from bursts, sees as a
//!   different workload. Use it for a physical single-port tester;
//! - `poisson-unpaced`: the instants at which frames have fully arrived (their last bit)
//!   form a Poisson process of the given rate, and frames may overlap on the input link:
//!   an idealisation that ignores the serialisation of frames on the wire, the textbook
//!   M/./. arrival process, for comparisons with queueing theory (physically, a single
//!   link always serialises, which is `poisson`);
//! - `closed-loop`: a request/response peer (netperf TCP_RR-like) keeps N transactions
//!   outstanding and sends the next request `turnaround_ns` after each response; with
//!   `peer_coalescing`, after the peer NIC's interrupt for that response (below).
//!
//! A closed-loop peer's NIC may coalesce its interrupts (`peer_coalescing`, bge(4)'s
//! host coalescing engine: `rx_ticks_ns` = `bge_rx_coal_ticks`, `tx_ticks_ns` =
//! `bge_tx_coal_ticks`, both 150 us in FreeBSD 4.x-6.x if_bge.c). A tick timer starts
//! at the first event since the last status-block update and the update (the peer's
//! interrupt) happens when it expires, carrying every event so far. The request's send
//! completion (taken at its last bit) starts the transmit timer; if the response
//! arrives before that timer expires, the update at `request end + tx_ticks_ns` carries
//! it; otherwise the response starts the receive timer and is seen `rx_ticks_ns` after
//! it arrived. The peer's `turnaround_ns` counts from that interrupt. Each response is
//! paired with the oldest outstanding request (exact with one outstanding transaction;
//! with several, timers that one update would share are treated apart).
//!
//! - `{"pcap": FILE}`: a user's capture replayed, its time stamps, sizes and 5-tuples,
//!   scaled to the load point or at its own rate, looped ([`crate::model::capture`]).
//!
//! Frame sizes are fixed, uniform, or a weighted mix (IMIX-like), each frame drawn from
//! the flow's own random stream (a replayed capture's are the captured ones).
//!
//! Parameters ([`FlowConfig`]): `name`, `from`, `to`, `frame_bytes` (default 64 bytes),
//! `arrivals` (default `constant`), `turnaround_ns` (default 0), `peer_coalescing`
//! (default none: the peer sees each response at once), `start_phase` (default
//! 0, or `"random"`), `clock_ppm` (default 0 ppm, or `"random"`), `rate_pps` (default:
//! the swept load).
//! Counters: frames sent (`FlowSource::sent`).

use crate::model::capture::{CaptureArrivals, Replay};
use crate::model::nic::link::Link;
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use rand::RngExt;
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

/// Smallest and largest frame accepted \[bytes\] (64-byte minimum Ethernet frame, FCS
/// included; 16 KiB covers jumbo frames).
pub const FRAME_BYTES_RANGE: (u32, u32) = (64, 16_384);

/// Arrival process of a flow.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Evenly spaced frames (default; what SmartBits sends).
    #[default]
    Constant,
    /// Poisson start times, sent one frame at a time by the tester port (a start
    /// falling while the previous frame is on the wire waits for it).
    Poisson,
    /// Poisson arrival instants (last bit in), frames not serialised on the input link
    /// (the textbook Poisson arrival process).
    PoissonUnpaced,
    /// Request/response (netperf TCP_RR-like): the peer keeps N transactions
    /// outstanding; each response leaving the host is followed, `turnaround_ns` after its
    /// last bit, by the next request.
    ClosedLoop,
}

/// A flow's arrivals as written: a process by name, or a capture replayed.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum FlowArrivals {
    /// A process: `"constant"`, `"poisson"`, `"poisson-unpaced"` or `"closed-loop"`.
    Process(Arrivals),
    /// `{"pcap": FILE, "timing": "scaled" | "as-captured"}`: a capture replayed.
    Capture(CaptureArrivals),
}

impl Default for FlowArrivals {
    fn default() -> Self {
        FlowArrivals::Process(Arrivals::Constant)
    }
}

impl PartialEq<Arrivals> for FlowArrivals {
    fn eq(&self, o: &Arrivals) -> bool {
        matches!(self, FlowArrivals::Process(a) if a == o)
    }
}

impl FlowArrivals {
    /// The replayed capture, if this is one.
    pub fn capture(&self) -> Option<&CaptureArrivals> {
        match self {
            FlowArrivals::Capture(c) => Some(c),
            FlowArrivals::Process(_) => None,
        }
    }
}

/// The forms of a flow's arrivals, as messages list them.
const ARRIVALS_FORMS: &str = "`\"constant\"`, `\"poisson\"`, `\"poisson-unpaced\"`, \
    `\"closed-loop\"` or a capture such as `{\"pcap\": \"trace.pcap\"}`";

/// Read by the value's JSON type (a name, or an object with `pcap`), with messages
/// naming the forms.
impl<'de> Deserialize<'de> for FlowArrivals {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use crate::sim::forms;
        let r = match forms::value(d)? {
            serde_json::Value::String(name) => {
                serde_json::from_value::<Arrivals>(serde_json::Value::String(name.clone()))
                    .map(FlowArrivals::Process)
                    .map_err(|_| {
                        (
                            String::new(),
                            format!("must be {ARRIVALS_FORMS}, got `\"{name}\"`"),
                        )
                    })
            }
            v @ serde_json::Value::Object(_) if v.get("pcap").is_some() => {
                forms::fields::<CaptureArrivals>(v).map(FlowArrivals::Capture)
            }
            serde_json::Value::Object(_) => Err((
                String::new(),
                format!("must be {ARRIVALS_FORMS}, got an object without `pcap`"),
            )),
            other => Err((
                String::new(),
                format!("must be {ARRIVALS_FORMS}, got {}", forms::describe(&other)),
            )),
        };
        r.map_err(forms::to_error)
    }
}

/// Frame size of a flow: a number of bytes, or a distribution.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum FrameSize {
    /// Every frame has this many bytes (FCS included, preamble not).
    Fixed(#[schemars(range(min = 64, max = 16_384))] u32),
    /// A distribution of sizes.
    Dist(FrameDist),
}

/// Frame-size distributions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum FrameDist {
    /// Uniform integer size in [`min`, `max`] bytes.
    Uniform {
        /// Smallest frame \[bytes\].
        #[schemars(range(min = 64, max = 16_384))]
        min: u32,
        /// Largest frame \[bytes\].
        #[schemars(range(min = 64, max = 16_384))]
        max: u32,
    },
    /// `sizes[i]` bytes with probability `weights[i] / sum(weights)`.
    Mix {
        /// Frame sizes \[bytes\].
        #[schemars(length(min = 1), inner(range(min = 64, max = 16_384)))]
        sizes: Vec<u32>,
        /// Relative weights (not necessarily summing to 1).
        #[schemars(length(min = 1), inner(range(min = 0.0)))]
        weights: Vec<f64>,
    },
}

/// The forms of a frame size, as messages list them.
const FRAME_SIZE_FORMS: &str = "a frame size in bytes such as `64`, or a distribution: \
    `{\"dist\": \"uniform\", \"min\": 64, \"max\": 1518}` or \
    `{\"dist\": \"mix\", \"sizes\": [64, 1518], \"weights\": [7, 1]}`";

/// `{"dist": "uniform", ...}` without its tag.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UniformForm {
    min: u32,
    max: u32,
}

/// `{"dist": "mix", ...}` without its tag.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MixForm {
    sizes: Vec<u32>,
    weights: Vec<f64>,
}

/// Read by the value's JSON type (a number, or an object tagged by `dist`), with the
/// paths inside a distribution and messages naming the forms ([`crate::sim::forms`]).
impl<'de> Deserialize<'de> for FrameSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use crate::sim::forms;
        let v = forms::value(d)?;
        let r = match v {
            serde_json::Value::Number(n) => match n.as_u64().and_then(|b| u32::try_from(b).ok()) {
                Some(b) => Ok(FrameSize::Fixed(b)),
                None => Err((
                    String::new(),
                    format!("must be {FRAME_SIZE_FORMS}, got the number {n}"),
                )),
            },
            serde_json::Value::Object(m) if !m.contains_key("dist") => Err((
                String::new(),
                format!("must be {FRAME_SIZE_FORMS}, got an object without `dist`"),
            )),
            v @ serde_json::Value::Object(_) => forms::tagged(
                v,
                "dist",
                "a frame-size distribution",
                &["uniform".to_string(), "mix".to_string()],
                "{\"dist\": \"uniform\", \"min\": 64, \"max\": 1518}",
                |kind, rest| match kind {
                    "uniform" => Some(forms::fields::<UniformForm>(rest).map(|u| {
                        FrameSize::Dist(FrameDist::Uniform {
                            min: u.min,
                            max: u.max,
                        })
                    })),
                    "mix" => Some(forms::fields::<MixForm>(rest).map(|m| {
                        FrameSize::Dist(FrameDist::Mix {
                            sizes: m.sizes,
                            weights: m.weights,
                        })
                    })),
                    _ => None,
                },
            ),
            other => Err((
                String::new(),
                format!(
                    "must be {FRAME_SIZE_FORMS}, got {}",
                    forms::describe(&other)
                ),
            )),
        };
        r.map_err(forms::to_error)
    }
}

impl FrameSize {
    /// Mean frame size \[bytes\]: the size used to turn a load in % of line rate into frames/s.
    pub fn mean_bytes(&self) -> f64 {
        match self {
            FrameSize::Fixed(b) => *b as f64,
            FrameSize::Dist(FrameDist::Uniform { min, max }) => (*min as f64 + *max as f64) / 2.0,
            FrameSize::Dist(FrameDist::Mix { sizes, weights }) => {
                let w: f64 = weights.iter().sum();
                sizes
                    .iter()
                    .zip(weights)
                    .map(|(s, x)| *s as f64 * x)
                    .sum::<f64>()
                    / w
            }
        }
    }

    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        let (lo, hi) = FRAME_BYTES_RANGE;
        let check = |p: &mut Problems, field: &str, b: u32| {
            if !(lo..=hi).contains(&b) {
                p.push(
                    field,
                    format!("frame size must be {lo} to {hi} bytes, got {b}"),
                );
            }
        };
        match self {
            FrameSize::Fixed(b) => check(p, "", *b),
            FrameSize::Dist(FrameDist::Uniform { min, max }) => {
                check(p, "min", *min);
                check(p, "max", *max);
                if min > max {
                    p.push("", format!("`min` ({min}) is greater than `max` ({max})"));
                }
            }
            FrameSize::Dist(FrameDist::Mix { sizes, weights }) => {
                if sizes.is_empty() || sizes.len() != weights.len() {
                    p.push(
                        "",
                        "`sizes` and `weights` must be non-empty and of equal length",
                    );
                }
                for (i, s) in sizes.iter().enumerate() {
                    check(p, &format!("sizes[{i}]"), *s);
                }
                for (i, w) in weights.iter().enumerate() {
                    p.non_negative(&format!("weights[{i}]"), *w, "");
                }
                if weights.iter().sum::<f64>() <= 0.0 {
                    p.push("weights", "weights must sum to more than 0");
                }
            }
        }
    }
}

/// One flow of the workload, as written in a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Name shown in results and in the SmartBits CSV (default `"<from>-<to>"`; the
    /// reference tables use tester port numbers such as `"100-101"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Name of the NIC the frames arrive on.
    pub from: String,
    /// Name of the NIC the host forwards them out of.
    pub to: String,
    /// Frame size \[bytes\], FCS included (default 64).
    #[serde(default = "default_frame")]
    pub frame_bytes: FrameSize,
    /// Arrival process (default `constant`), or a capture replayed
    /// (`{"pcap": FILE}`, [`crate::model::capture`]).
    #[serde(default)]
    pub arrivals: FlowArrivals,
    /// For `closed-loop` flows: the peer's time from receiving a response (last bit)
    /// to starting the next request (first bit): its NIC, interrupt coalescing and
    /// stack \[ns\] (default 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0.0))]
    pub turnaround_ns: f64,
    /// For `closed-loop` flows: interrupt coalescing of the peer's NIC, which decides
    /// when the peer sees a response (default: none, at its last bit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_coalescing: Option<PeerCoalescing>,
    /// Phase of a `constant` flow: its first frame starts `start_phase` x its
    /// inter-frame period after the start of the run: a fraction in [0, 1), or
    /// `"random"` for a phase drawn uniformly from the run's random streams (a new one
    /// for every replication) (default 0). Tester ports started together send in step;
    /// ports with clocks of their own do not.
    #[serde(default, skip_serializing_if = "OrRandom::is_zero")]
    #[schemars(extend("minimum" = 0, "exclusiveMaximum" = 1))]
    pub start_phase: OrRandom,
    /// Frequency error of the tester port's clock for a `constant` flow \[ppm\]: the
    /// frames are `1 + clock_ppm / 1e6` times their nominal period apart (the count is
    /// unchanged), so flows of nominally equal rates slide against each other; or
    /// `"random"`, uniform in [-100, 100] ppm (IEEE 802.3's tolerance) for every run
    /// (default 0).
    #[serde(default, skip_serializing_if = "OrRandom::is_zero")]
    #[schemars(extend("minimum" = -1000, "maximum" = 1000))]
    pub clock_ppm: OrRandom,
    /// A fixed rate for this flow at every load point, instead of the swept load:
    /// background traffic beside the flows under test [frames/s] (default: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub rate_pps: Option<f64>,
    /// The flow's IPv4 addresses, ports and protocol, which a multi-queue NIC's
    /// receive-side scaling hashes (default for the flow numbered `i` from 0 in the
    /// scenario: UDP from 10.0.0.1 + `i` port 1024 + `i` to 10.1.0.1 port 9, a tester's
    /// streams with distinct sources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuple: Option<TupleConfig>,
}

/// A flow's addresses, ports and protocol ([`crate::model::nic::rss::FlowTuple`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TupleConfig {
    /// Source IPv4 address, dotted quad.
    pub src_addr: std::net::Ipv4Addr,
    /// Destination IPv4 address, dotted quad.
    pub dst_addr: std::net::Ipv4Addr,
    /// Source port (default 1024).
    #[serde(default = "d_src_port")]
    pub src_port: u16,
    /// Destination port (default 9, discard).
    #[serde(default = "d_dst_port")]
    pub dst_port: u16,
    /// `"udp"` (default) or `"tcp"`.
    #[serde(default)]
    pub protocol: TupleProtocol,
}

fn d_src_port() -> u16 {
    1024
}

fn d_dst_port() -> u16 {
    9
}

/// The transport protocol of a flow's frames.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TupleProtocol {
    /// UDP (a tester's usual stream).
    #[default]
    Udp,
    /// TCP.
    Tcp,
}

impl TupleConfig {
    /// The default tuple of the flow numbered `i` (see [`FlowConfig::tuple`]).
    pub fn default_for(i: usize) -> TupleConfig {
        TupleConfig {
            src_addr: std::net::Ipv4Addr::from(0x0A00_0001u32.wrapping_add(i as u32)),
            dst_addr: std::net::Ipv4Addr::new(10, 1, 0, 1),
            src_port: 1024u16.wrapping_add(i as u16),
            dst_port: 9,
            protocol: TupleProtocol::Udp,
        }
    }

    /// The tuple as RSS sees it.
    pub fn flow_tuple(&self) -> crate::model::nic::rss::FlowTuple {
        crate::model::nic::rss::FlowTuple {
            src_addr: self.src_addr,
            dst_addr: self.dst_addr,
            src_port: self.src_port,
            dst_port: self.dst_port,
            protocol: match self.protocol {
                TupleProtocol::Udp => crate::model::nic::rss::Protocol::Udp,
                TupleProtocol::Tcp => crate::model::nic::rss::Protocol::Tcp,
            },
        }
    }
}

/// A number, or `"random"` for a value drawn for every run (see the fields using it).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum OrRandom {
    /// This value.
    Value(f64),
    /// Drawn from the run's random streams.
    Random(RandomKeyword),
}

/// The keyword `"random"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RandomKeyword {
    /// Random.
    Random,
}

/// Read by the value's JSON type, with a message naming both forms.
impl<'de> Deserialize<'de> for OrRandom {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match crate::sim::forms::value(d)? {
            serde_json::Value::Number(n) if n.as_f64().is_some() => {
                Ok(OrRandom::Value(n.as_f64().expect("a number")))
            }
            serde_json::Value::String(s) if s == "random" => {
                Ok(OrRandom::Random(RandomKeyword::Random))
            }
            other => Err(serde::de::Error::custom(format!(
                "must be a number or `\"random\"`, got {}",
                crate::sim::forms::describe(&other)
            ))),
        }
    }
}

impl Default for OrRandom {
    fn default() -> Self {
        OrRandom::Value(0.0)
    }
}

impl OrRandom {
    fn is_zero(&self) -> bool {
        *self == OrRandom::Value(0.0)
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn default_frame() -> FrameSize {
    FrameSize::Fixed(64)
}

impl FlowConfig {
    /// The flow's display name.
    pub fn display_name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("{}-{}", self.from, self.to))
    }
}

/// Runtime frame-size sampler.
#[derive(Clone, Debug)]
enum SizeSampler {
    Fixed(u32),
    Uniform(u32, u32),
    /// Cumulative weights (normalised to 1) and sizes.
    Mix(Vec<(f64, u32)>),
    /// A capture's sizes, frame by frame.
    Replay(Replay),
}

impl SizeSampler {
    fn new(fs: &FrameSize) -> SizeSampler {
        match fs {
            FrameSize::Fixed(b) => SizeSampler::Fixed(*b),
            FrameSize::Dist(FrameDist::Uniform { min, max }) => SizeSampler::Uniform(*min, *max),
            FrameSize::Dist(FrameDist::Mix { sizes, weights }) => {
                let total: f64 = weights.iter().sum();
                let mut acc = 0.0;
                let cum = sizes
                    .iter()
                    .zip(weights)
                    .map(|(s, w)| {
                        acc += w / total;
                        (acc, *s)
                    })
                    .collect();
                SizeSampler::Mix(cum)
            }
        }
    }

    /// The size of frame number `k`.
    #[inline]
    fn sample(&self, rng: &mut StreamRng, k: u64) -> u32 {
        match self {
            SizeSampler::Fixed(b) => *b,
            SizeSampler::Replay(r) => r.bytes(k),
            SizeSampler::Uniform(lo, hi) => rng.random_range(*lo..=*hi),
            SizeSampler::Mix(cum) => {
                let u: f64 = rng.random();
                cum.iter()
                    .find(|(c, _)| u < *c)
                    .or(cum.last())
                    .map(|(_, s)| *s)
                    .unwrap_or(64)
            }
        }
    }
}

/// A frame as the generator emits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// First bit on the wire.
    pub start: SimTime,
    /// Last bit received by the host (start + wire time).
    pub end: SimTime,
    /// Size \[bytes\].
    pub bytes: u32,
    /// Per-flow sequence number, from 0.
    pub seq: u64,
}

/// Interrupt coalescing of a closed-loop peer's NIC (bge(4) host coalescing ticks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PeerCoalescing {
    /// Receive coalescing ticks: the peer's interrupt at the latest this long after a
    /// response arrived (`bge_rx_coal_ticks`, 1 us units; 0 = at once) \[ns\].
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub rx_ticks_ns: f64,
    /// Send coalescing ticks: the peer's interrupt this long after its request was sent
    /// (`bge_tx_coal_ticks`; 0 = off) \[ns\].
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub tx_ticks_ns: f64,
}

impl PeerCoalescing {
    /// When the peer takes the interrupt that shows it a response that arrived
    /// completely at `response`, for the request whose last bit left at `request_end`.
    pub fn seen_at(&self, request_end: SimTime, response: SimTime) -> SimTime {
        let tx = SimTime::from_ns_f64(self.tx_ticks_ns);
        if tx > SimTime::ZERO && request_end + tx >= response {
            return request_end + tx;
        }
        response + SimTime::from_ns_f64(self.rx_ticks_ns)
    }
}

/// How a [`FlowSource`] places its frames.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Process {
    Constant,
    Poisson,
    PoissonUnpaced,
    ClosedLoop,
    /// A capture's starts, times `scale` (its own rate over the flow's).
    Replay {
        scale: f64,
    },
}

/// A flow's frame generator for one load point; frames are produced lazily, one at a time.
#[derive(Clone, Debug)]
pub struct FlowSource {
    link: Link,
    arrivals: Process,
    /// A replayed capture's frames.
    replay: Option<Replay>,
    period_ps: f64,
    exp: Option<Exp<f64>>,
    sizes: SizeSampler,
    stop: SimTime,
    limit: u64,
    next_start_ps: f64,
    offset_ps: f64,
    link_free: SimTime,
    rng_arrivals: StreamRng,
    rng_sizes: StreamRng,
    /// Closed loop: start times of the requests the peer will send.
    requests: std::collections::VecDeque<SimTime>,
    /// Closed loop with `peer_coalescing`: last bits of the requests not yet answered.
    request_ends: std::collections::VecDeque<SimTime>,
    peer_coalescing: Option<PeerCoalescing>,
    turnaround: SimTime,
    /// Frames emitted so far -- counter.
    pub sent: u64,
}

impl FlowSource {
    /// A source sending `rate_pps` frames/s over `link` for `duration`; for a
    /// closed-loop flow `rate_pps` is the number of outstanding transactions, all
    /// started at time 0.
    pub fn new(
        cfg: &FlowConfig,
        link: Link,
        rate_pps: f64,
        duration: SimTime,
        rng_arrivals: StreamRng,
        rng_sizes: StreamRng,
    ) -> FlowSource {
        let period_ps = 1e12 / rate_pps;
        let replay = cfg.arrivals.capture().and_then(|c| c.replay.clone());
        let arrivals = match (&cfg.arrivals, &replay) {
            (FlowArrivals::Process(Arrivals::Constant), _) => Process::Constant,
            (FlowArrivals::Process(Arrivals::Poisson), _) => Process::Poisson,
            (FlowArrivals::Process(Arrivals::PoissonUnpaced), _) => Process::PoissonUnpaced,
            (FlowArrivals::Process(Arrivals::ClosedLoop), _) => Process::ClosedLoop,
            (FlowArrivals::Capture(_), Some(r)) => Process::Replay {
                scale: r.scale_for(rate_pps),
            },
            // A capture the loader has not read sends nothing (the host refuses it
            // before a run: `Host::check`).
            (FlowArrivals::Capture(_), None) => Process::Replay { scale: 1.0 },
        };
        let limit = match arrivals {
            // floor(rate * duration), with a tolerance for binary rounding of the product.
            Process::Constant => (rate_pps * duration.as_secs_f64() + 1e-6).floor() as u64,
            Process::Replay { .. } if replay.is_none() => 0,
            _ => u64::MAX,
        };
        let exp = match arrivals {
            Process::Poisson | Process::PoissonUnpaced => {
                Some(Exp::new(1.0 / period_ps).expect("rate > 0"))
            }
            _ => None,
        };
        let requests = match arrivals {
            Process::ClosedLoop => (0..rate_pps.max(1.0).round() as u64)
                .map(|_| SimTime::ZERO)
                .collect(),
            _ => Default::default(),
        };
        let sizes = match &replay {
            Some(r) => SizeSampler::Replay(r.clone()),
            None => SizeSampler::new(&cfg.frame_bytes),
        };
        let mut s = FlowSource {
            link,
            arrivals,
            replay,
            period_ps,
            exp,
            sizes,
            stop: duration,
            limit,
            next_start_ps: 0.0,
            offset_ps: 0.0,
            link_free: SimTime::ZERO,
            rng_arrivals,
            rng_sizes,
            requests,
            request_ends: Default::default(),
            peer_coalescing: cfg.peer_coalescing,
            turnaround: SimTime::from_ns_f64(cfg.turnaround_ns),
            sent: 0,
        };
        if s.arrivals == Process::Constant {
            let phase = match cfg.start_phase {
                OrRandom::Value(f) => f,
                OrRandom::Random(_) => s.rng_arrivals.random::<f64>(),
            };
            let ppm = match cfg.clock_ppm {
                OrRandom::Value(f) => f,
                OrRandom::Random(_) => s.rng_arrivals.random_range(-100.0..=100.0),
            };
            s.period_ps *= 1.0 + ppm * 1e-6;
            s.offset_ps = phase * s.period_ps;
            // The tester sends its count whatever its clock says.
            s.stop = SimTime(u64::MAX);
        }
        if matches!(s.arrivals, Process::Poisson | Process::PoissonUnpaced) {
            s.next_start_ps = s.draw_gap();
        }
        s
    }

    fn draw_gap(&mut self) -> f64 {
        self.exp
            .as_ref()
            .map(|e| e.sample(&mut self.rng_arrivals))
            .unwrap_or(self.period_ps)
    }

    /// The next frame, or `None` once the flow has finished sending.
    #[inline(always)]
    pub fn next_frame(&mut self) -> Option<Frame> {
        if self.sent >= self.limit {
            return None;
        }
        let nominal = match self.arrivals {
            Process::ClosedLoop => self.requests.pop_front()?,
            Process::Constant => {
                SimTime((self.offset_ps + self.sent as f64 * self.period_ps + 0.5) as u64)
            }
            Process::Replay { scale } => {
                let r = self.replay.as_ref()?;
                SimTime((r.start_ps(self.sent, scale) + 0.5) as u64)
            }
            Process::Poisson => {
                let t = SimTime((self.next_start_ps + 0.5) as u64);
                self.next_start_ps += self.draw_gap();
                t
            }
            Process::PoissonUnpaced => {
                // The Poisson point is the frame's last bit: arrivals stay in order
                // whatever the sizes, and nothing waits for the link.
                let end = SimTime((self.next_start_ps + 0.5) as u64);
                if end >= self.stop {
                    self.limit = self.sent;
                    return None;
                }
                self.next_start_ps += self.draw_gap();
                let bytes = self.sizes.sample(&mut self.rng_sizes, self.sent);
                let f = Frame {
                    start: end.saturating_sub(self.link.wire_time(bytes)),
                    end,
                    bytes,
                    seq: self.sent,
                };
                self.sent += 1;
                return Some(f);
            }
        };
        let start = nominal.max(self.link_free);
        if start >= self.stop {
            if self.arrivals != Process::ClosedLoop {
                self.limit = self.sent;
            }
            return None;
        }
        let bytes = self.sizes.sample(&mut self.rng_sizes, self.sent);
        let end = start + self.link.wire_time(bytes);
        self.link_free = end;
        if self.peer_coalescing.is_some() {
            self.request_ends.push_back(end);
        }
        let f = Frame {
            start,
            end,
            bytes,
            seq: self.sent,
        };
        self.sent += 1;
        Some(f)
    }

    /// Whether this is a closed-loop (request/response) flow.
    pub fn is_closed_loop(&self) -> bool {
        self.arrivals == Process::ClosedLoop
    }

    /// Closed loop: the peer received a response completely at `at`; it sends the next
    /// request after its turnaround. Returns whether a request was queued.
    pub fn respond(&mut self, at: SimTime) -> bool {
        if self.arrivals != Process::ClosedLoop {
            return false;
        }
        let seen = match (self.peer_coalescing, self.request_ends.pop_front()) {
            (Some(c), Some(req)) => c.seen_at(req, at),
            _ => at,
        };
        let start = seen + self.turnaround;
        if start >= self.stop {
            return false;
        }
        self.requests.push_back(start);
        true
    }

    /// The wire time of a `bytes` frame on this flow's input link.
    pub fn wire_time(&self, bytes: u32) -> SimTime {
        self.link.wire_time(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::RunKey;

    fn flow(arrivals: Arrivals) -> FlowConfig {
        FlowConfig {
            tuple: None,
            name: None,
            from: "a".into(),
            to: "b".into(),
            frame_bytes: FrameSize::Fixed(64),
            arrivals: FlowArrivals::Process(arrivals),
            turnaround_ns: 0.0,
            peer_coalescing: None,
            start_phase: OrRandom::default(),
            clock_ppm: OrRandom::default(),
            rate_pps: None,
        }
    }

    #[test]
    fn peer_coalescing_shows_a_response_at_the_first_tick_after_it() {
        // bge(4) defaults of FreeBSD 6.2 (if_bge.c, bge_attach): rx and tx coalescing
        // ticks 150 us.
        let c = PeerCoalescing {
            rx_ticks_ns: 150_000.0,
            tx_ticks_ns: 150_000.0,
        };
        let us = |x: u64| SimTime(x * 1_000_000);
        // A response 40 us after the request left: the update the request's send
        // completion started, at 150 us, carries it.
        assert_eq!(c.seen_at(us(0), us(40)), us(150));
        // A response after that update starts the receive timer: 160 + 150 us.
        assert_eq!(c.seen_at(us(0), us(160)), us(310));
        // Receive ticks only: always 150 us after the response.
        let rx = PeerCoalescing {
            rx_ticks_ns: 150_000.0,
            tx_ticks_ns: 0.0,
        };
        assert_eq!(rx.seen_at(us(0), us(40)), us(190));
    }

    #[test]
    fn constant_rate_sends_exactly_the_smartbits_count() {
        // 10 % of 148,809.5 fps for 10 s: SmartBits' Sent column says 148,809.
        let link = Link::new(100e6);
        let rate = 0.10 * link.line_rate_fps(64.0);
        let k = RunKey::single(1);
        let mut s = FlowSource::new(
            &flow(Arrivals::Constant),
            link,
            rate,
            SimTime::from_secs_f64(10.0),
            k.stream("a"),
            k.stream("b"),
        );
        let f0 = s.next_frame().unwrap();
        let f1 = s.next_frame().unwrap();
        assert_eq!(f1.start - f0.start, SimTime(67_200_000)); // 6.72 us / 0.10
        assert_eq!(f0.end - f0.start, SimTime(6_720_000));
        while s.next_frame().is_some() {}
        assert_eq!(s.sent, 148_809);
    }

    /// Gaps between consecutive arrivals (last bits) at `load` of 100 Mbit/s, 64-byte
    /// frames, 2 s.
    fn gaps(arrivals: Arrivals, load: f64) -> Vec<f64> {
        let link = Link::new(100e6);
        let k = RunKey::single(5);
        let mut s = FlowSource::new(
            &flow(arrivals),
            link,
            load * link.line_rate_fps(64.0),
            SimTime::from_secs_f64(2.0),
            k.stream("a"),
            k.stream("b"),
        );
        let mut last: Option<SimTime> = None;
        let mut g = Vec::new();
        while let Some(f) = s.next_frame() {
            if let Some(l) = last {
                g.push((f.end - l).as_ns_f64());
            }
            last = Some(f.end);
        }
        g
    }

    #[test]
    fn poisson_is_paced_by_the_wire_and_unpaced_is_textbook() {
        // 64-byte frames take 6,720 ns on the wire. At rho = 0.4 a Poisson gap is
        // shorter than that with probability 1 - exp(-0.4) = 0.3297. The paced source
        // never delivers two frames closer than a wire time; the unpaced one has the
        // exponential's share of short gaps and its coefficient of variation 1.
        let wire = 6_720.0;
        let paced = gaps(Arrivals::Poisson, 0.4);
        assert!(
            paced.iter().all(|g| *g >= wire - 1e-3),
            "a gap below the wire time"
        );
        let unpaced = gaps(Arrivals::PoissonUnpaced, 0.4);
        let short = unpaced.iter().filter(|g| **g < wire).count() as f64 / unpaced.len() as f64;
        // About 23,800 gaps: sd of the fraction sqrt(0.33 x 0.67 / 23,800) = 0.003.
        assert!((short - (1.0 - (-0.4f64).exp())).abs() < 0.012, "{short}");
        let n = unpaced.len() as f64;
        let m = unpaced.iter().sum::<f64>() / n;
        let sd = (unpaced.iter().map(|g| (g - m).powi(2)).sum::<f64>() / n).sqrt();
        assert!((sd / m - 1.0).abs() < 0.03, "cv {}", sd / m);
        assert!((m - wire / 0.4).abs() / (wire / 0.4) < 0.02, "mean gap {m}");
    }

    #[test]
    fn poisson_rate_is_right() {
        // 10,000 pps for 20 s: 200,000 expected, sd 447; allow 4 sd.
        let link = Link::new(1e9);
        let k = RunKey::single(3);
        let mut s = FlowSource::new(
            &flow(Arrivals::Poisson),
            link,
            10_000.0,
            SimTime::from_secs_f64(20.0),
            k.stream("a"),
            k.stream("b"),
        );
        while s.next_frame().is_some() {}
        assert!((s.sent as f64 - 200_000.0).abs() < 1_800.0, "{}", s.sent);
    }
}
