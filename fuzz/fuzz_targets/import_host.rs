//! `irqsim import-host`'s parsers and model builder on arbitrary dumps. The input is
//! split at NUL bytes into up to twelve parts, each the text of one dump of a host
//! with one interface `eth0` (`lscpu`, `sysctl-net.core`, `ethtool-{i,g,l,c}-eth0`,
//! `ethtool-eth0`, `proc-interrupts`, `irq-affinity`, `ip-link`, `uname-r`, `proc-cpuinfo`, in this
//! order; bytes that are not UTF-8 are kept, as the reader keeps them, as U+FFFD).
//!
//! Each part goes through its parser directly (every parser, whatever the part's
//! name), then the parts are written to a temporary directory and imported whole
//! (`irqsim::config::import::import`): every input must give a model or an
//! `ImportError`; a panic, an abort or an out-of-memory is a finding. A model that
//! imports must load (the import already checks it with irqsim's loader) and its
//! report must hold no control character but line ends (every message is escaped).

#![no_main]

use irqsim::config::import::dump::{Dump, Findings};
use irqsim::config::import::{
    self, cpuinfo, ethtool, interrupts, iplink, lscpu, sysctl, uname,
};
use libfuzzer_sys::fuzz_target;
use retry::retry;

mod retry;

const NAMES: [&str; 12] = [
    "lscpu",
    "sysctl-net.core",
    "ethtool-i-eth0",
    "ethtool-g-eth0",
    "ethtool-l-eth0",
    "ethtool-c-eth0",
    "ethtool-eth0",
    "proc-interrupts",
    "irq-affinity",
    "ip-link",
    "uname-r",
    "proc-cpuinfo",
];

fuzz_target!(|data: &[u8]| {
    let parts: Vec<&[u8]> = data.splitn(NAMES.len(), |&b| b == 0).collect();
    // Every parser on every part.
    for (i, p) in parts.iter().enumerate() {
        let d = Dump::from_text(NAMES[i], &String::from_utf8_lossy(p));
        let mut f = Findings::default();
        lscpu::parse(&d, &mut f);
        cpuinfo::parse(&d, &mut f);
        sysctl::parse(&d, &mut f);
        ethtool::driver_info(&d, &mut f);
        ethtool::rings(&d, "eth0", &mut f);
        ethtool::channels(&d, "eth0", &mut f);
        ethtool::coalesce(&d, "eth0", &mut f);
        ethtool::speed(&d, "eth0", &mut f);
        interrupts::parse(&d, &mut f);
        interrupts::affinity(&d, &mut f);
        iplink::parse(&d, &mut f);
        uname::parse(&d, &mut f);
        assert!(f.unparsed.len() <= 12 * irqsim::config::import::dump::UNPARSED_KEPT);
    }
    // The whole import from a directory.
    let dir = retry(tempfile::tempdir).expect("temp dir");
    for (i, p) in parts.iter().enumerate() {
        retry(|| std::fs::write(dir.path().join(NAMES[i]), p)).expect("write a dump");
    }
    if let Ok(imported) = import::import(
        dir.path(),
        &import::Options::default(),
        &irqsim::config::read_limit::ReadBudget::new(import::dump::MAX_DUMPS_TOTAL_BYTES),
    ) {
        let report = imported.report.text(&imported.model);
        assert!(
            !report.chars().any(|c| c.is_control() && c != '\n'),
            "a control character in the report: {report:?}"
        );
    }
});
