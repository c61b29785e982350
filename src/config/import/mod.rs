//! `irqsim import-host DIR`: a model skeleton from a directory of a host's own dumps.
//!
//! A Linux host describes itself through its tools: `lscpu`, `sysctl net.core`,
//! `ethtool -i/-g/-l/-c` per interface, `/proc/interrupts` and the vectors' affinity
//! lists. [`import`] reads them from fixed file names in one directory, builds a model
//! file (JSON) with the structure and the real knobs filled in and every value's source
//! in `notes` ([`build`]), takes the costs from a named profile or leaves them to
//! `irqsim fit` ([`profile`]), and reports every line it could not parse. Nothing is
//! guessed: a line not understood is reported and not used; a value the model needs
//! that is missing or malformed refuses the import ([`ImportError::Refused`]), with the
//! file, the line and the reason, before anything is written.
//!
//! The directory (file: the command that writes it; `<if>` an interface name):
//!
//! | file | command | |
//! |---|---|---|
//! | `lscpu` | `LC_ALL=C lscpu > lscpu` | required |
//! | `sysctl-net.core` | `sysctl net.core > sysctl-net.core` | required |
//! | `ethtool-i-<if>` | `ethtool -i <if> > ethtool-i-<if>` | required per interface |
//! | `ethtool-g-<if>` | `ethtool -g <if> > ethtool-g-<if>` | required per interface |
//! | `ethtool-l-<if>` | `ethtool -l <if> > ethtool-l-<if>` | required per interface |
//! | `ethtool-c-<if>` | `ethtool -c <if> > ethtool-c-<if>` | required per interface |
//! | `ethtool-<if>` | `ethtool <if> > ethtool-<if>` | the line rate (`Speed:`): required unless `--line-rate` gives it |
//! | `proc-cpuinfo` | `cat /proc/cpuinfo > proc-cpuinfo` | optional: the clock when `lscpu` has none (a VM) |
//! | `proc-interrupts` | `cat /proc/interrupts > proc-interrupts` | optional: the vectors |
//! | `irq-affinity` | `grep -H . /proc/irq/*/smp_affinity_list /proc/irq/*/effective_affinity_list > irq-affinity` | optional: the vectors' CPUs |
//! | `ip-link` | `ip link show > ip-link` | optional: each interface's qlen |
//! | `uname-r` | `uname -r > uname-r` | optional: the kernel's release |
//!
//! The interfaces are those with an `ethtool-{i,g,l,c}-<if>` file. Any other file in
//! the directory is listed in the report as not read. Each file is read bounded
//! ([`dump::MAX_DUMP_BYTES`]); a directory of more than [`MAX_FILES`] names is refused.
//!
//! `examples/gather-host.sh OUT` writes exactly these files into `OUT/host/`.
//!
//! What the user gives that the dumps may lack ([`Options`]): `--clock-mhz` (the clock,
//! taken before every dump's), `--line-rate [IF=]RATE` (the line rate of interface IF,
//! or of every interface, taken before ethtool's `Speed:`). A host whose dumps give no
//! clock or no line rate for an interface, and no option gives one, is refused (the
//! fault names the file and the field); nothing is defaulted silently.
//!
//! Formats and their sources: each parser's module doc ([`lscpu`], [`cpuinfo`],
//! [`sysctl`], [`ethtool`], [`interrupts`], [`iplink`], [`uname`]); the drivers whose
//! knobs irqsim reads: [`build`].

pub mod build;
pub mod counters;
pub mod cpuinfo;
pub mod dump;
pub mod ethtool;
pub mod interrupts;
pub mod iplink;
pub mod lscpu;
pub mod profile;
pub mod scenario;
pub mod seal;
pub mod sysctl;
pub mod uname;

use crate::config::error::InputError;
use crate::config::model::ModelConfig;
use crate::config::read_limit::ReadBudget;
use crate::sim::problems::{Problem, Problems};
use dump::{Dump, Fault, Findings, Sourced};
use std::fmt;
use std::path::Path;

