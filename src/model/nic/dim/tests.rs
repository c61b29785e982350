use super::*;
use proptest::prelude::*;

/// 1 µs in picoseconds.
const US: u64 = 1_000_000;

/// Drives a [`Dim`] through measurement windows. Each window lasts `dur_us` and holds
/// exactly `DIM_NEVENTS` events; a profile change is applied at the window's end
/// (the work item runs at once) and the next call, in `DIM_START_MEASURE`, takes the
/// new start sample at the same instant.
struct Drive {
    dim: Dim,
    now: SimTime,
    events: u64,
    packets: u64,
    bytes: u64,
}

impl Drive {
    fn new(cfg: &DimConfig) -> Drive {
        let mut d = Drive {
            dim: Dim::new(cfg),
            now: SimTime::ZERO,
            events: 0,
            packets: 0,
            bytes: 0,
        };
        // DIM_START_MEASURE: the first call only takes the start sample.
        assert_eq!(d.dim.sample(SimTime::ZERO, 0, 0, 0), None);
        assert_eq!(d.dim.state(), MeasureState::MeasureInProgress);
        d
    }

    /// A window of `dur_us` µs with 64 events, `bytes` bytes and `bytes / 1000`
    /// packets. Over 1,000 µs the rates are bpms = bytes, ppms = bytes / 1000,
    /// epms = 64 (DIV_ROUND_UP(64 * 1000, 1000)).
    fn window(&mut self, dur_us: u64, bytes: u64) -> Option<Moderation> {
        self.now += SimTime(dur_us * US);
        self.events += DIM_NEVENTS as u64;
        self.packets += bytes / 1000;
        self.bytes += bytes;
        let r = self
            .dim
            .sample(self.now, self.events, self.packets, self.bytes);
        if r.is_some() {
            self.dim.profile_applied(self.now);
            let again = self
                .dim
                .sample(self.now, self.events, self.packets, self.bytes);
            assert_eq!(again, None);
        }
        r
    }

    /// Windows of 1,000 µs with these byte counts: what each returned.
    fn run(&mut self, bytes: &[u64]) -> Vec<Option<Moderation>> {
        bytes.iter().map(|&b| self.window(1000, b)).collect()
    }
}

fn rx_cqe() -> DimConfig {
    DimConfig::default()
}

#[test]
fn profile_tables_are_net_dim_c() {
    // NET_DIM_{RX,TX}_{EQE,CQE}_PROFILES in lib/dim/net_dim.c (kernel-patches/bpf @
    // 93987391c44e), (usec, pkts) by index.
    let pairs = |t: &[Moderation; 5]| t.map(|x| (x.usecs, x.pkts));
    assert_eq!(
        pairs(profiles(Direction::Rx, CqPeriodMode::Eqe)),
        [(1, 256), (8, 256), (64, 256), (128, 256), (256, 256)]
    );
    assert_eq!(
        pairs(profiles(Direction::Rx, CqPeriodMode::Cqe)),
        [(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)]
    );
    assert_eq!(
        pairs(profiles(Direction::Tx, CqPeriodMode::Eqe)),
        [(1, 128), (8, 128), (32, 128), (64, 128), (128, 128)]
    );
    assert_eq!(
        pairs(profiles(Direction::Tx, CqPeriodMode::Cqe)),
        [(5, 128), (8, 64), (16, 32), (32, 32), (64, 32)]
    );
}

#[test]
fn calc_stats_rounds_up_and_truncates_time() {
    // dim_calc_stats: delta_us = ktime_us_delta = 3,999 ns / 1,000 = 3 (truncated);
    // ppms = DIV_ROUND_UP(1 * 1000, 3) = 334, bpms likewise for 1 byte,
    // epms = DIV_ROUND_UP(64 * 1000, 3) = 21,334.
    let start = Sample::default();
    let end = Sample {
        time_ns: 3_999,
        pkt_ctr: 1,
        byte_ctr: 1,
        event_ctr: 64,
    };
    assert_eq!(
        calc_stats(&start, &end),
        Some(Stats {
            ppms: 334,
            bpms: 334,
            epms: 21_334
        })
    );
    // 999 ns: delta_us = 0, dim_calc_stats returns false.
    let end = Sample {
        time_ns: 999,
        ..end
    };
    assert_eq!(calc_stats(&start, &end), None);
    // Sample::at keeps whole nanoseconds of the picosecond clock (ktime_get is ns).
    assert_eq!(Sample::at(SimTime(1_999_999), 0, 0, 0).time_ns, 1_999);
}

