//! The SDK's functions, resolved at run time from the running process.
//!
//! The tool never links against ROCm: by the time `rocprofiler_configure` runs the SDK is
//! already loaded (it is the caller), so [`Sdk::load`] only looks it up, in this order:
//!
//! 1. the global scope (`dlopen(NULL)`): the SDK was LD_PRELOADed or `dlopen`ed with
//!    `RTLD_GLOBAL` by rocprofiler-register, or the emulator executable exports the symbols;
//! 2. `librocprofiler-sdk.so.1`, opened with `RTLD_NOLOAD` (found only if already loaded);
//! 3. the path in `$ROCPROFILER_REGISTER_LIBRARY`, also with `RTLD_NOLOAD`.
//!
//! Every step uses `RTLD_NOLOAD` or the global scope, so this never loads a second copy of the
//! SDK: two copies keep separate state and the tool would talk to the wrong one.
//!
//! The symbols are listed once, in the `sdk_symbols!` table below.

use crate::agent::{AGENT_INFO_VERSION_0, AgentSummary, AgentV0, AvailableAgentsFn};
use crate::counting::{
    AvailableCountersFn, CounterConfigId, CounterId, CounterInfoV0, CounterInfoVersion,
    CounterInstanceId, DispatchCountingRecordFn, DispatchCountingServiceFn, counter_info_flag,
};
use crate::executables::{HsaSymbolFns, WalkUnavailable};
use crate::hsa_loader::{HsaSystemGetMajorExtensionTableFn, LoaderMissing, loader_table};
use crate::status::Status;
use crate::types::{
    AgentId, CONTEXT_NONE, CallbackTracingFn, CallbackTracingKind, ContextId, HsaAmdPointerInfoFn,
    HsaIterateAgentSymbolsFn, HsaIterateSymbolsFn, HsaSymbolGetInfoFn, KindIterFn,
    KindOperationIterFn, TracingOperation, VersionTriplet,
};
use libloading::os::unix::Library;
use std::ffi::{CStr, OsStr, c_char, c_int, c_void};
use std::fmt;

/// The soname the SDK is installed under (`SOVERSION` = major version 1).
pub const SDK_SONAME: &str = "librocprofiler-sdk.so.1";
/// The variable the newest SDK fills with its own absolute path.
pub const REGISTER_LIBRARY_ENV: &str = "ROCPROFILER_REGISTER_LIBRARY";

/// Where the symbols were found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// The process's global scope (`dlopen(NULL)`).
    GlobalScope,
    /// The already-loaded `librocprofiler-sdk.so.1`.
    Soname,
    /// The already-loaded library named by `$ROCPROFILER_REGISTER_LIBRARY`.
    RegisterLibrary(String),
    /// A library handed to [`Sdk::from_library`].
    Library,
}

impl fmt::Display for SdkSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SdkSource::GlobalScope => f.write_str("global scope"),
            SdkSource::Soname => write!(f, "{SDK_SONAME} (already loaded)"),
            SdkSource::RegisterLibrary(p) => write!(f, "{REGISTER_LIBRARY_ENV}={p}"),
            SdkSource::Library => f.write_str("given library"),
        }
    }
}

/// Why the SDK's functions could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// Every required symbol missing from the most complete source tried (all of them when no
    /// SDK is loaded).
    MissingSymbols(Vec<&'static str>),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::MissingSymbols(names) => write!(
                f,
                "rocprofiler-sdk not usable in this process: missing required symbol(s): {}",
                names.join(", ")
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// Whether a table entry must be present, and where an optional one may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Part of the SDK; loading fails without it.
    Required,
    /// Part of the SDK; absent in some versions.
    Optional,
    /// Exported by another runtime (ROCr); looked up in the SDK's source, then the global scope.
    OptionalAnywhere,
}

/// Declares the symbol table once and derives from it: the resolved-pointer struct, the
/// `SYMBOLS` list and the resolver.
macro_rules! sdk_symbols {
    (
        required { $($rf:ident = $rname:literal : $rty:ty,)* }
        optional { $($of:ident = $oname:literal : $oty:ty => $oneed:expr,)* }
    ) => {
        /// Every symbol krphase resolves, with whether it is required. The one list.
        pub const SYMBOLS: &[(&str, Need)] = &[
            $(($rname, Need::Required),)*
            $(($oname, $oneed),)*
        ];

        struct Fns {
            $($rf: $rty,)*
            $($of: Option<$oty>,)*
        }

        impl Fns {
            /// Resolves every symbol through `lookup` (and `fallback` for
            /// [`Need::OptionalAnywhere`] entries).
            ///
            /// # Safety
            /// Each non-null address `lookup`/`fallback` return for a name must be a function
            /// of the C signature this table gives that name.
            unsafe fn resolve(
                lookup: &dyn Fn(&str) -> Option<usize>,
                fallback: &dyn Fn(&str) -> Option<usize>,
            ) -> Result<Fns, LoadError> {
                let mut missing: Vec<&'static str> = Vec::new();
                $(let $rf = lookup($rname);
                  if $rf.is_none() { missing.push($rname); })*
                if !missing.is_empty() {
                    return Err(LoadError::MissingSymbols(missing));
                }
                Ok(Fns {
                    // SAFETY: the caller vouches that the address is a function of this type;
                    // `missing` was empty, so every required address is Some and non-null.
                    $($rf: unsafe { std::mem::transmute::<usize, $rty>($rf.unwrap_or_default()) },)*
                    $($of: {
                        let addr = lookup($oname).or_else(|| {
                            if $oneed == Need::OptionalAnywhere { fallback($oname) } else { None }
                        });
                        // SAFETY: as above; a non-null address of the named C function.
                        addr.map(|a| unsafe { std::mem::transmute::<usize, $oty>(a) })
                    },)*
                })
            }
        }
    };
}

