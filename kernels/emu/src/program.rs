//! The "HIP runtime" the workloads call: device allocations, queues, kernel launches through the
//! intercepted packet write, synchronization, and the loaded code object (kernel symbols and
//! module-scope variables).

use crate::agents::{self, CPU_AGENT, GPU_AGENT};
use crate::device::{self, AppCompletion, KernelBody, Queue};

/// One kernel of a batch or graph: name, grid size, body.
pub type Node<'a> = (&'a str, usize, KernelBody);
use crate::clock::thread_id;
use crate::memory::{self, MemKind, Region};
use crate::replay::{self, Launch};
use crate::sdk::{CallbackEvent, sdk};
use crate::symbols::{self, Symbol};
use krphase_ffi::{
    AgentId, CallbackPhase, CallbackTracingKind, CodeObjectLoadData, CodeObjectMemory,
    CodeObjectStorage, CorrelationId, KernelSymbolData, UserData, code_object_op,
    code_object_storage,
};
use krphase_kernels::KERNEL_SYMBOLS;
use parking_lot::Mutex;
use std::ffi::CString;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

/// Work-group size every launch reports (except `launch_shaped`'s).
pub const WORKGROUP: u32 = 256;

/// The loaded code object's module variables.
pub struct CodeObject {
    /// `__device__ unsigned long long saxpy_calls` (writable, in the snapshot).
    pub saxpy_calls: Arc<Region>,
    /// A `__hip_cuid_` marker (1 byte; skipped by the snapshot).
    pub cuid: Arc<Region>,
    /// A `__constant__` table (not writable; excluded).
    pub constants: Arc<Region>,
    /// A zero-size variable (excluded: size 0).
    pub empty: Arc<Region>,
    /// With `--sdk-build`: the markers of the application's other compilation units, so that
    /// `cuid` and these make `--cu-markers` in all (snapshotted unless skip-cu-markers).
    pub more_markers: Vec<Arc<Region>>,
}

/// Compilation-unit markers the loaded code objects carry (`--cu-markers`; 1 without
/// `--sdk-build`, the one marker the code object always had).
static CU_MARKERS: AtomicU32 = AtomicU32::new(1);

/// Sets how many `__hip_cuid_*` markers the code object is loaded with (before it loads).
pub fn set_cu_markers(n: u32) {
    CU_MARKERS.store(n.max(1), Ordering::SeqCst);
}

/// The markers beyond the first: 1-byte writable variables named as HIP names them.
fn more_markers() -> Vec<Arc<Region>> {
    (1..CU_MARKERS.load(Ordering::SeqCst))
        .map(|i| {
            let name: &'static str = Box::leak(
                format!(
                    "__hip_cuid_{:016x}",
                    0x6b72_7068_0000_0000u64 + u64::from(i)
                )
                .into_boxed_str(),
            );
            memory::module_variable(name, 1, GPU_AGENT, true)
        })
        .collect()
}

static CODE_OBJECT: OnceLock<CodeObject> = OnceLock::new();
/// Each kernel's name as the SDK reports it: its descriptor symbol in the code objects.
static SYMBOL_NAMES: LazyLock<Vec<CString>> = LazyLock::new(|| {
    KERNEL_SYMBOLS
        .iter()
        .map(|(_, symbol)| CString::new(*symbol).expect("no NUL"))
        .collect()
});

/// Where the loader placed the code objects: each source's at its own 64 KiB inside the one
/// loaded range the CODE_OBJECT record describes.
const LOAD_BASE: u64 = 0x10_0000;
const PER_SOURCE: u64 = 0x1_0000;

/// The kernel-symbol record of kernel `i` (of `KERNEL_NAMES`), as the SDK fills it from ROCr's
/// symbol info and the kernel descriptor (`code_object.cpp`): sizes from the descriptor,
/// kernarg alignment 16, registers decoded for the agent's GPU, `kernel_address` = descriptor +
/// entry offset.
fn symbol_record(i: usize, name: &CString) -> KernelSymbolData {
    let (source, k) = crate::code_objects::kernel(i);
    let d = &k.descriptor;
    let gpu = crate::agent_info::GPU_NAME;
    let kernel_object = LOAD_BASE + source as u64 * PER_SOURCE + k.address;
    KernelSymbolData {
        size: std::mem::size_of::<KernelSymbolData>() as u64,
        kernel_id: i as u64 + 1,
        code_object_id: CODE_OBJECT_ID,
        kernel_name: name.as_ptr(),
        kernel_object,
        kernarg_segment_size: d.kernarg_size,
        kernarg_segment_alignment: 16,
        group_segment_size: d.group_segment_fixed_size,
        private_segment_size: d.private_segment_fixed_size,
        sgpr_count: d.sgpr_count(gpu),
        arch_vgpr_count: d.arch_vgpr_count(gpu),
        accum_vgpr_count: d.accum_vgpr_count(gpu),
        kernel_code_entry_byte_offset: d.kernel_code_entry_byte_offset,
        kernel_address: kernel_object.wrapping_add_signed(d.kernel_code_entry_byte_offset),
    }
}

