//! What import-host knows of each Linux driver: which family its coalescing belongs to
//! (what `rx-usecs` means), the `linux_driver` whose counters irqsim writes, and the
//! NIC's moderation and DIM read from `ethtool -c` by driver.

use super::*;

/// Which meaning `rx-usecs` has for a driver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Family {
    /// mlx5's CQ moderation (period and count), DIM with adaptive-rx.
    Mlx5,
    /// Intel's interrupt throttling: an interval; `rx-usecs` in `dynamic` selects a
    /// dynamic mode.
    Itr { dynamic: (u64, u64) },
    /// A virtual machine's paravirtual NIC: rx-usecs 0 and rx-frames 1 (or n/a) are no
    /// coalescing, an interrupt per completion; any other value is coalescing the
    /// hypervisor or the device does, which `what` describes and irqsim does not model.
    Paravirtual { what: &'static str },
    /// Not known.
    Unknown,
}

pub(super) fn family(driver: &str) -> Family {
    match driver {
        "mlx5_core" => Family::Mlx5,
        // ixgbe_set_coalesce: 1 selects the dynamic ITR.
        "ixgbe" | "ixgbevf" => Family::Itr { dynamic: (1, 1) },
        // igb_set_coalesce: 1-3 select its dynamic modes.
        "igb" | "igc" => Family::Itr { dynamic: (1, 3) },
        "i40e" | "iavf" | "ice" => Family::Itr { dynamic: (1, 0) },
        "virtio_net" => Family::Paravirtual {
            what: "virtio_net's notification coalescing: with VIRTIO_NET_F_NOTF_COAL the \
                   device (the hypervisor's virtio back end) holds a queue's notification \
                   until max_packets frames or max_usecs (virtnet_get_coalesce, \
                   VIRTIO_NET_CTRL_NOTF_COAL of the virtio 1.3 spec); without the feature the \
                   driver reports rx-usecs 0 and rx-frames 1, an interrupt per used buffer \
                   (suppressed only while NAPI polls, virtqueue_disable_cb)",
        },
        "ena" => Family::Paravirtual {
            what: "ENA's interrupt moderation interval, applied by the device \
                   (ena_com intr_moder_rx_interval; the driver starts at \
                   ENA_INTR_INITIAL_RX_INTERVAL_USECS, 0 in Linux's ena_com.h, and its \
                   adaptive mode is DIM)",
        },
        "gve" => Family::Paravirtual {
            what: "gve's interrupt rate limit of the DQO queue format \
                   (gve_set_coalesce, GVE_ITR_INTERVAL_DQO; the GQI format has none)",
        },
        "vmxnet3" => Family::Paravirtual {
            what: "vmxnet3's virtual device coalescing (vmxnet3_set_coalesce, device \
                   version 3 on: static rx-usecs or a frame count, the default being the \
                   device's adaptive mode, VMXNET3_COALESCE_ADAPT)",
        },
        _ => Family::Unknown,
    }
}

/// The drivers whose coalescing irqsim knows, for messages.
pub(super) const KNOWN_DRIVERS: &str =
    "mlx5_core, ixgbe, ixgbevf, igb, igc, i40e, iavf, ice, virtio_net, ena, gve, vmxnet3";

/// The `ethtool -i` drivers that get a `linux_driver`, for messages.
pub(super) const LINUX_DRIVERS: &str =
    "mlx5_core, ixgbe, e1000, tulip, virtio_net, ixgbevf, igb, i40e, ice, ena, gve and vmxnet3";

/// The `linux_driver` of an `ethtool -i` driver: the drivers whose `ethtool -S`
/// irqsim writes (`--linux-counters`, [`crate::results::linux`]).
pub(super) fn linux_driver(driver: &str) -> Option<&'static str> {
    match driver {
        "mlx5_core" => Some("mlx5"),
        "ixgbe" => Some("ixgbe"),
        "e1000" => Some("e1000"),
        "tulip" => Some("tulip"),
        "virtio_net" => Some("virtio_net"),
        "ixgbevf" => Some("ixgbevf"),
        "igb" => Some("igb"),
        "i40e" => Some("i40e"),
        "ice" => Some("ice"),
        "ena" => Some("ena"),
        "gve" => Some("gve"),
        "vmxnet3" => Some("vmxnet3"),
        _ => None,
    }
}

