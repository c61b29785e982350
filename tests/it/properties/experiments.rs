//! 4. **Whole experiments.** Generated scenario and model files, loaded and run through
//!    the runner, keep their books and give the same bytes on 1 and 2 threads and after
//!    a resume.

use super::many_cores::{CoreEdit, check_cores, fit_cores, policy_fits};
use super::model::{
    EVERYTHING, NICS, NicMore, bus, capacity, cost, link_watch, model, moderation, policy, sender,
    sender_line_fps, too_many_underruns, user,
};
use super::{Sandbox, clean_error, config};
use irqsim::config::model::ModelConfig;
use irqsim::config::scenario::{self, DiskFiles, Experiment};
use irqsim::experiment::checkpoint::Checkpoint;
use irqsim::results::Results;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// One change to a model, made by a scenario's `overrides` or by a variant. Each is
/// drawn before the model is known and made by [`Edit::apply`] only where it keeps the
/// model valid; the scenario then carries the merge patch from one model to the other
/// ([`patch_between`]).
#[derive(Clone, Debug)]
pub(super) enum Edit {
    Ipintrq(u32),
    NetisrCost(Value),
    RxRing(usize, u32),
    LineRate(usize, f64),
    Bus(Option<Value>),
    LinkWatch(usize, Option<Value>),
    Policy(usize, Value),
    Moderation(usize, Option<Value>),
    TxCompletion(usize, Option<(u32, bool)>),
    User(Option<Value>),
    Sender(Option<Value>),
    Hardclock(u32),
    /// A change of the multi-core mechanisms (cores, queues, XPS, DIM, busy polling).
    Cores(CoreEdit),
}

pub(super) fn edit() -> impl Strategy<Value = Edit> {
    let k = EVERYTHING;
    prop_oneof![
        1 => (1u32..=200).prop_map(Edit::Ipintrq),
        1 => cost(true).prop_map(Edit::NetisrCost),
        1 => (0usize..4, 1u32..=256).prop_map(|(i, n)| Edit::RxRing(i, n)),
        1 => (0usize..4, select(vec![10e6, 100e6, 1e9])).prop_map(|(i, r)| Edit::LineRate(i, r)),
        1 => prop::option::of(bus()).prop_map(Edit::Bus),
        1 => (0usize..4, prop::option::of(link_watch(k))).prop_map(|(i, w)| Edit::LinkWatch(i, w)),
        2 => (0usize..4, policy(k)).prop_map(|(i, p)| Edit::Policy(i, p)),
        1 => (0usize..4, prop::option::of(moderation())).prop_map(|(i, m)| Edit::Moderation(i, m)),
        1 => (0usize..4, prop::option::of((0u32..=300, any::<bool>())))
            .prop_map(|(i, t)| Edit::TxCompletion(i, t)),
        1 => user(k).prop_map(Edit::User),
        1 => prop::option::of(sender(k)).prop_map(Edit::Sender),
        1 => prop_oneof![Just(0u32), 1u32..=2_000].prop_map(Edit::Hardclock),
    ]
}

/// Set `key` of object `v` to `x`, or remove it.
pub(super) fn set_or_remove(v: &mut Value, key: &str, x: &Option<Value>) {
    match x {
        Some(x) => v[key] = x.clone(),
        None => {
            if let Some(o) = v.as_object_mut() {
                o.remove(key);
            }
        }
    }
}

impl Edit {
    /// Make the change to model `m` where the result is valid (else leave `m` as it is).
    /// `keep_sender`: the scenario has no tester flow, so the sender must stay.
    fn apply(&self, m: &mut Value, keep_sender: bool) {
        let kind = |m: &Value, i: usize| m["nics"][i]["policy"]["kind"].as_str().map(String::from);
        match self {
            Edit::Ipintrq(n) => m["kernel"]["ipintrq_maxlen"] = json!(n),
            Edit::NetisrCost(c) => m["kernel"]["netisr_per_packet"] = c.clone(),
            Edit::RxRing(i, n) => m["nics"][*i]["rx_ring_slots"] = json!(n),
            Edit::LineRate(i, r) => m["nics"][*i]["line_rate_bps"] = json!(r),
            Edit::Bus(b) => set_or_remove(m, "bus", b),
            Edit::LinkWatch(i, w) => {
                // A link watch is modelled for NICs with one queue only.
                if w.is_none() || m["nics"][*i]["queues"].as_u64().unwrap_or(1) <= 1 {
                    set_or_remove(&mut m["nics"][*i]["driver"], "link_watch", w);
                }
            }
            Edit::Policy(i, p) => {
                let mut p = p.clone();
                // One busy-poll loop has one empty-pass cost: take the other busy-poll
                // NICs' if there are any.
                if p["kind"] == "busy-poll"
                    && let Some(e) = (0..NICS.len())
                        .filter(|j| j != i && kind(m, *j).as_deref() == Some("busy-poll"))
                        .map(|j| m["nics"][j]["policy"]["empty_poll"].clone())
                        .next()
                {
                    p["empty_poll"] = e;
                }
                let k = p["kind"].as_str().unwrap_or_default().to_string();
                // A host with several cores takes the policies that run on several cores
                // only, and a busy-polling process NAPI on every NIC (`policy_fits`).
                if !policy_fits(m, &k) {
                    return;
                }
                let nic = &mut m["nics"][*i];
                nic["policy"] = p;
                // DIM is sampled after NAPI completions only.
                if k != "napi" {
                    set_or_remove(nic, "dim", &None);
                }
                // Transmit completions go with `interrupt` only, moderation with the
                // interrupt-driven policies only (`NicConfig::validate`). A polling NIC
                // with the clock simulated polls at HZ: `kernel` keeps polling.hz equal
                // to clock.hz whenever hardclock costs anything (see `Hardclock`).
                if k != "interrupt" {
                    set_or_remove(nic, "tx_completion", &None);
                }
                if k == "freebsd-polling" || k == "busy-poll" {
                    set_or_remove(nic, "moderation", &None);
                }
                // RPS steers to the host's cores only.
                fit_cores(m);
            }
            Edit::Moderation(i, x) => {
                let polls = matches!(
                    kind(m, *i).as_deref(),
                    Some("freebsd-polling" | "busy-poll")
                );
                // DIM and the adaptive interval both adapt the rate: one at a time.
                let both = m["nics"][*i].get("dim").is_some()
                    && x.as_ref().is_some_and(|x| x.get("adaptive").is_some());
                if x.is_none() || !(polls || both) {
                    set_or_remove(&mut m["nics"][*i], "moderation", x);
                }
            }
            Edit::TxCompletion(i, x) => {
                // `NicMore::apply` fits the interrupt causes to the ring, for `interrupt`
                // NICs only.
                let nic = &mut m["nics"][*i];
                let tx = nic["tx_ring_slots"].as_u64().unwrap_or(256) as u32;
                set_or_remove(nic, "tx_completion", &None);
                let more = NicMore {
                    tx_completion: *x,
                    ..NicMore::default()
                };
                more.apply(nic, tx);
            }
            Edit::User(u) => set_or_remove(m, "user", u),
            Edit::Sender(x) => {
                if x.is_some() || !keep_sender {
                    set_or_remove(m, "sender", x);
                }
            }
            Edit::Cores(e) => e.apply(m),
            Edit::Hardclock(c) => {
                let k = &mut m["kernel"];
                k["clock"]["hardclock"] = json!(c);
                if *c > 0 {
                    let hz = k["clock"]["hz"].as_u64().unwrap_or(100);
                    let reg = k["polling"]["reg_frac"].as_u64().unwrap_or(1).min(hz);
                    k["polling"]["hz"] = json!(hz);
                    k["polling"]["reg_frac"] = json!(reg);
                }
            }
        }
    }
}

