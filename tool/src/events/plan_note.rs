//! The notes a reader needs to tell a window's passes apart: the pass plan (which pass is the
//! warm-up, which the verification, which group each counts), written once at initialize in
//! drive mode, and the one line that says counting was refused. Each is a string-table entry in
//! the note namespace, keyed by its sequence number (1, 2, …), so no record kind is added.

use super::tool::Tool;
use crate::recorder;
use crate::say;
use krphase_format::{Mode, NameSpace};
use std::sync::atomic::{AtomicU64, Ordering};

/// The next note's key.
static NEXT_NOTE: AtomicU64 = AtomicU64::new(1);

/// Writes one note (rare: never on a per-dispatch path).
pub fn note(text: String) {
    if let Some(r) = recorder::current() {
        let key = NEXT_NOTE.fetch_add(1, Ordering::Relaxed);
        r.send_names(vec![(NameSpace::Note, key, text)]);
    }
}

/// The note saying counting stopped for the run, with the line the tool said.
pub fn note_counting_refused(reason: &str) {
    note(format!("counters_refused v1 reason={reason}"));
}

impl Tool {
    /// At initialize: the pass plan note, when drive mode counts or adds passes. In observe
    /// mode the options have nothing to act on, which is said once.
    pub fn note_pass_plan(&self) {
        let c = &self.cfg;
        let asked = c.pmc.is_some() || c.pmc_warning.is_some() || c.plan.extras() > 0;
        if !asked {
            return;
        }
        if self.mode() != Mode::Drive {
            if c.plan.extras() > 0 {
                say(
                    "KRPHASE_WARMUP_PASS and KRPHASE_VERIFY_PASS apply to drive mode only (another tool owns replay); no pass added",
                );
            }
            return;
        }
        let groups = c.pmc.as_deref().unwrap_or(&[]);
        note(c.plan.note(c.passes, c.max_passes, &c.reference, groups));
    }
}
