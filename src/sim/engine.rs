//! The discrete-event engine: a clock, a heap of future events, and two indexes for the
//! events a model keeps outside the heap. It knows nothing of NICs or packets.
//!
//! **The heap.** [`Scheduler<E>`] is the clock and a binary heap of opaque events of
//! type `E`, ordered by (time, sequence number): [`Scheduler::at`] / [`Scheduler::after`]
//! give each event the next number of one counter, so events scheduled for the same
//! instant run in the order they were scheduled (FIFO) and a run is deterministic.
//! [`Scheduler::pop`] removes the earliest and moves the clock to its time. Push and pop
//! cost O(log n) in the events queued.
//!
//! **Keyed timers.** A timer that its owner may cancel or re-arm (an interrupt-moderation
//! timer, a driver's callout) is scheduled with [`Scheduler::at_keyed`], which returns
//! its [`TimerKey`]: the event's own (time, sequence), unique in the run. The owner keeps
//! the key of the timer it has armed ([`Timer`]); cancelling is forgetting it, re-arming
//! is keeping the new one, and when a keyed event pops ([`Scheduler::pop_keyed`]) the
//! owner acts only if the key is the one it holds ([`Timer::fired`]). Cancellation is
//! lazy, as in ns-3's `EventId::Cancel`: the cancelled event stays queued until its time
//! and pops as a no-op (counted in [`Scheduler::events_processed`]), which is cheaper
//! than a heap with removal. The event itself carries no generation number.
//!
//! **Slots.** An event of which a model has at most one pending per component (a CPU's
//! running burst, the bus's burst, the frame on an output wire, a flow's next frame)
//! can be kept outside the heap, in a numbered [`Slot`]: its key (time, sequence) is
//! stamped from the same counter ([`Scheduler::stamp`]), so it is ordered with the
//! heap's events exactly as if it had been queued, and rescheduling it overwrites the
//! slot instead of leaving a stale event. The model finds the earliest of the heap
//! ([`Scheduler::peek_key`]) and its slots ([`Slots::earliest`]) itself, and for a slot
//! moves the clock with [`Scheduler::advance`] (counted in
//! [`Scheduler::events_processed`] like a pop). The [`Slots`] trait has two
//! implementations with the same answers, chosen when the model is assembled:
//!
//! - [`SlotTable`]: an array scanned for its minimum, O(n) per look, for a handful of
//!   slots (irqsim's host with one core: the CPU, the bus, the output wires, and each
//!   flow's next frame);
//! - [`SlotTree`]: a tournament tree whose root is the earliest, O(log n) per change and
//!   O(1) per look, for many (the host with several cores: a CPU slot per core, the bus,
//!   the output wires); one slot set on most events can be made hot
//!   ([`Slots::hot`]) and is kept beside the tree.
//!
//! A key is packed in one `u128` ([`KeyPacking`]: `at << 64 | seq << bits | slot`), so
//! the earliest of several keys is their minimum, ties between slots going to the
//! lower slot number. The sequence number `u64::MAX` means "after every other event of
//! its instant" (the host gives it to CPU bursts' completions).
//!
//! **Arrivals.** Many members of one kind that fire roughly in turn (a host's flows, each
//! with one next frame) can go in an [`ArrivalQueue`] instead: a FIFO of keys in
//! increasing order and a heap for the keys that would break that order, O(1) per push
//! and pop when members fire in turn. Its keys are packed as the slots' (slot number 0),
//! so a model compares them with [`Slots::earliest_key`] and the heap's packed key
//! ([`KeyPacking::pack_event`]) in one minimum.
//!
//! A model's loop, as irqsim's host runs it: `Host::run` repeats `Host::peek_next`
//! and `Host::fire` (`src/host/mod.rs`); the host's slots and arrivals, their layout
//! and the decoding of an index into what it completes are `Events` and `Source` in
//! `src/host/events.rs`.
//!
//! ```text
//! // Events::peek: the least of sched.peek_key(), slots.earliest() and, with several
//! // cores, arrivals.first(); Host::peek_next stops once the run is over.
//! while let Some(next) = host.peek_next(&sched) {
//!     if next.is_timer() {                                   // the heap's head
//!         let (_, ev) = sched.pop(); host.timer(ev)
//!     } else {                                               // a slot or an arrival
//!         sched.advance(next.key); events.take(next);        // slots.take / arrivals.pop
//!         match events.source(next) { Cpu(c) | Bus | Wire(nic) | Arrival(flow) => .. }
//!     }
//!     host.reschedule(); events.settle();                    // slots.settle
//! }
//! ```

