//! Size, alignment and every field offset of each `#[repr(C)]` type, exactly as rocprofiler-sdk's
//! public headers lay them out on x86-64; both kernel-replay payload layouts; and the behaviour of
//! the `ReplayPayload` accessor over raw bytes.

use krphase_ffi::*;
use std::ffi::c_void;
use std::mem::{align_of, offset_of, size_of};

/// Asserts size, alignment and the offset of every listed field of a type.
macro_rules! layout {
    ($t:ty, size $size:expr, align $align:expr $(, $field:ident @ $off:expr)* $(,)?) => {{
        assert_eq!(size_of::<$t>(), $size, "size of {}", stringify!($t));
        assert_eq!(align_of::<$t>(), $align, "align of {}", stringify!($t));
        $(assert_eq!(offset_of!($t, $field), $off, "{}.{}", stringify!($t), stringify!($field));)*
    }};
}

#[test]
fn registration_types() {
    layout!(ClientId, size 24, align 8, size @ 0, name @ 8, handle @ 16);
    layout!(ToolConfigureResult, size 32, align 8,
        size @ 0, initialize @ 8, finalize @ 16, tool_data @ 24);
    layout!(VersionTriplet, size 12, align 4, major @ 0, minor @ 4, patch @ 8);
    // Nullable function pointers are one pointer wide.
    assert_eq!(size_of::<ToolInitializeFn>(), 8);
    assert_eq!(size_of::<ToolFinalizeFn>(), 8);
    assert_eq!(size_of::<ClientFinalizeFn>(), 8);
}

#[test]
fn basic_types() {
    layout!(ContextId, size 8, align 8, handle @ 0);
    layout!(AgentId, size 8, align 8, handle @ 0);
    layout!(QueueId, size 8, align 8, handle @ 0);
    layout!(HsaAgent, size 8, align 8, handle @ 0);
    layout!(UserData, size 8, align 8, value @ 0, ptr @ 0);
    layout!(CorrelationId, size 24, align 8, internal @ 0, external @ 8, ancestor @ 16);
    layout!(AsyncCorrelationId, size 16, align 8, internal @ 0, external @ 8);
    layout!(CallbackTracingKind, size 4, align 4);
    layout!(CallbackPhase, size 4, align 4);
    assert_eq!(size_of::<TracingOperation>(), 4);
    layout!(Dim3, size 12, align 4, x @ 0, y @ 4, z @ 8);
    assert_eq!(CONTEXT_NONE.handle, 0);
}

#[test]
fn enum_values() {
    assert_eq!(CallbackPhase::NONE.0, 0);
    assert_eq!(CallbackPhase::ENTER.0, 1);
    assert_eq!(CallbackPhase::EXIT.0, 2);
    assert_eq!(CallbackPhase::LAST.0, 3);
    assert_eq!(CallbackPhase::LOAD, CallbackPhase::ENTER);
    assert_eq!(CallbackPhase::UNLOAD, CallbackPhase::EXIT);
    assert_eq!(CallbackTracingKind::CODE_OBJECT.0, 10);
    assert_eq!(CallbackTracingKind::KERNEL_DISPATCH.0, 12);
    assert_eq!(CallbackTracingKind::MEMORY_ALLOCATION.0, 16);
    assert_eq!(
        (kernel_dispatch_op::ENQUEUE, kernel_dispatch_op::COMPLETE),
        (1, 2)
    );
    assert_eq!(
        [
            memory_allocation_op::NONE,
            memory_allocation_op::ALLOCATE,
            memory_allocation_op::VMEM_ALLOCATE,
            memory_allocation_op::FREE,
            memory_allocation_op::VMEM_FREE
        ],
        [0, 1, 2, 3, 4]
    );
    assert_eq!(
        [
            code_object_op::LOAD,
            code_object_op::DEVICE_KERNEL_SYMBOL_REGISTER,
            code_object_op::HOST_KERNEL_SYMBOL_REGISTER
        ],
        [1, 2, 3]
    );
    assert_eq!(buffer_tracing_kind::KERNEL_DISPATCH, 11);
    assert_eq!(buffer_tracing_kind::MEMORY_ALLOCATION, 16);
    assert_eq!(BUFFER_CATEGORY_TRACING, 1);
    assert_eq!(
        (hsa_global_flag::KERNARG, hsa_global_flag::FINE_GRAINED),
        (1, 2)
    );
    assert_eq!(
        (
            hsa_global_flag::COARSE_GRAINED,
            hsa_global_flag::EXTENDED_SCOPE_FINE_GRAINED
        ),
        (4, 8)
    );
    assert_eq!(
        (
            hsa_pointer_type::UNKNOWN,
            hsa_pointer_type::HSA,
            hsa_pointer_type::HSA_VMEM
        ),
        (0, 1, 6)
    );
}

