//! A safe walk over ROCr's loaded executables and their symbols, for the module-scope
//! variables the SDK's snapshot copies (the rule is [`snapshot_includes`]).
//!
//! No tracing service reports `__device__` variables, so a tool wanting the snapshot's bytes
//! enumerates them itself, with the same calls the SDK uses: ROCr's exported symbol functions,
//! and the loader's `iterate_executables` from its extension table ([`crate::hsa_loader`]).

use crate::hsa_loader::LoaderMissing;
use crate::types::{
    HSA_STATUS_INFO_BREAK, HSA_STATUS_SUCCESS, HsaAgent, HsaExecutable, HsaExecutableSymbol,
    HsaIterateAgentSymbolsFn, HsaIterateExecutablesFn, HsaIterateSymbolsFn, HsaSymbolGetInfoFn,
    hsa_symbol_info, hsa_symbol_kind,
};
use std::ffi::c_void;

/// The resolved ROCr functions (from [`crate::Sdk::hsa_symbols`] or built by a test).
/// `iterate_executables` is the loader table's member, the others are ROCr exports.
#[derive(Debug, Clone, Copy)]
pub struct HsaSymbolFns {
    pub iterate_executables: HsaIterateExecutablesFn,
    pub iterate_agent_symbols: Option<HsaIterateAgentSymbolsFn>,
    pub iterate_symbols: Option<HsaIterateSymbolsFn>,
    pub symbol_get_info: HsaSymbolGetInfoFn,
}

/// Why the walk cannot run in this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkUnavailable {
    /// ROCr's loader table, or its `iterate_executables`, could not be had.
    Loader(LoaderMissing),
    /// These ROCr exports are not in the process (`hsa_executable_symbol_get_info`, or both
    /// symbol iterators).
    Functions(Vec<&'static str>),
}

impl std::fmt::Display for WalkUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WalkUnavailable::Loader(l) => l.fmt(f),
            WalkUnavailable::Functions(names) => {
                let verb = if names.len() == 1 { "is" } else { "are" };
                write!(
                    f,
                    "ROCr's {} {verb} not in this process",
                    names.join(" and ")
                )
            }
        }
    }
}

impl std::error::Error for WalkUnavailable {}

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

/// Pushes `item` onto the `Vec<T>` behind an HSA iterator's `data`; a panic stops the walk
/// (INFO_BREAK) instead of unwinding into C.
///
/// # Safety
/// `data` is the `&mut Vec<T>` the walk was started with, alive for the walk.
unsafe fn push_to<T>(data: *mut c_void, item: T) -> u32 {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the caller guarantees `data` is a live `&mut Vec<T>`.
        unsafe { &mut *data.cast::<Vec<T>>() }.push(item);
    }));
    if r.is_ok() {
        HSA_STATUS_SUCCESS
    } else {
        HSA_STATUS_INFO_BREAK
    }
}

unsafe extern "C" fn push_executable(e: HsaExecutable, data: *mut c_void) -> u32 {
    // SAFETY: `data` is the `&mut Vec<HsaExecutable>` passed by `executables`.
    unsafe { push_to(data, e) }
}

unsafe extern "C" fn push_agent_symbol(
    _e: HsaExecutable,
    _a: HsaAgent,
    s: HsaExecutableSymbol,
    data: *mut c_void,
) -> u32 {
    // SAFETY: `data` is the `&mut Vec<HsaExecutableSymbol>` passed by `agent_symbols`.
    unsafe { push_to(data, s) }
}

