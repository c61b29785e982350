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
use crate::model::bus::Burst;
use crate::model::cost::Cost;
use crate::model::nic::dma::{NicDma, RxIn, TxRequest, TxStep};
use crate::model::nic::link_watch::{LinkWatch, NicView, TickStart};
use crate::model::nic::moderation::Moderation;
use crate::model::nic::port::{TxPort, TxQueues, WireError};
use crate::model::nic::{Nic, TxStart};
use crate::model::packet::Packet;
use crate::model::policy::interrupt::DriverCosts;
use crate::model::policy::{Capabilities, PolicyConfig};
use crate::sim::engine::TimerKey;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use std::collections::BTreeMap;

/// One interface: the device and what the host wires to it.
///
/// Its parts (the device, its DMA engines, moderation, DIM, link watch and the
/// driver's costs) are its own: the host changes them only through the operations
/// below (and [`Ports::on_wire`], which lends a transmit group's devices to its wire as
/// its queues), each named for what the chip or the driver does (a frame's DMA, an interrupt
/// taken, an underrun acknowledged, a link check), and reads the device through
/// [`Port::nic`]. What the port's parts decide together (whether its interrupt is due
/// now or at a moderation deadline, whether a driver re-initialises the chip after an
/// error) is decided here; what needs the clock, the bus, the cores or the flows'
/// counts (arming a timer, waking a handler, counting a drop) the host does with the
/// answer.
pub(crate) struct Port<D> {
    /// The device: rings, FIFO state, interrupt causes and mask, wires.
    nic: Nic,
    /// Its DMA engines: [`NicDma`] when the model has a bus,
    /// [`Absent`](crate::host::attach::Absent) when it has none.
    dma: D,
    /// Its interrupt moderation, if any.
    moderation: Option<Moderation>,
    /// Its DIM instance, if adaptive receive moderation is on (with whether its mode
    /// restarts the timer per frame, `cqe`).
    dim: Option<(crate::model::nic::dim::Dim, bool)>,
    /// Its underrun response and link check, if any.
    link_watch: Option<LinkWatch>,
    /// The driver's CPU costs and their random stream.
    driver: DriverCosts,
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
    lookahead: bool,
}

/// The parts a [`Port`] owns, as assembly builds them ([`Port::new`]).
pub(crate) struct PortParts<D> {
    pub nic: Nic,
    pub dma: D,
    pub moderation: Option<Moderation>,
    pub dim: Option<(crate::model::nic::dim::Dim, bool)>,
    pub link_watch: Option<LinkWatch>,
    pub driver: DriverCosts,
}

/// How the host wires a [`Port`]: its line, its policy and its flows (the fields of
/// the same names).
pub(crate) struct Wiring {
    pub line: usize,
    pub policy: PolicyConfig,
    pub policy_kind: u8,
    pub caps: Capabilities,
    pub polled_by: Option<u8>,
    pub rx_flows: Vec<usize>,
    pub transmits: bool,
    pub tx_group: u16,
    pub lookahead: bool,
}

/// When a port's pending cause interrupts ([`Port::irq_due`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IrqDue {
    /// Not at all: the chip is masked, already asserts, or nothing is pending.
    No,
    /// Now: the line is asserted.
    Now,
    /// At the moderation deadline, whose timer is to be armed (then given to
    /// [`Port::moderation_armed`]).
    Arm(SimTime),
    /// At a deadline whose timer is already armed.
    Armed,
}

impl<D> Port<D> {
    /// The port of `parts`, wired as `w`.
    pub fn new(parts: PortParts<D>, w: Wiring) -> Self {
        let PortParts {
            nic,
            dma,
            moderation,
            dim,
            link_watch,
            driver,
        } = parts;
        Port {
            nic,
            dma,
            moderation,
            dim,
            link_watch,
            driver,
            line: w.line,
            policy: w.policy,
            policy_kind: w.policy_kind,
            caps: w.caps,
            polled_by: w.polled_by,
            rx_flows: w.rx_flows,
            transmits: w.transmits,
            tx_group: w.tx_group,
            lookahead: w.lookahead,
        }
    }

