//! Reading a capture for a flow's `"arrivals": {"pcap": "FILE"}` and turning it into
//! the flows a run replays ([`crate::model::capture`] says how a capture is replayed).
//!
//! **Formats** (read with the `pcap-file` crate):
//! - pcap (libpcap's format: either byte order, micro- or nanosecond time stamps, by
//!   its magic number);
//! - pcapng: Enhanced Packet Blocks, with each interface's `if_tsresol` (default 10^-6
//!   s, pcapng's specification, section 4.2) and `if_tsoffset`; a Simple Packet Block
//!   has no time stamp and is refused.
//!
//! The link type must be Ethernet. A frame is Ethernet (one 802.1Q tag skipped), IPv4,
//! then UDP or TCP: its 5-tuple is its addresses, ports and protocol, what a NIC's RSS
//! hashes. A frame that is not (IPv6, ARP, ICMP, a fragment after the first, a frame
//! cut before its ports) is refused, naming its record: replaying it would need a
//! steering the model does not have, and leaving it out would change the load. Frames
//! are replayed in time-stamp order (a capture merged from several queues may be
//! slightly out of order; the sort is stable).
//!
//! Limits: the file at most [`MAX_CAPTURE_BYTES`], all the captures of a scenario within
//! the command's read budget ([`crate::config::read_limit`]), counted by their sizes
//! before any is read; at least two frames (one frame has
//! no rate); at most [`crate::sim::limits::MAX_FLOWS`] 5-tuples.

use crate::model::capture::{CaptureTiming, Replay, ReplayFrame};
use crate::model::nic::link::Link;
use crate::model::traffic::{FRAME_BYTES_RANGE, TupleProtocol};
use crate::model::traffic::{FlowArrivals, FlowConfig, FrameDist, FrameSize, TupleConfig};
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::Arc;

/// Largest capture read \[bytes\]: 256 MiB, some 3 million minimum-size frames.
pub const MAX_CAPTURE_BYTES: u64 = 256 << 20;

/// Longest span of a capture's time stamps \[ns\]: 10^6 s (11.6 days), so that every
/// start in picoseconds fits 64 bits with room for the loop.
pub const MAX_SPAN_NS: u64 = 1_000_000 * 1_000_000_000;

/// Why a capture cannot be replayed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaptureError {
    /// Neither pcap nor pcapng, or a file the reader cannot follow.
    #[error("not a readable pcap or pcapng file: {0}")]
    Format(String),
    /// The capture's link layer is not Ethernet.
    #[error("link type {0} is not Ethernet (1)")]
    LinkType(String),
    /// One record cannot be replayed.
    #[error("record {index} (from 1): {reason}")]
    Record {
        /// Its number in the file, from 1 (as Wireshark numbers frames).
        index: usize,
        /// Why.
        reason: String,
    },
    /// Fewer than two frames.
    #[error("{0} frame(s): a capture needs at least two to have a rate")]
    TooFew(usize),
    /// All its frames have the same time stamp.
    #[error("every frame has the same time stamp: a capture needs a span to have a rate")]
    NoSpan,
    /// More 5-tuples than flows may be.
    #[error("more than {max} distinct 5-tuples (one flow each)", max = crate::sim::limits::MAX_FLOWS)]
    TooManyTuples,
    /// The frames span more time than a replay can hold.
    #[error(
        "the frames span {span_s:.0} s, from record {first} to record {last}; at most {max} s \
         (a time stamp far from the others: a clock reset?)",
        max = MAX_SPAN_NS / 1_000_000_000
    )]
    TooLong {
        /// The span \[s\].
        span_s: f64,
        /// The record with the earliest stamp, from 1.
        first: usize,
        /// The record with the latest stamp, from 1.
        last: usize,
    },
}

/// One frame of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaptureRecord {
    /// Its time stamp after the first frame's \[ns\].
    pub stamp_ns: u64,
    /// Its size on the wire, FCS included \[bytes\].
    pub bytes: u32,
    /// Its 5-tuple, an index into [`CaptureFile::tuples`].
    pub tuple: usize,
}

