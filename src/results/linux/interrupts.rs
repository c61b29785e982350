//! `/proc/interrupts` of a load point.
//!
//! Layout of `show_interrupts`, kernel/irq/proc.c (Linux 4.x to 6.x, x86, where
//! `CONFIG_GENERIC_IRQ_SHOW_LEVEL` is off): a header of `prec + 8` spaces and
//! `CPU%-8d` per CPU; a row per vector: `%*d: ` (the IRQ number, `prec` = 3 below 1,000
//! IRQs), `%10u ` per CPU, the chip ` %8s`, the hardware IRQ ` %*lu`, `-%-8s` with the
//! descriptor's name (`edge` for MSI-X) and `  %s` the action, `, %s` for each more.
//!
//! - A row per modelled vector, in the model's line order: a multi-queue NIC's vector
//!   per queue, a single-queue NIC's line, a shared line. The IRQ number is its index
//!   in that order (a real host's are assigned at probe, from 24 up on x86 for MSI).
//! - An MSI-X vector (mlx5, ixgbe, any NIC of several queues, a single-queue NIC
//!   naming no driver): the chip `PCI-MSI` (an IOMMU's interrupt remapping would print
//!   `IR-PCI-MSI`), the hardware IRQ the queue's index in its NIC, `edge`. This is
//!   the layout of kernels before 6.2 with a global PCI-MSI domain, where a real host
//!   prints the PCI requester ID shifted left by 11 plus the MSI-X entry (the model has
//!   no PCI address); kernels with per-device MSI domains (x86 from about 6.2) print
//!   the chip as `IR-PCI-MSIX-<bus:dev.fn>` and the MSI-X entry itself (not checked
//!   against a running host).
//! - A legacy line (e1000 and tulip request their PCI INTx line, `IRQF_SHARED`; a
//!   shared line of the model, which MSI cannot be): the chip `IO-APIC`, the hardware
//!   IRQ the IRQ number (the IO-APIC pin, equal to the IRQ on x86), `fasteoi`.
//! - The count is the vector's interrupts taken (`<nic>-q<k>.interrupts`,
//!   `<nic>.interrupts`; a shared line's `<line>.passes`), all in the column of the
//!   core the vector is bound to (`cpu.irq_affinity`, or round robin): the model does
//!   not move a vector (no irqbalance).
//! - The action is the name the driver requests its vector by: ixgbe
//!   `<nic>-TxRx-<k>` (ixgbe_request_msix_irqs), mlx5 `mlx5_comp<k>@pci:<nic>`
//!   (mlx5's `mlx5_comp%d@pci:%s` with the NIC's name where the PCI address would be),
//!   virtio_net `virtio<N>-input.<k>` (N the NIC's index among the model's), igb
//!   `<nic>-TxRx-<k>` (igb_request_msix; ixgbevf the same,
//!   ixgbevf_request_msix_irqs), i40e and ice `i40e-<nic>-TxRx-<k>` and
//!   `ice-<nic>-TxRx-<k>` (i40e_vsi_request_irq_msix, ice_vsi_req_irq_msix, 4.18),
//!   ena `<nic>-Tx-Rx-<k>` (ena_setup_io_intr, 4.18), gve
//!   `gve-ntfy-blk<queues + k>@pci:<nic>` (gve_alloc_notify_blocks of the 6.x tree
//!   ethtool.rs cites: the transmit queues' blocks come first; before a 2023 change
//!   the format was `%s-ntfy-block.%d`), vmxnet3 `<nic>-rxtx-<k>` (vmxnet3_request_irqs, 4.18,
//!   with as many receive as transmit queues),
//!   e1000 and tulip the interface's name (`request_irq(..., netdev->name, ...)`),
//!   without a driver the model's line name; a shared line lists its NICs.
//! - Not written (not modelled): the architecture's rows (NMI, LOC -- the local timer,
//!   RES, CAL -- RPS's IPIs among them, TLB, ...), the other devices' IRQs, ixgbe's
//!   other-causes vector (`<nic>` alone: link state; igb's likewise), i40e's and ice's misc vectors, mlx5's
//!   async and command vectors, ena's and gve's management vectors, gve's transmit
//!   blocks.

use super::*;

impl LinuxHost {
    /// /proc/interrupts: the header and a row per modelled vector.
    pub fn interrupts(&self, p: &PointResult) -> String {
        let c = &p.figures.counters;
        // show_interrupts: `for (prec = 3, j = 1000; prec < 10 && j <= nr_irqs; ++prec)`.
        let mut prec = 3;
        let mut j = 1000usize;
        while prec < 10 && j <= self.vectors.len() {
            prec += 1;
            j *= 10;
        }
        let mut s = format!("{:w$}", "", w = prec + 8);
        for cpu in 0..self.cpus {
            let _ = write!(s, "CPU{cpu:<8}");
        }
        s.push('\n');
        for (irq, v) in self.vectors.iter().enumerate() {
            let _ = write!(s, "{irq:>prec$}: ");
            let n = wrap32(count(c, &v.counter));
            for cpu in 0..self.cpus {
                let _ = write!(s, "{:>10} ", if cpu == v.core { n } else { 0 });
            }
            let (chip, hwirq, kind) = if v.legacy {
                ("IO-APIC", irq, "fasteoi")
            } else {
                ("PCI-MSI", v.hwirq, "edge")
            };
            let _ = write!(s, " {chip:>8} {hwirq:>prec$}-{kind:<8}");
            let _ = write!(s, "  {}", v.actions.join(", "));
            s.push('\n');
        }
        s
    }
}