/// `lscpu`'s file.
pub const LSCPU: &str = "lscpu";
/// `/proc/cpuinfo`'s file.
pub const CPUINFO: &str = "proc-cpuinfo";
/// `sysctl net.core`'s file.
pub const SYSCTL: &str = "sysctl-net.core";
/// `/proc/interrupts`'s file.
pub const INTERRUPTS: &str = "proc-interrupts";
/// The affinity lists' file.
pub const AFFINITY: &str = "irq-affinity";
/// `ip link show`'s file.
pub const IP_LINK: &str = "ip-link";
/// `uname -r`'s file.
pub const UNAME: &str = "uname-r";
/// Most names of the dump directory looked at: a dump of a host with 64 interfaces
/// has about 330 files.
pub const MAX_FILES: usize = 4096;

/// Lines not understood that the report prints per file (the rest are counted).
pub const UNPARSED_SHOWN: usize = dump::UNPARSED_KEPT;

/// The dumps of one interface.
#[derive(Clone, Debug)]
pub struct NicDumps {
    /// The interface's name.
    pub name: String,
    /// `ethtool -i`.
    pub info: ethtool::DriverInfo,
    /// `ethtool -g`.
    pub rings: ethtool::Rings,
    /// `ethtool -l`.
    pub channels: ethtool::Channels,
    /// `ethtool -c`.
    pub coalesce: ethtool::Coalesce,
    /// `ethtool`'s `Speed:` [Mbit/s]: `None` inside for `Unknown!`; `None` without the
    /// file or the line.
    pub speed: Option<Sourced<Option<u64>>>,
}

impl NicDumps {
    /// The driver's name (empty when `ethtool -i` gave none, which is a fault).
    pub fn driver(&self) -> &str {
        self.info.driver.as_ref().map_or("", |d| d.value.as_str())
    }
}

/// Everything read from the dump directory.
#[derive(Clone, Debug)]
pub struct HostDumps {
    /// `lscpu`.
    pub lscpu: lscpu::Lscpu,
    /// `/proc/cpuinfo`.
    pub cpuinfo: Option<cpuinfo::CpuInfo>,
    /// `sysctl net.core`.
    pub sysctl: sysctl::Sysctl,
    /// The interfaces, by name.
    pub nics: Vec<NicDumps>,
    /// `/proc/interrupts`.
    pub interrupts: Option<interrupts::Interrupts>,
    /// The affinity lists.
    pub affinity: Option<interrupts::Affinity>,
    /// `ip link`'s qlen per interface.
    pub qlen: Option<iplink::Qlen>,
    /// `uname -r`: (major, minor).
    pub release: Option<Sourced<(u64, u64)>>,
    /// The files read, in the order read.
    pub read: Vec<String>,
    /// The files of the directory not read.
    pub other: Vec<String>,
}

/// Why a host cannot be imported (every case is bad input: exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The dump directory cannot be listed.
    #[error("{dir}: cannot read the dump directory: {reason}")]
    Dir {
        /// The directory.
        dir: String,
        /// Why.
        reason: String,
    },
    /// Values the model needs are missing or malformed.
    #[error(
        "{dir}: the host cannot be imported ({} problem(s); nothing was written):\n{}",
        .faults.len(),
        FaultList(.faults)
    )]
    Refused {
        /// The directory.
        dir: String,
        /// Every fault found.
        faults: Vec<Fault>,
    },
    /// The `--profile` model cannot be read.
    #[error("--profile: {0}")]
    Profile(#[source] InputError),
    /// The model built does not pass the loader's checks (a value of the dumps outside
    /// the model's ranges).
    #[error(
        "{dir}: the model built from the dumps is refused by irqsim's loader (nothing was written):\n{}",
        ProblemList(.problems)
    )]
    Invalid {
        /// The directory.
        dir: String,
        /// The loader's problems, by JSON path of the model.
        problems: Vec<Problem>,
    },
}

struct FaultList<'a>(&'a [Fault]);

impl fmt::Display for FaultList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(|x| format!("  {x}")).collect();
        write!(f, "{}", lines.join("\n"))
    }
}

struct ProblemList<'a>(&'a [Problem]);

