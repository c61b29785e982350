//! CPU costs: how long a piece of kernel work takes, as a constant or a distribution.
//!
//! In a model file a cost is written as
//!
//! | JSON                                                  | meaning                          |
//! |-------------------------------------------------------|----------------------------------|
//! | `2500`                                                | constant, nanoseconds            |
//! | `{"ns": 2500}`                                        | constant, nanoseconds            |
//! | `{"cycles": 1120}`                                    | constant, CPU cycles at `cpu.clock_mhz` |
//! | `{"dist": "exponential", "mean_ns": 5000}`            | exponential (rand_distr `Exp`)   |
//! | `{"dist": "uniform", "min_ns": 1000, "max_ns": 3000}` | uniform on [min, max]            |
//! | `{"dist": "normal", "mean_ns": 5000, "stddev_ns": 500}` | normal, negative draws clipped to 0 |
//! | `{"dist": "lognormal", "mean_ns": 5000, "stddev_ns": 500}` | log-normal with that mean and stddev |
//!
//! `dist` may also be `"constant"` (the default). Cycle counts convert at the model's CPU
//! clock, so a profile can be re-clocked by changing one number.

use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use rand_distr::{Distribution, Exp, LogNormal, Normal, Uniform};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Shape of a cost distribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DistKind {
    /// Always the same value (`ns` or `cycles`).
    #[default]
    Constant,
    /// Exponential with mean `mean_ns`.
    Exponential,
    /// Uniform on [`min_ns`, `max_ns`].
    Uniform,
    /// Normal with `mean_ns` and `stddev_ns`, clipped at zero.
    Normal,
    /// Log-normal with the given `mean_ns` and `stddev_ns` (of the cost itself).
    Lognormal,
}

/// A cost as written in a model file (see the module doc). Every field is in
/// nanoseconds except `cycles`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostSpec {
    /// Distribution shape; `constant` when absent.
    #[serde(default, skip_serializing_if = "is_constant")]
    pub dist: DistKind,
    /// Constant cost \[ns\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub ns: Option<f64>,
    /// Constant cost [CPU cycles], converted at `cpu.clock_mhz`: at most 1e9 (1,000 s
    /// at the lowest clock, 1 MHz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = crate::sim::limits::MAX_COST_CYCLES))]
    pub cycles: Option<f64>,
    /// Mean \[ns\] (exponential, normal, lognormal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub mean_ns: Option<f64>,
    /// Standard deviation \[ns\] (normal, lognormal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub stddev_ns: Option<f64>,
    /// Lower bound \[ns\] (uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub min_ns: Option<f64>,
    /// Upper bound \[ns\] (uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub max_ns: Option<f64>,
}

fn is_constant(d: &DistKind) -> bool {
    *d == DistKind::Constant
}

/// A cost parameter: either a bare number of nanoseconds or a [`CostSpec`] object.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct CostParam(pub CostSpec);

impl Default for CostParam {
    /// A cost of zero.
    fn default() -> Self {
        CostParam::ns(0.0)
    }
}

impl CostParam {
    /// A constant cost of `ns` nanoseconds.
    pub fn ns(ns: f64) -> Self {
        CostParam(CostSpec {
            ns: Some(ns),
            ..CostSpec::default()
        })
    }

