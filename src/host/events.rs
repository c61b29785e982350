//! The host's pending events outside the timer heap, by what they complete.
//!
//! Four kinds of event are one of a kind at any moment, so each has a place of its own
//! instead of heap entries that go stale: the completion of the CPU burst running on
//! each core ([`Source::Cpu`]), the end of the burst on the DMA bus ([`Source::Bus`]),
//! the end of the frame on each output wire ([`Source::Wire`]), and each flow's next
//! frame reaching its NIC ([`Source::Arrival`]). Everything else (moderation, policy
//! and clock timers, the statistics harvest, the link check, the end of sending) is a
//! timed [`Event`] in the scheduler's heap ([`Source::Timer`]).
//!
//! [`Events`] owns the places and their layout: which index of the slot table each
//! source has is decided here once, and [`Events::peek`] gives back the source, typed,
//! of the earliest event of all (slots, arrivals and the heap, by `(time, sequence)`).
//! On a host with one core the slots are a table scanned in full (a handful: the CPU,
//! the bus, the wires frames leave by, one per flow); with several, a tree of the CPU,
//! bus and wire slots beside an arrival queue of the flows (a flow's next frame is
//! usually later than every other flow's, found in O(1)).

use crate::host::Event;
use crate::host::cores::CoreModel;
use crate::sim::engine::{ArrivalQueue, Scheduler, Slot, Slots};

/// What a pending event completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The CPU burst running on core `0`.
    Cpu(usize),
    /// The burst on the DMA bus.
    Bus,
    /// The frame on NIC (device) `0`'s output wire.
    Wire(usize),
    /// Flow `0`'s next frame reaching its NIC.
    Arrival(usize),
    /// The head of the timer heap.
    Timer,
}

/// The earliest pending event: its key and where it is kept, which
/// [`Events::source`] decodes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Next {
    /// When, and its place in the order of events at that instant.
    pub key: Slot,
    /// Its slot; with several cores, flow `f`'s arrival is `rx_base + f`; `None`: the
    /// heap's head.
    index: Option<usize>,
}

impl Next {
    /// Whether it is the head of the timer heap (which its handler pops).
    #[inline(always)]
    pub(crate) fn is_timer(self) -> bool {
        self.index.is_none()
    }
}

/// A wire's slot was set against the one-frame-per-wire rule. Every transmission starts
/// through its port ([`crate::model::nic::port::TxPort`]), which gives the wire to one
/// frame at a time; the slot is set where the frame's end becomes known (at the port's
/// start, or with a bus by the DMA engine), and checks it again: a second frame whose
/// end is set while one is on the wire is a bug wherever it came from (a chip reset
/// once started one). The slot is a device's: on a multi-queue NIC each queue has one,
/// and the port's arbiter keeps the queues of one wire apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireMisuse {
    /// A frame's end was set while another frame was on the wire.
    Busy,
    /// The NIC has no wire slot: no flow leaves by it.
    NoWire,
}

/// No key, in the packing of [`Slots::packing`]: later than every key.
const EMPTY_KEY: u128 = u128::MAX;
/// Slot of core 0's CPU burst.
const SLOT_CPU: usize = 0;
/// Slot of the end of the burst on the bus.
const SLOT_BUS: usize = 1;
/// Slot of the end of the frame on the first output wire (NIC `tx_nic0`'s); NIC `n`'s
/// is `SLOT_WIRE0 + n - tx_nic0`.
const SLOT_WIRE0: usize = 2;

/// The one-of-a-kind pending events of a host with cores `C`. Slot layout: core 0's CPU,
/// the bus, the wires from the first to the last NIC some flow leaves by (the NICs
/// outside never transmit and have no slot, so the scan is shorter, the tree lower),
/// then the CPUs of cores 1.., then (one core only) the flows' arrivals.
pub(crate) struct Events<C: CoreModel> {
    slots: C::Slots,
    arrivals: ArrivalQueue,
    /// The first NIC frames leave by.
    tx_nic0: usize,
    /// Slot of core 1's CPU burst (the end of the wires' slots).
    cpu_base: usize,
    /// Slot of flow 0's arrival with one core (the end of the CPU slots).
    rx_base: usize,
}

