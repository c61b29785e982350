//! One network interface as the host sees it ([`Port`]): the device, its DMA engines,
//! its interrupt moderation and link watch, the driver's costs, which interrupt line it
//! asserts and how its arrivals are routed to the receive policy. One struct per
//! interface, so that the per-frame path reads one place.
//!
//! The host's interfaces together ([`Ports`]): every device, and every NIC's transmit
//! side ([`TxGroup`]: the devices of its queues and the wire they share, [`TxPort`]).
//! What the queues of one NIC share, its wire and its RX FIFO's capacity, is reached
//! through [`Ports`], which lends the group's devices to the wire as its queues.
//!
//! The interrupt handler (the driver instance that the line's chain runs) stays in
//! [`crate::host::Host::handlers`]: it is lent out for its step, while its environment
//! reads this port.

use crate::host::attach::Attached;
use crate::model::nic::dma::NicDma;
use crate::model::nic::link_watch::LinkWatch;
use crate::model::nic::moderation::Moderation;
use crate::model::nic::port::{TxPort, TxQueues, WireError};
use crate::model::nic::{Nic, TxStart};
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
    /// (index into [`Ports`]' groups).
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

/// The host's interfaces: every device's [`Port`] and every NIC's transmit side, its
/// [`TxGroup`] (the devices of its queues, one for a NIC of one queue, and the wire
/// they share with its arbiter and XPS). A multi-queue NIC's queue devices are
/// adjacent; its group owns its wire, and what happens on that wire goes through
/// [`Ports::on_wire`], which lends the group's devices to the port as its queues. Reads
/// and per-device work index the devices directly (`ports[nic]`, through `Deref`).
pub(crate) struct Ports<D> {
    devices: Vec<Port<D>>,
    groups: Vec<TxGroup>,
}

/// What an operation on a port's wire started ([`Ports::on_wire`]): a frame on a
/// device, or nothing; or the port's broken invariant, with the device of its queue 0.
pub(crate) type WireStarted = Result<Option<(usize, TxStart)>, (usize, WireError)>;

impl<D> Ports<D> {
    /// The devices and the groups [`TxGroup::build`] made of them (each device's
    /// `tx_group` indexes `groups`).
    pub fn new(devices: Vec<Port<D>>, groups: Vec<TxGroup>) -> Self {
        Ports { devices, groups }
    }

    /// The transmit group of device `nic`: its NIC's queues and their wire.
    #[inline(always)]
    pub fn group_of(&self, nic: usize) -> &TxGroup {
        &self.groups[self.devices[nic].tx_group as usize]
    }

    /// The device a frame leaves by when its flow's output is device `out`: `out`
    /// itself, or for a multi-queue NIC the transmit queue XPS picks for `core` (the
    /// flow's hash and receive queue for `skb_tx_hash` without XPS).
    #[inline(always)]
    pub fn tx_device(&self, out: usize, core: usize, hash: u32, rx_queue: Option<u16>) -> usize {
        let g = self.group_of(out);
        if g.port.queues() == 1 {
            return out;
        }
        g.first + g.port.pick(core, hash, rx_queue) as usize
    }

    /// Run `op` on the wire of device `nic`'s port, with the group's devices as its
    /// queues (`nic`'s queue number given).
    #[inline(always)]
    pub fn on_wire(
        &mut self,
        nic: usize,
        op: impl FnOnce(&mut TxPort, &mut [Port<D>], u16) -> Result<Option<(u16, TxStart)>, WireError>,
    ) -> WireStarted {
        let grp = &mut self.groups[self.devices[nic].tx_group as usize];
        let first = grp.first;
        let devices = grp.devices();
        match op(
            &mut grp.port,
            &mut self.devices[devices],
            (nic - first) as u16,
        ) {
            Ok(started) => Ok(started.map(|(q, tx)| (first + q as usize, tx))),
            Err(e) => Err((first, e)),
        }
    }

    /// At the end of a run, every port wire's invariants over its queues as they stand
    /// ([`TxPort::check`]): the first broken one, with the device of the port's queue 0.
    pub fn wires_broken(&self) -> Option<(usize, WireError)> {
        self.groups.iter().find_map(|g| {
            let e = g.port.check(&self.devices[g.devices()]).err()?;
            Some((g.first, e))
        })
    }
}

impl<D: Attached<NicDma>> Ports<D> {
    /// The bytes of device `nic`'s port's RX FIFO that its other queues' frames hold
    /// (a multi-queue NIC's queues share one packet buffer; 0 on a port of one queue).
    #[inline(always)]
    pub fn rx_fifo_beside(&self, nic: usize) -> u32 {
        let g = self.group_of(nic);
        if g.port.queues() == 1 {
            return 0;
        }
        g.devices()
            .filter(|&d| d != nic)
            .map(|d| self.devices[d].dma.get().map_or(0, |e| e.rx_fifo_bytes()))
            .sum()
    }
}

impl<D> std::ops::Deref for Ports<D> {
    type Target = [Port<D>];
    #[inline(always)]
    fn deref(&self) -> &[Port<D>] {
        &self.devices
    }
}

impl<D> std::ops::DerefMut for Ports<D> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Port<D>] {
        &mut self.devices
    }
}

/// The transmit queues of one NIC (one, or one per queue device): devices
/// [`TxGroup::devices`], and their wire.
#[derive(Clone, Debug)]
pub(crate) struct TxGroup {
    /// The device of queue 0.
    pub first: usize,
    /// Its wire, its arbiter and XPS.
    pub port: TxPort,
}

impl TxGroup {
    /// The ports of the (expanded) devices `queue_of` describes: each queue's
    /// `(index, count)`, `None` for a NIC with one queue, which is a port of one queue
    /// (its wire its own, but started through a [`TxPort`] all the same, so that every
    /// transmission takes the one path and its invariants are the port's). Returns the
    /// groups and each device's group.
    pub fn build(
        queue_of: &[Option<(u16, u16)>],
        xps: &[bool],
        cores: usize,
    ) -> (Vec<TxGroup>, Vec<u16>) {
        let mut groups = Vec::new();
        let mut of = vec![0; queue_of.len()];
        for (i, q) in queue_of.iter().enumerate() {
            let count = match *q {
                None => 1,
                Some((0, count)) => count,
                Some(_) => continue,
            };
            for slot in &mut of[i..i + count as usize] {
                *slot = groups.len() as u16;
            }
            groups.push(TxGroup {
                first: i,
                port: TxPort::new(count, cores, xps[i]),
            });
        }
        (groups, of)
    }

    /// The devices of its queues, queue 0 first.
    #[inline]
    pub fn devices(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.port.queues() as usize
    }
}

/// A group's queue devices as its port's queues.
impl<D> TxQueues for [Port<D>] {
    #[inline]
    fn queue(&self, q: u16) -> &Nic {
        &self[q as usize].nic
    }
    #[inline]
    fn queue_mut(&mut self, q: u16) -> &mut Nic {
        &mut self[q as usize].nic
    }
}
