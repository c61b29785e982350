//! 5. **Many cores.** Random multi-core hosts: 2-4 cores, NICs with 1-4 queue pairs,
//!    receive-side scaling, XPS on or off, the `interrupt` and `napi` policies (NAPI
//!    threaded or in the softirq, with deferred hard interrupts, RPS to any set of
//!    cores), DIM, socket busy polling, interrupt lines pinned to cores; over everything
//!    the model generator of section 2 draws besides (bus, shared lines, link watch,
//!    transmit completions, moderation, statistics counters, a user process, a sender).
//!    The generated models must all be valid; the whole-experiment properties of
//!    section 4 (conservation, CPU sums, thread and resume identity) hold over them, and
//!    one run's books are exact to the frame and the picosecond on every core.

use super::config;
use super::experiments::{
    Case, Edit, check_results, edit, experiment_draw_with, for_cases, resumes_to_the_same_bytes,
    same_bytes_on_1_and_2_threads, set_or_remove, sweep,
};
use super::model::{Knobs, NICS, capacity, cost, model, setup_over, too_many_underruns};
use irqsim::config::model::ModelConfig;
use irqsim::model::cpu::{LEVELS, Level};
use irqsim::results::CpuResult;
use irqsim::sim::problems::Problems;
use proptest::prelude::*;
use proptest::sample::{Index, select, subsequence};
use proptest::strategy::ValueTree;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

/// What the section-2 generator draws under the multi-core mechanisms: everything but
/// its policies (this section draws them: only `interrupt` and `napi` run on several
/// cores, `ModelConfig::validate`).
const BASE: Knobs = Knobs {
    all_policies: false,
    random_costs: true,
    extras: true,
    hardclock: true,
    devices: true,
};

/// Most cores drawn.
const MAX_CORES: u16 = 4;

/// Whether policy `kind` runs on a host with several cores (what the registry says of
/// it: `RxPolicy::MANY_CORES`).
fn multi_core(kind: &str) -> bool {
    irqsim::model::policy::PolicyConfig::kinds_that(|c| c.many_cores)
        .iter()
        .any(|k| k.trim_matches('`') == kind)
}

fn cores_of(m: &Value) -> u16 {
    m["cpu"]["cores"].as_u64().unwrap_or(1) as u16
}

fn kind_of(n: &Value) -> &str {
    n["policy"]["kind"].as_str().unwrap_or("interrupt")
}

/// Whether the process busy-polls (`busy_read_us` or `busy_poll_us` above 0).
fn busy_polls(m: &Value) -> bool {
    ["busy_read_us", "busy_poll_us"]
        .iter()
        .any(|f| m["user"][f].as_f64().is_some_and(|x| x > 0.0))
}

/// Whether model `m` may take policy `kind` on one of its NICs: every policy on one
/// core, `interrupt` and `napi` on several (`ModelConfig::validate`); and, with a
/// process that busy-polls, `napi` only (its busy loop polls a NAPI instance: "needs the
/// `napi` policy on the receiving NICs", `UserConfig`).
pub(super) fn policy_fits(m: &Value, kind: &str) -> bool {
    (cores_of(m) <= 1 || multi_core(kind)) && (!busy_polls(m) || kind == "napi")
}

/// The interrupt lines of model `m` in line order, as `ModelConfig::line_names` names
/// them: the shared lines, then each NIC's own line or, for a multi-queue NIC, each
/// queue's vector `<nic>-q<k>`.
fn line_names(m: &Value) -> Vec<String> {
    let lines = m["irq_lines"].as_array().cloned().unwrap_or_default();
    let mut names: Vec<String> = lines
        .iter()
        .map(|l| l["name"].as_str().expect("line name").to_string())
        .collect();
    for n in m["nics"].as_array().expect("nics") {
        let name = n["name"].as_str().expect("NIC name");
        let queues = n["queues"].as_u64().unwrap_or(1);
        if queues > 1 {
            names.extend((0..queues).map(|k| format!("{name}-q{k}")));
        } else if !lines.iter().any(|l| {
            l["chain"]
                .as_array()
                .is_some_and(|c| c.contains(&json!(name)))
        }) {
            names.push(name.to_string());
        }
    }
    names
}

