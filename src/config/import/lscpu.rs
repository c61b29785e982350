//! `lscpu`'s summary: the host's CPUs and their clock.
//!
//! Format (util-linux `sys-utils/lscpu.c`, `print_summary`, 2.23 to 2.39): one
//! `Key: value` per line, the key padded with spaces, since 2.37 indented under its
//! section (`  Model name:`, `    Thread(s) per core:`); a section head may have no
//! value (`Caches (sum of all):`). Read (in the C locale: `LC_ALL=C lscpu`):
//!
//! - `CPU(s):` (required): the logical CPUs, which the model's cores are (see
//!   [`super::build`]);
//! - `On-line CPU(s) list:`: which of them are online (a CPU list, `0-11`);
//! - `Thread(s) per core:`, `Core(s) per socket:`, `Socket(s):`: said in the notes;
//! - the clock, the first found of: the nominal clock in `Model name:` (`... @
//!   3.60GHz`, Intel's brand string), `CPU max MHz:` (the highest clock cpufreq allows,
//!   turbo included), `CPU MHz:` (one reading of the current clock).
//!
//! Every other `Key: value` line is understood and not used; a line without `:` is
//! reported.

use super::dump::{Dump, Findings, Sourced, key_value, whole};

/// What the model takes from `lscpu`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lscpu {
    /// `CPU(s):` [logical CPUs].
    pub cpus: Option<Sourced<u32>>,
    /// `On-line CPU(s) list:` [CPU numbers].
    pub online: Option<Sourced<super::dump::CpuList>>,
    /// `Thread(s) per core:`.
    pub threads_per_core: Option<Sourced<u32>>,
    /// `Core(s) per socket:`.
    pub cores_per_socket: Option<Sourced<u32>>,
    /// `Socket(s):`.
    pub sockets: Option<Sourced<u32>>,
    /// `Model name:`.
    pub model_name: Option<Sourced<String>>,
    /// The clock \[MHz\] and which line gave it.
    pub clock_mhz: Option<Sourced<f64>>,
    /// How the clock was read: `nominal`, `max` or `current`.
    pub clock_kind: &'static str,
}

/// The nominal clock of an Intel brand string (`Intel(R) Xeon(R) CPU E5-1650 v4 @
/// 3.60GHz`) \[MHz\].
fn nominal_mhz(model: &str) -> Option<f64> {
    let (_, tail) = model.rsplit_once('@')?;
    let t = tail.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("GHz") {
        (n, 1000.0)
    } else {
        (t.strip_suffix("MHz")?, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v * mult)
}

/// A clock in MHz as lscpu prints it (`4000.0000`).
fn mhz(v: &str) -> Option<f64> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0)
}