/// A capture as read: its frames in time order and its 5-tuples in order of first
/// appearance.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureFile {
    /// The frames.
    pub records: Vec<CaptureRecord>,
    /// The 5-tuples.
    pub tuples: Vec<TupleConfig>,
    /// FNV-1a of the file's bytes.
    pub fnv1a: u64,
    /// The file's size \[bytes\] (for the memory estimate of reading it).
    pub file_bytes: u64,
}

/// A record as [`parse`] first holds it: time stamp \[ns\], original length, captured
/// bytes.
type RawRecord<'d> = (u128, u32, &'d [u8]);

/// A record as [`finish`] sorts it: time stamp \[ns\], size, 5-tuple, record number.
type SortedRecord = (u128, u32, usize, usize);

/// Bytes held for each record while a capture is read, besides the file's own bytes:
/// the raw record, the record being sorted, the record kept, and its replay frame twice
/// (gathered per 5-tuple, then shared): what [`parse`] and [`expand`] allocate (152
/// bytes on a 64-bit machine). With the file's bytes, the peak of reading a capture
/// ([`crate::experiment::memory::reading_bytes`]).
pub const READ_RECORD_BYTES: u64 = (std::mem::size_of::<RawRecord<'static>>()
    + std::mem::size_of::<SortedRecord>()
    + std::mem::size_of::<CaptureRecord>()
    + 2 * std::mem::size_of::<ReplayFrame>()) as u64;

/// The fewest bytes a record takes in a file: a pcap record's 16-byte header and the
/// 38 bytes of a frame cut right after its ports (Ethernet 14, IPv4 20, ports 4), the
/// shortest a 5-tuple is read from (a pcapng Enhanced Packet Block takes more).
pub const MIN_RECORD_BYTES: u64 = 16 + 38;

/// The most reading a capture of `file_bytes` on disk can take \[bytes\], known before a
/// byte of it is read: its bytes, and [`READ_RECORD_BYTES`] for each of the most
/// records it can hold (one per [`MIN_RECORD_BYTES`]): about 3.8 times its size.
pub fn reading_bytes_at_most(file_bytes: u64) -> u64 {
    file_bytes.saturating_add((file_bytes / MIN_RECORD_BYTES).saturating_mul(READ_RECORD_BYTES))
}

/// Read a capture from its bytes.
pub fn parse(data: &[u8]) -> Result<CaptureFile, CaptureError> {
    let fmt = |e: pcap_file::PcapError| CaptureError::Format(e.to_string());
    if data.len() >= 4 && data[..4] == [0x0a, 0x0d, 0x0d, 0x0a] {
        let mut raw: Vec<RawRecord<'_>> = Vec::new();
        read_pcapng(data, &mut raw)?;
        return finish(raw, data);
    }
    let (mut rest, parser) = pcap_file::pcap::PcapParser::new(data).map_err(fmt)?;
    let header = parser.header();
    if header.datalink != pcap_file::DataLink::ETHERNET {
        return Err(CaptureError::LinkType(format!("{:?}", header.datalink)));
    }
    let (frac_ns, unit): (u128, &str) = match header.ts_resolution {
        pcap_file::TsResolution::MicroSecond => (1_000, "us"),
        pcap_file::TsResolution::NanoSecond => (1, "ns"),
    };
    // A snapshot length of 0 lets no byte of a frame be captured (libpcap's
    // pcap_check_header refuses it too, as it does any snaplen above its maximum).
    if header.snaplen == 0 {
        return Err(CaptureError::Format(
            "the file header's snapshot length is 0: no byte of any frame could be captured".into(),
        ));
    }
    // Raw records: a capture cut to a snapshot length (`tcpdump -s 96`) has records
    // shorter than their frames, which is all a replay needs (the original length
    // gives the size).
    let mut raw: Vec<RawRecord<'_>> = Vec::new();
    while !rest.is_empty() {
        let (r, p) = parser
            .next_raw_packet(rest)
            .map_err(|e| truncated(raw.len() + 1, data.len() - rest.len(), e))?;
        rest = r;
        let d: &[u8] = match p.data {
            std::borrow::Cow::Borrowed(b) => b,
            std::borrow::Cow::Owned(_) => {
                return Err(CaptureError::Format("an unexpected copied record".into()));
            }
        };
        // The record's fields as the format requires them (pcap-file's
        // PcapPacket::try_from_raw_packet checks the same, and also that orig_len is at
        // most snaplen, which is wrong: a snapshot length cuts what is captured, not the
        // frame -- `tcpdump -s 96` --, so the checks are made here).
        let index = raw.len() + 1;
        let bad = |reason: String| CaptureError::Record { index, reason };
        let second = 1_000_000_000 / frac_ns;
        if p.ts_frac as u128 >= second {
            return Err(bad(format!(
                "its time stamp's fraction of a second is {} {unit}, not below {second} \
                 {unit} (one second)",
                p.ts_frac
            )));
        }
        if p.orig_len == 0 {
            return Err(bad("its original length is 0 bytes: no frame".into()));
        }
        if p.incl_len > p.orig_len {
            return Err(bad(format!(
                "its captured length ({} bytes) is more than its original length ({} bytes)",
                p.incl_len, p.orig_len
            )));
        }
        if p.incl_len > header.snaplen {
            return Err(bad(format!(
                "its captured length ({} bytes) is more than the file's snapshot length ({} \
                 bytes)",
                p.incl_len, header.snaplen
            )));
        }
        let ns = p.ts_sec as u128 * 1_000_000_000 + p.ts_frac as u128 * frac_ns;
        raw.push((ns, p.orig_len, d));
    }
    finish(raw, data)
}

