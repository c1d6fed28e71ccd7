//! Splitting a log into the lines of one process each. A job's stderr can interleave several
//! processes' lines; dispatch ids restart at 1 in every process, so they cannot tell processes
//! apart, but a glog thread id (`pthread_self`) belongs to one process at a time: lines are
//! grouped by thread id, and a thread's run of lines is cut where a dispatch id repeats (a later
//! process reusing the thread id). Each segment is then joined to a run on its own evidence.

use std::collections::{BTreeMap, HashSet};

use super::LogWindow;

/// The records (indices into the parsed log's records) of one thread id, up to a repeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// `None`: lines without a recognisable glog prefix.
    pub tid: Option<u64>,
    pub records: Vec<usize>,
}

/// Segments in order of their first line.
pub fn split(records: &[LogWindow]) -> Vec<Segment> {
    // Per thread id: the open segment's index in `out` and the dispatch ids it holds.
    let mut open: BTreeMap<Option<u64>, (usize, HashSet<u64>)> = BTreeMap::new();
    let mut out: Vec<Segment> = Vec::new();
    for (i, r) in records.iter().enumerate() {
        // A thread's segment continues until one of its dispatch ids comes round again.
        let continued = open
            .get_mut(&r.tid)
            .filter(|(_, ids)| !ids.contains(&r.dispatch_id))
            .map(|(seg, ids)| {
                ids.insert(r.dispatch_id);
                out[*seg].records.push(i);
            })
            .is_some();
        if !continued {
            out.push(Segment {
                tid: r.tid,
                records: vec![i],
            });
            open.insert(r.tid, (out.len() - 1, HashSet::from([r.dispatch_id])));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(tid: u64, id: u64) -> LogWindow {
        LogWindow {
            tid: Some(tid),
            dispatch_id: id,
            ..LogWindow::default()
        }
    }

    #[test]
    fn by_thread_id_and_cut_where_a_dispatch_id_repeats() {
        // Two processes interleaved (threads 7 and 9), then thread 7's id reused by a third.
        let r = [
            rec(7, 1),
            rec(9, 1),
            rec(7, 2),
            rec(9, 2),
            rec(7, 3),
            rec(7, 1),
            rec(7, 2),
        ];
        let s = split(&r);
        let got: Vec<(Option<u64>, Vec<usize>)> =
            s.into_iter().map(|g| (g.tid, g.records)).collect();
        assert_eq!(
            got,
            vec![
                (Some(7), vec![0, 2, 4]),
                (Some(9), vec![1, 3]),
                (Some(7), vec![5, 6]),
            ]
        );
        // A nested (reentrant) dispatch logs before the outer one: a lower id later is no cut.
        assert_eq!(split(&[rec(7, 5), rec(7, 4)]).len(), 1);
    }
}
