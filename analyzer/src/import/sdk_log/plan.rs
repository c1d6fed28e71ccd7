//! Which run each part of a log joins: every segment (one thread id's lines of one process) is
//! checked against every candidate run and joins the one run whose evidence holds; a segment no
//! run accepts, or more than one run accepts, refuses the whole log. Joined segments of one run
//! must then cover the run's SDK windows between their first and last dispatch id.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::Result;
use rusqlite::Connection;

use super::LogWindow;
use super::evidence::{self, Evidence, Failure, Held};
use super::glog_prefix::offset_text;
use super::run_facts::{self, RunFacts, RunSpan};
use super::segments::{self, Segment};

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// Find the run(s) on the evidence.
    #[default]
    Auto,
    /// Join only to this run, on the evidence.
    Run(i64),
    /// Join to this run whatever the evidence says; the join is marked forced.
    Force(i64),
}

/// One run's part of the log.
#[derive(Debug, Clone)]
pub struct RunJoin {
    pub run_id: i64,
    /// Indices into the parsed records, at most one per dispatch id.
    pub records: Vec<usize>,
    /// What held, in words (stored with the log and printed).
    pub evidence: String,
    /// Forced past this failed evidence (`None`: not forced).
    pub forced: Option<String>,
}

/// A refusal, one line naming the evidence that failed.
pub type Refusal = String;

fn describe(seg: &Segment, records: &[LogWindow]) -> String {
    let ids: Vec<u64> = seg
        .records
        .iter()
        .map(|&i| records[i].dispatch_id)
        .collect();
    let (lo, hi) = (ids.iter().min(), ids.iter().max());
    let who = seg.tid.map_or("lines without a glog prefix".into(), |t| {
        format!("thread {t}")
    });
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!("{who} ({} lines, dispatch {lo}-{hi})", ids.len()),
        _ => who,
    }
}

/// Checks one segment against one run, loading the run's dispatch ids only when its time holds.
fn check(
    conn: &Connection,
    recs: &[&LogWindow],
    span: &RunSpan,
    cache: &mut HashMap<i64, RunFacts>,
) -> Result<std::result::Result<Held, Failure>> {
    if let Err(f) = evidence::check_time(recs, span) {
        return Ok(Err(f));
    }
    let facts = match cache.entry(span.run_id) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(run_facts::load(conn, span.clone())?)
        }
    };
    Ok(evidence::check_file(recs, facts))
}

fn held_text(h: &Held, span: &RunSpan) -> String {
    let zone = match span.utc_offset_s {
        Some(o) => offset_text(i64::from(o)),
        None => "read as UTC: the run records no UTC offset".into(),
    };
    let mut s = format!(
        "{} stamps inside the run's time span ({zone}), {} dispatch ids with outcome and passes agreeing, {} lines inside their dispatch's slot, {} snapshots within their pre-pass",
        h.stamps, h.matched, h.slots, h.physical
    );
    if h.beyond_file > 0 {
        s.push_str(&format!(
            ", {} lines past the end of the unfinalized phase file",
            h.beyond_file
        ));
    }
    s
}

/// Decides the joins of a parsed log, or the refusal.
pub fn plan(
    conn: &Connection,
    records: &[LogWindow],
    target: Target,
) -> Result<std::result::Result<Vec<RunJoin>, Refusal>> {
    let segs = segments::split(records);
    if let Target::Force(run) = target {
        return forced(conn, records, &segs, run).map(Ok);
    }
    let candidates: Vec<RunSpan> = match target {
        Target::Run(r) => match run_facts::span(conn, r)? {
            Some(s) => vec![s],
            None => {
                return Ok(Err(format!(
                    "run {r} has no clock anchor to place the log's stamps on"
                )));
            }
        },
        _ => run_facts::spans(conn)?,
    };
    let mut cache = HashMap::new();
    let mut by_run: BTreeMap<i64, (Vec<usize>, Held)> = BTreeMap::new();
    for seg in &segs {
        let recs: Vec<&LogWindow> = seg.records.iter().map(|&i| &records[i]).collect();
        let mut ok = Vec::new();
        let mut best: Option<(Evidence, i64, String)> = None;
        for span in &candidates {
            match check(conn, &recs, span, &mut cache)? {
                Ok(h) => ok.push((span.run_id, h)),
                Err(f) => {
                    if best.as_ref().is_none_or(|b| f.evidence > b.0) {
                        best = Some((f.evidence, span.run_id, f.detail));
                    }
                }
            }
        }
        match ok.as_slice() {
            [(run, h)] => {
                let e = by_run.entry(*run).or_default();
                e.0.extend(&seg.records);
                e.1.add(*h);
            }
            [] => {
                return Ok(Err(match best {
                    Some((ev, _, detail)) => {
                        format!("{}: {} failed: {detail}", describe(seg, records), ev.name())
                    }
                    None => format!(
                        "{}: no run in the database has a clock anchor to place the log on",
                        describe(seg, records)
                    ),
                }));
            }
            many => {
                let runs: Vec<String> = many.iter().map(|(r, _)| r.to_string()).collect();
                return Ok(Err(format!(
                    "{}: the evidence holds for runs {} alike, so it cannot tell which; join one with --run ID",
                    describe(seg, records),
                    runs.join(" and ")
                )));
            }
        }
    }
    let mut joins = Vec::new();
    for (run, (idx, held)) in by_run {
        let facts = &cache[&run];
        if let Err(r) = coverage(records, &idx, facts) {
            return Ok(Err(r));
        }
        joins.push(RunJoin {
            run_id: run,
            evidence: held_text(&held, &facts.span),
            records: idx,
            forced: None,
        });
    }
    Ok(Ok(joins))
}

