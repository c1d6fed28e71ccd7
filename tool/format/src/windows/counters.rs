//! Counter values (COUNTER_VALUE records) on their way to the passes they were counted in, and
//! the bounded memory of dispatches already emitted, so that a value reaching the file after its
//! window was emitted comes out on its own ([`super::Output::Counter`]) instead of opening a
//! dispatch that never closes.

use crate::event::{CounterValue, Event};
use serde::{Deserialize, Serialize};
use std::collections::{HashSet, VecDeque};

/// One counter's value in one pass of a dispatch, from the SDK's dispatch counting service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterReading {
    pub dispatch_id: u64,
    /// The pass the dispatch was counted in (0 for a dispatch run once).
    pub pass: u32,
    /// The SDK's counter id.
    pub counter: u64,
    /// The counter's name, when the string table had it.
    pub name: Option<String>,
    pub value: CounterValue,
    /// Dimension instances summed into `value` (saturating at 255).
    pub instances: u8,
}

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