/// Fit model `m` to its cores and queues after a change (`ModelConfig::validate`):
/// RPS and pinned lines name existing cores (a pin beyond the cores wraps round), a pin
/// names an existing line (a NIC's own line is renamed to its queues' vectors when it
/// gets several), every queue has an entry in its NIC's RSS indirection table, and a
/// NIC with several queues has no link watch. A
/// model with one core and one queue per NIC (the other sections') is left as it is.
pub(super) fn fit_cores(m: &mut Value) {
    let cores = cores_of(m).max(1);
    for n in m["nics"].as_array_mut().expect("nics") {
        if let Some(rps) = n["policy"]
            .get_mut("rps_cpus")
            .and_then(Value::as_array_mut)
        {
            rps.retain(|c| c.as_u64().is_some_and(|c| c < cores as u64));
        }
        let queues = n["queues"].as_u64().unwrap_or(1);
        if queues > 1 {
            // A link watch is modelled for one-queue NICs only.
            set_or_remove(&mut n["driver"], "link_watch", &None);
        }
        if let Some(e) = n["rss"]["indirection_entries"].as_u64()
            && e < queues
        {
            n["rss"]["indirection_entries"] = json!(queues.next_power_of_two());
        }
    }
    let names = line_names(m);
    if let Some(pins) = m["cpu"]
        .get_mut("irq_affinity")
        .and_then(Value::as_object_mut)
    {
        pins.retain(|line, _| names.contains(line));
        for c in pins.values_mut() {
            *c = json!(c.as_u64().unwrap_or(0) % cores as u64);
        }
        if pins.is_empty() {
            set_or_remove(&mut m["cpu"], "irq_affinity", &None);
        }
    }
}

/// A change of the multi-core mechanisms, made by a scenario's overrides or a variant
/// where the result is valid (else the model is left as it is).
#[derive(Clone, Debug)]
pub(super) enum CoreEdit {
    /// `cpu.cores` (1 too: a variant may compare one core with several).
    Cores(u16),
    /// `queues` of a NIC.
    Queues(usize, u16),
    /// `xps` of a NIC, or its default.
    Xps(usize, Option<bool>),
    /// `dim` of a NIC, or none.
    Dim(usize, Option<Value>),
    /// Socket busy polling: epoll's (`busy_poll_us`) or recv()'s (`busy_read_us`) window
    /// [us], or none.
    BusyPoll(Option<(bool, u32)>),
}

impl CoreEdit {
    pub(super) fn apply(&self, m: &mut Value) {
        match self {
            CoreEdit::Cores(c) => {
                if *c > 1
                    && m["nics"]
                        .as_array()
                        .expect("nics")
                        .iter()
                        .any(|n| !multi_core(kind_of(n)))
                {
                    return;
                }
                m["cpu"]["cores"] = json!(c);
            }
            CoreEdit::Queues(i, q) => {
                // A multi-queue NIC's vectors are its own: it cannot be on a shared line.
                let name = m["nics"][*i]["name"].clone();
                let shared = m["irq_lines"].as_array().is_some_and(|ls| {
                    ls.iter()
                        .any(|l| l["chain"].as_array().is_some_and(|c| c.contains(&name)))
                });
                // Nor have a link watch (dc(4)'s reset belongs to the whole port).
                let watched = m["nics"][*i]["driver"].get("link_watch").is_some();
                if *q > 1 && (shared || watched) {
                    return;
                }
                m["nics"][*i]["queues"] = json!(q);
            }
            CoreEdit::Xps(i, x) => {
                set_or_remove(&mut m["nics"][*i], "xps", &x.map(|x| json!(x)));
            }
            CoreEdit::Dim(i, d) => {
                let n = &mut m["nics"][*i];
                // DIM needs NAPI and excludes the adaptive interval (`NicConfig::validate`).
                let adaptive = n["moderation"].get("adaptive").is_some();
                if d.is_none() || (kind_of(n) == "napi" && !adaptive) {
                    set_or_remove(n, "dim", d);
                }
            }
            CoreEdit::BusyPoll(b) => {
                let napi = m["nics"]
                    .as_array()
                    .expect("nics")
                    .iter()
                    .all(|n| kind_of(n) == "napi");
                match b {
                    Some((epoll, us)) if napi => busy_user(m, *epoll, *us),
                    Some(_) => {}
                    None => {
                        if m["user"]["kind"] == "screend" {
                            set_or_remove(&mut m["user"], "busy_read_us", &None);
                            set_or_remove(&mut m["user"], "busy_poll_us", &None);
                        }
                    }
                }
            }
        }
        fit_cores(m);
    }
}