use crate::sim::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// The (time, sequence number) of an event; ordered as the queue orders events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Slot {
    /// When.
    pub at: SimTime,
    /// Scheduling order, for ties.
    pub seq: u64,
}

/// The identity of a keyed timer event ([`Scheduler::at_keyed`]): its (time, sequence),
/// unique in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimerKey(Slot);

impl TimerKey {
    /// When the timer expires.
    #[inline]
    pub fn at(self) -> SimTime {
        self.0.at
    }
}

/// A timer its owner can arm, re-arm and cancel: the key of the armed event, if any.
/// Re-arming replaces the key, so an earlier event pops as a no-op; cancelling clears
/// it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer(Option<TimerKey>);

impl Timer {
    /// Not armed.
    pub const IDLE: Timer = Timer(None);

    /// Hold `key` as the armed timer (the one [`Scheduler::at_keyed`] just queued).
    #[inline]
    pub fn armed(&mut self, key: TimerKey) {
        self.0 = Some(key);
    }

    /// Cancel the armed timer (its event will pop as a no-op).
    #[inline]
    pub fn cancel(&mut self) {
        self.0 = None;
    }

    /// When the armed timer expires, if one is armed.
    #[inline]
    pub fn deadline(&self) -> Option<SimTime> {
        self.0.map(TimerKey::at)
    }

    /// Whether the event of `key` that just popped is the armed timer; if so it is
    /// disarmed (it fired).
    #[inline]
    pub fn fired(&mut self, key: TimerKey) -> bool {
        if self.0 == Some(key) {
            self.0 = None;
            true
        } else {
            false
        }
    }

    /// The key of the armed timer, if any.
    #[inline]
    pub fn key(&self) -> Option<TimerKey> {
        self.0
    }
}

/// Future-event list with a monotone clock.
///
/// Counters: [`Scheduler::events_processed`].
pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    now: SimTime,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Scheduler {
            heap: BinaryHeap::with_capacity(64),
            now: SimTime::ZERO,
            next_seq: 0,
            popped: 0,
        }
    }

    /// Current simulated time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedule `event` at absolute time `at` (not before now).
    #[inline]
    pub fn at(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, event });
    }

    /// Schedule `event` at `at` as a keyed timer: its key identifies it when it pops
    /// ([`Scheduler::pop_keyed`]).
    #[inline]
    pub fn at_keyed(&mut self, at: SimTime, event: E) -> TimerKey {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, event });
        TimerKey(Slot { at, seq })
    }

    /// [`Scheduler::pop`] with the event's key (for keyed timers: [`Timer::fired`]).
    #[inline]
    pub fn pop_keyed(&mut self) -> Option<(TimerKey, E)> {
        let e = self.heap.pop()?;
        debug_assert!(e.at >= self.now, "simulated time went backwards");
        self.now = e.at;
        self.popped += 1;
        Some((
            TimerKey(Slot {
                at: e.at,
                seq: e.seq,
            }),
            e.event,
        ))
    }

    /// A (time, sequence) stamp for an event kept outside the heap.
    #[inline]
    pub fn stamp(&mut self, at: SimTime) -> Slot {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        Slot { at, seq }
    }

    /// (time, sequence) of the earliest queued event.
    #[inline]
    pub fn peek_key(&self) -> Option<Slot> {
        self.heap.peek().map(|e| Slot {
            at: e.at,
            seq: e.seq,
        })
    }

    /// Advance the clock to a slot's time (the model handles the slot's event itself).
    #[inline]
    pub fn advance(&mut self, slot: Slot) {
        debug_assert!(slot.at >= self.now, "simulated time went backwards");
        self.now = slot.at;
        self.popped += 1;
    }

    /// Schedule `event` after `delay` from now.
    #[inline]
    pub fn after(&mut self, delay: SimTime, event: E) {
        self.at(self.now + delay, event);
    }

    /// Remove and return the earliest event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        debug_assert!(e.at >= self.now, "simulated time went backwards");
        self.now = e.at;
        self.popped += 1;
        Some((e.at, e.event))
    }

    /// Time of the earliest pending event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.at)
    }

    /// Number of events popped so far -- counter.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    /// Number of events still queued.
    pub fn pending(&self) -> usize {
        self.heap.len()
    }
}