type Raw = u32; // rocprofiler_status_t

sdk_symbols! {
    required {
        get_version_triplet = "rocprofiler_get_version_triplet":
            unsafe extern "C" fn(*mut VersionTriplet) -> Raw,
        create_context = "rocprofiler_create_context":
            unsafe extern "C" fn(*mut ContextId) -> Raw,
        start_context = "rocprofiler_start_context": unsafe extern "C" fn(ContextId) -> Raw,
        stop_context = "rocprofiler_stop_context": unsafe extern "C" fn(ContextId) -> Raw,
        configure_callback_tracing = "rocprofiler_configure_callback_tracing_service":
            unsafe extern "C" fn(
                ContextId, CallbackTracingKind, *const TracingOperation, usize,
                CallbackTracingFn, *mut c_void,
            ) -> Raw,
        query_kind_name = "rocprofiler_query_callback_tracing_kind_name":
            unsafe extern "C" fn(CallbackTracingKind, *mut *const c_char, *mut u64) -> Raw,
        query_operation_name = "rocprofiler_query_callback_tracing_kind_operation_name":
            unsafe extern "C" fn(
                CallbackTracingKind, TracingOperation, *mut *const c_char, *mut u64,
            ) -> Raw,
        iterate_kinds = "rocprofiler_iterate_callback_tracing_kinds":
            unsafe extern "C" fn(KindIterFn, *mut c_void) -> Raw,
        iterate_operations = "rocprofiler_iterate_callback_tracing_kind_operations":
            unsafe extern "C" fn(CallbackTracingKind, KindOperationIterFn, *mut c_void) -> Raw,
        get_timestamp = "rocprofiler_get_timestamp": unsafe extern "C" fn(*mut u64) -> Raw,
    }
    optional {
        get_version = "rocprofiler_get_version":
            unsafe extern "C" fn(*mut u32, *mut u32, *mut u32) -> Raw => Need::Optional,
        get_thread_id = "rocprofiler_get_thread_id":
            unsafe extern "C" fn(*mut u64) -> Raw => Need::Optional,
        get_status_name = "rocprofiler_get_status_name":
            unsafe extern "C" fn(Raw) -> *const c_char => Need::Optional,
        get_status_string = "rocprofiler_get_status_string":
            unsafe extern "C" fn(Raw) -> *const c_char => Need::Optional,
        context_is_active = "rocprofiler_context_is_active":
            unsafe extern "C" fn(ContextId, *mut c_int) -> Raw => Need::Optional,
        is_initialized = "rocprofiler_is_initialized":
            unsafe extern "C" fn(*mut c_int) -> Raw => Need::Optional,
        is_finalized = "rocprofiler_is_finalized":
            unsafe extern "C" fn(*mut c_int) -> Raw => Need::Optional,
        configure_callback_dispatch_counting =
            "rocprofiler_configure_callback_dispatch_counting_service":
            unsafe extern "C" fn(
                ContextId, DispatchCountingServiceFn, *mut c_void,
                DispatchCountingRecordFn, *mut c_void,
            ) -> Raw => Need::Optional,
        iterate_agent_supported_counters = "rocprofiler_iterate_agent_supported_counters":
            unsafe extern "C" fn(AgentId, AvailableCountersFn, *mut c_void) -> Raw
            => Need::Optional,
        query_counter_info = "rocprofiler_query_counter_info":
            unsafe extern "C" fn(CounterId, CounterInfoVersion, *mut c_void) -> Raw
            => Need::Optional,
        query_record_counter_id = "rocprofiler_query_record_counter_id":
            unsafe extern "C" fn(CounterInstanceId, *mut CounterId) -> Raw => Need::Optional,
        create_counter_config = "rocprofiler_create_counter_config":
            unsafe extern "C" fn(AgentId, *mut CounterId, usize, *mut CounterConfigId) -> Raw
            => Need::Optional,
        create_profile_config = "rocprofiler_create_profile_config":
            unsafe extern "C" fn(AgentId, *mut CounterId, usize, *mut CounterConfigId) -> Raw
            => Need::Optional,
        destroy_counter_config = "rocprofiler_destroy_counter_config":
            unsafe extern "C" fn(CounterConfigId) -> Raw => Need::Optional,
        destroy_profile_config = "rocprofiler_destroy_profile_config":
            unsafe extern "C" fn(CounterConfigId) -> Raw => Need::Optional,
        query_available_agents = "rocprofiler_query_available_agents":
            unsafe extern "C" fn(u32, AvailableAgentsFn, usize, *mut c_void) -> Raw
            => Need::Optional,
        hsa_amd_pointer_info = "hsa_amd_pointer_info": HsaAmdPointerInfoFn
            => Need::OptionalAnywhere,
        hsa_get_major_extension_table = "hsa_system_get_major_extension_table":
            HsaSystemGetMajorExtensionTableFn => Need::OptionalAnywhere,
        hsa_iterate_agent_symbols = "hsa_executable_iterate_agent_symbols":
            HsaIterateAgentSymbolsFn => Need::OptionalAnywhere,
        hsa_iterate_symbols = "hsa_executable_iterate_symbols":
            HsaIterateSymbolsFn => Need::OptionalAnywhere,
        hsa_symbol_get_info = "hsa_executable_symbol_get_info":
            HsaSymbolGetInfoFn => Need::OptionalAnywhere,
    }
}