/// Make `m`'s user process one that reads its socket and busy-polls for `us` [us], in
/// epoll_wait() (`epoll`) or in recv(): the model's screend process, or a new one of
/// 1 us per frame.
fn busy_user(m: &mut Value, epoll: bool, us: u32) {
    if m["user"]["kind"] != "screend" {
        m["user"] = json!({ "kind": "screend", "per_packet": 1_000, "queue_len": 64 });
    }
    let (on, off) = if epoll {
        ("busy_poll_us", "busy_read_us")
    } else {
        ("busy_read_us", "busy_poll_us")
    };
    m["user"][on] = json!(us);
    set_or_remove(&mut m["user"], off, &None);
}

/// A policy that runs on several cores: `interrupt`, or `napi` with any weight, in its
/// own thread (`threaded`) or the softirq, with or without deferred hard interrupts,
/// steering by RPS to 1-4 cores (those beyond the host's are left out by `fit_cores`).
fn core_policy() -> BoxedStrategy<Value> {
    prop_oneof![
        1 => Just(json!({ "kind": "interrupt" })),
        3 => (
            prop_oneof![Just(64u32), 1u32..=128],
            prop::bool::weighted(0.35),
            prop::option::weighted(0.25, (1u32..=4, 1_000u32..=100_000)),
            prop::option::weighted(0.4, subsequence((0..MAX_CORES).collect::<Vec<_>>(), 1..=4)),
        )
            .prop_map(|(weight, threaded, defer, rps)| {
                let mut p = json!({ "kind": "napi", "weight": weight });
                if threaded {
                    p["threaded"] = json!(true);
                }
                if let Some((polls, ns)) = defer {
                    p["defer_hard_irqs"] = json!(polls);
                    p["gro_flush_timeout_ns"] = json!(ns);
                }
                if let Some(rps) = rps {
                    p["rps_cpus"] = json!(rps);
                }
                p
            }),
    ]
    .boxed()
}

/// One DIM instance: either CQ period mode, either profile table, any initial profile.
fn dim() -> impl Strategy<Value = Value> {
    (select(vec!["cqe", "eqe"]), select(vec!["rx", "tx"]), 0u32..=4).prop_map(
        |(mode, direction, profile)| {
            json!({ "mode": mode, "direction": direction, "initial_profile": profile })
        },
    )
}

/// One port's multi-core mechanisms.
#[derive(Clone, Debug)]
struct Port {
    /// Queue pairs, 1-4.
    queues: u16,
    xps: Option<bool>,
    /// `rss`: UDP ports hashed or not, a table of 4-512 entries or the default.
    rss: Option<Value>,
    policy: Value,
    /// Applied with `napi` only.
    dim: Option<Value>,
}

fn port() -> impl Strategy<Value = Port> {
    (
        prop_oneof![1 => Just(1u16), 2 => 2u16..=4],
        prop::option::of(any::<bool>()),
        prop::option::weighted(
            0.4,
            (
                any::<bool>(),
                prop::option::of(select(vec![4u32, 8, 64, 512])),
            ),
        ),
        core_policy(),
        prop::option::weighted(0.4, dim()),
    )
        .prop_map(|(queues, xps, rss, policy, dim)| Port {
            queues,
            xps,
            rss: rss.map(|(udp, entries)| {
                let mut r = json!({ "udp_4tuple": udp });
                if let Some(e) = entries {
                    r["indirection_entries"] = json!(e);
                }
                r
            }),
            policy,
            dim,
        })
}

/// The multi-core mechanisms of a host, drawn independently of the model they go on.
#[derive(Clone, Debug)]
struct CoreDraw {
    cores: u16,
    ports: Vec<Port>,
    /// Lines pinned to cores (`irq_affinity`): which line (of those the model has),
    /// which core (modulo the cores).
    pins: Vec<(Index, u16)>,
    /// `kernel.napi`'s RPS backlog, its weight, the steering cost, how net_rx_action
    /// walks its list, a busy-poll round's cost.
    napi: Value,
    busy: Option<(bool, u32)>,
}

