//! One test per rule: the figures that make it speak, and figures a little on the other side of
//! its threshold where it stays quiet.

use super::*;
use crate::answers::overview::{DroppedRun, PooledPhase, SlowKernel};
use crate::db::basis::Basis;

fn phase(name: &str, parent: Option<&str>, total: i64, share: f64, of_parent: f64) -> PooledPhase {
    PooledPhase {
        phase: name.into(),
        parent: parent.map(String::from),
        total_ns: total,
        share_of_replay: Some(share),
        share_of_parent: parent.map(|_| of_parent),
        runs: 3,
        basis: vec![Basis::InProcess],
        outside_window: false,
        parent_untimed: None,
    }
}

/// Replay time split pre-pass `pre` / pass exec / restore, snapshot `snap` of pre-pass.
fn overview(pre: f64, snap: f64) -> Overview {
    let total = 1_000_000_000i64;
    let rest = (1.0 - pre) / 2.0;
    Overview {
        runs: 3,
        dispatches: 100,
        replayed: 100,
        replay_ns: total,
        phases: vec![
            phase("pre-pass", None, (pre * total as f64) as i64, pre, 0.0),
            phase("snapshot", Some("pre-pass"), 0, pre * snap, snap),
            phase("pass exec", None, (rest * total as f64) as i64, rest, 0.0),
            phase("restore", None, (rest * total as f64) as i64 - 1, rest, 0.0),
        ],
        snapshot_bytes: 100 * 24 * 1024 * 1024,
        snapshot_windows: 100,
        snapshot_gbps: Some(3.5),
        gpu_share_of_pass: Some(0.8),
        ..Overview::default()
    }
}

fn said(rule: fn(&Overview) -> Option<Finding>, o: &Overview) -> String {
    rule(o).map(|f| f.text).unwrap_or_default()
}

#[test]
fn dominant_phase_names_the_phase_its_share_and_a_remedy() {
    let t = said(dominant_phase, &overview(0.62, 0.9));
    assert!(t.starts_with("pre-pass is 62.0% of replay time"), "{t}");
    assert!(
        t.ends_with(": snapshot 90.0% of it."),
        "its parts, not a remedy: {t}"
    );
    let mut no_parts = overview(0.62, 0.9);
    no_parts.phases.retain(|p| p.parent.is_none());
    let t = said(dominant_phase, &no_parts);
    assert!(t.contains("kernel filter"), "{t}");
    assert!(
        dominant_phase(&overview(0.38, 0.9)).is_none(),
        "31/31/38 has no dominant phase"
    );
}

#[test]
fn snapshot_cost_cites_bytes_per_window_and_rate() {
    let t = said(snapshot_cost, &overview(0.62, 0.9));
    assert!(
        t.contains("snapshot is 55.8% of replay time: 24.0 MiB per window at 3.50 GB/s"),
        "{t}"
    );
    assert!(
        snapshot_cost(&overview(0.62, 0.3)).is_none(),
        "18.6% is no finding"
    );
    let mut no_rate = overview(0.62, 0.9);
    no_rate.snapshot_gbps = None;
    assert!(
        snapshot_cost(&no_rate).is_none(),
        "no rate: no sentence that would cite one"
    );
}

#[test]
fn not_replayed_gives_the_share_and_the_reasons() {
    let mut o = overview(0.3, 0.5);
    o.dispatches = 100;
    o.declined = 26;
    o.without_config = 15;
    o.declines_by_reason.insert("untracked_memory".into(), 26);
    let t = said(not_replayed, &o);
    assert!(
        t.starts_with("41.0% of dispatches were not replayed (41 of 100)"),
        "{t}"
    );
    assert!(
        t.contains("untracked_memory 26") && t.contains("graph launches"),
        "{t}"
    );
    o.declined = 5;
    o.without_config = 4;
    assert!(not_replayed(&o).is_none(), "9% stays quiet");
}

#[test]
fn low_gpu_share_speaks_below_half() {
    let mut o = overview(0.3, 0.5);
    o.gpu_share_of_pass = Some(0.25);
    assert!(said(low_gpu_share, &o).contains("25.0% of pass time"));
    o.gpu_share_of_pass = Some(0.55);
    assert!(low_gpu_share(&o).is_none());
}

fn slow(windows: u64, mean: f64, p99: i64) -> SlowKernel {
    SlowKernel {
        run_id: 7,
        label: Some("stream".into()),
        kernel: "stream_copy".into(),
        windows,
        mean_ns: mean,
        sd_ns: None,
        p99_ns: Some(p99),
        top_phase: None,
        top_phase_share: None,
    }
}

#[test]
fn long_tail_needs_enough_windows_and_a_far_p99() {
    let mut o = overview(0.3, 0.5);
    o.slowest = vec![slow(40, 1e6, 4_000_000)];
    let t = said(long_tail, &o);
    assert!(
        t.contains("stream_copy in run 7") && t.contains("4.0x its mean"),
        "{t}"
    );
    o.slowest = vec![slow(40, 1e6, 2_000_000)];
    assert!(long_tail(&o).is_none(), "2x is no tail");
    o.slowest = vec![slow(5, 1e6, 4_000_000)];
    assert!(long_tail(&o).is_none(), "5 windows are too few to judge");
}

