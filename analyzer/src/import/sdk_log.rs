//! `krphase import-log`: the SDK's stderr at `ROCPROFILER_LOG_LEVEL=info`.
//!
//! Two line kinds are read, keyed on the message text and never on the (abseil-style, inferred)
//! prefix: the `[kernel-replay]` outcome line (`key=value` fields, any order, any subset) and the
//! kernel-replay phase line (`kernel replay: dispatch <id> phases: lock+drain <t> ms, ...`, any
//! segment order, units ns/us/ms/s). Every other line is skipped and counted. Records are merged
//! per dispatch id and joined to the windows of one run.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use crate::db;

/// What the log says about one dispatch (outcome and phase lines merged).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LogWindow {
    pub dispatch_id: u64,
    /// Thread id from the line prefix, when one was recognised.
    pub tid: Option<u64>,
    pub outcome: Option<String>,
    pub reason: Option<String>,
    pub requested_passes: Option<i64>,
    pub executed_passes: Option<i64>,
    pub footprint_bytes: Option<i64>,
    pub footprint_regions: Option<i64>,
    pub untracked_vmem_bytes: Option<i64>,
    pub untracked_vmem_regions: Option<i64>,
    pub untracked_pool_bytes: Option<i64>,
    pub untracked_pool_regions: Option<i64>,
    pub snap_ns: Option<i64>,
    pub restore_ns: Option<i64>,
    pub reentrancy: Option<i64>,
    pub lock_drain_ns: Option<i64>,
    pub snapshot_ns: Option<i64>,
    pub snapshot_bytes: Option<i64>,
    pub snapshot_regions: Option<i64>,
    pub passes: Option<i64>,
    pub passes_ns: Option<i64>,
    pub restores: Option<i64>,
    pub restores_ns: Option<i64>,
    pub window_ns: Option<i64>,
}

/// Result of parsing a whole log.
#[derive(Debug, Default)]
pub struct ParsedLog {
    /// Per dispatch id, in id order.
    pub windows: BTreeMap<u64, LogWindow>,
    pub lines: u64,
    pub outcome_lines: u64,
    pub phase_lines: u64,
    /// Lines that were neither (including `[kernel-replay]` lines without a dispatch id).
    pub skipped: u64,
}

/// One parsed line.
#[derive(Debug, PartialEq)]
pub enum Line {
    Outcome(LogWindow),
    Phase(LogWindow),
    Other,
}

/// Nanoseconds in one `unit` (ns, us/µs, ms, s), `None` for anything else.
fn unit_ns(unit: &str) -> Option<f64> {
    match unit.trim_end_matches([',', ')', ';']) {
        "ns" => Some(1.0),
        "us" | "µs" | "usec" => Some(1e3),
        "ms" | "msec" => Some(1e6),
        "s" | "sec" | "seconds" => Some(1e9),
        _ => None,
    }
}

fn to_ns(value: f64, scale: f64) -> i64 {
    (value * scale).round() as i64
}

/// The thread id of an abseil-style prefix `I1129 11:30:43.123456 4242 file.cpp:12] `.
fn prefix_tid(prefix: &str) -> Option<u64> {
    let mut it = prefix.split_whitespace();
    let sev = it.next()?;
    if !sev.starts_with(['I', 'W', 'E', 'F']) || !sev[1..].chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let _time = it.next()?;
    it.next()?.parse().ok()
}

/// Parses one log line.
pub fn parse_line(line: &str) -> Line {
    if let Some(pos) = line.find("[kernel-replay]") {
        let w = parse_outcome(&line[pos + "[kernel-replay]".len()..]);
        return match w {
            Some(mut w) => {
                w.tid = prefix_tid(&line[..pos]);
                Line::Outcome(w)
            }
            None => Line::Other,
        };
    }
    if let Some(pos) = line.find("kernel replay: dispatch ")
        && let Some(mut w) = parse_phase(&line[pos + "kernel replay: dispatch ".len()..])
    {
        w.tid = prefix_tid(&line[..pos]);
        return Line::Phase(w);
    }
    Line::Other
}

