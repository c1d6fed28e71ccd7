//! The loaded code object as ROCr's loader shows it: one executable whose agent symbols are the
//! kernels and the module-scope variables, answered through the loader table's
//! `iterate_executables`, `query_executable` and `query_host_address` (`loader_exports.rs`, reached
//! through `hsa_system_get_major_extension_table`), and ROCr's exports
//! `hsa_executable_iterate_{agent_,}symbols` and `hsa_executable_symbol_get_info` (`exports.rs`).
//! Publishing the table writes a `code_object` truth line listing its variables.

use crate::agents;
use crate::memory::Region;
use krphase_ffi::{HsaAgent, HsaExecutable, HsaExecutableSymbol, hsa_symbol_info, hsa_symbol_kind};
use std::sync::OnceLock;

/// `HSA_STATUS_ERROR_INVALID_ARGUMENT`.
pub const HSA_INVALID_ARGUMENT: u32 = 0x1001;
/// `HSA_STATUS_ERROR_INVALID_AGENT`.
pub const HSA_INVALID_AGENT: u32 = 0x1004;
/// `HSA_STATUS_ERROR_INVALID_EXECUTABLE`.
pub const HSA_INVALID_EXECUTABLE: u32 = 0x1011;

/// The one executable's handle (any non-zero value; opaque to callers).
pub const EXECUTABLE: HsaExecutable = HsaExecutable {
    handle: 0x4558_4543_0001,
};
const SYMBOL_BASE: u64 = 0x5359_4d00_0000;

/// One symbol of the executable.
#[derive(Debug)]
pub struct Symbol {
    pub name: String,
    pub kind: u32,
    /// rocprofiler agent id of the owning agent.
    pub agent: u64,
    /// Variables: device address (0 when the loader placed nothing), size, const-ness.
    pub address: u64,
    pub size: u32,
    pub is_const: bool,
}

impl Symbol {
    pub fn kernel(name: &str, agent: u64) -> Symbol {
        Symbol {
            name: name.to_string(),
            kind: hsa_symbol_kind::KERNEL,
            agent,
            address: 0,
            size: 0,
            is_const: false,
        }
    }

    /// A variable placed in `region` (its address and size).
    pub fn variable(r: &Region) -> Symbol {
        Symbol {
            name: r.symbol.unwrap_or_default().to_string(),
            kind: hsa_symbol_kind::VARIABLE,
            agent: r.agent,
            address: r.base(),
            size: r.bytes as u32,
            is_const: !r.writable,
        }
    }
}

static TABLE: OnceLock<Vec<Symbol>> = OnceLock::new();

/// Publishes the executable's symbols (once, when the code object is loaded).
pub fn publish(symbols: Vec<Symbol>) {
    if TABLE.set(symbols).is_ok() && crate::truth::enabled() {
        write_truth(table());
    }
}

/// The `code_object` truth line: the executable and every variable the loader holds.
fn write_truth(symbols: &[Symbol]) {
    let variables: Vec<serde_json::Value> = symbols
        .iter()
        .filter(|s| s.kind == hsa_symbol_kind::VARIABLE)
        .map(|s| {
            serde_json::json!({
                "name": s.name, "agent": s.agent, "address": s.address, "size": s.size,
                "const": s.is_const,
            })
        })
        .collect();
    crate::truth::write(&serde_json::json!({
        "type": "code_object", "pid": std::process::id(), "executable": EXECUTABLE.handle,
        "variables": variables,
    }));
}

/// The executable holding `address` (inside one of its placed variables), as the loader's
/// `query_executable` answers; the emulator's device addresses are also its host addresses.
pub fn executable_at(address: u64) -> Option<HsaExecutable> {
    table()
        .iter()
        .any(|s| {
            s.kind == hsa_symbol_kind::VARIABLE
                && s.address != 0
                && (s.address..s.address + u64::from(s.size.max(1))).contains(&address)
        })
        .then_some(EXECUTABLE)
}

/// The symbols, empty before the code object is loaded.
pub fn table() -> &'static [Symbol] {
    TABLE.get().map_or(&[], Vec::as_slice)
}

/// Executables currently loaded.
pub fn executables() -> Vec<HsaExecutable> {
    if TABLE.get().is_some() {
        vec![EXECUTABLE]
    } else {
        Vec::new()
    }
}

pub fn handle(i: usize) -> HsaExecutableSymbol {
    HsaExecutableSymbol {
        handle: SYMBOL_BASE + i as u64 + 1,
    }
}

fn lookup(s: HsaExecutableSymbol) -> Option<&'static Symbol> {
    let i = s.handle.checked_sub(SYMBOL_BASE + 1)?;
    table().get(usize::try_from(i).ok()?)
}

/// Symbols of `e` (all, or those allocated for `agent`), or the HSA error status.
pub fn symbols_of(
    e: HsaExecutable,
    agent: Option<HsaAgent>,
) -> Result<Vec<HsaExecutableSymbol>, u32> {
    if e != EXECUTABLE || TABLE.get().is_none() {
        return Err(HSA_INVALID_EXECUTABLE);
    }
    let want = match agent {
        Some(a) => Some(agents::agent_of_hsa(a).ok_or(HSA_INVALID_AGENT)?),
        None => None,
    };
    Ok(table()
        .iter()
        .enumerate()
        .filter(|(_, s)| want.is_none_or(|a| s.agent == a))
        .map(|(i, _)| handle(i))
        .collect())
}

/// `hsa_executable_symbol_get_info`: the attribute's bytes, or the HSA error status. Variable
/// attributes of a non-variable are invalid, as in ROCr.
pub fn info(s: HsaExecutableSymbol, attribute: u32) -> Result<Vec<u8>, u32> {
    let sym = lookup(s).ok_or(HSA_INVALID_ARGUMENT)?;
    let var = sym.kind == hsa_symbol_kind::VARIABLE;
    Ok(match attribute {
        hsa_symbol_info::TYPE => sym.kind.to_ne_bytes().to_vec(),
        hsa_symbol_info::NAME_LENGTH => (sym.name.len() as u32).to_ne_bytes().to_vec(),
        // Not NUL-terminated: exactly NAME_LENGTH bytes.
        hsa_symbol_info::NAME => sym.name.as_bytes().to_vec(),
        hsa_symbol_info::AGENT => agents::hsa_agent(sym.agent).handle.to_ne_bytes().to_vec(),
        hsa_symbol_info::VARIABLE_ADDRESS if var => sym.address.to_ne_bytes().to_vec(),
        hsa_symbol_info::VARIABLE_SIZE if var => sym.size.to_ne_bytes().to_vec(),
        hsa_symbol_info::VARIABLE_IS_CONST if var => vec![u8::from(sym.is_const)],
        _ => return Err(HSA_INVALID_ARGUMENT),
    })
}