/// Parse `lscpu`'s output. A malformed `CPU(s):` is a fault; a malformed clock or
/// topology line is reported and not used.
pub fn parse(d: &Dump, f: &mut Findings) -> Lscpu {
    let mut out = Lscpu::default();
    let (mut nominal, mut max, mut current) = (None, None, None);
    let mut unused = 0;
    for (n, line) in d.numbered() {
        let Some((k, v)) = key_value(line, ':') else {
            f.unparsed(d, n, "not `Key: value`");
            continue;
        };
        let count = |f: &mut Findings, what: &str| match whole(v).filter(|&x| x > 0) {
            Some(x) if x <= u32::MAX as u64 => Some(d.sourced(n, x as u32)),
            _ => {
                f.unparsed(d, n, format!("{what} is not a whole number above 0"));
                None
            }
        };
        match k {
            "CPU(s)" if out.cpus.is_none() => match whole(v).filter(|&x| x > 0) {
                Some(x) if x <= u32::MAX as u64 => out.cpus = Some(d.sourced(n, x as u32)),
                _ => f.fault_at(d, n, "the number of CPUs is not a whole number above 0"),
            },
            "On-line CPU(s) list" => match super::dump::cpu_list(v) {
                Some(l) if !l.is_empty() => out.online = Some(d.sourced(n, l)),
                _ => f.unparsed(d, n, "not a CPU list such as `0-11`"),
            },
            "Thread(s) per core" => out.threads_per_core = count(f, "the thread count"),
            "Core(s) per socket" => out.cores_per_socket = count(f, "the core count"),
            "Socket(s)" => out.sockets = count(f, "the socket count"),
            "Model name" if out.model_name.is_none() => {
                out.model_name = Some(d.sourced(n, v.to_string()));
                nominal = nominal_mhz(v).map(|x| d.sourced(n, x));
            }
            "CPU max MHz" => match mhz(v) {
                Some(x) => max = Some(d.sourced(n, x)),
                None => f.unparsed(d, n, "not a clock in MHz"),
            },
            "CPU MHz" => match mhz(v) {
                Some(x) => current = Some(d.sourced(n, x)),
                None => f.unparsed(d, n, "not a clock in MHz"),
            },
            _ => unused += 1,
        }
    }
    f.ignore(
        &d.name,
        unused,
        "other lscpu fields (cache, flags, vulnerabilities...)",
    );
    (out.clock_mhz, out.clock_kind) = match (nominal, max, current) {
        (Some(x), _, _) => (Some(x), "nominal"),
        (None, Some(x), _) => (Some(x), "max"),
        (None, None, Some(x)) => (Some(x), "current"),
        _ => (None, ""),
    };
    if out.cpus.is_none() && !f.faults.iter().any(|x| x.file == d.name) {
        f.fault(&d.name, "no `CPU(s):` line: the number of CPUs is required");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// util-linux 2.37's layout (sections, indented keys), as on the XDP paper's
    /// testbed CPU with hyperthreading off.
    const NEW: &str = "Architecture:                    x86_64
  CPU op-mode(s):                32-bit, 64-bit
  Byte Order:                    Little Endian
CPU(s):                          6
  On-line CPU(s) list:           0-5
Vendor ID:                       GenuineIntel
  Model name:                    Intel(R) Xeon(R) CPU E5-1650 v4 @ 3.60GHz
    CPU family:                  6
    Thread(s) per core:          1
    Core(s) per socket:          6
    Socket(s):                   1
    CPU max MHz:                 4000.0000
    CPU min MHz:                 1200.0000
Caches (sum of all):
  L1d:                           192 KiB (6 instances)
Vulnerabilities:
  Itlb multihit:                 KVM: Mitigation: VMX disabled
";

    #[test]
    fn the_nominal_clock_comes_first_and_cpus_are_logical() {
        let mut f = Findings::default();
        let l = parse(&Dump::from_text("lscpu", NEW), &mut f);
        assert!(f.faults.is_empty() && f.unparsed.is_empty(), "{f:?}");
        assert_eq!(l.cpus.as_ref().unwrap().value, 6);
        assert_eq!(l.cpus.as_ref().unwrap().at.line, 4);
        assert_eq!(l.online.unwrap().value.to_string(), "0-5");
        assert_eq!(l.clock_mhz.as_ref().unwrap().value, 3600.0);
        assert_eq!(l.clock_kind, "nominal");
        assert_eq!(l.threads_per_core.unwrap().value, 1);
    }

    /// The older flat layout (util-linux 2.31), an AMD brand string without a clock.
    #[test]
    fn without_a_nominal_clock_the_max_clock_is_taken() {
        let text = "Architecture:        x86_64\nCPU(s):              16\nOn-line CPU(s) list: 0-15\nThread(s) per core:  2\nModel name:          AMD EPYC 7302P 16-Core Processor\nCPU MHz:             1500.000\nCPU max MHz:         3000.0000\n";
        let mut f = Findings::default();
        let l = parse(&Dump::from_text("lscpu", text), &mut f);
        assert_eq!(l.clock_mhz.unwrap().value, 3000.0);
        assert_eq!(l.clock_kind, "max");
        assert_eq!(l.threads_per_core.unwrap().value, 2);
    }

    #[test]
    fn a_malformed_cpu_count_refuses_and_a_stray_line_is_reported() {
        let mut f = Findings::default();
        parse(
            &Dump::from_text("lscpu", "CPU(s): six\nsome garbage\n"),
            &mut f,
        );
        assert_eq!(f.faults.len(), 1);
        assert_eq!(f.faults[0].line.as_ref().unwrap().0, 1);
        assert_eq!(f.unparsed.len(), 1);
        assert_eq!(f.unparsed[0].at.line, 2);
        let mut f = Findings::default();
        parse(&Dump::from_text("lscpu", "Model name: x\n"), &mut f);
        assert!(f.faults[0].reason.contains("CPU(s)"));
    }
}
