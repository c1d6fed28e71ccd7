//! What a run's summary needs besides its windows' figures — its passes by index, its plain
//! dispatches, and which declined dispatches never ran once — gathered from the rows `import`
//! writes as it writes them, so that finishing the summary reads nothing back (the same figures
//! `build` reads in SQL; debug builds compare the two on every import).

use std::collections::BTreeMap;

use foldhash::HashSet;

use super::build::{PassSummary, PlainSummary};

/// The rows seen so far.
#[derive(Debug, Default)]
pub struct RowsSeen {
    passes: BTreeMap<i64, PassSummary>,
    plain: PlainSummary,
    plain_ids: HashSet<i64>,
    declined_ids: Vec<i64>,
}

impl RowsSeen {
    /// A pass row; a stuck pass (incomplete) is left out, as its GPU interval spans the SDK's
    /// drain wait.
    pub fn pass(
        &mut self,
        index: i64,
        host_ns: Option<i64>,
        gpu_ns: Option<i64>,
        incomplete: bool,
    ) {
        if incomplete {
            return;
        }
        let e = self.passes.entry(index).or_insert(PassSummary {
            pass_index: index,
            ..PassSummary::default()
        });
        e.passes += 1;
        if let Some(h) = host_ns {
            e.host_passes += 1;
            e.host_ns += h;
        }
        e.gpu_ns += gpu_ns.unwrap_or(0);
    }

    /// A plain dispatch row.
    pub fn plain(&mut self, dispatch_id: i64, had_config: bool, enqueue_ns: Option<i64>) {
        let p = &mut self.plain;
        p.all += 1;
        if !had_config {
            p.without_config += 1;
            p.without_config_ns += enqueue_ns.unwrap_or(0);
        }
        if let Some(ns) = enqueue_ns {
            p.timed += 1;
            p.timed_ns = Some(p.timed_ns.unwrap_or(0) + ns);
        }
        self.plain_ids.insert(dispatch_id);
    }

    /// A window that was not replayed.
    pub fn declined(&mut self, dispatch_id: i64) {
        self.declined_ids.push(dispatch_id);
    }

    /// Declined windows whose dispatch has no plain dispatch of its own.
    pub fn declined_without_plain(&self) -> u64 {
        self.declined_ids
            .iter()
            .filter(|id| !self.plain_ids.contains(id))
            .count() as u64
    }

    pub fn passes(&self) -> Vec<PassSummary> {
        self.passes.values().copied().collect()
    }

    pub fn plain_summary(&self) -> PlainSummary {
        self.plain
    }
}
