//! `krphase import-log`: the SDK's stderr at `ROCPROFILER_LOG_LEVEL=info`.
//!
//! Two line kinds are read, keyed on the message text: the `[kernel-replay]` outcome line
//! (`key=value` fields, any order, any subset) and the kernel-replay phase line (`kernel replay:
//! dispatch <id> phases: lock+drain <t> ms, ...`, any segment order, units ns/us/ms/s). Every
//! other line is skipped and counted. The glog prefix before the message (`glog_prefix`) gives
//! each line its local time stamp and thread id. A log joins a run only on evidence that cannot
//! match by chance (`evidence`): the log is split into one process's lines each (`segments`),
//! each part is checked against the runs' clock anchors and dispatch windows (`run_facts`), and
//! joins the one run whose evidence holds (`plan`); anything else is refused with the evidence
//! that failed, and nothing is stored.

mod evidence;
mod glog_prefix;
mod plan;
pub mod refusal;
mod run_facts;
mod segments;

pub use plan::Target;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use sha2::{Digest, Sha256};

use crate::db;

/// What the log says about one dispatch (outcome and phase lines merged).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LogWindow {
    pub dispatch_id: u64,
    /// glog's thread id (`pthread_self`) from the line prefix, when one was recognised.
    pub tid: Option<u64>,
    /// The prefix's severity letter (I, W, E, F).
    pub severity: Option<char>,
    /// The prefix's local time stamp (of the first line merged into this record).
    pub stamp: Option<glog_prefix::LocalStamp>,
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
    /// The printed resolution of `snap_ns` (`snap_seconds=0.0021`: 100 µs).
    pub snap_res_ns: Option<i64>,
    pub restore_ns: Option<i64>,
    pub reentrancy: Option<i64>,
    pub lock_drain_ns: Option<i64>,
    pub snapshot_ns: Option<i64>,
    /// The printed resolution of `snapshot_ns`.
    pub snapshot_res_ns: Option<i64>,
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
    /// In line order; an outcome line and a phase line of the same thread and dispatch id are
    /// one record. Several processes' lines may share dispatch ids: records are not merged
    /// across thread ids.
    pub records: Vec<LogWindow>,
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

/// The printed resolution of a number in nanoseconds: one unit of its last decimal.
fn resolution_ns(num: &str, scale: f64) -> i64 {
    let decimals = num.split_once('.').map_or(0, |(_, f)| f.len());
    (scale / 10f64.powi(decimals as i32)).round().max(1.0) as i64
}

/// Fills the prefix fields of `w` from the text before the message.
fn with_prefix(mut w: LogWindow, before: &str) -> LogWindow {
    if let Some(p) = glog_prefix::parse(before) {
        w.tid = Some(p.tid);
        w.severity = Some(p.severity);
        w.stamp = Some(p.stamp);
    }
    w
}

