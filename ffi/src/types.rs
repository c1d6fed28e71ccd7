//! `#[repr(C)]` declarations of the rocprofiler-sdk ABI subset krphase uses.
//!
//! Written by hand from the layouts of rocprofiler-sdk's public C headers on x86-64 (LP64), not
//! copied from them. Every SDK enum is modelled as a `u32`/`i32` newtype because the SDK can hand
//! us values we do not know. Layout tests live in `tests/layout.rs`.

use std::ffi::{c_char, c_int, c_void};

/// `rocprofiler_client_id_t` (24 B). The SDK owns `size` and `handle`; the tool writes `name`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ClientId {
    pub size: usize,
    pub name: *const c_char,
    pub handle: u32,
}

/// `rocprofiler_client_finalize_t`: finalizes one client early. The id is passed by value.
pub type ClientFinalizeFn = Option<unsafe extern "C" fn(ClientId)>;
/// `rocprofiler_tool_initialize_t`. The SDK ignores the returned int.
pub type ToolInitializeFn = Option<unsafe extern "C" fn(ClientFinalizeFn, *mut c_void) -> c_int>;
/// `rocprofiler_tool_finalize_t`.
pub type ToolFinalizeFn = Option<unsafe extern "C" fn(*mut c_void)>;
/// `rocprofiler_configure_func_t`, the signature of the exported `rocprofiler_configure`.
pub type ConfigureFn = unsafe extern "C" fn(
    version: u32,
    runtime_version: *const c_char,
    priority: u32,
    client_id: *mut ClientId,
) -> *mut ToolConfigureResult;

/// `rocprofiler_tool_configure_result_t` (32 B). The SDK copies it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ToolConfigureResult {
    pub size: usize,
    pub initialize: ToolInitializeFn,
    pub finalize: ToolFinalizeFn,
    pub tool_data: *mut c_void,
}

/// `rocprofiler_version_triplet_t` (12 B).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct VersionTriplet {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl std::fmt::Display for VersionTriplet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// `rocprofiler_context_id_t`; handle 0 is `ROCPROFILER_CONTEXT_NONE`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ContextId {
    pub handle: u64,
}
pub const CONTEXT_NONE: ContextId = ContextId { handle: 0 };

/// `rocprofiler_agent_id_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AgentId {
    pub handle: u64,
}

/// `rocprofiler_queue_id_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct QueueId {
    pub handle: u64,
}

/// `hsa_agent_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HsaAgent {
    pub handle: u64,
}

/// `rocprofiler_user_data_t`: 8 bytes of per-event tool storage.
#[repr(C)]
#[derive(Clone, Copy)]
pub union UserData {
    pub value: u64,
    pub ptr: *mut c_void,
}

impl Default for UserData {
    fn default() -> Self {
        UserData { value: 0 }
    }
}

impl UserData {
    /// Reads the union as an integer; both members are 8 bytes, so this is always defined.
    pub fn as_u64(&self) -> u64 {
        // SAFETY: both union members are 8-byte plain data; any bit pattern is a valid u64.
        unsafe { self.value }
    }
}

impl std::fmt::Debug for UserData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserData({:#x})", self.as_u64())
    }
}

/// `rocprofiler_correlation_id_t` (24 B).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CorrelationId {
    pub internal: u64,
    pub external: UserData,
    pub ancestor: u64,
}

/// `rocprofiler_async_correlation_id_t` (16 B), used in buffer records.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct AsyncCorrelationId {
    pub internal: u64,
    pub external: UserData,
}

/// `rocprofiler_callback_tracing_kind_t`. Only the stable numbers are constants; the
/// KERNEL_REPLAY number differs between SDK builds and is looked up by name.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallbackTracingKind(pub u32);

impl CallbackTracingKind {
    pub const NONE: Self = Self(0);
    pub const CODE_OBJECT: Self = Self(10);
    pub const KERNEL_DISPATCH: Self = Self(12);
    pub const MEMORY_ALLOCATION: Self = Self(16);
}

/// `rocprofiler_tracing_operation_t`.
pub type TracingOperation = i32;

/// `rocprofiler_callback_phase_t`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CallbackPhase(pub u32);

