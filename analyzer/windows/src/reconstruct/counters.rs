//! Counter values (COUNTER_VALUE records) on their way to the passes they were counted in, and
//! the bounded memory of dispatches already emitted, so that a value reaching the file after its
//! window was emitted comes out on its own ([`crate::Output::Counter`]) instead of opening a
//! dispatch that never closes.

use super::Reconstructor;
use crate::limits::LimitError;
use crate::model::{CounterReading, Output, Pass};
use foldhash::HashSet;
use krphase_format::event::Event;
use std::collections::VecDeque;

/// The most recently emitted dispatch ids, at most `cap` of them.
#[derive(Debug, Default)]
pub(super) struct Emitted {
    order: VecDeque<u64>,
    set: HashSet<u64>,
}

impl Emitted {
    pub(super) fn insert(&mut self, d: u64, cap: usize) {
        if self.set.insert(d) {
            self.order.push_back(d);
        }
        while self.order.len() > cap.max(1) {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }

    pub(super) fn contains(&self, d: u64) -> bool {
        self.set.contains(&d)
    }
}

/// A COUNTER_VALUE event as a reading (not yet named) and the thread that recorded it.
pub(super) fn reading(ev: &Event) -> Option<(u32, CounterReading)> {
    match *ev {
        Event::CounterValue {
            thread,
            dispatch_id,
            counter,
            value,
            pass,
            instances,
        } => Some((
            thread,
            CounterReading {
                dispatch_id,
                pass: u32::from(pass),
                counter,
                name: None,
                value,
                instances,
            },
        )),
        _ => None,
    }
}

impl Reconstructor {
    /// A COUNTER_VALUE: held with its dispatch, or out at once when that was emitted already.
    pub(super) fn on_counter_value(
        &mut self,
        thread: u32,
        reading: CounterReading,
    ) -> Result<(), LimitError> {
        let d = reading.dispatch_id;
        if !self.groups.contains_key(&d) && self.emitted.contains(d) {
            let name = self.counter_names.get(&reading.counter).cloned();
            self.ready
                .push_back(Output::Counter(CounterReading { name, ..reading }));
            return Ok(());
        }
        let held = self.groups.get(&d).map_or(0, |g| g.counters.len());
        self.check_per_dispatch(d, held)?;
        self.group(d, thread).counters.push(reading);
        Ok(())
    }

    /// Attaches each counter value to its pass (named from the string table); values without
    /// such a pass come out on their own.
    pub(super) fn attach_counters(&mut self, passes: &mut [Pass], counters: Vec<CounterReading>) {
        for mut c in counters {
            c.name = self.counter_names.get(&c.counter).cloned();
            match passes.get_mut(c.pass as usize) {
                Some(p) => p.counters.push(c),
                None => self.ready.push_back(Output::Counter(c)),
            }
        }
    }
}