/// The names of the required symbols, in table order.
pub fn required_symbols() -> Vec<&'static str> {
    SYMBOLS
        .iter()
        .filter(|(_, n)| *n == Need::Required)
        .map(|(s, _)| *s)
        .collect()
}

/// A counter's version-0 info, copied out of the SDK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterInfo {
    pub id: CounterId,
    pub name: String,
    pub description: String,
    pub block: String,
    pub expression: String,
    pub is_constant: bool,
    pub is_derived: bool,
}

/// Initialization state reported by `rocprofiler_is_initialized` / `_is_finalized`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitState {
    /// 0: not yet.
    NotYet,
    /// -1: in progress (the configuration window, or finalization running).
    InProgress,
    /// 1: done.
    Done,
}

impl InitState {
    fn from_raw(v: c_int) -> InitState {
        match v {
            0 => InitState::NotYet,
            1 => InitState::Done,
            _ => InitState::InProgress,
        }
    }
}

/// The SDK's functions, resolved once. `Send + Sync`: only function pointers and the handle
/// that keeps their library mapped.
pub struct Sdk {
    fns: Fns,
    source: SdkSource,
    _lib: Library,
}

impl fmt::Debug for Sdk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sdk").field("source", &self.source).finish()
    }
}

fn symbol_address(lib: &Library, name: &str) -> Option<usize> {
    // SAFETY: we only take the address; the pointer is typed by the table before any call.
    let sym = unsafe { lib.get::<*mut c_void>(name) }.ok()?;
    let addr = sym.into_raw() as usize;
    (addr != 0).then_some(addr)
}

fn open_noload(name: &OsStr) -> Option<Library> {
    // SAFETY: RTLD_NOLOAD never maps a new image, so no initialisers run; we only get a new
    // reference to a library that is already loaded.
    unsafe { Library::open(Some(name), libc::RTLD_NOLOAD | libc::RTLD_LAZY) }.ok()
}

impl Sdk {
    /// Finds the already-loaded SDK (global scope, then `librocprofiler-sdk.so.1`, then
    /// `$ROCPROFILER_REGISTER_LIBRARY`). Never loads a library.
    pub fn load() -> Result<Sdk, LoadError> {
        let env = std::env::var_os(REGISTER_LIBRARY_ENV);
        Self::load_with_register_library(env.as_deref())
    }

    /// [`Sdk::load`] with the value of `$ROCPROFILER_REGISTER_LIBRARY` given explicitly (an
    /// empty value counts as unset).
    pub fn load_with_register_library(register_library: Option<&OsStr>) -> Result<Sdk, LoadError> {
        let mut candidates: Vec<(Library, SdkSource)> =
            vec![(Library::this(), SdkSource::GlobalScope)];
        if let Some(lib) = open_noload(OsStr::new(SDK_SONAME)) {
            candidates.push((lib, SdkSource::Soname));
        }
        if let Some(path) = register_library.filter(|p| !p.is_empty())
            && let Some(lib) = open_noload(path)
        {
            let shown = path.to_string_lossy().into_owned();
            candidates.push((lib, SdkSource::RegisterLibrary(shown)));
        }
        let mut best: Option<Vec<&'static str>> = None;
        for (lib, source) in candidates {
            match Self::from_source(lib, source) {
                Ok(sdk) => return Ok(sdk),
                Err(LoadError::MissingSymbols(m)) => {
                    if best.as_ref().is_none_or(|b| m.len() < b.len()) {
                        best = Some(m);
                    }
                }
            }
        }
        Err(LoadError::MissingSymbols(
            best.unwrap_or_else(required_symbols),
        ))
    }