/// The merge patch (RFC 7386, with NICs patched by name as the loader allows) that turns
/// model `a` into model `b`: removed members become `null`, changed objects are patched
/// member by member, anything else is replaced.
fn patch_between(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut p = serde_json::Map::new();
            for k in x.keys().filter(|k| !y.contains_key(*k)) {
                p.insert(k.clone(), Value::Null);
            }
            for (k, w) in y {
                match x.get(k) {
                    None => {
                        p.insert(k.clone(), w.clone());
                    }
                    Some(v) if v == w => {}
                    Some(Value::Array(va)) if k == "nics" => {
                        let mut by_name = serde_json::Map::new();
                        for (na, nb) in va.iter().zip(w.as_array().expect("nics")) {
                            if na != nb {
                                let name = nb["name"].as_str().expect("name").to_string();
                                by_name.insert(name, patch_between(na, nb));
                            }
                        }
                        p.insert(k.clone(), Value::Object(by_name));
                    }
                    Some(v) => {
                        p.insert(k.clone(), patch_between(v, w));
                    }
                }
            }
            Value::Object(p)
        }
        _ => b.clone(),
    }
}

/// A tester flow of a generated scenario, fitted to the models by [`ExperimentDraw::build`].
#[derive(Clone, Debug)]
struct FlowDraw {
    from: usize,
    to: usize,
    bytes: Value,
    poisson: bool,
    phase: Option<Value>,
    ppm: Option<Value>,
    /// A fixed rate (`rate_pps`) as a fraction of the lowest line rate of its input.
    fixed: Option<f64>,
    turnaround_ns: u32,
    named: bool,
}

fn flow_draw() -> impl Strategy<Value = FlowDraw> {
    (
        (0usize..4, 0usize..4),
        prop_oneof![
            3 => prop_oneof![64u32..=1518, Just(64), Just(1500), Just(1518)].prop_map(|b| json!(b)),
            1 => (64u32..=1518, 64u32..=1518)
                .prop_map(|(a, b)| json!({ "dist": "uniform", "min": a.min(b), "max": a.max(b) })),
            1 => Just(json!({ "dist": "mix", "sizes": [64, 594, 1518], "weights": [7, 4, 1] })),
        ],
        any::<bool>(),
        prop::option::weighted(
            0.3,
            prop_oneof![
                (0u32..1000).prop_map(|x| json!(x as f64 / 1000.0)),
                Just(json!("random"))
            ],
        ),
        prop::option::weighted(
            0.3,
            prop_oneof![
                (-1000i32..=1000).prop_map(|x| json!(x)),
                Just(json!("random"))
            ],
        ),
        prop::option::weighted(0.2, 0.01f64..=0.999),
        prop_oneof![Just(0u32), 0u32..=200_000],
        any::<bool>(),
    )
        .prop_map(
            |((from, to), bytes, poisson, phase, ppm, fixed, turnaround_ns, named)| FlowDraw {
                from,
                to,
                bytes,
                poisson,
                phase,
                ppm,
                fixed,
                turnaround_ns,
                named,
            },
        )
}

/// Everything a generated scenario is made of, drawn independently of its model.
#[derive(Clone, Debug)]
pub(super) struct ExperimentDraw {
    flows: Vec<FlowDraw>,
    /// Send nothing but the model's sender (when it has one).
    only_sender: bool,
    /// Closed-loop flows, load in outstanding transactions.
    closed: bool,
    overrides: Vec<Edit>,
    variants: Option<Vec<Vec<Edit>>>,
    pps: bool,
    /// Load points as fractions of line rate (or outstanding transactions), and how many.
    fracs: Vec<f64>,
    outstanding: Vec<u32>,
    npoints: usize,
    /// Write the points as a `from`/`to`/`step` range.
    range: bool,
    overload: bool,
    replications: u32,
    duration_ns: u64,
    drain_ns: u64,
    seed: u64,
    timeline_ms: Option<f64>,
    first_bit: bool,
    measured: bool,
    /// Drive the model into the corner of [`Stress`].
    stress: Option<Stress>,
    /// Leave out the handler costs of NICs that neither receive nor send.
    lean: bool,
}

