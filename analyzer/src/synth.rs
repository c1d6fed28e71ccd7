//! Synthetic phase files for tests and the import/report benchmark: replayed drive-mode windows
//! with deterministic pseudo-random phase lengths, an opt-out every tenth dispatch, written in
//! blocks through krphase-format's writer (streamed; memory does not grow with the size).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use krphase_format::event::Decision;
use krphase_format::{Event, FileWriter, Header, Mode, NameSpace, RECORD_SIZE, Record, Trailer};

/// What was written, with the exact phase totals for assertions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SynthTruth {
    pub events: u64,
    pub windows: u64,
    pub opt_outs: u64,
    pub prepass_ns: u64,
    pub pass_ns: u64,
    pub gpu_ns: u64,
    pub restore_ns: u64,
    pub tail_ns: u64,
    pub window_ns: u64,
    pub restores: u64,
    pub bytes: u64,
}

/// Synthetic-file shape.
#[derive(Debug, Clone)]
pub struct SynthSpec {
    pub windows: u64,
    pub passes: u32,
    pub pid: u32,
    /// Seed for phase lengths.
    pub seed: u64,
    /// Write a trailer (a file without one reads as truncated).
    pub trailer: bool,
    /// The trailer's drop counters and wait (the rest of it is filled in).
    pub drops: Trailer,
    /// The launcher rank the header carries, of a job of `world_size` ranks.
    pub rank: Option<krphase_format::Rank>,
    /// The host name the header carries.
    pub hostname: String,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            windows: 1000,
            passes: 2,
            pid: 4242,
            seed: 1,
            trailer: true,
            drops: Trailer::default(),
            rank: None,
            hostname: "synthetic".into(),
        }
    }
}

/// The header the synthetic files carry.
pub fn header(spec: &SynthSpec) -> Header {
    Header {
        tool_version: "synthetic".into(),
        pid: spec.pid,
        ppid: 1,
        hostname: spec.hostname.clone(),
        command_line: format!("krphase gen-synthetic --windows {}", spec.windows),
        sdk_version: (1, 4, 1),
        requested_mode: Mode::Drive,
        mode: Mode::Drive,
        payload_layout: 2,
        on_full: 1,
        passes: spec.passes,
        filter: String::new(),
        boottime_ns: 1_000_000,
        realtime_ns: 1_764_000_000_000_000_000,
        record_size: RECORD_SIZE as u32,
        replay_kind: 25,
        config_op: 1,
        pass_op: 2,
        output_path: String::new(),
        utc_offset_s: Some(0),
        // Synthetic times are BOOTTIME ns already: no calibration pairs to write.
        clock: krphase_format::header::Clock::Boottime,
        rank: spec.rank.clone(),
    }
}

/// Records per EVENTS block (the tool flushes per-thread buffers of about this size).
const BLOCK_RECORDS: usize = 1024;

struct Lcg(u64);
impl Lcg {
    /// A value in `lo..lo+span`.
    fn next(&mut self, lo: u64, span: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        lo + (self.0 >> 33) % span.max(1)
    }
}

/// The thread, queue and agent every synthetic event uses.
const THREAD: u32 = 1;
const QUEUE: u64 = 3;
const AGENT: u64 = 1;
/// Bytes each window snapshots.
const WINDOW_BYTES: u64 = 8 << 20;

/// A synthetic file being written: the records of the current block, the clock, and the truth.
struct SynthWriter<W: Write> {
    w: FileWriter<W>,
    buf: Vec<Record>,
    rng: Lcg,
    truth: SynthTruth,
    /// The clock, ns.
    t: u64,
    /// The last dispatch id used.
    dispatch: u64,
    passes: u32,
}

