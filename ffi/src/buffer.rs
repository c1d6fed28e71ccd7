//! Buffers and the callback threads that deliver them: `rocprofiler_buffer_id_t`,
//! `rocprofiler_callback_thread_t` and the buffer callback type.

use crate::types::{ContextId, RecordHeader};
use std::ffi::c_void;

/// `rocprofiler_buffer_id_t`; handle 0 names no buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct BufferId {
    pub handle: u64,
}

/// `rocprofiler_callback_thread_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CallbackThread {
    pub handle: u64,
}

/// `rocprofiler_buffer_policy_t`.
pub mod buffer_policy {
    pub const DISCARD: u32 = 1;
    pub const LOSSLESS: u32 = 2;
}

/// `rocprofiler_buffer_tracing_cb_t`: context, buffer, record headers, their count, user data,
/// drop count.
pub type BufferTracingFn = Option<
    unsafe extern "C" fn(ContextId, BufferId, *mut *mut RecordHeader, usize, *mut c_void, u64),
>;