fn parse_outcome(rest: &str) -> Option<LogWindow> {
    let mut w = LogWindow::default();
    let mut have_id = false;
    for tok in rest.split_whitespace() {
        let Some((key, val)) = tok.split_once('=') else {
            continue;
        };
        let val = val.trim_end_matches(',');
        let int = || val.parse::<i64>().ok();
        // Durations: `<name>_seconds`, `<name>_ms`, `<name>_us`, `<name>_ns`.
        let dur = |k: &str| -> Option<(String, i64)> {
            for (suffix, scale) in [("_seconds", 1e9), ("_ms", 1e6), ("_us", 1e3), ("_ns", 1.0)] {
                if let Some(base) = k.strip_suffix(suffix) {
                    return val
                        .parse::<f64>()
                        .ok()
                        .map(|v| (base.to_string(), to_ns(v, scale)));
                }
            }
            None
        };
        match key {
            "dispatch_id" => {
                w.dispatch_id = val.parse().ok()?;
                have_id = true;
            }
            "outcome" => w.outcome = Some(val.to_string()),
            "reason" => w.reason = Some(val.to_string()),
            "requested_passes" => w.requested_passes = int(),
            "executed_passes" => w.executed_passes = int(),
            "footprint_bytes" => w.footprint_bytes = int(),
            "footprint_regions" => w.footprint_regions = int(),
            "untracked_vmem_bytes" => w.untracked_vmem_bytes = int(),
            "untracked_vmem_regions" => w.untracked_vmem_regions = int(),
            "untracked_pool_bytes" => w.untracked_pool_bytes = int(),
            "untracked_pool_regions" => w.untracked_pool_regions = int(),
            "reentrancy" => w.reentrancy = int(),
            k => match dur(k) {
                Some((base, ns)) if base == "snap" || base == "snapshot" => w.snap_ns = Some(ns),
                Some((base, ns)) if base == "restore" || base == "restores" => {
                    w.restore_ns = Some(ns)
                }
                _ => {}
            },
        }
    }
    have_id.then_some(w)
}

/// A duration `<number> <unit>` or `<number><unit>` at the start of `toks`; returns ns and the
/// number of tokens used.
fn duration_at(toks: &[&str]) -> Option<(i64, usize)> {
    let first = *toks.first()?;
    if let Ok(v) = first.parse::<f64>() {
        let scale = unit_ns(toks.get(1)?)?;
        return Some((to_ns(v, scale), 2));
    }
    let split = first.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let v: f64 = first[..split].parse().ok()?;
    Some((to_ns(v, unit_ns(&first[split..])?), 1))
}

fn parse_phase(rest: &str) -> Option<LogWindow> {
    let (id, segs) = rest.split_once(" phases:")?;
    let mut w = LogWindow {
        dispatch_id: id.trim().parse().ok()?,
        ..LogWindow::default()
    };
    for seg in segs.split(',') {
        let toks: Vec<&str> = seg.split_whitespace().collect();
        if toks.is_empty() {
            continue;
        }
        // Optional leading count ("2 passes 3.1 ms"), then the name, then the duration.
        let (count, name_at) = match toks[0].parse::<i64>() {
            Ok(n) if toks.len() > 2 => (Some(n), 1),
            _ => (None, 0),
        };
        let name = toks[name_at];
        let Some((ns, used)) = duration_at(&toks[name_at + 1..]) else {
            continue;
        };
        match name {
            "lock+drain" | "drain" => w.lock_drain_ns = Some(ns),
            "snapshot" => {
                w.snapshot_ns = Some(ns);
                // "(<bytes> bytes in <n> regions)"
                let tail = &toks[name_at + 1 + used..];
                for (i, t) in tail.iter().enumerate() {
                    let t = t.trim_start_matches('(');
                    if let (Ok(v), Some(next)) = (t.parse::<i64>(), tail.get(i + 1)) {
                        if next.starts_with("bytes") {
                            w.snapshot_bytes = Some(v);
                        } else if next.starts_with("region") {
                            w.snapshot_regions = Some(v);
                        }
                    }
                }
            }
            "passes" | "pass" => {
                w.passes = count;
                w.passes_ns = Some(ns);
            }
            "restores" | "restore" => {
                w.restores = count;
                w.restores_ns = Some(ns);
            }
            "window" => w.window_ns = Some(ns),
            _ => {}
        }
    }
    Some(w)
}

/// Merges `src` into `dst`, keeping values already present.
fn merge(dst: &mut LogWindow, src: LogWindow) {
    macro_rules! take {
        ($($f:ident),*) => { $( if dst.$f.is_none() { dst.$f = src.$f; } )* };
    }
    take!(
        tid,
        outcome,
        reason,
        requested_passes,
        executed_passes,
        footprint_bytes,
        footprint_regions,
        untracked_vmem_bytes,
        untracked_vmem_regions,
        untracked_pool_bytes,
        untracked_pool_regions,
        snap_ns,
        restore_ns,
        reentrancy,
        lock_drain_ns,
        snapshot_ns,
        snapshot_bytes,
        snapshot_regions,
        passes,
        passes_ns,
        restores,
        restores_ns,
        window_ns
    );
}

