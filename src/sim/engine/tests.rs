use super::*;

#[test]
fn ties_run_in_fifo_order_and_time_is_monotone() {
    let mut s = Scheduler::new();
    s.at(SimTime(5), 'b');
    s.at(SimTime(1), 'a');
    s.at(SimTime(5), 'c');
    s.at(SimTime(5), 'd');
    let order: Vec<char> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
    assert_eq!(order, vec!['a', 'b', 'c', 'd']);
    assert_eq!(s.now(), SimTime(5));
    assert_eq!(s.events_processed(), 4);
}

#[test]
fn a_keyed_timer_fires_once_and_a_cancelled_or_rearmed_one_pops_as_a_no_op() {
    let mut s = Scheduler::new();
    let mut t = Timer::IDLE;
    // Armed for 10, re-armed for 20 (the first is cancelled), a second timer for 15
    // cancelled outright.
    t.armed(s.at_keyed(SimTime(10), 'a'));
    t.armed(s.at_keyed(SimTime(20), 'b'));
    let mut u = Timer::IDLE;
    u.armed(s.at_keyed(SimTime(15), 'c'));
    u.cancel();
    assert_eq!(t.deadline(), Some(SimTime(20)));
    let mut fired = Vec::new();
    while let Some((k, e)) = s.pop_keyed() {
        assert_eq!(k.at(), s.now());
        if t.fired(k) || u.fired(k) {
            fired.push(e);
        }
    }
    assert_eq!(fired, vec!['b']);
    assert_eq!((t, u), (Timer::IDLE, Timer::IDLE));
    // The cancelled events popped all the same: three events processed.
    assert_eq!(s.events_processed(), 3);
}

#[test]
fn a_slot_tree_finds_what_a_slot_table_finds() {
    // 1, 5, 17, 43 and 100 slots, used as a model uses them: take the earliest slot
    // (its event fires) half of the time, make another slot hot a fifth of the time
    // (the one taken half of those times), then zero to three random sets and clears
    // (the slot taken among them a third of the time), with repeated keys (equal
    // keys: the lowest slot wins), then settle: after every set, each slot equals
    // the scanning table's; after settling, the earliest too.
    for n in [1, 5, 17, 43, 100] {
        let mut tree = SlotTree::with_slots(n);
        let mut table = SlotTable::new(n);
        let mut x: u64 = 12345;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 16
        };
        for step in 0..20_000u64 {
            let mut taken = None;
            if next().is_multiple_of(2)
                && let Some((i, _)) = table.earliest()
            {
                Slots::take(&mut tree, i);
                table.set(i, None);
                assert_eq!(Slots::get(&tree, i), None);
                taken = Some(i);
            }
            // Another slot made hot now and then: the one taken, or any.
            let r = next();
            if r.is_multiple_of(5) {
                let i = match taken {
                    Some(t) if (r >> 8).is_multiple_of(2) => t,
                    _ => (r >> 12) as usize % n,
                };
                Slots::hot(&mut tree, i);
                assert_eq!(Slots::get(&tree, i), table.get(i), "n {n}, step {step}");
            }
            for _ in 0..next() % 4 {
                let r = next();
                let i = match taken {
                    Some(t) if r.is_multiple_of(3) => t,
                    _ => (r >> 8) as usize % n,
                };
                let k = (!(r >> 20).is_multiple_of(4)).then_some(Slot {
                    at: SimTime(step / 4 + (r >> 24) % 50),
                    seq: if (r >> 30).is_multiple_of(3) {
                        u64::MAX
                    } else {
                        step
                    },
                });
                Slots::set(&mut tree, i, k);
                table.set(i, k);
                assert_eq!(Slots::get(&tree, i), table.get(i), "n {n}, step {step}");
            }
            Slots::settle(&mut tree);
            assert_eq!(
                Slots::earliest(&tree),
                table.earliest(),
                "n {n}, step {step}"
            );
            assert_eq!(Slots::packing(&tree), Slots::packing(&table));
            assert_eq!(
                Slots::earliest_key(&tree),
                Slots::earliest_key(&table),
                "n {n}, step {step}"
            );
            for i in 0..n {
                assert_eq!(Slots::get(&tree, i), table.get(i), "n {n}, step {step}");
            }
        }
    }
}

