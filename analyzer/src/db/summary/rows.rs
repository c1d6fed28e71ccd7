//! A run summary as rows of `krphase_run_stat` (the run's tallies and plain dispatches; its
//! presence marks the summary current), `krphase_phase_stat` (per phase, the whole run and each
//! kernel) and `krphase_pass_stat` (per pass index).

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};

use super::{
    PassSummary, PhaseSummary, PlainSummary, REST, REST_INDEX, RunSummary, SUMMARY_VERSION, Tallies,
};
use crate::db::basis::Basis;
use crate::db::phases::PHASES;

/// The name a phase row carries: a phase of [`PHASES`], or [`REST`].
fn phase_name(k: usize) -> &'static str {
    if k == REST_INDEX {
        REST
    } else {
        PHASES[k].name
    }
}

fn phase_index(name: &str) -> Option<usize> {
    if name == REST {
        Some(REST_INDEX)
    } else {
        PHASES.iter().position(|p| p.name == name)
    }
}

fn encode_ranks(ranks: &[(u64, i64)]) -> Vec<u8> {
    let mut b = Vec::with_capacity(ranks.len() * 16);
    for (r, v) in ranks {
        b.extend_from_slice(&r.to_le_bytes());
        b.extend_from_slice(&v.to_le_bytes());
    }
    b
}

fn decode_ranks(b: &[u8]) -> Result<Vec<(u64, i64)>> {
    if !b.len().is_multiple_of(16) {
        bail!("a phase summary's ranks are {} bytes long", b.len());
    }
    Ok(b.chunks_exact(16)
        .map(|c| {
            let (r, v) = c.split_at(8);
            (
                u64::from_le_bytes(r.try_into().expect("8 bytes")),
                i64::from_le_bytes(v.try_into().expect("8 bytes")),
            )
        })
        .collect())
}

fn encode_bases(m: &BTreeMap<Basis, u64>) -> String {
    let o: serde_json::Map<String, serde_json::Value> = m
        .iter()
        .map(|(b, n)| (b.code().to_string(), (*n).into()))
        .collect();
    serde_json::Value::Object(o).to_string()
}

fn decode_counts(s: &str) -> Result<BTreeMap<String, u64>> {
    Ok(serde_json::from_str(s)?)
}

fn decode_bases(s: &str) -> Result<BTreeMap<Basis, u64>> {
    decode_counts(s)?
        .into_iter()
        .map(|(k, n)| Ok((Basis::parse(&k).context("unknown basis")?, n)))
        .collect()
}

fn write_phase(
    conn: &Connection,
    run: i64,
    kernel: Option<&str>,
    k: usize,
    p: &PhaseSummary,
) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO krphase_phase_stat (run_id, kernel, phase, windows, total_ns, positive_ns,
           sum_sq, min_ns, max_ns, ranks, bases)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    stmt.execute(params![
        run,
        kernel,
        phase_name(k),
        p.windows as i64,
        p.total_ns,
        p.positive_ns,
        p.sum_sq,
        p.ranks.first().map(|r| r.1),
        p.ranks.last().map(|r| r.1),
        encode_ranks(&p.ranks),
        encode_bases(&p.bases),
    ])?;
    Ok(())
}

/// Stores `s` as the summary of `run`, replacing any other.
pub fn write(conn: &Connection, run: i64, s: &RunSummary) -> Result<()> {
    conn.execute("DELETE FROM krphase_run_stat WHERE run_id = ?1", [run])?;
    let t = &s.tallies;
    let by_reason = serde_json::to_string(&t.declines_by_reason)?;
    conn.execute(
        "INSERT INTO krphase_run_stat (run_id, version, replayed, declined,
           declined_without_plain, stuck, stuck_ns, declined_ns, opt_out_windows, opt_out_ns,
           snapshot_bytes, restore_bytes, log_joined, executed_passes, restores, observed, spans,
           declines_by_reason, bytes_bases, plain_all, plain_without_config,
           plain_without_config_ns, plain_timed, plain_timed_ns)
         VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,
           ?23,?24)",
        params![
            run,
            SUMMARY_VERSION,
            t.replayed as i64,
            t.declined as i64,
            t.declined_without_plain as i64,
            t.stuck as i64,
            t.stuck_ns,
            t.declined_ns,
            t.opt_out_windows as i64,
            t.opt_out_ns,
            t.snapshot_bytes,
            t.restore_bytes,
            t.log_joined,
            t.executed_passes,
            t.restores,
            t.observed as i64,
            t.spans as i64,
            by_reason,
            encode_bases(&t.bytes_bases),
            s.plain.all as i64,
            s.plain.without_config as i64,
            s.plain.without_config_ns,
            s.plain.timed,
            s.plain.timed_ns,
        ],
    )?;
    for (k, p) in s.phases.iter().enumerate() {
        write_phase(conn, run, None, k, p)?;
    }
    for (name, phases) in &s.kernels {
        for (k, p) in phases.iter().enumerate() {
            write_phase(conn, run, Some(name), k, p)?;
        }
    }
    let mut pass = conn.prepare_cached(
        "INSERT INTO krphase_pass_stat (run_id, pass_index, passes, host_passes, host_ns, gpu_ns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for p in &s.passes {
        pass.execute(params![
            run,
            p.pass_index,
            p.passes as i64,
            p.host_passes as i64,
            p.host_ns,
            p.gpu_ns
        ])?;
    }
    Ok(())
}

