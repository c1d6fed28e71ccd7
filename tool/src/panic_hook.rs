//! The tool's quiet panic hook: it remembers where a panic happened instead of printing the
//! default several lines; the callback boundary prints one line (`Tool::on_panic`).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, OnceLock};

/// Where the last panic happened (" at FILE:LINE: message").
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

/// Replaces the default panic hook. In the cdylib the hook belongs to the tool's own copy of
/// std, so the application's panics are untouched.
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        let loc = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        // try_lock: in a fork child a thread that no longer exists may hold it.
        if let Ok(mut g) = LAST_PANIC.try_lock() {
            *g = format!("{loc}: {msg}");
        }
    }));
}

/// Where the last panic happened, empty when unknown.
pub fn last_panic() -> String {
    LAST_PANIC.try_lock().map(|g| g.clone()).unwrap_or_default()
}

/// What a panic caught by [`catch_or`] does: set by the tool when it is installed (recording
/// stops, said once); before that, one line saying set-up failed.
static ON_CAUGHT: OnceLock<fn()> = OnceLock::new();

/// Sets what a panic caught by [`catch_or`] does (once; later calls change nothing).
pub fn set_on_caught(f: fn()) {
    let _ = ON_CAUGHT.set(f);
}

/// Runs `f`, turning a panic into [`set_on_caught`]'s action and `fallback`: the one panic
/// boundary, of every `extern "C"` entry point (`sdk::boundary::guard`) and of the rare paths
/// the hot path leaves through ([`catch`]).
#[inline(always)]
pub fn catch_or<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(e) => {
            caught(e);
            fallback
        }
    }
}

/// [`catch_or`] for the hot path's rare paths: each is an `extern "C"` function whose body
/// runs inside `catch`, so it cannot unwind (a panic that escaped would abort, never unwind
/// into C) and the callback that calls it needs no landing pad. Its own panic boundary then
/// costs nothing, and its calls become tail calls.
#[inline(always)]
pub fn catch(f: impl FnOnce()) {
    catch_or((), f)
}

#[cold]
#[inline(never)]
fn caught(payload: Box<dyn std::any::Any + Send>) {
    // A payload whose drop panics would abort here: dropped inside a second catch.
    let _ = catch_unwind(AssertUnwindSafe(|| drop(payload)));
    match ON_CAUGHT.get() {
        Some(f) => f(),
        None => crate::say("internal error (panic caught) during set-up; not recording"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CAUGHT: AtomicUsize = AtomicUsize::new(0);

    /// A rare path's panic stops inside it: `catch` returns, the action set runs once per
    /// panic, and a closure that does not panic runs whole with no action.
    #[test]
    fn catch_stops_a_panic_and_runs_the_action_set() {
        set_on_caught(|| {
            CAUGHT.fetch_add(1, Ordering::Relaxed);
        });
        let mut ran = false;
        catch(|| ran = true);
        assert!(ran);
        assert_eq!(CAUGHT.load(Ordering::Relaxed), 0);
        catch(|| panic!("a rare path panics"));
        assert_eq!(CAUGHT.load(Ordering::Relaxed), 1);
    }
}
