//! One accessor over the kernel-replay payload, whichever field order the SDK was built with.
//!
//! Layouts A and B both report `size == 184`; they differ only in whether the pass fields or the
//! callback fields sit at offsets 136..168. A third proposal drops the context toggles (168 B).
//! [`ReplayPayload`] reads and writes by a chosen [`PayloadLayout`] and honours the size guards:
//! nothing past `dispatch_info` without `size >= 168`, no toggle without `size >= 184`.

use crate::types::{
    CallbackTracingRecord, KernelDispatchInfo, KernelReplayDataA, KernelReplayDataB,
    REPLAY_PAYLOAD_FULL_SIZE, REPLAY_PAYLOAD_NO_TOGGLES_SIZE, ReplayContextFn, ReplayContinueFn,
    ReplayPassCountFn,
};
use std::marker::PhantomData;
use std::mem::offset_of;

/// Which field order a payload uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PayloadLayout {
    /// Older ROCm: callbacks at 136/144, pass fields at 152/160.
    A,
    /// Newest ROCm: pass fields at 136/144, callbacks at 152/160.
    B,
}

impl PayloadLayout {
    /// Byte offsets of the layout-dependent fields in this layout.
    pub const fn offsets(self) -> FieldOffsets {
        match self {
            PayloadLayout::A => FieldOffsets {
                current_pass: offset_of!(KernelReplayDataA, current_pass),
                total_passes: offset_of!(KernelReplayDataA, total_passes),
                pass_count: offset_of!(KernelReplayDataA, pass_count_cb),
                continue_cb: offset_of!(KernelReplayDataA, replay_continue_cb),
                start_context: offset_of!(KernelReplayDataA, replay_local_enable_context_cb),
                stop_context: offset_of!(KernelReplayDataA, replay_local_disable_context_cb),
            },
            PayloadLayout::B => FieldOffsets {
                current_pass: offset_of!(KernelReplayDataB, current_pass),
                total_passes: offset_of!(KernelReplayDataB, total_passes),
                pass_count: offset_of!(KernelReplayDataB, replay_pass_count),
                continue_cb: offset_of!(KernelReplayDataB, replay_continue),
                start_context: offset_of!(KernelReplayDataB, replay_start_context),
                stop_context: offset_of!(KernelReplayDataB, replay_stop_context),
            },
        }
    }

    /// The other known layout (for the dual writes of CONFIG ENTER).
    pub const fn other(self) -> PayloadLayout {
        match self {
            PayloadLayout::A => PayloadLayout::B,
            PayloadLayout::B => PayloadLayout::A,
        }
    }

    /// `"a"` or `"b"`, as `KRPHASE_PAYLOAD_LAYOUT` and the emulator spell it.
    pub fn name(self) -> &'static str {
        match self {
            PayloadLayout::A => "a",
            PayloadLayout::B => "b",
        }
    }

    /// Parses `a`/`b` (any case, surrounding spaces ignored).
    pub fn parse(s: &str) -> Option<PayloadLayout> {
        match s.trim().to_ascii_lowercase().as_str() {
            "a" => Some(PayloadLayout::A),
            "b" => Some(PayloadLayout::B),
            _ => None,
        }
    }
}

/// Byte offsets of the layout-dependent fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldOffsets {
    /// `current_pass` (u64, SDK-written at PASS).
    pub current_pass: usize,
    /// `total_passes` (u64, SDK-written at PASS; 0 for an indefinite loop).
    pub total_passes: usize,
    /// The tool's pass-count callback.
    pub pass_count: usize,
    /// The tool's (or, at PASS EXIT, the SDK's) continue callback.
    pub continue_cb: usize,
    /// The SDK's localized start-context toggle (PASS ENTER only).
    pub start_context: usize,
    /// The SDK's localized stop-context toggle (PASS ENTER only).
    pub stop_context: usize,
}

const DISPATCH_INFO_OFFSET: usize = offset_of!(KernelReplayDataB, dispatch_info);

/// A borrowed kernel-replay payload. Valid only for the duration of the callback that handed it
/// over, which the lifetime `'a` stands for: [`ReplayPayload::from_record`] ties it to the
/// callback's record, so the borrow cannot outlive the callback. Constructing one is the unsafe
/// step, every access after that is bounds-checked against the payload's own `size`.
#[derive(Debug)]
pub struct ReplayPayload<'a> {
    base: *mut u8,
    size: u64,
    _payload: PhantomData<&'a mut [u8]>,
}