impl<W: Write> SynthWriter<W> {
    fn push(&mut self, e: Event) -> Result<()> {
        self.buf
            .push(e.to_record().context("event without a record")?);
        if self.buf.len() >= BLOCK_RECORDS {
            self.w.write_records(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn push_all<const N: usize>(&mut self, events: [Event; N]) -> Result<()> {
        for e in events {
            self.push(e)?;
        }
        Ok(())
    }

    /// One replayed window of kernel `kernel`: CONFIG ENTER to CONFIG EXIT.
    fn replayed_window(&mut self, kernel: u64) -> Result<()> {
        self.dispatch += 1;
        let (d, n, t, start) = (self.dispatch, self.passes, self.t, self.t);
        let thread = THREAD;
        self.push_all([
            Event::ConfigEnter {
                thread,
                ts: t,
                dispatch_id: d,
                kernel_id: kernel,
                decision: Decision::Replay,
            },
            Event::DispatchInfo {
                thread,
                dispatch_id: d,
                agent: AGENT,
                queue: QUEUE,
            },
            Event::Correlation {
                thread,
                dispatch_id: d,
                internal: d,
                ancestor: 0,
            },
            Event::WindowBytes {
                thread,
                dispatch_id: d,
                classified: WINDOW_BYTES,
                regions: 3,
                upper_bound: WINDOW_BYTES + 4096,
            },
            Event::PassCountEnter {
                thread,
                ts: t + 200,
                dispatch_id: d,
            },
            Event::PassCountReturn {
                thread,
                ts: t + 400,
                dispatch_id: d,
                passes: u64::from(n),
            },
        ])?;
        self.t += 400;
        let pre = self.rng.next(500_000, 300_000);
        self.truth.prepass_ns += pre;
        self.t += pre;
        for p in 0..n {
            self.pass(d, kernel, p)?;
        }
        let tail = self.rng.next(2_000, 1_000);
        self.truth.tail_ns += tail;
        self.t += tail;
        self.push(Event::ConfigExit {
            thread,
            ts: self.t,
            dispatch_id: d,
        })?;
        self.truth.window_ns += self.t - start;
        self.truth.windows += 1;
        self.truth.bytes += WINDOW_BYTES;
        self.t += 50_000;
        Ok(())
    }

    /// Pass `p` of dispatch `d`, and the restore after it unless it is the last.
    fn pass(&mut self, d: u64, kernel: u64, p: u32) -> Result<()> {
        let (thread, n, enter) = (THREAD, self.passes, self.t);
        let gpu = self.rng.next(100_000, 50_000);
        let (gs, ge) = (enter + 5_000, enter + 5_000 + gpu);
        let exit = ge + 20_000;
        self.push_all([
            Event::PassEnter {
                thread,
                ts: enter,
                dispatch_id: d,
                pass: p,
                total: n,
                layout: 2,
            },
            Event::EnqueueEnter {
                thread,
                ts: enter + 1_000,
                dispatch_id: d,
                kernel_id: kernel,
            },
            Event::EnqueueExit {
                thread,
                ts: enter + 3_000,
                dispatch_id: d,
                correlation: d,
            },
            Event::Complete {
                thread: 2,
                dispatch_id: d,
                gpu_start: gs,
                gpu_end: ge,
            },
            Event::PassExit {
                thread,
                ts: exit,
                dispatch_id: d,
                pass: p,
                total: n,
                layout: 2,
            },
        ])?;
        self.t = exit;
        self.truth.pass_ns += exit - enter;
        self.truth.gpu_ns += gpu;
        if p + 1 < n {
            let r = self.rng.next(600_000, 200_000);
            self.truth.restore_ns += r;
            self.truth.restores += 1;
            self.t += r;
        }
        Ok(())
    }

    /// A filtered-out dispatch: CONFIG pair, then the ordinary enqueue.
    fn filtered_dispatch(&mut self) -> Result<()> {
        self.dispatch += 1;
        let (d, t, thread) = (self.dispatch, self.t, THREAD);
        self.push_all([
            Event::ConfigEnter {
                thread,
                ts: t,
                dispatch_id: d,
                kernel_id: 3,
                decision: Decision::FilteredOut,
            },
            Event::ConfigExit {
                thread,
                ts: t + 800,
                dispatch_id: d,
            },
            Event::EnqueueEnter {
                thread,
                ts: t + 1_000,
                dispatch_id: d,
                kernel_id: 3,
            },
            Event::DispatchInfo {
                thread,
                dispatch_id: d,
                agent: AGENT,
                queue: QUEUE,
            },
            Event::EnqueueExit {
                thread,
                ts: t + 3_000,
                dispatch_id: d,
                correlation: d,
            },
            Event::Complete {
                thread: 2,
                dispatch_id: d,
                gpu_start: t + 4_000,
                gpu_end: t + 40_000,
            },
        ])?;
        self.truth.opt_outs += 1;
        self.t += 50_000;
        Ok(())
    }

    /// Writes the last block, the trailer (when asked for) and flushes.
    fn finish(mut self, trailer: Option<Trailer>) -> Result<SynthTruth> {
        if !self.buf.is_empty() {
            self.w.write_records(&self.buf)?;
        }
        self.truth.events = self.w.records();
        if let Some(drops) = trailer {
            self.w.write_trailer(&Trailer {
                events_written: self.truth.events,
                windows: self.truth.windows,
                declines: self.truth.opt_outs,
                finalize_ns: self.t,
                flags: 1 | drops.flags,
                ..drops
            })?;
        }
        self.w.flush()?;
        Ok(self.truth)
    }
}

/// Writes a synthetic file to `out`; returns the truth.
pub fn write_synthetic(out: impl Write, spec: &SynthSpec) -> Result<SynthTruth> {
    write_synthetic_as(out, spec, &header(spec))
}

/// Writes a synthetic file to `out` under header `h`: its events start 9 ms after the tool's
/// start (`h.boottime_ns`), so files of launches started one after another keep their order.
pub fn write_synthetic_as(out: impl Write, spec: &SynthSpec, h: &Header) -> Result<SynthTruth> {
    let mut w = FileWriter::new(out, h)?;
    w.write_names(&[
        (NameSpace::Kernel, 1, "stream_copy"),
        (NameSpace::Kernel, 2, "stream_triad"),
        (NameSpace::Kernel, 3, "saxpy"),
    ])?;
    let mut s = SynthWriter {
        w,
        buf: Vec::with_capacity(8192),
        rng: Lcg(spec.seed),
        truth: SynthTruth::default(),
        t: h.boottime_ns + 9_000_000,
        dispatch: 0,
        passes: spec.passes,
    };
    for i in 0..spec.windows {
        s.replayed_window(1 + i % 2)?;
        if i % 10 == 9 {
            s.filtered_dispatch()?;
        }
    }
    s.finish(spec.trailer.then_some(spec.drops))
}

/// Writes a synthetic file at `path`.
pub fn write_synthetic_file(path: &Path, spec: &SynthSpec) -> Result<SynthTruth> {
    let f =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    write_synthetic(std::io::BufWriter::with_capacity(1 << 20, f), spec)
}

/// `krphase gen-synthetic`: a synthetic phase file of `windows` windows of `passes` passes.
pub fn gen_synthetic_command(
    windows: u64,
    passes: u32,
    ranks: Option<u32>,
    output: &Path,
) -> Result<()> {
    let spec = SynthSpec {
        windows,
        passes,
        ..SynthSpec::default()
    };
    let Some(ranks) = ranks else {
        let t = write_synthetic_file(output, &spec)?;
        println!(
            "{}: {} events, {} windows",
            output.display(),
            t.events,
            t.windows
        );
        return Ok(());
    };
    // A parallel job's files: one process a rank, each with its own pid, phase lengths and rank.
    std::fs::create_dir_all(output)
        .with_context(|| format!("cannot create {}", output.display()))?;
    let (mut events, width) = (0, ranks.saturating_sub(1).to_string().len());
    for r in 0..ranks {
        let f = output.join(format!("rank-{r:0width$}.krp"));
        let rank = krphase_format::Rank {
            rank: r,
            world_size: Some(ranks),
            var: "OMPI_COMM_WORLD_RANK".into(),
        };
        let s = SynthSpec {
            pid: 10_000 + r,
            seed: u64::from(r) + 1,
            rank: Some(rank),
            ..spec.clone()
        };
        events += write_synthetic_file(&f, &s)?.events;
    }
    println!(
        "{}: {ranks} rank files, {events} events, {} windows each",
        output.display(),
        windows
    );
    Ok(())
}
