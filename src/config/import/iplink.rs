//! `ip link show`: each interface's transmit queue length (`qlen`, the qdisc's limit).
//!
//! Format (iproute2 `ip/ipaddress.c`, `print_linkinfo`): a line per interface,
//! `<index>: <name>[@<link>]: <FLAGS> mtu <n> qdisc <q> ... qlen <n>`, followed by
//! indented lines (`link/ether ...`, `altname ...`), which are understood and not used.
//! A non-indented line that is not an interface's line is reported.

use super::dump::{Dump, Findings, Sourced, whole};
use std::collections::BTreeMap;

/// `qlen` by interface name \[frames\].
pub type Qlen = BTreeMap<String, Sourced<u64>>;

/// Parse `ip link show`'s output.
pub fn parse(d: &Dump, f: &mut Findings) -> Qlen {
    let mut out = Qlen::new();
    let mut detail = 0;
    for (n, line) in d.numbered() {
        if line.starts_with(char::is_whitespace) {
            detail += 1;
            continue;
        }
        let mut parts = line.splitn(3, ": ");
        let (Some(index), Some(name), Some(rest)) = (parts.next(), parts.next(), parts.next())
        else {
            f.unparsed(d, n, "not `<index>: <name>: <FLAGS> ... qlen <n>`");
            continue;
        };
        if whole(index).is_none() {
            f.unparsed(d, n, "not `<index>: <name>: <FLAGS> ... qlen <n>`");
            continue;
        }
        let name = name.split('@').next().unwrap_or(name);
        let words: Vec<&str> = rest.split_whitespace().collect();
        match words
            .iter()
            .position(|w| *w == "qlen")
            .and_then(|i| words.get(i + 1))
            .map(|v| whole(v))
        {
            Some(Some(q)) if q <= u32::MAX as u64 => {
                out.insert(name.to_string(), d.sourced(n, q));
            }
            Some(_) => f.unparsed(d, n, "`qlen` is not a whole number"),
            None => f.ignore(&d.name, 1, format!("{name}: no qlen")),
        }
    }
    f.ignore(
        &d.name,
        detail,
        "indented detail lines (link/ether, altname...)",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qlen_is_read_per_interface() {
        let text = "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\n    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT group default qlen 1000\n    link/ether 0c:42:a1:00:00:01 brd ff:ff:ff:ff:ff:ff\n3: eth0.100@eth0: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 500\ngarbage\n";
        let mut f = Findings::default();
        let q = parse(&Dump::from_text("ip-link", text), &mut f);
        assert_eq!(q["eth0"].value, 1000);
        assert_eq!(q["eth0"].at.line, 3);
        assert_eq!(q["eth0.100"].value, 500);
        assert_eq!(f.unparsed.len(), 1);
        assert_eq!(f.unparsed[0].at.line, 6);
    }
}