/// Parses one log line.
pub fn parse_line(line: &str) -> Line {
    if let Some(pos) = line.find("[kernel-replay]") {
        let w = parse_outcome(&line[pos + "[kernel-replay]".len()..]);
        return match w {
            Some(w) => Line::Outcome(with_prefix(w, &line[..pos])),
            None => Line::Other,
        };
    }
    if let Some(pos) = line.find("kernel replay: dispatch ")
        && let Some(w) = parse_phase(&line[pos + "kernel replay: dispatch ".len()..])
    {
        return Line::Phase(with_prefix(w, &line[..pos]));
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
        let dur = |k: &str| -> Option<(String, i64, i64)> {
            for (suffix, scale) in [("_seconds", 1e9), ("_ms", 1e6), ("_us", 1e3), ("_ns", 1.0)] {
                if let Some(base) = k.strip_suffix(suffix) {
                    return val
                        .parse::<f64>()
                        .ok()
                        .map(|v| (base.to_string(), to_ns(v, scale), resolution_ns(val, scale)));
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
                Some((base, ns, res)) if base == "snap" || base == "snapshot" => {
                    w.snap_ns = Some(ns);
                    w.snap_res_ns = Some(res);
                }
                Some((base, ns, _)) if base == "restore" || base == "restores" => {
                    w.restore_ns = Some(ns)
                }
                _ => {}
            },
        }
    }
    have_id.then_some(w)
}

/// A duration `<number> <unit>` or `<number><unit>` at the start of `toks`; returns ns, its
/// printed resolution in ns and the number of tokens used.
fn duration_at(toks: &[&str]) -> Option<(i64, i64, usize)> {
    let first = *toks.first()?;
    if let Ok(v) = first.parse::<f64>() {
        let scale = unit_ns(toks.get(1)?)?;
        return Some((to_ns(v, scale), resolution_ns(first, scale), 2));
    }
    let split = first.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let num = &first[..split];
    let v: f64 = num.parse().ok()?;
    let scale = unit_ns(&first[split..])?;
    Some((to_ns(v, scale), resolution_ns(num, scale), 1))
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
        let Some((ns, res, used)) = duration_at(&toks[name_at + 1..]) else {
            continue;
        };
        match name {
            "lock+drain" | "drain" => w.lock_drain_ns = Some(ns),
            "snapshot" => {
                w.snapshot_ns = Some(ns);
                w.snapshot_res_ns = Some(res);
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
        severity,
        stamp,
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
        snap_res_ns,
        restore_ns,
        reentrancy,
        lock_drain_ns,
        snapshot_ns,
        snapshot_res_ns,
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
    // Per (thread id, dispatch id): the latest record and whether it has its outcome and phase
    // line yet; a second line of a kind it already has starts a new record.
    let mut latest: HashMap<(Option<u64>, u64), (usize, bool, bool)> = HashMap::new();
    let mut r = BufReader::new(reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if r.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        out.lines += 1;
        let line = String::from_utf8_lossy(&buf);
        let (w, is_outcome) = match parse_line(line.trim_end()) {
            Line::Outcome(w) => (w, true),
            Line::Phase(w) => (w, false),
            Line::Other => {
                out.skipped += 1;
                continue;
            }
        };
        *if is_outcome {
            &mut out.outcome_lines
        } else {
            &mut out.phase_lines
        } += 1;
        let key = (w.tid, w.dispatch_id);
        match latest.get_mut(&key) {
            Some((i, has_outcome, has_phase))
                if !(if is_outcome { *has_outcome } else { *has_phase }) =>
            {
                merge(&mut out.records[*i], w);
                *has_outcome |= is_outcome;
                *has_phase |= !is_outcome;
            }
            _ => {
                latest.insert(key, (out.records.len(), is_outcome, !is_outcome));
                out.records.push(w);
            }
        }
    }
    Ok(out)
}

/// Summary of one `import-log`.
#[derive(Debug)]
pub struct LogImport {
    /// The first stored log-file row (one per joined run).
    pub log_file_id: i64,
    /// The first joined run.
    pub run_id: Option<i64>,
    pub records: usize,
    pub joined: usize,
    pub lines: u64,
    pub skipped: u64,
    /// How the run(s) were chosen and on what evidence, for the user.
    pub run_note: String,
    pub already: bool,
}

/// Imports a log file, joining it to the run(s) its evidence proves ([`Target::Auto`]) or to
/// `run` (on the evidence too); see [`import_log_to`].
pub fn import_log(conn: &mut Connection, path: &Path, run: Option<i64>) -> Result<LogImport> {
    import_log_to(conn, path, run.map_or(Target::Auto, Target::Run))
}

fn run_exists(conn: &Connection, run: i64) -> Result<()> {
    let found: Option<i64> = conn
        .query_row("SELECT id FROM krphase_run WHERE id = ?1", [run], |x| {
            x.get(0)
        })
        .optional()?;
    if found.is_none() {
        bail!("unknown run id {run}");
    }
    Ok(())
}

/// Imports a log file. A refusal (an empty or binary file, no kernel-replay line, or failed
/// evidence) is an error naming it, and the database is left unchanged; [`Target::Force`] joins
/// anyway and marks the join forced. The evidence is weighed and the rows stored in one
/// IMMEDIATE transaction, so a run imported meanwhile by another process is part of the plan.
pub fn import_log_to(conn: &mut Connection, path: &Path, target: Target) -> Result<LogImport> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    refusal::check_text(path, &bytes)?;
    let hash = format!("{:x}", Sha256::digest(&bytes));
    let parsed = parse_log(&bytes[..])?;
    refusal::check_replay_lines(path, parsed.lines, parsed.records.len())?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Target::Run(r) | Target::Force(r) = target {
        run_exists(&tx, r)?;
    }
    let joins = match plan::plan(&tx, &parsed.records, target)? {
        Ok(j) => j,
        Err(reason) => bail!(
            "{}: not joined: {reason}; nothing stored (`--run ID --force` joins anyway)",
            path.display()
        ),
    };
    let mut result = LogImport {
        log_file_id: 0,
        run_id: joins.first().map(|j| j.run_id),
        records: parsed.records.len(),
        joined: 0,
        lines: parsed.lines,
        skipped: parsed.skipped,
        run_note: String::new(),
        already: true,
    };
    let mut notes = Vec::new();
    for j in &joins {
        let (id, joined, already) = store(&tx, path, &hash, &parsed, Some(j.run_id), j)?;
        if result.log_file_id == 0 {
            result.log_file_id = id;
        }
        result.joined += joined;
        result.already &= already;
        notes.push(match &j.forced {
            None => format!("joined to run {} (evidence: {})", j.run_id, j.evidence),
            Some(f) => format!("joined to run {} FORCED (evidence failed: {f})", j.run_id),
        });
        if already {
            notes.push(format!("already imported as log {id}"));
        } else {
            // The joined lines change the view's figures of the run's windows: summarise again.
            db::summary::refresh(&tx, j.run_id)?;
        }
    }
    tx.commit()?;
    result.run_note = notes.join("; ");
    Ok(result)
}

/// Stores one run's part of the log; returns the log-file row, the records joined to windows,
/// and whether that part was imported before (then nothing is written).
fn store(
    tx: &Transaction<'_>,
    path: &Path,
    hash: &str,
    parsed: &ParsedLog,
    run_id: Option<i64>,
    j: &plan::RunJoin,
) -> Result<(i64, usize, bool)> {
    let existing: Option<i64> = tx
        .query_row(
            "SELECT id FROM krphase_log_file WHERE file_hash = ?1 AND run_id IS ?2",
            params![hash, run_id],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = existing {
        return Ok((id, 0, true));
    }
    let recs: Vec<&LogWindow> = j.records.iter().map(|&i| &parsed.records[i]).collect();
    let phase_lines = recs
        .iter()
        .filter(|w| {
            w.window_ns.is_some()
                || w.passes_ns.is_some()
                || w.lock_drain_ns.is_some()
                || w.snapshot_ns.is_some()
        })
        .count();
    let evidence = match &j.forced {
        Some(f) => format!("forced: {f}; held: {}", j.evidence),
        None => j.evidence.clone(),
    };
    tx.execute(
        "INSERT INTO krphase_log_file (path, file_hash, run_id, lines, outcome_lines, phase_lines, skipped_lines, imported_at, forced, evidence)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            path.display().to_string(),
            hash,
            run_id,
            parsed.lines as i64,
            recs.iter().filter(|w| w.outcome.is_some()).count() as i64,
            phase_lines as i64,
            parsed.skipped as i64,
            db::now_utc(),
            j.forced.is_some(),
            evidence,
        ],
    )?;
    let log_id = tx.last_insert_rowid();
    let joined = insert_records(tx, log_id, run_id, &recs)?;
    tx.execute(
        "UPDATE krphase_log_file SET joined = ?1 WHERE id = ?2",
        params![joined as i64, log_id],
    )?;
    Ok((log_id, joined, false))
}

/// Inserts the records of one run's part; returns how many joined a window.
fn insert_records(
    tx: &Transaction<'_>,
    log_id: i64,
    run_id: Option<i64>,
    recs: &[&LogWindow],
) -> Result<usize> {
    let (pid, span) = match run_id {
        Some(r) => (
            tx.query_row("SELECT pid FROM krphase_run WHERE id = ?1", [r], |x| {
                x.get::<_, Option<i64>>(0)
            })?,
            run_facts::span(tx, r)?,
        ),
        None => (None, None),
    };
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
           snapshot_regions, passes, passes_ns, restores, restores_ns, window_ns, tid, stamp_utc_ns)
         VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27,?28,?29)",
    )?;
    let mut joined = 0;
    for w in recs {
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
        let stamp = span
            .as_ref()
            .zip(w.stamp.as_ref())
            .map(|(s, st)| s.stamp_utc_ns(st));
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
            w.window_ns,
            w.tid.map(|t| t as i64),
            stamp,
        ])?;
    }
    Ok(joined)
}

#[cfg(test)]
mod join_tests;

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
        assert_eq!(w.snap_res_ns, Some(100_000), "snap_seconds=0.0021: 100 us");
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
        assert_eq!(w.snapshot_res_ns, Some(1_000), "2.104 ms: 1 us");
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
        assert_eq!(p.records.len(), 2);
        let w = &p.records[0];
        assert_eq!(
            (w.dispatch_id, w.tid, w.severity),
            (17, Some(4242), Some('I'))
        );
        assert_eq!(w.snap_ns, Some(2_100_000));
        assert_eq!(w.snapshot_ns, Some(2_104_000));
        assert_eq!(w.outcome.as_deref(), Some("replayed"));
    }
}