#[test]
fn callback_tracing_record() {
    layout!(CallbackTracingRecord, size 64, align 8,
        context_id @ 0, thread_id @ 8, correlation_id @ 16, kind @ 40, operation @ 44,
        phase @ 48, payload @ 56);
}

#[test]
fn dispatch_types() {
    layout!(KernelDispatchInfo, size 128, align 8,
        size @ 0, agent_id @ 8, queue_id @ 16, kernel_id @ 24, dispatch_id @ 32,
        private_segment_size @ 40, group_segment_size @ 44, workgroup_size @ 48,
        grid_size @ 60, reserved_padding @ 72);
    assert_eq!(KERNEL_DISPATCH_INFO_USED_SIZE, 72);
    assert_eq!(KernelDispatchInfo::default().size, 72);
    layout!(KernelDispatchData, size 152, align 8,
        size @ 0, start_timestamp @ 8, end_timestamp @ 16, dispatch_info @ 24);
    layout!(RecordHeader, size 16, align 8, category @ 0, kind @ 4, payload @ 8);
    let h = RecordHeader {
        category: 1,
        kind: 11,
        payload: std::ptr::null_mut(),
    };
    assert_eq!(h.hash(), 1 | (11 << 32));
    layout!(BufferKernelDispatchRecord, size 184, align 8,
        size @ 0, kind @ 8, operation @ 12, correlation_id @ 16, thread_id @ 32,
        start_timestamp @ 40, end_timestamp @ 48, dispatch_info @ 56);
    // Newer headers append `int32_t pipe_id` to both records.
    layout!(KernelDispatchDataPipe, size 160, align 8, base @ 0, pipe_id @ 152);
    layout!(BufferKernelDispatchRecordPipe, size 192, align 8, base @ 0, pipe_id @ 184);
    assert_eq!(
        (KERNEL_DISPATCH_DATA_SIZE, KERNEL_DISPATCH_DATA_PIPE_ID_SIZE),
        (152, 160)
    );
    assert_eq!(
        (
            BUFFER_KERNEL_DISPATCH_RECORD_SIZE,
            BUFFER_KERNEL_DISPATCH_RECORD_PIPE_ID_SIZE
        ),
        (184, 192)
    );
}

#[test]
fn dispatch_counting_types() {
    layout!(CounterId, size 8, align 8, handle @ 0);
    layout!(CounterConfigId, size 8, align 8, handle @ 0);
    assert_eq!(size_of::<ProfileConfigId>(), 8);
    assert_eq!(size_of::<CounterInstanceId>(), 8);
    layout!(CounterInfoVersion, size 4, align 4);
    assert_eq!(
        (
            CounterInfoVersion::NONE.0,
            CounterInfoVersion::V0.0,
            CounterInfoVersion::V1.0
        ),
        (0, 1, 2)
    );
    // Five 8-byte fields, then one byte of bit fields, padded to 8.
    layout!(CounterInfoV0, size 48, align 8,
        id @ 0, name @ 8, description @ 16, block @ 24, expression @ 32, flags @ 40);
    assert_eq!(
        (
            counter_info_flag::IS_CONSTANT,
            counter_info_flag::IS_DERIVED
        ),
        (1, 2)
    );
    layout!(CounterRecord, size 40, align 8,
        id @ 0, counter_value @ 8, dispatch_id @ 16, user_data @ 24, agent_id @ 32);
    assert_eq!(size_of::<RecordCounter>(), 40);
    layout!(DispatchCountingServiceData, size 168, align 8,
        size @ 0, correlation_id @ 8, start_timestamp @ 24, end_timestamp @ 32,
        dispatch_info @ 40);
    assert_eq!(size_of::<DispatchCountingServiceFn>(), 8);
    assert_eq!(size_of::<DispatchCountingRecordFn>(), 8);
    assert_eq!(size_of::<AvailableCountersFn>(), 8);
}

