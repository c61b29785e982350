//! One network interface as the host sees it: the device, its DMA engines, its
//! interrupt moderation and link watch, the driver's costs, which interrupt line it
//! asserts and how its arrivals are routed to the receive policy. One struct per
//! interface, so that the per-frame path reads one place.
//!
//! The interrupt handler (the driver instance that the line's chain runs) stays in
//! [`crate::host::Host::handlers`]: it is lent out for its step, while its environment
//! reads this port.

use crate::host::attach::Attached;
use crate::model::nic::Nic;
use crate::model::nic::dma::NicDma;
use crate::model::nic::link_watch::LinkWatch;
use crate::model::nic::moderation::Moderation;
use crate::model::policy::interrupt::DriverCosts;
use crate::model::policy::{Capabilities, PolicyConfig};
use crate::sim::time::SimTime;
use std::collections::BTreeMap;

/// One interface: the device and what the host wires to it.
pub(crate) struct Port<D> {
    /// The device: rings, FIFO state, interrupt causes and mask, wires.
    pub nic: Nic,
    /// Its DMA engines: [`NicDma`] when the model has a bus,
    /// [`Absent`](crate::host::attach::Absent) when it has none.
    pub dma: D,
    /// Its interrupt moderation, if any.
    pub moderation: Option<Moderation>,
    /// Its DIM instance, if adaptive receive moderation is on (with whether its mode
    /// restarts the timer per frame, `cqe`).
    pub dim: Option<(crate::model::nic::dim::Dim, bool)>,
    /// Its underrun response and link check, if any.
    pub link_watch: Option<LinkWatch>,
    /// The driver's CPU costs and their random stream.
    pub driver: DriverCosts,
    /// The interrupt line it asserts (index into the host's lines).
    pub line: usize,
    /// Its receive policy as configured.
    pub policy: PolicyConfig,
    /// The registry index of its policy.
    pub policy_kind: u8,
    /// What its policy supports ([`PolicyConfig::capabilities`]).
    pub caps: Capabilities,
    /// The registry index of the policy that polls it with its interrupt off (told of
    /// each frame that enters its ring), if any.
    pub polled_by: Option<u8>,
    /// The flows it receives.
    pub rx_flows: Vec<usize>,
    /// Whether some flow leaves by it (or by another queue of its NIC).
    pub transmits: bool,
    /// The port whose wire it transmits on: its own, or the one its NIC's queues share
    /// (index into the host's `tx_groups`).
    pub tx_group: u16,
    /// Whether its handler may decide its next step ahead of time (see
    /// `Host::quiet_until`).
    pub lookahead: bool,
}

impl<D: Attached<NicDma>> Port<D> {
    /// The counters of the device and of what is wired to it, as of `now`: its
    /// moderation's, DIM's, the device's own, its DMA engines' and its link watch's,
    /// each under the NIC's name.
    pub fn counters(&self, now: SimTime, c: &mut BTreeMap<String, f64>) {
        let n = &self.nic.name;
        if let Some(m) = &self.moderation {
            m.counters(n, c);
        }
        if let Some((d, _)) = &self.dim {
            d.report(n, now, c);
        }
        self.nic.counters(c);
        if let Some(d) = self.dma.get() {
            d.counters(n, c);
        }
        if let Some(w) = &self.link_watch {
            w.counters(n, now, c);
        }
    }

    /// Frames inside the port: its rings and queues, and its DMA engines' receive FIFO.
    pub fn held(&self) -> usize {
        self.nic.held() + self.dma.get().map_or(0, |d| d.rx_fifo_frames())
    }

    /// Whether its policy's handler services receive errors and underruns
    /// ([`Capabilities::handles_chip_errors`]).
    #[inline(always)]
    pub fn handles_chip_errors(&self) -> bool {
        self.caps.handles_chip_errors
    }

    /// Its DMA engines: only called on the paths of a model with a bus, where every
    /// port has them.
    #[inline(always)]
    pub fn dma_mut(&mut self) -> &mut NicDma {
        self.dma
            .get_mut()
            .expect("a model with a bus gives every NIC DMA engines")
    }
}
