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
};
pub use define::HEAD56_LIMIT;
pub use kinds::{Event, drop_class, kind};

#[cfg(test)]
mod tests;
