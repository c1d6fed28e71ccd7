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
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            windows: 1000,
            passes: 2,
            pid: 4242,
            seed: 1,
            trailer: true,
        }
    }
}

/// The header the synthetic files carry.
pub fn header(spec: &SynthSpec) -> Header {
    Header {
        tool_version: "synthetic".into(),
        pid: spec.pid,
        ppid: 1,
        hostname: "synthetic".into(),
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

/// Writes a synthetic file to `out`; returns the truth.
pub fn write_synthetic(out: impl Write, spec: &SynthSpec) -> Result<SynthTruth> {
    let mut w = FileWriter::new(out, &header(spec))?;
    w.write_names(&[
        (NameSpace::Kernel, 1, "stream_copy"),
        (NameSpace::Kernel, 2, "stream_triad"),
        (NameSpace::Kernel, 3, "saxpy"),
    ])?;
    let mut truth = SynthTruth::default();
    let mut rng = Lcg(spec.seed);
    let mut buf: Vec<Record> = Vec::with_capacity(8192);
    let push = |buf: &mut Vec<Record>, w: &mut FileWriter<_>, e: Event| -> Result<()> {
        buf.push(e.to_record().context("event without a record")?);
        if buf.len() >= BLOCK_RECORDS {
            w.write_records(buf)?;
            buf.clear();
        }
        Ok(())
    };
    let (thread, queue, agent) = (1u32, 3u64, 1u64);
    let mut t: u64 = 10_000_000;
    let mut dispatch: u64 = 0;
    let n = spec.passes;
    for i in 0..spec.windows {
        dispatch += 1;
        let kernel = 1 + i % 2;
        let d = dispatch;
        let bytes = 8 << 20;
        let start = t;
        for e in [
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
                agent,
                queue,
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
                classified: bytes,
                regions: 3,
                upper_bound: bytes + 4096,
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
        ] {
            push(&mut buf, &mut w, e)?;
        }
        t += 400;
        let pre = rng.next(500_000, 300_000);
        truth.prepass_ns += pre;
        t += pre;
        for p in 0..n {
            let enter = t;
            let gpu = rng.next(100_000, 50_000);
            let (gs, ge) = (t + 5_000, t + 5_000 + gpu);
            let exit = ge + 20_000;
            for e in [
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
            ] {
                push(&mut buf, &mut w, e)?;
            }
            t = exit;
            truth.pass_ns += t - enter;
            truth.gpu_ns += gpu;
            if p + 1 < n {
                let r = rng.next(600_000, 200_000);
                truth.restore_ns += r;
                truth.restores += 1;
                t += r;
            }
        }
        let tail = rng.next(2_000, 1_000);
        truth.tail_ns += tail;
        t += tail;
        push(
            &mut buf,
            &mut w,
            Event::ConfigExit {
                thread,
                ts: t,
                dispatch_id: d,
            },
        )?;
        truth.window_ns += t - start;
        truth.windows += 1;
        truth.bytes += bytes;
        t += 50_000;
        if i % 10 == 9 {
            // A filtered-out dispatch: CONFIG pair, then the ordinary enqueue.
            dispatch += 1;
            let d = dispatch;
            for e in [
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
                    agent,
                    queue,
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
            ] {
                push(&mut buf, &mut w, e)?;
            }
            truth.opt_outs += 1;
            t += 50_000;
        }
    }
    if !buf.is_empty() {
        w.write_records(&buf)?;
    }
    truth.events = w.records();
    if spec.trailer {
        w.write_trailer(&Trailer {
            events_written: truth.events,
            windows: truth.windows,
            declines: truth.opt_outs,
            finalize_ns: t,
            flags: 1,
            ..Trailer::default()
        })?;
    }
    w.flush()?;
    Ok(truth)
}

/// Writes a synthetic file at `path`.
pub fn write_synthetic_file(path: &Path, spec: &SynthSpec) -> Result<SynthTruth> {
    let f =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    write_synthetic(std::io::BufWriter::with_capacity(1 << 20, f), spec)
}

/// `krphase gen-synthetic`: a synthetic phase file of `windows` windows of `passes` passes.
pub fn gen_synthetic_command(windows: u64, passes: u32, output: &Path) -> Result<()> {
    let spec = SynthSpec {
        windows,
        passes,
        ..SynthSpec::default()
    };
    let t = write_synthetic_file(output, &spec)?;
    println!(
        "{}: {} events, {} windows",
        output.display(),
        t.events,
        t.windows
    );
    Ok(())
}