    /// Whether its handler may decide its next step ahead of time (see
    /// `Host::quiet_until`).
    #[inline(always)]
    pub fn lookahead(&self) -> bool {
        self.lookahead
    }

    /// Its handler decides each step when it comes (a policy preempts handlers, or a
    /// run checks merged bursts against unmerged ones).
    pub fn no_lookahead(&mut self) {
        self.lookahead = false;
    }

    /// The device, to read.
    #[inline(always)]
    pub fn nic(&self) -> &Nic {
        &self.nic
    }

    /// The device, for tests that put it in a state the run could not reach (a lost
    /// wakeup, for instance) to see the port's checks catch it.
    #[cfg(test)]
    pub fn nic_mut(&mut self) -> &mut Nic {
        &mut self.nic
    }

    /// Its link watch, to read.
    #[inline(always)]
    pub fn link_watch(&self) -> Option<&LinkWatch> {
        self.link_watch.as_ref()
    }

    /// Whether it has interrupt moderation (the start of its handler is then watched:
    /// [`crate::model::irq::LineEnv::start_watched`]).
    #[inline(always)]
    pub fn moderated(&self) -> bool {
        self.moderation.is_some()
    }

    /// Whether its policy's handler services receive errors and underruns
    /// ([`Capabilities::handles_chip_errors`]).
    #[inline(always)]
    pub fn handles_chip_errors(&self) -> bool {
        self.caps.handles_chip_errors
    }

    // ------------------------------------------------------------- the driver

    /// The driver's costs and their random stream, lent to its handler's step or a
    /// policy's cost query.
    #[inline(always)]
    pub fn driver(&mut self) -> &mut DriverCosts {
        &mut self.driver
    }

    /// The driver's random stream as it stands (saved before a handler's start that
    /// may be taken back).
    #[inline(always)]
    pub fn driver_rng(&self) -> StreamRng {
        self.driver.rng.clone()
    }

    // ------------------------------------------------------------- receiving

    /// A received frame's DMA into the RX ring ([`Nic::rx_dma`]): whether a descriptor
    /// took it.
    #[inline(always)]
    pub fn rx_dma(&mut self, pkt: Packet) -> bool {
        self.nic.rx_dma(pkt)
    }

    /// The driver takes the frame at the head of the RX ring.
    #[inline(always)]
    pub fn rx_pop(&mut self) -> Option<Packet> {
        self.nic.rx_ring.pop()
    }

    /// A frame of `bytes` entered the ring with the interrupt path on: its moderation
    /// counts it.
    #[inline(always)]
    pub fn moderate_rx(&mut self, now: SimTime, bytes: u32) {
        if let Some(m) = &mut self.moderation {
            m.packet(now, bytes);
        }
    }

    /// A frame was received (`rx`) or sent on it: its statistics counters count it
    /// ([`crate::model::nic::counters`]); whether one nears overflow (STATSOFLOW).
    #[inline(always)]
    pub fn count_frame(&mut self, rx: bool) -> bool {
        self.nic.stats.as_mut().is_some_and(|st| st.count(rx))
    }

    /// The driver reads and clears its statistics counters: the periodic harvest, or
    /// (`overflow`) the handler's on STATSOFLOW, which only runs when that cause is
    /// pending. The harvest's CPU cost, `None` if nothing was harvested.
    pub fn harvest(&mut self, overflow: bool) -> Option<Cost> {
        if overflow && !self.nic.stats_cause() {
            return None;
        }
        let st = self.nic.stats.as_mut()?;
        st.harvest(overflow);
        Some(if overflow {
            st.overflow_harvest.clone()
        } else {
            st.periodic_harvest.clone()
        })
    }

    // ------------------------------------------------------------- transmitting

    /// The driver takes the transmit completions since its last look (txeof).
    #[inline(always)]
    pub fn take_tx_completions(&mut self) -> Option<u32> {
        self.nic.take_tx_completions()
    }

    /// The driver reclaims up to `max` sent descriptors ([`Nic::reclaim_tx`]).
    #[inline(always)]
    pub fn reclaim_tx(&mut self, max: u32) -> (u32, u32) {
        self.nic.reclaim_tx(max)
    }