impl CallbackPhase {
    pub const NONE: Self = Self(0);
    pub const ENTER: Self = Self(1);
    pub const EXIT: Self = Self(2);
    pub const LAST: Self = Self(3);
    /// Code-object aliases.
    pub const LOAD: Self = Self::ENTER;
    pub const UNLOAD: Self = Self::EXIT;
}

/// `rocprofiler_callback_tracing_record_t` (64 B), passed by value to tracing callbacks.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CallbackTracingRecord {
    pub context_id: ContextId,
    pub thread_id: u64,
    pub correlation_id: CorrelationId,
    pub kind: CallbackTracingKind,
    pub operation: TracingOperation,
    pub phase: CallbackPhase,
    pub payload: *mut c_void,
}

/// `rocprofiler_callback_tracing_cb_t`.
pub type CallbackTracingFn =
    Option<unsafe extern "C" fn(CallbackTracingRecord, *mut UserData, *mut c_void)>;
/// `rocprofiler_callback_tracing_kind_cb_t`: non-zero stops the walk.
pub type KindIterFn = Option<unsafe extern "C" fn(CallbackTracingKind, *mut c_void) -> c_int>;
/// `rocprofiler_callback_tracing_kind_operation_cb_t`: non-zero stops the walk.
pub type KindOperationIterFn =
    Option<unsafe extern "C" fn(CallbackTracingKind, TracingOperation, *mut c_void) -> c_int>;

/// Kernel-dispatch callback operations (stable).
pub mod kernel_dispatch_op {
    pub const NONE: i32 = 0;
    pub const ENQUEUE: i32 = 1;
    pub const COMPLETE: i32 = 2;
}

/// Memory-allocation callback operations (stable).
pub mod memory_allocation_op {
    pub const NONE: i32 = 0;
    pub const ALLOCATE: i32 = 1;
    pub const VMEM_ALLOCATE: i32 = 2;
    pub const FREE: i32 = 3;
    pub const VMEM_FREE: i32 = 4;
}

/// Code-object callback operations (stable).
pub mod code_object_op {
    pub const NONE: i32 = 0;
    pub const LOAD: i32 = 1;
    pub const DEVICE_KERNEL_SYMBOL_REGISTER: i32 = 2;
    pub const HOST_KERNEL_SYMBOL_REGISTER: i32 = 3;
}

/// `rocprofiler_dim3_t` (12 B).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `rocprofiler_kernel_dispatch_info_t` (128 B), passed by value to the replay callbacks.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelDispatchInfo {
    pub size: u64,
    pub agent_id: AgentId,
    pub queue_id: QueueId,
    pub kernel_id: u64,
    pub dispatch_id: u64,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub workgroup_size: Dim3,
    pub grid_size: Dim3,
    pub reserved_padding: [u8; 56],
}

/// The value the SDK stores in `KernelDispatchInfo::size`: the struct without its padding.
pub const KERNEL_DISPATCH_INFO_USED_SIZE: u64 = 72;

impl Default for KernelDispatchInfo {
    fn default() -> Self {
        KernelDispatchInfo {
            size: KERNEL_DISPATCH_INFO_USED_SIZE,
            agent_id: AgentId::default(),
            queue_id: QueueId::default(),
            kernel_id: 0,
            dispatch_id: 0,
            private_segment_size: 0,
            group_segment_size: 0,
            workgroup_size: Dim3::default(),
            grid_size: Dim3::default(),
            reserved_padding: [0; 56],
        }
    }
}

/// `rocprofiler_callback_tracing_kernel_dispatch_data_t` (152 B; newer SDKs append `pipe_id`,
/// so read past 152 only when `size > 152`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KernelDispatchData {
    pub size: u64,
    pub start_timestamp: u64,
    pub end_timestamp: u64,
    pub dispatch_info: KernelDispatchInfo,
}

/// The kernel-dispatch callback data of newer headers (160 B): [`KernelDispatchData`] with
/// `int32_t pipe_id` appended (set only with KFD signal-less completion). A reader checks
/// `size >= KERNEL_DISPATCH_DATA_PIPE_ID_SIZE` before reading `pipe_id`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KernelDispatchDataPipe {
    pub base: KernelDispatchData,
    pub pipe_id: i32,
}

