//! Which of a replay_perf.py row's phase files came from which launch of rocprofv3, and which
//! launches were its warm-ups.
//!
//! replay_perf.py runs `--warmup` untimed launches, then `--repeats` timed ones, all with the
//! same `-d` directory, so the warm-ups' phase files sit beside the timed runs' and the CSV does
//! not say how many there were. A launch is one rocprofv3 command: one phase file, or under
//! application replay (several `--pmc` groups without `--replay-mode kernel`) one file per group
//! in `pass_1`, `pass_2`, …, all children of the same launcher. Launches run one after another,
//! so ordered by the tool's start time the warm-ups are the first ones: every launch beyond the
//! row's timed runs (`samples` + failed runs) is a warm-up.

use crate::db::measurements::Failures;
use crate::db::runs::pass_dir;

/// One phase file of a row, as imported.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkedFile {
    pub run_id: i64,
    /// The file's path (its `pass_<n>` directory tells application replay).
    pub path: String,
    /// The tool's start (CLOCK_BOOTTIME, ns), else the file's first event.
    pub started_ns: Option<i64>,
    /// The process's parent: the launcher under application replay.
    pub ppid: Option<i64>,
}

/// The files of a row grouped into launches, in launch order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Launches {
    /// The timed launches' run ids, each launch's files in pass order.
    pub timed: Vec<Vec<i64>>,
    /// The warm-up launches' run ids.
    pub warmups: Vec<Vec<i64>>,
    /// What could not be told apart, when something could not (one line).
    pub note: Option<String>,
}

/// Groups files into launches: one launch per file, or under application replay one per run of
/// `pass_1..pass_G` files (a new launch starts when the pass number does not rise or the parent
/// process changes).
fn group(files: &mut [LinkedFile]) -> Vec<Vec<i64>> {
    files.sort_by_key(|f| (f.started_ns.is_none(), f.started_ns, f.run_id));
    let mut out: Vec<Vec<i64>> = Vec::new();
    let mut prev: Option<(u32, Option<i64>)> = None;
    for f in files.iter() {
        let here = pass_dir(&f.path);
        let same = match (prev, here) {
            (Some((p, ppid)), Some(n)) => n > p && ppid == f.ppid,
            _ => false,
        };
        match out.last_mut() {
            Some(l) if same => l.push(f.run_id),
            _ => out.push(vec![f.run_id]),
        }
        prev = here.map(|n| (n, f.ppid));
    }
    out
}

/// Splits a row's files into warm-up and timed launches.
pub fn split_launches(mut files: Vec<LinkedFile>, samples: u32, failures: Failures) -> Launches {
    let launches = group(&mut files);
    let timed = match failures {
        Failures::Count(f) => (samples + f) as usize,
        Failures::All => {
            return Launches {
                note: (!launches.is_empty()).then(|| {
                    "every timed run failed, so warm-ups cannot be told from timed runs".into()
                }),
                timed: launches,
                warmups: Vec::new(),
            };
        }
    };
    let mut note = None;
    if launches.len() < timed {
        note = Some(format!(
            "{} launch(es) left phase files for {timed} timed run(s); none taken as a warm-up",
            launches.len()
        ));
    } else if let Failures::Count(f @ 1..) = failures {
        note = Some(format!(
            "{f} timed run(s) failed; their phase files, if any, cannot be told from the others'"
        ));
    }
    let warm = launches.len().saturating_sub(timed);
    let mut launches = launches;
    let timed_launches = launches.split_off(warm);
    Launches {
        timed: timed_launches,
        warmups: launches,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(run_id: i64, path: &str, started: i64, ppid: i64) -> LinkedFile {
        LinkedFile {
            run_id,
            path: path.into(),
            started_ns: Some(started),
            ppid: Some(ppid),
        }
    }

    /// One file per launch: with 3 timed runs, the earliest of 4 files is the warm-up, whatever
    /// the order the files were found in.
    #[test]
    fn earliest_launches_beyond_the_timed_runs_are_warmups() {
        let files = vec![
            file(11, "w/p3-16384/krphase-h-12.krp", 300, 1),
            file(10, "w/p3-16384/krphase-h-10.krp", 100, 1),
            file(13, "w/p3-16384/krphase-h-14.krp", 400, 1),
            file(12, "w/p3-16384/krphase-h-11.krp", 200, 1),
        ];
        let l = split_launches(files, 3, Failures::Count(0));
        assert_eq!(l.warmups, vec![vec![10]]);
        assert_eq!(l.timed, vec![vec![12], vec![11], vec![13]]);
        assert_eq!(l.note, None);
    }

    /// Application replay: each launch writes pass_1..pass_3 from one launcher; 3 launches of
    /// which 2 are timed.
    #[test]
    fn application_replay_files_group_by_launch() {
        let mut files = Vec::new();
        let mut id = 0;
        for (launch, ppid) in [(0, 50), (1, 60), (2, 70)] {
            for pass in 1..=3 {
                id += 1;
                let t = launch * 1000 + pass * 10;
                files.push(file(
                    id,
                    &format!("w/p6-filtered/pass_{pass}/k-{id}.krp"),
                    t,
                    ppid,
                ));
            }
        }
        let l = split_launches(files, 2, Failures::Count(0));
        assert_eq!(l.warmups, vec![vec![1, 2, 3]]);
        assert_eq!(l.timed, vec![vec![4, 5, 6], vec![7, 8, 9]]);
    }

    #[test]
    fn missing_launches_and_failures_are_said() {
        let files = vec![file(1, "a.krp", 1, 1), file(2, "b.krp", 2, 1)];
        let l = split_launches(files.clone(), 3, Failures::Count(0));
        assert!(l.warmups.is_empty() && l.timed.len() == 2);
        assert!(l.note.unwrap().contains("none taken as a warm-up"));
        let l = split_launches(files.clone(), 1, Failures::Count(1));
        assert!(l.warmups.is_empty());
        assert!(l.note.unwrap().contains("failed"));
        let l = split_launches(files, 0, Failures::All);
        assert_eq!(l.timed.len(), 2);
        assert!(l.note.is_some());
        assert_eq!(pass_dir("x/pass_12/y.krp"), Some(12));
        assert_eq!(pass_dir("x/passes/y.krp"), None);
    }
}
