//! Runs as ranks of a parallel job: one row per ranked run, and the cross-rank summary (which
//! rank is slowest, how far the ranks spread). In a bulk-synchronous job every step waits for
//! its slowest rank, so the slowest rank's replay time, not the mean's, is what the job pays.
//!
//! A run's rank is what its launcher announced (format 3.1 headers); runs without one are
//! listed apart and left out of the figures. Replay time is the run's replayed windows' time,
//! with the window phase's basis.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::run_report::RunReport;
use crate::db::basis::Basis;
use crate::render::fmt::{duration, duration_short};

/// One ranked run.
#[derive(Debug, Clone, Serialize)]
pub struct RankRow {
    pub rank: i64,
    pub run_id: i64,
    pub label: Option<String>,
    pub host: Option<String>,
    pub pid: Option<i64>,
    pub replayed: u64,
    pub declined: u64,
    /// The replayed windows' time, summed.
    pub replay_ns: i64,
    pub mean_window_ns: Option<f64>,
    pub p50_window_ns: Option<i64>,
    pub p99_window_ns: Option<i64>,
    pub max_window_ns: Option<i64>,
    /// The top-level phase with the largest share of the run's window time, and that share.
    pub largest_phase: Option<(String, f64)>,
    pub window_basis: Vec<Basis>,
}

/// The spread of one figure over the ranks.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Spread {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// max / median: how much longer the slowest rank takes than the typical one.
    pub max_over_median: Option<f64>,
}

/// The cross-rank summary of a selection of runs.
#[derive(Debug, Clone, Serialize)]
pub struct CrossRank {
    pub ranks: Vec<RankRow>,
    /// The job's size when every ranked run announced the same one.
    pub world_size: Option<i64>,
    /// Ranks below `world_size` no run carries.
    pub missing: Vec<i64>,
    /// Ranks carried by several runs (several jobs in one selection): figures then mix jobs.
    pub repeated: Vec<i64>,
    /// Launcher variables the ranks came from.
    pub vars: Vec<String>,
    pub unranked_runs: Vec<i64>,
    /// Over ranks with replayed windows: replay time per rank, and mean window per rank.
    pub replay: Option<Spread>,
    pub mean_window: Option<Spread>,
    /// The rank with the most replay time (ties: the lowest rank).
    pub slowest: Option<i64>,
}