/// Parses a whole log from a reader (lines that are not UTF-8 are read lossily).
pub fn parse_log(reader: impl Read) -> Result<ParsedLog> {
    let mut out = ParsedLog::default();
    let mut r = BufReader::new(reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if r.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        out.lines += 1;
        let line = String::from_utf8_lossy(&buf);
        let (w, kind) = match parse_line(line.trim_end()) {
            Line::Outcome(w) => (w, &mut out.outcome_lines),
            Line::Phase(w) => (w, &mut out.phase_lines),
            Line::Other => {
                out.skipped += 1;
                continue;
            }
        };
        *kind += 1;
        let id = w.dispatch_id;
        match out.windows.get_mut(&id) {
            Some(dst) => merge(dst, w),
            None => {
                out.windows.insert(id, w);
            }
        }
    }
    Ok(out)
}

/// Summary of one `import-log`.
#[derive(Debug)]
pub struct LogImport {
    pub log_file_id: i64,
    pub run_id: Option<i64>,
    pub records: usize,
    pub joined: usize,
    pub lines: u64,
    pub skipped: u64,
    /// How the run was chosen, for the user.
    pub run_note: String,
    pub already: bool,
}

/// Chooses the run whose window dispatch ids match the log's best.
fn choose_run(conn: &Connection, parsed: &ParsedLog) -> Result<(Option<i64>, String)> {
    let ids: Vec<i64> = parsed.windows.keys().map(|&k| k as i64).collect();
    if ids.is_empty() {
        return Ok((None, "no replay lines, no run joined".into()));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT run_id, COUNT(*) FROM krphase_window WHERE dispatch_id = ?1 GROUP BY run_id",
    )?;
    let mut score: BTreeMap<i64, i64> = BTreeMap::new();
    for id in &ids {
        let rows = stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (run, _) = row?;
            *score.entry(run).or_default() += 1;
        }
    }
    // Prefer a run whose pid equals a thread id seen in the prefix (the main thread's tid is the
    // pid on Linux), then the most matches, then the newest run.
    let tids: std::collections::BTreeSet<i64> = parsed
        .windows
        .values()
        .filter_map(|w| w.tid.map(|t| t as i64))
        .collect();
    let mut best: Option<(bool, i64, i64)> = None;
    for (&run, &n) in &score {
        let pid: Option<i64> = conn
            .query_row("SELECT pid FROM krphase_run WHERE id = ?1", [run], |r| {
                r.get(0)
            })
            .optional()?
            .flatten();
        let key = (pid.is_some_and(|p| tids.contains(&p)), n, run);
        if best.is_none_or(|b| key > b) {
            best = Some(key);
        }
    }
    Ok(match best {
        Some((_, n, run)) => (
            Some(run),
            format!(
                "joined to run {run} ({n} of {} dispatch ids match)",
                ids.len()
            ),
        ),
        None => (
            None,
            format!("no run has any of the log's {} dispatch ids", ids.len()),
        ),
    })
}