impl<C: CoreModel> Events<C> {
    /// The places for a host whose NICs transmit as `transmits` says (by NIC), with
    /// `cores` cores and `flows` flows.
    pub(crate) fn new(transmits: &[bool], cores: usize, flows: usize) -> Self {
        let tx_nic0 = transmits.iter().position(|&t| t).unwrap_or(0);
        let tx_nics = transmits.iter().rposition(|&t| t).map_or(0, |i| i + 1);
        let cpu_base = SLOT_WIRE0 + tx_nics - tx_nic0;
        let rx_base = cpu_base + cores - 1;
        let mut slots = C::Slots::with_slots(rx_base + if C::MANY { 0 } else { flows });
        if cpu_base > SLOT_WIRE0 {
            // The first output wire's slot is set for nearly every frame.
            slots.hot(SLOT_WIRE0);
        }
        let packing = slots.packing();
        Events {
            slots,
            arrivals: ArrivalQueue::new(if C::MANY { flows } else { 0 }, packing),
            tx_nic0,
            cpu_base,
            rx_base,
        }
    }

    /// The slot of core `c`'s CPU burst.
    #[inline(always)]
    fn cpu_index(&self, c: usize) -> usize {
        if !C::MANY || c == 0 {
            SLOT_CPU
        } else {
            self.cpu_base + c - 1
        }
    }

    /// The slot of `nic`'s output wire, if frames leave by it.
    #[inline(always)]
    fn wire_index(&self, nic: usize) -> Option<usize> {
        let i = SLOT_WIRE0 + nic.checked_sub(self.tx_nic0)?;
        (i < self.cpu_base).then_some(i)
    }

    /// Set (or clear) the completion of the burst now running on core `c`.
    #[inline(always)]
    pub(crate) fn set_cpu(&mut self, c: usize, k: Option<Slot>) {
        let i = self.cpu_index(c);
        self.slots.set(i, k);
    }

    /// Set (or clear) the end of the burst on the bus.
    #[inline(always)]
    pub(crate) fn set_bus(&mut self, k: Option<Slot>) {
        self.slots.set(SLOT_BUS, k);
    }

    /// When the frame on `nic`'s output wire ends.
    #[inline(always)]
    pub(crate) fn wire(&self, nic: usize) -> Option<Slot> {
        self.slots.get(self.wire_index(nic)?)
    }

    /// Set or clear the end of the frame on `nic`'s output wire. One wire carries one
    /// frame at a time: a frame set while one is on it, or on a NIC without a wire, is
    /// refused as a misuse (and set anyway on a wire, so that neither frame is lost).
    /// Clearing the slot of a NIC without a wire (a reset) is fine.
    #[inline(always)]
    pub(crate) fn set_wire(&mut self, nic: usize, k: Option<Slot>) -> Result<(), WireMisuse> {
        match self.wire_index(nic) {
            Some(i) => {
                let busy = k.is_some() && self.slots.get(i).is_some();
                self.slots.set(i, k);
                if busy { Err(WireMisuse::Busy) } else { Ok(()) }
            }
            None if k.is_some() => Err(WireMisuse::NoWire),
            None => Ok(()),
        }
    }

    /// When flow `f`'s pending frame reaches its NIC.
    #[inline(always)]
    pub(crate) fn arrival(&self, f: usize) -> Option<Slot> {
        if C::MANY {
            self.arrivals.get(f)
        } else {
            self.slots.get(self.rx_base + f)
        }
    }

    /// Flow `f`'s next frame reaches its NIC at `k` (its previous one has arrived).
    #[inline(always)]
    pub(crate) fn set_arrival(&mut self, f: usize, k: Slot) {
        if C::MANY {
            self.arrivals.push(f, k);
        } else {
            self.slots.set(self.rx_base + f, Some(k));
        }
    }

    /// The earliest pending event of the slots, the arrivals and the heap `s`, by
    /// (time, sequence); `None` when nothing is pending.
    #[inline(always)]
    pub(crate) fn peek(&self, s: &Scheduler<Event>) -> Option<Next> {
        if C::MANY {
            // The least of three keys packed alike: the slots', the arrivals', the
            // queue's.
            let p = self.slots.packing();
            let t = self.slots.earliest_key();
            let (a, f) = self.arrivals.first();
            let q = s.peek_key().map_or(EMPTY_KEY, |q| p.pack_event(q));
            let m = t.min(a).min(q);
            if m == EMPTY_KEY {
                return None;
            }
            let (i, key) = p.unpack(m);
            let index = if m == q {
                None
            } else if m == a {
                Some(self.rx_base + f)
            } else {
                Some(i)
            };
            return Some(Next { key, index });
        }
        let slot = self.slots.earliest();
        let queued = s.peek_key();
        match (slot, queued) {
            (Some((_, k)), Some(q)) if q < k => Some(Next {
                key: q,
                index: None,
            }),
            (Some((i, key)), _) => Some(Next {
                key,
                index: Some(i),
            }),
            (None, Some(key)) => Some(Next { key, index: None }),
            (None, None) => None,
        }
    }

