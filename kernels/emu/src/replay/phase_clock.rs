//! Measured intervals and the clock that cuts a window into phases: each phase boundary is one
//! clock reading, shared by the end of the phase before and the start of the phase after, so
//! the phases of a window tile it without gaps.

use crate::clock::now_ns;

/// A measured interval, CLOCK_BOOTTIME ns.
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub(super) start: u64,
    pub(super) end: u64,
}

/// The last phase boundary of a window (or of a step timed on its own).
pub(super) struct PhaseClock {
    last: u64,
}

impl PhaseClock {
    /// A clock whose current phase started at `boundary`.
    pub(super) fn at(boundary: u64) -> PhaseClock {
        PhaseClock { last: boundary }
    }

    /// A clock whose current phase starts now (one clock reading).
    pub(super) fn starting_now() -> PhaseClock {
        PhaseClock::at(now_ns())
    }

    /// Reads the clock once: the current phase ends here and the next one starts here.
    pub(super) fn close(&mut self) -> Span {
        let end = now_ns();
        let span = Span {
            start: self.last,
            end,
        };
        self.last = end;
        span
    }
}
