//! A safe walk over ROCr's loaded executables and their symbols, for the module-scope
//! variables the SDK's snapshot copies (ABI reference §7.4; replay semantics §9.2).
//!
//! No tracing service reports `__device__` variables, so a tool wanting the snapshot's bytes
//! enumerates them itself, with the same calls the SDK uses.

use crate::types::{
    HSA_STATUS_INFO_BREAK, HSA_STATUS_SUCCESS, HsaAgent, HsaExecutable, HsaExecutableSymbol,
    HsaIterateAgentSymbolsFn, HsaIterateExecutablesFn, HsaIterateSymbolsFn, HsaSymbolGetInfoFn,
    hsa_symbol_info, hsa_symbol_kind,
};
use std::ffi::c_void;

/// The resolved ROCr functions (from [`crate::Sdk::hsa_symbols`] or built by a test).
#[derive(Debug, Clone, Copy)]
pub struct HsaSymbolFns {
    pub iterate_executables: HsaIterateExecutablesFn,
    pub iterate_agent_symbols: Option<HsaIterateAgentSymbolsFn>,
    pub iterate_symbols: Option<HsaIterateSymbolsFn>,
    pub symbol_get_info: HsaSymbolGetInfoFn,
}

/// What the walk learned about one symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolInfo {
    /// `hsa_symbol_kind_t`.
    pub kind: u32,
    pub name: String,
    /// The owning agent (agent-allocated symbols); `None` for program symbols.
    pub agent: Option<HsaAgent>,
    /// Variables only: address, size and const-ness.
    pub address: u64,
    pub size: u32,
    pub is_const: bool,
}

impl SymbolInfo {
    pub fn is_variable(&self) -> bool {
        self.kind == hsa_symbol_kind::VARIABLE
    }
}

/// An HSA call failed with this `hsa_status_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HsaError(pub u32);

impl std::fmt::Display for HsaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "hsa_status_t {:#x}", self.0)
    }
}

fn check(rc: u32) -> Result<(), HsaError> {
    // An iterator returns the callback's INFO_BREAK when it stopped early: not a failure.
    if rc == HSA_STATUS_SUCCESS || rc == HSA_STATUS_INFO_BREAK {
        Ok(())
    } else {
        Err(HsaError(rc))
    }
}

unsafe extern "C" fn push_executable(e: HsaExecutable, data: *mut c_void) -> u32 {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `&mut Vec<HsaExecutable>` passed by `executables`.
        unsafe { &mut *data.cast::<Vec<HsaExecutable>>() }.push(e);
    });
    if r.is_ok() {
        HSA_STATUS_SUCCESS
    } else {
        HSA_STATUS_INFO_BREAK
    }
}

unsafe extern "C" fn push_agent_symbol(
    _e: HsaExecutable,
    _a: HsaAgent,
    s: HsaExecutableSymbol,
    data: *mut c_void,
) -> u32 {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `&mut Vec<HsaExecutableSymbol>` passed by `agent_symbols`.
        unsafe { &mut *data.cast::<Vec<HsaExecutableSymbol>>() }.push(s);
    });
    if r.is_ok() {
        HSA_STATUS_SUCCESS
    } else {
        HSA_STATUS_INFO_BREAK
    }
}

unsafe extern "C" fn push_symbol(
    _e: HsaExecutable,
    s: HsaExecutableSymbol,
    data: *mut c_void,
) -> u32 {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `&mut Vec<HsaExecutableSymbol>` passed by `symbols`.
        unsafe { &mut *data.cast::<Vec<HsaExecutableSymbol>>() }.push(s);
    });
    if r.is_ok() {
        HSA_STATUS_SUCCESS
    } else {
        HSA_STATUS_INFO_BREAK
    }
}

impl HsaSymbolFns {
    /// Every loaded executable.
    pub fn executables(&self) -> Result<Vec<HsaExecutable>, HsaError> {
        let mut v: Vec<HsaExecutable> = Vec::new();
        // SAFETY: the trampoline matches the callback type; `data` is `&mut v`, alive for the
        // synchronous walk.
        check(unsafe {
            (self.iterate_executables)(Some(push_executable), (&mut v as *mut Vec<_>).cast())
        })?;
        Ok(v)
    }