/// `size` of the kernel-dispatch callback data without / with `pipe_id`.
pub const KERNEL_DISPATCH_DATA_SIZE: u64 = 152;
pub const KERNEL_DISPATCH_DATA_PIPE_ID_SIZE: u64 = 160;

/// `rocprofiler_callback_tracing_memory_allocation_data_t` (48 B).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryAllocationData {
    pub size: u64,
    pub start_timestamp: u64,
    pub end_timestamp: u64,
    pub agent_id: AgentId,
    pub address: u64,
    pub allocation_size: u64,
}

/// `rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t` (88 B).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelSymbolData {
    pub size: u64,
    pub kernel_id: u64,
    pub code_object_id: u64,
    pub kernel_name: *const c_char,
    pub kernel_object: u64,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_alignment: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    pub sgpr_count: u32,
    pub arch_vgpr_count: u32,
    pub accum_vgpr_count: u32,
    pub kernel_code_entry_byte_offset: i64,
    pub kernel_address: u64,
}

/// `storage_type` values of [`CodeObjectLoadData`].
pub mod code_object_storage {
    pub const NONE: u32 = 0;
    pub const FILE: u32 = 1;
    pub const MEMORY: u32 = 2;
}

/// In-memory code-object storage: base and size of the image.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeObjectMemory {
    pub memory_base: u64,
    pub memory_size: u64,
}

/// Where a code object came from: a file descriptor (`storage_type` FILE) or memory (MEMORY).
#[repr(C)]
#[derive(Clone, Copy)]
pub union CodeObjectStorage {
    pub storage_file: c_int,
    pub memory: CodeObjectMemory,
}

impl std::fmt::Debug for CodeObjectStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: both members are plain data and the union is 16 bytes; reading the wider one
        // is defined for any bit pattern.
        let m = unsafe { self.memory };
        write!(
            f,
            "CodeObjectStorage({:#x}, {:#x})",
            m.memory_base, m.memory_size
        )
    }
}

/// `rocprofiler_callback_tracing_code_object_load_data_t` (88 B), the CODE_OBJECT LOAD payload.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CodeObjectLoadData {
    pub size: u64,
    pub code_object_id: u64,
    /// Shares its slot with the deprecated `rocp_agent`.
    pub agent_id: AgentId,
    pub hsa_agent: HsaAgent,
    pub uri: *const c_char,
    pub load_base: u64,
    pub load_size: u64,
    pub load_delta: i64,
    pub storage_type: u32,
    pub storage: CodeObjectStorage,
}

/// `rocprofiler_record_header_t` (16 B): `category` and `kind` overlay the SDK's 64-bit `hash`
/// (`category | kind << 32` on little-endian x86-64).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RecordHeader {
    pub category: u32,
    pub kind: u32,
    pub payload: *mut c_void,
}

impl RecordHeader {
    /// The SDK's `hash` view of the first 8 bytes.
    pub fn hash(&self) -> u64 {
        u64::from(self.category) | (u64::from(self.kind) << 32)
    }
}

/// Buffer record category for tracing records.
pub const BUFFER_CATEGORY_TRACING: u32 = 1;

/// `rocprofiler_buffer_tracing_kind_t` numbers krphase may use (stable).
pub mod buffer_tracing_kind {
    pub const KERNEL_DISPATCH: u32 = 11;
    pub const MEMORY_ALLOCATION: u32 = 16;
}

/// `rocprofiler_buffer_tracing_kernel_dispatch_record_t` (184 B; newer headers append
/// `pipe_id`, see [`BufferKernelDispatchRecordPipe`]).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct BufferKernelDispatchRecord {
    pub size: u64,
    pub kind: u32,
    /// Always COMPLETE.
    pub operation: u32,
    pub correlation_id: AsyncCorrelationId,
    pub thread_id: u64,
    pub start_timestamp: u64,
    pub end_timestamp: u64,
    pub dispatch_info: KernelDispatchInfo,
}

/// The kernel-dispatch buffer record of newer headers (192 B): [`BufferKernelDispatchRecord`]
/// with `int32_t pipe_id` appended. Read `pipe_id` only when `size >= 192`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct BufferKernelDispatchRecordPipe {
    pub base: BufferKernelDispatchRecord,
    pub pipe_id: i32,
}

