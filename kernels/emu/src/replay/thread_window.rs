//! Which agent's window the calling thread is inside (0: none), and whether a dispatch was
//! submitted from inside it (reentrancy). A window may open inside another agent's window on
//! the same thread, so opening one saves the outer state and closing it puts that back.

use std::cell::Cell;

thread_local! {
    static IN_WINDOW: Cell<u64> = const { Cell::new(0) };
    /// Set when a dispatch was submitted from inside this thread's window (reentrancy).
    static REENTRANCY_SEEN: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside a window on `agent` (it then holds that agent's writer lock).
pub(super) fn in_window_on(agent: u64) -> bool {
    IN_WINDOW.with(|c| c.get()) == agent
}

/// The state of the window this thread was in before it opened its current one.
pub(super) struct OuterWindow {
    agent: u64,
    reentrancy_seen: bool,
}

/// Marks this thread as inside a window on `agent`; returns the outer state for [`leave`].
pub(super) fn enter(agent: u64) -> OuterWindow {
    OuterWindow {
        agent: IN_WINDOW.with(|c| c.replace(agent)),
        reentrancy_seen: REENTRANCY_SEEN.with(|c| c.replace(false)),
    }
}

/// Puts back the state [`enter`] saved.
pub(super) fn leave(outer: OuterWindow) {
    IN_WINDOW.with(|c| c.set(outer.agent));
    REENTRANCY_SEEN.with(|c| c.set(outer.reentrancy_seen));
}

/// Records that a dispatch was submitted from inside this thread's window.
pub(super) fn mark_reentrancy() {
    REENTRANCY_SEEN.with(|c| c.set(true));
}

/// Whether a reentrant dispatch was seen in this thread's window; clears the mark.
pub(super) fn take_reentrancy() -> bool {
    REENTRANCY_SEEN.with(|c| c.replace(false))
}
