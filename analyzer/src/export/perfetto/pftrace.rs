//! The trace as Perfetto protobuf (`.pftrace`, the format rocprofv3 writes): a stream of
//! `TracePacket`s on one packet sequence, its strings interned (event names, categories,
//! annotation names and string values: each sent once, then referred to by id), grouped into
//! deflate-compressed `compressed_packets` bundles as Perfetto's own tracing service writes
//! them when compression is on.
//!
//! Tracks: one process track per run (its pid, named with label, run id and pid), a thread track
//! per host thread (pid and tid, so the Perfetto UI merges it with the same thread in another
//! trace of the process), a track per GPU queue, and two counter tracks per run. Slices are
//! begin/end pairs, nested per track (a parent's end is written after its children's, so equal
//! timestamps keep their nesting); a pass's slice starts a flow that its GPU slice ends.
//!
//! Each run starts by clearing the sequence's incremental state and restating its defaults: its
//! strings are interned anew, and its main thread's track is the default track, so the events on
//! it (most of a run's) carry no track uuid, a third of their bytes.
//!
//! Clock: every timestamp is CLOCK_BOOTTIME nanoseconds, declared in the sequence's
//! `TracePacketDefaults.timestamp_clock_id` (BUILTIN_CLOCK_BOOTTIME). rocprofv3 writes its
//! `.pftrace` through the Perfetto SDK with the SDK's own record timestamps (CLOCK_BOOTTIME ns)
//! as explicit event times and the SDK's default trace clock, BOOTTIME (read in
//! `projects/rocprofiler-sdk/source/lib/output/generatePerfetto.cpp`, ROCm/rocm-systems
//! @d8adfc9b): both traces of one run share one time axis. Its thread tracks are named
//! `THREAD n (tid)` and its queue tracks `COMPUTE … QUEUE [n] …`; ours follow that pattern.

use std::io::Write;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use anyhow::Result;
use prost::Message;
use prost::encoding::WireType;
use rustc_hash::FxHashMap as HashMap;

use super::model::{Arg, Counter, Flow, RunInfo, Sink, Slice, Track, Val};
use super::proto::{self as pb, Data, TracePacket};

/// The packet sequence krphase writes on: far from the small ids a tracing service hands out,
/// so a krphase trace concatenated with another keeps its interned strings apart.
pub const SEQUENCE_ID: u32 = 0x6b72_7068; // "krph"

/// Raw bytes of packets per compressed bundle: deflate never grows data by more than a few
/// bytes per 16 KiB block, so each bundle stays under Perfetto's 512 KiB per packet.
const BUNDLE_RAW_BYTES: usize = 448 << 10;

/// A 64-bit mix (SplitMix64's finalizer): track uuids from (run, kind, key), stable from one
/// export to the next and unlikely to meet another producer's.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn uuid(run: i64, kind: u64, key: i64) -> u64 {
    mix(mix(mix(0x6b72_7068_0000_0000 ^ run as u64) ^ kind) ^ key as u64)
}

const KIND_PROCESS: u64 = 1;
const KIND_THREAD: u64 = 2;
const KIND_QUEUE: u64 = 3;
const KIND_COUNTER: u64 = 4;