/// A record that cannot be read: where the file ends inside it, or the reader's reason.
fn truncated(index: usize, offset: usize, e: pcap_file::PcapError) -> CaptureError {
    match e {
        pcap_file::PcapError::IncompleteBuffer => CaptureError::Record {
            index,
            reason: format!(
                "the file ends inside it (at byte {offset} of its header or data): truncated?"
            ),
        },
        e => CaptureError::Record {
            index,
            reason: e.to_string(),
        },
    }
}

/// pcap-file's reason for refusing a block's frame (its type, lengths and, for a section
/// header, byte-order magic; `RawBlock::from_slice`), in the words of pcapng's
/// specification (section 3.1: "Block Total Length ... MUST be a multiple of 4"; the
/// same length ends the block; the smallest block is 12 bytes).
fn block_frame_fault(what: &str) -> String {
    match what {
        "Block: (initial_len % 4) != 0" => "its Block Total Length is not a multiple of 4 \
            (pcapng pads every block to 32 bits): a damaged file, or not pcapng"
            .into(),
        "Block: initial_len < 12" => {
            "its Block Total Length is below 12 bytes, the smallest a block can be".into()
        }
        "Block: initial_length != trailer_length" => "the Block Total Length at its start and \
            the one at its end differ: a damaged or cut file"
            .into(),
        "SectionHeaderBlock: invalid magic number" => "a Section Header Block whose \
            byte-order magic is neither 0x1A2B3C4D nor its byte swap"
            .into(),
        other => format!("invalid: {other}"),
    }
}

/// What a pcapng block type is, in words (pcapng's specification, section 11.1).
fn block_kind(t: u32) -> &'static str {
    match t {
        0x0A0D_0D0A => "a Section Header Block",
        1 => "an Interface Description Block",
        2 => "an obsolete Packet Block",
        3 => "a Simple Packet Block",
        4 => "a Name Resolution Block",
        5 => "an Interface Statistics Block",
        6 => "an Enhanced Packet Block",
        _ => "a block of another type",
    }
}

