//! The Chrome trace-event format (JSON object form), as Perfetto's UI and
//! chrome://tracing read it.
//!
//! The file is `{"displayTimeUnit": "ns", "otherData": {...}, "traceEvents": [...]}`.
//! Events used: `M` (process and track names, track order), `X` (complete slices: CPU
//! bursts, frames on wires), `C` (counters: queue occupancy), `i` (instants, thread
//! scope: drops, resets), `s`/`t`/`f` (flow arrows, `"bp": "e"` on the last).
//!
//! **Flow binding.** Perfetto binds a flow point to the slice open on its thread at its
//! time (the enclosing one for `"bp": "e"`); Chrome DevTools' trace engine binds it to
//! the event with the same `cat`, `pid`, `tid` and `ts`, and both group the points of
//! one arrow by `cat`, `name` and `id`. So every point of an arrow sits at the *start*
//! of the slice it binds to, and slices and arrows share one category, `host` (CPU
//! slices are told from wire slices by their track, `thread_name` `cpu0 ...` against
//! `<nic> wire in` / `<nic> wire out`). Arrows are written after every slice, so a
//! reader that sorts events by time stably sees the slice begin before the point bound
//! to its start. Times (`ts`, `dur`) are microseconds written
//! with six decimals, exact to the picosecond of the simulation.
//!
//! **Processes and tracks.** On a host with one core, one process (`pid` 1, the host);
//! one thread id per track, in this order: the CPU levels from the clock down, the
//! kernel's events, then per NIC its events, its input wire and its output wire. On a
//! host with several cores the host's process (`pid` 1) keeps the kernel's events, the
//! NICs' (each queue of a multi-queue NIC is a device of its own, with its wires) and
//! the counters, and each core `c` is a process of its own (`pid` 2 + `c`, named
//! `cpu<c>`) with its level tracks, thread ids `1000 (c + 1) + k`: the clock, hardirq,
//! softirq, softclock, kernel threads, then (on NAPI hosts) the normal-priority kernel
//! threads of the User level, `ksoftirqd` and the NAPI threads, on tracks of their own,
//! then the user process and the idle loop. Thread ids are unique across processes.

use super::{Layout, Queue};
use crate::model::cpu::Level;
use crate::sim::time::SimTime;
use std::fmt::Write as _;

/// A track of the trace (a thread id in the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// A CPU level.
    Level(Level),
    /// The kernel's events (drops on ipintrq, the end of a cut trace).
    Kernel,
    /// NIC `0`'s events (drops at its rings and queues, resets).
    Nic(usize),
    /// Frames on NIC `0`'s input wire.
    WireIn(usize),
    /// Frames on NIC `0`'s output wire.
    WireOut(usize),
    /// A CPU level of core `core`, on a host with several cores.
    Core {
        /// The core's number.
        core: usize,
        /// The level.
        level: Level,
    },
    /// Core `0`'s ksoftirqd (a User-level kernel thread), on a host with several cores.
    Ksoftirqd(usize),
    /// Core `0`'s NAPI threads (User-level kernel threads), on a host with several cores.
    NapiThreads(usize),
}

impl Track {
    /// Its thread id (also its place in the track order).
    pub fn tid(self) -> u64 {
        match self {
            Track::Level(l) => 1 + l as u64,
            Track::Kernel => 10,
            Track::Nic(n) => 100 + 3 * n as u64,
            Track::WireIn(n) => 101 + 3 * n as u64,
            Track::WireOut(n) => 102 + 3 * n as u64,
            Track::Core { core, .. } | Track::Ksoftirqd(core) | Track::NapiThreads(core) => {
                CORE_TIDS * (core as u64 + 1) + self.order_in_core()
            }
        }
    }

    /// Its process: the host (1), or core `c`'s (2 + `c`).
    pub fn pid(self) -> u64 {
        match self {
            Track::Core { core, .. } | Track::Ksoftirqd(core) | Track::NapiThreads(core) => {
                2 + core as u64
            }
            _ => 1,
        }
    }

    /// A core track's place among its core's tracks (1..=9).
    fn order_in_core(self) -> u64 {
        match self {
            Track::Core { level, .. } => match level {
                Level::Clock => 1,
                Level::HardIrq => 2,
                Level::SoftIrq => 3,
                Level::SoftClock => 4,
                Level::Kernel => 5,
                Level::User => 8,
                Level::IdleLoop => 9,
            },
            Track::Ksoftirqd(_) => 6,
            Track::NapiThreads(_) => 7,
            _ => 0,
        }
    }
}

/// Thread ids of core `c`'s tracks are `CORE_TIDS * (c + 1) + 1..=9`.
pub const CORE_TIDS: u64 = 1000;

/// Whether thread id `tid` of a trace.json is a CPU level's track (CPU slices share the
/// category `host` with wire slices: the track tells them apart).
pub fn is_cpu_tid(tid: u64) -> bool {
    Level::ALL.iter().any(|l| Track::Level(*l).tid() == tid)
        || (tid > CORE_TIDS && (1..=9).contains(&(tid % CORE_TIDS)))
}

