//! Receive Side Scaling: how a multi-queue NIC picks the receive queue of a frame.
//!
//! Models RSS as the NIC computes it and the driver configures it (Microsoft's RSS
//! specification, "Verifying the RSS Hash Calculation"; Linux
//! `Documentation/networking/scaling.rst`):
//!
//! ```text
//!  frame -> flow tuple -> hash input (network byte order) -> Toeplitz(key, input): u32
//!                                                                   |
//!                     RX queue <- indirection table[hash & (entries - 1)]
//! ```
//!
//! - **Hash input** ([`FlowTuple`]): for TCP, the 4-tuple: source address, destination
//!   address, source port, destination port, each in network byte order, 12 bytes for
//!   IPv4 ([`FlowTuple::input_4tuple`]); otherwise the 2-tuple of the two addresses, 8
//!   bytes ([`FlowTuple::input_2tuple`]). UDP is hashed by its 4-tuple only when the
//!   NIC is told to (`udp_4tuple`; Microsoft's `NDIS_HASH_UDP_IPV4`, Linux's
//!   `ethtool -N <dev> rx-flow-hash udp4 sdfn`); drivers differ in their default.
//! - **Hash** ([`toeplitz`]): for every bit of the input that is set, the 32-bit window
//!   of the secret key starting at that bit's position is XORed into the result. The hash
//!   is linear over XOR, so it spreads flows, it does not hide them.
//! - **Indirection** ([`Indirection`]): the low-order bits of the hash index a table of
//!   queue numbers, `hash & (entries - 1)` for the power-of-two tables NICs have. The
//!   driver fills it with Linux's default `ethtool_rxfh_indir_default(i, n_rx_rings) =
//!   i % n_rx_rings` (`include/linux/ethtool.h`), so each queue owns every
//!   `n_rx_rings`-th entry; `ethtool -X` rewrites it.
//!
//! Parameters:
//! - `key`: the secret key, 40 bytes for IPv4/IPv6 Toeplitz hashing; default
//!   [`DEFAULT_KEY`], Microsoft's verification key, which DPDK's and several vendors'
//!   drivers load by default. Upstream Linux drivers instead fill a random key once per
//!   boot (`netdev_rss_key_fill`, up to `NETDEV_RSS_KEY_LEN` = 52 bytes), so a flow's
//!   queue there differs from boot to boot.
//! - `entries`: indirection table size \[entries\], a power of two; default
//!   [`DEFAULT_ENTRIES`] = 128 (the "most common hardware implementation" in
//!   `scaling.rst`: the low 7 bits of the hash; e.g. Intel 82599).
//! - `queues`: number of receive queues \[queues\], 1 ..= 65,535.
//! - `udp_4tuple`: whether UDP ports enter the hash; default off.
//!
//! Not modelled: IPv6 (the same function over 36- or 32-byte inputs), IP fragments
//! (hashed by addresses only, since only the first fragment carries ports), other hash
//! functions (XOR, symmetric Toeplitz), and the NIC's reporting of the hash to the host.
//! Integer arithmetic only; nothing is allocated per hash.

use std::net::Ipv4Addr;

/// Microsoft's RSS verification key (`6d5a56da255b0ec2...bbeac01fa`), 40 bytes: the key
/// of the published test vectors, and the default key of several drivers (DPDK's Intel
/// drivers among them; upstream Linux drivers use a random key instead).
pub const DEFAULT_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// Default indirection table size \[entries\] (128: the low 7 bits of the hash).
pub const DEFAULT_ENTRIES: usize = 128;

/// Key byte `i`, or 0 past the end of the key.
#[inline]
fn key_byte(key: &[u8], i: usize) -> u64 {
    key.get(i).copied().unwrap_or(0) as u64
}

/// The Toeplitz hash of `input` under `key`, as Microsoft's RSS specification defines it
/// and NICs compute it: for every input bit that is set, bit `b` counting from the most
/// significant bit of the first byte, XOR in the 32 key bits `b .. b + 32` (most
/// significant first).
///
/// The key must cover the input plus 4 bytes (`key.len() >= input.len() + 4`; 40 bytes
/// cover the 36 of an IPv6 4-tuple); key bits past its end count as 0. An empty input
/// hashes to 0.
pub fn toeplitz(key: &[u8], input: &[u8]) -> u32 {
    let mut hash = 0u32;
    // The 40 key bits from byte i's first bit: all the windows of its 8 bits.
    let mut window = (0..5).fold(0u64, |w, j| (w << 8) | key_byte(key, j));
    for (i, &byte) in input.iter().enumerate() {
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                hash ^= (window >> (8 - bit)) as u32;
            }
        }
        window = ((window << 8) & 0xff_ffff_ffff) | key_byte(key, i + 5);
    }
    hash
}

