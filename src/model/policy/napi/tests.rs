use super::*;
use crate::model::policy::env::mock::{Script, Signal, ns, pkt};

fn napi_with(budget: u32, params: &[NapiParams], cores: usize) -> Napi {
    let cfg = NapiConfig {
        netdev_budget: budget,
        netdev_max_backlog: 3,
        ..NapiConfig::default()
    };
    let p: Vec<Option<&NapiParams>> = params.iter().map(Some).collect();
    Napi::new(&cfg, &p, cores, 1000.0, SimTime::from_ns_f64(1e6))
}

fn napi(budget: u32, weight: u32, nics: usize) -> Napi {
    let p = NapiParams {
        weight,
        ..NapiParams::default()
    };
    napi_with(budget, &vec![p; nics], 1)
}

/// Run one softirq from the dispatcher's start to its end: the steps' lengths.
fn softirq(n: &mut Napi, env: &mut Script) -> Vec<SimTime> {
    assert!(n.softirq_begin(env));
    let mut runs = Vec::new();
    while let Step::Run(d) = n.softirq_step(env) {
        runs.push(d);
    }
    runs
}

/// A NIC whose transmit completions interrupt: each poll first reclaims up to
/// `tx_work_limit` completions (the script's 200 ns each) and wakes the queue, and
/// a poll that leaves some is not done, whatever its receive work: the device stays
/// scheduled until a poll reclaims the rest, then is re-armed. Its channel's
/// counters count the interrupt's event, each poll, the re-arm and the completions,
/// under its port's name and channel number.
#[test]
fn a_poll_reclaims_transmit_completions_first_and_is_not_done_while_some_are_left() {
    let p = NapiParams {
        tx_work_limit: 4,
        ..NapiParams::default()
    };
    let mut n = napi_with(300, &[p], 1).with_channels(&[crate::model::policy::QueueOf {
        port: "eth1".into(),
        index: 2,
        tx_completion: true,
    }]);
    let mut env = Script::new(&[1]);
    env.tx_completions[0] = 6;
    RxPolicy::schedule(&mut n, 0, &mut env);
    env.take_log();
    // The poll call and 4 completions, then the one frame (rx + forward); the poll
    // is not done, so the device goes to the tail of the (live) list, and its next
    // poll reclaims the last 2, finds the ring empty and re-arms.
    assert_eq!(
        softirq(&mut n, &mut env),
        vec![ns(500 + 800), ns(6_000), ns(500 + 400)]
    );
    assert_eq!(
        env.take_log(),
        vec![
            Signal::IfStart(0),
            Signal::Forward(0),
            Signal::IfStart(0),
            Signal::Unmask(0)
        ]
    );
    assert_eq!(env.tx_completions[0], 0);
    let mut c = BTreeMap::new();
    RxPolicy::counters(&n, &[], &mut c);
    let got: Vec<(&str, f64)> = ["eth1.ch2_poll", "eth1.ch2_events", "eth1.ch2_arm", "eth1.tx2_cqes"]
        .iter()
        .map(|k| (*k, c[*k]))
        .collect();
    assert_eq!(
        got,
        [("eth1.ch2_poll", 2.0), ("eth1.ch2_events", 1.0), ("eth1.ch2_arm", 1.0), ("eth1.tx2_cqes", 6.0)]
    );
    // A NIC whose completions do not interrupt has no channel counters.
    let mut plain = napi(300, 64, 1).with_channels(&[crate::model::policy::QueueOf::default()]);
    let mut c = BTreeMap::new();
    RxPolicy::schedule(&mut plain, 0, &mut Script::new(&[0]));
    RxPolicy::counters(&plain, &[], &mut c);
    assert!(!c.keys().any(|k| k.contains("_poll")), "{c:?}");
}

