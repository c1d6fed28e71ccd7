//! The SDK's kind and operation numbers the tool uses, found by name at configure time, and
//! the kind → route table the tracing callback dispatches on.

use krphase_ffi::{CallbackTracingKind, TracingOperation};

/// Operation numbers found by name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ops {
    pub replay_kind: Option<CallbackTracingKind>,
    pub config: Option<TracingOperation>,
    pub pass: Option<TracingOperation>,
    pub dispatch_kind: CallbackTracingKind,
    pub alloc_kind: CallbackTracingKind,
    pub code_object_kind: CallbackTracingKind,
}

/// What the tracing callback does with a record of a given kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Ignore,
    Replay,
    Dispatch,
    Alloc,
    CodeObject,
}

/// Kind number → [`Route`], filled once from the numbers found by name, so the callback
/// dispatches with one indexed load instead of a chain of compares.
#[derive(Debug, Clone, Copy)]
pub struct Routes([Route; Routes::LEN]);

impl Routes {
    const LEN: usize = 64;

    pub fn new(ops: &Ops) -> Routes {
        let mut t = [Route::Ignore; Routes::LEN];
        let mut set = |k: CallbackTracingKind, r: Route| {
            if let Some(e) = t.get_mut(k.0 as usize) {
                *e = r;
            }
        };
        set(ops.code_object_kind, Route::CodeObject);
        set(ops.alloc_kind, Route::Alloc);
        set(ops.dispatch_kind, Route::Dispatch);
        if let Some(k) = ops.replay_kind {
            set(k, Route::Replay);
        }
        Routes(t)
    }

    #[inline(always)]
    pub fn get(&self, kind: CallbackTracingKind) -> Route {
        self.0
            .get(kind.0 as usize)
            .copied()
            .unwrap_or(Route::Ignore)
    }
}
