//! `/proc/net/softnet_stat` of a load point.
//!
//! Layout of `softnet_seq_show`, net/core/net-procfs.c (torvalds/linux at 0e0939c0, Linux
//! 6.x): a line per online CPU (here every core of the model), 15 fields `%08x`
//! separated by a space:
//!
//! | # | field | from |
//! |---|---|---|
//! | 1 | processed | `cpu<k>.softnet.processed` |
//! | 2 | dropped | `cpu<k>.softnet.dropped` (backlog full, enqueue_to_backlog) |
//! | 3 | time_squeeze | `cpu<k>.softnet.time_squeeze` |
//! | 4-9 | 0 (unused since 2.6; `cpu_collision` gone since 4.x) | 0, as the kernel prints |
//! | 10 | received_rps | `cpu<k>.softnet.received_rps` |
//! | 11 | flow_limit_count | 0: the flow limit (`net.core.flow_limit_cpu_bitmap`) is not modelled |
//! | 12 | backlog_len (input_qlen + process_qlen) | 0: read after the drain; the model does not publish the backlog's length at the end |
//! | 13 | CPU index | the core's number |
//! | 14, 15 | input_qlen, process_qlen | 0, as field 12 |
//!
//! Written only when the run publishes the per-core softnet counters: NAPI on a host of
//! several cores. The `interrupt` policy's netif_rx and a host of one core have none.

use super::*;

impl LinuxHost {
    /// /proc/net/softnet_stat, or `None` when the run has no per-core softnet counters.
    pub fn softnet_stat(&self, p: &PointResult) -> Option<String> {
        let c = &p.figures.counters;
        c.get("cpu0.softnet.processed")?;
        let mut s = String::new();
        for k in 0..self.cpus {
            let f = |name: &str| wrap32(count(c, &format!("cpu{k}.softnet.{name}")));
            let fields: [u64; 15] = [
                f("processed"),
                f("dropped"),
                f("time_squeeze"),
                0,
                0,
                0,
                0,
                0,
                0,
                f("received_rps"),
                0,
                0,
                wrap32(k as u64),
                0,
                0,
            ];
            let line: Vec<String> = fields.iter().map(|v| format!("{v:08x}")).collect();
            s.push_str(&line.join(" "));
            s.push('\n');
        }
        Some(s)
    }
}