#[test]
fn memory_and_code_object_payloads() {
    layout!(MemoryAllocationData, size 48, align 8,
        size @ 0, start_timestamp @ 8, end_timestamp @ 16, agent_id @ 24, address @ 32,
        allocation_size @ 40);
    layout!(CodeObjectLoadData, size 88, align 8,
        size @ 0, code_object_id @ 8, agent_id @ 16, hsa_agent @ 24, uri @ 32, load_base @ 40,
        load_size @ 48, load_delta @ 56, storage_type @ 64, storage @ 72);
    layout!(CodeObjectStorage, size 16, align 8, storage_file @ 0, memory @ 0);
    layout!(CodeObjectMemory, size 16, align 8, memory_base @ 0, memory_size @ 8);
    assert_eq!(
        (
            code_object_storage::NONE,
            code_object_storage::FILE,
            code_object_storage::MEMORY
        ),
        (0, 1, 2)
    );
    layout!(KernelSymbolData, size 88, align 8,
        size @ 0, kernel_id @ 8, code_object_id @ 16, kernel_name @ 24, kernel_object @ 32,
        kernarg_segment_size @ 40, kernarg_segment_alignment @ 44, group_segment_size @ 48,
        private_segment_size @ 52, sgpr_count @ 56, arch_vgpr_count @ 60,
        accum_vgpr_count @ 64, kernel_code_entry_byte_offset @ 72, kernel_address @ 80);
}

#[test]
fn hsa_executable_types() {
    layout!(HsaExecutable, size 8, align 8, handle @ 0);
    layout!(HsaExecutableSymbol, size 8, align 8, handle @ 0);
    layout!(HsaAgent, size 8, align 8, handle @ 0);
    assert_eq!((HSA_STATUS_SUCCESS, HSA_STATUS_INFO_BREAK), (0, 1));
    assert_eq!(
        (
            hsa_symbol_info::TYPE,
            hsa_symbol_info::NAME_LENGTH,
            hsa_symbol_info::NAME
        ),
        (0, 1, 2)
    );
    assert_eq!(
        (
            hsa_symbol_info::VARIABLE_SIZE,
            hsa_symbol_info::VARIABLE_IS_CONST,
            hsa_symbol_info::AGENT,
            hsa_symbol_info::VARIABLE_ADDRESS
        ),
        (9, 10, 20, 21)
    );
    assert_eq!(
        (
            hsa_symbol_kind::VARIABLE,
            hsa_symbol_kind::KERNEL,
            hsa_symbol_kind::INDIRECT_FUNCTION
        ),
        (0, 1, 2)
    );
    // Callbacks and functions are one (nullable) pointer wide.
    assert_eq!(size_of::<HsaExecutableIterFn>(), 8);
    assert_eq!(size_of::<HsaAgentSymbolIterFn>(), 8);
    assert_eq!(size_of::<HsaSymbolIterFn>(), 8);
    assert_eq!(size_of::<Option<HsaIterateExecutablesFn>>(), 8);
    assert_eq!(size_of::<Option<HsaIterateAgentSymbolsFn>>(), 8);
    assert_eq!(size_of::<Option<HsaIterateSymbolsFn>>(), 8);
    assert_eq!(size_of::<Option<HsaSymbolGetInfoFn>>(), 8);
}

#[test]
fn hsa_pointer_info() {
    layout!(HsaAmdPointerInfo, size 56, align 8,
        size @ 0, type_ @ 4, agent_base_address @ 8, host_base_address @ 16,
        size_in_bytes @ 24, user_data @ 32, agent_owner @ 40, global_flags @ 48,
        registered @ 52);
    assert_eq!(
        HsaAmdPointerInfo::default().size,
        56,
        "caller sets size to sizeof"
    );
}

#[test]
fn replay_payload_layout_b() {
    layout!(KernelReplayDataB, size 184, align 8,
        size @ 0, dispatch_info @ 8, current_pass @ 136, total_passes @ 144,
        replay_pass_count @ 152, replay_continue @ 160, replay_start_context @ 168,
        replay_stop_context @ 176);
}

