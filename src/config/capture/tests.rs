//! Unit tests of the capture reader: pcap and pcapng records, options and refusals.

use super::*;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};

/// An Ethernet/IPv4/UDP frame of `len` bytes (no FCS) from `src` port `sport`.
pub(crate) fn udp_frame(src: [u8; 4], sport: u16, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[23] = 17;
    f[26..30].copy_from_slice(&src);
    f[30..34].copy_from_slice(&[10, 1, 0, 1]);
    f[34..36].copy_from_slice(&sport.to_be_bytes());
    f[36..38].copy_from_slice(&9u16.to_be_bytes());
    f
}

fn pcap(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let header = PcapHeader {
        ts_resolution: pcap_file::TsResolution::NanoSecond,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for (t, d) in frames {
        w.write_packet(&PcapPacket::new(
            std::time::Duration::from_nanos(*t),
            d.len() as u32,
            d,
        ))
        .unwrap();
    }
    w.into_writer()
}

#[test]
fn a_pcap_gives_stamps_sizes_and_tuples_in_order_of_first_appearance() {
    let a = udp_frame([10, 0, 0, 1], 1024, 60);
    let b = udp_frame([10, 0, 0, 2], 1025, 1514);
    let c = parse(&pcap(&[
        (1_000_000_000, a.clone()),
        (1_000_010_000, b.clone()),
        (1_000_005_000, a.clone()),
    ]))
    .unwrap();
    // Sorted by time; sizes with the FCS.
    let got: Vec<(u64, u32, usize)> = c
        .records
        .iter()
        .map(|r| (r.stamp_ns, r.bytes, r.tuple))
        .collect();
    assert_eq!(got, [(0, 64, 0), (5_000, 64, 0), (10_000, 1518, 1)]);
    assert_eq!(c.tuples[1].src_addr, Ipv4Addr::new(10, 0, 0, 2));
    assert_eq!(c.tuples[1].src_port, 1025);
    // Span 10 us over 3 frames: the loop is 15 us.
    assert_eq!(loop_ns(&c), 15_000);
}

#[test]
fn flows_replaying_one_capture_share_one_copy_of_its_frames() {
    let a = udp_frame([10, 0, 0, 1], 1024, 60);
    let b = udp_frame([10, 0, 0, 2], 1025, 60);
    let c = Arc::new(parse(&pcap(&[(0, a), (1_000, b.clone()), (2_000, b)])).unwrap());
    let f: FlowConfig = serde_json::from_value(serde_json::json!({
        "from": "eth0", "to": "eth1", "arrivals": {"pcap": "x.pcap"}
    }))
    .unwrap();
    let frames = |out: &[(FlowConfig, Vec<f64>)]| -> Vec<Arc<[ReplayFrame]>> {
        out.iter()
            .map(|(g, _)| {
                g.arrivals
                    .capture()
                    .unwrap()
                    .replay
                    .as_ref()
                    .unwrap()
                    .frames
                    .clone()
            })
            .collect()
    };
    let (ten, hundred) = (Link::new(10e9), Link::new(100e9));
    let mut cache = FramesCache::default();
    // Two flows (or two variants) on one link: the same arrays, one per 5-tuple.
    let one = frames(&expand(&f, &c, ten, true, &[1e3], &mut cache));
    let two = frames(&expand(&f, &c, ten, true, &[2e3], &mut cache));
    assert_eq!((one.len(), one[0].len(), one[1].len()), (2, 1, 2));
    assert!(one.iter().zip(&two).all(|(x, y)| Arc::ptr_eq(x, y)));
    // Another link rate (last-bit stamps less another wire time): arrays of its own.
    let other = frames(&expand(&f, &c, hundred, true, &[1e3], &mut cache));
    assert!(!Arc::ptr_eq(&one[0], &other[0]));
    assert_eq!(cache.0.len(), 2);
}

#[test]
fn frames_that_cannot_be_steered_are_refused_by_record() {
    let a = udp_frame([10, 0, 0, 1], 1024, 60);
    let mut v6 = a.clone();
    v6[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
    let e = parse(&pcap(&[(0, a.clone()), (10, v6)])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "record 2 (from 1): EtherType 0x86dd, not IPv4 (0x0800): only IPv4 UDP and TCP frames are replayed"
    );
    let mut icmp = a.clone();
    icmp[23] = 1;
    let e = parse(&pcap(&[(0, icmp), (10, a.clone())])).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("record 1 (from 1): IP protocol 1"),
        "{e}"
    );
    assert_eq!(
        parse(&pcap(&[(0, a.clone())])).unwrap_err(),
        CaptureError::TooFew(1)
    );
    assert_eq!(
        parse(&pcap(&[(7, a.clone()), (7, a.clone())])).unwrap_err(),
        CaptureError::NoSpan
    );
    assert!(matches!(
        parse(b"not a capture at all"),
        Err(CaptureError::Format(_))
    ));
    // A VLAN tag is skipped.
    let mut tagged = vec![0u8; 64];
    tagged[12..14].copy_from_slice(&0x8100u16.to_be_bytes());
    tagged[16..].copy_from_slice(&a[12..60]);
    let c = parse(&pcap(&[(0, tagged), (10, a)])).unwrap();
    assert_eq!(c.tuples.len(), 1);
}

/// A little-endian microsecond pcap written by hand: snapshot length `snap`,
/// records (time stamp \[us\], original length, captured bytes).
fn raw_pcap(snap: u32, records: &[(u64, u32, &[u8])]) -> Vec<u8> {
    let mut f = Vec::new();
    for w in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, snap, 1] {
        f.extend_from_slice(&w.to_le_bytes());
    }
    for (us, orig, d) in records {
        for w in [
            (us / 1_000_000) as u32,
            (us % 1_000_000) as u32,
            d.len() as u32,
            *orig,
        ] {
            f.extend_from_slice(&w.to_le_bytes());
        }
        f.extend_from_slice(d);
    }
    f
}