#[test]
fn calc_stats_and_net_dim_survive_counter_wraps() {
    // BIT_GAP(32, end, start): packets from 2^32 - 100 to 900 (mod 2^32) are 1,000;
    // bytes from 2^32 - 64,000 to 64,000 are 128,000. Over 2,000 µs:
    // ppms = DIV_ROUND_UP(1,000 * 1000, 2000) = 500, bpms = DIV_ROUND_UP(128,000 *
    // 1000, 2000) = 64,000, epms = DIV_ROUND_UP(64 * 1000, 2000) = 32.
    let start = Sample {
        time_ns: 0,
        pkt_ctr: u32::MAX - 99,
        byte_ctr: u32::MAX - 63_999,
        event_ctr: 65_500,
    };
    let end = Sample {
        time_ns: 2_000_000,
        pkt_ctr: 900,
        byte_ctr: 64_000,
        event_ctr: 28,
    };
    let want = Stats {
        ppms: 500,
        bpms: 64_000,
        epms: 32,
    };
    assert_eq!(calc_stats(&start, &end), Some(want));

    // Through net_dim with 64-bit running totals: dim_update_sample truncates them
    // to u16/u32, and BIT_GAP(16, 65,564 mod 2^16 = 28, 65,500) = 64 events, so the
    // measurement is taken; 63 events (BIT_GAP = 63 < DIM_NEVENTS) are not enough.
    let two32 = 1u64 << 32;
    let mut dim = Dim::new(&rx_cqe());
    assert_eq!(
        dim.sample(SimTime::ZERO, 65_500, two32 - 100, two32 - 64_000),
        None
    );
    let t = SimTime(2_000 * US);
    assert_eq!(dim.sample(t, 65_563, two32 + 900, two32 + 64_000), None);
    assert_eq!(dim.counters().measurements, 0);
    // First decision, parked on top with prev_stats zero: bpms 64,000 > 0 is
    // DIM_STATS_BETTER, exit parking from index 0 goes right to 1 (RX CQE (8, 128)).
    assert_eq!(
        dim.sample(t, 65_564, two32 + 900, two32 + 64_000),
        Some(Moderation {
            usecs: 8,
            pkts: 128
        })
    );
    assert_eq!(dim.counters().measurements, 1);
    assert_eq!(dim.prev_stats, want);
}

#[test]
fn significant_diff_is_more_than_ten_percent_in_integers() {
    // IS_SIGNIFICANT_DIFF: 100 * |val - ref| / ref > 10, integer division.
    assert!(!is_significant_diff(110, 100)); // 1000 / 100 = 10
    assert!(is_significant_diff(111, 100)); // 1100 / 100 = 11
    assert!(!is_significant_diff(90, 100)); // 10
    assert!(is_significant_diff(89, 100)); // 11
    assert!(!is_significant_diff(1_101, 1_000)); // 10,100 / 1,000 = 10
    assert!(is_significant_diff(1_110, 1_000)); // 11
    assert!(!is_significant_diff(5, 0)); // ref 0: never
}

