//! Software-interrupt request bits: BSD netisr numbers and the Linux NET_RX softirq, as
//! one pending mask that the dispatcher ([`crate::model::kernel`]) runs lowest bit first.

/// FreeBSD's NETISR_POLL: the polling handlers' pass (kern_poll.c netisr_poll).
pub(crate) const NETISR_POLL: u32 = 1 << 0;
/// Linux's NET_RX_SOFTIRQ: net_rx_action.
pub(crate) const NET_RX: u32 = 1 << 1;
/// BSD's NETISR_IP: ipintr, IP input from ipintrq.
pub(crate) const NETISR_IP: u32 = 1 << 2;
/// FreeBSD's NETISR_POLLMORE: the end of a polling pass (netisr_pollmore).
pub(crate) const NETISR_POLLMORE: u32 = 1 << 31;