#[test]
fn a_capture_cut_to_a_snapshot_length_gives_the_original_sizes() {
    // `tcpdump -s 96`: 1,514-byte frames of which 96 bytes were kept.
    let a = udp_frame([10, 0, 0, 1], 1024, 1514);
    let c = parse(&raw_pcap(96, &[(0, 1514, &a[..96]), (100, 1514, &a[..96])])).unwrap();
    assert_eq!(c.records[1].bytes, 1518);
    assert_eq!(c.records[1].stamp_ns, 100_000);
    // Cut before the ports: refused by record.
    let e = parse(&raw_pcap(30, &[(0, 1514, &a[..30]), (100, 1514, &a[..30])])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "record 1 (from 1): cut at 30 bytes, before its ports"
    );
    // A file that ends inside a record says where.
    let whole = raw_pcap(96, &[(0, 1514, &a[..96]), (100, 1514, &a[..96])]);
    let e = parse(&whole[..whole.len() - 10]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("record 2 (from 1): the file ends inside it"),
        "{e}"
    );
}

#[test]
fn stamps_far_apart_and_bad_headers_are_refused() {
    let a = udp_frame([10, 0, 0, 1], 1024, 60);
    // A frame stamped 2^40 us after the first (a clock reset): 12.7 days of span.
    let e = parse(&raw_pcap(65_535, &[(0, 60, &a), (1 << 40, 60, &a)])).unwrap_err();
    assert!(
        matches!(
            e,
            CaptureError::TooLong {
                first: 1,
                last: 2,
                ..
            }
        ),
        "{e}"
    );
    // An IPv4 header length of 0 words would put the ports inside the IP header.
    let mut b = a.clone();
    b[14] = 0x40;
    let e = parse(&raw_pcap(65_535, &[(0, 60, &a), (10, 60, &b)])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "record 2 (from 1): IPv4 header length 0 bytes, less than 20"
    );
}

#[test]
fn pcapng_time_stamps_follow_the_interfaces_resolution() {
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::{
        InterfaceDescriptionBlock, InterfaceDescriptionOption,
    };
    let a = udp_frame([10, 0, 0, 1], 1024, 60);
    for (res, unit_ns) in [(None, 1_000u64), (Some(9u8), 1), (Some(3), 1_000_000)] {
        let mut w = PcapNgWriter::new(Vec::new()).unwrap();
        let mut idb = InterfaceDescriptionBlock::new(pcap_file::DataLink::ETHERNET, 65535);
        if let Some(r) = res {
            idb.options.push(InterfaceDescriptionOption::IfTsResol(r));
        }
        w.write_pcapng_block(idb).unwrap();
        for units in [1_000u64, 1_250] {
            let epb = EnhancedPacketBlock {
                interface_id: 0,
                // (The crate writes the count of units it is given as nanoseconds.)
                timestamp: std::time::Duration::from_nanos(units),
                original_len: a.len() as u32,
                data: std::borrow::Cow::Borrowed(&a),
                options: vec![],
            };
            w.write_pcapng_block(epb).unwrap();
        }
        let c = parse(&w.into_inner()).unwrap();
        assert_eq!(c.records[1].stamp_ns, 250 * unit_ns, "if_tsresol {res:?}");
    }
}