    /// Resolves the table from a library the caller opened (tests, or a tool that knows the
    /// SDK's path). The library must be a rocprofiler-sdk (or a faithful stand-in): its
    /// symbols are called with the signatures of rocprofiler-sdk's public headers.
    pub fn from_library(lib: libloading::Library) -> Result<Sdk, LoadError> {
        Self::from_source(lib.into(), SdkSource::Library)
    }

    fn from_source(lib: Library, source: SdkSource) -> Result<Sdk, LoadError> {
        let lookup = |name: &str| symbol_address(&lib, name);
        let fallback = |name: &str| symbol_address(&Library::this(), name);
        // SAFETY: the symbol names are the SDK's (and ROCr's) exported C functions, whose
        // signatures the table states as rocprofiler-sdk's and ROCr's public headers declare them.
        let fns = unsafe { Fns::resolve(&lookup, &fallback) }?;
        Ok(Sdk {
            fns,
            source,
            _lib: lib,
        })
    }

    /// Where the symbols came from.
    pub fn source(&self) -> &SdkSource {
        &self.source
    }

    /// `rocprofiler_get_version_triplet`.
    pub fn version(&self) -> Result<VersionTriplet, Status> {
        let mut v = VersionTriplet::default();
        // SAFETY: valid out-pointer to a 12-byte triplet.
        Status::check(unsafe { (self.fns.get_version_triplet)(&mut v) })?;
        Ok(v)
    }

    /// `rocprofiler_get_version` (optional symbol); `None` when absent.
    pub fn version_legacy(&self) -> Option<Result<VersionTriplet, Status>> {
        let f = self.fns.get_version?;
        let mut v = VersionTriplet::default();
        // SAFETY: three valid u32 out-pointers.
        let raw = unsafe { f(&mut v.major, &mut v.minor, &mut v.patch) };
        Some(Status::check(raw).map(|_| v))
    }

    /// `rocprofiler_create_context`: the id is zeroed first, as the SDK requires.
    pub fn create_context(&self) -> Result<ContextId, Status> {
        let mut id = CONTEXT_NONE;
        // SAFETY: valid out-pointer to a zeroed context id.
        Status::check(unsafe { (self.fns.create_context)(&mut id) })?;
        Ok(id)
    }

    /// `rocprofiler_start_context`: callbacks reach only started contexts.
    pub fn start_context(&self, ctx: ContextId) -> Result<(), Status> {
        // SAFETY: plain value argument.
        Status::check(unsafe { (self.fns.start_context)(ctx) })
    }

    /// `rocprofiler_stop_context` (SUCCESS once the SDK is finalized).
    pub fn stop_context(&self, ctx: ContextId) -> Result<(), Status> {
        // SAFETY: plain value argument.
        Status::check(unsafe { (self.fns.stop_context)(ctx) })
    }

    /// `rocprofiler_context_is_active` (optional symbol).
    pub fn context_is_active(&self, ctx: ContextId) -> Option<Result<bool, Status>> {
        let f = self.fns.context_is_active?;
        let mut active: c_int = 0;
        // SAFETY: valid out-pointer.
        let raw = unsafe { f(ctx, &mut active) };
        Some(Status::check(raw).map(|_| active != 0))
    }

    /// `rocprofiler_is_initialized` (optional symbol).
    pub fn is_initialized(&self) -> Option<Result<InitState, Status>> {
        let f = self.fns.is_initialized?;
        let mut s: c_int = 0;
        // SAFETY: valid out-pointer.
        let raw = unsafe { f(&mut s) };
        Some(Status::check(raw).map(|_| InitState::from_raw(s)))
    }

    /// `rocprofiler_is_finalized` (optional symbol).
    pub fn is_finalized(&self) -> Option<Result<InitState, Status>> {
        let f = self.fns.is_finalized?;
        let mut s: c_int = 0;
        // SAFETY: valid out-pointer.
        let raw = unsafe { f(&mut s) };
        Some(Status::check(raw).map(|_| InitState::from_raw(s)))
    }