/// Imports a log file; joins to `run` or to the best-matching run.
pub fn import_log(conn: &mut Connection, path: &Path, run: Option<i64>) -> Result<LogImport> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let hash = format!("{:x}", Sha256::digest(&bytes));
    let parsed = parse_log(&bytes[..])?;
    let (run_id, run_note) = match run {
        Some(r) => {
            let found: Option<i64> = conn
                .query_row("SELECT id FROM krphase_run WHERE id = ?1", [r], |x| {
                    x.get(0)
                })
                .optional()?;
            if found.is_none() {
                bail!("unknown run id {r}");
            }
            (Some(r), format!("joined to run {r} (as asked)"))
        }
        None => choose_run(conn, &parsed)?,
    };
    let existing: Option<i64> = conn
        .query_row(
            "SELECT id FROM krphase_log_file WHERE file_hash = ?1 AND run_id IS ?2",
            params![hash, run_id],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = existing {
        return Ok(LogImport {
            log_file_id: id,
            run_id,
            records: parsed.windows.len(),
            joined: 0,
            lines: parsed.lines,
            skipped: parsed.skipped,
            run_note: format!("{run_note}; already imported as log {id}"),
            already: true,
        });
    }
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO krphase_log_file (path, file_hash, run_id, lines, outcome_lines, phase_lines, skipped_lines, imported_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            path.display().to_string(),
            hash,
            run_id,
            parsed.lines as i64,
            parsed.outcome_lines as i64,
            parsed.phase_lines as i64,
            parsed.skipped as i64,
            db::now_utc()
        ],
    )?;
    let log_id = tx.last_insert_rowid();
    let pid: Option<i64> = match run_id {
        Some(r) => tx.query_row("SELECT pid FROM krphase_run WHERE id = ?1", [r], |x| {
            x.get(0)
        })?,
        None => None,
    };
    let mut joined = 0;
    {
        let mut find = tx.prepare_cached(
            "SELECT id FROM krphase_window WHERE run_id = ?1 AND dispatch_id = ?2 ORDER BY id LIMIT 1",
        )?;
        let mut unjoin =
            tx.prepare_cached("UPDATE krphase_sdk_log SET window_id = NULL WHERE window_id = ?1")?;
        let mut ins = tx.prepare_cached(
            "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, pid, dispatch_id, outcome, reason,
               requested_passes, executed_passes, footprint_bytes, footprint_regions,
               untracked_vmem_bytes, untracked_vmem_regions, untracked_pool_bytes, untracked_pool_regions,
               snap_ns, restore_ns, reentrancy, lock_drain_ns, snapshot_ns, snapshot_bytes,
               snapshot_regions, passes, passes_ns, restores, restores_ns, window_ns)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27)",
        )?;
        for w in parsed.windows.values() {
            let window_id: Option<i64> = match run_id {
                Some(r) => find
                    .query_row(params![r, w.dispatch_id as i64], |x| x.get(0))
                    .optional()?,
                None => None,
            };
            joined += usize::from(window_id.is_some());
            if let Some(wid) = window_id {
                // The newest log wins: one joined log record per window keeps the views 1:1.
                unjoin.execute([wid])?;
            }
            ins.execute(params![
                log_id,
                run_id,
                window_id,
                pid,
                w.dispatch_id as i64,
                w.outcome,
                w.reason,
                w.requested_passes,
                w.executed_passes,
                w.footprint_bytes,
                w.footprint_regions,
                w.untracked_vmem_bytes,
                w.untracked_vmem_regions,
                w.untracked_pool_bytes,
                w.untracked_pool_regions,
                w.snap_ns,
                w.restore_ns,
                w.reentrancy,
                w.lock_drain_ns,
                w.snapshot_ns,
                w.snapshot_bytes,
                w.snapshot_regions,
                w.passes,
                w.passes_ns,
                w.restores,
                w.restores_ns,
                w.window_ns
            ])?;
        }
    }
    tx.execute(
        "UPDATE krphase_log_file SET joined = ?1 WHERE id = ?2",
        params![joined as i64, log_id],
    )?;
    tx.commit()?;
    Ok(LogImport {
        log_file_id: log_id,
        run_id,
        records: parsed.windows.len(),
        joined,
        lines: parsed.lines,
        skipped: parsed.skipped,
        run_note,
        already: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTCOME: &str = "I1129 11:30:43.123456 4242 queue_hooks.cpp:512] [kernel-replay] dispatch_id=17 outcome=replayed reason=none requested_passes=2 executed_passes=2 footprint_bytes=25165824 footprint_regions=3 untracked_vmem_bytes=0 untracked_vmem_regions=0 untracked_pool_bytes=0 untracked_pool_regions=0 snap_seconds=0.0021 restore_seconds=0.0019 reentrancy=0";
    const DECLINED: &str = "W1129 11:30:44.000001 4243 queue_hooks.cpp:530] [kernel-replay] dispatch_id=18 outcome=declined reason=untracked_memory requested_passes=4 executed_passes=0 footprint_bytes=0 footprint_regions=0 untracked_vmem_bytes=2097152 untracked_vmem_regions=1 untracked_pool_bytes=0 untracked_pool_regions=0 snap_seconds=0.0000 restore_seconds=0.0000 reentrancy=0";
    const PHASE: &str = "I1129 11:30:43.123999 4242 queue_hooks.cpp:540] kernel replay: dispatch 17 phases: lock+drain 0.412 ms, snapshot 2.104 ms (25165824 bytes in 3 regions), 2 passes 0.950 ms, 1 restores 1.900 ms, window 5.400 ms";

    #[test]
    fn outcome_line() {
        let Line::Outcome(w) = parse_line(OUTCOME) else {
            panic!("not an outcome line")
        };
        assert_eq!(w.dispatch_id, 17);
        assert_eq!(w.tid, Some(4242));
        assert_eq!(w.outcome.as_deref(), Some("replayed"));
        assert_eq!(w.requested_passes, Some(2));
        assert_eq!(w.footprint_bytes, Some(25_165_824));
        assert_eq!(w.snap_ns, Some(2_100_000));
        assert_eq!(w.restore_ns, Some(1_900_000));
        assert_eq!(w.reentrancy, Some(0));
        let Line::Outcome(d) = parse_line(DECLINED) else {
            panic!()
        };
        assert_eq!(d.reason.as_deref(), Some("untracked_memory"));
        assert_eq!(d.untracked_vmem_bytes, Some(2_097_152));
    }

    #[test]
    fn phase_line() {
        let Line::Phase(w) = parse_line(PHASE) else {
            panic!("not a phase line")
        };
        assert_eq!(w.dispatch_id, 17);
        assert_eq!(w.lock_drain_ns, Some(412_000));
        assert_eq!(w.snapshot_ns, Some(2_104_000));
        assert_eq!(w.snapshot_bytes, Some(25_165_824));
        assert_eq!(w.snapshot_regions, Some(3));
        assert_eq!((w.passes, w.passes_ns), (Some(2), Some(950_000)));
        assert_eq!((w.restores, w.restores_ns), (Some(1), Some(1_900_000)));
        assert_eq!(w.window_ns, Some(5_400_000));
    }

    #[test]
    fn tolerant_of_order_units_missing_fields_and_prefix() {
        let l = "whatever prefix kernel replay: dispatch 9 phases: window 1.5s, 3 passes 200us, snapshot 7ms";
        let Line::Phase(w) = parse_line(l) else {
            panic!()
        };
        assert_eq!(w.window_ns, Some(1_500_000_000));
        assert_eq!((w.passes, w.passes_ns), (Some(3), Some(200_000)));
        assert_eq!(w.snapshot_ns, Some(7_000_000));
        assert_eq!(w.lock_drain_ns, None);
        assert_eq!(w.tid, None);
        let l = "[kernel-replay] restore_seconds=0.5 outcome=replayed dispatch_id=3";
        let Line::Outcome(w) = parse_line(l) else {
            panic!()
        };
        assert_eq!((w.dispatch_id, w.restore_ns), (3, Some(500_000_000)));
        assert_eq!(w.requested_passes, None);
        // No dispatch id: not a usable outcome line.
        assert_eq!(parse_line("[kernel-replay] outcome=replayed"), Line::Other);
        assert_eq!(
            parse_line("kernel replay: HIP graph launches are not supported"),
            Line::Other
        );
    }

    #[test]
    fn whole_log_merges_and_counts() {
        let text = format!(
            "{OUTCOME}\nsome other line\n{PHASE}\n{DECLINED}\nkernel replay: HIP graph launches are not supported\n"
        );
        let p = parse_log(text.as_bytes()).unwrap();
        assert_eq!(
            (p.lines, p.outcome_lines, p.phase_lines, p.skipped),
            (5, 2, 1, 2)
        );
        assert_eq!(p.windows.len(), 2);
        let w = &p.windows[&17];
        assert_eq!(w.snap_ns, Some(2_100_000));
        assert_eq!(w.snapshot_ns, Some(2_104_000));
        assert_eq!(w.outcome.as_deref(), Some("replayed"));
    }

    #[test]
    fn import_joins_by_dispatch_id() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = db::open(dir.path().join("k.db")).unwrap();
        for (id, pid) in [(1, 100), (2, 4242)] {
            c.execute(
                "INSERT INTO krphase_run (id, path, file_hash, pid, imported_at) VALUES (?1, 'p', ?1, ?2, 'now')",
                params![id, pid],
            )
            .unwrap();
            c.execute(
                "INSERT INTO krphase_window (run_id, dispatch_id, outcome) VALUES (?1, 17, 'replayed')",
                [id],
            )
            .unwrap();
        }
        let log = dir.path().join("stderr.log");
        std::fs::write(&log, format!("{OUTCOME}\n{PHASE}\n{DECLINED}\n")).unwrap();
        let r = import_log(&mut c, &log, None).unwrap();
        // Both runs have dispatch 17; run 2's pid equals the prefix thread id.
        assert_eq!(r.run_id, Some(2));
        assert_eq!((r.records, r.joined), (2, 1));
        let again = import_log(&mut c, &log, None).unwrap();
        assert!(again.already);
        let n: i64 = c
            .query_row("SELECT COUNT(*) FROM krphase_sdk_log", [], |x| x.get(0))
            .unwrap();
        assert_eq!(n, 2);
        assert!(import_log(&mut c, &log, Some(99)).is_err());
    }
}