fn core_draw() -> impl Strategy<Value = CoreDraw> {
    (
        2..=MAX_CORES,
        prop::collection::vec(port(), NICS.len()),
        prop::collection::vec((any::<Index>(), 0..MAX_CORES), 0..=3),
        (
            prop_oneof![1 => 1u32..=16, 2 => 17u32..=1_000],
            1u32..=128,
            cost(true),
            select(vec!["live-list", "spliced"]),
            // More than 0: it paces a loop that finds nothing (`NapiConfig::validate`).
            (20u32..=2_000).prop_map(|ns| json!({ "ns": ns })),
        ),
        prop::option::weighted(0.3, (any::<bool>(), 1u32..=100)),
    )
        .prop_map(
            |(cores, ports, pins, (backlog, dev_weight, rps, action, busy_loop), busy)| CoreDraw {
                cores,
                ports,
                pins,
                napi: json!({
                    "netdev_max_backlog": backlog,
                    "dev_weight": dev_weight,
                    "rps_per_packet": rps,
                    "net_rx_action": action,
                    "busy_poll_loop": busy_loop,
                }),
                busy,
            },
        )
}

impl CoreDraw {
    /// Put these mechanisms on model `m` (of section 2, `interrupt` on every NIC), keeping
    /// it valid: transmit completions stay on `interrupt` NICs, DIM goes on `napi` ones
    /// in place of an adaptive interval, a multi-queue NIC leaves its shared line, a
    /// busy-polling process makes every NIC `napi`.
    fn apply(&self, mut m: Value) -> Value {
        m["cpu"]["cores"] = json!(self.cores);
        for (i, p) in self.ports.iter().enumerate() {
            let n = &mut m["nics"][i];
            let mut policy = p.policy.clone();
            if self.busy.is_some() && policy["kind"] != "napi" {
                policy = json!({ "kind": "napi" });
            }
            let napi = policy["kind"] == "napi";
            n["policy"] = policy;
            if napi {
                set_or_remove(n, "tx_completion", &None);
            }
            if p.queues > 1 {
                n["queues"] = json!(p.queues);
            }
            if let Some(x) = p.xps {
                n["xps"] = json!(x);
            }
            if let Some(r) = &p.rss {
                n["rss"] = r.clone();
            }
            if let Some(d) = p.dim.as_ref().filter(|_| napi) {
                n["dim"] = d.clone();
                if let Some(md) = n.get_mut("moderation") {
                    set_or_remove(md, "adaptive", &None);
                }
            }
        }
        let multi: Vec<Value> = m["nics"]
            .as_array()
            .expect("nics")
            .iter()
            .filter(|n| n["queues"].as_u64().unwrap_or(1) > 1)
            .map(|n| n["name"].clone())
            .collect();
        if let Some(lines) = m.get_mut("irq_lines").and_then(Value::as_array_mut) {
            for l in lines.iter_mut() {
                if let Some(c) = l["chain"].as_array_mut() {
                    c.retain(|n| !multi.contains(n));
                }
            }
            lines.retain(|l| l["chain"].as_array().is_some_and(|c| !c.is_empty()));
            if lines.is_empty() {
                set_or_remove(&mut m, "irq_lines", &None);
            }
        }
        for (k, v) in self.napi.as_object().expect("napi") {
            m["kernel"]["napi"][k] = v.clone();
        }
        if let Some((epoll, us)) = self.busy {
            busy_user(&mut m, epoll, us);
        }
        let names = line_names(&m);
        for (at, core) in &self.pins {
            m["cpu"]["irq_affinity"][&names[at.index(names.len())]] = json!(core % self.cores);
        }
        fit_cores(&mut m);
        m
    }
}

/// Multi-core models: any of [`model`] (section 2) under the mechanisms of [`CoreDraw`].
fn many_core_model() -> impl Strategy<Value = Value> {
    (model(BASE), core_draw()).prop_map(|(m, d)| d.apply(m))
}

/// The edits of a multi-core scenario's overrides and variants: any of section 4's
/// (those that do not fit several cores are left out by `Edit::apply`), policies that
/// run on several cores, and changes of the cores, queues, XPS, DIM and busy polling.
fn core_edit() -> BoxedStrategy<Edit> {
    prop_oneof![
        3 => edit(),
        2 => (0..NICS.len(), core_policy()).prop_map(|(i, p)| Edit::Policy(i, p)),
        1 => (1..=MAX_CORES).prop_map(|c| Edit::Cores(CoreEdit::Cores(c))),
        1 => (0..NICS.len(), 1u16..=4).prop_map(|(i, q)| Edit::Cores(CoreEdit::Queues(i, q))),
        1 => (0..NICS.len(), prop::option::of(any::<bool>()))
            .prop_map(|(i, x)| Edit::Cores(CoreEdit::Xps(i, x))),
        1 => (0..NICS.len(), prop::option::of(dim()))
            .prop_map(|(i, d)| Edit::Cores(CoreEdit::Dim(i, d))),
        1 => prop::option::of((any::<bool>(), 1u32..=100))
            .prop_map(|b| Edit::Cores(CoreEdit::BusyPoll(b))),
    ]
    .boxed()
}