    /// A frame left its wire: whether that raises a transmit cause (which its
    /// moderation then counts).
    #[inline(always)]
    pub fn tx_cause(&mut self, now: SimTime) -> bool {
        if !self.nic.tx_cause {
            return false;
        }
        if let Some(m) = &mut self.moderation {
            m.tx_cause(now);
        }
        true
    }

    /// The transmitter aborts the frame on its wire (an underrun): the frame, lost.
    #[inline]
    pub fn tx_abort(&mut self) -> Option<Packet> {
        self.nic.tx_abort()
    }

    // ------------------------------------------------------------- interrupts

    /// A cause is pending: whether and when it interrupts, as its mask and its
    /// moderation decide (an interrupt due now is counted as asserted by moderation).
    #[inline]
    pub fn irq_due(&mut self, now: SimTime) -> IrqDue {
        if !self.nic.wants_interrupt() {
            return IrqDue::No;
        }
        let Some(m) = &mut self.moderation else {
            return IrqDue::Now;
        };
        match m.fire_time(now) {
            t if t <= now => {
                m.asserted(now);
                IrqDue::Now
            }
            t if m.arm(t) => IrqDue::Arm(t),
            _ => IrqDue::Armed,
        }
    }

    /// Its moderation timer was armed as `key`.
    #[inline(always)]
    pub fn moderation_armed(&mut self, key: TimerKey) {
        if let Some(m) = &mut self.moderation {
            m.armed(key);
        }
    }

    /// A moderation timer `key` expired: whether it is this port's current one.
    #[inline]
    pub fn moderation_expired(&mut self, key: TimerKey) -> bool {
        self.moderation.as_mut().is_some_and(|m| m.expired(key))
    }

    /// The chip asserts its interrupt: the line it asserts.
    #[inline(always)]
    pub fn assert_irq(&mut self) -> usize {
        self.nic.assert_irq();
        self.line
    }

    /// The driver unmasks the chip's interrupt.
    #[inline(always)]
    pub fn unmask_irq(&mut self) {
        self.nic.unmask_irq();
    }

    /// The handler reads and acknowledges the interrupt status: if the chip asserts,
    /// it is masked and counted, and its moderation told.
    #[inline]
    pub fn take_interrupt(&mut self) -> bool {
        if !self.nic.take_interrupt() {
            return false;
        }
        if let Some(m) = &mut self.moderation {
            m.on_interrupt();
        }
        true
    }

    /// Take back a handler's start: the driver's random stream as it was (`rng`), the
    /// interrupt untaken. Whether one stood taken.
    #[inline]
    pub fn untake_interrupt(&mut self, rng: StreamRng) -> bool {
        self.driver.rng = rng;
        self.nic.untake_interrupt()
    }

    /// DIM's sample after a NAPI completion (mlx5e_handle_rx_dim): the queue's
    /// interrupts, frames and bytes so far; a new profile is programmed into its
    /// moderation at once (the driver's work item, whose own CPU time and delay are not
    /// modelled).
    pub fn dim_sample(&mut self, now: SimTime) {
        // ixgbe's dynamic ITR (ixgbe_set_itr after napi_complete_done), if it has it.
        if let Some(m) = &mut self.moderation {
            m.poll_completed(now);
        }
        let Some((dim, cqe)) = &mut self.dim else {
            return;
        };
        let n = &self.nic;
        if let Some(p) = dim.sample(now, n.interrupts, n.rx_frames, n.rx_bytes) {
            dim.profile_applied(now);
            if let Some(m) = &mut self.moderation {
                m.program(p.usecs, p.pkts, *cqe);
            }
        }
    }

    // ------------------------------------------------------------- chip errors and the link

    /// Its FIFO dropped a frame: the damaged frame's descriptor carries the overflow
    /// error, if its handler services receive errors. Whether that raised the cause.
    #[inline]
    pub fn rx_overflow(&mut self) -> bool {
        self.handles_chip_errors() && self.nic.flag_rx_error()
    }

    /// The handler acknowledged a receive error: whether its driver re-initialises the
    /// chip for it (dc_init).
    pub fn ack_rx_error(&mut self) -> bool {
        self.nic.ack_rx_error();
        self.link_watch
            .as_ref()
            .is_some_and(|w| w.reinit_on_rx_error())
    }

