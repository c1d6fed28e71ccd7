//! Which replay-payload layout the SDK uses, detected at run time; the one owner of that state.
//!
//! SDK builds differ in where the pass fields of the KERNEL_REPLAY payload sit (Layout A or B,
//! `krphase_ffi::PayloadLayout`). Until a layout is confirmed the tool writes its pass-count and
//! continue callbacks into both candidate slots: the other layout's slots are pass fields the
//! SDK rewrites for every PASS, so a wrong write does no harm. At the first PASS the layout is
//! confirmed by where N (the returned pass count) sits; an indefinite loop (N = 0 in both
//! candidate slots) is confirmed at its second PASS by where the pass index sits. A layout set
//! by `KRPHASE_PAYLOAD_LAYOUT` is checked the same way, once. When neither matches, or the SDK
//! never calls the pass-count callback written for the confirmed layout, driving stops: later
//! dispatches run once.

use crate::recorder;
use crate::say;
use krphase_ffi::{PayloadLayout, ReplayPayload};
use krphase_format::event::Notice;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// What the tool knows about the payload layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutState {
    /// Not confirmed yet: both layouts' slots are written.
    Unknown,
    Known(PayloadLayout),
    /// Neither layout matched: driving stopped.
    Stopped,
}

impl LayoutState {
    fn to_u8(self) -> u8 {
        match self {
            LayoutState::Unknown => 0,
            LayoutState::Known(PayloadLayout::A) => 1,
            LayoutState::Known(PayloadLayout::B) => 2,
            LayoutState::Stopped => 3,
        }
    }

    fn from_u8(v: u8) -> LayoutState {
        match v {
            1 => LayoutState::Known(PayloadLayout::A),
            2 => LayoutState::Known(PayloadLayout::B),
            3 => LayoutState::Stopped,
            _ => LayoutState::Unknown,
        }
    }

    /// The layout as PASS records and the header store it: 0 unknown (or stopped), 1 A, 2 B.
    pub fn record_code(self) -> u8 {
        match self {
            LayoutState::Known(l) => layout_code(Some(l)),
            _ => 0,
        }
    }

    /// The layouts whose callback slots CONFIG ENTER writes.
    pub fn layouts_to_write(self) -> &'static [PayloadLayout] {
        match self {
            LayoutState::Known(PayloadLayout::A) => &[PayloadLayout::A],
            LayoutState::Known(PayloadLayout::B) => &[PayloadLayout::B],
            _ => &[PayloadLayout::A, PayloadLayout::B],
        }
    }
}

/// A layout as the header's `payload_layout` and PASS records store it: 0 none, 1 A, 2 B.
pub fn layout_code(l: Option<PayloadLayout>) -> u8 {
    match l {
        None => 0,
        Some(PayloadLayout::A) => 1,
        Some(PayloadLayout::B) => 2,
    }
}

/// The field a PASS confirms the layout by.
#[derive(Debug, Clone, Copy)]
pub enum ConfirmBy {
    /// `total_passes` holds N (a fixed loop, at its first PASS).
    TotalPasses,
    /// `current_pass` holds the pass index (an indefinite loop, from its second PASS).
    CurrentPass,
}

impl ConfirmBy {
    fn offset(self, l: PayloadLayout) -> usize {
        match self {
            ConfirmBy::TotalPasses => l.offsets().total_passes,
            ConfirmBy::CurrentPass => l.offsets().current_pass,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ConfirmBy::TotalPasses => "total_passes",
            ConfirmBy::CurrentPass => "current_pass",
        }
    }
}

/// The layout state, shared by every thread.
pub struct LayoutDetector {
    state: AtomicU8,
    /// The layout came from `KRPHASE_PAYLOAD_LAYOUT`.
    forced: bool,
    /// A PASS has settled the state (a forced layout is checked once, at the first PASS).
    checked: AtomicBool,
}

impl LayoutDetector {
    pub fn new(forced: Option<PayloadLayout>) -> LayoutDetector {
        let state = forced.map_or(LayoutState::Unknown, LayoutState::Known);
        LayoutDetector {
            state: AtomicU8::new(state.to_u8()),
            forced: forced.is_some(),
            checked: AtomicBool::new(false),
        }
    }

    #[inline]
    pub fn get(&self) -> LayoutState {
        LayoutState::from_u8(self.state.load(Ordering::Acquire))
    }

    /// Whether a PASS ENTER seen in `state` still has to confirm the layout.
    #[inline]
    pub fn needs_check(&self, state: LayoutState) -> bool {
        state == LayoutState::Unknown || (self.forced && !self.checked.load(Ordering::Relaxed))
    }

    /// Confirms the layout by where the field `by` holds `n`; returns the state now in force
    /// (another thread's answer when it settled first). Records the outcome as a notice.
    pub fn confirm(
        &self,
        p: &ReplayPayload<'_>,
        current: LayoutState,
        by: ConfirmBy,
        n: u64,
    ) -> LayoutState {
        let at_b = p.slot(by.offset(PayloadLayout::B));
        let at_a = p.slot(by.offset(PayloadLayout::A));
        let (a, b) = (
            LayoutState::Known(PayloadLayout::A),
            LayoutState::Known(PayloadLayout::B),
        );
        let found = match current {
            s if s == a && at_a == Some(n) => a,
            s if s == b && at_b == Some(n) => b,
            LayoutState::Known(_) => LayoutState::Stopped,
            _ if at_b == Some(n) && at_a != Some(n) => b,
            _ if at_a == Some(n) && at_b != Some(n) => a,
            _ => LayoutState::Stopped,
        };
        match self.state.compare_exchange(
            current.to_u8(),
            found.to_u8(),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                self.checked.store(true, Ordering::Relaxed);
                if found == LayoutState::Stopped {
                    say(&format!(
                        "replay payload layout not recognised ({}={n} at neither offset {} nor {}); driving stopped, later dispatches run once",
                        by.name(),
                        by.offset(PayloadLayout::B),
                        by.offset(PayloadLayout::A)
                    ));
                    recorder::notice(Notice::LayoutMismatch, at_b.unwrap_or(0), at_a.unwrap_or(0));
                } else {
                    recorder::notice(
                        Notice::LayoutConfirmed,
                        u64::from(found.record_code()),
                        u64::from(self.forced),
                    );
                }
                found
            }
            Err(now) => LayoutState::from_u8(now),
        }
    }

    /// The SDK closed a window without calling the pass-count callback written for the layout
    /// in force: it reads another slot, so driving stops.
    pub fn stop_uncalled(&self) {
        let l = self.get();
        if l != LayoutState::Stopped
            && self
                .state
                .compare_exchange(
                    l.to_u8(),
                    LayoutState::Stopped.to_u8(),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
        {
            say(&format!(
                "the SDK did not call the pass-count callback written for payload layout {}; driving stopped, later dispatches run once",
                match l {
                    LayoutState::Known(PayloadLayout::A) => "a",
                    LayoutState::Known(PayloadLayout::B) => "b",
                    _ => "a+b",
                }
            ));
            recorder::notice(Notice::LayoutMismatch, u64::from(l.to_u8()), 0);
        }
    }
}