/// The corner the hardening issue found its bug in, drawn on purpose (random models and
/// flows reach it too rarely): every NIC at 100 Mbit/s on a slow bus, resetting the chip
/// on receive errors with a short link check, sending store-and-forward (or through the
/// 21143's thresholds), under crossing flows of long frames at 85-100 % of line rate --
/// so that ports receive and send at once, receive FIFOs overflow, and chips reset while
/// a frame is on their wire and come back up before it has left.
#[derive(Clone, Debug)]
struct Stress {
    bus_mhz: f64,
    store_and_forward: bool,
    reinit_on_underrun: bool,
    tick_period_ns: f64,
    reinit: Value,
    bytes: u32,
}

fn stress() -> impl Strategy<Value = Stress> {
    (
        select(vec![8.33, 12.0, 16.67]),
        prop::bool::weighted(0.7),
        any::<bool>(),
        select(vec![1e5, 2e5, 5e5]),
        prop_oneof![Just(json!({ "ns": 20_000 })), cost(false)],
        select(vec![1000u32, 1500, 1518]),
    )
        .prop_map(
            |(bus_mhz, store_and_forward, reinit_on_underrun, tick_period_ns, reinit, bytes)| {
                Stress {
                    bus_mhz,
                    store_and_forward,
                    reinit_on_underrun,
                    tick_period_ns,
                    reinit,
                    bytes,
                }
            },
        )
}

impl Stress {
    /// Put every NIC of model `m` in the corner.
    fn apply(&self, m: &mut Value) {
        if m.get("bus").is_none() {
            m["bus"] = json!({});
        }
        m["bus"]["clock_mhz"] = json!(self.bus_mhz);
        let thresholds = if self.store_and_forward {
            json!([])
        } else {
            json!([128, 256, 512, 1024])
        };
        for n in m["nics"].as_array_mut().expect("nics") {
            n["line_rate_bps"] = json!(100e6);
            n["dma"]["tx_thresholds_bytes"] = thresholds.clone();
            n["driver"]["link_watch"] = json!({
                "reinit_on_underrun": self.reinit_on_underrun,
                "reinit_on_rx_error": true,
                "reinit": self.reinit,
                "tick_period_ns": self.tick_period_ns,
                "tick": { "ns": 1_000 },
            });
        }
    }

    /// `n` (at least 2) crossing flows: in0 <-> in1, out0 <-> out1, constant rate.
    fn flows(&self, n: usize) -> Vec<FlowDraw> {
        [(0, 1), (1, 0), (2, 3), (3, 2)][..n.max(2)]
            .iter()
            .map(|&(from, to)| FlowDraw {
                from,
                to,
                bytes: json!(self.bytes),
                poisson: false,
                phase: Some(json!("random")),
                ppm: Some(json!("random")),
                fixed: None,
                turnaround_ns: 0,
                named: false,
            })
            .collect()
    }
}

/// Most frames a run of a generated experiment offers (all flows and the sender), so
/// that a whole sweep takes milliseconds.
const MAX_RUN_FRAMES: f64 = 400.0;

fn experiment_draw() -> impl Strategy<Value = ExperimentDraw> {
    experiment_draw_with(edit().boxed())
}

/// [`experiment_draw`] with the overrides and variants made of `edit`'s edits.
pub(super) fn experiment_draw_with(
    edit: BoxedStrategy<Edit>,
) -> impl Strategy<Value = ExperimentDraw> {
    (
        (
            prop::collection::vec(flow_draw(), 1..=4),
            prop::bool::weighted(0.15),
            prop::bool::weighted(0.25),
            prop::collection::vec(edit.clone(), 0..=2),
            prop::option::weighted(
                0.6,
                prop::collection::vec(prop::collection::vec(edit, 0..=2), 1..=3),
            ),
        ),
        (
            any::<bool>(),
            prop::collection::vec(
                prop_oneof![2 => 0.005f64..=1.0, 1 => 0.9f64..=1.0, 1 => Just(1.0)],
                3,
            ),
            prop::collection::vec(1u32..=8, 3),
            1usize..=3,
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.1),
        ),
        (
            1u32..=3,
            500_000u64..=5_000_000,
            prop_oneof![Just(0u64), 0u64..=2_000_000],
            any::<u64>(),
            prop::option::weighted(0.2, (5u32..=100).prop_map(|x| x as f64 / 100.0)),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.1),
        ),
        (
            prop::option::weighted(0.2, stress()),
            prop::bool::weighted(0.3),
        ),
    )
        .prop_map(
            |(
                (flows, only_sender, closed, overrides, variants),
                (pps, fracs, outstanding, npoints, range, overload),
                (replications, duration_ns, drain_ns, seed, timeline_ms, first_bit, measured),
                (stress, lean),
            )| ExperimentDraw {
                flows,
                only_sender,
                closed,
                overrides,
                variants,
                pps,
                fracs,
                outstanding,
                npoints,
                range,
                overload,
                replications,
                duration_ns,
                drain_ns,
                seed,
                timeline_ms,
                first_bit,
                measured,
                stress,
                lean,
            },
        )
}