/// The verdicts of an XDP program, on a poll of three frames each (rx 1 us,
/// forward 5 us in the script; the program 0.25 us, its receive without an skb
/// 0.1 us): drop, redirect, tx and xsk (into an AF_XDP socket's RX ring) cost the
/// program's receive and run only and never
/// reach the protocol path (no softnet `processed`), pass costs the program on top
/// of the usual path; each verdict is counted.
#[test]
fn an_xdp_program_drops_redirects_sends_back_or_passes_each_frame_before_the_stack() {
    let xdp = |action: &str| -> NapiParams {
        let x: XdpParams = serde_json::from_value(match action {
            "pass" => serde_json::json!({ "action": "pass", "program": 250 }),
            a => serde_json::json!({ "action": a, "rx": 100, "program": 250 }),
        })
        .expect("xdp");
        let mut problems = Problems::default();
        x.validate(&mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        NapiParams {
            xdp: Some(x),
            ..NapiParams::default()
        }
    };
    for (action, burst, signal) in [
        ("drop", ns(350), Signal::XdpDrop as fn(u64) -> Signal),
        ("redirect", ns(350), Signal::XdpRedirect),
        ("tx", ns(350), Signal::XdpTx),
        ("xsk", ns(350), Signal::Xsk),
        ("pass", ns(6_250), Signal::Forward),
    ] {
        let mut env = Script::new(&[3]);
        let mut n = napi_with(300, &[xdp(action)], 1);
        n.schedule(0, &mut env);
        env.take_log();
        assert_eq!(
            softirq(&mut n, &mut env),
            vec![ns(500), burst, burst, burst],
            "{action}"
        );
        assert_eq!(
            env.take_log(),
            vec![signal(0), signal(1), signal(2), Signal::Unmask(0)],
            "{action}"
        );
        let x = n.devs[0].xdp.as_ref().expect("xdp");
        assert_eq!((x.drop, x.redirect, x.tx, x.pass), match action {
            "drop" => (3, 0, 0, 0),
            // XDP_REDIRECT into an XSKMAP is a redirect too.
            "redirect" | "xsk" => (0, 3, 0, 0),
            "tx" => (0, 0, 3, 0),
            _ => (0, 0, 0, 3),
        });
        assert_eq!(n.cores[0].processed, if action == "pass" { 3 } else { 0 });
    }
    // The receive cost belongs to drop and redirect only.
    let mut problems = Problems::default();
    let x: XdpParams =
        serde_json::from_value(serde_json::json!({ "action": "drop", "program": 0 }))
            .expect("xdp");
    x.validate(&mut problems);
    let y: XdpParams = serde_json::from_value(
        serde_json::json!({ "action": "pass", "rx": 10, "program": 0 }),
    )
    .expect("xdp");
    y.validate(&mut problems);
    assert_eq!(problems.list.len(), 2, "{problems:?}");
}

#[test]
fn a_poll_under_its_weight_completes_and_unmasks_the_device() {
    let mut env = Script::new(&[2]);
    let mut n = napi(300, 64, 1);
    n.schedule(0, &mut env);
    assert_eq!(env.take_log(), vec![Signal::Raise(NET_RX)]);
    // The poll call (0.5 us), two frames each received and forwarded (1 + 5 us).
    assert_eq!(
        softirq(&mut n, &mut env),
        vec![ns(500), ns(6_000), ns(6_000)]
    );
    assert_eq!(
        env.take_log(),
        vec![Signal::Forward(0), Signal::Forward(1), Signal::Unmask(0)]
    );
    assert_eq!((n.polls, n.complete), (1, 1));
}

#[test]
fn a_device_that_uses_its_weight_goes_to_the_tail_and_the_budget_squeezes() {
    // Weight 2, budget 3: NIC 0 (3 frames) and NIC 1 (2 frames), Linux 2.6-3.19's
    // live list.
    let mut env = Script::new(&[3, 2]);
    let mut n = napi(3, 2, 2);
    n.schedule(0, &mut env);
    n.schedule(1, &mut env);
    env.take_log();
    let runs = softirq(&mut n, &mut env);
    // NIC 0: call + 2 frames (weight used: to the tail, budget 1 left); NIC 1: call
    // + 2 frames (a poll takes its whole weight: the budget goes to -1; weight used:
    // to the tail). The budget is spent with both still on the list: time_squeeze,
    // NET_RX again, and __do_softirq restarts.
    assert_eq!(runs.len(), 6);
    assert_eq!(
        env.take_log(),
        vec![
            Signal::Forward(0),
            Signal::Forward(1),
            Signal::Forward(100),
            Signal::Forward(101),
            Signal::Raise(NET_RX),
            Signal::Raise(NET_RX),
        ]
    );
    assert_eq!(n.cores[0].time_squeeze, 1);
    assert_eq!(n.cores[0].poll_list, [0, 1]);
    assert_eq!(n.held(), 0);
}

#[test]
fn a_spliced_run_polls_each_device_once_and_leaves_the_rest_to_the_next() {
    // Linux 4.0 on: weight 2, budget 300; NIC 0 has 5 frames, NIC 1 one. The run
    // polls NIC 0 once (2 frames, weight used: repoll) and NIC 1 once (completes),
    // then ends with NIC 0 back on the list and NET_RX raised, though the budget
    // is far from spent (no time_squeeze). The next run takes 2 more, the third
    // the last one and completes NIC 0.
    let mut env = Script::new(&[5, 1]);
    let p = NapiParams {
        weight: 2,
        ..NapiParams::default()
    };
    let cfg = NapiConfig {
        net_rx_action: RxAction::Spliced,
        ..NapiConfig::default()
    };
    let mut n = Napi::new(&cfg, &[Some(&p), Some(&p)], 1, 1000.0, ns(1_000_000));
    n.schedule(0, &mut env);
    n.schedule(1, &mut env);
    env.take_log();
    softirq(&mut n, &mut env);
    assert_eq!(
        env.take_log(),
        vec![
            Signal::Forward(0),
            Signal::Forward(1),
            Signal::Forward(100),
            Signal::Unmask(1),
            // The run's end re-raises NET_RX; __do_softirq restarts.
            Signal::Raise(NET_RX),
            Signal::Raise(NET_RX),
        ]
    );
    assert_eq!(n.cores[0].poll_list, [0]);
    assert_eq!(n.cores[0].time_squeeze, 0);
    softirq(&mut n, &mut env);
    softirq(&mut n, &mut env);
    assert_eq!(
        env.take_log(),
        vec![
            Signal::Forward(2),
            Signal::Forward(3),
            Signal::Raise(NET_RX),
            Signal::Raise(NET_RX),
            Signal::Forward(4),
            Signal::Unmask(0),
        ]
    );
    assert!(n.cores[0].poll_list.is_empty());
    // A device scheduled during a run waits for the next one.
    env.rings[1].push_back(pkt(7));
    env.rings[0].push_back(pkt(8));
    n.schedule(0, &mut env);
    env.take_log();
    assert!(n.softirq_begin(&mut env));
    assert!(matches!(n.softirq_step(&mut env), Step::Run(_))); // NIC 0's poll call
    n.schedule(1, &mut env);
    while let Step::Run(_) = n.softirq_step(&mut env) {}
    assert_eq!(
        env.take_log(),
        vec![
            Signal::Raise(NET_RX),
            Signal::Forward(8),
            Signal::Unmask(0),
            Signal::Raise(NET_RX),
            Signal::Raise(NET_RX),
        ]
    );
    assert_eq!(n.cores[0].poll_list, [1]);
}

#[test]
fn after_max_restart_restarts_the_work_goes_to_ksoftirqd() {
    // Budget 1, weight 1 and a long ring: every run ends squeezed.
    let mut env = Script::new(&[40]);
    let mut n = napi(1, 1, 1);
    n.schedule(0, &mut env);
    for _ in 0..10 {
        softirq(&mut n, &mut env);
    }
    let log = env.take_log();
    assert_eq!(log.last(), Some(&Signal::Wake(n.ksoftirqd(0))));
    assert_eq!(n.ksoftirqd_wakeups, 1);
    // While ksoftirqd is awake, the dispatcher leaves NET_RX to it.
    assert!(!n.softirq_begin(&mut env));
    // ksoftirqd polls until nothing is pending, then sleeps.
    let mut steps = 0;
    let mut first = true;
    while let Step::Run(_) = n.ksoftirqd_step(first, &mut env) {
        first = false;
        steps += 1;
    }
    // 30 frames left, each a poll call and a frame (budget 1 per net_rx_action);
    // the last poll used its weight too, so one more poll call finds the ring empty.
    assert_eq!(steps, 61);
    assert!(env.rings[0].is_empty() && !n.cores[0].ksoftirqd_awake);
}

#[test]
fn each_core_polls_the_devices_its_interrupts_scheduled() {
    // NIC 0's interrupt on core 0, NIC 1's on core 1: separate poll lists, NET_RX
    // raised on each, each core's ksoftirqd its own task.
    let mut env = Script::new(&[1, 1]);
    let p = NapiParams::default();
    let mut n = napi_with(300, &[p.clone(), p], 2);
    n.schedule(0, &mut env);
    env.core = 1;
    n.schedule(1, &mut env);
    assert_eq!(
        env.take_log(),
        vec![Signal::Raise(NET_RX), Signal::Raise(NET_RX)]
    );
    assert_eq!(n.cores[0].poll_list, [0]);
    assert_eq!(n.cores[1].poll_list, [1]);
    // Core 1's softirq polls NIC 1 only.
    softirq(&mut n, &mut env);
    assert_eq!(env.take_log(), vec![Signal::Forward(100), Signal::Unmask(1)]);
    assert_eq!(n.cores[0].poll_list, [0]);
    assert_ne!(n.ksoftirqd(0), n.ksoftirqd(1));
    assert_eq!(
        Napi::task_name(
            match n.ksoftirqd(1) {
                Task::Policy(t) => t,
                _ => unreachable!(),
            },
            &[]
        ),
        "ksoftirqd/1"
    );
}

#[test]
fn rps_steers_each_frame_to_the_backlog_of_the_core_its_hash_picks() {
    // One NIC polled on core 0, rps_cpus [1, 2]; hash 0x8000_0000 picks index
    // reciprocal_scale(2^31, 2) = 1: core 2.
    let mut env = Script::new(&[2]);
    env.hash = 0x8000_0000;
    let p = NapiParams {
        rps_cpus: vec![1, 2],
        ..NapiParams::default()
    };
    let mut n = napi_with(300, &[p], 3);
    n.schedule(0, &mut env);
    env.take_log();
    // Core 0: the poll call, then each frame's driver work only (1 us; steering
    // costs 0 by default), no protocol work.
    assert_eq!(
        softirq(&mut n, &mut env),
        vec![ns(500), ns(1_000), ns(1_000)]
    );
    // The first frame scheduled core 2's backlog (NET_RX raised there).
    assert_eq!(
        env.take_log(),
        vec![Signal::RaiseOn(2, NET_RX), Signal::Unmask(0)]
    );
    assert_eq!(n.cores[2].backlog.len(), 2);
    assert_eq!((n.rps_steered, n.cores[2].received_rps), (2, 1));
    assert_eq!(n.held(), 2);
    // Core 2 polls its backlog: the protocol path (5 us) for each frame.
    env.core = 2;
    assert_eq!(softirq(&mut n, &mut env), vec![ns(5_000), ns(5_000)]);
    assert_eq!(env.take_log(), vec![Signal::Forward(0), Signal::Forward(1)]);
    assert_eq!(n.held(), 0);
    assert!(!n.devs[1 + 2].scheduled);
}

#[test]
fn a_full_backlog_drops_the_frame() {
    // netdev_max_backlog 3 (the test's): the fourth and fifth frames are dropped.
    let mut env = Script::new(&[5]);
    let p = NapiParams {
        rps_cpus: vec![1],
        ..NapiParams::default()
    };
    let mut n = napi_with(300, &[p], 2);
    n.schedule(0, &mut env);
    softirq(&mut n, &mut env);
    let log = env.take_log();
    assert_eq!(
        log.iter()
            .filter(|s| matches!(s, Signal::BacklogDrop(_)))
            .collect::<Vec<_>>(),
        [&Signal::BacklogDrop(3), &Signal::BacklogDrop(4)]
    );
    assert_eq!((n.cores[1].backlog.len(), n.cores[1].dropped), (3, 2));
}

/// The socket options of a busy loop: SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET.
fn opts(prefer: bool, budget: u32) -> SocketBusyPoll {
    SocketBusyPoll {
        prefer_busy_poll: prefer,
        budget,
        epoll: false,
    }
}

/// A NIC with napi_defer_hard_irqs 2 and gro_flush_timeout 200 us, weight `weight`.
fn deferring(weight: u32) -> Napi {
    let p = NapiParams {
        weight,
        defer_hard_irqs: 2,
        gro_flush_timeout_ns: 200_000.0,
        ..NapiParams::default()
    };
    napi_with(300, &[p], 1)
}

/// Run a busy loop from its start until it is over: the steps' lengths.
fn busy_loop(n: &mut Napi, env: &mut Script, o: SocketBusyPoll, ready_after: usize) -> Vec<SimTime> {
    let deadline = env.now + ns(20_000);
    let mut runs = Vec::new();
    let mut start = true;
    while let Step::Run(d) = n.busy_step(0, start, deadline, o, env) {
        start = false;
        runs.push(d);
        if runs.len() == ready_after {
            env.socket_ready = true;
        }
    }
    runs
}

#[test]
fn a_device_preferring_busy_polling_leaves_the_softirq_at_a_full_weight_poll() {
    // Weight 2, 5 frames; the softirq has the device. Linux 5.11 __napi_poll: a
    // poll that used its whole weight on a device marked
    // NAPI_STATE_PREFER_BUSY_POLL calls napi_complete_done and returns instead of
    // putting it back on the list; with defer_hard_irqs and gro_flush_timeout set,
    // that arms the hrtimer and leaves the interrupt masked.
    let mut env = Script::new(&[5]);
    let mut n = deferring(2);
    n.schedule(0, &mut env);
    env.take_log();
    // A busy loop with SO_PREFER_BUSY_POLL finds the device scheduled: it spins
    // (100 ns rounds) and marks it; then its socket is ready and it ends, owning
    // nothing.
    env.socket_ready = false;
    let runs = busy_loop(&mut n, &mut env, opts(true, 8), 1);
    assert_eq!(runs, vec![ns(100)]);
    assert!(n.devs[0].prefer_busy_poll && n.devs[0].scheduled);
    env.socket_ready = false;
    // The softirq polls 2 frames (its weight) and lets the device go: no repoll,
    // no unmask, the timer armed.
    assert_eq!(
        softirq(&mut n, &mut env),
        vec![ns(500), ns(6_000), ns(6_000)]
    );
    assert_eq!(
        env.take_log(),
        vec![Signal::Forward(0), Signal::Forward(1), Signal::Alarm(ns(200_000), 0)]
    );
    assert!(!n.devs[0].scheduled && !n.devs[0].prefer_busy_poll);
    assert_eq!((n.polls, n.prefer_yields, n.deferred_irqs), (1, 1, 1));
    // Now the busy loop takes the device itself (the 3 frames left).
    let runs = busy_loop(&mut n, &mut env, opts(true, 8), 2);
    assert_eq!(runs[0], ns(600), "a round (100 ns) and the poll call (500 ns)");
    assert_eq!(n.busy_packets, 3);
    // Without the mark the same softirq keeps the device: it goes to the tail of
    // the live list and is polled again in the same run.
    let mut env = Script::new(&[5]);
    let mut n = deferring(2);
    n.schedule(0, &mut env);
    env.take_log();
    assert_eq!(softirq(&mut n, &mut env).len(), 3 + 3 + 2);
    assert_eq!(n.prefer_yields, 0);
}

#[test]
fn busy_poll_stop_with_deferral_keeps_the_interrupt_masked_and_arms_the_timer() {
    // The device is idle; the busy loop (budget 2) takes it, and its socket is
    // ready after the first round (the poll call and two frames).
    let run = |prefer: bool, defer: bool| {
        let mut env = Script::new(&[6]);
        let mut n = if defer { deferring(64) } else { napi(300, 64, 1) };
        let runs = busy_loop(&mut n, &mut env, opts(prefer, 2), 3);
        (runs, env.take_log(), n)
    };
    // busy_poll_stop with SO_PREFER_BUSY_POLL, defer_hard_irqs and
    // gro_flush_timeout: the hrtimer is armed before the last poll, which uses its
    // whole budget (2 of 4 frames left): skip_schedule, the device is left idle,
    // its interrupt masked, no softirq raised.
    let (runs, log, n) = run(true, true);
    assert_eq!(
        runs,
        vec![ns(600), ns(6_000), ns(6_000), ns(500), ns(6_000), ns(6_000)]
    );
    assert_eq!(
        log,
        vec![
            Signal::Forward(0),
            Signal::Forward(1),
            Signal::Alarm(ns(200_000), 0),
            Signal::Forward(2),
            Signal::Forward(3),
        ]
    );
    assert!(!n.devs[0].scheduled);
    assert_eq!(n.devs[0].defer_count, 2);
    // Without SO_PREFER_BUSY_POLL (or without the deferral) the full last poll
    // hands the device to the softirq.
    for (prefer, defer) in [(false, true), (true, false)] {
        let (_, log, n) = run(prefer, defer);
        assert_eq!(log.last(), Some(&Signal::Raise(NET_RX)), "{prefer} {defer}");
        assert!(n.devs[0].scheduled);
        assert!(!log.iter().any(|s| matches!(s, Signal::Alarm(..))));
    }
    // A last poll that empties the ring completes the device: with the deferral
    // it stays masked (the count reset by a poll with work), the timer re-armed.
    let mut env = Script::new(&[3]);
    let mut n = deferring(64);
    busy_loop(&mut n, &mut env, opts(true, 2), 3);
    assert_eq!(
        env.take_log(),
        vec![
            Signal::Forward(0),
            Signal::Forward(1),
            Signal::Alarm(ns(200_000), 0),
            Signal::Forward(2),
            Signal::Alarm(ns(200_000), 0),
        ]
    );
    assert!(!n.devs[0].scheduled);
}

#[test]
fn each_busy_poll_takes_at_most_its_budget() {
    // SO_BUSY_POLL_BUDGET 3 and the default 8 (BUSY_POLL_BUDGET): a round takes
    // that many frames of 20, then the next round begins with its 100 ns and the
    // poll call.
    for budget in [3, 8] {
        let mut env = Script::new(&[20]);
        let mut n = napi(300, 64, 1);
        let runs = busy_loop(&mut n, &mut env, opts(false, budget), 2 * budget as usize + 2);
        let rounds: Vec<usize> = runs
            .iter()
            .enumerate()
            .filter(|(_, d)| **d == ns(600))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(rounds, vec![0, budget as usize + 1], "budget {budget}");
        assert_eq!(n.busy_polls, 2);
    }
}

#[test]
fn epoll_with_irq_suspend_timeout_suspends_on_events_and_resumes_without() {
    // irq_suspend_timeout 20 ms besides the deferral (Linux 6.13). An epoll busy
    // loop with SO_PREFER_BUSY_POLL that ends with events: busy_poll_stop arms the
    // timer for gro_flush_timeout, then napi_suspend_irqs restarts it for 20 ms.
    let p = NapiParams {
        defer_hard_irqs: 2,
        gro_flush_timeout_ns: 200_000.0,
        irq_suspend_timeout_ns: 20e6,
        ..NapiParams::default()
    };
    let epoll = SocketBusyPoll {
        epoll: true,
        ..opts(true, 8)
    };
    let mut env = Script::new(&[2]);
    let mut n = napi_with(300, std::slice::from_ref(&p), 1);
    busy_loop(&mut n, &mut env, epoll, 2);
    let log = env.take_log();
    assert_eq!(
        &log[log.len() - 2..],
        &[Signal::Alarm(ns(200_000), 0), Signal::Alarm(ns(20_000_000), 0)]
    );
    assert_eq!(n.devs[0].timer_at, Some(ns(20_000_000)));
    assert_eq!((n.irq_suspends, n.irq_resumes), (1, 0));
    // The gro_flush_timeout expiry is stale: the interrupt stays suspended.
    env.now = ns(200_000);
    n.watchdog(0, &mut env);
    assert!(!n.devs[0].scheduled);
    // A loop that times out without events: napi_resume_irqs schedules the device
    // (the softirq then polls it, and the deferral re-enables its interrupt).
    env.socket_ready = false;
    let deadline = env.now + ns(1_000);
    let mut start = true;
    while let Step::Run(d) = n.busy_step(0, start, deadline, epoll, &mut env) {
        start = false;
        env.now += d;
    }
    assert_eq!((n.irq_suspends, n.irq_resumes), (1, 1));
    assert!(n.devs[0].scheduled);
    assert_eq!(env.take_log().last(), Some(&Signal::Raise(NET_RX)));
    // recv()'s loop (not epoll), or no SO_PREFER_BUSY_POLL: neither.
    for o in [opts(true, 8), SocketBusyPoll { epoll: true, ..opts(false, 8) }] {
        let mut env = Script::new(&[2]);
        let mut n = napi_with(300, std::slice::from_ref(&p), 1);
        busy_loop(&mut n, &mut env, o, 2);
        assert_eq!((n.irq_suspends, n.irq_resumes), (0, 0));
    }
}

#[test]
fn a_zero_window_epoll_loop_polls_once_then_suspends_or_resumes() {
    // epoll_wait() with SO_PREFER_BUSY_POLL and busy_poll_usecs 0 (EPIOCSPARAMS):
    // ep_busy_loop_on holds for the preference alone, and napi_busy_loop polls
    // before it asks ep_busy_loop_end, so the loop is one poll. Frames found: the
    // events suspend the interrupt (irq_suspend_timeout 20 ms); none:
    // napi_resume_irqs schedules the device.
    let p = NapiParams {
        defer_hard_irqs: 100,
        gro_flush_timeout_ns: 20_000.0,
        irq_suspend_timeout_ns: 20e6,
        ..NapiParams::default()
    };
    let epoll = SocketBusyPoll {
        epoll: true,
        ..opts(true, 64)
    };
    for (frames, suspends, resumes) in [(3, 1, 0), (0, 0, 1)] {
        let mut env = Script::new(&[frames]);
        let mut n = napi_with(300, std::slice::from_ref(&p), 1);
        let deadline = env.now;
        let mut start = true;
        while let Step::Run(d) = n.busy_step(0, start, deadline, epoll, &mut env) {
            start = false;
            env.now += d;
            env.socket_ready = n.busy_packets > 0;
        }
        assert_eq!(n.busy_polls, 1, "{frames} frames");
        assert_eq!(n.busy_packets, frames);
        assert_eq!((n.irq_suspends, n.irq_resumes), (suspends, resumes));
        assert_eq!(n.devs[0].scheduled, frames == 0);
    }
}

#[test]
fn the_hrtimer_interrupt_is_charged_to_the_poll_it_schedules() {
    // watchdog_irq_ns 700: the poll napi_watchdog schedules pays the timer
    // interrupt's 700 ns on top of its call; the polls after it do not.
    let p = NapiParams {
        defer_hard_irqs: 2,
        gro_flush_timeout_ns: 200_000.0,
        watchdog_irq_ns: 700.0,
        ..NapiParams::default()
    };
    let mut env = Script::new(&[0]);
    let mut n = napi_with(300, &[p], 1);
    let plain = n.poll_begin(0, &mut env);
    n.arm_timer(0, &mut env);
    env.now = ns(200_000);
    n.watchdog(0, &mut env);
    assert!(n.devs[0].scheduled);
    assert_eq!(n.poll_begin(0, &mut env), plain + ns(700));
    assert_eq!(n.poll_begin(0, &mut env), plain);
    // By default (0) the timer's interrupt costs nothing, as before.
    let mut n = deferring(64);
    n.arm_timer(0, &mut env);
    env.now = ns(400_000);
    n.watchdog(0, &mut env);
    assert_eq!(n.poll_begin(0, &mut env), plain);
}

#[test]
fn a_restarted_hrtimer_fires_only_at_its_last_expiry() {
    // hrtimer_start restarts an armed timer: the first expiry is stale.
    let mut env = Script::new(&[0]);
    let mut n = deferring(64);
    n.arm_timer(0, &mut env);
    env.now = ns(50_000);
    n.arm_timer(0, &mut env);
    env.now = ns(200_000);
    n.watchdog(0, &mut env);
    assert_eq!((n.watchdog, n.devs[0].scheduled), (0, false));
    env.now = ns(250_000);
    n.devs[0].prefer_busy_poll = true;
    n.watchdog(0, &mut env);
    assert_eq!((n.watchdog, n.devs[0].scheduled), (1, true));
    // napi_watchdog clears NAPI_STATE_PREFER_BUSY_POLL.
    assert!(!n.devs[0].prefer_busy_poll);
}

#[test]
fn deferred_hard_irqs_poll_from_the_timer_until_that_many_polls_find_nothing() {
    // defer_hard_irqs 2, gro_flush_timeout 20 us.
    let mut env = Script::new(&[1]);
    let p = NapiParams {
        defer_hard_irqs: 2,
        gro_flush_timeout_ns: 20_000.0,
        ..NapiParams::default()
    };
    let mut n = napi_with(300, &[p], 1);
    n.schedule(0, &mut env);
    env.take_log();
    // A poll with work: the count is reset to 2 and decremented to 1; the timer is
    // armed and the interrupt stays masked.
    softirq(&mut n, &mut env);
    assert_eq!(
        env.take_log(),
        vec![Signal::Forward(0), Signal::Alarm(ns(20_000), 0)]
    );
    // The timer: an empty poll (count 1 -> 0), the timer again.
    env.now = n.devs[0].timer_at.expect("armed");
    n.watchdog(0, &mut env);
    softirq(&mut n, &mut env);
    assert_eq!(
        env.take_log(),
        vec![Signal::Raise(NET_RX), Signal::Alarm(ns(20_000), 0)]
    );
    // The second empty poll: the count is 0, the interrupt is re-enabled.
    env.now = n.devs[0].timer_at.expect("armed");
    n.watchdog(0, &mut env);
    softirq(&mut n, &mut env);
    assert_eq!(env.take_log(), vec![Signal::Raise(NET_RX), Signal::Unmask(0)]);
    assert_eq!((n.deferred_irqs, n.watchdog), (2, 2));
    // Without a timeout the count has no effect.
    let p = NapiParams {
        defer_hard_irqs: 2,
        ..NapiParams::default()
    };
    let mut n = napi_with(300, &[p], 1);
    env.rings[0].push_back(pkt(7));
    n.schedule(0, &mut env);
    softirq(&mut n, &mut env);
    assert_eq!(
        env.take_log(),
        vec![Signal::Raise(NET_RX), Signal::Forward(7), Signal::Unmask(0)]
    );
}

#[test]
fn a_threaded_device_is_polled_by_its_thread_until_a_poll_completes_it() {
    // Weight 2, 3 frames: the thread polls twice (the first uses its weight).
    let mut env = Script::new(&[3]);
    let p = NapiParams {
        weight: 2,
        threaded: true,
        ..NapiParams::default()
    };
    let mut n = napi_with(300, &[p], 1);
    n.schedule(0, &mut env);
    assert_eq!(env.take_log(), vec![Signal::Wake(n.napi_thread(0))]);
    let mut runs = Vec::new();
    let mut first = true;
    while let Step::Run(d) = n.thread_step(0, first, &mut env) {
        first = false;
        runs.push(d);
    }
    assert_eq!(
        runs,
        vec![ns(500), ns(6_000), ns(6_000), ns(500), ns(6_000)]
    );
    assert_eq!(
        env.take_log(),
        vec![
            Signal::Forward(0),
            Signal::Forward(1),
            Signal::Forward(2),
            Signal::Unmask(0)
        ]
    );
    assert_eq!((n.thread_polls, n.polls, n.complete), (2, 0, 1));
    // Asleep: a step without a schedule does nothing.
    assert_eq!(n.thread_step(0, true, &mut env), Step::Done);
}