fn u(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(r.get::<_, i64>(i)?.max(0) as u64)
}

/// The run's tallies and plain dispatches, when it has a summary of this version.
fn read_run(conn: &Connection, run: i64) -> Result<Option<(Tallies, PlainSummary)>> {
    type Row = (Tallies, PlainSummary, String, String);
    let row: Option<Row> = conn
        .query_row(
            "SELECT replayed, declined, declined_without_plain, stuck, stuck_ns, declined_ns,
                    opt_out_windows, opt_out_ns, snapshot_bytes, restore_bytes, log_joined,
                    executed_passes, restores, observed, spans, declines_by_reason, bytes_bases,
                    plain_all, plain_without_config, plain_without_config_ns, plain_timed,
                    plain_timed_ns
             FROM krphase_run_stat WHERE run_id = ?1 AND version = ?2",
            [run, SUMMARY_VERSION],
            |r| {
                let t = Tallies {
                    replayed: u(r, 0)?,
                    declined: u(r, 1)?,
                    declined_without_plain: u(r, 2)?,
                    stuck: u(r, 3)?,
                    stuck_ns: r.get(4)?,
                    declined_ns: r.get(5)?,
                    opt_out_windows: u(r, 6)?,
                    opt_out_ns: r.get(7)?,
                    snapshot_bytes: r.get(8)?,
                    restore_bytes: r.get(9)?,
                    log_joined: r.get(10)?,
                    executed_passes: r.get(11)?,
                    restores: r.get(12)?,
                    observed: u(r, 13)?,
                    spans: u(r, 14)?,
                    ..Tallies::default()
                };
                let p = PlainSummary {
                    all: u(r, 17)?,
                    without_config: u(r, 18)?,
                    without_config_ns: r.get(19)?,
                    timed: r.get(20)?,
                    timed_ns: r.get(21)?,
                };
                Ok((t, p, r.get(15)?, r.get(16)?))
            },
        )
        .optional()?;
    let Some((mut t, p, reasons, bytes)) = row else {
        return Ok(None);
    };
    t.declines_by_reason = decode_counts(&reasons)?;
    t.bytes_bases = decode_bases(&bytes)?;
    Ok(Some((t, p)))
}

/// The phase rows of `run`: the whole run's, and each kernel's.
type PhaseRows = (Vec<PhaseSummary>, BTreeMap<String, Vec<PhaseSummary>>);

fn read_phases(conn: &Connection, run: i64) -> Result<PhaseRows> {
    let blank = || vec![PhaseSummary::default(); PHASES.len() + 1];
    let mut whole = blank();
    let mut kernels: BTreeMap<String, Vec<PhaseSummary>> = BTreeMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT kernel, phase, windows, total_ns, positive_ns, sum_sq, ranks, bases
         FROM krphase_phase_stat WHERE run_id = ?1",
    )?;
    let mut rows = stmt.query([run])?;
    while let Some(r) = rows.next()? {
        let kernel: Option<String> = r.get(0)?;
        let name: String = r.get(1)?;
        let k = phase_index(&name).with_context(|| format!("unknown phase {name:?}"))?;
        let p = PhaseSummary {
            windows: u(r, 2)?,
            total_ns: r.get(3)?,
            positive_ns: r.get(4)?,
            sum_sq: r.get(5)?,
            ranks: decode_ranks(r.get_ref(6)?.as_blob()?)?,
            bases: decode_bases(r.get_ref(7)?.as_str()?)?,
        };
        let set = match kernel {
            None => &mut whole,
            Some(name) => kernels.entry(name).or_insert_with(blank),
        };
        set[k] = p;
    }
    Ok((whole, kernels))
}

fn read_passes(conn: &Connection, run: i64) -> Result<Vec<PassSummary>> {
    let mut stmt = conn.prepare_cached(
        "SELECT pass_index, passes, host_passes, host_ns, gpu_ns FROM krphase_pass_stat
         WHERE run_id = ?1 ORDER BY pass_index",
    )?;
    let v = stmt
        .query_map([run], |r| {
            Ok(PassSummary {
                pass_index: r.get(0)?,
                passes: u(r, 1)?,
                host_passes: u(r, 2)?,
                host_ns: r.get(3)?,
                gpu_ns: r.get(4)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(v)
}

/// The stored summary of `run` at this version, if any.
pub fn read(conn: &Connection, run: i64) -> Result<Option<RunSummary>> {
    let Some((tallies, plain)) = read_run(conn, run)? else {
        return Ok(None);
    };
    let (phases, kernels) = read_phases(conn, run)?;
    Ok(Some(RunSummary {
        tallies,
        phases,
        kernels,
        passes: read_passes(conn, run)?,
        plain,
    }))
}