/// A generated experiment: the model file, the scenario file, and the model of each
/// variant as the scenario's patches should make it.
#[derive(Clone)]
pub(super) struct Case {
    pub(super) model: Value,
    pub(super) scenario: Value,
    pub(super) expected: Vec<Value>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pretty = |v: &Value| serde_json::to_string_pretty(v).expect("json");
        write!(
            f,
            "\n--- models/generated.json\n{}\n--- scenarios/case.json\n{}\n",
            pretty(&self.model),
            pretty(&self.scenario)
        )
    }
}

/// Round to 3 decimals (readable files), never to 0.
/// Rounded down to 3 decimals (readable files, never above a limit), never to 0.
fn round3(x: f64) -> f64 {
    ((x * 1e3).floor() / 1e3).max(1e-3)
}

impl ExperimentDraw {
    /// The scenario over `model`, valid by construction:
    ///
    /// - a scenario with no tester flow only when the model has a sender, and then no
    ///   edit removes it (the loader wants a flow or a sender);
    /// - closed-loop flows all together with `load.unit` = `outstanding` (and no fixed
    ///   rate), phase and clock error on constant-rate flows only (`check_flow`);
    /// - the flows into a NIC offer together at most its line rate, in every variant
    ///   (the loader refuses more than 100 % unless `allow_overload`): `pps` points and
    ///   fixed rates are fractions of the lowest line rate over the variants, 0.1 % below
    ///   it, and every load is divided among the flows sharing an input;
    /// - a sending time short enough for [`MAX_RUN_FRAMES`] at the highest rate any
    ///   variant offers (closed loops and the sender at their input's line rate).
    pub(super) fn build(&self, model: Value) -> Case {
        let mut model = model;
        let (mut flows, closed, pps, fracs) = match &self.stress {
            Some(st) => {
                st.apply(&mut model);
                let fracs = self.fracs.iter().map(|f| 0.85 + 0.15 * f).collect();
                (st.flows(self.flows.len()), false, false, fracs)
            }
            None => (
                self.flows.clone(),
                self.closed,
                self.pps,
                self.fracs.clone(),
            ),
        };
        if self.only_sender && self.stress.is_none() && model.get("sender").is_some() {
            flows.clear();
        }
        let keep_sender = flows.is_empty();
        let mut base = model.clone();
        for e in &self.overrides {
            e.apply(&mut base, keep_sender);
        }
        let variants: Option<Vec<Value>> = self.variants.as_ref().map(|vs| {
            vs.iter()
                .map(|edits| {
                    let mut m = base.clone();
                    for e in edits {
                        e.apply(&mut m, keep_sender);
                    }
                    m
                })
                .collect()
        });
        let mut variants = variants;
        // A link watch is modelled for NICs with one queue only (`ModelConfig::validate`):
        // whichever edit gave a watched NIC queues, or a multi-queue NIC a watch, the
        // watch goes (in the model file, after the overrides, in every variant).
        {
            let mut all: Vec<&mut Value> = vec![&mut model, &mut base];
            all.extend(variants.iter_mut().flatten());
            for m in all {
                for n in m["nics"].as_array_mut().into_iter().flatten() {
                    if n["queues"].as_u64().unwrap_or(1) > 1 {
                        set_or_remove(&mut n["driver"], "link_watch", &None);
                    }
                }
            }
        }
        // With `lean`, a NIC that no flow enters or leaves and no sender uses (in the
        // model file, after the overrides, in every variant) is given no handler costs:
        // the loader requires only the costs of the paths a NIC takes (`check_roles`).
        if self.lean {
            let mut all: Vec<&mut Value> = vec![&mut model, &mut base];
            all.extend(variants.iter_mut().flatten());
            let idle: Vec<usize> = (0..NICS.len())
                .filter(|&i| {
                    flows.iter().all(|f| f.from != i && f.to != i)
                        && all.iter().all(|m| m["sender"]["nic"] != NICS[i])
                })
                .collect();
            for m in all {
                for &i in &idle {
                    let d = &mut m["nics"][i]["driver"];
                    for c in ["isr_entry", "rx_per_packet", "isr_exit"] {
                        set_or_remove(d, c, &None);
                    }
                    if d.as_object().is_some_and(|o| o.is_empty()) {
                        set_or_remove(&mut m["nics"][i], "driver", &None);
                    }
                }
            }
        }
        let runs: Vec<Value> = variants.clone().unwrap_or_else(|| vec![base.clone()]);
        let mean_bytes = |f: &FlowDraw| {
            serde_json::from_value::<irqsim::model::traffic::FrameSize>(f.bytes.clone())
                .expect("frame size")
                .mean_bytes()
        };
        let fps = |m: &Value, f: &FlowDraw| {
            m["nics"][f.from]["line_rate_bps"]
                .as_f64()
                .expect("line rate")
                / ((mean_bytes(f) + 20.0) * 8.0)
        };
        let lo = |f: &FlowDraw| runs.iter().map(|m| fps(m, f)).fold(f64::INFINITY, f64::min);
        let hi = |f: &FlowDraw| runs.iter().map(|m| fps(m, f)).fold(0.0, f64::max);

        let n = self.npoints;
        // Flows into one NIC share its input wire: the loader refuses more than its line
        // rate in all (unless `allow_overload`), so each of the `crowd` flows into a NIC
        // gets at most its share, and the swept load is scaled by the largest crowd.
        let crowd = |i: usize| flows.iter().filter(|f| f.from == i).count().max(1) as f64;
        let crowd_max = (0..NICS.len()).map(crowd).fold(1.0, f64::max);
        let swept: Vec<&FlowDraw> = flows
            .iter()
            .filter(|f| closed || f.fixed.is_none())
            .collect();
        let (unit, values): (&str, Vec<f64>) = if closed {
            (
                "outstanding",
                self.outstanding[..n].iter().map(|&x| x as f64).collect(),
            )
        } else if pps {
            let min_fps = swept.iter().map(|f| lo(f)).fold(f64::INFINITY, f64::min);
            let min_fps = if min_fps.is_finite() {
                min_fps
            } else {
                1_000.0
            };
            (
                "pps",
                fracs[..n]
                    .iter()
                    .map(|x| round3(x * 0.999 * min_fps / crowd_max))
                    .collect(),
            )
        } else {
            let top = if self.overload { 150.0 } else { 100.0 };
            (
                "percent",
                fracs[..n]
                    .iter()
                    .map(|x| round3(x * top / crowd_max).min(top))
                    .collect(),
            )
        };
        // The loader refuses a load point given twice (issue 53): each once.
        let mut seen: Vec<f64> = Vec::new();
        let mut values = values;
        values.retain(|v| {
            let new = !seen.contains(v);
            if new {
                seen.push(*v);
            }
            new
        });
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let load = match (self.range, sorted.first(), sorted.last()) {
            (true, Some(&a), Some(&b)) if n >= 2 && b - a > 0.01 => {
                json!({ "unit": unit, "from": a, "to": b, "step": (b - a) / (n - 1) as f64 })
            }
            _ => json!({ "unit": unit, "points": values }),
        };
        let top = sorted.last().copied().unwrap_or(0.0);

        // The highest rate of each flow in any variant, and the sending time.
        let mut total_fps = 0.0;
        // The lowest rate of any open-loop flow at any point [frames/s].
        let mut min_fps = f64::INFINITY;
        let mut flows_json = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            let mut j = json!({ "from": NICS[f.from], "to": NICS[f.to], "frame_bytes": f.bytes });
            // Two unnamed flows of one path would share the name `<from>-<to>`, which
            // the loader refuses (issue 53): the second is named.
            let same_path = flows[..i]
                .iter()
                .any(|g| !g.named && (g.from, g.to) == (f.from, f.to));
            if f.named || same_path {
                j["name"] = json!(format!("f{i}"));
            }
            let rate = if closed {
                j["arrivals"] = json!("closed-loop");
                if f.turnaround_ns > 0 {
                    j["turnaround_ns"] = json!(f.turnaround_ns);
                }
                hi(f)
            } else {
                if f.poisson {
                    j["arrivals"] = json!("poisson");
                } else {
                    if let Some(p) = &f.phase {
                        j["start_phase"] = p.clone();
                    }
                    if let Some(p) = &f.ppm {
                        j["clock_ppm"] = p.clone();
                    }
                }
                let bottom = sorted.first().copied().unwrap_or(0.0);
                match (f.fixed, unit) {
                    (Some(x), _) => {
                        let r = round3(x * 0.999 * lo(f) / crowd(f.from));
                        j["rate_pps"] = json!(r);
                        min_fps = min_fps.min(r);
                        r
                    }
                    (None, "pps") => {
                        min_fps = min_fps.min(bottom);
                        top
                    }
                    (None, _) => {
                        min_fps = min_fps.min(bottom / 100.0 * lo(f));
                        top / 100.0 * hi(f)
                    }
                }
            };
            total_fps += rate;
            flows_json.push(j);
        }
        total_fps += runs
            .iter()
            .filter_map(|m| m.get("sender").map(|s| sender_line_fps(m, s)))
            .fold(0.0, f64::max);
        let secs = (self.duration_ns as f64 * 1e-9).min(MAX_RUN_FRAMES / total_fps.max(1.0));
        let secs = (secs * 1e9).round().max(1_000.0) / 1e9;
        // Every flow sends at least one frame at every point (the loader refuses a flow
        // that sends none in the run).
        let secs = if min_fps.is_finite() && min_fps > 0.0 && secs * min_fps < 1.0 {
            (1e9 / min_fps).ceil() / 1e9
        } else {
            secs
        };