#[test]
fn replay_payload_layout_a() {
    // The 184-byte prefix; the padded header's sizeof is 248 with `size` reporting 184.
    layout!(KernelReplayDataA, size 184, align 8,
        size @ 0, dispatch_info @ 8, pass_count_cb @ 136, replay_continue_cb @ 144,
        current_pass @ 152, total_passes @ 160, replay_local_enable_context_cb @ 168,
        replay_local_disable_context_cb @ 176);
    assert_eq!(LAYOUT_A_PADDED_SIZEOF, 248);
    assert_eq!(REPLAY_PAYLOAD_FULL_SIZE, 184);
    assert_eq!(REPLAY_PAYLOAD_NO_TOGGLES_SIZE, 168);
    for t in [
        size_of::<ReplayPassCountFn>(),
        size_of::<ReplayContinueFn>(),
        size_of::<ReplayContextFn>(),
    ] {
        assert_eq!(t, 8);
    }
}

#[test]
fn payload_offset_table() {
    assert_eq!(
        PayloadLayout::A.offsets(),
        FieldOffsets {
            current_pass: 152,
            total_passes: 160,
            pass_count: 136,
            continue_cb: 144,
            start_context: 168,
            stop_context: 176
        }
    );
    assert_eq!(
        PayloadLayout::B.offsets(),
        FieldOffsets {
            current_pass: 136,
            total_passes: 144,
            pass_count: 152,
            continue_cb: 160,
            start_context: 168,
            stop_context: 176
        }
    );
    assert_eq!(PayloadLayout::A.other(), PayloadLayout::B);
    assert_eq!(PayloadLayout::B.other(), PayloadLayout::A);
    assert_eq!(PayloadLayout::parse(" A "), Some(PayloadLayout::A));
    assert_eq!(PayloadLayout::parse("b"), Some(PayloadLayout::B));
    assert_eq!(PayloadLayout::parse("c"), None);
    assert_eq!(
        (PayloadLayout::A.name(), PayloadLayout::B.name()),
        ("a", "b")
    );
}

// ---- ReplayPayload over raw bytes ----

/// A 248-byte, 8-aligned buffer (room for Layout A's padding) with `size` in its first slot.
fn buffer(size: u64) -> [u64; 31] {
    let mut b = [0u64; 31];
    b[0] = size;
    b
}

fn slot(b: &[u64; 31], off: usize) -> u64 {
    b[off / 8]
}

fn payload(b: &mut [u64; 31]) -> Option<ReplayPayload<'_>> {
    // SAFETY: `b` holds 248 writable bytes, at least `size` of them, and outlives the accessor.
    unsafe { ReplayPayload::from_raw(b.as_mut_ptr().cast::<c_void>()) }
}

unsafe extern "C" fn pass_count_fn(_: KernelDispatchInfo, _: UserData) -> u64 {
    3
}
unsafe extern "C" fn continue_fn(_: KernelDispatchInfo, _: u64, _: u64, _: UserData) -> i32 {
    1
}
unsafe extern "C" fn toggle_fn(ctx: ContextId) -> u32 {
    (ctx.handle as u32) + 100
}

#[test]
fn too_short_or_null_payload_is_refused() {
    // SAFETY: NULL is explicitly allowed.
    assert!(unsafe { ReplayPayload::from_raw(std::ptr::null_mut()) }.is_none());
    for size in [0, 8, 100, 135] {
        assert!(
            payload(&mut buffer(size)).is_none(),
            "size {size} must be refused"
        );
    }
    // Exactly dispatch_info: accepted, but no pass or callback fields are reachable.
    let mut b = buffer(136);
    let mut p = payload(&mut b).unwrap();
    assert!(!p.has_pass_fields() && !p.has_toggles());
    for layout in [PayloadLayout::A, PayloadLayout::B] {
        assert_eq!(p.current_pass(layout), None);
        assert_eq!(p.total_passes(layout), None);
        assert!(!p.set_pass_count(layout, Some(pass_count_fn)));
    }
    assert!(b[17..].iter().all(|&w| w == 0), "nothing written past size");
}