/// A fixed set of [`Slot`]s, each empty or holding one pending event's (time,
/// sequence), and the earliest of them found by one scan of a contiguous array: the
/// few one-of-a-kind pending events of a model (see the module docs), checked on every
/// event without touching the heap.
#[derive(Clone, Debug)]
pub struct SlotTable {
    /// `at << 64 | seq` per slot, [`SlotTable::EMPTY`] when empty: ordered as (time,
    /// sequence) by one integer comparison, so the scan needs no data-dependent branch
    /// (the earliest of a handful of slots is unpredictable from one event to the next).
    keys: Vec<u128>,
}

impl SlotTable {
    const EMPTY: u128 = u128::MAX;

    /// `n` empty slots.
    pub fn new(n: usize) -> Self {
        SlotTable {
            keys: vec![Self::EMPTY; n],
        }
    }

    #[inline(always)]
    fn pack(k: Slot) -> u128 {
        ((k.at.0 as u128) << 64) | k.seq as u128
    }

    #[inline(always)]
    fn unpack(k: u128) -> Slot {
        Slot {
            at: SimTime((k >> 64) as u64),
            seq: k as u64,
        }
    }

    /// Number of slots.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the table has no slots.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Set or clear slot `i`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, k: Option<Slot>) {
        self.keys[i] = k.map_or(Self::EMPTY, Self::pack);
    }

    /// Slot `i`, if it holds an event.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<Slot> {
        let k = self.keys[i];
        (k != Self::EMPTY).then(|| Self::unpack(k))
    }

    /// The earliest slot by (time, sequence), if any holds an event.
    #[inline(always)]
    pub fn earliest(&self) -> Option<(usize, Slot)> {
        let mut best = (0, Self::EMPTY);
        for (i, &k) in self.keys.iter().enumerate() {
            if k < best.1 {
                best = (i, k);
            }
        }
        (best.1 != Self::EMPTY).then(|| (best.0, Self::unpack(best.1)))
    }
}

/// How a slot's key is packed in one integer: `at << 64 | seq << bits | slot`, with
/// `bits` the bits of a slot number: unique, ordered as (time, sequence, slot), so the
/// earliest of several keys is their minimum. The sequence numbers must stay below
/// `2^(64 - bits) - 1` (checked); `u64::MAX`, the sequence of an event that runs after
/// every other of its instant, is kept as `2^(64 - bits) - 1`. Keys of different
/// queues packed alike compare as their events are ordered, the sequence numbers being
/// unique among events that are not `u64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyPacking {
    bits: u32,
    /// The packed sequence number that stands for `u64::MAX`; real ones are below it.
    seq_max: u64,
}

impl KeyPacking {
    /// The packing of `n` slots' keys.
    pub fn for_slots(n: usize) -> Self {
        let bits = n.max(2).next_power_of_two().trailing_zeros();
        KeyPacking {
            bits,
            seq_max: u64::MAX >> bits,
        }
    }

    /// Key `k` packed with slot number 0, for a key whose sequence number is not
    /// `u64::MAX` (a queued event's, an arrival's).
    #[inline(always)]
    pub fn pack_event(self, k: Slot) -> u128 {
        assert!(
            k.seq < self.seq_max,
            "sequence number {} beyond the slot tree's",
            k.seq
        );
        ((k.at.0 as u128) << 64) | ((k.seq << self.bits) as u128)
    }