#[test]
fn compare_orders_bytes_then_packets_then_events() {
    // net_dim_stats_compare against prev = (bpms 1000, ppms 100, epms 50).
    let prev = Stats {
        ppms: 100,
        bpms: 1000,
        epms: 50,
    };
    let s = |bpms, ppms, epms| Stats { ppms, bpms, epms };
    // Bytes +20 % decide, whatever packets and events do.
    assert_eq!(compare(&s(1200, 50, 100), &prev), Verdict::Better);
    assert_eq!(compare(&s(800, 200, 10), &prev), Verdict::Worse);
    // Bytes +5 % (not significant): packets +20 % decide.
    assert_eq!(compare(&s(1050, 120, 100), &prev), Verdict::Better);
    assert_eq!(compare(&s(1050, 80, 10), &prev), Verdict::Worse);
    // Bytes and packets +5 %: fewer events is better (50 -> 40: 20 %).
    assert_eq!(compare(&s(1050, 105, 40), &prev), Verdict::Better);
    assert_eq!(compare(&s(1050, 105, 60), &prev), Verdict::Worse);
    assert_eq!(compare(&s(1050, 105, 52), &prev), Verdict::Same);
    // Zero references: any bytes (then packets) beat none; no events rate: same.
    assert_eq!(compare(&s(1, 0, 0), &Stats::default()), Verdict::Better);
    assert_eq!(compare(&s(0, 9, 9), &Stats::default()), Verdict::Same);
    assert_eq!(compare(&s(1000, 5, 0), &s(1000, 0, 50)), Verdict::Better);
    assert_eq!(compare(&s(1000, 100, 9), &s(1000, 100, 0)), Verdict::Same);
}

#[test]
fn rising_rate_steps_right_to_the_edge_and_parks() {
    // Each window +20 % bytes: 100 * 0.2 = 20 > 10, DIM_STATS_BETTER.
    // W1: prev_stats zero -> BETTER; net_dim_exit_parking from index 0 goes right
    //     and steps to 1. W2..W4: BETTER, dim_on_top false (no steps left), step
    //     to 2, 3, 4. W5: BETTER, net_dim_step at index 4 is DIM_ON_EDGE ->
    //     dim_park_on_top; the index did not move, so no work item.
    let mut d = Drive::new(&rx_cqe());
    let got = d.run(&[1_000_000, 1_200_000, 1_440_000, 1_728_000, 2_073_600]);
    let t = &RX_CQE;
    assert_eq!(
        got,
        vec![Some(t[1]), Some(t[2]), Some(t[3]), Some(t[4]), None]
    );
    assert_eq!(d.dim.profile(), 4);
    assert_eq!(d.dim.programmed_profile(), 4);
    assert_eq!(d.dim.tune_state(), TuneState::ParkingOnTop);
    let c = d.dim.counters();
    assert_eq!(
        (c.measurements, c.profile_changes, c.parks_on_top),
        (5, 4, 1)
    );
}

#[test]
fn falling_rate_after_going_right_turns_left() {
    // W1: BETTER (prev zero), 0 -> 1. W2: +20 %, BETTER, 1 -> 2 (steps_right 2).
    // W3: 1,200,000 -> 960,000 bytes/ms, 100 * 240,000 / 1,200,000 = 20: WORSE ->
    //     dim_turn to GOING_LEFT (steps_left = 0); dim_on_top needs steps_left == 1,
    //     so step left, 2 -> 1.
    // W4: 960,000 -> 768,000, WORSE again -> turn to GOING_RIGHT (steps_right = 0);
    //     dim_on_top needs steps_left > 1 (it is 1): step right, 1 -> 2.
    let mut d = Drive::new(&rx_cqe());
    let t = &RX_CQE;
    assert_eq!(d.run(&[1_000_000, 1_200_000]), vec![Some(t[1]), Some(t[2])]);
    assert_eq!(d.window(1000, 960_000), Some(t[1]));
    assert_eq!(d.dim.tune_state(), TuneState::GoingLeft);
    assert_eq!((d.dim.steps_right, d.dim.steps_left), (2, 1));
    assert_eq!(d.window(1000, 768_000), Some(t[2]));
    assert_eq!(d.dim.tune_state(), TuneState::GoingRight);
    assert_eq!((d.dim.steps_right, d.dim.steps_left), (1, 1));
}