    /// Check that the fields present fit the distribution and are physically meaningful.
    /// Returns the reason for the first problem found.
    pub fn check(&self) -> Result<(), String> {
        let s = &self.0;
        let nonneg = |name: &str, v: Option<f64>| -> Result<(), String> {
            match v {
                Some(x) if !x.is_finite() || x < 0.0 => {
                    Err(format!("`{name}` must be a finite number >= 0, got {x}"))
                }
                // Cycles convert to at most the cap in ns at every accepted clock
                // (1 MHz and up): 1e9 cycles at 1 MHz are 1e12 ns.
                Some(x) if name == "cycles" && x > crate::sim::limits::MAX_COST_CYCLES => {
                    Err(format!(
                        "`cycles` must be at most {:e} ({:e} ns at the lowest accepted clock, {} MHz), got {x}",
                        crate::sim::limits::MAX_COST_CYCLES,
                        crate::sim::problems::MAX_TIME_NS,
                        crate::sim::limits::MIN_CLOCK_MHZ
                    ))
                }
                Some(x) if x > crate::sim::problems::MAX_TIME_NS => Err(format!(
                    "`{name}` must be at most {:e}, got {x}",
                    crate::sim::problems::MAX_TIME_NS
                )),
                _ => Ok(()),
            }
        };
        for (n, v) in [
            ("ns", s.ns),
            ("cycles", s.cycles),
            ("mean_ns", s.mean_ns),
            ("stddev_ns", s.stddev_ns),
            ("min_ns", s.min_ns),
            ("max_ns", s.max_ns),
        ] {
            nonneg(n, v)?;
        }
        let given: Vec<&str> = [
            ("ns", s.ns.is_some()),
            ("cycles", s.cycles.is_some()),
            ("mean_ns", s.mean_ns.is_some()),
            ("stddev_ns", s.stddev_ns.is_some()),
            ("min_ns", s.min_ns.is_some()),
            ("max_ns", s.max_ns.is_some()),
        ]
        .iter()
        .filter(|(_, g)| *g)
        .map(|(n, _)| *n)
        .collect();
        let want: &[&str] = match s.dist {
            DistKind::Constant => {
                if s.ns.is_some() == s.cycles.is_some() {
                    return Err("a constant cost needs exactly one of `ns` or `cycles`".into());
                }
                if s.ns.is_some() { &["ns"] } else { &["cycles"] }
            }
            DistKind::Exponential => &["mean_ns"],
            DistKind::Uniform => &["min_ns", "max_ns"],
            DistKind::Normal | DistKind::Lognormal => &["mean_ns", "stddev_ns"],
        };
        if given != want {
            return Err(format!(
                "a {:?} cost takes exactly the fields {:?}, got {:?}",
                s.dist, want, given
            )
            .to_lowercase());
        }
        if s.dist == DistKind::Uniform && s.min_ns > s.max_ns {
            return Err("`min_ns` is greater than `max_ns`".into());
        }
        if s.dist == DistKind::Lognormal && s.mean_ns == Some(0.0) {
            return Err("a lognormal cost needs `mean_ns` > 0".into());
        }
        Ok(())
    }

    /// Mean of the cost \[ns\] at a CPU clock of `clock_mhz`.
    pub fn mean_ns(&self, clock_mhz: f64) -> f64 {
        let s = &self.0;
        match s.dist {
            DistKind::Constant => {
                s.ns.unwrap_or_else(|| s.cycles.unwrap_or(0.0) * 1e3 / clock_mhz)
            }
            DistKind::Uniform => (s.min_ns.unwrap_or(0.0) + s.max_ns.unwrap_or(0.0)) / 2.0,
            _ => s.mean_ns.unwrap_or(0.0),
        }
    }

    /// Build the sampler. The spec must have passed [`CostParam::check`].
    pub fn build(&self, clock_mhz: f64) -> Cost {
        let s = &self.0;
        let mean = self.mean_ns(clock_mhz);
        match s.dist {
            DistKind::Constant => Cost::Constant(SimTime::from_ns_f64(mean)),
            DistKind::Exponential if mean == 0.0 => Cost::Constant(SimTime::ZERO),
            DistKind::Exponential => Cost::Exp(Exp::new(1.0 / mean).expect("checked mean")),
            DistKind::Uniform => Cost::Uniform(
                Uniform::new_inclusive(s.min_ns.unwrap_or(0.0), s.max_ns.unwrap_or(0.0))
                    .expect("checked bounds"),
            ),
            DistKind::Normal => {
                Cost::Normal(Normal::new(mean, s.stddev_ns.unwrap_or(0.0)).expect("checked stddev"))
            }
            DistKind::Lognormal => {
                let sd = s.stddev_ns.unwrap_or(0.0);
                let sigma2 = (1.0 + (sd / mean).powi(2)).ln();
                let mu = mean.ln() - sigma2 / 2.0;
                Cost::LogNormal(LogNormal::new(mu, sigma2.sqrt()).expect("checked"))
            }
        }
    }
}

impl schemars::JsonSchema for CostParam {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Cost".into()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let obj = g.subschema_for::<CostSpec>();
        schemars::json_schema!({
            "description": "A cost: a number of nanoseconds, or an object such as {\"cycles\": 1000} or {\"dist\": \"exponential\", \"mean_ns\": 5000}",
            "anyOf": [ { "type": "number", "minimum": 0, "maximum": crate::sim::problems::MAX_TIME_NS }, obj ]
        })
    }
}