    /// Slot `i`'s key `k` packed (`SlotTable::EMPTY` for none).
    #[inline(always)]
    pub fn pack(self, i: usize, k: Option<Slot>) -> u128 {
        let Some(k) = k else {
            return SlotTable::EMPTY;
        };
        let max = self.seq_max;
        let seq = if k.seq == u64::MAX {
            max
        } else {
            assert!(
                k.seq < max,
                "sequence number {} beyond the slot tree's",
                k.seq
            );
            k.seq
        };
        ((k.at.0 as u128) << 64) | (((seq << self.bits) | i as u64) as u128)
    }

    /// A packed key's slot and key (not `SlotTable::EMPTY`).
    #[inline(always)]
    pub fn unpack(self, k: u128) -> (usize, Slot) {
        let seq = (k as u64) >> self.bits;
        let slot = (k as usize) & ((1 << self.bits) - 1);
        let slot_key = Slot {
            at: SimTime((k >> 64) as u64),
            seq: if seq == self.seq_max { u64::MAX } else { seq },
        };
        (slot, slot_key)
    }
}

/// A set of slots as the model uses it: [`SlotTable`] (a scan, for a handful) or
/// [`SlotTree`] (indexed, for many), chosen by the model when it is assembled. Both
/// give the same earliest slot: the least (time, sequence), the lowest slot of equal
/// keys.
pub trait Slots {
    /// `n` empty slots.
    fn with_slots(n: usize) -> Self;
    /// Set or clear slot `i`.
    fn set(&mut self, i: usize, k: Option<Slot>);
    /// Clear slot `i`, whose event is being handled: [`Slots::get`] sees it empty at
    /// once, [`Slots::earliest`] only after [`Slots::settle`] (the handler usually sets
    /// the slot again, and the index is then updated once for both).
    fn take(&mut self, i: usize);
    /// Bring the index up to date after [`Slots::take`].
    fn settle(&mut self);
    /// Slot `i`, if it holds an event.
    fn get(&self, i: usize) -> Option<Slot>;
    /// The earliest slot, if any holds an event (the slots settled).
    fn earliest(&self) -> Option<(usize, Slot)>;
    /// How [`Slots::earliest_key`] packs a key.
    fn packing(&self) -> KeyPacking;
    /// The earliest slot and its key packed by [`Slots::packing`] (`SlotTable::EMPTY`
    /// if none), for a model that compares it with keys of its own packed alike.
    fn earliest_key(&self) -> u128;
    /// Slot `i` is set on most events (a NIC's output wire): a hint, with no effect on
    /// what the slots hold.
    #[inline(always)]
    fn hot(&mut self, _i: usize) {}
}

impl Slots for SlotTable {
    fn with_slots(n: usize) -> Self {
        SlotTable::new(n)
    }
    #[inline(always)]
    fn set(&mut self, i: usize, k: Option<Slot>) {
        SlotTable::set(self, i, k)
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        SlotTable::set(self, i, None)
    }
    #[inline(always)]
    fn settle(&mut self) {}
    #[inline(always)]
    fn get(&self, i: usize) -> Option<Slot> {
        SlotTable::get(self, i)
    }
    #[inline(always)]
    fn earliest(&self) -> Option<(usize, Slot)> {
        SlotTable::earliest(self)
    }
    fn packing(&self) -> KeyPacking {
        KeyPacking::for_slots(self.len())
    }
    fn earliest_key(&self) -> u128 {
        SlotTable::earliest(self).map_or(SlotTable::EMPTY, |(i, k)| {
            Slots::packing(self).pack(i, Some(k))
        })
    }
}

