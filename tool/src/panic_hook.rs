//! The tool's quiet panic hook: it remembers where a panic happened instead of printing the
//! default several lines; the callback boundary prints one line (`Tool::on_panic`).

use std::sync::Mutex;

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