/// A flow's addresses and ports, which RSS hashes (default: distinct sources, see
/// `FlowConfig::tuple`): UDP or TCP, a few addresses and ports, so that flows may share
/// a queue or not.
fn tuple() -> impl Strategy<Value = Value> {
    (
        (0u8..4, 0u8..4),
        (
            prop_oneof![Just(1024u16), 1024u16..=1031],
            prop_oneof![Just(9u16), any::<u16>()],
        ),
        any::<bool>(),
    )
        .prop_map(|((s, d), (sp, dp), tcp)| {
            json!({
                "src_addr": format!("10.0.0.{}", s + 1),
                "dst_addr": format!("10.1.0.{}", d + 1),
                "src_port": sp,
                "dst_port": dp,
                "protocol": if tcp { "tcp" } else { "udp" },
            })
        })
}

/// Whole experiments (section 4's scenarios) over multi-core models, with multi-core
/// overrides and variants and some flows given their own tuple.
fn many_core_experiment() -> impl Strategy<Value = Case> {
    (
        many_core_model(),
        experiment_draw_with(core_edit()),
        prop::collection::vec(prop::option::weighted(0.3, tuple()), 4),
    )
        .prop_map(|(m, d, tuples)| {
            let mut case = d.build(m);
            if let Some(flows) = case.scenario["workload"]["flows"].as_array_mut() {
                for (f, t) in flows.iter_mut().zip(tuples) {
                    if let Some(t) = t {
                        f["tuple"] = t;
                    }
                }
            }
            case
        })
}

/// The per-core CPU figures of a point of a host with `cores` cores (see
/// `many_core_experiments_keep_their_books`): one split per core with more than one
/// (none with one), each adding up to 1, and the host's split their mean.
pub(super) fn check_cores(
    cores: usize,
    host: &CpuResult,
    each: &[CpuResult],
) -> Result<(), String> {
    let want = if cores > 1 { cores } else { 0 };
    if each.len() != want {
        return Err(format!(
            "{} per-core CPU splits on {cores} core(s)",
            each.len()
        ));
    }
    let parts = |c: &CpuResult| [c.interrupt, c.softirq, c.kernel, c.user, c.idle];
    for (k, c) in each.iter().enumerate() {
        let p = parts(c);
        if !p.iter().all(|x| (0.0..=1.0 + 1e-12).contains(x))
            || (p.iter().sum::<f64>() - 1.0).abs() > 1e-9
        {
            return Err(format!("core {k}: CPU fractions do not add up to 1: {c:?}"));
        }
    }
    if cores > 1 {
        let mean: Vec<f64> = (0..5)
            .map(|i| each.iter().map(|c| parts(c)[i]).sum::<f64>() / cores as f64)
            .collect();
        if parts(host)
            .iter()
            .zip(&mean)
            .any(|(h, m)| (h - m).abs() > 1e-9)
        {
            return Err(format!(
                "the host's CPU split {host:?} is not the mean of its cores' {mean:?}"
            ));
        }
    }
    Ok(())
}