#[test]
fn top_found_then_flat_rate_stays_parked() {
    // W1, W2: 0 -> 1 -> 2 as above. W3: -25 % (100 * 300,000 / 1,200,000 = 25),
    // WORSE: turn left, step 2 -> 1 (steps_right 2, steps_left 1).
    // W4: 900,000 -> 1,200,000 (33 %), BETTER: no turn; dim_on_top for GOING_LEFT is
    // steps_right > 1 && steps_left == 1 -> dim_park_on_top at 1, no move.
    // W5..W8: the same rate: DIM_STATS_SAME, stays parked, nothing scheduled.
    let mut d = Drive::new(&rx_cqe());
    let t = &RX_CQE;
    let got = d.run(&[1_000_000, 1_200_000, 900_000, 1_200_000]);
    assert_eq!(got, vec![Some(t[1]), Some(t[2]), Some(t[1]), None]);
    assert_eq!(d.dim.tune_state(), TuneState::ParkingOnTop);
    assert_eq!(d.run(&[1_200_000; 4]), vec![None; 4]);
    assert_eq!(d.dim.tune_state(), TuneState::ParkingOnTop);
    assert_eq!(d.dim.profile(), 1);
    let c = d.dim.counters();
    assert_eq!(
        (c.measurements, c.profile_changes, c.parks_on_top),
        (8, 3, 1)
    );
}

#[test]
fn a_single_step_back_is_not_a_top() {
    // dim_on_top needs more than one step in the direction it came from. Each window
    // is +-20 % bytes (significant).
    // W1..W3: BETTER, 0 -> 1 -> 2 -> 3 (steps_right 3).
    // W4: WORSE: turn left (steps_left 0), not on top (steps_left != 1): 3 -> 2.
    // W5: WORSE: turn right (steps_right 0), steps_left 1 is not > 1: 2 -> 3.
    // W6: WORSE: turn left (steps_left 0), steps_right 1: 3 -> 2.
    // W7: BETTER: no turn; going left, steps_right 1 is not > 1, so not on top
    //     although steps_left == 1: 2 -> 1. W8: BETTER, 1 -> 0.
    // W9: BETTER, net_dim_step at 0 is DIM_ON_EDGE -> dim_park_on_top.
    let mut d = Drive::new(&rx_cqe());
    let t = &RX_CQE;
    let got = d.run(&[
        1_000_000, 1_200_000, 1_440_000, 1_152_000, 921_600, 737_280, 884_736, 1_061_683, 1_274_020,
    ]);
    let want = [1, 2, 3, 2, 3, 2, 1, 0].map(|i| Some(t[i]));
    assert_eq!(got[..8], want);
    assert_eq!(got[8], None);
    assert_eq!(d.dim.tune_state(), TuneState::ParkingOnTop);
    assert_eq!((d.dim.profile(), d.dim.tired), (0, 0));
}

#[test]
fn parked_on_top_keeps_the_rates_it_parked_with() {
    // Parked at index 1 with prev_stats = (bpms 1,200,000, ppms 1,200, epms 64)
    // (the previous test's W1..W4). net_dim_decision does not update prev_stats
    // while it stays parked on top, so a drift of +5 % per window is measured
    // against 1,200,000: W5 1,260,000 (5 %), W6 1,323,000 (100 * 123,000 /
    // 1,200,000 = 10.25 -> 10, not > 10; packets 1,323 vs 1,200 also 10): SAME.
    // W7 1,389,150 (15 %): BETTER -> net_dim_exit_parking from 1 goes left to 0.
    let mut d = Drive::new(&rx_cqe());
    d.run(&[1_000_000, 1_200_000, 900_000, 1_200_000]);
    assert_eq!(d.dim.tune_state(), TuneState::ParkingOnTop);
    assert_eq!(d.run(&[1_260_000, 1_323_000]), vec![None, None]);
    assert_eq!(d.window(1000, 1_389_150), Some(RX_CQE[0]));
    assert_eq!(d.dim.tune_state(), TuneState::GoingLeft);
    assert_eq!(d.dim.profile(), 0);
}