/// A varint, inlined: the hot path of every packet (most values fit one or two bytes).
#[inline]
fn varint(mut v: u64, b: &mut Vec<u8>) {
    while v >= 0x80 {
        b.push((v as u8) | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

#[inline]
fn varint_len(v: u64) -> usize {
    // 7 bits per byte; at least one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// A field's key (tag and wire type) as a varint.
#[inline]
fn key(tag: u32, wire: WireType, b: &mut Vec<u8>) {
    varint(u64::from(tag << 3 | wire as u32), b);
}

/// Strings interned on the sequence, one table per kind.
#[derive(Default)]
struct Interner {
    names: HashMap<String, u64>,
    cats: HashMap<&'static str, u64>,
    keys: HashMap<String, u64>,
    values: HashMap<String, u64>,
    /// What the next packet must carry: the entries not sent yet.
    pending: pb::InternedData,
}

impl Interner {
    fn name(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.names.get(s) {
            return i;
        }
        let i = self.names.len() as u64 + 1;
        self.names.insert(s.to_string(), i);
        self.pending.event_names.push(pb::Interned {
            iid: Some(i),
            name: Some(s.to_string()),
        });
        i
    }

    fn cat(&mut self, s: &'static str) -> u64 {
        if let Some(&i) = self.cats.get(s) {
            return i;
        }
        let i = self.cats.len() as u64 + 1;
        self.cats.insert(s, i);
        self.pending.event_categories.push(pb::Interned {
            iid: Some(i),
            name: Some(s.to_string()),
        });
        i
    }

    fn key(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.keys.get(s) {
            return i;
        }
        let i = self.keys.len() as u64 + 1;
        self.keys.insert(s.to_string(), i);
        self.pending.debug_annotation_names.push(pb::Interned {
            iid: Some(i),
            name: Some(s.to_string()),
        });
        i
    }

    fn value(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.values.get(s) {
            return i;
        }
        let i = self.values.len() as u64 + 1;
        self.values.insert(s.to_string(), i);
        self.pending
            .debug_annotation_string_values
            .push(pb::InternedBytes {
                iid: Some(i),
                str: Some(s.as_bytes().to_vec()),
            });
        i
    }

    fn take(&mut self) -> Option<pb::InternedData> {
        let p = &self.pending;
        let empty = p.event_names.is_empty()
            && p.event_categories.is_empty()
            && p.debug_annotation_names.is_empty()
            && p.debug_annotation_string_values.is_empty();
        (!empty).then(|| std::mem::take(&mut self.pending))
    }
}

/// Bundles leave the exporting thread for a writer thread that compresses and writes them, so
/// reading the database and compressing run on two cores.
struct Bundler {
    raw: Vec<u8>,
    tx: Option<SyncSender<Vec<u8>>>,
    worker: Option<JoinHandle<Result<u64>>>,
}

fn compress_and_write<W: Write>(mut w: W, rx: Receiver<Vec<u8>>, compress: bool) -> Result<u64> {
    let mut bytes = 0u64;
    let mut packet = Vec::new();
    // One compressor for every bundle, reset between them: a new one per bundle would set up
    // its window and hash tables again each time. Each bundle is still a whole zlib stream.
    let mut z = flate2::Compress::new(flate2::Compression::fast(), true);
    let mut data = Vec::new();
    for raw in rx {
        let body = if compress {
            deflate_bundle(&mut z, &raw, &mut data)?;
            packet.clear();
            // `TracePacket { compressed_packets }`, length-delimited: field 50's key, the
            // length, the bytes.
            varint(
                (data.len() + 2 + varint_len(data.len() as u64)) as u64,
                &mut packet,
            );
            key(50, WireType::LengthDelimited, &mut packet);
            varint(data.len() as u64, &mut packet);
            packet.extend_from_slice(&data);
            w.write_all(&[0x0a])?;
            &packet[..]
        } else {
            &raw[..]
        };
        w.write_all(body)?;
        bytes += body.len() as u64 + u64::from(compress);
    }
    w.flush()?;
    Ok(bytes)
}

/// `raw` as one zlib stream into `out` (cleared first), by `z` reset for it.
fn deflate_bundle(z: &mut flate2::Compress, raw: &[u8], out: &mut Vec<u8>) -> Result<()> {
    z.reset();
    out.clear();
    // Deflate's worst case is a few bytes per 16 KiB block past the input: one call suffices.
    out.reserve(raw.len() + raw.len() / 1024 + 64);
    let status = z.compress_vec(raw, out, flate2::FlushCompress::Finish)?;
    anyhow::ensure!(
        status == flate2::Status::StreamEnd && z.total_in() == raw.len() as u64,
        "deflate stopped short of the bundle's end"
    );
    Ok(())
}

impl Bundler {
    fn new<W: Write + Send + 'static>(w: W, compress: bool) -> Self {
        let (tx, rx) = sync_channel::<Vec<u8>>(4);
        let worker = std::thread::spawn(move || compress_and_write(w, rx, compress));
        Bundler {
            raw: Vec::with_capacity(BUNDLE_RAW_BYTES + 4096),
            tx: Some(tx),
            worker: Some(worker),
        }
    }

    /// Appends one packet as a `Trace.packet` field (tag 1, length-delimited).
    fn push(&mut self, p: &TracePacket) -> Result<()> {
        self.raw.push(0x0a);
        p.encode_length_delimited(&mut self.raw)?;
        self.full()
    }

    /// Sends the bundle once it is full.
    fn full(&mut self) -> Result<()> {
        if self.raw.len() >= BUNDLE_RAW_BYTES {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<()> {
        if self.raw.is_empty() {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.raw, Vec::with_capacity(BUNDLE_RAW_BYTES + 4096));
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(full).is_ok());
        if !sent {
            // The writer stopped on an error: take it.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    /// Sends the rest and waits for the writer; returns the bytes written.
    fn finish(&mut self) -> Result<u64> {
        self.send()?;
        self.join()
    }

    fn join(&mut self) -> Result<u64> {
        self.tx = None;
        match self.worker.take() {
            Some(h) => h
                .join()
                .map_err(|_| anyhow::anyhow!("the trace writer thread panicked"))?,
            None => anyhow::bail!("the trace writer has already stopped"),
        }
    }
}

/// An open slice on a track: its end, for the end event written after its children's.
type Open = Vec<i64>;

/// The protobuf writer.
pub struct PftraceSink {
    out: Bundler,
    strings: Interner,
    run: i64,
    pid: i32,
    process: u64,
    /// Tracks described so far (uuid → ()), and each track's open slices.
    described: HashMap<u64, ()>,
    open: HashMap<u64, Open>,
    /// Queues of the run in order of first use, for their names.
    queues: HashMap<i64, usize>,
    /// The run's counter tracks: snapshot bytes, windows in flight.
    counters: [u64; 2],
    /// The sequence's default track (the run's main thread; 0 for none): its events omit it.
    default_track: u64,
    /// Reused buffers: the event's fields, the strings interned for its packet.
    body: Vec<u8>,
    packet: Vec<u8>,
    pub packets: u64,
}

impl PftraceSink {
    /// A writer into `w`; `compress` bundles packets into deflate-compressed bundles.
    pub fn new<W: Write + Send + 'static>(w: W, compress: bool) -> Result<Self> {
        let s = PftraceSink {
            out: Bundler::new(w, compress),
            strings: Interner::default(),
            run: 0,
            pid: 0,
            process: 0,
            described: HashMap::default(),
            open: HashMap::default(),
            queues: HashMap::default(),
            counters: [0; 2],
            default_track: 0,
            body: Vec::new(),
            packet: Vec::new(),
            packets: 0,
        };
        Ok(s)
    }

    /// Starts the sequence's incremental state afresh (no string interned) with its defaults:
    /// BOOTTIME timestamps and, when given, the default track of events that name none.
    fn clear_state(&mut self, default_track: Option<u64>) -> Result<()> {
        self.strings = Interner::default();
        self.default_track = default_track.unwrap_or(0);
        self.push(TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            sequence_flags: Some(pb::SEQ_INCREMENTAL_STATE_CLEARED),
            trace_packet_defaults: Some(pb::TracePacketDefaults {
                timestamp_clock_id: Some(pb::BUILTIN_CLOCK_BOOTTIME),
                track_event_defaults: default_track.map(|t| pb::TrackEventDefaults {
                    track_uuid: Some(t),
                }),
            }),
            ..Default::default()
        })
    }

    /// Writes what is left; returns the file's size in bytes.
    pub fn finish(mut self) -> Result<u64> {
        if self.packets == 0 {
            // A trace of no run still states its clock.
            self.clear_state(None)?;
        }
        self.out.finish()
    }

    fn push(&mut self, p: TracePacket) -> Result<()> {
        self.packets += 1;
        self.out.push(&p)
    }

    fn describe(&mut self, d: pb::TrackDescriptor) -> Result<()> {
        let id = d.uuid.unwrap_or(0);
        if self.described.insert(id, ()).is_some() {
            return Ok(());
        }
        self.push(TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            data: Some(Data::TrackDescriptor(d)),
            ..Default::default()
        })
    }

    /// The uuid of `track`, described at its first use.
    fn track(&mut self, track: Track) -> Result<u64> {
        let (kind, key) = match track {
            Track::Thread(t) => (KIND_THREAD, t),
            Track::Queue(q) => (KIND_QUEUE, q),
        };
        let id = uuid(self.run, kind, key);
        if self.described.contains_key(&id) {
            return Ok(id);
        }
        let mut d = pb::TrackDescriptor {
            uuid: Some(id),
            parent_uuid: Some(self.process),
            ..Default::default()
        };
        match track {
            Track::Thread(t) => match i32::try_from(t) {
                Ok(tid) => {
                    d.thread = Some(pb::ThreadDescriptor {
                        pid: Some(self.pid),
                        tid: Some(tid),
                        thread_name: Some(format!("THREAD {tid}")),
                    })
                }
                Err(_) => d.name = Some(format!("THREAD {t}")),
            },
            Track::Queue(q) => {
                let n = self.queues.len();
                let n = *self.queues.entry(q).or_insert(n);
                d.name = Some(format!("COMPUTE QUEUE [{n}] {q:#x}"));
            }
        }
        self.describe(d)?;
        Ok(id)
    }

    /// A track event on `track` at `ts`: `body` holds its fields (track_uuid is added here),
    /// encoded straight into the bundle (a million windows are twenty million events), with the
    /// strings it interned on its packet.
    fn event(&mut self, ts: i64, track: u64) -> Result<()> {
        if track != self.default_track {
            key(11, WireType::Varint, &mut self.body);
            varint(track, &mut self.body);
        }
        let interned = &mut self.packet;
        interned.clear();
        if let Some(i) = self.strings.take() {
            key(12, WireType::LengthDelimited, interned);
            i.encode_length_delimited(interned)?;
        }
        let seq = u64::from(SEQUENCE_ID);
        let flags = u64::from(pb::SEQ_NEEDS_INCREMENTAL_STATE);
        let body = self.body.len() as u64;
        let len = 3
            + varint_len(ts as u64)
            + varint_len(seq)
            + varint_len(flags)
            + interned.len()
            + 1
            + varint_len(body)
            + self.body.len();
        let pk = &mut self.out.raw;
        pk.push(0x0a);
        varint(len as u64, pk);
        key(8, WireType::Varint, pk);
        varint(ts as u64, pk);
        key(10, WireType::Varint, pk);
        varint(seq, pk);
        key(13, WireType::Varint, pk);
        varint(flags, pk);
        pk.extend_from_slice(interned);
        key(11, WireType::LengthDelimited, pk);
        varint(body, pk);
        pk.extend_from_slice(&self.body);
        self.body.clear();
        self.packets += 1;
        self.out.full()
    }

    /// The begin fields of a slice or instant: type, name, category, annotations, flows.
    fn head(&mut self, kind: i32, name: &str, cat: &'static str, args: &[Arg<'_>], flow: Flow) {
        let (name, cat) = (self.strings.name(name), self.strings.cat(cat));
        let b = &mut self.body;
        b.clear();
        key(3, WireType::Varint, b);
        varint(cat, b);
        for (k, v) in args {
            let k = self.strings.key(k);
            // The annotation's value field: its tag and the varint or 8 bytes after it.
            let (tag, wire, bits) = match *v {
                Val::Int(i) => (4, WireType::Varint, i as u64),
                Val::Bool(x) => (2, WireType::Varint, u64::from(x)),
                Val::Pmc(x) => (5, WireType::SixtyFourBit, x.to_bits()),
                Val::Str(s) => (17, WireType::Varint, self.strings.value(s)),
            };
            let value_len = match wire {
                WireType::SixtyFourBit => 8,
                _ => varint_len(bits),
            };
            let len = 1 + varint_len(k) + prost::encoding::key_len(tag) + value_len;
            let b = &mut self.body;
            key(4, WireType::LengthDelimited, b);
            varint(len as u64, b);
            key(1, WireType::Varint, b);
            varint(k, b);
            key(tag, wire, b);
            match wire {
                WireType::SixtyFourBit => b.extend_from_slice(&bits.to_le_bytes()),
                _ => varint(bits, b),
            }
        }
        let b = &mut self.body;
        key(9, WireType::Varint, b);
        varint(kind as u64, b);
        key(10, WireType::Varint, b);
        varint(name, b);
        let (tag, id) = match flow {
            Flow::None => return,
            Flow::Out(id) => (47, id),
            Flow::In(id) => (48, id),
        };
        key(tag, WireType::SixtyFourBit, b);
        b.extend_from_slice(&id.to_le_bytes());
    }

    /// Ends the open slices of `track` that end before a slice from `start` to `end` begins.
    fn close_before(&mut self, track: u64, start: i64, end: i64) -> Result<()> {
        while let Some(&top) = self.open.get(&track).and_then(|o| o.last()) {
            // A slice that starts where the open one ends follows it, unless it has no length
            // (then it is the open one's last instant, inside it).
            if top < start || (top == start && end > start) {
                self.open.get_mut(&track).map(Vec::pop);
                self.end_slice(track, top)?;
            } else {
                break;
            }
        }
        Ok(())
    }

    fn end_slice(&mut self, track: u64, ts: i64) -> Result<()> {
        self.body.clear();
        key(9, WireType::Varint, &mut self.body);
        varint(pb::TYPE_SLICE_END as u64, &mut self.body);
        self.event(ts, track)
    }

    fn close_all(&mut self) -> Result<()> {
        let mut tracks: Vec<u64> = self.open.keys().copied().collect();
        tracks.sort_unstable();
        for t in tracks {
            while let Some(top) = self.open.get_mut(&t).and_then(Vec::pop) {
                self.end_slice(t, top)?;
            }
        }
        self.open.clear();
        Ok(())
    }
}

impl Sink for PftraceSink {
    fn begin_run(&mut self, run: &RunInfo) -> Result<()> {
        self.run = run.id;
        self.pid = i32::try_from(run.pid).unwrap_or(0);
        self.process = uuid(run.id, KIND_PROCESS, 0);
        self.queues.clear();
        let main = run.main_thread.map(|t| uuid(run.id, KIND_THREAD, t));
        self.clear_state(main)?;
        let mut d = pb::TrackDescriptor {
            uuid: Some(self.process),
            ..Default::default()
        };
        if self.pid > 0 {
            d.process = Some(pb::ProcessDescriptor {
                pid: Some(self.pid),
                process_name: Some(run.name()),
            });
        } else {
            d.name = Some(run.name());
        }
        self.describe(d)?;
        for (which, name, unit) in [
            (0, "snapshot bytes", pb::UNIT_SIZE_BYTES),
            (1, "windows in flight", pb::UNIT_COUNT),
        ] {
            self.counters[which as usize] = uuid(run.id, KIND_COUNTER, which);
            self.describe(pb::TrackDescriptor {
                uuid: Some(uuid(run.id, KIND_COUNTER, which)),
                parent_uuid: Some(self.process),
                name: Some(name.into()),
                counter: Some(pb::CounterDescriptor { unit: Some(unit) }),
                ..Default::default()
            })?;
        }
        if let Some(t) = run.main_thread {
            self.track(Track::Thread(t))?;
        }
        Ok(())
    }

    fn slice(&mut self, s: &Slice<'_>, args: &[Arg<'_>], flow: Flow) -> Result<()> {
        let track = self.track(s.track)?;
        self.close_before(track, s.start, s.end)?;
        // A slice that outlived the one it opens in would end its parent in a reader (slices
        // pair per track in time order); the drawing keeps children inside, and the file stays
        // well nested whatever it is handed.
        let parent = self.open.get(&track).and_then(|o| o.last().copied());
        debug_assert!(
            parent.is_none_or(|p| s.end <= p),
            "{} [{}, {}] outlives its parent's end {parent:?}",
            s.name,
            s.start,
            s.end
        );
        let end = parent.map_or(s.end, |p| s.end.min(p));
        self.head(pb::TYPE_SLICE_BEGIN, s.name, s.cat, args, flow);
        self.event(s.start, track)?;
        self.open.entry(track).or_default().push(end);
        Ok(())
    }

    fn instant(
        &mut self,
        track: Track,
        name: &str,
        cat: &'static str,
        ts: i64,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let track = self.track(track)?;
        self.close_before(track, ts, ts + 1)?;
        self.head(pb::TYPE_INSTANT, name, cat, args, Flow::None);
        self.event(ts, track)
    }

    fn counter(&mut self, which: Counter, ts: i64, value: i64) -> Result<()> {
        let which = match which {
            Counter::SnapshotBytes => 0,
            Counter::InFlight => 1,
        };
        let b = &mut self.body;
        b.clear();
        key(9, WireType::Varint, b);
        varint(pb::TYPE_COUNTER as u64, b);
        key(30, WireType::Varint, b);
        varint(value as u64, b);
        let track = self.counters[which];
        self.event(ts, track)
    }

    fn end_run(&mut self) -> Result<()> {
        self.close_all()
    }
}