/// Every generated multi-core model is valid, and the generator produces every
/// mechanism it claims to, in a fair share of 400 models (a generator that lost one
/// would leave it untested without a failure anywhere).
///
/// Why it must hold: `CoreDraw::apply` and `fit_cores` build each model within the
/// rules `ModelConfig::validate` checks (policies on several cores, DIM with NAPI and
/// without an adaptive interval, multi-queue NICs on lines of their own, pins and RPS
/// sets naming existing lines and cores, indirection tables with an entry per queue);
/// a refusal is a generator bug, or a loader bug if the model is valid by the schema's
/// rules. The shares: each mechanism is drawn with probability 0.25 or more per NIC or
/// per host (several cores always), so 400 models should show each about 100 times or
/// more (the least common, busy polling at 0.3 per host, 127 times with proptest's
/// deterministic runner, which makes the counts the same on every run); at least 20 is
/// asked, so that only a generator that lost a mechanism fails.
#[test]
fn many_core_models_are_valid_and_cover_every_mechanism() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let draw = many_core_model();
    let mut seen = std::collections::BTreeMap::<&str, u32>::new();
    for _ in 0..400 {
        let m = draw.new_tree(&mut runner).expect("a model").current();
        let cfg: ModelConfig = serde_json::from_value(m.clone())
            .unwrap_or_else(|e| panic!("{e}\n{}", serde_json::to_string_pretty(&m).expect("json")));
        let mut p = Problems::new();
        cfg.validate(&mut p);
        assert!(
            p.is_empty(),
            "a generated multi-core model is refused: {p:?}\n{}",
            serde_json::to_string_pretty(&m).expect("json")
        );
        let mut count =
            |what: &'static str, yes: bool| *seen.entry(what).or_default() += yes as u32;
        let napi = |n: &&irqsim::model::nic::NicConfig| match &n.policy {
            irqsim::model::policy::PolicyConfig::Napi(p) => Some(p.clone()),
            _ => None,
        };
        count("several cores", cfg.cpu.cores > 1);
        count("several queues", cfg.nics.iter().any(|n| n.queues > 1));
        count(
            "xps off",
            m["nics"]
                .as_array()
                .expect("nics")
                .iter()
                .any(|n| n["xps"] == false),
        );
        count(
            "xps on",
            m["nics"]
                .as_array()
                .expect("nics")
                .iter()
                .any(|n| n["xps"] == true),
        );
        count(
            "rss",
            m["nics"]
                .as_array()
                .expect("nics")
                .iter()
                .any(|n| n.get("rss").is_some()),
        );
        count("dim", cfg.nics.iter().any(|n| n.dim.is_some()));
        count("interrupt", cfg.nics.iter().any(|n| napi(&n).is_none()));
        count("napi", cfg.nics.iter().any(|n| napi(&n).is_some()));
        count(
            "threaded",
            cfg.nics.iter().filter_map(|n| napi(&n)).any(|p| p.threaded),
        );
        count(
            "rps",
            cfg.nics
                .iter()
                .filter_map(|n| napi(&n))
                .any(|p| !p.rps_cpus.is_empty()),
        );
        count(
            "deferred irqs",
            cfg.nics
                .iter()
                .filter_map(|n| napi(&n))
                .any(|p| p.defer_hard_irqs > 0),
        );
        count("busy polling", busy_polls(&m));
        count("pinned lines", m["cpu"].get("irq_affinity").is_some());
        count("shared lines", !cfg.irq_lines.is_empty());
        count("bus", cfg.bus.is_some());
    }
    eprintln!("multi-core mechanisms in 400 models: {seen:?}");
    for (what, n) in &seen {
        assert!(
            *n >= 20,
            "only {n} of 400 generated models have {what}: {seen:?}"
        );
    }
}