#[test]
fn an_arrival_queue_finds_what_a_slot_table_finds() {
    // 1, 4, 32 and 100 members, used as a model uses its flows: the earliest
    // arrival fires (is popped), and its member's next one is pushed: one period
    // later (members in turn: the FIFO), at a random later time (the heap), or never
    // (a finished source, pushed again later); at times another member with none
    // pending gets one. After every step each member's arrival, and the earliest,
    // equal the scanning table's.
    for n in [1, 4, 32, 100] {
        let packing = KeyPacking::for_slots(n + 3);
        let mut q = ArrivalQueue::new(n, packing);
        let mut table = SlotTable::new(n);
        let mut x: u64 = 987654321;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 16
        };
        let mut seq = 0u64;
        let mut stamp = |at: u64| {
            seq += 1;
            Slot {
                at: SimTime(at),
                seq,
            }
        };
        let period = 1_000u64;
        for i in 0..n {
            let k = stamp((next() % period) / 4 * 4);
            q.push(i, k);
            table.set(i, Some(k));
        }
        for step in 0..20_000u64 {
            let Some((i, k)) = table.earliest() else {
                break;
            };
            assert_eq!(q.earliest(), Some((i, k)), "n {n}, step {step}");
            assert_eq!(q.pop(), Some(i));
            table.set(i, None);
            assert_eq!(q.get(i), None);
            let now = k.at.0;
            let r = next();
            let later = match r % 8 {
                0..=4 => Some(now + period),
                5 | 6 => Some(now + (r >> 8) % (2 * period)),
                _ => None,
            };
            if let Some(at) = later {
                let k = stamp(at);
                q.push(i, k);
                table.set(i, Some(k));
            }
            if (r >> 20).is_multiple_of(5) {
                let j = (r >> 24) as usize % n;
                if table.get(j).is_none() {
                    let k = stamp(now + (r >> 32) % period);
                    q.push(j, k);
                    table.set(j, Some(k));
                }
            }
            assert_eq!(q.earliest(), table.earliest(), "n {n}, step {step}");
            let first = table.earliest().map_or((SlotTable::EMPTY, 0), |(i, k)| {
                (packing.pack(0, Some(k)), i)
            });
            assert_eq!(q.first(), first, "n {n}, step {step}");
            for j in 0..n {
                assert_eq!(q.get(j), table.get(j), "n {n}, step {step}");
            }
        }
        while let Some((i, _)) = table.earliest() {
            assert_eq!(q.pop(), Some(i));
            table.set(i, None);
        }
        assert_eq!(q.earliest(), None);
        assert_eq!(q.pop(), None);
    }
}

#[test]
fn slot_table_finds_the_earliest_by_time_then_sequence() {
    let mut t = SlotTable::new(4);
    assert_eq!(t.earliest(), None);
    let k = |at, seq| Slot {
        at: SimTime(at),
        seq,
    };
    t.set(2, Some(k(7, 3)));
    t.set(0, Some(k(7, 9)));
    t.set(3, Some(k(9, 1)));
    assert_eq!(t.earliest(), Some((2, k(7, 3))));
    t.set(2, None);
    assert_eq!(t.get(2), None);
    assert_eq!(t.earliest(), Some((0, k(7, 9))));
    // The largest sequence number still orders by time first.
    t.set(1, Some(k(8, u64::MAX)));
    t.set(0, None);
    assert_eq!(t.earliest(), Some((1, k(8, u64::MAX))));
    assert_eq!(t.get(3), Some(k(9, 1)));
}