/// `size` of the kernel-dispatch buffer record without / with `pipe_id`.
pub const BUFFER_KERNEL_DISPATCH_RECORD_SIZE: u64 = 184;
pub const BUFFER_KERNEL_DISPATCH_RECORD_PIPE_ID_SIZE: u64 = 192;

/// Replay callback: how many passes to run. NULL means "do not replay this dispatch".
pub type ReplayPassCountFn = Option<unsafe extern "C" fn(KernelDispatchInfo, UserData) -> u64>;
/// Replay callback: non-zero continues the loop after `current_pass`.
pub type ReplayContinueFn =
    Option<unsafe extern "C" fn(KernelDispatchInfo, u64, u64, UserData) -> c_int>;
/// SDK-provided toggle, legal only during PASS ENTER.
pub type ReplayContextFn = Option<unsafe extern "C" fn(ContextId) -> u32>;

/// Kernel replay payload, Layout B (newest ROCm; 184 B). Pass fields first, then callbacks.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelReplayDataB {
    pub size: u64,
    pub dispatch_info: KernelDispatchInfo,
    pub current_pass: u64,
    pub total_passes: u64,
    pub replay_pass_count: ReplayPassCountFn,
    pub replay_continue: ReplayContinueFn,
    pub replay_start_context: ReplayContextFn,
    pub replay_stop_context: ReplayContextFn,
}

/// Kernel replay payload, Layout A (older ROCm): callbacks first, then pass fields. The header
/// that introduced it appends `reserved_padding[64]` (sizeof 248) while the `size` field reports
/// 184; nothing past 184 is ever read or written, so this is the 184-byte prefix every Layout A
/// build shares (see [`LAYOUT_A_PADDED_SIZEOF`]).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelReplayDataA {
    pub size: u64,
    pub dispatch_info: KernelDispatchInfo,
    pub pass_count_cb: ReplayPassCountFn,
    pub replay_continue_cb: ReplayContinueFn,
    pub current_pass: u64,
    pub total_passes: u64,
    pub replay_local_enable_context_cb: ReplayContextFn,
    pub replay_local_disable_context_cb: ReplayContextFn,
}

/// `sizeof` of Layout A in the header that carries `reserved_padding[64]`.
pub const LAYOUT_A_PADDED_SIZEOF: usize = 248;
/// The `size` both full layouts report.
pub const REPLAY_PAYLOAD_FULL_SIZE: u64 = 184;
/// The proposed layout without the context toggles (Layout B's first six fields).
pub const REPLAY_PAYLOAD_NO_TOGGLES_SIZE: u64 = 168;

/// `hsa_amd_pointer_info_t` (56 B). The caller sets `size`; read only members inside the
/// returned `size`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HsaAmdPointerInfo {
    pub size: u32,
    pub type_: u32,
    pub agent_base_address: *mut c_void,
    pub host_base_address: *mut c_void,
    pub size_in_bytes: usize,
    pub user_data: *mut c_void,
    pub agent_owner: HsaAgent,
    pub global_flags: u32,
    pub registered: bool,
}

impl Default for HsaAmdPointerInfo {
    fn default() -> Self {
        HsaAmdPointerInfo {
            size: std::mem::size_of::<Self>() as u32,
            type_: 0,
            agent_base_address: std::ptr::null_mut(),
            host_base_address: std::ptr::null_mut(),
            size_in_bytes: 0,
            user_data: std::ptr::null_mut(),
            agent_owner: HsaAgent::default(),
            global_flags: 0,
            registered: false,
        }
    }
}

/// `hsa_amd_pointer_type_t` values.
pub mod hsa_pointer_type {
    pub const UNKNOWN: u32 = 0;
    pub const HSA: u32 = 1;
    pub const LOCKED: u32 = 2;
    pub const GRAPHICS: u32 = 3;
    pub const IPC: u32 = 4;
    pub const RESERVED_ADDR: u32 = 5;
    pub const HSA_VMEM: u32 = 6;
}