#[test]
fn payload_of_168_bytes_has_no_toggles() {
    let mut b = buffer(168);
    b[168 / 8] = toggle_fn as *const () as usize as u64; // beyond `size`: must not be used
    b[176 / 8] = toggle_fn as *const () as usize as u64;
    let mut p = payload(&mut b).unwrap();
    assert!(p.has_pass_fields());
    assert!(!p.has_toggles());
    assert!(p.start_context(PayloadLayout::B).is_none());
    assert!(p.stop_context(PayloadLayout::B).is_none());
    assert!(p.set_pass_count(PayloadLayout::B, Some(pass_count_fn)));
    assert!(p.set_continue(PayloadLayout::B, Some(continue_fn)));
    assert_eq!(slot(&b, 152), pass_count_fn as *const () as usize as u64);
    assert_eq!(slot(&b, 160), continue_fn as *const () as usize as u64);
}

#[test]
fn writes_land_at_layout_offsets() {
    let pc = pass_count_fn as *const () as usize as u64;
    let cont = continue_fn as *const () as usize as u64;
    for (layout, pc_off, cont_off) in [(PayloadLayout::A, 136, 144), (PayloadLayout::B, 152, 160)] {
        let mut b = buffer(184);
        let mut p = payload(&mut b).unwrap();
        assert!(p.set_pass_count(layout, Some(pass_count_fn)));
        assert!(p.set_continue(layout, Some(continue_fn)));
        assert_eq!(p.pass_count_raw(layout), Some(pc));
        assert_eq!(p.continue_raw(layout), Some(cont));
        for off in (8..248).step_by(8) {
            let want = if off == pc_off {
                pc
            } else if off == cont_off {
                cont
            } else {
                0
            };
            assert_eq!(slot(&b, off), want, "{layout:?} slot {off}");
        }
        // Clearing writes NULL.
        let mut p = payload(&mut b).unwrap();
        assert!(p.set_pass_count(layout, None));
        assert_eq!(slot(&b, pc_off), 0);
    }
}

#[test]
fn reads_come_from_layout_offsets() {
    let mut b = buffer(184);
    b[136 / 8] = 1; // B current_pass / A pass_count_cb
    b[144 / 8] = 4; // B total_passes / A replay_continue_cb
    b[152 / 8] = 2; // A current_pass
    b[160 / 8] = 5; // A total_passes
    b[168 / 8] = toggle_fn as *const () as usize as u64;
    b[32 / 8 + 1] = 0xd15; // dispatch_info.dispatch_id at 8 + 32
    let p = payload(&mut b).unwrap();
    assert_eq!(p.size(), 184);
    assert!(p.has_toggles());
    assert_eq!(
        (
            p.current_pass(PayloadLayout::B),
            p.total_passes(PayloadLayout::B)
        ),
        (Some(1), Some(4))
    );
    assert_eq!(
        (
            p.current_pass(PayloadLayout::A),
            p.total_passes(PayloadLayout::A)
        ),
        (Some(2), Some(5))
    );
    assert_eq!(p.slot(144), Some(4));
    assert_eq!(
        p.slot(184),
        None,
        "nothing past size, even inside Layout A's padding"
    );
    assert_eq!(p.dispatch_info().dispatch_id, 0xd15);
    let start = p.start_context(PayloadLayout::B).expect("toggle present");
    // SAFETY: the slot holds `toggle_fn`, which has this signature.
    assert_eq!(unsafe { start(ContextId { handle: 7 }) }, 107);
    assert!(
        p.stop_context(PayloadLayout::A).is_none(),
        "NULL toggle reads as None"
    );
}

#[test]
fn hsa_loader_extension_table() {
    use krphase_ffi::hsa_loader::{HsaCodeObjectReader, HsaLoadedCodeObject, LOADER_TABLE_SIZES};
    layout!(HsaVenAmdLoader1_03, size 56, align 8,
        query_host_address @ 0, query_segment_descriptors @ 8, query_executable @ 16,
        executable_iterate_loaded_code_objects @ 24, loaded_code_object_get_info @ 32,
        code_object_reader_create_from_file_with_offset_size @ 40, iterate_executables @ 48);
    assert_eq!(LOADER_TABLE_SIZES, [(0, 24), (1, 40), (2, 48), (3, 56)]);
    layout!(HsaLoadedCodeObject, size 8, align 8, handle @ 0);
    layout!(HsaCodeObjectReader, size 8, align 8, handle @ 0);
}
