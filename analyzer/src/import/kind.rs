//! What a file is, read from its content (never its name): the kinds `krphase import` reads.

use std::fmt;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};

use super::measurement_csv::COLUMNS;

/// A kind of file krphase imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A phase file written by libkrphase.so (`.krp`).
    Phase,
    /// A rocprofv3 rocpd database (`--output-format rocpd`).
    Rocpd,
    /// rocprofv3's JSON output (`--output-format json`), whose counter records carry
    /// `replay_pass`.
    Rocprofv3Json,
    /// An application's stderr holding the SDK's kernel-replay log lines.
    SdkLog,
    /// The whole-run measurement CSV of replay_perf.py (or `krphase bench`).
    HarnessCsv,
    /// A rocprofv3-benchmark database.
    BenchmarkDb,
}

/// Every kind, in the order an import takes them: runs first, then what joins to runs.
pub const ALL: [Kind; 6] = [
    Kind::Phase,
    Kind::Rocpd,
    Kind::Rocprofv3Json,
    Kind::SdkLog,
    Kind::HarnessCsv,
    Kind::BenchmarkDb,
];

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Phase => "phase file (.krp)",
            Kind::Rocpd => "rocpd database",
            Kind::Rocprofv3Json => "rocprofv3 JSON output",
            Kind::SdkLog => "SDK log (stderr at ROCPROFILER_LOG_LEVEL=info)",
            Kind::HarnessCsv => "replay_perf.py CSV",
            Kind::BenchmarkDb => "rocprofv3-benchmark database",
        })
    }
}

/// The kinds, named in one line (for a refusal).
pub fn known() -> String {
    ALL.iter()
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many bytes are read to tell the kind: enough for a CSV header or a page of log lines.
const HEAD: u64 = 64 * 1024;

/// The kind of the file at `path`, or `None` when it is none krphase reads.
pub fn of(path: &Path) -> Result<Option<Kind>> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(HEAD).read_to_end(&mut head))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if head.starts_with(&krphase_format::MAGIC) {
        return Ok(Some(Kind::Phase));
    }
    if head.starts_with(b"SQLite format 3\0") {
        return sqlite_kind(path);
    }
    if is_rocprofv3_json(&head) {
        return Ok(Some(Kind::Rocprofv3Json));
    }
    match text_kind(&head) {
        None if !head.contains(&0) && head.len() as u64 == HEAD => log_further(path),
        kind => Ok(kind),
    }
}

/// Text whose first bytes hold no replay line may still be a log: a chatty application's
/// stderr has its SDK lines anywhere. Read on, a line at a time, until one is found.
fn log_further(path: &Path) -> Result<Option<Kind>> {
    use std::io::BufRead;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if is_replay_line(&String::from_utf8_lossy(&line)) {
            return Ok(Some(Kind::SdkLog));
        }
    }
    Ok(None)
}

fn is_replay_line(line: &str) -> bool {
    !matches!(
        super::sdk_log::parse_line(line),
        super::sdk_log::Line::Other
    )
}

/// A JSON object whose first key is rocprofv3's writer's top-level key (whitespace aside).
fn is_rocprofv3_json(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let rest = text.trim_start();
    let Some(rest) = rest.strip_prefix('{') else {
        return false;
    };
    let key = format!("\"{}\"", super::rocprofv3_json::TOP_KEY);
    rest.trim_start().starts_with(&key)
}

/// A CSV whose first line is replay_perf.py's header, or text with a kernel-replay log line.
fn text_kind(head: &[u8]) -> Option<Kind> {
    let text = String::from_utf8_lossy(head);
    let first = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if first.split(',').eq(COLUMNS) {
        return Some(Kind::HarnessCsv);
    }
    text.lines().any(is_replay_line).then_some(Kind::SdkLog)
}

/// rocpd (a `rocpd_metadata` table) or rocprofv3-benchmark (its config and metrics tables).
fn sqlite_kind(path: &Path) -> Result<Option<Kind>> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open {}", path.display()))?;
    let has = |name: &str| -> Result<bool> {
        Ok(conn.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )? > 0)
    };
    Ok(if has("rocpd_metadata")? {
        Some(Kind::Rocpd)
    } else if has("benchmark_config")? && has("benchmark_metrics")? {
        Some(Kind::BenchmarkDb)
    } else {
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocprofv3_json_is_told_by_its_top_level_key() {
        assert!(is_rocprofv3_json(b"{\n    \"rocprofiler-sdk-tool\": [\n"));
        assert!(is_rocprofv3_json(b" {\"rocprofiler-sdk-tool\":[]}"));
        assert!(!is_rocprofv3_json(b"{\"collection\": \"kernel-replay\"}"));
        assert!(!is_rocprofv3_json(b"dispatch,group\n0,1\n"));
    }
}