/// A number that is there and not `n/a`.
pub(super) fn some_num(s: &Option<Sourced<Num>>) -> Option<(u64, &Sourced<Num>)> {
    s.as_ref().and_then(|x| x.value.map(|v| (v, x)))
}

/// `usecs` (the dump's rx-usecs), noting that the moderation is not written when the
/// dump gives none.
fn rx_usecs<'a>(
    usecs: Option<(u64, &'a Sourced<Num>)>,
    p: &str,
    cmd: &str,
    notes: &mut Notes,
) -> Option<(u64, &'a Sourced<Num>)> {
    if usecs.is_none() {
        notes.missing(
            format!("{p}.moderation"),
            format!("not written: {cmd} gives no rx-usecs"),
        );
    }
    usecs
}

/// The NIC's `moderation` and `dim` (JSON), with their notes.
pub(super) fn moderation(
    nic: &NicDumps,
    driver: &str,
    notes: &mut Notes,
) -> (Option<Value>, Option<Value>) {
    let p = format!("nics.{}", nic.name);
    let c = &nic.coalesce;
    let adaptive: Flag = c.adaptive_rx.as_ref().and_then(|a| a.value);
    let usecs = some_num(&c.rx_usecs);
    let frames = some_num(&c.rx_frames);
    let cmd = format!("ethtool -c {}", nic.name);
    notes.set(
        format!("{p}.tx_coalescing"),
        "tx-usecs and tx-frames are not used: the model's transmit completions interrupt \
         only with nics[].tx_completion, which the dumps do not show",
    );
    match family(driver) {
        Family::Mlx5 => {
            let (cqe, mode_src) = match c.cqe_mode_rx.as_ref().and_then(|m| m.value.map(|v| (v, m)))
            {
                Some((v, m)) => (v, format!("`CQE mode RX` of {cmd} {}", at(m))),
                None => (
                    true,
                    "mlx5's default: the CQ period restarts with each completion where the \
                     device supports it (MLX5E_PFLAG_RX_CQE_BASED_MODER, ConnectX-4 on); \
                     the dump has no `CQE mode RX` line (ethtool before 5.15)"
                        .to_string(),
                ),
            };
            let mode = if cqe { "cqe" } else { "eqe" };
            if adaptive == Some(true) {
                let a = c.adaptive_rx.as_ref().expect("adaptive is some");
                notes.set(
                    format!("{p}.dim"),
                    format!(
                        "adaptive RX moderation by DIM (mlx5e_handle_rx_dim): `Adaptive RX: on` \
                         of {cmd} {}; mode {mode}: {mode_src}. The rx-usecs and rx-frames \
                         the dump shows are the static values DIM replaces",
                        at(a)
                    ),
                );
                return (None, Some(json!({ "mode": mode })));
            }
            let Some((u, us)) = rx_usecs(usecs, &p, &cmd, notes) else {
                return (None, None);
            };
            if u == 0 {
                notes.set(
                    format!("{p}.moderation"),
                    format!(
                        "none: rx-usecs 0 {} is a CQ period of 0, an event per completion \
                         (rx-frames not used)",
                        at(us)
                    ),
                );
                return (None, None);
            }
            let mut m = Map::new();
            m.insert("cq_period_ns".into(), json!(u as f64 * 1e3));
            m.insert("cq_period_mode".into(), json!(mode));
            notes.set(
                format!("{p}.moderation.cq_period_ns"),
                format!(
                    "{} ns: rx-usecs {u} of {cmd} {}, mlx5's CQ period, restarted {}; {mode_src}",
                    u * 1000,
                    at(us),
                    if cqe {
                        "by each completion (CQE mode)"
                    } else {
                        "by each event (EQE mode)"
                    }
                ),
            );
            if let Some((fr, fs)) = frames.filter(|(x, _)| *x > 0) {
                m.insert("packets".into(), json!(fr));
                notes.set(
                    format!("{p}.moderation.packets"),
                    format!("{fr}: rx-frames of {cmd} {}, mlx5's CQ max count", at(fs)),
                );
            }
            (Some(Value::Object(m)), None)
        }
        Family::Itr { dynamic } => {
            // ixgbe's dynamic ITR is modelled (moderation.adaptive "ixgbe"): adaptive-rx
            // on, or rx-usecs 1, which is how ixgbe_get_coalesce shows it.
            let ixgbe_dynamic =
                driver == "ixgbe" && (adaptive == Some(true) || usecs.is_some_and(|(u, _)| u == 1));
            if ixgbe_dynamic {
                let said = match (c.adaptive_rx.as_ref(), usecs) {
                    (Some(a), _) if adaptive == Some(true) => {
                        format!("`Adaptive RX: on` {}", at(a))
                    }
                    (_, Some((u, us))) => format!("rx-usecs {u} {}", at(us)),
                    _ => "adaptive-rx".to_string(),
                };
                notes.set(
                    format!("{p}.moderation.adaptive"),
                    format!(
                        "ixgbe: {said} selects ixgbe's dynamic ITR (rx_itr_setting 1), \
                         recomputed after every completed NAPI poll (ixgbe_set_itr), from \
                         50 us"
                    ),
                );
                return (Some(json!({ "adaptive": "ixgbe" })), None);
            }
            if adaptive == Some(true) {
                let a = c.adaptive_rx.as_ref().expect("adaptive is some");
                notes.missing(
                    format!("{p}.moderation"),
                    format!(
                        "not written: `Adaptive RX: on` {} selects {driver}'s own dynamic \
                         interrupt throttling, which irqsim does not model; set a fixed \
                         moderation.min_interval_ns to try one",
                        at(a)
                    ),
                );
                return (None, None);
            }
            let Some((u, us)) = rx_usecs(usecs, &p, &cmd, notes) else {
                return (None, None);
            };
            if u == 0 {
                notes.set(
                    format!("{p}.moderation"),
                    format!("none: rx-usecs 0 {} turns {driver}'s ITR off", at(us)),
                );
                (None, None)
            } else if (dynamic.0..=dynamic.1).contains(&u) {
                notes.missing(
                    format!("{p}.moderation"),
                    format!(
                        "not written: rx-usecs {u} {} selects {driver}'s dynamic interrupt \
                         throttling, which irqsim does not model; set a fixed \
                         moderation.min_interval_ns to try one",
                        at(us)
                    ),
                );
                (None, None)
            } else {
                notes.set(
                    format!("{p}.moderation.min_interval_ns"),
                    format!(
                        "{} ns: rx-usecs {u} of {cmd} {}, {driver}'s interrupt throttling \
                         interval (the least time between two interrupts of a vector)",
                        u * 1000,
                        at(us)
                    ),
                );
                (Some(json!({ "min_interval_ns": u as f64 * 1e3 })), None)
            }
        }
        Family::Paravirtual { what } => {
            if adaptive == Some(true) {
                let a = c.adaptive_rx.as_ref().expect("adaptive is some");
                notes.missing(
                    format!("{p}.moderation"),
                    format!(
                        "not written: `Adaptive RX: on` {} selects {driver}'s adaptive \
                         moderation (DIM), which irqsim does not model for it; {what}",
                        at(a)
                    ),
                );
                return (None, None);
            }
            let off_usecs = usecs.is_none_or(|(u, _)| u == 0);
            let off_frames = frames.is_none_or(|(x, _)| x <= 1);
            let said = [("rx-usecs", usecs), ("rx-frames", frames)]
                .iter()
                .filter_map(|(k, v)| v.map(|(x, s)| format!("{k} {x} {}", at(s))))
                .collect::<Vec<_>>()
                .join(", ");
            let said = if said.is_empty() {
                "no rx-usecs or rx-frames".to_string()
            } else {
                said
            };
            if off_usecs && off_frames {
                notes.set(
                    format!("{p}.moderation"),
                    format!(
                        "none: {said} of {cmd}: no coalescing, an interrupt per completion ({what})"
                    ),
                );
            } else {
                notes.missing(
                    format!("{p}.moderation"),
                    format!("not written: {said} of {cmd} are {what}; irqsim does not model it"),
                );
            }
            (None, None)
        }
        Family::Unknown => {
            let said = [("rx-usecs", usecs), ("rx-frames", frames)]
                .iter()
                .filter_map(|(k, v)| v.map(|(x, s)| format!("{k} {x} {}", at(s))))
                .collect::<Vec<_>>()
                .join(", ");
            notes.missing(
                format!("{p}.moderation"),
                format!(
                    "not written: what {cmd}'s values ({}) mean for driver {driver} is not \
                     known to irqsim (it knows {KNOWN_DRIVERS})",
                    if said.is_empty() { "none" } else { &said }
                ),
            );
            (None, None)
        }
    }
}