/// An Interface Description Block's body (pcapng section 4.2): link type, snapshot
/// length, and the options the replay needs: `if_tsresol` (9), `if_fcslen` (13),
/// `if_tsoffset` (14). Read here rather than by pcap-file, which refuses every
/// `if_tzone` (10) option: it wants 1 byte where the specification has 4.
/// (link type, snaplen, ts resolution byte, offset \[s\], FCS bytes).
fn idb<B: byteorder_slice::ByteOrder>(body: &[u8]) -> Result<(u16, u32, u8, i64, u32), String> {
    if body.len() < 8 {
        return Err(format!(
            "{} bytes, fewer than the 8 of its fields",
            body.len()
        ));
    }
    let linktype = B::read_u16(&body[0..2]);
    let snaplen = B::read_u32(&body[4..8]);
    let (mut res, mut offset_s, mut fcs) = (6u8, 0i64, 0u32);
    for (code, v) in options::<B>(&body[8..])? {
        let len = v.len();
        let want = |n: usize, name: &str| {
            if len == n {
                Ok(())
            } else {
                Err(format!("option {name} ({code}) of {len} bytes; it has {n}"))
            }
        };
        match code {
            9 => {
                want(1, "if_tsresol")?;
                res = v[0];
            }
            10 => want(4, "if_tzone")?,
            13 => {
                want(1, "if_fcslen")?;
                fcs = u32::from(v[0]);
            }
            14 => {
                want(8, "if_tsoffset")?;
                offset_s = B::read_i64(v);
            }
            _ => {}
        }
    }
    Ok((linktype, snaplen, res, offset_s, fcs))
}

/// The options of a block (pcapng section 3.5), (code, value) each, up to `opt_endofopt`
/// (0) or the body's end: each option's code and length, then its value padded to 32
/// bits, wholly inside the block.
fn options<B: byteorder_slice::ByteOrder>(mut s: &[u8]) -> Result<Vec<(u16, &[u8])>, String> {
    let mut out = Vec::new();
    while !s.is_empty() {
        if s.len() < 4 {
            return Err(format!(
                "{} bytes after its options, fewer than the 4 of an option's code and length",
                s.len()
            ));
        }
        let code = B::read_u16(&s[0..2]);
        let len = B::read_u16(&s[2..4]) as usize;
        s = &s[4..];
        if code == 0 {
            break;
        }
        let padded = len.div_ceil(4) * 4;
        if s.len() < padded {
            return Err(format!("option {code} of {len} bytes runs past the block"));
        }
        out.push((code, &s[..len]));
        s = &s[padded..];
    }
    Ok(out)
}

/// An Interface Statistics Block's body (pcapng section 4.6): the interface it counts
/// (described before it, one of `interfaces`), a 64-bit time stamp, then options. The
/// replay uses none of it, but a block too short for its fields (a total length under
/// 24 bytes) or with options past its end is a damaged file, refused like a damaged
/// packet.
fn isb<B: byteorder_slice::ByteOrder>(body: &[u8], interfaces: usize) -> Result<(), String> {
    if body.len() < 12 {
        return Err(format!(
            "{} bytes of body, fewer than the 12 of its interface id and time stamp (a block \
             of at least 24 bytes)",
            body.len()
        ));
    }
    let id = B::read_u32(&body[0..4]) as usize;
    if id >= interfaces {
        return Err(format!(
            "interface {id} is not described ({interfaces} interface(s) before it)"
        ));
    }
    options::<B>(&body[12..]).map(|_| ())
}

/// A pcapng block through pcap-file's reader, in the section's byte order.
fn block<'d, B: byteorder_slice::ByteOrder>(
    raw: pcap_file::pcapng::RawBlock<'d>,
) -> Result<pcap_file::pcapng::Block<'d>, pcap_file::PcapError> {
    raw.try_into_block::<B>()
}