#[test]
fn flat_rate_zigzags_until_tired_then_parks_ten_decisions() {
    // A constant rate: W1 is BETTER (prev zero), 0 -> 1, tired 1. From W2 on every
    // window is SAME, so every decision turns (dim_turn zeroes the new direction's
    // steps, the other stays 1, so dim_on_top is never true) and steps: W2 -> 0,
    // W3 -> 1, ... Wk: index k mod 2, tired k. W11: turn, net_dim_step finds
    // tired == 2 * NET_DIM_PARAMS_NUM_PROFILES = 10 -> DIM_TOO_TIRED,
    // dim_park_tired at index 0. W12..W20: tired 9 .. 1, parked. W21: tired 0 ->
    // net_dim_exit_parking from 0 goes right, 0 -> 1.
    let mut d = Drive::new(&rx_cqe());
    let t = &RX_CQE;
    let got = d.run(&[1_000_000; 21]);
    let mut want: Vec<Option<Moderation>> = (1..=10).map(|k| Some(t[k % 2])).collect();
    want.extend([None; 10]);
    want.push(Some(t[1]));
    assert_eq!(got, want);
    assert_eq!(d.dim.tune_state(), TuneState::GoingRight);
    let c = d.dim.counters();
    assert_eq!(
        (c.profile_changes, c.parks_tired, c.parks_on_top),
        (11, 1, 0)
    );
    // Between W11 and W20 it was parked tired: rerun to W15 and look.
    let mut d = Drive::new(&rx_cqe());
    d.run(&[1_000_000; 15]);
    assert_eq!(d.dim.tune_state(), TuneState::ParkingTired);
    assert_eq!(d.dim.tired, 6); // 10 at W11, then 9, 8, 7, 6 at W12..W15
}

#[test]
fn fewer_than_64_events_or_less_than_a_microsecond_take_no_decision() {
    // net_dim: BIT_GAP(16, events) < DIM_NEVENTS -> break, start sample kept.
    let mut dim = Dim::new(&rx_cqe());
    dim.sample(SimTime::ZERO, 0, 0, 0);
    assert_eq!(dim.sample(SimTime(500 * US), 63, 10, 10_000), None);
    // 64 events but 999 ns: delta_us 0, dim_calc_stats false -> break, start kept.
    let mut z = Dim::new(&rx_cqe());
    z.sample(SimTime::ZERO, 0, 0, 0);
    assert_eq!(z.sample(SimTime(999_000), 64, 10, 10_000), None);
    assert_eq!(z.counters().zero_time, 1);
    assert_eq!(z.counters().measurements, 0);
    // Both decide later against the original start sample (time 0): 1,000 µs,
    // 20,000 bytes -> bpms 20,000 > 0, BETTER, 0 -> 1.
    for d in [&mut dim, &mut z] {
        assert_eq!(
            d.sample(SimTime(1000 * US), 64, 20, 20_000),
            Some(RX_CQE[1])
        );
        assert_eq!(d.prev_stats.bpms, 20_000);
    }
}

#[test]
fn calls_wait_for_the_work_item() {
    // net_dim in DIM_APPLY_NEW_PROFILE does nothing; the work item
    // (mlx5e_complete_dim_work) sets DIM_START_MEASURE, and the next call only takes
    // the start sample.
    let mut dim = Dim::new(&rx_cqe());
    dim.sample(SimTime::ZERO, 0, 0, 0);
    let t1 = SimTime(1000 * US);
    assert_eq!(dim.sample(t1, 64, 1, 1000), Some(RX_CQE[1]));
    assert_eq!(dim.state(), MeasureState::ApplyNewProfile);
    for k in 1..=3u64 {
        assert_eq!(
            dim.sample(t1 + SimTime(k * US), 64 + 64 * k, 9, 9_000),
            None
        );
    }
    assert_eq!(dim.counters().ignored_while_applying, 3);
    assert_eq!(dim.counters().measurements, 1);
    let t2 = SimTime(1500 * US);
    dim.profile_applied(t2);
    assert_eq!(dim.state(), MeasureState::StartMeasure);
    assert_eq!(dim.sample(t2, 300, 10, 10_000), None);
    assert_eq!(dim.state(), MeasureState::MeasureInProgress);
    assert_eq!(dim.start_sample, Sample::at(t2, 300, 10, 10_000));
    // A second profile_applied without a pending profile changes nothing.
    dim.profile_applied(SimTime(1600 * US));
    assert_eq!(dim.state(), MeasureState::MeasureInProgress);
}

