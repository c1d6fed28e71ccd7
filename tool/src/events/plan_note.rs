//! The notes a reader needs to tell a window's passes apart: the pass plan (which pass is the
//! warm-up, which the verification, which group each counts), written once at initialize in
//! drive mode (`counter_records.rs` decides when), and the one line that says counting was
//! refused. Each is a string-table entry in
//! the note namespace, keyed by its sequence number (1, 2, …), so no record kind is added.

use crate::recorder;
use krphase_format::NameSpace;
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
