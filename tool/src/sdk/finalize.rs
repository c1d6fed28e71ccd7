//! Closing the file: at the SDK's finalize or the atexit safety net, flush and write the
//! trailer (bounded by the wait budget), then say what the file holds.

use crate::events::tool::{self, Tool};
use crate::{recorder, sys};
use krphase_format::Mode;
use krphase_format::trailer::flags;

/// SDK finalize or the atexit safety net (`reason`: trailer flags saying which).
pub fn finalize(reason: u64) {
    let Some(r) = recorder::peek() else { return };
    if r.pid != sys::getpid() {
        return; // not this process's recorder: the parent's file is not ours to close
    }
    if reason & flags::ATEXIT != 0
        && let Some(sdk) = tool::get().and_then(|t| t.sdk.as_ref())
        && matches!(sdk.is_finalized(), Some(Ok(krphase_ffi::InitState::NotYet)))
    {
        // The SDK finalizes after this handler (its own exit hook or destructor) and will call
        // the tool's finalize, possibly delivering completions first: only flush this thread.
        recorder::flush_current_thread();
        return;
    }
    let mut trailer_flags = reason;
    if tool::get().is_some_and(Tool::panicked) {
        trailer_flags |= flags::PANIC;
    }
    recorder::flush_current_thread();
    if let Some(done) = r.finish(trailer_flags) {
        let mode = tool::get().map_or(Mode::Drive, Tool::mode);
        // The file actually written (a second run into an existing path gets another name).
        crate::say(&super::written::line(r.file(), mode, &done));
    }
}
