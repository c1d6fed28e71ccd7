//! The dispatch counting service's reactions on the tool (`counting.rs` holds its state):
//! starting it in `initialize`, and the record callback, which sums each counter's dimension
//! instances in a fixed table on the stack and writes one COUNTER_VALUE record per counter — no
//! lock, no allocation.

use super::tool::Tool;
use crate::recorder::{self, Flush};
use crate::say;
use krphase_ffi::CounterRecord;
use krphase_format::{Mode, Record, event::CounterValue};
use std::sync::atomic::Ordering;

/// Counters one record callback can sum (the largest group).
const TABLE: usize = crate::config::pmc::MAX_GROUP_COUNTERS;

impl Tool {
    /// Starts the counting context in `initialize`, when the tool drives replay (a tool that
    /// fell back to observe leaves counting to the replay owner).
    pub fn start_counting(&self) {
        let (Some(c), Some(sdk)) = (self.counting.get(), self.sdk.as_ref()) else {
            return;
        };
        if self.mode() != krphase_format::Mode::Drive {
            say(
                "KRPHASE_PMC applies to drive mode only (another tool owns replay); running without counters",
            );
            return;
        }
        if let Err(s) = sdk.start_context(c.ctx) {
            c.off.store(true, Ordering::Relaxed);
            say(&format!(
                "KRPHASE_PMC: starting the counting context failed (status {}); running without counters",
                s.0
            ));
        }
    }

    /// The SDK's record callback for pass `pass` of dispatch `d`: one COUNTER_VALUE per counter,
    /// its instances summed.
    pub fn on_counter_records(&self, d: u64, pass: u32, records: &[CounterRecord]) {
        let Some(sdk) = self.sdk.as_ref() else { return };
        let mut table = [(0u64, 0f64, 0u8); TABLE];
        let mut used = 0;
        for r in records {
            let counter = match sdk.record_counter_id(r.id) {
                Some(Ok(c)) => c.handle,
                // Without the SDK's decoding the instance id stands for its counter.
                _ => r.id,
            };
            match table[..used].iter_mut().find(|e| e.0 == counter) {
                Some(e) => {
                    e.1 += r.counter_value;
                    e.2 = e.2.saturating_add(1);
                }
                None if used < TABLE => {
                    table[used] = (counter, r.counter_value, 1);
                    used += 1;
                }
                None => {}
            }
        }
        let ts = crate::clock::now();
        let pass = pass.min(u32::from(u16::MAX)) as u16;
        for &(counter, value, n) in &table[..used] {
            recorder::record(
                Record::counter_value(0, d, counter, CounterValue(value), pass, n),
                ts,
                Flush::Lazy,
            );
        }
    }

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
        super::plan_note::note(c.plan.note(c.passes, c.max_passes, &c.reference, groups));
    }
}