/// The packets of a pcapng file: (time stamp [ns since the epoch], original length,
/// captured bytes). Blocks are taken one by one (pcap-file's `RawBlock`, then its
/// readers for the section header and the packets, and [`idb`] for the interfaces); an
/// error names the block and its kind, or the packet by its record number.
fn read_pcapng<'d>(data: &'d [u8], out: &mut Vec<RawRecord<'d>>) -> Result<(), CaptureError> {
    use byteorder_slice::{BigEndian, LittleEndian};
    use pcap_file::pcapng::{Block, RawBlock};
    // Each interface: ns = units x num / den + offset [ns]; the FCS bytes its frames
    // carry; its snapshot length (0: none).
    let mut ifaces: Vec<(u128, u128, i128, u32, u32)> = Vec::new();
    let mut little: Option<bool> = None;
    let (mut rest, mut nblock, mut index) = (data, 0usize, 0usize);
    while !rest.is_empty() {
        nblock += 1;
        let offset = data.len() - rest.len();
        let le = little.unwrap_or(false);
        let parsed = if le {
            RawBlock::from_slice::<LittleEndian>(rest)
        } else {
            RawBlock::from_slice::<BigEndian>(rest)
        };
        let (r, raw) = parsed.map_err(|e| match e {
            pcap_file::PcapError::IncompleteBuffer => CaptureError::Format(format!(
                "block {nblock}: the file ends inside it (at byte {offset}): truncated?"
            )),
            pcap_file::PcapError::InvalidField(what) => CaptureError::Format(format!(
                "block {nblock} (at byte {offset}): {}",
                block_frame_fault(what)
            )),
            e => CaptureError::Format(format!("block {nblock} (at byte {offset}): {e}")),
        })?;
        rest = r;
        let kind = block_kind(raw.type_);
        let bad =
            |reason: String| CaptureError::Format(format!("block {nblock} ({kind}): {reason}"));
        if nblock == 1 && raw.type_ != 0x0A0D_0D0A {
            return Err(bad(
                "a pcapng file starts with a Section Header Block".into()
            ));
        }
        match raw.type_ {
            0x0A0D_0D0A => {
                let Block::SectionHeader(h) =
                    block::<BigEndian>(raw).map_err(|e| bad(e.to_string()))?
                else {
                    return Err(bad("not a section header".into()));
                };
                little = Some(h.endianness == pcap_file::Endianness::Little);
                ifaces.clear();
            }
            1 => {
                let (linktype, snaplen, res, offset_s, fcs) = if le {
                    idb::<LittleEndian>(&raw.body)
                } else {
                    idb::<BigEndian>(&raw.body)
                }
                .map_err(bad)?;
                if linktype != 1 {
                    return Err(CaptureError::LinkType(format!(
                        "{:?}",
                        pcap_file::DataLink::from(u32::from(linktype))
                    )));
                }
                // ns = units * num / den.
                let (num, den) = if res & 0x80 == 0 {
                    let e = (res & 0x7f) as u32;
                    if e <= 9 {
                        (10u128.pow(9 - e), 1)
                    } else {
                        (1, 10u128.pow((e - 9).min(30)))
                    }
                } else {
                    (1_000_000_000, 1u128 << (res & 0x7f).min(100))
                };
                ifaces.push((num, den, offset_s as i128 * 1_000_000_000, fcs, snaplen));
            }
            6 => {
                index += 1;
                let rec = |reason: String| CaptureError::Record { index, reason };
                let epb = match if le {
                    block::<LittleEndian>(raw)
                } else {
                    block::<BigEndian>(raw)
                } {
                    Ok(Block::EnhancedPacket(b)) => b,
                    Ok(_) => return Err(rec("not an Enhanced Packet Block".into())),
                    Err(e) => return Err(rec(e.to_string())),
                };
                let Some(&(num, den, off, fcs, snaplen)) = ifaces.get(epb.interface_id as usize)
                else {
                    return Err(rec(format!(
                        "interface {} is not described",
                        epb.interface_id
                    )));
                };
                let caplen = epb.data.len() as u64;
                if epb.original_len == 0 {
                    return Err(rec("its original length is 0 bytes: no frame".into()));
                }
                if caplen > u64::from(epb.original_len) {
                    return Err(rec(format!(
                        "its captured length ({caplen} bytes) is more than its original length \
                         ({} bytes)",
                        epb.original_len
                    )));
                }
                if snaplen != 0 && caplen > u64::from(snaplen) {
                    return Err(rec(format!(
                        "its captured length ({caplen} bytes) is more than its interface's \
                         snapshot length ({snaplen} bytes)"
                    )));
                }
                // (The crate reads the 64-bit count of units as nanoseconds.)
                let units = epb.timestamp.as_nanos();
                let Ok(ns) = u128::try_from((units * num / den) as i128 + off) else {
                    return Err(rec(
                        "a time stamp before 1970 (a negative if_tsoffset)".into()
                    ));
                };
                let d: &'d [u8] = match epb.data {
                    std::borrow::Cow::Borrowed(b) => b,
                    std::borrow::Cow::Owned(_) => {
                        return Err(CaptureError::Format("an unexpected copied block".into()));
                    }
                };
                // The size is taken without the FCS (the replay adds it back).
                out.push((ns, epb.original_len.saturating_sub(fcs), d));
            }
            5 => if le {
                isb::<LittleEndian>(&raw.body, ifaces.len())
            } else {
                isb::<BigEndian>(&raw.body, ifaces.len())
            }
            .map_err(bad)?,
            2 | 3 => {
                index += 1;
                return Err(CaptureError::Record {
                    index,
                    reason: format!("{kind}, without a usable time stamp"),
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// Frames in time order, sizes and 5-tuples from the raw packets.
fn finish(raw: Vec<RawRecord<'_>>, data: &[u8]) -> Result<CaptureFile, CaptureError> {
    if raw.len() < 2 {
        return Err(CaptureError::TooFew(raw.len()));
    }
    let mut tuples: Vec<TupleConfig> = Vec::new();
    let mut seen: HashMap<(u32, u32, u16, u16, u8), usize> = HashMap::new();
    // (time stamp [ns], size, tuple, record number)
    let mut recs: Vec<SortedRecord> = Vec::with_capacity(raw.len());
    for (k, (t, orig, d)) in raw.iter().enumerate() {
        let index = k + 1;
        let bad = |reason: String| CaptureError::Record { index, reason };
        let bytes = (*orig as u64 + 4).max(FRAME_BYTES_RANGE.0 as u64);
        if bytes > FRAME_BYTES_RANGE.1 as u64 {
            return Err(bad(format!(
                "a frame of {bytes} bytes with its FCS; at most {}",
                FRAME_BYTES_RANGE.1
            )));
        }
        let tuple = five_tuple(d).map_err(bad)?;
        let key = (
            u32::from(tuple.src_addr),
            u32::from(tuple.dst_addr),
            tuple.src_port,
            tuple.dst_port,
            tuple.protocol as u8,
        );
        let next = tuples.len();
        let ti = *seen.entry(key).or_insert(next);
        if ti == next {
            tuples.push(tuple);
            if tuples.len() > crate::sim::limits::MAX_FLOWS {
                return Err(CaptureError::TooManyTuples);
            }
        }
        recs.push((*t, bytes as u32, ti, index));
    }
    recs.sort_by_key(|r| r.0);
    let (first, last) = (&recs[0], &recs[recs.len() - 1]);
    let t0 = first.0;
    if last.0 == t0 {
        return Err(CaptureError::NoSpan);
    }
    if last.0 - t0 > MAX_SPAN_NS as u128 {
        return Err(CaptureError::TooLong {
            span_s: (last.0 - t0) as f64 * 1e-9,
            first: first.3,
            last: last.3,
        });
    }
    let records = recs
        .into_iter()
        .map(|(t, bytes, tuple, _)| CaptureRecord {
            stamp_ns: (t - t0) as u64,
            bytes,
            tuple,
        })
        .collect();
    Ok(CaptureFile {
        records,
        tuples,
        fnv1a: crate::sim::rng::fnv1a(data),
        file_bytes: data.len() as u64,
    })
}

/// A frame's 5-tuple: Ethernet (one 802.1Q tag skipped), IPv4, UDP or TCP.
fn five_tuple(d: &[u8]) -> Result<TupleConfig, String> {
    let cut = || format!("cut at {} bytes, before its ports", d.len());
    let mut eth = 12;
    let mut ethertype = u16::from_be_bytes([
        *d.get(eth).ok_or_else(cut)?,
        *d.get(eth + 1).ok_or_else(cut)?,
    ]);
    if ethertype == 0x8100 {
        eth += 4;
        ethertype = u16::from_be_bytes([
            *d.get(eth).ok_or_else(cut)?,
            *d.get(eth + 1).ok_or_else(cut)?,
        ]);
    }
    if ethertype != 0x0800 {
        return Err(format!(
            "EtherType {ethertype:#06x}, not IPv4 (0x0800): only IPv4 UDP and TCP frames are replayed"
        ));
    }
    let ip = d.get(eth + 2..).ok_or_else(cut)?;
    if ip.len() < 20 {
        return Err(cut());
    }
    if ip[0] >> 4 != 4 {
        return Err(format!("IP version {}, not 4", ip[0] >> 4));
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    if ihl < 20 {
        return Err(format!("IPv4 header length {ihl} bytes, less than 20"));
    }
    let protocol = match ip[9] {
        17 => TupleProtocol::Udp,
        6 => TupleProtocol::Tcp,
        p => {
            return Err(format!(
                "IP protocol {p}, not UDP (17) or TCP (6): only IPv4 UDP and TCP frames are replayed"
            ));
        }
    };
    if u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff != 0 {
        return Err("a fragment after the first, without ports".into());
    }
    let l4 = ip.get(ihl..ihl + 4).ok_or_else(cut)?;
    Ok(TupleConfig {
        src_addr: Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]),
        dst_addr: Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]),
        src_port: u16::from_be_bytes([l4[0], l4[1]]),
        dst_port: u16::from_be_bytes([l4[2], l4[3]]),
        protocol,
    })
}

/// The capture flow `f` (whose arrivals name `capture`) with what the loader's checks
/// need: its sizes as a distribution (for a load in % of line rate, at the capture's
/// mean size), its own rate as `rate_pps` when it is replayed as captured, the file's
/// hash.
pub fn describe(f: &mut FlowConfig, capture: &CaptureFile) {
    f.frame_bytes = sizes_of(capture.records.iter().map(|r| r.bytes));
    if let FlowArrivals::Capture(c) = &mut f.arrivals {
        c.fnv1a = Some(format!("{:016x}", capture.fnv1a));
        if c.timing == CaptureTiming::AsCaptured {
            let n = capture.records.len() as f64;
            f.rate_pps = Some(n / (loop_ns(capture) as f64 * 1e-9));
        }
    }
}

/// Frame sizes as a flow's `frame_bytes`: one size, or the mix of them by count.
fn sizes_of(bytes: impl Iterator<Item = u32>) -> FrameSize {
    let mut sizes: std::collections::BTreeMap<u32, f64> = Default::default();
    for b in bytes {
        *sizes.entry(b).or_default() += 1.0;
    }
    if sizes.len() == 1 {
        return FrameSize::Fixed(*sizes.keys().next().expect("one size"));
    }
    FrameSize::Dist(FrameDist::Mix {
        sizes: sizes.keys().copied().collect(),
        weights: sizes.values().copied().collect(),
    })
}

/// The capture's loop period \[ns\]: its span times `N / (N - 1)`.
fn loop_ns(capture: &CaptureFile) -> u128 {
    let n = capture.records.len() as u128;
    let span = capture.records.last().map_or(0, |r| r.stamp_ns) as u128;
    (span * n).div_ceil(n - 1)
}

/// The flows a run replays for the capture flow `f` offered at `rates` (one per load
/// point) on an input `link`: one flow per 5-tuple, each with its frames' starts (the
/// stamps less their time on the link when `last_bit` stamps) and its share of the
/// rates.
pub fn expand(
    f: &FlowConfig,
    capture: &Arc<CaptureFile>,
    link: Link,
    last_bit: bool,
    rates: &[f64],
    cache: &mut FramesCache,
) -> Vec<(FlowConfig, Vec<f64>)> {
    let wire = |b: u32| {
        if last_bit { link.wire_time(b).0 } else { 0 }
    };
    let ps = |r: &CaptureRecord| (r.stamp_ns as u128 * 1000) as i128 - wire(r.bytes) as i128;
    let first = ps(&capture.records[0]);
    // Starts after the first frame's (a stamp less a longer frame's wire time may fall
    // before it: the replay then starts with that frame).
    let origin = capture.records.iter().map(ps).min().unwrap_or(first);
    let loop_ps = (loop_ns(capture) * 1000) as u64;
    let n = capture.records.len() as f64;
    let single = capture.tuples.len() == 1;
    // Each 5-tuple's frames, in one pass.
    // Made once per capture, link rate and stamp convention, and shared by every flow
    // and variant replaying it (40 flows of one capture hold one copy, not 40).
    let key = (
        Arc::as_ptr(capture) as usize,
        link.line_rate_bps.to_bits(),
        last_bit,
    );
    let shared = &cache
        .0
        .entry(key)
        .or_insert_with(|| {
            let mut per_tuple: Vec<Vec<ReplayFrame>> = vec![Vec::new(); capture.tuples.len()];
            for r in &capture.records {
                per_tuple[r.tuple].push(ReplayFrame {
                    // (At most MAX_SPAN_NS x 1000 + a wire time: within 64 bits.)
                    start_ps: (ps(r) - origin) as u64,
                    bytes: r.bytes,
                });
            }
            (
                capture.clone(),
                per_tuple.into_iter().map(Into::into).collect(),
            )
        })
        .1;
    let mut out = Vec::with_capacity(capture.tuples.len());
    for (t, frames) in capture.tuples.iter().zip(shared.iter().cloned()) {
        let share = frames.len() as f64 / n;
        let mut g = f.clone();
        if !single {
            let proto = match t.protocol {
                TupleProtocol::Udp => "udp",
                TupleProtocol::Tcp => "tcp",
            };
            g.name = Some(format!(
                "{}/{}:{}-{}:{}/{proto}",
                f.display_name(),
                t.src_addr,
                t.src_port,
                t.dst_addr,
                t.dst_port
            ));
        }
        g.tuple = Some(t.clone());
        g.frame_bytes = sizes_of(frames.iter().map(|fr| fr.bytes));
        g.rate_pps = f.rate_pps.map(|r| r * share);
        if let FlowArrivals::Capture(c) = &mut g.arrivals {
            c.replay = Some(Replay {
                frames,
                loop_ps,
                capture_frames: capture.records.len() as u64,
                file_bytes: capture.file_bytes,
            });
        }
        out.push((g, rates.iter().map(|r| r * share).collect()));
    }
    out
}

/// The frames replayed of each capture, by 5-tuple, for each input link rate and stamp
/// convention: made once by [`expand`] and shared (`Arc`) by every flow and variant
/// that replays the capture, so that what a sweep holds is one copy per capture and
/// link rate, as the memory estimate counts it. Each entry keeps its capture alive, so
/// that the capture's address, its key, is not reused while the cache lives.
#[derive(Debug, Default)]
#[allow(clippy::type_complexity)]
pub struct FramesCache(
    std::collections::HashMap<(usize, u64, bool), (Arc<CaptureFile>, Vec<Arc<[ReplayFrame]>>)>,
);

/// A capture read, or why not.
pub type CaptureRead = Result<Arc<CaptureFile>, String>;

/// Captures read once per file: by resolved path, and by the file's identity (device,
/// inode) where the file source knows it (40 flows naming 40 links to one 256
/// MiB capture read it 40 times, ran 141 s and aborted under 4 GB). What they add up to
/// is bounded by the command's read budget
/// ([`crate::config::read_limit::ReadBudget`]).
#[derive(Debug, Default)]
pub struct CaptureCache {
    /// By resolved path.
    pub by_path: HashMap<std::path::PathBuf, CaptureRead>,
    /// By (device, inode).
    pub by_id: HashMap<(u64, u64), CaptureRead>,
}

impl CaptureCache {
    /// An empty cache.
    pub fn new() -> CaptureCache {
        CaptureCache::default()
    }
}

#[cfg(test)]
mod tests;
