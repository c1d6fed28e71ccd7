//! `krphase export perfetto [RUNS...] -o FILE`: one trace of the selected runs, as Perfetto
//! protobuf ([`pftrace`], the default) or Chrome trace-event JSON ([`json`]). What the trace
//! shows is decided once, in [`model`] (read by [`rows`], drawn by [`windows`], the two threads
//! run by [`draw`]); the two writers only encode it.
//!
//! The file is written beside its destination under a temporary name and renamed into place
//! when complete, so a failed export (an unwritable directory, a full disk) leaves no partial
//! trace and no earlier trace is lost.

pub mod draw;
pub mod json;
pub mod model;
pub mod pftrace;
pub mod proto;
pub mod rows;
pub mod windows;

use std::io::BufWriter;
use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::Connection;

/// The trace's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// Perfetto protobuf (`.pftrace`), as rocprofv3 writes: compact, nanosecond timestamps.
    Pftrace,
    /// Chrome trace-event JSON: larger and slower, for tools that read only JSON.
    Json,
}

impl TraceFormat {
    /// The format a file name asks for when none is given: JSON for `.json`, else protobuf.
    pub fn for_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => TraceFormat::Json,
            _ => TraceFormat::Pftrace,
        }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Trace events (JSON) or packets (protobuf, before compression).
    pub events: u64,
    pub bytes: u64,
}

/// Writes the trace of `runs` to `path` in `format` (temporary file, then renamed).
pub fn export(
    conn: &Connection,
    runs: &[i64],
    path: &Path,
    format: TraceFormat,
) -> Result<Written> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // A trace is an ordinary output file: the umask decides its mode, as for any other.
    let tmp = tempfile::Builder::new()
        .prefix(".krphase-trace-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let file = tmp.as_file().try_clone()?;
    let w = match format {
        TraceFormat::Pftrace => {
            let mut sink =
                pftrace::PftraceSink::new(BufWriter::with_capacity(1 << 20, file), true)?;
            draw::write_runs(conn, runs, &mut sink)?;
            let events = sink.packets;
            let bytes = sink
                .finish()
                .with_context(|| format!("cannot write {}", path.display()))?;
            Written { events, bytes }
        }
        TraceFormat::Json => {
            let mut sink = json::JsonSink::new(BufWriter::with_capacity(1 << 20, file))?;
            draw::write_runs(conn, runs, &mut sink)?;
            let events = sink.events;
            let mut f = sink.finish()?;
            std::io::Write::flush(&mut f)
                .with_context(|| format!("cannot write {}", path.display()))?;
            let bytes = f.get_ref().metadata()?.len();
            Written { events, bytes }
        }
    };
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(w)
}