    /// `rocprofiler_configure_callback_tracing_service`. An empty `operations` subscribes to
    /// every operation of the kind (NULL, 0). `callback` is later called by the SDK with `data`.
    // `data` is opaque here and to the SDK; only `callback` (an `unsafe fn` the caller wrote)
    // dereferences it, so the obligation sits with that callback, not with this call.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn configure_callback_tracing(
        &self,
        ctx: ContextId,
        kind: CallbackTracingKind,
        operations: &[TracingOperation],
        callback: CallbackTracingFn,
        data: *mut c_void,
    ) -> Result<(), Status> {
        let ops = if operations.is_empty() {
            std::ptr::null()
        } else {
            operations.as_ptr()
        };
        // SAFETY: `ops` is NULL or points to `operations.len()` i32s that outlive the call (the
        // SDK copies them); callback and data are passed through untouched.
        Status::check(unsafe {
            (self.fns.configure_callback_tracing)(ctx, kind, ops, operations.len(), callback, data)
        })
    }

    /// Every callback-tracing kind the SDK iterates, with its name (kinds whose name query
    /// fails are left out).
    pub fn kinds(&self) -> Result<Vec<(CallbackTracingKind, String)>, Status> {
        let mut raw: Vec<CallbackTracingKind> = Vec::new();
        // SAFETY: the trampoline matches the kind callback type and `data` is `&mut raw`, which
        // lives across the synchronous walk.
        Status::check(unsafe {
            (self.fns.iterate_kinds)(Some(push_kind), (&mut raw as *mut Vec<_>).cast())
        })?;
        Ok(raw
            .into_iter()
            .filter_map(|k| self.kind_name(k).ok().map(|n| (k, n)))
            .collect())
    }

    /// `rocprofiler_query_callback_tracing_kind_name`.
    pub fn kind_name(&self, kind: CallbackTracingKind) -> Result<String, Status> {
        let (mut name, mut len): (*const c_char, u64) = (std::ptr::null(), 0);
        // SAFETY: valid out-pointers.
        Status::check(unsafe { (self.fns.query_kind_name)(kind, &mut name, &mut len) })?;
        // SAFETY: on success the SDK hands back a static string of `len` bytes (or NUL-ended).
        Ok(unsafe { sdk_string(name, len) })
    }

    /// Every operation of `kind` the SDK iterates, with its name (operations whose name query
    /// fails are left out).
    pub fn operations(
        &self,
        kind: CallbackTracingKind,
    ) -> Result<Vec<(TracingOperation, String)>, Status> {
        let mut raw: Vec<TracingOperation> = Vec::new();
        // SAFETY: as in `kinds`: matching trampoline, `data` is `&mut raw` for the walk.
        Status::check(unsafe {
            (self.fns.iterate_operations)(
                kind,
                Some(push_operation),
                (&mut raw as *mut Vec<_>).cast(),
            )
        })?;
        Ok(raw
            .into_iter()
            .filter_map(|op| self.operation_name(kind, op).ok().map(|n| (op, n)))
            .collect())
    }

    /// `rocprofiler_query_callback_tracing_kind_operation_name`.
    pub fn operation_name(
        &self,
        kind: CallbackTracingKind,
        op: TracingOperation,
    ) -> Result<String, Status> {
        let (mut name, mut len): (*const c_char, u64) = (std::ptr::null(), 0);
        // SAFETY: valid out-pointers.
        Status::check(unsafe { (self.fns.query_operation_name)(kind, op, &mut name, &mut len) })?;
        // SAFETY: as in `kind_name`.
        Ok(unsafe { sdk_string(name, len) })
    }

    /// The kind whose name is `name` (an SDK-style `ROCPROFILER_CALLBACK_TRACING_` prefix on
    /// either side is ignored). This is the only way krphase learns the KERNEL_REPLAY number.
    pub fn find_kind(&self, name: &str) -> Result<Option<CallbackTracingKind>, Status> {
        let want = strip_kind_prefix(name);
        Ok(self
            .kinds()?
            .into_iter()
            .find(|(_, n)| strip_kind_prefix(n) == want)
            .map(|(k, _)| k))
    }

    /// The operation of `kind` whose name equals `suffix` or ends in `_<suffix>`
    /// (`"CONFIG"` finds `KERNEL_REPLAY_CONFIG`). An exact match wins over a suffix match.
    pub fn find_operation(
        &self,
        kind: CallbackTracingKind,
        suffix: &str,
    ) -> Result<Option<TracingOperation>, Status> {
        Ok(match_operation(&self.operations(kind)?, suffix))
    }

    /// `rocprofiler_get_timestamp`: CLOCK_BOOTTIME in ns, the domain of GPU timestamps.
    pub fn timestamp(&self) -> Result<u64, Status> {
        let mut t = 0u64;
        // SAFETY: valid out-pointer.
        Status::check(unsafe { (self.fns.get_timestamp)(&mut t) })?;
        Ok(t)
    }

    /// `rocprofiler_get_thread_id` (optional symbol): the `gettid` value.
    pub fn thread_id(&self) -> Option<u64> {
        let f = self.fns.get_thread_id?;
        let mut t = 0u64;
        // SAFETY: valid out-pointer.
        (unsafe { f(&mut t) } == Status::SUCCESS).then_some(t)
    }

    /// `rocprofiler_get_status_name` (optional symbol): the SDK's own name for a status.
    pub fn status_name(&self, status: u32) -> Option<String> {
        let f = self.fns.get_status_name?;
        // SAFETY: plain value argument; the result is NULL or a static string.
        let p = unsafe { f(status) };
        // SAFETY: non-null results are NUL-terminated static strings.
        (!p.is_null()).then(|| unsafe { sdk_string(p, 0) })
    }

    /// `rocprofiler_get_status_string` (optional symbol): the SDK's message for a status.
    pub fn status_string(&self, status: u32) -> Option<String> {
        let f = self.fns.get_status_string?;
        // SAFETY: plain value argument; the result is NULL or a static string.
        let p = unsafe { f(status) };
        // SAFETY: non-null results are NUL-terminated static strings.
        (!p.is_null()).then(|| unsafe { sdk_string(p, 0) })
    }

    /// Whether the SDK has the callback dispatch counting service and the counter queries a
    /// tool needs with it (iterate, query info, create config under either name).
    pub fn has_dispatch_counting(&self) -> bool {
        let f = &self.fns;
        f.configure_callback_dispatch_counting.is_some()
            && f.iterate_agent_supported_counters.is_some()
            && f.query_counter_info.is_some()
            && (f.create_counter_config.is_some() || f.create_profile_config.is_some())
    }

    /// `rocprofiler_configure_callback_dispatch_counting_service`; `None` when the SDK lacks it.
    /// The SDK later calls `dispatch_cb` with `dispatch_data` and `record_cb` with `record_data`.
    // The data pointers are opaque here and to the SDK; only the callbacks the caller wrote
    // dereference them.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn configure_callback_dispatch_counting(
        &self,
        ctx: ContextId,
        dispatch_cb: DispatchCountingServiceFn,
        dispatch_data: *mut c_void,
        record_cb: DispatchCountingRecordFn,
        record_data: *mut c_void,
    ) -> Option<Result<(), Status>> {
        let f = self.fns.configure_callback_dispatch_counting?;
        // SAFETY: plain values and pointers passed through untouched.
        let raw = unsafe { f(ctx, dispatch_cb, dispatch_data, record_cb, record_data) };
        Some(Status::check(raw))
    }

    /// The counters `agent` supports (`rocprofiler_iterate_agent_supported_counters`), in the
    /// SDK's order; `None` when the SDK lacks the function.
    pub fn agent_counters(&self, agent: AgentId) -> Option<Result<Vec<CounterId>, Status>> {
        let f = self.fns.iterate_agent_supported_counters?;
        let mut out: Vec<CounterId> = Vec::new();
        // SAFETY: matching trampoline; `data` is `&mut out`, live across the synchronous walk.
        let raw = unsafe { f(agent, Some(push_counters), (&mut out as *mut Vec<_>).cast()) };
        Some(Status::check(raw).map(|_| out))
    }

    /// `rocprofiler_query_counter_info` at version 0, copied out; `None` when the SDK lacks it.
    pub fn counter_info(&self, id: CounterId) -> Option<Result<CounterInfo, Status>> {
        let f = self.fns.query_counter_info?;
        let mut info = CounterInfoV0::default();
        // SAFETY: `info` is a valid, writable 48-byte version-0 info struct.
        let raw = unsafe {
            f(
                id,
                CounterInfoVersion::V0,
                (&mut info as *mut CounterInfoV0).cast(),
            )
        };
        Some(Status::check(raw).map(|_| {
            // SAFETY: on success the strings are NULL or the SDK's NUL-terminated strings.
            let text = |p: *const c_char| unsafe { sdk_string(p, 0) };
            CounterInfo {
                id: info.id,
                name: text(info.name),
                description: text(info.description),
                block: text(info.block),
                expression: text(info.expression),
                is_constant: info.flags & counter_info_flag::IS_CONSTANT != 0,
                is_derived: info.flags & counter_info_flag::IS_DERIVED != 0,
            }
        }))
    }

    /// The counter a record's instance id belongs to (`rocprofiler_query_record_counter_id`).
    pub fn record_counter_id(&self, id: CounterInstanceId) -> Option<Result<CounterId, Status>> {
        let f = self.fns.query_record_counter_id?;
        let mut out = CounterId::default();
        // SAFETY: valid out-pointer.
        let raw = unsafe { f(id, &mut out) };
        Some(Status::check(raw).map(|_| out))
    }

    /// A counter config of `counters` on `agent`: `rocprofiler_create_counter_config`, or the
    /// older `rocprofiler_create_profile_config`; `None` when the SDK has neither.
    pub fn create_counter_config(
        &self,
        agent: AgentId,
        counters: &[CounterId],
    ) -> Option<Result<CounterConfigId, Status>> {
        let f = self
            .fns
            .create_counter_config
            .or(self.fns.create_profile_config)?;
        let mut ids = counters.to_vec();
        let mut cfg = CounterConfigId::default();
        // SAFETY: `ids` holds `ids.len()` counter ids for the call (the SDK copies them), and
        // `cfg` is a zeroed out-pointer (a non-zero handle would ask for a copy of that config).
        let raw = unsafe { f(agent, ids.as_mut_ptr(), ids.len(), &mut cfg) };
        Some(Status::check(raw).map(|_| cfg))
    }

    /// `rocprofiler_destroy_counter_config` (or `_profile_config`); `None` when absent.
    pub fn destroy_counter_config(&self, cfg: CounterConfigId) -> Option<Result<(), Status>> {
        let f = self
            .fns
            .destroy_counter_config
            .or(self.fns.destroy_profile_config)?;
        // SAFETY: plain value argument.
        Some(Status::check(unsafe { f(cfg) }))
    }

    /// Every agent the SDK reports (`rocprofiler_query_available_agents` at version 0), CPUs
    /// included, in the SDK's order, copied out of the records; `None` when the SDK lacks it.
    pub fn agents(&self) -> Option<Result<Vec<AgentSummary>, Status>> {
        let f = self.fns.query_available_agents?;
        let mut out: Vec<AgentSummary> = Vec::new();
        // SAFETY: matching trampoline; `data` is `&mut out`, live across the synchronous call;
        // the record size asked for is the struct the trampoline reads.
        let raw = unsafe {
            f(
                AGENT_INFO_VERSION_0,
                Some(push_agents),
                std::mem::size_of::<AgentV0>(),
                (&mut out as *mut Vec<AgentSummary>).cast(),
            )
        };
        Some(Status::check(raw).map(|_| out))
    }

    /// ROCr's `hsa_amd_pointer_info`, when the HSA runtime is in the process.
    pub fn hsa_pointer_info(&self) -> Option<HsaAmdPointerInfoFn> {
        self.fns.hsa_amd_pointer_info
    }

    /// ROCr's loader and symbol functions for the walk over loaded executables (see
    /// [`crate::executables`]), or why the process cannot walk them.
    ///
    /// The symbol functions are ROCr exports, resolved by name. The loader's
    /// `iterate_executables` is not exported: it is asked for here, through
    /// `hsa_system_get_major_extension_table` (see [`crate::hsa_loader`]), so call this only once
    /// HSA is initialized (at a dispatch or a code-object event, never at configure).
    pub fn hsa_symbols(&self) -> Result<HsaSymbolFns, WalkUnavailable> {
        let f = &self.fns;
        let Some(get_table) = f.hsa_get_major_extension_table else {
            return Err(WalkUnavailable::Loader(LoaderMissing::TableFunction));
        };
        let mut missing = Vec::new();
        if f.hsa_symbol_get_info.is_none() {
            missing.push("hsa_executable_symbol_get_info");
        }
        if f.hsa_iterate_symbols.is_none() && f.hsa_iterate_agent_symbols.is_none() {
            missing.extend([
                "hsa_executable_iterate_symbols",
                "hsa_executable_iterate_agent_symbols",
            ]);
        }
        let (Some(symbol_get_info), true) = (f.hsa_symbol_get_info, missing.is_empty()) else {
            return Err(WalkUnavailable::Functions(missing));
        };
        // SAFETY: `get_table` was resolved by its name in this process, where ROCr exports it
        // with the signature and contract `hsa.h` declares.
        let table = unsafe { loader_table(get_table) }.map_err(WalkUnavailable::Loader)?;
        let iterate_executables = table
            .iterate_executables
            .ok_or(WalkUnavailable::Loader(LoaderMissing::IterateExecutables))?;
        Ok(HsaSymbolFns {
            iterate_executables,
            iterate_agent_symbols: f.hsa_iterate_agent_symbols,
            iterate_symbols: f.hsa_iterate_symbols,
            symbol_get_info,
        })
    }
}