#[test]
fn an_interface_statistics_block_is_checked_against_the_specification() {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
    use pcap_file::pcapng::{PcapNgWriter, RawBlock};
    let a = udp_frame([10, 0, 0, 1], 1024, 60);
    // Blocks 1-4: section header, interface, two packets; block 5 the statistics
    // block with `body` (interface id, 64-bit time stamp, options: at least 12 bytes,
    // a block of at least 24; draft-ietf-opsawg-pcapng section 4.6).
    let with_isb = |body: &dyn Fn(pcap_file::Endianness) -> Vec<u8>| {
        let mut w = PcapNgWriter::new(Vec::new()).unwrap();
        let idb = InterfaceDescriptionBlock::new(pcap_file::DataLink::ETHERNET, 65535);
        w.write_pcapng_block(idb).unwrap();
        for us in [1u64, 2] {
            w.write_pcapng_block(EnhancedPacketBlock {
                interface_id: 0,
                timestamp: std::time::Duration::from_nanos(us),
                original_len: a.len() as u32,
                data: std::borrow::Cow::Borrowed(&a),
                options: vec![],
            })
            .unwrap();
        }
        let body = body(w.section().endianness);
        let len = body.len() as u32 + 12;
        w.write_raw_block(&RawBlock {
            type_: 5,
            initial_len: len,
            body: std::borrow::Cow::Owned(body),
            trailer_len: len,
        })
        .unwrap();
        parse(&w.into_inner()).map(|c| c.records.len())
    };
    let u32_in = |e, v: u32| match e {
        pcap_file::Endianness::Big => v.to_be_bytes(),
        pcap_file::Endianness::Little => v.to_le_bytes(),
    };
    // An option's code and length, in the section's byte order.
    let opt = |e, code: u16, len: u16| match e {
        pcap_file::Endianness::Big => [code.to_be_bytes(), len.to_be_bytes()].concat(),
        pcap_file::Endianness::Little => [code.to_le_bytes(), len.to_le_bytes()].concat(),
    };
    // Interface 0, a time stamp, no options: a valid 24-byte block, taken.
    assert_eq!(with_isb(&|_| vec![0; 12]), Ok(2));
    // With `isb_ifrecv` (4, 8 bytes) and the end of options.
    assert_eq!(
        with_isb(&|e| [vec![0; 12], opt(e, 4, 8), vec![0; 8], opt(e, 0, 0)].concat()),
        Ok(2)
    );
    // Before: a 16-byte block (4 bytes of body) was taken without a word.
    let e = with_isb(&|_| vec![1, 2, 3, 0]).unwrap_err().to_string();
    assert_eq!(
        e,
        "not a readable pcap or pcapng file: block 5 (an Interface Statistics Block): 4 \
         bytes of body, fewer than the 12 of its interface id and time stamp (a block of \
         at least 24 bytes)"
    );
    // An interface that no block described.
    let e = with_isb(&|e| {
        let mut b = u32_in(e, 1).to_vec();
        b.extend([0; 8]);
        b
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.ends_with("block 5 (an Interface Statistics Block): interface 1 is not described (1 interface(s) before it)"),
        "{e}"
    );
    // An option whose value runs past the block.
    let e = with_isb(&|e| [vec![0; 12], opt(e, 2, 64)].concat())
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("option 2 of 64 bytes runs past the block"),
        "{e}"
    );
}

#[test]
fn a_pcapng_block_of_a_bad_length_is_named_in_the_specifications_words() {
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
    // A section header and an interface, then a block whose Block Total Length field
    // (bytes 4-8 of the block, little-endian as the writer's section) is `len`.
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    assert_eq!(w.section().endianness, pcap_file::Endianness::Little);
    let idb = InterfaceDescriptionBlock::new(pcap_file::DataLink::ETHERNET, 65535);
    w.write_pcapng_block(idb).unwrap();
    let good = w.into_inner();
    let with_len = |len: u32| {
        let mut f = good.clone();
        let at = f.len();
        f.extend(6u32.to_le_bytes());
        f.extend(len.to_le_bytes());
        f.extend([0u8; 28]);
        f.extend(32u32.to_le_bytes());
        (at, parse(&f).unwrap_err().to_string())
    };
    // Before: "block 3: Invalid field value: Block: (initial_len % 4) != 0".
    let (at, e) = with_len(30);
    assert!(
        e.ends_with(&format!(
            "block 3 (at byte {at}): its Block Total Length is not a multiple of 4 (pcapng \
             pads every block to 32 bits): a damaged file, or not pcapng"
        )),
        "{e}"
    );
    let (_, e) = with_len(8);
    assert!(
        e.ends_with("below 12 bytes, the smallest a block can be"),
        "{e}"
    );
    let (_, e) = with_len(36);
    assert!(
        e.contains("the Block Total Length at its start and the one at its end differ"),
        "{e}"
    );
}