unsafe extern "C" fn push_symbol(
    _e: HsaExecutable,
    s: HsaExecutableSymbol,
    data: *mut c_void,
) -> u32 {
    // SAFETY: `data` is the `&mut Vec<HsaExecutableSymbol>` passed by `symbols`.
    unsafe { push_to(data, s) }
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

/// Whether the SDK's snapshot copies this symbol: a writable variable with a non-zero
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

#[cfg(test)]
mod tests {
    use super::*;

    const EXEC: u64 = 0xE0;
    const AGENT: u64 = 0xA0;
    /// (name, kind, address, size, const)
    const SYMS: [(&str, u32, u64, u32, bool); 5] = [
        ("kern", hsa_symbol_kind::KERNEL, 0, 0, false),
        ("counter", hsa_symbol_kind::VARIABLE, 0x1000, 8, false),
        ("table", hsa_symbol_kind::VARIABLE, 0x2000, 64, true),
        ("empty", hsa_symbol_kind::VARIABLE, 0x3000, 0, false),
        ("__hip_cuid_ab", hsa_symbol_kind::VARIABLE, 0x4000, 1, false),
    ];

    unsafe extern "C" fn execs(cb: crate::types::HsaExecutableIterFn, d: *mut c_void) -> u32 {
        // SAFETY: the walk's own trampoline and data.
        unsafe { cb.unwrap()(HsaExecutable { handle: EXEC }, d) }
    }

    unsafe extern "C" fn syms(
        e: HsaExecutable,
        cb: crate::types::HsaSymbolIterFn,
        d: *mut c_void,
    ) -> u32 {
        if e.handle != EXEC {
            return 0x1011;
        }
        for i in 0..SYMS.len() as u64 {
            // SAFETY: the walk's own trampoline and data.
            let rc = unsafe { cb.unwrap()(e, HsaExecutableSymbol { handle: i + 1 }, d) };
            if rc != 0 {
                return rc;
            }
        }
        0
    }

    unsafe extern "C" fn get_info(s: HsaExecutableSymbol, attr: u32, v: *mut c_void) -> u32 {
        let Some(&(name, kind, addr, size, konst)) = SYMS.get(s.handle as usize - 1) else {
            return 0x1001;
        };
        let var = kind == hsa_symbol_kind::VARIABLE;
        // SAFETY: the caller passes storage of the attribute's size.
        unsafe {
            match attr {
                hsa_symbol_info::TYPE => *v.cast::<u32>() = kind,
                hsa_symbol_info::NAME_LENGTH => *v.cast::<u32>() = name.len() as u32,
                hsa_symbol_info::NAME => {
                    std::ptr::copy_nonoverlapping(name.as_ptr(), v.cast::<u8>(), name.len())
                }
                hsa_symbol_info::AGENT => *v.cast::<u64>() = AGENT,
                hsa_symbol_info::VARIABLE_ADDRESS if var => *v.cast::<u64>() = addr,
                hsa_symbol_info::VARIABLE_SIZE if var => *v.cast::<u32>() = size,
                hsa_symbol_info::VARIABLE_IS_CONST if var => *v.cast::<u8>() = u8::from(konst),
                _ => return 0x1001,
            }
        }
        0
    }

    fn fns() -> HsaSymbolFns {
        HsaSymbolFns {
            iterate_executables: execs,
            iterate_agent_symbols: None,
            iterate_symbols: Some(syms),
            symbol_get_info: get_info,
        }
    }

    #[test]
    fn walk_reads_every_symbol_and_the_filter_keeps_the_writable_variable() {
        let f = fns();
        let e = f.executables().unwrap();
        assert_eq!(e, [HsaExecutable { handle: EXEC }]);
        let infos: Vec<SymbolInfo> = f
            .symbols(e[0])
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|s| f.info(s).unwrap())
            .collect();
        assert_eq!(infos.len(), 5);
        assert_eq!(infos[1].name, "counter");
        assert_eq!(infos[1].agent, Some(HsaAgent { handle: AGENT }));
        assert_eq!((infos[1].address, infos[1].size), (0x1000, 8));
        assert!(infos[2].is_const);
        let kept: Vec<&str> = infos
            .iter()
            .filter(|s| snapshot_includes(s))
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(kept, ["counter"]);
        assert!(f.agent_symbols(e[0], HsaAgent { handle: AGENT }).is_none());
        assert_eq!(
            f.symbols(HsaExecutable { handle: 1 }).unwrap(),
            Err(HsaError(0x1011))
        );
    }

    #[test]
    fn filter_skips_zero_address_and_oversized_variables() {
        let v = |address, size| SymbolInfo {
            kind: hsa_symbol_kind::VARIABLE,
            name: "v".into(),
            agent: None,
            address,
            size,
            is_const: false,
        };
        assert!(snapshot_includes(&v(0x10, 4)));
        assert!(!snapshot_includes(&v(0, 4)));
        assert!(snapshot_includes(&v(0x10, 1 << 30)));
        assert!(!snapshot_includes(&v(0x10, (1 << 30) + 1)));
    }
}