/// Slots in a tournament tree: each node holds the least key below it, the root the
/// earliest slot; setting a slot replays the matches on its leaf's path towards the
/// root, instead of a scan of every slot per event: for models with many one-of-a-kind
/// events (many flows, many cores).
///
/// A node's key is `at << 64 | seq << b | slot` ([`KeyPacking`]), with `b` the bits of
/// a slot number: unique, ordered as (time, sequence, slot), so a match is the minimum
/// of two integers (no branch, no tie rule) and the winner's slot number comes with its
/// key. The sequence numbers must stay below `2^(64 - b) - 1` (a run would need more
/// than 2^50 events with 16,384 slots to reach that; checked); `u64::MAX`, the sequence
/// of an event that runs after every other of its instant, is kept as `2^(64 - b) - 1`.
///
/// The leaves are nodes `n` to `2n - 1` of the array (a tree of any number of leaves:
/// node `j`'s children are `2j` and `2j + 1`, and node 1 is the least of all), so a
/// slot's path has floor or ceil of log2(n) nodes: 3 or 4 for 10 slots, where a
/// power-of-two tree has 4 for each.
///
/// Cost: setting a slot replays at most ceil(log2(n)) matches, and stops at the
/// first node that does not change (nothing above it changes). A slot taken
/// ([`Slots::take`]) is replayed once, when it is set again or at [`Slots::settle`],
/// whichever comes first. The hot slot ([`Slots::hot`]) is kept beside the tree (its
/// leaf empty): setting it replays nothing, and the earliest is the lesser of the root
/// and it.
#[derive(Clone, Debug)]
pub struct SlotTree {
    /// Node `j`, from 1 (children `2j` and `2j + 1`): the least packed key below it
    /// ([`SlotTable::EMPTY`] when every slot below is empty); leaf `cap + i` is slot
    /// `i` (a padding leaf, with one slot, stays empty). A power of two of them, at
    /// least `2 cap`, so that an index masked to the array is a node (no bounds check);
    /// node 0 and those from `2 cap` unused.
    nodes: Vec<u128>,
    /// Leaves: the number of slots (at least 2).
    cap: usize,
    /// The packing of the keys: slot numbers of ceil(log2(`cap`)) bits.
    packing: KeyPacking,
    /// Number of slots.
    n: usize,
    /// The slot taken and not yet replayed ([`SlotTree::NONE`] if none): the nodes on
    /// its path may be stale, every other node is the least of its children.
    taken: usize,
    /// The hot slot ([`SlotTree::NONE`] if none), whose leaf stays empty ...
    hot: usize,
    /// ... and its packed key.
    hot_key: u128,
}

/// The lesser of `a` and `b`, with conditional moves (which of two keys is less is
/// unpredictable from one event to the next, and a branch would be mispredicted).
#[inline(always)]
fn min_unpredictable(a: u128, b: u128) -> u128 {
    let take_b = 0u128.wrapping_sub((b < a) as u128);
    (b & take_b) | (a & !take_b)
}

impl SlotTree {
    const NONE: usize = usize::MAX;

    #[inline(always)]
    fn pack(&self, i: usize, k: Option<Slot>) -> u128 {
        self.packing.pack(i, k)
    }

    /// Node `j`.
    #[inline(always)]
    fn node(&self, j: usize) -> u128 {
        self.nodes[j]
    }

    /// Replay the path from leaf `j`: each node the least of its children. `early`:
    /// stop at the first node that keeps its key (valid when the nodes above it are up
    /// to date but for the taken slot's path, which is replayed in full later).
    #[inline(always)]
    fn replay(&mut self, mut j: usize, early: bool) {
        let nodes = &mut self.nodes[..];
        let last = nodes.len() - 1;
        let mut k = nodes[j & last];
        while j > 1 {
            let sib = nodes[(j ^ 1) & last];
            // Which key wins is unpredictable: a conditional move, not a branch.
            k = min_unpredictable(k, sib);
            j >>= 1;
            let node = &mut nodes[j & last];
            if early && *node == k {
                return;
            }
            *node = k;
        }
    }

    /// Slot `i`'s path replayed in full (its nodes may be stale).
    #[inline(never)]
    fn replay_full(&mut self, i: usize) {
        self.replay(self.cap + i, false);
    }