const CODE_OBJECT_ID: u64 = 1;

fn deliver_symbols(phase: CallbackPhase) {
    let kind = CallbackTracingKind::CODE_OBJECT.0;
    let op = code_object_op::DEVICE_KERNEL_SYMBOL_REGISTER;
    let subs = sdk().subscribers(kind, op);
    let tid = thread_id();
    for (i, name) in SYMBOL_NAMES.iter().enumerate() {
        let mut data = symbol_record(i, name);
        for s in &subs {
            let mut ud = UserData::default();
            let corr = CorrelationId::default();
            s.invoke(
                CallbackEvent {
                    thread_id: tid,
                    corr,
                    kind,
                    op,
                    phase,
                },
                (&mut data as *mut KernelSymbolData).cast(),
                &mut ud,
            );
        }
    }
}

/// Loads the code object: places its module variables and registers its kernel symbols.
pub fn load_code_object() -> &'static CodeObject {
    CODE_OBJECT.get_or_init(|| {
        let co = CodeObject {
            saxpy_calls: memory::module_variable(
                krphase_kernels::saxpy::COUNTER_SYMBOL,
                crate::code_objects::variable_size("saxpy", krphase_kernels::saxpy::COUNTER_SYMBOL)
                    .expect("saxpy's code object holds saxpy_calls"),
                GPU_AGENT,
                true,
            ),
            cuid: memory::module_variable("__hip_cuid_6b7270686173650a", 1, GPU_AGENT, true),
            constants: memory::module_variable("stream_constants", 64, GPU_AGENT, false),
            empty: memory::module_variable("stream_empty_tag", 0, GPU_AGENT, true),
            more_markers: more_markers(),
        };
        publish_symbols(&co);
        deliver_load(CallbackPhase::LOAD);
        deliver_symbols(CallbackPhase::LOAD);
        co
    })
}

/// The executable's symbol table: every kernel, each module variable, and a variable the
/// loader left unplaced (address 0; excluded like the zero-size one).
fn publish_symbols(co: &CodeObject) {
    let mut t: Vec<Symbol> = KERNEL_SYMBOLS
        .iter()
        .map(|(_, symbol)| Symbol::kernel(symbol, GPU_AGENT))
        .collect();
    for r in [&co.saxpy_calls, &co.cuid, &co.constants, &co.empty]
        .into_iter()
        .chain(&co.more_markers)
    {
        t.push(Symbol::variable(r));
    }
    t.push(Symbol {
        name: "stream_unplaced".into(),
        kind: krphase_ffi::hsa_symbol_kind::VARIABLE,
        agent: GPU_AGENT,
        address: 0,
        size: 16,
        is_const: false,
    });
    symbols::publish(t);
}

static CODE_OBJECT_URI: &std::ffi::CStr = c"memory://emulated#offset=0x100000&size=0x100000";

/// CODE_OBJECT LOAD (phase LOAD at load, UNLOAD at unload): carries both the rocprofiler agent
/// id and the `hsa_agent_t` the code object was loaded for.
fn deliver_load(phase: CallbackPhase) {
    let kind = CallbackTracingKind::CODE_OBJECT.0;
    let op = code_object_op::LOAD;
    let subs = sdk().subscribers(kind, op);
    let tid = thread_id();
    let mut data = CodeObjectLoadData {
        size: std::mem::size_of::<CodeObjectLoadData>() as u64,
        code_object_id: CODE_OBJECT_ID,
        agent_id: AgentId { handle: GPU_AGENT },
        hsa_agent: agents::hsa_agent(GPU_AGENT),
        uri: CODE_OBJECT_URI.as_ptr(),
        load_base: 0x10_0000,
        load_size: 0x10_0000,
        load_delta: 0,
        storage_type: code_object_storage::MEMORY,
        storage: CodeObjectStorage {
            memory: CodeObjectMemory {
                memory_base: 0x10_0000,
                memory_size: 0x10_0000,
            },
        },
    };
    for s in &subs {
        let mut ud = UserData::default();
        s.invoke(
            CallbackEvent {
                thread_id: tid,
                corr: CorrelationId::default(),
                kind,
                op,
                phase,
            },
            (&mut data as *mut CodeObjectLoadData).cast(),
            &mut ud,
        );
    }
}

