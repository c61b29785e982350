//! Frames entering and leaving the host as pcap captures (one file per NIC and
//! direction: `<nic>-in.pcap`, `<nic>-out.pcap`), for Wireshark and tshark.
//!
//! Format: classic pcap (`pcap-file` crate), little-endian, nanosecond time stamps
//! (magic `0xa1b23c4d`), link type Ethernet. A record's time stamp is the instant the
//! tester's latency uses: for a frame entering, its last bit at the input port (or its
//! first bit when the scenario's `latency_from` is `"first-bit"`); for a frame leaving,
//! its first bit at the output port. The difference of the two stamps of a frame is its
//! latency as results.json counts it, to the nanosecond (times are truncated to whole
//! nanoseconds).
//!
//! Each frame is `frame_bytes` long without its 4-byte FCS (pcap captures carry none):
//! - Ethernet: destination `02:00:00:00:00:<output NIC>` on the way in and
//!   `02:00:00:00:01:<flow>` on the way out, source the reverse, type IPv4;
//! - IPv4 (20 bytes, header checksum set): from `198.18.<input NIC>.<2 + flow % 250>`
//!   to `198.19.<output NIC>.<2 + flow % 250>` (RFC 2544's benchmarking range), UDP,
//!   TTL 64 entering and 63 leaving (the host forwarded it);
//! - UDP (8 bytes, checksum 0: none), port `1024 + flow % 64,000` to port 7;
//! - payload, as a tester's signature: flow index (u16), the flow's sequence number
//!   (u64) and the tester's time stamp in nanoseconds (u64, the input capture time),
//!   big-endian, then zeros to the frame's length. A 64-byte frame holds exactly these
//!   18 bytes; a shorter one holds what fits.
//!
//! tshark reads the fields with `-d udp.port==7,data -T fields -e frame.time_epoch -e data`.

use super::Captured;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

/// Ethernet + IPv4 + UDP headers \[bytes\].
pub const HEADERS: usize = 14 + 20 + 8;
/// The signature at the start of the payload \[bytes\].
pub const SIGNATURE: usize = 2 + 8 + 8;

/// Bytes a record of a `frame_bytes` frame takes in a pcap file.
pub fn record_bytes(frame_bytes: u32) -> u64 {
    16 + frame_bytes.saturating_sub(4) as u64
}

/// The frame's bytes as captured.
pub fn frame(c: &Captured) -> Vec<u8> {
    let len = (c.pkt.bytes as usize).saturating_sub(4);
    let mut f = vec![0u8; len.max(HEADERS + SIGNATURE)];
    let flow = c.pkt.flow;
    let host = [2, 0, 0, 0, 0, c.out_nic as u8];
    let tester = [2, 0, 0, 0, 1, flow as u8];
    let (dst, src) = if c.out {
        (tester, host)
    } else {
        (host, tester)
    };
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    let ip_len = (len.max(HEADERS + SIGNATURE) - 14) as u16;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[8] = if c.out { 63 } else { 64 };
    ip[9] = 17;
    let host_byte = (2 + flow % 250) as u8;
    ip[12..16].copy_from_slice(&[198, 18, c.in_nic as u8, host_byte]);
    ip[16..20].copy_from_slice(&[198, 19, c.out_nic as u8, host_byte]);
    let sum = checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let udp = &mut f[34..42];
    udp[0..2].copy_from_slice(&(1024 + (flow % 64_000) as u16).to_be_bytes());
    udp[2..4].copy_from_slice(&7u16.to_be_bytes());
    udp[4..6].copy_from_slice(&(ip_len - 20).to_be_bytes());
    let sig = &mut f[HEADERS..HEADERS + SIGNATURE];
    sig[0..2].copy_from_slice(&(flow as u16).to_be_bytes());
    sig[2..10].copy_from_slice(&c.pkt.seq.to_be_bytes());
    sig[10..18].copy_from_slice(&(c.stamp.0 / 1_000).to_be_bytes());
    f.truncate(len);
    f
}

/// The IPv4 header checksum (RFC 791: ones' complement of the ones' complement sum of
/// the 16-bit words, with the checksum field zero).
fn checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The signature a frame carries: flow, sequence number, tester time stamp \[ns\].
pub fn signature(data: &[u8]) -> Option<(u16, u64, u64)> {
    let s = data.get(HEADERS..HEADERS + SIGNATURE)?;
    Some((
        u16::from_be_bytes(s[0..2].try_into().ok()?),
        u64::from_be_bytes(s[2..10].try_into().ok()?),
        u64::from_be_bytes(s[10..18].try_into().ok()?),
    ))
}

/// One pcap file per NIC and direction that saw frames, in NIC order, `in` before
/// `out`; records in time order (ties: in the order captured).
pub fn files(nics: &[String], captured: &mut [Captured]) -> Vec<(String, Vec<u8>)> {
    captured.sort_by_key(|c| (c.nic, c.out, c.at));
    let mut out = Vec::new();
    let mut k = 0;
    while k < captured.len() {
        let (nic, dir) = (captured[k].nic, captured[k].out);
        let header = PcapHeader {
            ts_resolution: TsResolution::NanoSecond,
            datalink: DataLink::ETHERNET,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let mut w = PcapWriter::with_header(Vec::new(), header).expect("writing to memory");
        while k < captured.len() && (captured[k].nic, captured[k].out) == (nic, dir) {
            let c = &captured[k];
            let data = frame(c);
            let ts = std::time::Duration::from_nanos(c.at.0 / 1_000);
            w.write_packet(&PcapPacket::new(ts, data.len() as u32, &data))
                .expect("writing to memory");
            k += 1;
        }
        let name = format!("{}-{}.pcap", nics[nic], if dir { "out" } else { "in" });
        out.push((name, w.into_writer()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::packet::Packet;
    use crate::sim::time::SimTime;

    #[test]
    fn a_64_byte_frame_carries_its_signature_and_a_valid_ip_checksum() {
        let c = Captured {
            at: SimTime(2_000_000_001_500),
            nic: 1,
            out: true,
            pkt: Packet {
                flow: 3,
                bytes: 64,
                seq: 123_456,
                t_in: SimTime(1_999_999_000_000),
            },
            stamp: SimTime(1_999_999_000_999),
            out_nic: 1,
            in_nic: 0,
        };
        let f = frame(&c);
        assert_eq!(f.len(), 60);
        assert_eq!(signature(&f), Some((3, 123_456, 1_999_999_000)));
        // A header with its checksum in place sums to 0xffff: its complement is 0.
        assert_eq!(checksum(&f[14..34]), 0);
        assert_eq!(f[22], 63, "TTL after forwarding");
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 46, "IP total length");
    }

    #[test]
    fn files_are_per_nic_and_direction_in_time_order() {
        let p = |seq, t| Captured {
            at: SimTime(t),
            nic: 0,
            out: false,
            pkt: Packet {
                flow: 0,
                bytes: 64,
                seq,
                t_in: SimTime(t),
            },
            stamp: SimTime(t),
            out_nic: 1,
            in_nic: 0,
        };
        let mut caps = vec![p(1, 5_000), p(0, 1_000)];
        let files = files(&["dc0".into(), "dc1".into()], &mut caps);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "dc0-in.pcap");
        let mut r = pcap_file::pcap::PcapReader::new(&files[0].1[..]).unwrap();
        let first = r.next_packet().unwrap().unwrap();
        assert_eq!(first.timestamp, std::time::Duration::from_nanos(1));
        assert_eq!(signature(&first.data).unwrap().1, 0);
        assert_eq!(r.header().ts_resolution, TsResolution::NanoSecond);
    }
}