proptest! {
    #![proptest_config(config(500))]

    /// One run of a multi-core host (`host::simulate`) keeps exact books: per flow and in
    /// total, sent = received + drops + in flight, to the frame, with in flight within
    /// what the host can hold (`capacity`, which counts every queue pair and every
    /// core's queues); the total is the sum of the flows; latency is recorded once per
    /// received frame; underruns within their bounds (per queue device); and each core's
    /// time per level plus idle adds up to the sending time to the picosecond, the
    /// host's time per level is the sum of its cores', and each core's kernel-thread time
    /// (ksoftirqd, NAPI threads) is part of its User level.
    ///
    /// Why it must hold: a frame is in one place at a time whatever core handles it (a
    /// queue pair's rings and send queue, a core's ipintrq or RPS backlog, a task's
    /// hands, a wire) and every refusal is one drop at one site, as on one core
    /// (`packets_are_conserved`); each core is a CPU of its own that charges every
    /// interval to exactly one bucket from time 0 (`cpu_time_adds_up_to_the_sending_time`),
    /// and the host's figures are the level-wise sum of the cores' snapshots.
    #[test]
    fn many_core_runs_keep_exact_books(s in setup_over(many_core_model(), true)) {
        let cfg = s.config();
        let st = s.run_cfg(&cfg);
        let bound = capacity(&cfg);
        let mut sum = irqsim::model::stats::FlowStats::default();
        for (name, f) in &st.flows {
            prop_assert_eq!(
                f.sent,
                f.received + f.drops.total() + f.in_flight_at_end,
                "flow {}: {:?}", name, f
            );
            prop_assert_eq!(f.latency.count(), f.received, "flow {}", name);
            sum.merge(f);
        }
        let t = &st.total;
        prop_assert_eq!(
            (t.sent, t.received, t.drops, t.in_flight_at_end),
            (sum.sent, sum.received, sum.drops, sum.in_flight_at_end)
        );
        prop_assert!(t.in_flight_at_end <= bound, "in flight {} > capacity {bound}", t.in_flight_at_end);
        if let Some(why) = too_many_underruns(&cfg, &st.counters) {
            return Err(TestCaseError::fail(why));
        }
        let cores = cfg.cpu.cores as usize;
        prop_assert_eq!(st.core_cpu_ps.len(), cores);
        prop_assert_eq!(st.core_ksoftirqd_ps.len(), cores);
        for (k, c) in st.core_cpu_ps.iter().enumerate() {
            prop_assert_eq!(c.iter().sum::<u64>(), s.duration.0, "core {}: {:?}", k, c);
            prop_assert!(st.core_ksoftirqd_ps[k] <= c[Level::User as usize], "core {}", k);
        }
        for l in 0..=LEVELS {
            prop_assert_eq!(st.cpu_ps[l], st.core_cpu_ps.iter().map(|c| c[l]).sum::<u64>());
        }
        prop_assert_eq!(st.task_ps[1], st.core_ksoftirqd_ps.iter().sum::<u64>());
        prop_assert!(st.task_ps[0] + st.task_ps[1] <= st.cpu_ps[Level::User as usize]);
    }
}

/// Whole multi-core experiments load and run through `runner::run` without a panic or
/// an error, and keep the books of `experiments_keep_their_books` (conservation per
/// flow and in total, in flight a small whole number of frames, the total the sum of
/// the flows, CPU fractions adding up to 1, underruns within bounds, each variant's
/// model what its patches make), and per core: one CPU split per core, each adding up
/// to 1 within 1e-9, the host's split the mean of its cores' within 1e-9
/// (`check_cores`).
///
/// Why it must hold: as for one core (see `experiments_keep_their_books`). Per core:
/// each core's buckets tile the sending time D (`many_core_runs_keep_exact_books`), so
/// the host's K cores have K D in all and each host fraction is the mean of the cores'
/// fractions; means over replications keep that linear relation. The tolerance: each
/// fraction is a ratio of integers rounded once to a double (2^-53 relative), and sums
/// of 5 and means over at most 4 cores and 3 replications add a few dozen roundings,
/// about 1e-14; 1e-9 is far above that and far below any misattributed interval (one
/// microsecond of a 5 ms run is 2e-4).
#[test]
fn many_core_experiments_keep_their_books() {
    for_cases(256, many_core_experiment(), Just(()), |_, _, exp, ()| {
        let r = sweep("the sweep", || {
            irqsim::experiment::runner::run(&exp, 1, &|| {})
        })?;
        check_results(&exp, &r).map_err(TestCaseError::fail)
    });
}

/// A whole multi-core experiment gives the same results JSON, byte for byte, on 1 and 2
/// threads.
///
/// Why it must hold: as for one core (`experiments_give_the_same_bytes_on_1_and_2_threads`):
/// a run's cores, queues, RSS hash, RPS steering and DIM decisions are all inside the
/// run, which draws only from its own keyed streams; threads change only the order in
/// which runs finish.
#[test]
fn many_core_experiments_give_the_same_bytes_on_1_and_2_threads() {
    for_cases(128, many_core_experiment(), Just(()), |_, _, exp, ()| {
        same_bytes_on_1_and_2_threads(&exp)
    });
}

/// A multi-core sweep stopped after any number of its runs and resumed from its
/// checkpoint, on 1 or 2 threads, gives the bytes of the sweep run without a stop.
///
/// Why it must hold: as for one core (`interrupted_experiments_resume_to_the_same_bytes`):
/// the checkpoint holds each finished run's figures, per-core splits and per-queue
/// counters included, which round-trip exactly through JSON, and the runs left are
/// simulated with the same keys.
#[test]
fn interrupted_many_core_experiments_resume_to_the_same_bytes() {
    for_cases(
        128,
        many_core_experiment(),
        (any::<Index>(), 1usize..=2),
        |sb, _, exp, (at, threads)| resumes_to_the_same_bytes(sb, &exp, at, threads),
    );
}