    /// What `next` completes: the one decoding of the layout.
    #[inline(always)]
    pub(crate) fn source(&self, next: Next) -> Source {
        match next.index {
            None => Source::Timer,
            Some(SLOT_CPU) => Source::Cpu(0),
            Some(SLOT_BUS) => Source::Bus,
            Some(i) if i < self.cpu_base => Source::Wire(i - SLOT_WIRE0 + self.tx_nic0),
            Some(i) if i < self.rx_base => Source::Cpu(i - self.cpu_base + 1),
            Some(i) => Source::Arrival(i - self.rx_base),
        }
    }

    /// Remove `next`, found by [`Events::peek`] and not the heap's head (which its
    /// handler pops), from its place before it is handled.
    #[inline(always)]
    pub(crate) fn take(&mut self, next: Next) {
        let Some(i) = next.index else {
            debug_assert!(false, "the heap's head is popped, not taken");
            return;
        };
        if C::MANY && i >= self.rx_base {
            let first = self.arrivals.pop();
            debug_assert_eq!(first, Some(i - self.rx_base), "not the earliest arrival");
        } else {
            self.slots.take(i);
        }
    }

    /// After an event's handling: let the slots restore their order.
    #[inline(always)]
    pub(crate) fn settle(&mut self) {
        self.slots.settle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::cores::{ManyCores, OneCore};
    use crate::sim::time::SimTime;

    /// Every source set at its own time comes back from `peek` as itself, in time
    /// order, whatever the layout (NIC 0 receives only, NICs 1 and 2 transmit).
    fn round_trip<C: CoreModel>() {
        let mut s: Scheduler<Event> = Scheduler::new();
        let mut e: Events<C> = Events::new(&[false, true, true], 3, 2);
        let at = |s: &mut Scheduler<Event>, ns: u64| s.stamp(SimTime(ns * 1_000));
        e.set_cpu(2, Some(at(&mut s, 7)));
        e.set_arrival(1, at(&mut s, 2));
        e.set_wire(2, Some(at(&mut s, 5))).expect("free wire");
        e.set_bus(Some(at(&mut s, 3)));
        e.set_cpu(0, Some(at(&mut s, 6)));
        e.set_arrival(0, at(&mut s, 4));
        s.at(SimTime(1_000), Event::EndOfLoad);
        let mut seen = Vec::new();
        while let Some(n) = e.peek(&s) {
            if e.source(n) == Source::Timer {
                s.pop();
            } else {
                e.take(n);
            }
            seen.push(e.source(n));
            e.settle();
        }
        let want = [
            Source::Timer,
            Source::Arrival(1),
            Source::Bus,
            Source::Arrival(0),
            Source::Wire(2),
            Source::Cpu(0),
            Source::Cpu(2),
        ];
        if C::MANY {
            assert_eq!(seen, want);
        } else {
            // One core has one CPU slot: core 2's burst is core 0's.
            assert_eq!(seen, want[..6]);
        }
    }

    #[test]
    fn every_source_comes_back_as_itself_in_time_order() {
        round_trip::<OneCore>();
        round_trip::<ManyCores>();
    }

    #[test]
    fn a_wire_carries_one_frame_and_only_a_transmitting_nic_has_one() {
        let mut s: Scheduler<Event> = Scheduler::new();
        let mut e: Events<OneCore> = Events::new(&[false, true], 1, 1);
        let k = s.stamp(SimTime(1_000));
        assert_eq!(e.set_wire(1, Some(k)), Ok(()));
        assert_eq!(e.set_wire(1, Some(k)), Err(WireMisuse::Busy));
        assert_eq!(e.set_wire(0, Some(k)), Err(WireMisuse::NoWire));
        assert_eq!(e.set_wire(0, None), Ok(()));
        assert_eq!(e.set_wire(1, None), Ok(()));
        assert_eq!(e.wire(1), None);
    }
}