    /// Its link check's first callout, if it has a link watch.
    pub fn link_watch_first(&self) -> Option<SimTime> {
        self.link_watch.as_ref().map(|w| w.first_callout())
    }

    /// Its link check re-armed one period from now (the period as the link stands),
    /// if it has a link watch; the pending one is cancelled.
    pub fn link_watch_rearm(&mut self) -> Option<SimTime> {
        let up = self.nic.link_up();
        self.link_watch.as_mut().map(|w| w.rearm(up))
    }

    /// Its link check's callout was armed as `key`.
    pub fn link_watch_armed(&mut self, key: TimerKey) {
        if let Some(w) = &mut self.link_watch {
            w.armed(key);
        }
    }

    /// The link-check callout `key` fired: whether it is the current one.
    pub fn link_tick_fired(&mut self, key: TimerKey) -> bool {
        self.link_watch.as_mut().is_some_and(|w| w.fired(key))
    }

    /// dc_tick begins (`at_spl`: its splimp body), seeing the link and whether the
    /// chip is idle; `None` without a link watch.
    pub fn link_tick_start(&mut self, at_spl: bool) -> Option<TickStart> {
        let n = &self.nic;
        let view = NicView {
            link_up: n.link_up(),
            idle: n.rx_ring.len() < n.rx_ring.capacity() && n.tx_idle(),
        };
        Some(self.link_watch.as_mut()?.tick_start(at_spl, view))
    }

    /// dc_tick's body ends: `None` if a reset re-armed the callout meanwhile, else
    /// whether it found the link back up (the chip then has its link again).
    pub fn link_tick_end(&mut self, now: SimTime) -> Option<bool> {
        let up = self.link_watch.as_mut()?.tick_end(now)?;
        if up {
            self.nic.link_restored();
        }
        Some(up)
    }

    /// The driver re-initialises the chip (after [`Port::reset`]): its CPU cost, and
    /// the link down until the next check; zero without a link watch.
    pub fn reinit(&mut self, now: SimTime) -> SimTime {
        self.link_watch
            .as_mut()
            .map_or(SimTime::ZERO, |w| w.reinit(now))
    }

    /// Frames inside the port: its rings and queues, and its DMA engines' receive FIFO.
    pub fn held(&self) -> usize
    where
        D: Attached<NicDma>,
    {
        self.nic.held() + self.dma.get().map_or(0, |d| d.rx_fifo_frames())
    }
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

    /// Its DMA engines, to read (`None` without a bus).
    #[inline(always)]
    pub fn dma(&self) -> Option<&NicDma> {
        self.dma.get()
    }

    /// Its DMA engines: only called on the paths of a model with a bus, where every
    /// port has them.
    #[inline(always)]
    fn engines(&mut self) -> &mut NicDma {
        self.dma
            .get_mut()
            .expect("a model with a bus gives every NIC DMA engines")
    }

    /// A frame reached its RX FIFO, beside `others` bytes of its other queues' frames
    /// ([`NicDma::rx_in`]); one dropped for want of a free descriptor is counted in the
    /// NIC's `rx_ring.drops`.
    #[inline(always)]
    pub fn dma_rx_in(&mut self, pkt: Packet, others: u32) -> RxIn {
        if self.nic.rx_ring.is_full() && self.engines().rx_between_frames() {
            self.nic.rx_no_descriptor();
            return RxIn::NoDescriptor;
        }
        self.engines().rx_in(pkt, others)
    }

    /// The head frame of its RX FIFO, dropped unwritten because its turn came while the
    /// RX ring has no free descriptor ([`NicDma::rx_drop_head`]; counted in the NIC's
    /// `rx_ring.drops`); call until `None` before asking for the next burst.
    #[inline(always)]
    pub fn dma_rx_no_descriptor(&mut self) -> Option<Packet> {
        if !self.nic.rx_ring.is_full() {
            return None;
        }
        let p = self.engines().rx_drop_head();
        if p.is_some() {
            self.nic.rx_no_descriptor();
        }
        p
    }