impl fmt::Display for ProblemList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(|x| format!("  {x}")).collect();
        write!(f, "{}", lines.join("\n"))
    }
}

/// An imported host: the model file's text, the model as loaded, and the report.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The model file (pretty JSON, with a final newline).
    pub text: String,
    /// The model as irqsim's loader reads it.
    pub model: ModelConfig,
    /// What was read, filled, not filled, and the lines not understood.
    pub report: Report,
}

/// What an import did, for the user.
#[derive(Clone, Debug)]
pub struct Report {
    /// The dump directory.
    pub dir: String,
    /// Files read.
    pub read: Vec<String>,
    /// Files of the directory not read.
    pub other: Vec<String>,
    /// Lines not understood, lines ignored.
    pub findings: Findings,
    /// What the dumps did not give (field: why), from the notes.
    pub not_filled: Vec<String>,
    /// The profile, if any.
    pub profile: Option<String>,
}

impl Report {
    /// The report `irqsim import-host` prints on stderr.
    pub fn text(&self, m: &ModelConfig) -> String {
        let mut s = format!("irqsim import-host {}\n", dump::escape(&self.dir));
        s.push_str(&format!("read: {}\n", dump::escape(&self.read.join(", "))));
        if !self.other.is_empty() {
            s.push_str(&format!(
                "not read (not a dump irqsim knows): {}\n",
                dump::escape(&self.other.join(", "))
            ));
        }
        s.push_str(&format!(
            "model: {} cores at {} MHz\n",
            m.cpu.cores, m.cpu.clock_mhz
        ));
        for n in &m.nics {
            let moder = match (&n.dim, &n.moderation) {
                (Some(d), _) => format!("DIM ({:?} mode)", d.mode).to_lowercase(),
                (None, Some(x)) if x.cq_period_ns > 0.0 => format!(
                    "moderation packets {} CQ period {} ns ({} mode)",
                    x.packets,
                    x.cq_period_ns,
                    match x.cq_period_mode {
                        Some(crate::model::nic::dim::CqPeriodMode::Eqe) => "eqe",
                        _ => "cqe",
                    }
                ),
                (None, Some(x)) => format!(
                    "moderation packets {} packet timer {} ns absolute timer {} ns interval {} ns",
                    x.packets, x.packet_timer_ns, x.absolute_timer_ns, x.min_interval_ns
                ),
                (None, None) => "no moderation".into(),
            };
            let lines: Vec<String> = if n.queues > 1 {
                (0..n.queues)
                    .map(|k| crate::model::nic::queue_name(&n.name, k))
                    .collect()
            } else {
                vec![n.name.clone()]
            };
            let cores: Vec<String> = lines
                .iter()
                .map(|l| {
                    m.cpu
                        .irq_affinity
                        .get(l)
                        .map_or("-".into(), |c| c.to_string())
                })
                .collect();
            s.push_str(&format!(
                "  {}: {} queue(s), rings RX {} TX {}, {:e} bit/s, {moder}, vectors on cores [{}]\n",
                n.name,
                n.queues,
                n.rx_ring_slots,
                n.tx_ring_slots,
                n.line_rate_bps,
                cores.join(" ")
            ));
        }
        s.push_str(&format!(
            "kernel.napi: netdev_budget {}, netdev_budget_usecs {}, dev_weight {}, netdev_max_backlog {}\n",
            m.kernel.napi.netdev_budget,
            m.kernel.napi.netdev_budget_usecs,
            m.kernel.napi.dev_weight,
            m.kernel.napi.netdev_max_backlog
        ));
        match &self.profile {
            Some(p) => s.push_str(&format!("costs: from the profile {p}\n")),
            None => s.push_str(
                "costs: not measured (no --profile): fit them with irqsim fit, or name a profile\n",
            ),
        }
        if !self.not_filled.is_empty() {
            s.push_str(&format!(
                "not from the dumps ({}):\n",
                self.not_filled.len()
            ));
            for n in &self.not_filled {
                s.push_str(&format!("  {n}\n"));
            }
        }
        let f = &self.findings;
        let more: usize = f.unparsed_more.iter().map(|(_, n)| n).sum();
        if f.unparsed.is_empty() {
            s.push_str("lines not understood: none\n");
        } else {
            s.push_str(&format!(
                "lines not understood ({}; not used, check them):\n",
                f.unparsed.len() + more
            ));
            // The first few of each file: a file of garbage is said to be one, not
            // printed back line by line.
            for u in &f.unparsed {
                s.push_str(&format!("  {u}\n"));
            }
            for (file, n) in &f.unparsed_more {
                s.push_str(&format!(
                    "  {file}: ... and {n} more line(s) not understood\n"
                ));
            }
        }
        for (file, n, what) in &f.ignored {
            s.push_str(&format!("ignored: {file}: {n} line(s) of {what}\n"));
        }
        s
    }
}