fn row(r: &RunReport, rank: i64) -> RankRow {
    let window = r.phases.iter().find(|p| p.phase == "window");
    let largest_phase = r
        .phases
        .iter()
        .filter(|p| p.parent.is_none() && p.phase != "window" && p.bound_of.is_none())
        .filter_map(|p| Some((p.phase.clone(), p.share_of_window?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    RankRow {
        rank,
        run_id: r.run_id,
        label: r.label.clone(),
        host: r.host.clone(),
        pid: r.pid,
        replayed: r.windows.replayed,
        declined: r.windows.declined,
        replay_ns: window.map_or(0, |w| w.total_ns),
        mean_window_ns: window.and_then(|w| w.mean_ns),
        p50_window_ns: window.and_then(|w| w.p50_ns),
        p99_window_ns: window.and_then(|w| w.p99_ns),
        max_window_ns: window.and_then(|w| w.max_ns),
        largest_phase,
        window_basis: window.map(|w| w.basis.clone()).unwrap_or_default(),
    }
}

/// The spread of `values` (`None` when empty). The median of an even count is the mean of the
/// middle two.
fn spread(mut values: Vec<f64>) -> Option<Spread> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = match n {
        0 => return None,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    let max = values[n - 1];
    Some(Spread {
        n,
        min: values[0],
        median,
        max,
        max_over_median: (median > 0.0).then(|| max / median),
    })
}

impl CrossRank {
    /// The cross-rank summary of `reports`; `None` when fewer than two runs carry a rank.
    pub fn of(reports: &[RunReport]) -> Option<CrossRank> {
        let mut ranks: Vec<RankRow> = reports
            .iter()
            .filter_map(|r| Some(row(r, r.rank.as_ref()?.rank)))
            .collect();
        if ranks.len() < 2 {
            return None;
        }
        ranks.sort_by_key(|r| (r.rank, r.run_id));
        let sizes: BTreeSet<Option<i64>> = reports
            .iter()
            .filter_map(|r| r.rank.as_ref().map(|k| k.world_size))
            .collect();
        let world_size = match sizes.iter().collect::<Vec<_>>()[..] {
            [Some(n)] => Some(*n),
            _ => None,
        };
        let mut seen: BTreeMap<i64, usize> = BTreeMap::new();
        for r in &ranks {
            *seen.entry(r.rank).or_default() += 1;
        }
        let missing = world_size.map_or_else(Vec::new, |n| {
            (0..n).filter(|k| !seen.contains_key(k)).collect()
        });
        let active: Vec<&RankRow> = ranks.iter().filter(|r| r.replayed > 0).collect();
        let slowest = active
            .iter()
            .max_by_key(|r| (r.replay_ns, std::cmp::Reverse(r.rank)))
            .map(|r| r.rank);
        Some(CrossRank {
            world_size,
            missing,
            repeated: seen
                .iter()
                .filter(|(_, n)| **n > 1)
                .map(|(k, _)| *k)
                .collect(),
            vars: reports
                .iter()
                .filter_map(|r| r.rank.as_ref()?.var.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            unranked_runs: reports
                .iter()
                .filter(|r| r.rank.is_none())
                .map(|r| r.run_id)
                .collect(),
            replay: spread(active.iter().map(|r| r.replay_ns as f64).collect()),
            mean_window: spread(active.iter().filter_map(|r| r.mean_window_ns).collect()),
            slowest,
            ranks,
        })
    }

    /// The slowest rank against the median rank, when it is at least `factor` times slower:
    /// (its row, the median replay, the median windows, the median mean window).
    pub fn imbalance(&self, factor: f64) -> Option<(&RankRow, f64, f64, f64)> {
        let s = self.replay?;
        if s.n < 2 || s.max_over_median? < factor {
            return None;
        }
        let active = || self.ranks.iter().filter(|r| r.replayed > 0);
        let windows = spread(active().map(|r| r.replayed as f64).collect())?;
        Some((
            self.slowest_row()?,
            s.median,
            windows.median,
            self.mean_window?.median,
        ))
    }

    fn slowest_row(&self) -> Option<&RankRow> {
        let k = self.slowest?;
        self.ranks
            .iter()
            .filter(|r| r.rank == k)
            .max_by_key(|r| r.replay_ns)
    }

    /// "256 ranks (of 256, OMPI_COMM_WORLD_RANK)" with what is missing or repeated.
    fn census(&self) -> String {
        let distinct = self.ranks.iter().map(|r| r.rank).collect::<BTreeSet<_>>();
        let mut s = format!("{} ranks", distinct.len());
        let mut of = Vec::new();
        if let Some(n) = self.world_size {
            of.push(format!("of {n}"));
        }
        if !self.vars.is_empty() {
            of.push(self.vars.join(", "));
        }
        if !of.is_empty() {
            let _ = write!(s, " ({})", of.join(", "));
        }
        if !self.missing.is_empty() {
            let _ = write!(s, "; missing: {}", list(&self.missing));
        }
        if !self.repeated.is_empty() {
            let _ = write!(
                s,
                "; in several runs (several jobs mixed; select one with --run LABEL): {}",
                list(&self.repeated)
            );
        }
        if !self.unranked_runs.is_empty() {
            let _ = write!(
                s,
                "; runs without a rank, left out: {}",
                list(&self.unranked_runs)
            );
        }
        s
    }

    /// The summary's lines: the census, the slowest rank and the spread.
    pub fn summary_lines(&self) -> Vec<String> {
        let mut out = vec![format!("ranks: {}", self.census())];
        if let (Some(s), Some(slow)) = (self.replay, self.slowest_row()) {
            let times = s
                .max_over_median
                .map(|x| format!(", {x:.2}× the median rank's"))
                .unwrap_or_default();
            out.push(format!(
                "slowest rank {} (run {}{}): {} of replay{times}; replay per rank over {} ranks: \
                 min {} · median {} · max {}",
                slow.rank,
                slow.run_id,
                slow.host
                    .as_deref()
                    .map(|h| format!(", {h}"))
                    .unwrap_or_default(),
                duration(slow.replay_ns as f64),
                s.n,
                duration(s.min),
                duration(s.median),
                duration(s.max),
            ));
        }
        if let Some(m) = self.mean_window {
            out.push(format!(
                "mean window per rank: min {} · median {} · max {} (basis: {})",
                duration(m.min),
                duration(m.median),
                duration(m.max),
                self.bases()
            ));
        }
        out
    }

    fn bases(&self) -> String {
        let b: BTreeSet<Basis> = self
            .ranks
            .iter()
            .flat_map(|r| r.window_basis.iter().copied())
            .collect();
        if b.is_empty() {
            return "none".into();
        }
        b.iter().map(|b| b.word()).collect::<Vec<_>>().join(", ")
    }

    /// The per-rank table's header and rows (terminal and Markdown; CSV and JSON carry ns).
    pub fn table(&self) -> (Vec<&'static str>, Vec<Vec<String>>) {
        let head = vec![
            "rank",
            "run",
            "host",
            "windows",
            "replay",
            "mean",
            "p50",
            "p99",
            "max",
            "largest phase",
        ];
        let short = |v: Option<f64>| v.map_or_else(|| "-".into(), duration_short);
        let opt = |v: Option<i64>| short(v.map(|x| x as f64));
        let rows = self
            .ranks
            .iter()
            .map(|r| {
                vec![
                    r.rank.to_string(),
                    r.run_id.to_string(),
                    r.host.clone().unwrap_or_default(),
                    r.replayed.to_string(),
                    duration_short(r.replay_ns as f64),
                    short(r.mean_window_ns),
                    opt(r.p50_window_ns),
                    opt(r.p99_window_ns),
                    opt(r.max_window_ns),
                    r.largest_phase
                        .as_ref()
                        .map(|(p, s)| format!("{p} {:.0}%", s * 100.0))
                        .unwrap_or_default(),
                ]
            })
            .collect();
        (head, rows)
    }
}

/// "1, 2, 5" (the first 16, then how many more).
fn list(v: &[i64]) -> String {
    let mut s = v
        .iter()
        .take(16)
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if v.len() > 16 {
        let _ = write!(s, " and {} more", v.len() - 16);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_takes_the_middle_and_says_how_far_the_slowest_is() {
        let s = spread(vec![4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.n, s.min, s.median, s.max), (4, 1.0, 2.5, 4.0));
        assert_eq!(s.max_over_median, Some(1.6));
        let odd = spread(vec![5.0, 1.0, 2.0]).unwrap();
        assert_eq!(odd.median, 2.0);
        assert!(spread(vec![]).is_none());
        assert_eq!(spread(vec![0.0, 0.0]).unwrap().max_over_median, None);
    }

    #[test]
    fn long_lists_are_cut() {
        let v: Vec<i64> = (0..20).collect();
        assert!(list(&v).ends_with("15 and 4 more"), "{}", list(&v));
    }
}