    /// Slot `i`'s path replayed up to the first node that keeps its key.
    #[inline(never)]
    fn replay_early(&mut self, i: usize) {
        self.replay(self.cap + i, true);
    }

    /// Put packed key `key` in slot `i`'s leaf (not the hot slot's) and bring the
    /// nodes above it up to date.
    #[inline(always)]
    fn set_leaf(&mut self, i: usize, key: u128) {
        self.nodes[self.cap + i] = key;
        if i == self.taken {
            self.taken = Self::NONE;
            self.replay_full(i);
        } else {
            self.replay_early(i);
        }
    }

    /// [`Slots::hot`] for another slot than the hot one: the old one's key goes to its
    /// leaf, the new one's leaf is emptied.
    #[inline(never)]
    fn change_hot(&mut self, i: usize) {
        let (old, key) = (self.hot, self.hot_key);
        self.hot = Self::NONE;
        if old != Self::NONE && (key != SlotTable::EMPTY || old == self.taken) {
            self.set_leaf(old, key);
        }
        self.hot_key = self.nodes[self.cap + i];
        if self.hot_key != SlotTable::EMPTY || i == self.taken {
            self.set_leaf(i, SlotTable::EMPTY);
        }
        self.hot = i;
    }
}

impl Slots for SlotTree {
    fn with_slots(n: usize) -> Self {
        let cap = n.max(2);
        SlotTree {
            nodes: vec![SlotTable::EMPTY; 2 * cap.next_power_of_two()],
            cap,
            packing: KeyPacking::for_slots(cap),
            n,
            taken: Self::NONE,
            hot: Self::NONE,
            hot_key: SlotTable::EMPTY,
        }
    }

    #[inline(always)]
    fn set(&mut self, i: usize, k: Option<Slot>) {
        assert!(i < self.n, "slot {i} of {}", self.n);
        let key = self.pack(i, k);
        if i == self.hot {
            self.hot_key = key;
        } else {
            self.set_leaf(i, key);
        }
    }

    #[inline(always)]
    fn take(&mut self, i: usize) {
        assert!(i < self.n, "slot {i} of {}", self.n);
        if i == self.hot {
            self.hot_key = SlotTable::EMPTY;
            return;
        }
        self.settle();
        let j = self.cap + i;
        self.nodes[j] = SlotTable::EMPTY;
        self.taken = i;
    }