/// Unregisters the kernel symbols, then unloads the code object (at finalization, before the
/// tools' finalize).
pub fn unload_code_object() {
    if CODE_OBJECT.get().is_some() {
        deliver_symbols(CallbackPhase::UNLOAD);
        deliver_load(CallbackPhase::UNLOAD);
    }
}

pub fn code_object() -> &'static CodeObject {
    load_code_object()
}

/// Every application completion, to check each fired exactly once.
static LEDGER: LazyLock<Mutex<Vec<Arc<AppCompletion>>>> = LazyLock::new(|| Mutex::new(Vec::new()));

pub fn malloc(words: usize) -> Arc<Region> {
    malloc_on(GPU_AGENT, words)
}

/// `hipMalloc` after `hipSetDevice`: coarse memory owned by `agent`.
pub fn malloc_on(agent: u64, words: usize) -> Arc<Region> {
    memory::allocate(words as u64 * 8, MemKind::Coarse, agent)
}

pub fn host_malloc(words: usize) -> Arc<Region> {
    memory::allocate(words as u64 * 8, MemKind::Fine, CPU_AGENT)
}

pub fn vmem_malloc(words: usize) -> Arc<Region> {
    memory::allocate(words as u64 * 8, MemKind::Vmem, GPU_AGENT)
}

pub fn free(r: &Arc<Region>) {
    memory::free(r);
}

pub fn create_stream() -> Arc<Queue> {
    create_stream_on(GPU_AGENT)
}

/// `hipStreamCreate` after `hipSetDevice`: a queue on `agent`.
pub fn create_stream_on(agent: u64) -> Arc<Queue> {
    device::create_queue(agent)
}

fn launch_of(kernel: &str, grid: usize, body: KernelBody) -> Launch {
    Launch {
        kernel_id: krphase_kernels::kernel_id(kernel).expect("known kernel"),
        grid: grid.min(u32::MAX as usize) as u32,
        workgroup: WORKGROUP,
        body,
    }
}

fn record(apps: Vec<Arc<AppCompletion>>) {
    LEDGER.lock().extend(apps);
}

/// `hipLaunchKernel`: one single-packet write.
pub fn launch(q: &Queue, kernel: &str, grid: usize, body: impl Fn() + Send + Sync + 'static) {
    record(replay::write_packets(
        q,
        vec![launch_of(kernel, grid, Arc::new(body))],
        false,
    ));
}

/// `kernel<<<grid / block, block>>>`: one single-packet write with an explicit work-group size
/// (`grid` counts work-items, as the dispatch packet does).
pub fn launch_shaped(
    q: &Queue,
    kernel: &str,
    grid: u32,
    block: u32,
    body: impl Fn() + Send + Sync + 'static,
) {
    let mut l = launch_of(kernel, grid as usize, Arc::new(body));
    l.workgroup = block;
    record(replay::write_packets(q, vec![l], false));
}

/// A multi-packet write: several dispatch packets in one interceptor call.
pub fn launch_batch(q: &Queue, launches: Vec<Node<'_>>) {
    let ls = launches
        .into_iter()
        .map(|(k, g, b)| launch_of(k, g, b))
        .collect();
    record(replay::write_packets(q, ls, false));
}

/// `hipGraphLaunch`: each node is written while a graph launch is in progress.
pub fn graph_launch(q: &Queue, nodes: Vec<Node<'_>>) {
    for (k, g, b) in nodes {
        record(replay::write_packets(q, vec![launch_of(k, g, b)], true));
    }
}

/// Checks that every logical dispatch completed exactly once; returns (dispatches, problem).
pub fn check_completions() -> (u64, Option<String>) {
    let ledger = LEDGER.lock();
    let bad = ledger.iter().find(|a| a.fired.load(Ordering::SeqCst) != 1);
    let problem = bad.map(|a| {
        format!(
            "dispatch {} completed {} times",
            a.dispatch_id.load(Ordering::SeqCst),
            a.fired.load(Ordering::SeqCst)
        )
    });
    (ledger.len() as u64, problem)
}

/// Waits for every queue (the device-wide synchronize).
pub fn device_synchronize() {
    for q in device::all_queues() {
        q.synchronize();
    }
}

/// A dispatch submitted from inside a tool callback (the emulator-only test hook
/// `krphase_emu_reentrant_launch`): one step kernel on a queue of the GPU agent.
pub fn reentrant_launch() {
    static TARGET: OnceLock<(Arc<Queue>, Arc<Region>)> = OnceLock::new();
    let (q, x) = TARGET.get_or_init(|| (create_stream(), malloc(1)));
    let x = x.clone();
    launch(q, "queue_depth_step", 1, move || {
        krphase_kernels::steps::add_step(&x.words, 1, 1)
    });
}