#[test]
fn time_in_profiles_follows_the_programmed_profile() {
    // initial_profile 1 (NET_DIM_DEF_PROFILE_CQE) until the first work item; the
    // second change (to 2) is applied 500 µs after its decision at 2 ms.
    let mut dim = Dim::new(&rx_cqe());
    assert_eq!(dim.programmed_profile(), 1);
    assert_eq!(dim.profile(), 0);
    dim.sample(SimTime::ZERO, 0, 0, 0);
    let ms = |x: u64| SimTime(x * 1000 * US);
    assert_eq!(dim.sample(ms(1), 64, 1000, 1_000_000), Some(RX_CQE[1]));
    dim.profile_applied(ms(1));
    dim.sample(ms(1), 64, 1000, 1_000_000);
    assert_eq!(dim.sample(ms(2), 128, 2200, 2_200_000), Some(RX_CQE[2]));
    assert_eq!(dim.programmed_profile(), 1);
    dim.profile_applied(ms(2) + SimTime(500 * US));
    assert_eq!(dim.programmed_profile(), 2);
    let want = [
        SimTime::ZERO,
        SimTime(2500 * US),
        SimTime(500 * US),
        SimTime::ZERO,
        SimTime::ZERO,
    ];
    assert_eq!(dim.time_in_profiles(ms(3)), want);
}

#[test]
fn config_defaults_tables_and_checks() {
    let cfg: DimConfig = serde_json::from_str("{}").expect("defaults");
    assert_eq!(cfg, DimConfig::default());
    assert_eq!(cfg.mode, CqPeriodMode::Cqe);
    assert_eq!(cfg.direction, Direction::Rx);
    assert_eq!(cfg.initial_profile, 1);
    let tx: DimConfig =
        serde_json::from_str(r#"{"mode": "eqe", "direction": "tx"}"#).expect("tx eqe");
    assert_eq!(
        Dim::new(&tx).table()[1],
        Moderation {
            usecs: 8,
            pkts: 128
        }
    );
    assert_eq!(
        Dim::new(&tx).table()[4],
        Moderation {
            usecs: 128,
            pkts: 128
        }
    );
    assert!(serde_json::from_str::<DimConfig>(r#"{"nevents": 64}"#).is_err());
    let mut p = Problems::new();
    DimConfig {
        initial_profile: 5,
        ..DimConfig::default()
    }
    .validate(&mut p);
    assert_eq!(p.list.len(), 1);
    assert_eq!(p.list[0].path, "initial_profile");
    let mut p = Problems::new();
    DimConfig::default().validate(&mut p);
    assert!(p.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Whatever the samples, the index stays in 0..=4 (net_dim_step stops at the
    /// edges), `tired` never passes 10, a returned moderation is the table's entry
    /// for the index, and the work item sometimes runs late.
    #[test]
    fn index_stays_in_the_table(
        windows in prop::collection::vec(
            (0u64..3_000, 0u64..200, 0u64..20_000_000, any::<bool>()),
            1..300,
        ),
    ) {
        let mut dim = Dim::new(&rx_cqe());
        let (mut now, mut ev, mut pk, mut by) = (SimTime::ZERO, 0u64, 0u64, 0u64);
        for (dur_us, nev, bytes, late) in windows {
            now += SimTime(dur_us * US);
            ev += nev;
            pk += bytes / 1500;
            by += bytes;
            if let Some(m) = dim.sample(now, ev, pk, by) {
                prop_assert_eq!(m, RX_CQE[dim.profile()]);
                if !late {
                    dim.profile_applied(now);
                }
            } else if dim.state() == MeasureState::ApplyNewProfile && late {
                dim.profile_applied(now);
            }
            prop_assert!(dim.profile() < NUM_PROFILES);
            prop_assert!(dim.programmed_profile() < NUM_PROFILES);
            prop_assert!(dim.tired <= TIRED_STEPS);
        }
    }
}