    #[inline(always)]
    fn settle(&mut self) {
        if self.taken != Self::NONE {
            let i = self.taken;
            self.taken = Self::NONE;
            self.replay_full(i);
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<Slot> {
        assert!(i < self.n, "slot {i} of {}", self.n);
        let k = if i == self.hot {
            self.hot_key
        } else {
            self.node(self.cap + i)
        };
        (k != SlotTable::EMPTY).then(|| self.packing.unpack(k).1)
    }

    #[inline(always)]
    fn earliest(&self) -> Option<(usize, Slot)> {
        debug_assert!(self.taken == Self::NONE, "a taken slot not settled");
        let k = min_unpredictable(self.node(1), self.hot_key);
        (k != SlotTable::EMPTY).then(|| self.packing.unpack(k))
    }

    #[inline(always)]
    fn packing(&self) -> KeyPacking {
        self.packing
    }

    #[inline(always)]
    fn earliest_key(&self) -> u128 {
        debug_assert!(self.taken == Self::NONE, "a taken slot not settled");
        min_unpredictable(self.node(1), self.hot_key)
    }

    #[inline(always)]
    fn hot(&mut self, i: usize) {
        assert!(i < self.n, "slot {i} of {}", self.n);
        if i != self.hot {
            self.change_hot(i);
        }
    }
}

/// The next arrival of each of a set of members (a model's flows), each with at most
/// one pending: the earliest by (time, sequence) found without a scan, and in O(1)
/// when members arrive in turn (flows of equal constant rates: each new arrival is
/// later than every pending one).
///
/// A FIFO of keys in increasing order, and a binary heap for the keys that would break
/// its order: a new key later than the FIFO's last goes to its back, any other key to
/// the heap; the earliest is the lesser of the FIFO's front and the heap's top. Keys
/// are unique (the scheduler's sequence numbers), so there is no tie to order.
///
/// Used as the model uses its flows: a member is set only when it has no pending
/// arrival ([`ArrivalQueue::push`]), and only the earliest is removed
/// ([`ArrivalQueue::pop`], when its event fires).
#[derive(Clone, Debug)]
pub struct ArrivalQueue {
    /// Each member's pending key (packed by `packing`, slot 0), [`SlotTable::EMPTY`] if
    /// none.
    keys: Vec<u128>,
    packing: KeyPacking,
    /// Keys and members in increasing key order: `len` of them from `head`, in a ring
    /// of a power of two entries, at least the number of members (each is in it at most
    /// once, so it never fills).
    ring: Vec<(u128, usize)>,
    head: usize,
    len: usize,
    /// The other keys and members, earliest on top.
    heap: BinaryHeap<std::cmp::Reverse<(u128, usize)>>,
    /// The earliest key and its member (the lesser of the FIFO's front and the heap's
    /// top), [`SlotTable::EMPTY`] if none: read on every event of the model, so kept
    /// at hand.
    first: (u128, usize),
}

impl ArrivalQueue {
    /// `n` members with no pending arrival, their keys packed by `packing` (that of
    /// the slots they are compared with).
    pub fn new(n: usize, packing: KeyPacking) -> Self {
        ArrivalQueue {
            packing,
            keys: vec![SlotTable::EMPTY; n],
            ring: vec![(SlotTable::EMPTY, 0); n.max(1).next_power_of_two()],
            head: 0,
            len: 0,
            heap: BinaryHeap::with_capacity(n),
            first: (SlotTable::EMPTY, 0),
        }
    }

    /// Member `i`'s next arrival is at `k` (it has none pending).
    #[inline(always)]
    pub fn push(&mut self, i: usize, k: Slot) {
        let key = self.packing.pack_event(k);
        debug_assert!(
            self.keys[i] == SlotTable::EMPTY,
            "member {i} already pending"
        );
        self.keys[i] = key;
        let mask = self.ring.len() - 1;
        if self.len == 0 || self.ring[(self.head + self.len - 1) & mask].0 < key {
            self.ring[(self.head + self.len) & mask] = (key, i);
            self.len += 1;
        } else {
            self.heap.push(std::cmp::Reverse((key, i)));
        }
        if key < self.first.0 {
            self.first = (key, i);
        }
    }

    /// Member `i`'s pending arrival, if any.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<Slot> {
        let k = self.keys[i];
        (k != SlotTable::EMPTY).then(|| self.packing.unpack(k).1)
    }

    /// The earliest pending arrival: its member and key.
    #[inline(always)]
    pub fn earliest(&self) -> Option<(usize, Slot)> {
        let (k, i) = self.first;
        (k != SlotTable::EMPTY).then(|| (i, self.packing.unpack(k).1))
    }

    /// The earliest pending arrival's packed key (`SlotTable::EMPTY` if none) and
    /// member.
    #[inline(always)]
    pub fn first(&self) -> (u128, usize) {
        self.first
    }

    /// Remove the earliest pending arrival, and return its member.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<usize> {
        let (k, i) = self.first;
        if k == SlotTable::EMPTY {
            return None;
        }
        let mask = self.ring.len() - 1;
        if self.len > 0 && self.ring[self.head].0 == k {
            self.head = (self.head + 1) & mask;
            self.len -= 1;
        } else {
            self.heap.pop();
        }
        self.keys[i] = SlotTable::EMPTY;
        let front = (self.len > 0).then(|| self.ring[self.head]);
        let top = self.heap.peek().map(|r| r.0);
        self.first = match (front, top) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => (SlotTable::EMPTY, 0),
        };
        Some(i)
    }
}

#[cfg(test)]
mod tests;