        let mut sc = json!({
            "description": "generated by tests/it/properties.rs",
            "model": "../models/generated.json",
            "workload": { "flows": flows_json },
            "load": load,
            "duration_s": secs,
            "drain_s": self.drain_ns as f64 * 1e-9,
            "seed": self.seed,
            "replications": self.replications,
        });
        if !self.overrides.is_empty() {
            sc["overrides"] = patch_between(&model, &base);
        }
        if let Some(vs) = &variants {
            sc["variants"] = json!(
                vs.iter()
                    .zip(self.variants.as_ref().expect("variants"))
                    .enumerate()
                    .map(|(i, (m, edits))| {
                        let mut v = json!({ "name": format!("v{i}") });
                        if !edits.is_empty() {
                            v["overrides"] = patch_between(&base, m);
                            v["description"] = json!(format!("{edits:?}"));
                        }
                        v
                    })
                    .collect::<Vec<_>>()
            );
        }
        if self.overload {
            sc["allow_overload"] = json!(true);
        }
        if let Some(ms) = self.timeline_ms {
            sc["timeline"] = json!({ "bucket_ms": ms });
        }
        if self.first_bit {
            sc["latency_from"] = json!("first-bit");
        }
        if self.measured {
            sc["measured"] = json!("measured/test_25Mx64x1.csv");
        }
        Case {
            model,
            scenario: sc,
            expected: runs,
        }
    }
}

/// Whole experiments: any model of [`model`] with everything in it, under a scenario of
/// [`experiment_draw`].
fn experiment() -> impl Strategy<Value = Case> {
    (model(EVERYTHING), experiment_draw()).prop_map(|(m, d)| d.build(m))
}

/// The text of a panic.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