impl<'de> Deserialize<'de> for CostParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CostParam;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a cost: a number of nanoseconds or an object such as {\"cycles\": 1000} or {\"dist\": \"exponential\", \"mean_ns\": 5000}")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<CostParam, E> {
                Ok(CostParam::ns(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CostParam, E> {
                Ok(CostParam::ns(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CostParam, E> {
                Ok(CostParam::ns(v as f64))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<CostParam, A::Error> {
                CostSpec::deserialize(de::value::MapAccessDeserializer::new(m)).map(CostParam)
            }
        }
        d.deserialize_any(V)
    }
}

/// A cost ready to sample, in simulated time.
#[derive(Clone, Debug)]
pub enum Cost {
    /// Always this long.
    Constant(SimTime),
    /// Exponential, parameterised in ns.
    Exp(Exp<f64>),
    /// Uniform, bounds in ns.
    Uniform(Uniform<f64>),
    /// Normal in ns, clipped at zero.
    Normal(Normal<f64>),
    /// Log-normal in ns.
    LogNormal(LogNormal<f64>),
}

impl Cost {
    /// Draw one duration. Constant costs do not touch the stream.
    #[inline(always)]
    pub fn sample(&self, rng: &mut StreamRng) -> SimTime {
        match self {
            Cost::Constant(t) => *t,
            _ => self.sample_random(rng),
        }
    }

    /// The random forms, out of line so that the constant case inlines to a load.
    #[inline(never)]
    fn sample_random(&self, rng: &mut StreamRng) -> SimTime {
        match self {
            Cost::Constant(t) => *t,
            Cost::Exp(d) => SimTime::from_ns_f64(d.sample(rng)),
            Cost::Uniform(d) => SimTime::from_ns_f64(d.sample(rng)),
            Cost::Normal(d) => SimTime::from_ns_f64(d.sample(rng)),
            Cost::LogNormal(d) => SimTime::from_ns_f64(d.sample(rng)),
        }
    }

    /// Whether sampling never varies.
    pub fn is_constant(&self) -> bool {
        matches!(self, Cost::Constant(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> CostParam {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn forms_parse_and_convert() {
        assert_eq!(parse("2500").mean_ns(448.0), 2500.0);
        // 448 cycles at 448 MHz = 1000 ns.
        assert!((parse(r#"{"cycles": 448}"#).mean_ns(448.0) - 1000.0).abs() < 1e-9);
        let e = parse(r#"{"dist": "exponential", "mean_ns": 5000}"#);
        assert!(e.check().is_ok());
        assert!(matches!(e.build(1000.0), Cost::Exp(_)));
    }

    #[test]
    fn bad_costs_are_rejected_with_a_reason() {
        assert!(parse("-1").check().unwrap_err().contains(">= 0"));
        assert!(
            parse(r#"{"dist": "uniform", "min_ns": 1}"#)
                .check()
                .is_err()
        );
        assert!(parse(r#"{"ns": 1, "cycles": 2}"#).check().is_err());
        assert!(serde_json::from_str::<CostParam>(r#"{"nss": 1}"#).is_err());
    }

    #[test]
    fn a_cost_in_cycles_stays_within_the_cap_at_every_accepted_clock() {
        use crate::sim::limits::{MAX_CLOCK_MHZ, MAX_COST_CYCLES, MIN_CLOCK_MHZ};
        use crate::sim::problems::MAX_TIME_NS;
        // The most cycles accepted, at the lowest clock accepted: exactly the cap in ns
        // (2,321 cycles at 1e-6 MHz were 2.3e12 ns and accepted).
        let most = parse(r#"{"cycles": 1e9}"#);
        assert!(most.check().is_ok());
        assert_eq!(most.mean_ns(MIN_CLOCK_MHZ), MAX_TIME_NS);
        assert!(most.mean_ns(MAX_CLOCK_MHZ) <= MAX_TIME_NS);
        assert_eq!(MAX_COST_CYCLES, 1e9);
        let e = parse(r#"{"cycles": 1000000001}"#).check().unwrap_err();
        assert!(e.contains("`cycles` must be at most 1e9"), "{e}");
    }

    #[test]
    fn exponential_mean_is_right() {
        // Sample mean of 200k draws: standard error 5000/sqrt(2e5) = 11 ns; allow 5 sigma.
        let c = parse(r#"{"dist": "exponential", "mean_ns": 5000}"#).build(1000.0);
        let mut rng = crate::sim::rng::RunKey::single(1).stream("t");
        let n = 200_000;
        let sum: f64 = (0..n).map(|_| c.sample(&mut rng).as_ns_f64()).sum();
        assert!((sum / n as f64 - 5000.0).abs() < 56.0);
    }
}