/// Picks `suffix` from named operations: exact name first, else the first `*_<suffix>`.
pub fn match_operation(
    ops: &[(TracingOperation, String)],
    suffix: &str,
) -> Option<TracingOperation> {
    let tail = format!("_{suffix}");
    ops.iter()
        .find(|(_, n)| n == suffix)
        .or_else(|| ops.iter().find(|(_, n)| n.ends_with(&tail)))
        .map(|(op, _)| *op)
}

fn strip_kind_prefix(name: &str) -> &str {
    name.strip_prefix("ROCPROFILER_CALLBACK_TRACING_")
        .unwrap_or(name)
}

/// Copies an SDK string: `len` bytes when non-zero, else up to the NUL.
///
/// # Safety
/// `p` is NULL or valid for `len` bytes (or NUL-terminated when `len` is 0).
unsafe fn sdk_string(p: *const c_char, len: u64) -> String {
    if p.is_null() {
        return String::new();
    }
    if len > 0 {
        // SAFETY: the caller guarantees `len` readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) };
        // Some SDKs count the terminating NUL in `len`.
        let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        String::from_utf8_lossy(bytes).into_owned()
    } else {
        // SAFETY: the caller guarantees NUL termination.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Kind-walk trampoline: appends the kind to the `Vec` behind `data`. Never unwinds into C.
unsafe extern "C" fn push_kind(kind: CallbackTracingKind, data: *mut c_void) -> c_int {
    let pushed = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `&mut Vec<CallbackTracingKind>` passed by `Sdk::kinds`.
        let v = unsafe { &mut *data.cast::<Vec<CallbackTracingKind>>() };
        v.push(kind);
    });
    // Non-zero stops the walk: stop if we could not record.
    c_int::from(pushed.is_err())
}