impl Sandbox {
    /// Write the case as `models/generated.json` and `scenarios/case.json` and load it:
    /// `None` when the loader refuses it (with an error that says what is wrong, as
    /// for any input), the experiment otherwise. A panic fails the case; so does a
    /// variant whose model is not the one the scenario's patches describe.
    fn load_case(&self, case: &Case) -> Result<Option<Experiment>, TestCaseError> {
        let dir = self.dir.path();
        std::fs::write(dir.join("models/generated.json"), case.model.to_string()).expect("write");
        let path = self.scenario_path();
        std::fs::write(&path, case.scenario.to_string()).expect("write");
        let loaded = catch_unwind(AssertUnwindSafe(|| {
            let r = scenario::load(&path, &DiskFiles::default());
            let msg = r.as_ref().err().map(|e| e.to_string());
            (r, msg)
        }));
        match loaded {
            Err(p) => Err(TestCaseError::fail(format!(
                "the loader panicked: {}",
                panic_text(&*p)
            ))),
            Ok((Err(e), msg)) => {
                let msg = msg.unwrap_or_default();
                clean_error(&e, &msg)
                    .map_err(|why| TestCaseError::fail(format!("{why}: {e:?}")))?;
                REFUSED.with(|r| r.borrow_mut().push(msg));
                Ok(None)
            }
            Ok((Ok(exp), _)) => {
                for (v, want) in exp.variants.iter().zip(&case.expected) {
                    let want: ModelConfig = serde_json::from_value(want.clone())
                        .map_err(|e| TestCaseError::fail(format!("expected model: {e}")))?;
                    if v.model != want {
                        return Err(TestCaseError::fail(format!(
                            "variant `{}`: the loaded model is not the one its patches describe\nloaded: {:?}\nwanted: {:?}",
                            v.name, v.model, want
                        )));
                    }
                }
                Ok(Some(exp))
            }
        }
    }
}

thread_local! {
    /// Errors of the generated scenarios the loader refused, in this thread.
    static REFUSED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Run a sweep, failing the case on a panic or an error (a run that breaks an invariant,
/// or one the runner refuses though the loader accepted it).
pub(super) fn sweep(
    what: &str,
    f: impl FnOnce() -> Result<Results, irqsim::experiment::runner::RunError>,
) -> Result<Results, TestCaseError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Err(p) => Err(TestCaseError::fail(format!(
            "{what} panicked: {}",
            panic_text(&*p)
        ))),
        Ok(Err(e)) => Err(TestCaseError::fail(format!("{what} failed: {e}"))),
        Ok(Ok(r)) => Ok(r),
    }
}

/// Run `test` on `n` generated experiments (or `PROPTEST_CASES`) that load, in a sandbox
/// of the repository layout; fail on the first failing case, shrunk, printed with its
/// model and scenario files. At least 90 % of the generated scenarios must load:
/// otherwise the generator tests the loader's error path, not the runner.
fn for_experiments<X: Strategy>(
    n: u32,
    extra: X,
    test: impl Fn(&Sandbox, &Case, Experiment, X::Value) -> Result<(), TestCaseError>,
) {
    for_cases(n, experiment(), extra, test)
}