/// Transport protocol of a flow, as far as RSS cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// TCP: hashed by its 4-tuple.
    Tcp,
    /// UDP: hashed by its 4-tuple only when UDP 4-tuple hashing is on.
    Udp,
    /// Anything else, by IP protocol number: hashed by its addresses.
    Other(u8),
}

/// An IPv4 flow's addresses, ports and protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowTuple {
    /// Source address.
    pub src_addr: Ipv4Addr,
    /// Destination address.
    pub dst_addr: Ipv4Addr,
    /// Source port (0 where the protocol has none).
    pub src_port: u16,
    /// Destination port (0 where the protocol has none).
    pub dst_port: u16,
    /// Transport protocol.
    pub protocol: Protocol,
}

impl FlowTuple {
    /// The 4-tuple hash input: source address, destination address, source port,
    /// destination port, in network byte order (12 bytes).
    pub fn input_4tuple(&self) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[0..4].copy_from_slice(&self.src_addr.octets());
        b[4..8].copy_from_slice(&self.dst_addr.octets());
        b[8..10].copy_from_slice(&self.src_port.to_be_bytes());
        b[10..12].copy_from_slice(&self.dst_port.to_be_bytes());
        b
    }

    /// The 2-tuple hash input: source address, destination address, in network byte
    /// order (8 bytes).
    pub fn input_2tuple(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0..4].copy_from_slice(&self.src_addr.octets());
        b[4..8].copy_from_slice(&self.dst_addr.octets());
        b
    }

    /// Whether the NIC hashes this flow by its 4-tuple: TCP always, UDP when
    /// `udp_4tuple`, nothing else.
    pub fn uses_ports(&self, udp_4tuple: bool) -> bool {
        match self.protocol {
            Protocol::Tcp => true,
            Protocol::Udp => udp_4tuple,
            Protocol::Other(_) => false,
        }
    }

    /// The RSS hash the NIC computes for this flow under `key`.
    pub fn rss_hash(&self, key: &[u8], udp_4tuple: bool) -> u32 {
        if self.uses_ports(udp_4tuple) {
            toeplitz(key, &self.input_4tuple())
        } else {
            toeplitz(key, &self.input_2tuple())
        }
    }
}

/// The RSS indirection table (RETA): entry `i` holds the receive queue of the hashes
/// whose low-order bits are `i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Indirection {
    /// Queue number of each entry. NICs have a power-of-two number of entries; see
    /// [`Indirection::queue`] for other sizes.
    pub table: Vec<u16>,
}

impl Indirection {
    /// Linux's default table of `entries` entries over `queues` queues: entry `i` ->
    /// queue `i % queues` (`ethtool_rxfh_indir_default`).
    ///
    /// Panics unless `entries` is a power of two (as NICs' tables are) and `queues` is at
    /// least 1. With more queues than entries, the queues from `entries` on get nothing.
    pub fn round_robin(entries: usize, queues: u16) -> Indirection {
        assert!(
            entries.is_power_of_two(),
            "indirection table size {entries} is not a power of two"
        );
        assert!(queues >= 1, "{queues} queues: need at least one");
        Indirection {
            table: (0..entries).map(|i| (i % queues as usize) as u16).collect(),
        }
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.table.len()
    }