    /// The driver handed it a frame to send ([`NicDma::tx_begin`]).
    #[inline(always)]
    pub fn dma_tx_begin(
        &mut self,
        pkt: Packet,
        eligible: SimTime,
        now: SimTime,
    ) -> Option<TxRequest> {
        self.engines().tx_begin(pkt, eligible, now)
    }

    /// A receive burst of `bytes` ended ([`NicDma::rx_burst_done`]): the frame it
    /// finished writing, if any.
    #[inline(always)]
    pub fn dma_rx_burst_done(&mut self, bytes: u32) -> Option<Packet> {
        self.engines().rx_burst_done(bytes)
    }

    /// The receive engine's next burst, if a frame waits ([`NicDma::rx_next_burst`]).
    #[inline(always)]
    pub fn dma_rx_next_burst(&mut self) -> Option<Burst> {
        self.engines().rx_next_burst()
    }

    /// A transmit burst of `bytes` ended ([`NicDma::tx_burst_done`]), on its own link.
    #[inline(always)]
    pub fn dma_tx_burst_done(&mut self, bytes: u32, now: SimTime) -> TxStep {
        let link = self.nic.link;
        self.engines().tx_burst_done(bytes, now, &link)
    }

    /// The frame on its wire ended ([`NicDma::tx_wire_end`]): whether the wire ran dry
    /// before all of it was in the FIFO (an underrun).
    #[inline(always)]
    pub fn dma_tx_wire_end(&mut self) -> bool {
        self.engines().tx_wire_end()
    }

    /// The chip acknowledged an underrun: its FIFO threshold steps up (with DMA
    /// engines) for the restart.
    pub fn ack_underrun(&mut self) {
        self.nic.ack_underrun();
        if let Some(d) = self.dma.get_mut() {
            d.raise_threshold();
        }
    }

    /// The handler acknowledged an underrun ([`Port::ack_underrun`]): whether its
    /// driver re-initialises the chip for it.
    pub fn underrun_reinit(&mut self) -> bool {
        self.ack_underrun();
        self.link_watch
            .as_ref()
            .is_some_and(|w| w.reinit_on_underrun())
    }

    /// Whether a frame is on its wire whole, as a reset finds it: not a cut-through
    /// frame its DMA engine is still fetching (without a bus every frame on the wire
    /// is whole), given whether one is on the wire at all.
    pub fn whole_on_wire(&self, on_wire: bool) -> bool {
        on_wire && self.dma.get().is_none_or(|d| !d.tx_fetching())
    }

    /// Chip reset (dc_stop + dc_init): rings, FIFOs and DMA engines cleared. The frames
    /// lost, handed to `lost`; the frame on the wire kept if `keep_head`.
    pub fn reset(&mut self, keep_head: bool, mut lost: impl FnMut(Packet)) {
        self.nic.reset(keep_head).into_iter().for_each(&mut lost);
        if let Some(d) = self.dma.get_mut() {
            d.reset().for_each(lost);
        }
    }

    /// Its DMA engines restart after a reset, the bus holding `on_bus` (a burst whose
    /// completion they then ignore).
    pub fn reset_engines(&mut self, on_bus: Option<Burst>) {
        if let Some(d) = self.dma.get_mut() {
            d.reset_engines(on_bus);
        }
    }
}

/// The host's interfaces: every device's [`Port`] and every NIC's transmit side, its
/// [`TxGroup`] (the devices of its queues, one for a NIC of one queue, and the wire
/// they share with its arbiter and XPS). A multi-queue NIC's queue devices are
/// adjacent; its group owns its wire, and what happens on that wire goes through
/// [`Ports::on_wire`], which lends the group's devices to the port as its queues. Reads
/// index the devices (`ports[nic]`, through `Deref`, which lends a port to read only);
/// an operation on one port borrows it with [`Ports::at`], and can do no more than the
/// port's own operations, its parts being private.
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

    /// Device `nic`'s port, lent for one of its operations (its parts are its own:
    /// see [`Port`]).
    #[inline(always)]
    pub fn at(&mut self, nic: usize) -> &mut Port<D> {
        &mut self.devices[nic]
    }

    /// Every port, lent in turn (assembly's and `Host::unmerged`'s look-ahead, the link
    /// watches' first callouts).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Port<D>> {
        self.devices.iter_mut()
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