/// [`for_experiments`] over the cases of `draws` (another generator of experiments).
pub(super) fn for_cases<X: Strategy>(
    n: u32,
    draws: impl Strategy<Value = Case>,
    extra: X,
    test: impl Fn(&Sandbox, &Case, Experiment, X::Value) -> Result<(), TestCaseError>,
) {
    let sb = Sandbox::new();
    let cases = std::cell::Cell::new(0u32);
    REFUSED.with(|r| r.borrow_mut().clear());
    let mut runner = proptest::test_runner::TestRunner::new(config(n));
    let result = runner.run(&(draws, extra), |(case, x)| {
        cases.set(cases.get() + 1);
        match sb.load_case(&case) {
            Err(e) => Err(e),
            Ok(None) => Ok(()),
            Ok(Some(exp)) => test(&sb, &case, exp, x),
        }
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let refused = REFUSED.with(|r| r.borrow().clone());
    eprintln!(
        "{} of {} generated experiments loaded",
        cases.get() as usize - refused.len(),
        cases.get()
    );
    assert!(
        refused.len() * 10 <= cases.get() as usize,
        "the loader refused {} of {} generated experiments, e.g.:\n{}",
        refused.len(),
        cases.get(),
        refused
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Whether two figures agree up to the rounding of means over replications.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Sum of every number in a JSON value (the drops by site, whatever the sites are).
fn sum_numbers(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::Array(a) => a.iter().map(sum_numbers).sum(),
        Value::Object(o) => o.values().map(sum_numbers).sum(),
        _ => 0.0,
    }
}

/// The path of a `null` (a figure that was not a finite number) in `v`, if any.
fn find_null(v: &Value, at: &str) -> Option<String> {
    match v {
        Value::Null => Some(at.to_string()),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| find_null(x, &format!("{at}[{i}]"))),
        Value::Object(o) => o
            .iter()
            .find_map(|(k, x)| find_null(x, &format!("{at}.{k}"))),
        _ => None,
    }
}

/// The books of one row of the results (a flow or the total), means over `reps`
/// replications: sent = received + lost, lost = drops + in flight, in flight a whole
/// number of frames per replication within `bound`.
fn check_row(f: &irqsim::results::FlowResult, reps: f64, bound: f64) -> Result<(), String> {
    let drops = sum_numbers(&serde_json::to_value(&f.drops).expect("drops"));
    let all = [
        f.sent,
        f.received,
        f.lost,
        f.in_flight_at_end,
        f.loss_pct,
        drops,
    ];
    if !all.iter().all(|x| x.is_finite() && *x >= 0.0) {
        return Err(format!("a negative or non-finite count: {f:?}"));
    }
    if !close(f.sent, f.received + f.lost) {
        return Err(format!(
            "sent {} != received {} + lost {}",
            f.sent, f.received, f.lost
        ));
    }
    if !close(f.lost, drops + f.in_flight_at_end) {
        return Err(format!(
            "lost {} != drops {} + in flight {}: {:?}",
            f.lost, drops, f.in_flight_at_end, f.drops
        ));
    }
    let whole = f.in_flight_at_end * reps;
    if (whole - whole.round()).abs() > 1e-6 || f.in_flight_at_end > bound {
        return Err(format!(
            "in flight at the end {} (x {reps} replications) is not a whole number of frames \
             within what the host can hold ({bound})",
            f.in_flight_at_end
        ));
    }
    if !(0.0..=100.0 + 1e-9).contains(&f.loss_pct) {
        return Err(format!("loss {} %", f.loss_pct));
    }
    Ok(())
}

/// The books of a whole sweep (see `experiments_keep_their_books`).
pub(super) fn check_results(exp: &Experiment, r: &Results) -> Result<(), String> {
    let np = exp.npoints();
    if r.points.len() != exp.variants.len() * np {
        return Err(format!(
            "{} points for {} variants x {np} load points",
            r.points.len(),
            exp.variants.len()
        ));
    }
    let reps = exp.replications as f64;
    for (k, p) in r.points.iter().enumerate() {
        let v = &exp.variants[k / np];
        let at = format!("variant `{}`, point {} ({} %)", v.name, k % np, p.load_pct);
        let fail = |why: String| format!("{at}: {why}");
        if p.variant != v.name || p.replications != exp.replications {
            return Err(fail(format!(
                "labelled `{}` x {}",
                p.variant, p.replications
            )));
        }
        if p.ci95.is_some() != (exp.replications > 1) {
            return Err(fail(
                "confidence intervals without replications, or none with".into(),
            ));
        }
        let value = serde_json::to_value(p).expect("point");
        if let Some(path) = find_null(&value, "point") {
            return Err(fail(format!("{path} is not a number")));
        }
        let cfg = &v.model;
        let bound = (capacity(cfg) + v.flows.len() as u64 + cfg.nics.len() as u64) as f64;
        let fig = &p.figures;
        let want = v.flows.len() + cfg.sender.is_some() as usize;
        if fig.flows.len() != want {
            return Err(fail(format!(
                "{} flow rows, {want} expected",
                fig.flows.len()
            )));
        }
        for row in fig.flows.iter().chain([&fig.total]) {
            check_row(row, reps, bound)
                .map_err(|why| fail(format!("flow `{}`: {why}", row.name)))?;
        }
        let t = &fig.total;
        let sum =
            |g: &dyn Fn(&irqsim::results::FlowResult) -> f64| fig.flows.iter().map(g).sum::<f64>();
        let drops = |f: &irqsim::results::FlowResult| {
            sum_numbers(&serde_json::to_value(&f.drops).expect("drops"))
        };
        let pairs = [
            ("sent", t.sent, sum(&|f| f.sent)),
            ("received", t.received, sum(&|f| f.received)),
            ("lost", t.lost, sum(&|f| f.lost)),
            (
                "in flight",
                t.in_flight_at_end,
                sum(&|f| f.in_flight_at_end),
            ),
            ("drops", drops(t), sum(&drops)),
        ];
        for (name, total, flows) in pairs {
            if !close(total, flows) {
                return Err(fail(format!(
                    "total {name} {total} != sum over flows {flows}"
                )));
            }
        }
        let c = &fig.cpu;
        let parts = [c.interrupt, c.softirq, c.kernel, c.user, c.idle];
        if !parts.iter().all(|x| (0.0..=1.0 + 1e-12).contains(x))
            || (parts.iter().sum::<f64>() - 1.0).abs() > 1e-9
        {
            return Err(fail(format!("CPU fractions do not add up to 1: {c:?}")));
        }
        check_cores(cfg.cpu.cores as usize, &fig.cpu, &fig.cores).map_err(fail)?;
        if let Some(why) = too_many_underruns(cfg, &fig.counters) {
            return Err(fail(why));
        }
    }
    Ok(())
}

/// Whole experiments -- any model, with a bus, shared interrupt lines, link watch,
/// transmit completions, a sender, a user process, moderation, statistics counters,
/// hardclock and every policy; constant, Poisson, fixed-rate and closed-loop flows;
/// overrides, 1-3 variants, 1-3 replications and load points -- load, and run through
/// `runner::run` without a panic or an error, and their results keep the books: in
/// every point, for every flow and the total, sent = received + lost and lost = drops
/// at every site + in flight at the end; in flight is a whole number of frames per
/// replication no larger than what the host can hold; the total row is the sum of the
/// flow rows; the CPU fractions add up to 1 (on a host with several cores each core's
/// too, the host's being their mean: `check_cores`); every figure is a number; no NIC
/// has more transmit underruns than it has transmit thresholds (none at all in
/// store-and-forward, `tx_thresholds_bytes: []`), nor more than one beyond the steps
/// its threshold was raised; each variant's model is what the scenario's patches make
/// of the model file.
///
/// Why it must hold: the loader validates everything a run depends on and the runner
/// simulates only validated experiments, so a run has no reason to fail; a failure
/// (`SimError::Invariant`) is the model catching itself losing a frame or putting two
/// frames on one wire. Underruns: see `too_many_underruns`. Per run,
/// `Host::finish` computes in flight as sent - received - drops of frames that are each
/// in one place (see `packets_are_conserved`), `lost` is sent - received, and the CPU
/// buckets tile the sending time (see `cpu_time_adds_up_to_the_sending_time`); the
/// results hold means over replications of these integers and fractions, which keep
/// the same linear relations up to rounding. A wrapped subtraction would show up as an
/// in-flight count near 1.8e19. The merge patches are built from the two models
/// (`patch_between`), so applying them must give the second.
#[test]
fn experiments_keep_their_books() {
    for_experiments(128, Just(()), |_, _, exp, ()| {
        let r = sweep("the sweep", || {
            irqsim::experiment::runner::run(&exp, 1, &|| {})
        })?;
        check_results(&exp, &r).map_err(TestCaseError::fail)
    });
}

/// The results JSON of a whole experiment is byte for byte the same on 1 and 2 threads.
///
/// Why it must hold: every run draws only from streams keyed by (seed, point,
/// replication, stream name) and shares no state with another run; the runner puts each
/// run's figures in its own slot and aggregates them in sweep order, so the number of
/// threads changes only the order in which runs finish. (Section 3 checks this on one
/// Poisson scenario; this checks it on every mechanism.)
#[test]
fn experiments_give_the_same_bytes_on_1_and_2_threads() {
    for_experiments(64, Just(()), |_, _, exp, ()| {
        same_bytes_on_1_and_2_threads(&exp)
    });
}

/// Fail unless `exp` gives byte for byte the same results JSON on 1 and 2 threads (see
/// `experiments_give_the_same_bytes_on_1_and_2_threads`).
pub(super) fn same_bytes_on_1_and_2_threads(exp: &Experiment) -> Result<(), TestCaseError> {
    let one = sweep("the sweep on 1 thread", || {
        irqsim::experiment::runner::run(exp, 1, &|| {})
    })?;
    let two = sweep("the sweep on 2 threads", || {
        irqsim::experiment::runner::run(exp, 2, &|| {})
    })?;
    let (a, b) = (one.to_json(), two.to_json());
    if a != b {
        return Err(TestCaseError::fail(format!(
            "1 and 2 threads differ:\n{}",
            first_difference(&a, &b)
        )));
    }
    Ok(())
}

/// The first line where two texts differ, with its neighbours.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    let from = i.saturating_sub(3);
    format!(
        "line {}:\n  {}\nvs\n  {}",
        i + 1,
        la.get(from..(i + 1).min(la.len()))
            .unwrap_or_default()
            .join("\n  "),
        lb.get(from..(i + 1).min(lb.len()))
            .unwrap_or_default()
            .join("\n  ")
    )
}

/// A sweep stopped after any number k of its runs (the stop flag set by the k-th) and
/// resumed from its checkpoint, on 1 or 2 threads, gives byte for byte the results JSON
/// of the same sweep run without a stop; the stopped sweep reports exactly k runs done.
///
/// Why it must hold: on one thread the runner checks the stop flag before each run, so
/// it starts none after the k-th; each finished run is saved with its figures, which
/// round-trip exactly through JSON (`serde_json`'s `float_roundtrip`), and the resumed
/// sweep reloads them in place of the runs they stand for and simulates the rest with
/// the same keys (runs share no state), then aggregates in sweep order as always. The
/// checkpoint is bound to this experiment by its fingerprint, so `open(.., true)`
/// accepts it.
#[test]
fn interrupted_experiments_resume_to_the_same_bytes() {
    for_experiments(
        64,
        (any::<Index>(), 1usize..=2),
        |sb, _, exp, (at, threads)| resumes_to_the_same_bytes(sb, &exp, at, threads),
    );
}

/// Fail unless `exp`, stopped after `at` of its runs (any number from 0 to all) and
/// resumed from its checkpoint on `threads` threads, gives the bytes of the sweep run
/// without a stop (see `interrupted_experiments_resume_to_the_same_bytes`).
pub(super) fn resumes_to_the_same_bytes(
    sb: &Sandbox,
    exp: &Experiment,
    at: Index,
    threads: usize,
) -> Result<(), TestCaseError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    let io = |e: irqsim::experiment::checkpoint::CheckpointError| {
        TestCaseError::fail(format!("checkpoint: {e}"))
    };
    let whole = sweep("the uninterrupted sweep", || {
        irqsim::experiment::runner::run(exp, 1, &|| {})
    })?;
    let total = exp.variants.len() * exp.npoints() * exp.replications as usize;
    let k = at.index(total + 1);
    let out = sb.dir.path().join("out");
    let ckpt = Checkpoint::open(
        &out,
        exp,
        false,
        &irqsim::config::read_limit::ReadBudget::command(),
    )
    .map_err(io)?;
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(k == 0);
    let on_done = || {
        if done.fetch_add(1, SeqCst) + 1 >= k {
            stop.store(true, SeqCst);
        }
    };
    let first = catch_unwind(AssertUnwindSafe(|| {
        irqsim::experiment::runner::run_with(exp, 1, &on_done, Some(&ckpt), Some(&stop))
    }));
    match first {
        Err(p) => {
            return Err(TestCaseError::fail(format!(
                "the stopped sweep panicked: {}",
                panic_text(&*p)
            )));
        }
        Ok(Ok(_)) if k == total => {}
        Ok(Err(irqsim::experiment::runner::RunError::Interrupted { done, total: t }))
            if done == k && t == total => {}
        Ok(r) => {
            return Err(TestCaseError::fail(format!(
                "stopped after {k} of {total} runs, the sweep gave {:?}",
                r.map(|_| "complete results")
            )));
        }
    }
    let ckpt = Checkpoint::open(
        &out,
        exp,
        true,
        &irqsim::config::read_limit::ReadBudget::command(),
    )
    .map_err(io)?;
    let resumed = sweep("the resumed sweep", || {
        irqsim::experiment::runner::run_with(exp, threads, &|| {}, Some(&ckpt), None)
    })?;
    let (a, b) = (whole.to_json(), resumed.to_json());
    if a != b {
        return Err(TestCaseError::fail(format!(
            "stopped after {k} of {total} runs and resumed on {threads} thread(s), the results differ:\n{}",
            first_difference(&a, &b)
        )));
    }
    Ok(())
}