/// Read a dump that must be there: a fault when it is absent or unreadable.
fn required(
    (dir, budget): (&Path, &ReadBudget),
    name: &str,
    cmd: &str,
    f: &mut Findings,
    read: &mut Vec<String>,
) -> Option<Dump> {
    match Dump::read(dir, name, budget) {
        Ok(Some(d)) => {
            read.push(name.to_string());
            Some(d)
        }
        Ok(None) => {
            f.fault(
                name,
                format!("missing: it is required (write it with `{cmd}`)"),
            );
            None
        }
        Err(e) => {
            f.fault(name, e);
            None
        }
    }
}

/// Read a dump that may be absent; unreadable is a fault.
fn optional(
    (dir, budget): (&Path, &ReadBudget),
    name: &str,
    f: &mut Findings,
    read: &mut Vec<String>,
) -> Option<Dump> {
    match Dump::read(dir, name, budget) {
        Ok(Some(d)) => {
            read.push(name.to_string());
            Some(d)
        }
        Ok(None) => None,
        Err(e) => {
            f.fault(name, e);
            None
        }
    }
}

/// Read every dump of `dir` ([`HostDumps`]); what the parsers find goes to `f`.
pub fn read_dumps(
    dir: &Path,
    f: &mut Findings,
    budget: &ReadBudget,
) -> Result<HostDumps, ImportError> {
    let dir_err = |reason: String| ImportError::Dir {
        dir: dir.display().to_string(),
        reason,
    };
    let entries = std::fs::read_dir(dir).map_err(|e| dir_err(e.to_string()))?;
    let mut names = Vec::new();
    for e in entries {
        let e = e.map_err(|e| dir_err(e.to_string()))?;
        if names.len() == MAX_FILES {
            return Err(dir_err(format!(
                "more than {MAX_FILES} names: not a dump directory"
            )));
        }
        names.push(e.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    let mut ifaces: Vec<String> = names
        .iter()
        .filter_map(|n| {
            ["ethtool-i-", "ethtool-g-", "ethtool-l-", "ethtool-c-"]
                .iter()
                .find_map(|p| n.strip_prefix(p))
        })
        .filter(|i| !i.is_empty())
        .map(String::from)
        .collect();
    ifaces.sort();
    ifaces.dedup();
    // An interface's name names the model's NIC, and so files and directories of a
    // run's output (`--linux-counters`): it must be a name irqsim writes, and one Linux
    // can give (at most IFNAMSIZ - 1 = 15 bytes, include/uapi/linux/if.h).
    ifaces.retain(|i| {
        let bad = match crate::config::names::check(i) {
            Err(e) => Some(e.to_string()),
            Ok(()) if i.len() > 15 => Some(format!(
                "`{i}` is {} bytes; an interface name is at most 15 (IFNAMSIZ - 1)",
                i.len()
            )),
            Ok(()) => None,
        };
        if let Some(reason) = &bad {
            f.fault(
                dir.display().to_string(),
                format!("interface name {reason}: rename its ethtool-*-<if> files"),
            );
        }
        bad.is_none()
    });
    let mut read = Vec::new();
    let lscpu = required((dir, budget), LSCPU, "LC_ALL=C lscpu > lscpu", f, &mut read)
        .map(|d| lscpu::parse(&d, f))
        .unwrap_or_default();
    let cpuinfo = optional((dir, budget), CPUINFO, f, &mut read).map(|d| cpuinfo::parse(&d, f));
    let sysctl = required(
        (dir, budget),
        SYSCTL,
        "sysctl net.core > sysctl-net.core",
        f,
        &mut read,
    )
    .map(|d| sysctl::parse(&d, f))
    .unwrap_or_default();
    if ifaces.is_empty() {
        f.fault(
            dir.display().to_string(),
            "no interface: no ethtool-i-<if>, ethtool-g-<if>, ethtool-l-<if> or ethtool-c-<if> file \
             (write them with `ethtool -i <if> > ethtool-i-<if>`, `-g`, `-l` and `-c` likewise; \
             install ethtool first if the host has none)",
        );
    }
    let mut nics = Vec::new();
    for i in &ifaces {
        let mut req = |opt: &str, f: &mut Findings| {
            required(
                (dir, budget),
                &format!("ethtool-{opt}-{i}"),
                &format!("ethtool -{opt} {i} > ethtool-{opt}-{i}"),
                f,
                &mut read,
            )
        };
        let info = req("i", f)
            .map(|d| ethtool::driver_info(&d, f))
            .unwrap_or_default();
        let rings = req("g", f)
            .map(|d| ethtool::rings(&d, i, f))
            .unwrap_or_default();
        let channels = req("l", f)
            .map(|d| ethtool::channels(&d, i, f))
            .unwrap_or_default();
        let coalesce = req("c", f)
            .map(|d| ethtool::coalesce(&d, i, f))
            .unwrap_or_default();
        let speed = optional((dir, budget), &format!("ethtool-{i}"), f, &mut read)
            .and_then(|d| ethtool::speed(&d, i, f));
        nics.push(NicDumps {
            name: i.clone(),
            info,
            rings,
            channels,
            coalesce,
            speed,
        });
    }
    let interrupts =
        optional((dir, budget), INTERRUPTS, f, &mut read).map(|d| interrupts::parse(&d, f));
    let affinity =
        optional((dir, budget), AFFINITY, f, &mut read).map(|d| interrupts::affinity(&d, f));
    let qlen = optional((dir, budget), IP_LINK, f, &mut read).map(|d| iplink::parse(&d, f));
    let release = optional((dir, budget), UNAME, f, &mut read).and_then(|d| uname::parse(&d, f));
    let other = names.into_iter().filter(|n| !read.contains(n)).collect();
    Ok(HostDumps {
        lscpu,
        cpuinfo,
        sysctl,
        nics,
        interrupts,
        affinity,
        qlen,
        release,
        read,
        other,
    })
}

/// A line rate the user gives (`--line-rate [IF=]RATE`).
#[derive(Clone, Debug, PartialEq)]
pub struct LineRate {
    /// The interface, or every interface.
    pub iface: Option<String>,
    /// The rate [bit/s].
    pub bps: f64,
    /// As given.
    pub text: String,
}

impl std::str::FromStr for LineRate {
    type Err = String;

    /// `[IF=]RATE`: RATE in bit/s, a number with an optional SI prefix `k`, `M`, `G` or
    /// `T` (`10G`, `2.5G`, `100M`, `25000000000`), within the model's line rates
    /// ([`crate::model::nic::LINE_RATE_BPS_RANGE`]).
    fn from_str(s: &str) -> Result<LineRate, String> {
        let (iface, rate) = match s.split_once('=') {
            Some((i, r)) if !i.is_empty() => (Some(i.to_string()), r),
            Some(_) => return Err(format!("`{s}`: no interface before `=`")),
            None => (None, s),
        };
        let (num, mult) = match rate.char_indices().last() {
            Some((i, 'k')) => (&rate[..i], 1e3),
            Some((i, 'M')) => (&rate[..i], 1e6),
            Some((i, 'G')) => (&rate[..i], 1e9),
            Some((i, 'T')) => (&rate[..i], 1e12),
            _ => (rate, 1.0),
        };
        let v: f64 = num.parse().map_err(|_| {
            format!("`{rate}` is not a rate in bit/s (a number with k, M, G or T: `10G`, `100M`)")
        })?;
        let bps = v * mult;
        let (lo, hi) = crate::model::nic::LINE_RATE_BPS_RANGE;
        if !(lo..=hi).contains(&bps) {
            return Err(format!(
                "`{rate}` is {bps:e} bit/s, outside the line rates a NIC may have ({lo:e} to \
                 {hi:e} bit/s): a rate is in bit/s (`10G` is 10 Gbit/s)"
            ));
        }
        Ok(LineRate {
            iface,
            bps,
            text: s.to_string(),
        })
    }
}

/// What the user gives an import besides the dumps.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--profile MODEL`: the costs.
    pub profile: Option<std::path::PathBuf>,
    /// `--clock-mhz`: the clock \[MHz\], before every dump's.
    pub clock_mhz: Option<f64>,
    /// `--line-rate`: line rates, before ethtool's `Speed:`.
    pub line_rates: Vec<LineRate>,
}

/// `--clock-mhz`'s value: a clock in MHz within the model's
/// ([`crate::sim::limits::MIN_CLOCK_MHZ`] to [`crate::sim::limits::MAX_CLOCK_MHZ`]).
pub fn parse_clock_mhz(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a clock in MHz (`2445.4`)"))?;
    let (lo, hi) = (
        crate::sim::limits::MIN_CLOCK_MHZ,
        crate::sim::limits::MAX_CLOCK_MHZ,
    );
    if !(lo..=hi).contains(&v) {
        return Err(format!(
            "{v} MHz is outside {lo} to {hi} MHz: the clock is in MHz (2.4 GHz is 2400)"
        ));
    }
    Ok(v)
}

/// Import the host whose dumps are in `dir`, with what `opts` gives, every file (the
/// dumps and the profile) read from the command's `budget`
/// ([`dump::MAX_DUMPS_TOTAL_BYTES`]). Nothing is written here; the caller writes
/// [`Imported::text`].
pub fn import(dir: &Path, opts: &Options, budget: &ReadBudget) -> Result<Imported, ImportError> {
    let label = dir.display().to_string();
    let profile = opts
        .profile
        .as_deref()
        .map(|p| profile::Profile::load(p, budget))
        .transpose()
        .map_err(ImportError::Profile)?;
    let mut f = Findings::default();
    let dumps = read_dumps(dir, &mut f, budget)?;
    for r in &opts.line_rates {
        if let Some(i) = &r.iface
            && !dumps.nics.iter().any(|n| &n.name == i)
        {
            let have: Vec<&str> = dumps.nics.iter().map(|n| n.name.as_str()).collect();
            f.fault(
                format!("--line-rate {}", r.text),
                format!(
                    "names interface `{i}`, which the dumps do not have (they have {})",
                    if have.is_empty() {
                        "none".to_string()
                    } else {
                        have.join(", ")
                    }
                ),
            );
        }
    }
    let refused = |f: &Findings| ImportError::Refused {
        dir: label.clone(),
        faults: f.faults.clone(),
    };
    if !f.faults.is_empty() {
        return Err(refused(&f));
    }
    let (json, notes) = build::model(&dumps, &label, (profile.as_ref(), opts), &mut f);
    if !f.faults.is_empty() {
        return Err(refused(&f));
    }
    let model: ModelConfig =
        crate::config::scenario::read_all(json.clone()).map_err(|problems| {
            ImportError::Invalid {
                dir: label.clone(),
                problems,
            }
        })?;
    let mut p = Problems::new();
    model.validate(&mut p);
    if !p.list.is_empty() {
        return Err(ImportError::Invalid {
            dir: label,
            problems: p.list,
        });
    }
    let mut json = json;
    let text = seal::sealed_text(&mut json);
    Ok(Imported {
        text,
        model,
        report: Report {
            dir: label,
            read: dumps.read,
            other: dumps.other,
            findings: f,
            not_filled: notes.not_filled,
            profile: profile.map(|p| p.path),
        },
    })
}