    /// The receive queue of a frame with RSS hash `hash`: entry `hash % entries`, which
    /// for a power-of-two table is `hash & (entries - 1)`, the low-order bits of the
    /// hash as the NIC takes them. A table of another size (only by building `table` by
    /// hand) uses the remainder, which no NIC does. Panics on an empty table.
    #[inline]
    pub fn queue(&self, hash: u32) -> u16 {
        let n = self.table.len();
        let i = if n.is_power_of_two() {
            hash as usize & (n - 1)
        } else {
            hash as usize % n
        };
        self.table[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// (source, destination, source port, destination port, hash of the addresses only
    /// ("IPv4 only"), hash with the ports ("IPv4 with TCP")).
    type Vector = ([u8; 4], [u8; 4], u16, u16, u32, u32);

    /// Microsoft, "Verifying the RSS Hash Calculation" (Windows driver documentation,
    /// <https://learn.microsoft.com/en-us/windows-hardware/drivers/network/verifying-the-rss-hash-calculation>,
    /// source in MicrosoftDocs/windows-driver-docs,
    /// windows-driver-docs-pr/network/verifying-the-rss-hash-calculation.md), IPv4 table,
    /// all 5 rows, under [`DEFAULT_KEY`]. The same rows are in DPDK's
    /// app/test/test_thash.c (from the Intel 82599 datasheet, 7.1.2.8.3) and FD.io VPP's
    /// src/vppinfra/test/toeplitz.c. Microsoft's table lists the destination first; the
    /// rows here are in [`Vector`]'s order, source first.
    const MS_IPV4_VECTORS: [Vector; 5] = [
        (
            [66, 9, 149, 187],
            [161, 142, 100, 80],
            2794,
            1766,
            0x323e8fc2,
            0x51ccc178,
        ),
        (
            [199, 92, 111, 2],
            [65, 69, 140, 83],
            14230,
            4739,
            0xd718262a,
            0xc626b0ea,
        ),
        (
            [24, 19, 198, 95],
            [12, 22, 207, 184],
            12898,
            38024,
            0xd2d0a5de,
            0x5c2b394a,
        ),
        (
            [38, 27, 205, 30],
            [209, 142, 163, 6],
            48228,
            2217,
            0x82989176,
            0xafc7327f,
        ),
        (
            [153, 39, 163, 191],
            [202, 188, 127, 2],
            44251,
            1303,
            0x5d1809c5,
            0x10e828a2,
        ),
    ];

    fn flow(v: &Vector, protocol: Protocol) -> FlowTuple {
        FlowTuple {
            src_addr: Ipv4Addr::from(v.0),
            dst_addr: Ipv4Addr::from(v.1),
            src_port: v.2,
            dst_port: v.3,
            protocol,
        }
    }

    /// The definition, one bit at a time: bit `b` of the input selects key bits
    /// `b .. b + 32`.
    fn toeplitz_by_definition(key: &[u8], input: &[u8]) -> u32 {
        let key_bit = |b: usize| key.get(b / 8).is_some_and(|k| k & (0x80 >> (b % 8)) != 0);
        let mut hash = 0u32;
        for b in 0..input.len() * 8 {
            if input[b / 8] & (0x80 >> (b % 8)) != 0 {
                hash ^= (0..32).fold(0u32, |w, j| (w << 1) | key_bit(b + j) as u32);
            }
        }
        hash
    }

    #[test]
    fn microsoft_ipv4_vectors_4tuple_and_2tuple() {
        for v in &MS_IPV4_VECTORS {
            let f = flow(v, Protocol::Tcp);
            let (two, four) = (v.4, v.5);
            assert_eq!(toeplitz(&DEFAULT_KEY, &f.input_4tuple()), four, "{f:?}");
            assert_eq!(toeplitz(&DEFAULT_KEY, &f.input_2tuple()), two, "{f:?}");
            assert_eq!(f.rss_hash(&DEFAULT_KEY, false), four, "TCP uses the ports");
        }
    }

    #[test]
    fn inputs_are_in_network_byte_order() {
        let f = flow(&MS_IPV4_VECTORS[0], Protocol::Tcp);
        // 66.9.149.187, 161.142.100.80, 2794 = 0x0aea, 1766 = 0x06e6.
        assert_eq!(
            f.input_4tuple(),
            [66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6]
        );
        assert_eq!(f.input_2tuple(), [66, 9, 149, 187, 161, 142, 100, 80]);
    }

    #[test]
    fn udp_and_other_protocols_pick_the_tuple_the_nic_hashes() {
        let v = &MS_IPV4_VECTORS[0];
        let udp = flow(v, Protocol::Udp);
        assert_eq!(udp.rss_hash(&DEFAULT_KEY, false), 0x323e8fc2);
        assert_eq!(udp.rss_hash(&DEFAULT_KEY, true), 0x51ccc178);
        let gre = flow(v, Protocol::Other(47));
        assert_eq!(gre.rss_hash(&DEFAULT_KEY, true), 0x323e8fc2);
    }

    #[test]
    fn one_input_bit_selects_its_key_window() {
        assert_eq!(toeplitz(&DEFAULT_KEY, &[]), 0);
        assert_eq!(toeplitz(&DEFAULT_KEY, &[0x80]), 0x6d5a56da);
        // Bit 7: key bits 7 .. 39 = 0x6d5a56da25 >> 1, low 32 bits.
        assert_eq!(toeplitz(&DEFAULT_KEY, &[0x01]), 0xad2b6d12);
        // Bit 8: key bytes 1 .. 5.
        assert_eq!(toeplitz(&DEFAULT_KEY, &[0, 0x80]), 0x5a56da25);
        // The last bit of a 36-byte input (an IPv6 4-tuple) takes key bits 287 .. 319,
        // the last but one: 0x3bbeac01fa >> 1, low 32 bits.
        let mut input = [0u8; 36];
        input[35] = 0x01;
        assert_eq!(toeplitz(&DEFAULT_KEY, &input), 0xdf5600fd);
        // Past the key's end the key counts as zeros.
        let mut past = [0u8; 40];
        past[39] = 0x80;
        assert_eq!(toeplitz(&DEFAULT_KEY, &past), 0xfa00_0000);
    }

    #[test]
    fn round_robin_table_is_index_mod_queues() {
        let t = Indirection::round_robin(DEFAULT_ENTRIES, 7);
        assert_eq!(t.entries(), 128);
        for (i, &q) in t.table.iter().enumerate() {
            assert_eq!(q as usize, i % 7);
        }
        // A single queue takes everything; more queues than entries leave some idle.
        assert!(Indirection::round_robin(8, 1).table.iter().all(|&q| q == 0));
        assert_eq!(Indirection::round_robin(4, 6).table, vec![0, 1, 2, 3]);
    }

    #[test]
    fn queue_uses_the_low_bits_of_the_hash() {
        // The 4-tuple hashes of the Microsoft vectors over 16 queues: with a 128-entry
        // round-robin table, queue = hash & 15.
        let t16 = Indirection::round_robin(128, 16);
        let q16: Vec<u16> = MS_IPV4_VECTORS.iter().map(|v| t16.queue(v.5)).collect();
        assert_eq!(q16, vec![8, 10, 10, 15, 2]);
        // Over 7 queues: (hash & 127) % 7. Low 7 bits 120, 106, 74, 127, 34.
        let t7 = Indirection::round_robin(128, 7);
        let q7: Vec<u16> = MS_IPV4_VECTORS.iter().map(|v| t7.queue(v.5)).collect();
        assert_eq!(q7, vec![1, 1, 4, 1, 6]);
        // Only the low 7 bits matter.
        for v in &MS_IPV4_VECTORS {
            assert_eq!(t7.queue(v.5), t7.queue(v.5 | 0xffff_ff80));
            assert_eq!(t7.queue(v.5), t7.queue(v.5 & 0x7f));
        }
        // A hand-built table of another size takes the remainder.
        let t3 = Indirection {
            table: vec![5, 6, 7],
        };
        assert_eq!((t3.queue(0), t3.queue(4), t3.queue(u32::MAX)), (5, 6, 5));
    }

    #[test]
    #[should_panic(expected = "not a power of two")]
    fn round_robin_refuses_a_table_that_is_not_a_power_of_two() {
        Indirection::round_robin(100, 4);
    }

    #[test]
    #[should_panic(expected = "queues")]
    fn round_robin_refuses_zero_queues() {
        Indirection::round_robin(128, 0);
    }

    fn same_length_inputs() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
        (0usize..=40).prop_flat_map(|n| {
            (
                prop::collection::vec(any::<u8>(), n),
                prop::collection::vec(any::<u8>(), n),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            // Failures print their input; nothing is written into the source tree.
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Toeplitz is linear over XOR: h(a ^ b) = h(a) ^ h(b), for any key (short keys
        /// included: missing key bits are zeros).
        #[test]
        fn toeplitz_is_linear(
            key in prop::collection::vec(any::<u8>(), 0..=48),
            (a, b) in same_length_inputs(),
        ) {
            let ab: Vec<u8> = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
            prop_assert_eq!(toeplitz(&key, &ab), toeplitz(&key, &a) ^ toeplitz(&key, &b));
        }

        /// The byte-at-a-time window equals the bit-by-bit definition.
        #[test]
        fn toeplitz_matches_the_definition(
            key in prop::collection::vec(any::<u8>(), 0..=48),
            input in prop::collection::vec(any::<u8>(), 0..=40),
        ) {
            prop_assert_eq!(toeplitz(&key, &input), toeplitz_by_definition(&key, &input));
        }
    }
}
