//! advise.txt (the findings and the proposals in words, with the commands) and
//! advise.json ([`super::Advice`] as it is: the same content for a script).

use super::predict::Predicted;
use super::{Advice, Outcome};
use crate::config::import::dump::escape;

/// A prediction on one line.
pub fn figures(p: &Predicted) -> String {
    format!(
        "loss {:.3} %, ring drops {:.0}/s, backlog drops {:.0}/s, time_squeeze {:.0}/s, \
         {:.0} interrupts/s, CPU {:.2} cores busy (busiest core {:.0} %), p99 {:.1} us",
        p.loss_pct,
        p.ring_drops_per_s,
        p.backlog_drops_per_s,
        p.time_squeeze_per_s,
        p.interrupts_per_s,
        p.cpu_cores_busy,
        p.busiest_core_pct,
        p.p99_us
    )
}

fn outcome(s: &mut String, i: usize, o: &Outcome) {
    s.push_str(&format!(
        "  {}. [{}] {}\n",
        i + 1,
        serde_json::to_value(o.kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        o.what
    ));
    for (j, t) in o.candidates.iter().enumerate() {
        let ch: Vec<String> = t
            .changes
            .iter()
            .map(|c| format!("{} {} -> {}", c.knob, c.old, c.new))
            .collect();
        let ch = if ch.len() > 2 {
            format!("{} and {} more", ch[..2].join(", "), ch.len() - 2)
        } else {
            ch.join(", ")
        };
        s.push_str(&format!(
            "     {} {}: {}\n        {}\n",
            if j == o.chosen { "*" } else { " " },
            j + 1,
            ch,
            figures(&t.predicted)
        ));
    }
    let chosen = &o.candidates[o.chosen];
    s.push_str(&format!(
        "     chosen: candidate {} ({} in the model{})\n     commands:\n",
        o.chosen + 1,
        if o.removes {
            "removes the finding"
        } else {
            "does NOT remove the finding; the nearest of those tried"
        },
        if o.reproduced {
            ""
        } else {
            "; the model as given does not show the finding, so this is not a test of it"
        }
    ));
    for c in &chosen.changes {
        s.push_str(&format!("       {}\n", c.command));
    }
}

/// advise.txt.
pub fn text(a: &Advice) -> String {
    let mut s = format!("irqsim advise {}\n", escape(&a.dir));
    s.push_str(&format!(
        "interval: {:.3} s (from {})\n",
        a.interval_s,
        escape(&a.interval_from)
    ));
    s.push_str(&format!("model: {}\n", escape(&a.model)));
    for n in &a.notes {
        s.push_str(&format!("note: {}\n", escape(n)));
    }
    let offered: f64 = a.load.flows.iter().map(|f| f.pps).sum();
    s.push_str(&format!(
        "load measured: {:.0} frames/s offered in all, {}-byte frames (mean); {}\n",
        offered,
        a.load.frame_bytes,
        a.load
            .split
            .iter()
            .map(|(n, w)| format!("{n} split {w}"))
            .collect::<Vec<_>>()
            .join("; ")
    ));
    if a.findings.is_empty() {
        s.push_str("findings: none (no counter shows a fault this command knows)\n");
    } else {
        s.push_str(&format!("findings ({}):\n", a.findings.len()));
    }
    for (i, f) in a.findings.iter().enumerate() {
        s.push_str(&format!(
            "  {}. [{}] {}\n",
            i + 1,
            serde_json::to_value(f.kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            escape(&f.text)
        ));
        for e in f.rests_on.iter().take(12) {
            s.push_str(&format!(
                "     {}: {} +{} ({:.1}/s)\n",
                escape(&e.file),
                escape(&e.counter),
                e.increase,
                e.per_s
            ));
        }
        if f.rests_on.len() > 12 {
            s.push_str(&format!(
                "     ... and {} more counters (advise.json has them all)\n",
                f.rests_on.len() - 12
            ));
        }
    }
    match &a.as_given {
        Some(p) => {
            s.push_str(&format!(
                "the model at the measured load ({} s of load, Poisson arrivals):\n  as given: {}\n",
                a.duration_s,
                figures(p)
            ));
            if a.proposals.is_empty() {
                s.push_str("proposals: none\n");
            } else {
                s.push_str(&format!(
                    "proposals ({}; each candidate run in the model, * the one chosen):\n",
                    a.proposals.len()
                ));
            }
            for (i, o) in a.proposals.iter().enumerate() {
                outcome(&mut s, i, o);
            }
        }
        None => s.push_str("predictions: none (see the notes)\n"),
    }
    s
}
