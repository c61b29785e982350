//! `/proc/cpuinfo`'s `cpu MHz` lines: the clock of a host whose `lscpu` has none (a
//! virtual machine: a KVM guest without cpufreq shows no `CPU MHz`/`CPU max MHz` in
//! `lscpu` and no clock in its brand string, `AMD EPYC`).
//!
//! Format (arch/x86/kernel/cpu/proc.c, `show_cpuinfo`): a block per CPU of `key\t: value`
//! lines, among them `cpu MHz\t\t: %u.%03u` for a CPU with a TSC: the clock
//! `aperfmperf_get_khz` measured, else cpufreq's, else `cpu_khz` (the TSC's calibrated
//! frequency, which is what a guest without APERF/MPERF and cpufreq shows); since Linux
//! 6.13 `cpu MHz\t\t: Unknown` when none is known. arm64 prints no `cpu MHz` line (its
//! `c_show` has none): such a host needs `--clock-mhz`.
//!
//! Read: every `cpu MHz` line with a number; the clock taken is the highest (the lines
//! are readings, one per CPU, and a CPU in a low-power state reads low). `cpu MHz:
//! Unknown` and a malformed value are reported; every other line is understood and not
//! used.

use super::dump::{Dump, Findings, Sourced, key_value};

/// What the model takes from `/proc/cpuinfo`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuInfo {
    /// The highest `cpu MHz` \[MHz\], with its line.
    pub max_mhz: Option<Sourced<f64>>,
    /// How many `cpu MHz` lines gave a number.
    pub readings: usize,
}

/// Parse `/proc/cpuinfo`.
pub fn parse(d: &Dump, f: &mut Findings) -> CpuInfo {
    let mut out = CpuInfo::default();
    let mut unused = 0;
    for (n, line) in d.numbered() {
        match key_value(line, ':') {
            Some(("cpu MHz", v)) => {
                let ok = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.');
                match v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| ok && x.is_finite() && *x > 0.0)
                {
                    Some(x) => {
                        out.readings += 1;
                        if out.max_mhz.as_ref().is_none_or(|m| x > m.value) {
                            out.max_mhz = Some(d.sourced(n, x));
                        }
                    }
                    None => f.unparsed(d, n, "not a clock in MHz"),
                }
            }
            _ => unused += 1,
        }
    }
    f.ignore(
        &d.name,
        unused,
        "other cpuinfo fields (flags, bogomips, caches...)",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two CPUs' blocks of this repository's recorded KVM guest
    /// (tests/data/kvm-virtio-guest/host/proc-cpuinfo), shortened to their first lines.
    const GUEST: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC\nstepping\t: 1\nmicrocode\t: 0x1000065\ncpu MHz\t\t: 2445.412\ncache size\t: 512 KB\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2445.412\n";

    #[test]
    fn the_highest_cpu_mhz_is_taken_with_its_line() {
        let mut f = Findings::default();
        let c = parse(&Dump::from_text("proc-cpuinfo", GUEST), &mut f);
        assert!(f.unparsed.is_empty(), "{f:?}");
        let m = c.max_mhz.unwrap();
        assert_eq!((m.value, m.at.line, c.readings), (2445.412, 8, 2));
        let text = "processor\t: 0\ncpu MHz\t\t: 800.000\nprocessor\t: 1\ncpu MHz\t\t: 3400.011\ncpu MHz\t\t: Unknown\n";
        let mut f = Findings::default();
        let c = parse(&Dump::from_text("proc-cpuinfo", text), &mut f);
        assert_eq!(c.max_mhz.unwrap().value, 3400.011);
        assert_eq!(f.unparsed.len(), 1);
        assert_eq!(f.unparsed[0].at.line, 5);
    }
}
