//! The SDK's kind and operation numbers the tool uses, found by name at configure time: each
//! kind is routed to a callback of its own when tracing is set up.

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