/// Counter-walk trampoline: appends the agent's counters to the `Vec` behind `data`.
unsafe extern "C" fn push_counters(
    _agent: AgentId,
    counters: *mut CounterId,
    count: usize,
    data: *mut c_void,
) -> Raw {
    let pushed = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `&mut Vec<CounterId>` passed by `Sdk::agent_counters`.
        let v = unsafe { &mut *data.cast::<Vec<CounterId>>() };
        if !counters.is_null() {
            // SAFETY: the SDK hands `count` readable counter ids for the callback's duration.
            v.extend_from_slice(unsafe { std::slice::from_raw_parts(counters, count) });
        }
    });
    if pushed.is_ok() {
        Status::SUCCESS
    } else {
        Status::ERROR.0
    }
}

/// Agent-query trampoline: copies what callers need out of each record into the `Vec` behind
/// `data` (the records live only for the callback).
unsafe extern "C" fn push_agents(
    _version: u32,
    agents: *mut *const c_void,
    count: usize,
    data: *mut c_void,
) -> Raw {
    let pushed = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `&mut Vec<AgentSummary>` passed by `Sdk::agents`.
        let v = unsafe { &mut *data.cast::<Vec<AgentSummary>>() };
        if agents.is_null() {
            return;
        }
        // SAFETY: the SDK hands `count` readable record pointers for the callback's duration.
        let ptrs = unsafe { std::slice::from_raw_parts(agents, count) };
        for p in ptrs.iter().filter(|p| !p.is_null()) {
            // SAFETY: each record is at least the size `Sdk::agents` asked for, which is
            // `AgentV0`'s, and aligned as the SDK's own struct is.
            let a = unsafe { &*p.cast::<AgentV0>() };
            v.push(AgentSummary {
                id: a.id,
                kind: a.kind,
                node_id: a.node_id,
                logical_node_id: a.logical_node_id,
                logical_node_type_id: a.logical_node_type_id,
                // SAFETY: the name is NULL or the SDK's NUL-terminated string.
                name: unsafe { sdk_string(a.name, 0) },
            });
        }
    });
    if pushed.is_ok() {
        Status::SUCCESS
    } else {
        Status::ERROR.0
    }
}

