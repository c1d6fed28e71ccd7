//! Taking in one event: the route from each record kind to the handler of its family, and the
//! count of entries the record added to its held dispatch.

use super::Reconstructor;
use super::counters;
use crate::limits::LimitError;
use krphase_format::event::Event;

/// The dispatch a record may add passes, enqueues, completions or continue calls to.
fn entry_adding_dispatch(ev: &Event) -> Option<u64> {
    match *ev {
        Event::PassEnter { dispatch_id, .. }
        | Event::Continue { dispatch_id, .. }
        | Event::EnqueueEnter { dispatch_id, .. }
        | Event::Complete { dispatch_id, .. }
        | Event::CompleteHost { dispatch_id, .. }
        | Event::CompleteAt { dispatch_id, .. }
        | Event::CounterValue { dispatch_id, .. } => Some(dispatch_id),
        _ => None,
    }
}

impl Reconstructor {
    pub(super) fn take(&mut self, ev: &Event) -> Result<(), LimitError> {
        self.take_event(ev)?;
        // Entries the record added to its dispatch, if that is still held.
        if let Some(g) = entry_adding_dispatch(ev).and_then(|d| self.groups.get_mut(&d)) {
            let n = g.entries();
            self.held_entries += n - g.counted;
            g.counted = n;
        }
        self.enforce_bound();
        Ok(())
    }

    fn take_event(&mut self, ev: &Event) -> Result<(), LimitError> {
        if let Some((thread, reading)) = counters::reading(ev) {
            return self.on_counter_value(thread, reading);
        }
        match ev {
            Event::Name { .. } => self.take_name(ev),
            Event::ConfigEnter { .. }
            | Event::PassCountReturn { .. }
            | Event::PassEnter { .. }
            | Event::PassExit { .. }
            | Event::Continue { .. }
            | Event::ConfigExit { .. } => self.take_drive(ev),
            Event::DispatchInfo { .. }
            | Event::Correlation { .. }
            | Event::EnqueueEnter { .. }
            | Event::EnqueueExit { .. } => self.take_enqueue(ev),
            Event::Complete { .. } | Event::CompleteHost { .. } | Event::CompleteAt { .. } => {
                self.take_completion(ev)
            }
            _ => self.take_bytes(ev),
        }
    }
}
