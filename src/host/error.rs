//! Why a run gave no statistics: an invalid run, or one of the model's own invariants
//! broken during it, typed so that a caller can tell which invariant, which component
//! and when.

use crate::sim::time::SimTime;

/// Why a run gave no statistics.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The model or the run specification is invalid (every problem, with its path).
    #[error("invalid run: {}", .0.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<crate::sim::problems::Problem>),
    /// The model broke one of its own invariants: a bug in irqsim, reported instead of a
    /// wrong number. The first one broken in the run (the run stops there).
    #[error("broken invariant (a bug in irqsim; please report it with the scenario): {0}")]
    Invariant(Box<Broken>),
}

/// The invariants the host checks in every build, release included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Invariant {
    /// An output wire carries one frame at a time: no frame starts on a wire before the
    /// previous one has left it.
    OneFramePerWire,
    /// Only a NIC some flow leaves by transmits (the others have no wire).
    TransmitWithoutWire,
    /// A wire that falls free while a queue has a frame ready starts that frame
    /// (no lost wakeup).
    WireWakeup,
    /// While a handler's step runs with the interrupt lines lent to it, only its own
    /// device asserts a line.
    LineAssertion,
    /// Per flow: frames received plus frames dropped never exceed frames sent.
    FlowConservation,
    /// The host: the frames neither delivered nor dropped at the end are those it holds
    /// in rings, queues and steps, plus at most one per wire.
    HostConservation,
    /// A handler's start taken back (its entry folded into a burst that a new
    /// assertion cut) takes back an interrupt that was taken and not taken back since,
    /// and counted (the chip may have been unmasked meanwhile by another core's
    /// napi_complete).
    InterruptUndo,
}

impl Invariant {
    /// The invariant in a few words, as reports give it.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::OneFramePerWire => "one frame per wire",
            Invariant::TransmitWithoutWire => "only NICs with a wire transmit",
            Invariant::WireWakeup => "a free wire starts a ready frame",
            Invariant::LineAssertion => "only the running handler's device asserts a line",
            Invariant::FlowConservation => "packet conservation per flow",
            Invariant::HostConservation => "packet conservation in the host",
            Invariant::InterruptUndo => "only a taken interrupt is taken back",
        }
    }
}

/// A broken invariant: which, where, when, and what was seen.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {detail} ({component}, at simulated time {} s)", invariant.name(), at.as_secs_f64())]
pub struct Broken {
    /// Which invariant.
    pub invariant: Invariant,
    /// The component it broke in: a NIC, a transmit queue, an interrupt line, a flow,
    /// or `host`.
    pub component: String,
    /// When (the simulated time of the event that broke it, or the run's end for the
    /// end-of-run checks).
    pub at: SimTime,
    /// What was seen, in words.
    pub detail: String,
}

impl SimError {
    /// The error of broken invariant `b`.
    pub fn broken(b: Broken) -> SimError {
        SimError::Invariant(Box::new(b))
    }
}