/// Operation-walk trampoline: appends the operation to the `Vec` behind `data`.
unsafe extern "C" fn push_operation(
    _kind: CallbackTracingKind,
    op: TracingOperation,
    data: *mut c_void,
) -> c_int {
    let pushed = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `&mut Vec<TracingOperation>` passed by `Sdk::operations`.
        let v = unsafe { &mut *data.cast::<Vec<TracingOperation>>() };
        v.push(op);
    });
    c_int::from(pushed.is_err())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(v: &[(i32, &str)]) -> Vec<(i32, String)> {
        v.iter().map(|(o, n)| (*o, n.to_string())).collect()
    }

    #[test]
    fn operation_match_exact_or_underscore_suffix() {
        let ops = named(&[
            (0, "KERNEL_REPLAY_NONE"),
            (1, "KERNEL_REPLAY_CONFIG"),
            (2, "KERNEL_REPLAY_PASS"),
        ]);
        assert_eq!(match_operation(&ops, "CONFIG"), Some(1));
        assert_eq!(match_operation(&ops, "PASS"), Some(2));
        assert_eq!(match_operation(&ops, "KERNEL_REPLAY_PASS"), Some(2));
        assert_eq!(match_operation(&ops, "ASS"), None);
        let bare = named(&[(5, "BYPASS"), (7, "PASS")]);
        assert_eq!(match_operation(&bare, "PASS"), Some(7), "exact name wins");
    }

    #[test]
    fn table_lists_the_contract_symbols() {
        assert_eq!(
            required_symbols(),
            [
                "rocprofiler_get_version_triplet",
                "rocprofiler_create_context",
                "rocprofiler_start_context",
                "rocprofiler_stop_context",
                "rocprofiler_configure_callback_tracing_service",
                "rocprofiler_query_callback_tracing_kind_name",
                "rocprofiler_query_callback_tracing_kind_operation_name",
                "rocprofiler_iterate_callback_tracing_kinds",
                "rocprofiler_iterate_callback_tracing_kind_operations",
                "rocprofiler_get_timestamp",
            ]
        );
        assert_eq!(SYMBOLS.len(), 31);
        assert!(SYMBOLS.contains(&("rocprofiler_query_available_agents", Need::Optional)));
    }

    #[test]
    fn sdk_can_live_in_a_static() {
        fn shareable<T: Send + Sync + 'static>() {}
        shareable::<Sdk>();
        shareable::<LoadError>();
    }

    #[test]
    fn sdk_string_drops_counted_nul() {
        let s = c"KERNEL_REPLAY";
        // SAFETY: a static C string, 14 bytes with its NUL.
        assert_eq!(unsafe { sdk_string(s.as_ptr(), 14) }, "KERNEL_REPLAY");
        // SAFETY: as above, length without the NUL.
        assert_eq!(unsafe { sdk_string(s.as_ptr(), 13) }, "KERNEL_REPLAY");
        // SAFETY: NUL-terminated.
        assert_eq!(unsafe { sdk_string(s.as_ptr(), 0) }, "KERNEL_REPLAY");
    }
}