    /// Every symbol of `e` (program and agent symbols); `None` without the symbol iterator.
    pub fn symbols(&self, e: HsaExecutable) -> Option<Result<Vec<HsaExecutableSymbol>, HsaError>> {
        let f = self.iterate_symbols?;
        let mut v: Vec<HsaExecutableSymbol> = Vec::new();
        // SAFETY: as in `executables`.
        let rc = unsafe { f(e, Some(push_symbol), (&mut v as *mut Vec<_>).cast()) };
        Some(check(rc).map(|_| v))
    }

    /// The symbols of `e` allocated for `agent`; `None` without the agent-symbol iterator.
    pub fn agent_symbols(
        &self,
        e: HsaExecutable,
        agent: HsaAgent,
    ) -> Option<Result<Vec<HsaExecutableSymbol>, HsaError>> {
        let f = self.iterate_agent_symbols?;
        let mut v: Vec<HsaExecutableSymbol> = Vec::new();
        // SAFETY: as in `executables`.
        let rc = unsafe {
            f(
                e,
                agent,
                Some(push_agent_symbol),
                (&mut v as *mut Vec<_>).cast(),
            )
        };
        Some(check(rc).map(|_| v))
    }

    /// Reads a fixed-size attribute into `T`.
    fn get<T: Copy + Default>(&self, s: HsaExecutableSymbol, attr: u32) -> Result<T, HsaError> {
        let mut v = T::default();
        // SAFETY: `v` is a valid, writable `T` of the size hsa.h gives this attribute.
        check(unsafe { (self.symbol_get_info)(s, attr, (&mut v as *mut T).cast()) })?;
        Ok(v)
    }

    /// Kind, name and (for variables) owning agent, address, size and const-ness.
    pub fn info(&self, s: HsaExecutableSymbol) -> Result<SymbolInfo, HsaError> {
        let kind: u32 = self.get(s, hsa_symbol_info::TYPE)?;
        let len: u32 = self.get(s, hsa_symbol_info::NAME_LENGTH)?;
        // The name is `len` chars without a NUL; one spare byte guards a runtime that adds one.
        let mut name = vec![0u8; len as usize + 1];
        // SAFETY: `name` has room for NAME_LENGTH bytes (plus one).
        check(unsafe {
            (self.symbol_get_info)(s, hsa_symbol_info::NAME, name.as_mut_ptr().cast())
        })?;
        name.truncate(len as usize);
        let agent = self.get::<HsaAgent>(s, hsa_symbol_info::AGENT).ok();
        let mut out = SymbolInfo {
            kind,
            name: String::from_utf8_lossy(&name).into_owned(),
            agent,
            address: 0,
            size: 0,
            is_const: false,
        };
        if kind == hsa_symbol_kind::VARIABLE {
            out.address = self.get(s, hsa_symbol_info::VARIABLE_ADDRESS)?;
            out.size = self.get(s, hsa_symbol_info::VARIABLE_SIZE)?;
            // `bool` in C: read one byte so any non-zero value counts as true.
            out.is_const = self.get::<u8>(s, hsa_symbol_info::VARIABLE_IS_CONST)? != 0;
        }
        Ok(out)
    }
}

/// Largest module variable the snapshot copies (larger ones are skipped with a warning).
pub const MAX_SNAPSHOT_VARIABLE: u64 = 1 << 30;

/// Whether the SDK's snapshot copies this symbol (§9.2): a writable variable with a non-zero
/// address and size of at most 1 GiB, and not a 1-byte `__hip_cuid_` marker (skipped since
/// #12609; an older SDK would copy it, a one-byte difference).
pub fn snapshot_includes(s: &SymbolInfo) -> bool {
    s.is_variable()
        && !s.is_const
        && s.address != 0
        && s.size != 0
        && u64::from(s.size) <= MAX_SNAPSHOT_VARIABLE
        && !s.name.starts_with("__hip_cuid_")
}