/// The joined segments of a run claim each dispatch id once and leave none of the run's SDK
/// windows between their first and last id without a line (replayed windows only when the log
/// has any replayed line: a log at WARNING level holds declines only).
fn coverage(
    records: &[LogWindow],
    idx: &[usize],
    facts: &RunFacts,
) -> std::result::Result<(), Refusal> {
    let run = facts.span.run_id;
    let mut ids = BTreeSet::new();
    let mut replayed_lines = false;
    for &i in idx {
        let r = &records[i];
        if !ids.insert(r.dispatch_id) {
            return Err(format!(
                "dispatch sequence failed: two of the log's threads claim dispatch {} of run {run} (lines of two processes share a thread id)",
                r.dispatch_id
            ));
        }
        replayed_lines |= r.outcome.as_deref() == Some("replayed");
    }
    let (Some(&lo), Some(&hi)) = (ids.first(), ids.last()) else {
        return Ok(());
    };
    let mut missing: Vec<u64> = facts
        .entries
        .iter()
        .filter(|(id, e)| {
            (lo..=hi).contains(*id)
                && !ids.contains(*id)
                && (e.outcome == "declined" || (replayed_lines && e.outcome == "replayed"))
        })
        .map(|(id, _)| *id)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort_unstable();
    let shown: Vec<String> = missing.iter().take(5).map(u64::to_string).collect();
    Err(format!(
        "dispatch sequence failed: run {run} has {} SDK window(s) between dispatch {lo} and {hi} with no line in the log (dispatch {}{})",
        missing.len(),
        shown.join(", "),
        if missing.len() > 5 { ", ..." } else { "" }
    ))
}

/// `--run ID --force`: every record joins `run` (the first record of a dispatch id wins); the
/// evidence is still evaluated, and what failed is stored with the join.
fn forced(
    conn: &Connection,
    records: &[LogWindow],
    segs: &[Segment],
    run: i64,
) -> Result<Vec<RunJoin>> {
    let mut seen = BTreeSet::new();
    let idx: Vec<usize> = (0..records.len())
        .filter(|&i| seen.insert(records[i].dispatch_id))
        .collect();
    let mut failed = Vec::new();
    let mut held = Held::default();
    let mut span_text = String::new();
    match run_facts::span(conn, run)? {
        None => failed.push("the run has no clock anchor".to_string()),
        Some(span) => {
            let mut cache = HashMap::new();
            for seg in segs {
                let recs: Vec<&LogWindow> = seg.records.iter().map(|&i| &records[i]).collect();
                match check(conn, &recs, &span, &mut cache)? {
                    Ok(h) => held.add(h),
                    Err(f) => failed.push(format!(
                        "{}: {} failed: {}",
                        describe(seg, records),
                        f.evidence.name(),
                        f.detail
                    )),
                }
            }
            if failed.is_empty()
                && let Some(facts) = cache.get(&run)
                && let Err(r) = coverage(records, &idx, facts)
            {
                failed.push(r);
            }
            span_text = held_text(&held, &span);
        }
    }
    Ok(vec![RunJoin {
        run_id: run,
        records: idx,
        evidence: span_text,
        forced: Some(if failed.is_empty() {
            "no evidence failed".into()
        } else {
            failed.join("; ")
        }),
    }])
}