/// The core whose track thread id `tid` is, on a host with several cores (`None` for
/// the host's tracks, and for every track of a one-core trace).
pub fn core_of_tid(tid: u64) -> Option<usize> {
    (tid > CORE_TIDS && (1..=9).contains(&(tid % CORE_TIDS)))
        .then(|| (tid / CORE_TIDS - 1) as usize)
}

/// Time in the file's unit: microseconds, six decimals (picoseconds exact).
pub fn us(t: SimTime) -> String {
    format!("{}.{:06}", t.0 / 1_000_000, t.0 % 1_000_000)
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// Name of a queue's counter track.
pub fn queue_name(q: Queue, layout: &Layout) -> String {
    let nic = |n: usize| layout.nics.get(n).cloned().unwrap_or_default();
    match q {
        Queue::RxRing(n) => format!("{} rx ring", nic(n)),
        Queue::TxRing(n) => format!("{} tx ring", nic(n)),
        Queue::IfSnd(n) => format!("{} if_snd", nic(n)),
        Queue::Ipintrq => "ipintrq".to_string(),
        Queue::Bus => "bus requests".to_string(),
        Queue::CoreIpintrq(c) => format!("cpu{c} ipintrq"),
        Queue::Backlog(c) => format!("cpu{c} backlog"),
    }
}

/// Writes the events, counting bytes.
#[derive(Debug)]
pub struct EventWriter {
    body: String,
    /// The flow arrows' events, written after `body`.
    arrows: String,
    events: u64,
    queue_names: Vec<(Queue, String)>,
}

impl EventWriter {
    /// A writer with the metadata of `layout`'s tracks.
    pub fn new(layout: &Layout) -> EventWriter {
        let mut w = EventWriter {
            body: String::new(),
            arrows: String::new(),
            events: 0,
            queue_names: Vec::new(),
        };
        w.meta(1, None, "process_name", "irqsim host");
        if layout.cores <= 1 {
            for l in Level::ALL {
                w.track(Track::Level(l), super::level_track(l));
            }
        }
        w.track(Track::Kernel, "kernel");
        for (i, n) in layout.nics.iter().enumerate() {
            w.track(Track::Nic(i), &format!("{n} events"));
            w.track(Track::WireIn(i), &format!("{n} wire in"));
            w.track(Track::WireOut(i), &format!("{n} wire out"));
        }
        if layout.cores > 1 {
            for core in 0..layout.cores {
                let pid = 2 + core as u64;
                w.meta(pid, None, "process_name", &format!("cpu{core}"));
                w.begin();
                let _ = write!(
                    w.body,
                    "{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{pid}}}}}"
                );
                let mut tracks: Vec<Track> = Level::ALL
                    .iter()
                    .map(|&level| Track::Core { core, level })
                    .collect();
                if layout.kthreads {
                    tracks.extend([Track::Ksoftirqd(core), Track::NapiThreads(core)]);
                }
                tracks.sort_by_key(|t| t.tid());
                for t in tracks {
                    w.track(t, &super::core_track_name(t));
                }
            }
        }
        w
    }

    fn begin(&mut self) {
        if self.events > 0 {
            self.body.push_str(",\n");
        }
        self.events += 1;
    }

    fn meta(&mut self, pid: u64, tid: Option<u64>, what: &str, name: &str) {
        self.begin();
        let tid = tid.map(|t| format!(",\"tid\":{t}")).unwrap_or_default();
        let _ = write!(
            self.body,
            "{{\"ph\":\"M\",\"pid\":{pid}{tid},\"name\":\"{what}\",\"args\":{{\"name\":{}}}}}",
            quoted(name)
        );
    }

    fn track(&mut self, t: Track, name: &str) {
        self.meta(t.pid(), Some(t.tid()), "thread_name", name);
        self.begin();
        let _ = write!(
            self.body,
            "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
            t.pid(),
            t.tid(),
            t.tid()
        );
    }

    /// Name the counter track of `q`.
    pub fn counter_name(&mut self, q: Queue, layout: &Layout) {
        self.queue_names.push((q, queue_name(q, layout)));
    }

    /// Bytes written so far (the file is this plus a few hundred bytes).
    pub fn bytes(&self) -> u64 {
        (self.body.len() + self.arrows.len()) as u64
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// A CPU slice: a task ran on `track` from `start` to `end`; `pass` is an
    /// interrupt's pass over its line, `begins` whether the slice begins the task's
    /// activation (else it resumes one or the window cut it).
    pub fn slice(
        &mut self,
        track: Track,
        name: &str,
        start: SimTime,
        end: SimTime,
        pass: Option<u64>,
        begins: bool,
    ) {
        self.begin();
        let pass = pass.map(|p| format!("\"pass\":{p},")).unwrap_or_default();
        let _ = write!(
            self.body,
            "{{\"ph\":\"X\",\"cat\":\"host\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{{pass}\"begins\":{begins}}}}}",
            quoted(name),
            track.pid(),
            track.tid(),
            us(start),
            us(end - start)
        );
    }

    /// A frame on a wire from `start` to `end`, with its sequence number and, leaving
    /// the host, its latency.
    pub fn frame(
        &mut self,
        track: Track,
        name: &str,
        start: SimTime,
        end: SimTime,
        seq: u64,
        latency: Option<SimTime>,
    ) {
        self.begin();
        let lat = latency
            .map(|l| format!(",\"latency_us\":{}", us(l)))
            .unwrap_or_default();
        let _ = write!(
            self.body,
            "{{\"ph\":\"X\",\"cat\":\"host\",\"name\":{},\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"seq\":{seq}{lat}}}}}",
            quoted(name),
            track.tid(),
            us(start),
            us(end.saturating_sub(start))
        );
    }

    /// An instant on `track`; `frames` is the number lost, for a drop.
    pub fn instant(&mut self, track: Track, name: &str, at: SimTime, frames: Option<u64>) {
        self.begin();
        let (cat, args) = match frames {
            Some(n) => ("drop", format!("{{\"frames\":{n}}}")),
            None => ("event", "{}".to_string()),
        };
        let _ = write!(
            self.body,
            "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"{cat}\",\"name\":{},\"pid\":1,\"tid\":{},\"ts\":{},\"args\":{args}}}",
            quoted(name),
            track.tid(),
            us(at)
        );
    }

    /// A queue's occupancy from `at` on.
    pub fn counter(&mut self, q: Queue, at: SimTime, len: usize) {
        let name = self
            .queue_names
            .iter()
            .find(|(k, _)| *k == q)
            .map(|(_, n)| n.clone())
            .unwrap_or_default();
        self.begin();
        let _ = write!(
            self.body,
            "{{\"ph\":\"C\",\"name\":{},\"pid\":1,\"ts\":{},\"args\":{{\"frames\":{len}}}}}",
            quoted(&name),
            us(at)
        );
    }

    /// A flow arrow through `points`, each the track and start time of the slice it
    /// binds to (see the module doc).
    pub fn arrow(&mut self, id: u64, name: &str, points: &[(Track, SimTime)]) {
        let n = points.len();
        for (k, (track, at)) in points.iter().enumerate() {
            let (ph, bp) = match k {
                0 => ("s", ""),
                k if k + 1 == n => ("f", ",\"bp\":\"e\""),
                _ => ("t", ""),
            };
            self.events += 1;
            if !self.arrows.is_empty() {
                self.arrows.push_str(",\n");
            }
            let _ = write!(
                self.arrows,
                "{{\"ph\":\"{ph}\",\"cat\":\"host\",\"name\":{},\"id\":{id},\"pid\":{},\"tid\":{},\"ts\":{}{bp}}}",
                quoted(name),
                track.pid(),
                track.tid(),
                us(*at)
            );
        }
    }

    /// The whole file.
    pub fn finish(self, from: SimTime, end: SimTime, truncated: Option<SimTime>) -> Vec<u8> {
        let truncated = truncated.map_or("null".to_string(), us);
        let sep = if self.body.is_empty() || self.arrows.is_empty() {
            ""
        } else {
            ",\n"
        };
        format!(
            "{{\"displayTimeUnit\":\"ns\",\n\"otherData\":{{\"generator\":\"irqsim {}\",\"window_from_us\":{},\"window_to_us\":{},\"truncated_at_us\":{truncated}}},\n\"traceEvents\":[\n{}{sep}{}\n]}}\n",
            env!("CARGO_PKG_VERSION"),
            us(from),
            us(end),
            self.body,
            self.arrows
        )
        .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_microseconds_exact_to_the_picosecond() {
        assert_eq!(us(SimTime(0)), "0.000000");
        assert_eq!(us(SimTime(1)), "0.000001");
        assert_eq!(us(SimTime(2_000_000_123_456)), "2000000.123456");
    }

    #[test]
    fn a_file_with_a_slice_and_an_arrow_is_valid_json() {
        let layout = Layout {
            nics: vec!["dc0".into()],
            ..Layout::default()
        };
        let mut w = EventWriter::new(&layout);
        w.counter_name(Queue::RxRing(0), &layout);
        w.slice(
            Track::Level(Level::HardIrq),
            "interrupt \"x\"",
            SimTime(1_000_000),
            SimTime(3_500_000),
            Some(4),
            true,
        );
        w.counter(Queue::RxRing(0), SimTime(2_000_000), 3);
        w.arrow(
            1,
            "f #0",
            &[
                (Track::WireIn(0), SimTime(500_000)),
                (Track::Level(Level::HardIrq), SimTime(2_000_000)),
            ],
        );
        let v: serde_json::Value =
            serde_json::from_slice(&w.finish(SimTime(0), SimTime(4_000_000), None)).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let x = ev.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(x["name"], "interrupt \"x\"");
        assert_eq!(x["dur"].as_f64(), Some(2.5));
        assert_eq!(x["args"]["pass"], 4);
        assert!(
            ev.iter()
                .any(|e| e["ph"] == "C" && e["name"] == "dc0 rx ring")
        );
        assert_eq!(ev.iter().filter(|e| e["ph"] == "f").count(), 1);
    }
}