#[test]
fn no_sdk_log_lists_the_runs() {
    let mut o = overview(0.3, 0.5);
    assert!(no_sdk_log(&o).is_none());
    o.runs_without_log = vec![2, 5];
    assert!(said(no_sdk_log, &o).contains("(run 2, 5)"));
}

#[test]
fn dropped_records_lists_the_runs() {
    let mut o = overview(0.3, 0.5);
    assert!(dropped_records(&o).is_none());
    o.dropped = vec![DroppedRun {
        run_id: 3,
        records: 12,
    }];
    assert!(said(dropped_records, &o).contains("run 3 12"));
}

#[test]
fn stuck_windows_counts_them() {
    let mut o = overview(0.3, 0.5);
    assert!(stuck_windows(&o).is_none());
    o.stuck = 2;
    assert!(said(stuck_windows, &o).starts_with("2 window(s)"));
}

#[test]
fn every_rule_is_listed_once_under_its_own_name() {
    let mut o = overview(0.62, 0.9);
    o.stuck = 1;
    let found = findings(&o);
    for f in &found {
        assert!(RULES.iter().any(|(name, _)| *name == f.rule), "{}", f.rule);
    }
    let names: std::collections::BTreeSet<_> = RULES.iter().map(|(n, _)| n).collect();
    assert_eq!(names.len(), RULES.len());
    assert!(found.iter().any(|f| f.rule == "stuck_windows"));
}

fn rank_row(rank: i64, windows: u64, mean_ms: f64) -> crate::answers::ranks::RankRow {
    crate::answers::ranks::RankRow {
        rank,
        run_id: rank + 1,
        label: None,
        host: None,
        pid: None,
        replayed: windows,
        declined: 0,
        replay_ns: (windows as f64 * mean_ms * 1e6) as i64,
        mean_window_ns: Some(mean_ms * 1e6),
        p50_window_ns: None,
        p99_window_ns: None,
        max_window_ns: None,
        largest_phase: None,
        window_basis: vec![],
    }
}

fn ranked(rows: Vec<crate::answers::ranks::RankRow>) -> Overview {
    use crate::answers::ranks::{CrossRank, Spread};
    let spread = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let median = (v[v.len() / 2] + v[(v.len() - 1) / 2]) / 2.0;
        Some(Spread {
            n: v.len(),
            min: v[0],
            median,
            max: v[v.len() - 1],
            max_over_median: Some(v[v.len() - 1] / median),
        })
    };
    let slowest = rows.iter().max_by_key(|r| r.replay_ns).map(|r| r.rank);
    let mut o = overview(0.3, 0.5);
    o.cross_rank = Some(CrossRank {
        replay: spread(rows.iter().map(|r| r.replay_ns as f64).collect()),
        mean_window: spread(rows.iter().filter_map(|r| r.mean_window_ns).collect()),
        slowest,
        world_size: None,
        missing: vec![],
        repeated: vec![],
        vars: vec![],
        unranked_runs: vec![],
        ranks: rows,
    });
    o
}

#[test]
fn rank_imbalance_tells_more_windows_from_slower_ones() {
    let even = ranked((0..4).map(|k| rank_row(k, 100, 1.0)).collect());
    assert!(
        rank_imbalance(&even).is_none(),
        "balanced ranks say nothing"
    );
    let more = ranked(vec![
        rank_row(0, 100, 1.0),
        rank_row(1, 100, 1.0),
        rank_row(2, 200, 1.0),
    ]);
    let s = said(rank_imbalance, &more);
    assert!(s.starts_with("rank 2 (run 3) spends 200.000 ms"), "{s}");
    assert!(s.contains("2.00× the median rank's"), "{s}");
    assert!(s.contains("more windows, not slower ones"), "{s}");
    let slower = ranked(vec![
        rank_row(0, 100, 1.0),
        rank_row(1, 100, 1.0),
        rank_row(2, 100, 3.0),
    ]);
    assert!(said(rank_imbalance, &slower).contains("slower windows"));
    let no_ranks = overview(0.3, 0.5);
    assert!(rank_imbalance(&no_ranks).is_none());
}

/// Restores inside the passes that no SDK log split out are pass time, never called host work;
/// once split, the sentence says so.
#[test]
fn low_gpu_share_never_calls_an_in_pass_restore_host_work() {
    let mut o = overview(0.2, 0.5);
    o.gpu_share_of_pass = Some(0.3);
    o.restore_in_pass = 4;
    o.restore_in_pass_unsplit = 4;
    let t = said(low_gpu_share, &o);
    assert!(!t.contains("is host work"), "{t}");
    assert!(t.contains("holds the restores of 4 windows"), "{t}");
    o.restore_in_pass_unsplit = 0;
    let t = said(low_gpu_share, &o);
    assert!(
        t.contains("is host work") && t.contains("taken out, from the SDK log"),
        "{t}"
    );
}
