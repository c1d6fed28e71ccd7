//! What every record kind means. [`kinds`] is the one table of kinds; from it come the kind
//! numbers ([`kind`]), the typed [`Event`], the typed [`crate::Record`] constructors the writer
//! uses, the decoding readers use, and [`drop_class`]. [`codes`] holds the small coded values
//! records carry; [`own_time`] the encoding of a callback's own time in 16 bits.

#[macro_use]
mod define;
mod codes;
mod kinds;
pub mod own_time;

pub use codes::{
    CounterValue, Decision, DropClass, NameSpace, Notice, UNATTRIBUTED, alloc_class, attribution,
    module_vars_left_out,
};
pub use define::HEAD56_LIMIT;
pub use kinds::{Event, drop_class, kind};

/// Matches the events that carry a host time (`ts`), binding it as `$ts` for `$then`; any
/// other event gives `$else`.
macro_rules! match_host_time {
    ($ev:expr, $ts:ident => $then:expr, $else:expr) => {
        match $ev {
            Event::ConfigEnter { $ts, .. }
            | Event::PassCountEnter { $ts, .. }
            | Event::PassCountReturn { $ts, .. }
            | Event::ConfigExit { $ts, .. }
            | Event::PassEnter { $ts, .. }
            | Event::PassExit { $ts, .. }
            | Event::Continue { $ts, .. }
            | Event::EnqueueEnter { $ts, .. }
            | Event::EnqueueExit { $ts, .. }
            | Event::Notice { $ts, .. }
            | Event::ModuleVars { $ts, .. }
            | Event::CompleteHost { $ts, .. }
            | Event::CompleteAt { $ts, .. } => $then,
            _ => $else,
        }
    };
}

impl Event {
    /// The host time (`ts`) this event carries, if any: the field a TSC-clock file stores in
    /// ticks (GPU times, a CLOCK_PAIR's readings and a CONTINUE's own time are not it).
    pub fn host_time(&self) -> Option<u64> {
        match_host_time!(self, ts => Some(*ts), None)
    }

    /// [`Event::host_time`], to change it.
    pub fn host_time_mut(&mut self) -> Option<&mut u64> {
        match_host_time!(self, ts => Some(ts), None)
    }
}

#[cfg(test)]
mod tests;