impl<'a> ReplayPayload<'a> {
    /// Wraps the payload of a KERNEL_REPLAY callback record, borrowed for as long as the record
    /// is.
    ///
    /// # Safety
    /// As [`ReplayPayload::from_raw`] for `record.payload`, for as long as `record` is borrowed
    /// (the SDK's record lives for the callback).
    pub unsafe fn from_record(record: &'a CallbackTracingRecord) -> Option<ReplayPayload<'a>> {
        // SAFETY: the caller's guarantee, for the record's borrow.
        unsafe { Self::from_raw(record.payload) }
    }

    /// Wraps the payload pointer of a KERNEL_REPLAY callback record.
    ///
    /// # Safety
    /// `ptr` must be NULL or point to a live payload whose first 8 bytes are its `size`, with at
    /// least `size` readable and writable bytes, for all of `'a`.
    pub unsafe fn from_raw(ptr: *mut std::ffi::c_void) -> Option<ReplayPayload<'a>> {
        if ptr.is_null() {
            return None;
        }
        // SAFETY: the caller guarantees at least the leading u64 is readable; the SDK aligns
        // the payload to 8.
        let size = unsafe { (ptr as *const u64).read() };
        if size < (DISPATCH_INFO_OFFSET + size_of::<KernelDispatchInfo>()) as u64 {
            return None;
        }
        Some(ReplayPayload {
            base: ptr as *mut u8,
            size,
            _payload: PhantomData,
        })
    }

    /// The payload's own `size` field (184 for both full layouts, 168 without toggles).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether the pass and callback fields exist (`size >= 168`).
    pub fn has_pass_fields(&self) -> bool {
        self.size >= REPLAY_PAYLOAD_NO_TOGGLES_SIZE
    }

    /// Whether the context toggles exist (`size >= 184`).
    pub fn has_toggles(&self) -> bool {
        self.size >= REPLAY_PAYLOAD_FULL_SIZE
    }

    /// A copy of the dispatch info (same offset in every layout).
    pub fn dispatch_info(&self) -> KernelDispatchInfo {
        // SAFETY: from_raw checked that size covers dispatch_info; read_unaligned tolerates any
        // alignment.
        unsafe {
            (self.base.add(DISPATCH_INFO_OFFSET) as *const KernelDispatchInfo).read_unaligned()
        }
    }

    fn read_u64(&self, off: usize) -> Option<u64> {
        if (off + 8) as u64 > self.size {
            return None;
        }
        // SAFETY: off + 8 <= size, and size bytes are readable per from_raw's contract.
        Some(unsafe { (self.base.add(off) as *const u64).read_unaligned() })
    }

    fn write_u64(&mut self, off: usize, v: u64) -> bool {
        if (off + 8) as u64 > self.size {
            return false;
        }
        // SAFETY: off + 8 <= size, and size bytes are writable per from_raw's contract.
        unsafe { (self.base.add(off) as *mut u64).write_unaligned(v) };
        true
    }

    /// Raw 8-byte slot at `off`, for layout detection.
    pub fn slot(&self, off: usize) -> Option<u64> {
        self.read_u64(off)
    }

    /// `current_pass` read through `layout`; `None` when the payload is too short.
    pub fn current_pass(&self, layout: PayloadLayout) -> Option<u64> {
        self.read_u64(layout.offsets().current_pass)
    }

    /// `total_passes` read through `layout`; `None` when the payload is too short.
    pub fn total_passes(&self, layout: PayloadLayout) -> Option<u64> {
        self.read_u64(layout.offsets().total_passes)
    }

    /// Writes the pass-count callback (NULL for `None`) through `layout`; false when the
    /// payload is too short and nothing was written.
    pub fn set_pass_count(&mut self, layout: PayloadLayout, f: ReplayPassCountFn) -> bool {
        let v = f.map_or(0, |f| f as usize as u64);
        self.write_u64(layout.offsets().pass_count, v)
    }

    /// Writes the continue callback (NULL for `None`) through `layout`; false when the payload
    /// is too short and nothing was written.
    pub fn set_continue(&mut self, layout: PayloadLayout, f: ReplayContinueFn) -> bool {
        let v = f.map_or(0, |f| f as usize as u64);
        self.write_u64(layout.offsets().continue_cb, v)
    }

    /// The raw pass-count slot of `layout` (an address, or 0).
    pub fn pass_count_raw(&self, layout: PayloadLayout) -> Option<u64> {
        self.read_u64(layout.offsets().pass_count)
    }

    /// The raw continue slot of `layout` (an address, or 0).
    pub fn continue_raw(&self, layout: PayloadLayout) -> Option<u64> {
        self.read_u64(layout.offsets().continue_cb)
    }

    /// The SDK's start-context toggle; `None` when the payload has no toggles or it is NULL.
    pub fn start_context(&self, layout: PayloadLayout) -> ReplayContextFn {
        self.toggle(layout.offsets().start_context)
    }

    /// The SDK's stop-context toggle; `None` when the payload has no toggles or it is NULL.
    pub fn stop_context(&self, layout: PayloadLayout) -> ReplayContextFn {
        self.toggle(layout.offsets().stop_context)
    }

    fn toggle(&self, off: usize) -> ReplayContextFn {
        if !self.has_toggles() {
            return None;
        }
        let raw = self.read_u64(off)?;
        if raw == 0 {
            return None;
        }
        // SAFETY: a non-zero value in a toggle slot of a payload with toggles is the SDK's
        // function pointer of this signature (the caller chose the layout).
        Some(unsafe {
            std::mem::transmute::<usize, unsafe extern "C" fn(crate::ContextId) -> u32>(
                raw as usize,
            )
        })
    }
}