/// `hsa_region_global_flag_t` bits as carried in `HsaAmdPointerInfo::global_flags`.
pub mod hsa_global_flag {
    pub const KERNARG: u32 = 1;
    pub const FINE_GRAINED: u32 = 2;
    pub const COARSE_GRAINED: u32 = 4;
    pub const EXTENDED_SCOPE_FINE_GRAINED: u32 = 8;
}

/// `hsa_status_t` success.
pub const HSA_STATUS_SUCCESS: u32 = 0;

/// `hsa_amd_pointer_info` signature.
pub type HsaAmdPointerInfoFn = unsafe extern "C" fn(
    ptr: *const c_void,
    info: *mut HsaAmdPointerInfo,
    alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    num_agents_accessible: *mut u32,
    accessible: *mut *mut HsaAgent,
) -> u32;

/// `HSA_STATUS_INFO_BREAK`: an iteration callback's "stop here", not an error.
pub const HSA_STATUS_INFO_BREAK: u32 = 0x1;

/// `hsa_executable_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HsaExecutable {
    pub handle: u64,
}

/// `hsa_executable_symbol_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HsaExecutableSymbol {
    pub handle: u64,
}

/// `hsa_executable_symbol_info_t` values krphase asks for (hsa.h).
pub mod hsa_symbol_info {
    /// `hsa_symbol_kind_t` (4 bytes).
    pub const TYPE: u32 = 0;
    /// `uint32_t`, without a terminating NUL.
    pub const NAME_LENGTH: u32 = 1;
    /// `NAME_LENGTH` chars, not NUL-terminated.
    pub const NAME: u32 = 2;
    /// `uint32_t`.
    pub const VARIABLE_SIZE: u32 = 9;
    /// `bool` (1 byte).
    pub const VARIABLE_IS_CONST: u32 = 10;
    /// `hsa_agent_t` (agent symbols only).
    pub const AGENT: u32 = 20;
    /// `uint64_t`.
    pub const VARIABLE_ADDRESS: u32 = 21;
}

/// `hsa_symbol_kind_t` values.
pub mod hsa_symbol_kind {
    pub const VARIABLE: u32 = 0;
    pub const KERNEL: u32 = 1;
    pub const INDIRECT_FUNCTION: u32 = 2;
}

/// Callback of `hsa_ven_amd_loader_iterate_executables`.
pub type HsaExecutableIterFn =
    Option<unsafe extern "C" fn(executable: HsaExecutable, data: *mut c_void) -> u32>;

/// `hsa_ven_amd_loader_iterate_executables(callback, data)`: a member of the loader's 1.03
/// extension table ([`crate::hsa_loader::HsaVenAmdLoader1_03`]), never an export.
pub type HsaIterateExecutablesFn =
    unsafe extern "C" fn(callback: HsaExecutableIterFn, data: *mut c_void) -> u32;

/// Callback of `hsa_executable_iterate_agent_symbols`.
pub type HsaAgentSymbolIterFn = Option<
    unsafe extern "C" fn(
        executable: HsaExecutable,
        agent: HsaAgent,
        symbol: HsaExecutableSymbol,
        data: *mut c_void,
    ) -> u32,
>;

/// `hsa_executable_iterate_agent_symbols(executable, agent, callback, data)`.
pub type HsaIterateAgentSymbolsFn = unsafe extern "C" fn(
    executable: HsaExecutable,
    agent: HsaAgent,
    callback: HsaAgentSymbolIterFn,
    data: *mut c_void,
) -> u32;

/// Callback of `hsa_executable_iterate_symbols`.
pub type HsaSymbolIterFn = Option<
    unsafe extern "C" fn(
        executable: HsaExecutable,
        symbol: HsaExecutableSymbol,
        data: *mut c_void,
    ) -> u32,
>;

/// `hsa_executable_iterate_symbols(executable, callback, data)` (program and agent symbols).
pub type HsaIterateSymbolsFn = unsafe extern "C" fn(
    executable: HsaExecutable,
    callback: HsaSymbolIterFn,
    data: *mut c_void,
) -> u32;

/// `hsa_executable_symbol_get_info(symbol, attribute, value)`.
pub type HsaSymbolGetInfoFn =
    unsafe extern "C" fn(symbol: HsaExecutableSymbol, attribute: u32, value: *mut c_void) -> u32;
